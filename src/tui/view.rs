//! Drawing: `impl Widget for &App`, one function per tab. Drawing never changes the state;
//! it only asks the library for what to show (laws driven along paths, KES values).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Chart, Clear, Dataset, Gauge, GraphType, List, ListItem, ListState,
    Paragraph, StatefulWidget, Tabs, Widget, Wrap,
};

use super::app::{App, Confirm, ExportKind, Tab};
use super::keymap::help_lines;
use super::series;
use crate::material::MaterialLaw;

/// Colours, or none under NO_COLOR.
struct Theme {
    mono: bool,
}

impl Theme {
    fn fg(&self, c: Color) -> Style {
        if self.mono {
            Style::default()
        } else {
            Style::default().fg(c)
        }
    }
    fn selected(&self) -> Style {
        if self.mono {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        }
    }
    fn loading(&self) -> Style {
        self.fg(Color::Cyan)
    }
    fn unloading(&self) -> Style {
        self.fg(Color::Magenta)
    }
    fn model(&self) -> Style {
        self.fg(Color::Yellow)
    }
}

impl Widget for &App {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = Theme {
            mono: self.monochrome,
        };
        let [top, main, status, hint] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(5),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(area);
        let titles: Vec<Line> = Tab::ALL
            .iter()
            .enumerate()
            .map(|(i, t)| Line::from(format!("{} {}", i + 1, t.title())))
            .collect();
        Tabs::new(titles)
            .select(self.tab.index())
            .highlight_style(theme.selected())
            .divider("|")
            .render(top, buf);
        match self.tab {
            Tab::Curves => draw_curves(self, &theme, main, buf),
            Tab::Connector => draw_connector(self, &theme, main, buf),
            Tab::Hysteresis => draw_hysteresis(self, &theme, main, buf),
            Tab::Fit => draw_fit(self, &theme, main, buf),
            Tab::Cloth => draw_cloth(self, &theme, main, buf),
            Tab::Export => draw_export(self, &theme, main, buf),
        }
        let status_text = match (&self.prompt, &self.confirm) {
            (Some(p), _) => format!("{} {}_", p.label, p.text),
            (None, Some(Confirm::Quit)) => "unsaved fits will be lost: quit? (y/n)".into(),
            (None, Some(Confirm::Overwrite(_))) => format!("{} ", self.status),
            _ => self.status.clone(),
        };
        Paragraph::new(status_text)
            .style(theme.fg(Color::Yellow))
            .render(status, buf);
        Paragraph::new("? help  Tab next tab  o open  q quit")
            .style(theme.fg(Color::DarkGray))
            .render(hint, buf);
        if self.help {
            draw_help(self, &theme, main, buf);
        }
    }
}

fn block(title: &str) -> Block<'_> {
    Block::default().borders(Borders::ALL).title(title)
}

/// Bounds of a set of series, padded by 5 %.
fn bounds<'a>(series: impl IntoIterator<Item = &'a [(f64, f64)]>) -> ([f64; 2], [f64; 2]) {
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

fn axis_labels(r: [f64; 2]) -> Vec<Span<'static>> {
    let fmt = |v: f64| {
        if v.abs() >= 1000.0 || (v != 0.0 && v.abs() < 0.01) {
            format!("{v:.2e}")
        } else {
            format!("{v:.3}")
        }
    };
    vec![
        Span::raw(fmt(r[0])),
        Span::raw(fmt(0.5 * (r[0] + r[1]))),
        Span::raw(fmt(r[1])),
    ]
}

/// A named series for a chart: (name, points, style, drawn as a line?).
type Series<'a> = (&'a str, &'a [(f64, f64)], Style, bool);

