//! Drawing helpers shared by the tabs: the theme (or none under NO_COLOR), framed blocks,
//! charts of (x, y) series with padded bounds, and KES value tables.

use crate::kes::units::significant;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Chart, Dataset, GraphType, List, ListItem, ListState, Paragraph,
    StatefulWidget, Widget, Wrap,
};

/// Colours, or none under NO_COLOR.
pub(crate) struct Theme {
    pub mono: bool,
}

impl Theme {
    pub(crate) fn fg(&self, c: Color) -> Style {
        if self.mono {
            Style::default()
        } else {
            Style::default().fg(c)
        }
    }
    pub(crate) fn selected(&self) -> Style {
        if self.mono {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        }
    }
    /// Without colours each series has its own marker, named in the legend.
    fn pen(&self, color: Color, mono_marker: Marker, mono_symbol: &'static str) -> Pen {
        if self.mono {
            Pen {
                style: Style::default(),
                marker: mono_marker,
                symbol: mono_symbol,
            }
        } else {
            Pen {
                style: Style::default().fg(color),
                marker: Marker::Braille,
                symbol: "",
            }
        }
    }
    pub(crate) fn loading(&self) -> Pen {
        self.pen(Color::Cyan, Marker::Braille, "⠒")
    }
    pub(crate) fn unloading(&self) -> Pen {
        self.pen(Color::Magenta, Marker::Dot, "•")
    }
    pub(crate) fn model(&self) -> Pen {
        self.pen(Color::Yellow, Marker::Block, "█")
    }
}

/// How a chart series is drawn: colour, or (NO_COLOR) a marker of its own shown in the
/// legend before the series' name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pen {
    pub style: Style,
    pub marker: Marker,
    /// The legend's sample of the marker ("" with colours).
    pub symbol: &'static str,
}

pub(crate) fn block(title: &str) -> Block<'_> {
    Block::default().borders(Borders::ALL).title(title)
}

/// A framed list with row `selected` highlighted.
pub(crate) fn selection_list(
    theme: &Theme,
    title: &str,
    items: Vec<ListItem<'_>>,
    selected: Option<usize>,
    area: Rect,
    buf: &mut Buffer,
) {
    let mut state = ListState::default().with_selected(selected);
    StatefulWidget::render(
        List::new(items)
            .block(block(title))
            .highlight_style(theme.selected()),
        area,
        buf,
        &mut state,
    );
}

/// Bounds of a set of series, padded by 5 %.
pub(crate) fn bounds<'a>(
    series: impl IntoIterator<Item = &'a [(f64, f64)]>,
) -> ([f64; 2], [f64; 2]) {
    let mut x = [f64::INFINITY, f64::NEG_INFINITY];
    let mut y = [f64::INFINITY, f64::NEG_INFINITY];
    for s in series {
        for &(a, b) in s {
            if a.is_finite() && b.is_finite() {
                x = [x[0].min(a), x[1].max(a)];
                y = [y[0].min(b), y[1].max(b)];
            }
        }
    }
    if !x[0].is_finite() {
        return ([0.0, 1.0], [0.0, 1.0]);
    }
    let pad = |r: [f64; 2]| {
        let d = (r[1] - r[0]).abs().max(1e-12) * 0.05;
        [r[0] - d, r[1] + d]
    };
    (pad(x), pad(y))
}

/// Axis labels at both ends (and the middle where the axis is `wide`), three significant
/// digits, so that they do not run into each other in a small terminal.
fn axis_labels(r: [f64; 2], wide: bool) -> Vec<Span<'static>> {
    let fmt = |v: f64| Span::raw(significant(v, 3));
    if wide {
        vec![fmt(r[0]), fmt(0.5 * (r[0] + r[1])), fmt(r[1])]
    } else {
        vec![fmt(r[0]), fmt(r[1])]
    }
}

/// Below this many columns (rows) an x (y) axis gets no middle label.
const AXIS_WIDE_COLUMNS: u16 = 40;
const AXIS_WIDE_ROWS: u16 = 10;

/// A named series for a chart: (name, points, pen, drawn as a line?).
pub(crate) type Series<'a> = (&'a str, &'a [(f64, f64)], Pen, bool);

