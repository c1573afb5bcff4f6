//! The Fit tab's drawing: the curve list, the running fit's gauge, the result's parameters,
//! intervals and notes beside the measured curve and the law.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::Line;
use ratatui::widgets::{Gauge, Paragraph, Widget, Wrap};

use super::super::curves::{branch_chart, CurvesState};
use super::{FitState, RunningFit};
use crate::fit::{CurveFit, FitStatus, FIXED_BY_THE_MODEL};
use crate::tui::series;
use crate::tui::widgets::{block, Theme};

impl FitState {
    pub(crate) fn render(&self, curves: &CurvesState, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let [left, right] =
            Layout::horizontal([Constraint::Length(28), Constraint::Min(20)]).areas(area);
        let [list, model] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(3)]).areas(left);
        curves.render_list(theme, list, buf);
        Paragraph::new(format!("{:?} (m)", self.model).to_lowercase())
            .block(block("model"))
            .render(model, buf);
        let [gauge, body] =
            Layout::vertical([Constraint::Length(3), Constraint::Min(5)]).areas(right);
        // fitting all curves: the curves done, and the running one's share
        let (done, of) = if self.queued > 0 {
            (self.queued - self.queue.len() - 1, self.queued)
        } else {
            (0, 1)
        };
        let (ratio, label) = match &self.running {
            Some(RunningFit {
                progress: Some(p), ..
            }) => (
                (done as f64 + (self.iterations_seen as f64 / 400.0).min(0.99)) / of as f64,
                format!(
                    "{}{}: iteration {} NRMSE {:.3} %",
                    if of > 1 {
                        format!("curve {} of {of}, ", done + 1)
                    } else {
                        String::new()
                    },
                    p.model,
                    p.iteration,
                    100.0 * p.nrmse
                ),
            ),
            Some(_) => (0.0, "starting…".to_string()),
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
        let Some(c) = curves.selected_curve() else {
            return;
        };
        let Some(fit) = &c.fit else {
            let text = if c.curve.test.has_connector_law() {
                "not fitted yet".to_string()
            } else {
                no_law(c.curve.test)
            };
            Paragraph::new(text)
                .wrap(Wrap { trim: true })
                .block(block("result"))
                .render(body, buf);
            return;
        };
        // narrow: the result under the chart, or alone where both would get too few rows
        let [plot, table] = if body.width >= 20 + MIN_RESULT_COLUMNS {
            Layout::horizontal([Constraint::Min(20), Constraint::Length(46)]).areas(body)
        } else if body.height >= 2 * MIN_RESULT_ROWS {
            Layout::vertical([Constraint::Min(0), Constraint::Length(body.height / 2)]).areas(body)
        } else {
            [Rect::default(), body]
        };
        if plot.area() > 0 {
            let model_pts = series::fit_points(&c.curve, fit);
            let title = format!("{} {} fit", c.curve.test, c.curve.direction);
            branch_chart(theme, &title, &c.curve, Some(&model_pts[..]), plot, buf);
        }
        let lines = result_lines(fit);
        let n = lines.len();
        let first = self.scroll.min(n.saturating_sub(1));
        // rows the lines from `first` on take, wrapped at the panel's width
        let inner = usize::from(table.width.saturating_sub(2).max(1));
        let rows: usize = lines[first..]
            .iter()
            .map(|l| l.width().div_ceil(inner).max(1))
            .sum();
        let more = rows > usize::from(table.height.saturating_sub(2));
        let title = format!(
            "{}/{n}{} PgUp/PgDn; a accepts, s saves",
            first + 1,
            if more { "+" } else { "" }
        );
        Paragraph::new(lines.into_iter().skip(first).collect::<Vec<_>>())
            .block(block(&title))
            .wrap(Wrap { trim: true })
            .render(table, buf);
    }
}

/// Columns the result takes at least beside the chart; narrower, it goes under it.
const MIN_RESULT_COLUMNS: u16 = 26;

/// Rows the result takes at least under the chart; fewer, the chart is left out.
const MIN_RESULT_ROWS: u16 = 6;

/// Why a curve of `test` is not fitted, and where its KES values are shown.
pub(super) fn no_law(test: crate::kes::KesTest) -> String {
    format!("a {test} curve has no connector law to fit: its KES values are in the Curves tab (1)")
}

/// The fit's result as the panel lists it: headline, specimens, parameters with their
/// intervals, termination, correlations, the KES values beside the law's, and why a
/// parameter was pinned (the report's text).
pub(super) fn result_lines(fit: &CurveFit) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(match &fit.status {
        FitStatus::Fitted => format!(
            "{}  NRMSE {:.3} %  {} it, {:.0} ms",
            fit.model,
            100.0 * fit.nrmse,
            fit.iterations,
            fit.elapsed_ms
        ),
        FitStatus::Failed(why) => format!("failed: {why}"),
    })];
    if !fit.specimens.is_empty() {
        lines.push(Line::from(format!(
            "{} specimens jointly (NRMSE pooled):",
            fit.specimens.len()
        )));
        for s in &fit.specimens {
            let name = std::path::Path::new(&s.file)
                .file_name()
                .map_or_else(|| s.file.clone(), |n| n.to_string_lossy().into_owned());
            lines.push(Line::from(format!(
                "  {name}  NRMSE {:.3} %",
                100.0 * s.nrmse
            )));
        }
    }
    for p in &fit.params {
        let se = match (p.interval95, &p.pinned) {
            (_, Some(_)) => "pinned".to_string(),
            (Some([lo, hi]), None) => format!("95% [{lo:.3e}, {hi:.3e}]"),
            (None, None) if p.not_identified => "not identified".to_string(),
            (None, None) => String::new(),
        };
        lines.push(Line::from(format!(
            "{:<12} {:>10.4e} {:<10} {}",
            p.name, p.value, se, p.unit
        )));
    }
    lines.push(Line::from(format!("termination: {}", fit.termination)));
    if let Some(c) = &fit.correlation {
        lines.push(Line::from(format!(
            "correlation (Wald): {}",
            c.names.join(" ")
        )));
        for (name, row) in c.names.iter().zip(&c.matrix) {
            let cells: Vec<String> = row.iter().map(|r| format!("{r:+.2}")).collect();
            lines.push(Line::from(format!("{name:<12} {}", cells.join(" "))));
        }
    }
    if let Some(v) = &fit.values {
        lines.push(Line::from("KES    measured    fitted     gap"));
        for (name, m, f, gap) in v.rows() {
            lines.push(Line::from(match (f, gap) {
                (Some(f), Some(g)) => {
                    format!("{name:<5} {m:>9.4} {f:>9.4} {:>+7.2} %", 100.0 * g)
                }
                _ => format!("{name:<5} {m:>9.4}       n/a"),
            }));
        }
        if let Some(note) = &v.note {
            lines.push(Line::from(note.clone()));
        }
    }
    // why a parameter was pinned or fixed (a bound in the user's terms): the report's text
    for p in &fit.params {
        if let Some(why) = p.pinned.as_deref().filter(|w| *w != FIXED_BY_THE_MODEL) {
            lines.push(Line::from(format!("{}: {why}", p.name)));
        }
    }
    // what an interval means beyond its numbers (conditional, or reaching a bound)
    for p in &fit.params {
        if let Some(note) = &p.interval_note {
            lines.push(Line::from(format!("{}: {note}", p.name)));
        }
    }
    lines
}