/// A chart of named series.
fn chart(
    title: &str,
    x_title: &str,
    y_title: &str,
    sets: &[Series<'_>],
    area: Rect,
    buf: &mut Buffer,
) {
    let (xb, yb) = bounds(sets.iter().map(|s| s.1));
    let datasets: Vec<Dataset> = sets
        .iter()
        .map(|(name, data, style, line)| {
            Dataset::default()
                .name(name.to_string())
                .marker(Marker::Braille)
                .graph_type(if *line {
                    GraphType::Line
                } else {
                    GraphType::Scatter
                })
                .style(*style)
                .data(data)
        })
        .collect();
    Chart::new(datasets)
        .block(block(title))
        .x_axis(
            Axis::default()
                .title(x_title.to_string())
                .bounds(xb)
                .labels(axis_labels(xb)),
        )
        .y_axis(
            Axis::default()
                .title(y_title.to_string())
                .bounds(yb)
                .labels(axis_labels(yb)),
        )
        .render(area, buf);
}

/// The curve list grouped by fabric, with the selection highlighted.
fn draw_curve_list(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let mut items = Vec::new();
    let mut selected_row = None;
    let mut last_fabric: Option<&str> = None;
    for (i, c) in app.curves.iter().enumerate() {
        if last_fabric != Some(c.curve.fabric.as_str()) {
            let name = if c.curve.fabric.is_empty() {
                "(no fabric)"
            } else {
                c.curve.fabric.as_str()
            };
            items.push(ListItem::new(Line::from(Span::styled(
                name.to_string(),
                theme.fg(Color::Green).add_modifier(Modifier::BOLD),
            ))));
            last_fabric = Some(c.curve.fabric.as_str());
        }
        if i == app.selected {
            selected_row = Some(items.len());
        }
        let fitted = match &c.fit {
            Some(f) if f.is_fitted() => format!(" {:.2}%", 100.0 * f.nrmse),
            _ => String::new(),
        };
        items.push(ListItem::new(format!(
            "  {} {}{}",
            c.curve.test, c.curve.direction, fitted
        )));
    }
    if items.is_empty() {
        items.push(ListItem::new("no curves: press o to open"));
    }
    let mut state = ListState::default().with_selected(selected_row);
    StatefulWidget::render(
        List::new(items)
            .block(block("curves"))
            .highlight_style(theme.selected()),
        area,
        buf,
        &mut state,
    );
}

fn values_paragraph<'a>(title: &'a str, rows: &[(String, String)]) -> Paragraph<'a> {
    let lines: Vec<Line> = rows
        .iter()
        .map(|(k, v)| Line::from(format!("{k:>5} {v}")))
        .collect();
    Paragraph::new(lines)
        .block(block(title))
        .wrap(Wrap { trim: true })
}

fn draw_curves(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let [left, right] =
        Layout::horizontal([Constraint::Length(28), Constraint::Min(20)]).areas(area);
    draw_curve_list(app, theme, left, buf);
    let Some(c) = app.selected_curve() else {
        Paragraph::new("Open KES curves with o (a CSV file or a folder).")
            .block(block("curve"))
            .render(right, buf);
        return;
    };
    let [plot, values] =
        Layout::horizontal([Constraint::Min(20), Constraint::Length(26)]).areas(right);
    let units = c.curve.test.kes_units();
    let (up, down) = series::branches(&c.curve);
    let title = format!("{} {} {}", c.curve.fabric, c.curve.test, c.curve.direction);
    chart(
        &title,
        units.x_label,
        units.y_label,
        &[
            ("loading", &up, theme.loading(), false),
            ("unloading", &down, theme.unloading(), false),
        ],
        plot,
        buf,
    );
    values_paragraph("KES values", &c.values).render(values, buf);
}

fn draw_connector(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let [left, right] =
        Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(area);
    let law = app.connector.current();
    let friction = match law.friction().shape {
        crate::friction::FrictionShape::Dahl { .. } => "Dahl",
        crate::friction::FrictionShape::Bs2 { .. } => "Bliman-Sorine 2",
    };
    let mut items: Vec<ListItem> = vec![
        ListItem::new(format!("law      {} (l)", law.name())),
        ListItem::new(format!("friction {friction} (f)")),
        ListItem::new(format!(
            "mu       {} (m)",
            if law.friction().mu > 0.0 { "on" } else { "off" }
        )),
        ListItem::new(""),
    ];
    let header = items.len();
    for p in law.parameters() {
        items.push(ListItem::new(format!(
            "{:<12} {:>11.4e} {}",
            p.name, p.value, p.unit
        )));
    }
    let mut state = ListState::default().with_selected(Some(header + app.connector.selected_param));
    StatefulWidget::render(
        List::new(items)
            .block(block("connector law (SI)"))
            .highlight_style(theme.selected()),
        left,
        buf,
        &mut state,
    );
    let [plot, values] = Layout::vertical([Constraint::Min(8), Constraint::Length(7)]).areas(right);
    let test = series::test_of_law(law);
    let units = test.kes_units();
    let measured = app.selected_curve().filter(|c| c.curve.test == test);
    let simulated = series::protocol_points(law, test);
    let mut sets: Vec<Series<'_>> = Vec::new();
    let (up, down) = measured
        .map(|c| series::branches(&c.curve))
        .unwrap_or_default();
    if measured.is_some() {
        sets.push(("measured loading", &up, theme.loading(), false));
        sets.push(("measured unloading", &down, theme.unloading(), false));
    }
    sets.push(("law, KES protocol", &simulated, theme.model(), true));
    chart(
        &format!("{} law on the KES {} protocol", law.name(), test),
        units.x_label,
        units.y_label,
        &sets,
        plot,
        buf,
    );
    let [mv, sv] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(values);
    values_paragraph(
        "measured",
        &measured
            .map(|c| c.values.clone())
            .unwrap_or_else(|| vec![("".into(), format!("select a {test} curve"))]),
    )
    .render(mv, buf);
    values_paragraph("law", &series::protocol_values(law, test)).render(sv, buf);
}