/// A chart of named series.
pub(crate) fn chart(
    title: &str,
    x_title: &str,
    y_title: &str,
    sets: &[Series<'_>],
    area: Rect,
    buf: &mut Buffer,
) {
    let (xb, yb) = bounds(sets.iter().map(|s| s.1));
    // ratatui's canvas maps a point through (v − lo)·columns/span: past about 1e300 that
    // product overflows, the point lands at usize::MAX and drawing a line to it never ends
    let drawable = |b: [f64; 2]| (1e6 * (b[1] - b[0])).is_finite();
    if !(drawable(xb) && drawable(yb)) {
        Paragraph::new(format!(
            "not drawn: the values span {} to {} (x), {} to {} (y), beyond what a chart can \
             scale",
            significant(xb[0], 3),
            significant(xb[1], 3),
            significant(yb[0], 3),
            significant(yb[1], 3)
        ))
        .block(block(title))
        .wrap(Wrap { trim: true })
        .render(area, buf);
        return;
    }
    let datasets: Vec<Dataset> = sets
        .iter()
        .map(|(name, data, pen, line)| {
            let name = match pen.symbol {
                "" => name.to_string(),
                s => format!("{s} {name}"),
            };
            Dataset::default()
                .name(name)
                .marker(pen.marker)
                .graph_type(if *line {
                    GraphType::Line
                } else {
                    GraphType::Scatter
                })
                .style(pen.style)
                .data(data)
        })
        .collect();
    Chart::new(datasets)
        .block(block(title))
        .x_axis(
            Axis::default()
                .title(x_title.to_string())
                .bounds(xb)
                .labels(axis_labels(xb, area.width >= AXIS_WIDE_COLUMNS)),
        )
        .y_axis(
            Axis::default()
                .title(y_title.to_string())
                .bounds(yb)
                .labels(axis_labels(yb, area.height >= AXIS_WIDE_ROWS)),
        )
        .render(area, buf);
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word split).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line: Vec<char> = Vec::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            out.push(line.drain(..).collect());
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.append(&mut word);
        while line.len() > width {
            let rest = line.split_off(width);
            out.push(line.drain(..).collect());
            line = rest;
        }
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line.into_iter().collect());
    }
    out
}

/// KES value rows (name, value with unit) as lines of at most `width` characters, each
/// marked when it is part of a note.
fn value_lines(rows: &[(String, String)], width: usize) -> Vec<(String, bool)> {
    rows.iter()
        .flat_map(|(k, v)| {
            wrap(&format!("{k} {v}"), width)
                .into_iter()
                .map(move |l| (l, k == "note"))
        })
        .collect()
}

/// Rows a [`values_panel`] of `rows` takes at `width` columns (frame included) to show them
/// all.
pub(crate) fn values_panel_height(rows: &[(String, String)], width: u16) -> u16 {
    let inner = usize::from(width.saturating_sub(2));
    u16::try_from(value_lines(rows, inner).len() + 2).unwrap_or(u16::MAX)
}

/// A framed table of (name, value with unit) rows, wrapped; where they do not all fit, the
/// last line says what is cut: notes only (`e`, the message log, has them all) or values too
/// (a larger terminal shows them).
pub(crate) fn values_panel(title: &str, rows: &[(String, String)], area: Rect, buf: &mut Buffer) {
    let width = usize::from(area.width.saturating_sub(2));
    let height = usize::from(area.height.saturating_sub(2));
    let mut lines = value_lines(rows, width);
    if lines.len() > height {
        let notes_marker = wrap("… (e: all notes)", width);
        let keep = height.saturating_sub(notes_marker.len());
        let marker = if lines[keep..].iter().all(|l| l.1) {
            notes_marker
        } else {
            // the longest that fits on one line
            let long = if lines.iter().any(|l| l.1) {
                "… enlarge the terminal (e: all notes)"
            } else {
                "… enlarge the terminal"
            };
            [long, "… enlarge the terminal", "… (enlarge)"]
                .into_iter()
                .map(|m| wrap(m, width))
                .find(|m| m.len() == 1)
                .unwrap_or_else(|| wrap("…", width))
        };
        lines.truncate(height.saturating_sub(marker.len()));
        lines.extend(marker.into_iter().map(|m| (m, false)));
    }
    let text: Vec<Line> = lines.into_iter().map(|(l, _)| Line::from(l)).collect();
    Paragraph::new(text).block(block(title)).render(area, buf);
}

/// A table of (name, value with unit) rows.
pub(crate) fn values_paragraph<'a>(title: &'a str, rows: &[(String, String)]) -> Paragraph<'a> {
    let lines: Vec<Line> = rows
        .iter()
        .map(|(k, v)| Line::from(format!("{k:>5} {v}")))
        .collect();
    Paragraph::new(lines)
        .block(block(title))
        .wrap(Wrap { trim: true })
}
