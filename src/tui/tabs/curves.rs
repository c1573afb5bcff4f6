//! The Curves tab: the loaded KES curves grouped by fabric, the selected one's loading and
//! unloading branches (KES units) and its KES values. The other tabs read the selection.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier};
use ratatui::text::{Line, Span};
use ratatui::widgets::{ListItem, Paragraph, Widget};

use crate::kes::{replicate_groups, Curve};
use crate::tui::message::LoadedCurve;
use crate::tui::series;
use crate::tui::widgets::{block, chart, selection_list, values_panel, values_panel_height, Theme};

/// What [`CurvesState::add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Added {
    /// Curves added.
    pub curves: usize,
    /// Their fabrics, in order.
    pub fabrics: Vec<String>,
    /// Curves left out: their file was open already, unchanged on disk.
    pub already_open: usize,
    /// Curves open already whose file changed on disk: read again in their place.
    pub reloaded: usize,
    /// Where the curves added and those read again are in the list.
    pub indices: Vec<usize>,
}

impl Added {
    /// The status after opening: how many curves of how many fabrics, what was read again
    /// and what was open already.
    pub(crate) fn status(&self) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut parts = Vec::new();
        if self.curves > 0 {
            let names: Vec<&str> = self
                .fabrics
                .iter()
                .map(|f| {
                    if f.is_empty() {
                        "(no fabric)"
                    } else {
                        f.as_str()
                    }
                })
                .collect();
            parts.push(format!(
                "opened {} of {}: {}",
                plural(self.curves, "curve", "curves"),
                plural(self.fabrics.len(), "fabric", "fabrics"),
                names.join(", ")
            ));
        }
        if self.reloaded > 0 {
            parts.push(format!(
                "reloaded {} changed on disk (fits of the old data dropped)",
                plural(self.reloaded, "curve", "curves")
            ));
        }
        if self.already_open > 0 {
            parts.push(format!(
                "{} already open, unchanged on disk",
                plural(self.already_open, "curve", "curves")
            ));
        }
        if parts.is_empty() {
            parts.push("nothing opened".into());
        }
        parts.join("; ")
    }
}

/// The loaded curves and the selection.
#[derive(Debug, Clone, Default)]
pub struct CurvesState {
    pub list: Vec<LoadedCurve>,
    pub selected: usize,
    /// The last [`LoadedCurve::generation`] given.
    generations: u64,
}

impl CurvesState {
    pub(crate) fn new(list: Vec<LoadedCurve>) -> Self {
        let mut state = Self {
            list: Vec::new(),
            selected: 0,
            generations: 0,
        };
        state.list = list.into_iter().map(|c| state.numbered(c)).collect();
        state
    }

    /// `c` with a generation of its own.
    fn numbered(&mut self, mut c: LoadedCurve) -> LoadedCurve {
        self.generations += 1;
        c.generation = self.generations;
        c
    }

    pub(crate) fn selected_curve(&self) -> Option<&LoadedCurve> {
        self.list.get(self.selected)
    }

    /// The files the open curves were read from (what no save or export may replace; the
    /// sample fabric built in has none).
    pub(crate) fn inputs(&self) -> Vec<std::path::PathBuf> {
        self.list
            .iter()
            .filter_map(|c| c.canonical.clone())
            .collect()
    }

    /// Indices of the curves of the selected curve's fabric.
    pub(crate) fn fabric_members(&self) -> Vec<usize> {
        let Some(sel) = self.selected_curve() else {
            return Vec::new();
        };
        self.list
            .iter()
            .enumerate()
            .filter(|(_, c)| c.curve.fabric == sel.curve.fabric)
            .map(|(i, _)| i)
            .collect()
    }

    /// Moves the selection; true when there is a curve to follow.
    pub(crate) fn step(&mut self, up: bool) -> bool {
        let n = self.list.len();
        if n == 0 {
            return false;
        }
        self.selected = super::ring_step(self.selected, n, up);
        true
    }

    /// Appends opened curves, the specimens of one curve (`kes::replicates`) side by side,
    /// and selects the first of them. A file already open (same canonical path) is not added
    /// again: unchanged, it is counted in [`Added::already_open`]; changed on disk, it is
    /// read again in its place ([`Added::reloaded`]), its fit and its replicates' joint fit
    /// dropped, and selected when nothing new was added.
    pub(crate) fn add(&mut self, curves: Vec<LoadedCurve>) -> Added {
        let mut fresh = Vec::new();
        let (mut already_open, mut reloaded) = (0, Vec::new());
        for c in curves {
            let c = self.numbered(c);
            let open = c.canonical.as_ref().and_then(|k| {
                self.list
                    .iter()
                    .position(|o| o.canonical.as_ref() == Some(k))
            });
            match open {
                Some(i) if same_data(&self.list[i].curve, &c.curve) => already_open += 1,
                Some(i) => {
                    self.list[i] = c;
                    reloaded.push(i);
                }
                None => fresh.push(c),
            }
        }
        // a joint fit of replicates was made with the old data too
        for g in replicate_groups(self.list.iter().map(|c| &c.curve)) {
            if g.members.iter().any(|i| reloaded.contains(i)) {
                for &i in &g.members {
                    self.list[i].fit = None;
                }
            }
        }
        let mut fabrics: Vec<String> = Vec::new();
        for c in &fresh {
            if !fabrics.contains(&c.curve.fabric) {
                fabrics.push(c.curve.fabric.clone());
            }
        }
        let first_new = self.list.len();
        let mut added = Added {
            curves: fresh.len(),
            fabrics,
            already_open,
            reloaded: reloaded.len(),
            indices: reloaded.clone(),
        };
        added.indices.extend(first_new..first_new + fresh.len());
        if fresh.is_empty() {
            if let Some(&i) = reloaded.first() {
                self.selected = i;
            }
            return added;
        }
        let order: Vec<usize> = replicate_groups(fresh.iter().map(|c| &c.curve))
            .into_iter()
            .flat_map(|g| g.members)
            .collect();
        let mut slots: Vec<Option<LoadedCurve>> = fresh.into_iter().map(Some).collect();
        self.selected = self.list.len();
        self.list
            .extend(order.into_iter().filter_map(|i| slots[i].take()));
        added
    }