fn draw_hysteresis(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let law = app.connector.current();
    let test = series::test_of_law(law);
    let units = test.kes_units();
    let loop_data = series::hysteresis(law, test, app.hysteresis.path, app.hysteresis.amplitude);
    let [left, right] =
        Layout::horizontal([Constraint::Length(30), Constraint::Min(20)]).areas(area);
    let mut lines = vec![
        Line::from(format!("law: {}", law.name())),
        Line::from(format!("path: {} (p)", app.hysteresis.path.name())),
        Line::from(format!(
            "amplitude: {:.3} {} (+/-)",
            loop_data.amplitude_kes, units.x_label
        )),
        Line::from(""),
        Line::from("dissipated per cycle:"),
    ];
    for (i, e) in loop_data.energy_per_cycle.iter().enumerate() {
        lines.push(Line::from(format!(
            "  {:>2}: {:.4e} {}",
            i + 1,
            e,
            loop_data.energy_unit
        )));
    }
    Paragraph::new(lines)
        .block(block("hysteresis"))
        .render(left, buf);
    let [a, b] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(right);
    chart(
        "loop: total force",
        units.x_label,
        units.y_label,
        &[("total", &loop_data.total, theme.loading(), true)],
        a,
        buf,
    );
    chart(
        "friction part alone (total - elastic)",
        units.x_label,
        units.y_label,
        &[("friction", &loop_data.friction, theme.unloading(), true)],
        b,
        buf,
    );
}

fn draw_fit(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let [left, right] =
        Layout::horizontal([Constraint::Length(28), Constraint::Min(20)]).areas(area);
    let [list, model] = Layout::vertical([Constraint::Min(3), Constraint::Length(3)]).areas(left);
    draw_curve_list(app, theme, list, buf);
    Paragraph::new(format!("{:?} (m)", app.fit.model).to_lowercase())
        .block(block("model"))
        .render(model, buf);
    let [gauge, body] = Layout::vertical([Constraint::Length(3), Constraint::Min(5)]).areas(right);
    let (ratio, label) = match &app.fit.running {
        Some((_, Some(p))) => (
            (app.fit.iterations_seen as f64 / 400.0).min(0.99),
            format!(
                "{}: iteration {} NRMSE {:.3} %",
                p.model,
                p.iteration,
                100.0 * p.nrmse
            ),
        ),
        Some((_, None)) => (0.0, "starting…".to_string()),
        None => (
            0.0,
            "idle: Enter runs the fit of the selected curve".to_string(),
        ),
    };
    Gauge::default()
        .block(block("fit"))
        .gauge_style(theme.fg(Color::Green))
        .ratio(ratio)
        .label(label)
        .render(gauge, buf);
    let Some(c) = app.selected_curve() else {
        return;
    };
    let Some(fit) = &c.fit else {
        Paragraph::new("not fitted yet")
            .block(block("result"))
            .render(body, buf);
        return;
    };
    let [plot, table] =
        Layout::horizontal([Constraint::Min(20), Constraint::Length(46)]).areas(body);
    let units = c.curve.test.kes_units();
    let (up, down) = series::branches(&c.curve);
    let model_pts = series::fit_points(&c.curve, fit);
    chart(
        &format!("{} {} fit", c.curve.test, c.curve.direction),
        units.x_label,
        units.y_label,
        &[
            ("loading", &up, theme.loading(), false),
            ("unloading", &down, theme.unloading(), false),
            ("model", &model_pts, theme.model(), true),
        ],
        plot,
        buf,
    );
    let mut lines = vec![Line::from(match &fit.status {
        crate::fit::FitStatus::Fitted => format!(
            "{}  NRMSE {:.3} %  {} it, {:.0} ms",
            fit.model,
            100.0 * fit.nrmse,
            fit.iterations,
            fit.elapsed_ms
        ),
        crate::fit::FitStatus::Failed(why) => format!("failed: {why}"),
    })];
    for p in &fit.params {
        let se = match (p.std_error, &p.pinned) {
            (_, Some(_)) => "pinned".to_string(),
            (Some(se), None) => format!("± {se:.2e}"),
            (None, None) => String::new(),
        };
        lines.push(Line::from(format!(
            "{:<12} {:>10.4e} {:<10} {}",
            p.name, p.value, se, p.unit
        )));
    }
    lines.push(Line::from(format!("termination: {}", fit.termination)));
    for (a, b, r) in &fit.correlations {
        lines.push(Line::from(format!("corr({a}, {b}) = {r:.2}")));
    }
    Paragraph::new(lines)
        .block(block("parameters (a accepts, s saves)"))
        .wrap(Wrap { trim: true })
        .render(table, buf);
}