    /// The values notes of the curves at `indices`, one message each naming its curve (the
    /// panel may cut them; the message log shows them in full).
    pub(crate) fn notes(&self, indices: &[usize]) -> Vec<String> {
        let mut out = Vec::new();
        for c in indices.iter().filter_map(|&i| self.list.get(i)) {
            for (_, note) in c.values.iter().filter(|(k, _)| k == "note") {
                out.push(format!(
                    "{} ({} {} {}): note: {note}",
                    c.curve.source_name(),
                    c.curve.fabric,
                    c.curve.test,
                    c.curve.direction
                ));
            }
        }
        out
    }

    /// The curve list grouped by fabric, each curve with its file name; the specimens of one
    /// curve numbered `k/n`. The selection highlighted.
    pub(crate) fn render_list(&self, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let mut specimen = vec![(1, 1); self.list.len()];
        for g in replicate_groups(self.list.iter().map(|c| &c.curve)) {
            for (k, &i) in g.members.iter().enumerate() {
                specimen[i] = (k + 1, g.members.len());
            }
        }
        let mut items = Vec::new();
        let mut selected_row = None;
        let mut last_fabric: Option<&str> = None;
        for (i, c) in self.list.iter().enumerate() {
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
            if i == self.selected {
                selected_row = Some(items.len());
            }
            let fitted = match &c.fit {
                Some(f) if f.is_fitted() => format!(" {:.2}%", 100.0 * f.nrmse),
                _ => String::new(),
            };
            let (k, n) = specimen[i];
            let replicate = if n > 1 {
                format!(" {k}/{n}")
            } else {
                String::new()
            };
            items.push(ListItem::new(vec![
                Line::from(format!(
                    "  {} {}{replicate}{fitted}",
                    c.curve.test, c.curve.direction
                )),
                Line::from(Span::styled(
                    format!("    {}", c.curve.source_name()),
                    theme.fg(Color::DarkGray),
                )),
            ]));
        }
        if items.is_empty() {
            items.push(ListItem::new("no curves: press o to open"));
        }
        selection_list(theme, "curves", items, selected_row, area, buf);
    }

    pub(crate) fn render(&self, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let [left, right] =
            Layout::horizontal([Constraint::Length(28), Constraint::Min(20)]).areas(area);
        self.render_list(theme, left, buf);
        let Some(c) = self.selected_curve() else {
            Paragraph::new("Open KES curves with o (a CSV file, a folder, a folder of fabric folders, a glob).")
                .block(block("curve"))
                .render(right, buf);
            return;
        };
        // a narrow terminal puts the values under the chart, which keeps its width
        let [plot, values] = if right.width >= NARROW_COLUMNS {
            Layout::horizontal([Constraint::Min(20), Constraint::Length(26)]).areas(right)
        } else {
            // all the values where they fit in half the height, never fewer than a few rows
            let rows = values_panel_height(&c.values, right.width)
                .min(right.height / 2)
                .max(MIN_VALUE_ROWS.min(right.height));
            Layout::vertical([Constraint::Min(0), Constraint::Length(rows)]).areas(right)
        };
        let title = format!("{} {} {}", c.curve.fabric, c.curve.test, c.curve.direction);
        branch_chart(theme, &title, &c.curve, None, plot, buf);
        values_panel("KES values", &c.values, values, buf);
    }
}

/// The same curve read twice: everything but the path it was read under.
fn same_data(a: &Curve, b: &Curve) -> bool {
    a.fabric == b.fabric
        && a.test == b.test
        && a.direction == b.direction
        && a.x == b.x
        && a.y == b.y
        && a.metadata == b.metadata
}

/// Below this many columns, the right-hand side stacks the chart over the values.
const NARROW_COLUMNS: u16 = 70;

/// Rows the values take at least, stacked under the chart (frame included).
const MIN_VALUE_ROWS: u16 = 5;

/// A curve's loading and unloading branches in KES units, with `model` dashed over them.
pub(super) fn branch_chart(
    theme: &Theme,
    title: &str,
    curve: &Curve,
    model: Option<&[(f64, f64)]>,
    area: Rect,
    buf: &mut Buffer,
) {
    let units = curve.test.kes_units();
    let (up, down) = series::branches(curve);
    let (loading, unloading) = curve.test.branch_names();
    let mut sets = vec![
        (loading, &up[..], theme.loading(), false),
        (unloading, &down[..], theme.unloading(), false),
    ];
    sets.extend(model.map(|m| ("model", m, theme.model(), true)));
    chart(title, units.x_label, units.y_label, &sets, area, buf);
}