/// Statistics of a reduced model's playback.
fn reduced_lines(f: &super::cloth::ClothFrame) -> Vec<Line<'static>> {
    let Some(r) = &f.reduced else {
        return Vec::new();
    };
    vec![
        Line::from(if f.running {
            "playing (Space pauses)"
        } else {
            "paused (Space plays, n one frame)"
        }),
        Line::from(format!("frame {}  t = {:.3} s", f.steps, f.time_s)),
        Line::from(format!("rank {}  {:.0} frames/s", r.rank, r.frames_per_s)),
        Line::from(format!("({:.3} ms per reconstruction)", f.ms_per_step)),
        Line::from(format!("entry: {}", r.entry_name)),
        Line::from(match r.door_deg {
            Some(d) => format!("door {d:.1} deg"),
            None => "no door".into(),
        }),
        Line::from(format!("jumps {}  refused {}", r.jumps, r.ignored)),
        Line::from(format!("{} x {} vertices (reduced)", f.nu, f.nv)),
    ]
}

fn draw_cloth(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let [left, right] =
        Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(area);
    // the palette legend wraps inside the 32 columns of the left pane
    let legend_chars: usize = app
        .cloth
        .palette
        .iter()
        .map(|p| {
            super::keymap::palette_key_label(p.key).chars().count() + p.name.chars().count() + 3
        })
        .sum();
    let legend_rows = if app.cloth.palette.is_empty() {
        0
    } else {
        2 + legend_chars.div_ceil(28).clamp(1, 6) as u16
    };
    let [list, stats, legend] = Layout::vertical([
        Constraint::Min(4),
        Constraint::Length(11),
        Constraint::Length(legend_rows),
    ])
    .areas(left);
    let items: Vec<ListItem> = if app.cloth.scenes.is_empty() {
        vec![ListItem::new("no scenes/ folder here")]
    } else {
        app.cloth
            .scenes
            .iter()
            .map(|p| {
                // scenes by their stem, models by their whole name
                let name = if super::playback::is_model(p) {
                    p.file_name()
                } else {
                    p.file_stem()
                }
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
                let mark = if app.cloth.loaded.as_ref() == Some(p) {
                    "* "
                } else {
                    "  "
                };
                ListItem::new(format!("{mark}{name}"))
            })
            .collect()
    };
    let mut state = ListState::default().with_selected(Some(app.cloth.selected));
    StatefulWidget::render(
        List::new(items)
            .block(block("scenes, models (Enter loads)"))
            .highlight_style(theme.selected()),
        list,
        buf,
        &mut state,
    );
    let lines: Vec<Line> = match &app.cloth.frame {
        Some(f) if f.reduced.is_some() => reduced_lines(f),
        Some(f) => vec![
            Line::from(if f.running {
                "running (Space pauses)"
            } else {
                "paused (Space runs, n steps)"
            }),
            Line::from(format!("step {}  t = {:.3} s", f.steps, f.time_s)),
            Line::from(format!("{:.2} ms per step", f.ms_per_step)),
            Line::from(format!(
                "max rate structural {:.2} %",
                100.0 * f.rate_structural
            )),
            Line::from(format!("max rate shear      {:.2} %", 100.0 * f.rate_shear)),
            Line::from(format!("kinetic {:.4e} J", f.kinetic_j)),
            Line::from(format!("elastic {:.4e} J", f.elastic_j)),
            Line::from(format!("{} x {} particles", f.nu, f.nv)),
        ],
        None => vec![Line::from("no simulation: select a scene, Enter")],
    };
    Paragraph::new(lines)
        .block(block("live"))
        .render(stats, buf);
    if !app.cloth.palette.is_empty() {
        let current = app
            .cloth
            .frame
            .as_ref()
            .and_then(|f| f.reduced.as_ref())
            .map(|r| r.entry);
        let spans: Vec<Span> = app
            .cloth
            .palette
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let text = format!("{} {}  ", super::keymap::palette_key_label(p.key), p.name);
                if current == Some(k) {
                    Span::styled(text, theme.selected())
                } else {
                    Span::raw(text)
                }
            })
            .collect();
        Paragraph::new(Line::from(spans))
            .block(block("palette (Alt+key when taken)"))
            .wrap(Wrap { trim: true })
            .render(legend, buf);
    }
    let title = app
        .cloth
        .frame
        .as_ref()
        .map(|f| format!("{} (Left/Right turn, PgUp/PgDn tilt)", f.scene))
        .unwrap_or_else(|| "view".into());
    let Some(frame) = &app.cloth.frame else {
        block(&title).render(right, buf);
        return;
    };
    let points = series::project(frame, app.cloth.yaw, app.cloth.pitch);
    let (xb, yb) = bounds([points.as_slice()]);
    // equal scales on both axes: a braille cell is 2 × 4 dots, about 1:2 in aspect
    let w = f64::from(right.width.saturating_sub(2).max(1));
    let h = f64::from(right.height.saturating_sub(2).max(1)) * 2.0;
    let (cx, cy) = (0.5 * (xb[0] + xb[1]), 0.5 * (yb[0] + yb[1]));
    let scale = ((xb[1] - xb[0]) / w).max((yb[1] - yb[0]) / h);
    let (hx, hy) = (0.5 * scale * w, 0.5 * scale * h);
    let (nu, nv) = (frame.nu, frame.nv);
    let color = if app.monochrome {
        Color::Reset
    } else {
        Color::Cyan
    };
    ratatui::widgets::canvas::Canvas::default()
        .block(block(&title))
        .marker(Marker::Braille)
        .x_bounds([cx - hx, cx + hx])
        .y_bounds([cy - hy, cy + hy])
        .paint(|ctx| {
            let at = |i: usize, j: usize| points.get(j * nu + i).copied();
            for i in 0..nu {
                for j in 0..nv {
                    let Some((x1, y1)) = at(i, j) else { continue };
                    for (di, dj) in [(1, 0), (0, 1)] {
                        if let Some((x2, y2)) =
                            at(i + di, j + dj).filter(|_| i + di < nu && j + dj < nv)
                        {
                            ctx.draw(&ratatui::widgets::canvas::Line {
                                x1,
                                y1,
                                x2,
                                y2,
                                color,
                            });
                        }
                    }
                }
            }
        })
        .render(right, buf);
}

fn draw_export(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let [list, gauge, info] = Layout::vertical([
        Constraint::Length(ExportKind::ALL.len() as u16 + 2),
        Constraint::Length(3),
        Constraint::Min(3),
    ])
    .areas(area);
    let items: Vec<ListItem> = ExportKind::ALL
        .iter()
        .map(|k| ListItem::new(k.title()))
        .collect();
    let mut state = ListState::default().with_selected(Some(app.export.selected));
    StatefulWidget::render(
        List::new(items)
            .block(block("export PNG (Enter writes, asks for a path)"))
            .highlight_style(theme.selected()),
        list,
        buf,
        &mut state,
    );
    let (ratio, label) = match app.export.rendering {
        Some((done, total)) => (
            done as f64 / total.max(1) as f64,
            format!("frame {done} of {total}"),
        ),
        None => (0.0, "idle".to_string()),
    };
    Gauge::default()
        .block(block("render"))
        .gauge_style(theme.fg(Color::Green))
        .ratio(ratio.clamp(0.0, 1.0))
        .label(label)
        .render(gauge, buf);
    let mut lines = vec![Line::from(match &app.export.last_written {
        Some(p) => format!("last written: {}", p.display()),
        None => "nothing written yet".into(),
    })];
    let scene = match &app.cloth.loaded {
        Some(p) => format!("cloth frames: {} (Cloth tab)", p.display()),
        None => "cloth frames: load a scene in the Cloth tab first".into(),
    };
    lines.push(Line::from(scene));
    if let Some(a) = &app.export.adapter {
        lines.push(Line::from(format!("adapter: {a}")));
    }
    Paragraph::new(lines)
        .block(block("output"))
        .render(info, buf);
}

fn draw_help(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let lines: Vec<Line> = help_lines(app.tab)
        .into_iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:>16}  "), theme.fg(Color::Cyan)),
                Span::raw(v),
            ])
        })
        .collect();
    let h = (lines.len() as u16 + 2).min(area.height);
    let w = 70.min(area.width);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(popup, buf);
    Paragraph::new(lines)
        .block(block(&format!("keys: {} tab", app.tab.title())))
        .render(popup, buf);
}
