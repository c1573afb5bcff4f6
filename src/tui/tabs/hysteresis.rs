//! The Hysteresis tab: the Connector law driven along a path (full cycles, decaying, partial
//! reversals) of a given amplitude; the loop, its friction part and the energy per cycle.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use super::connector::ConnectorState;
use super::curves::CurvesState;
use super::Effects;
use crate::kes::units::significant as sig;
use crate::material::DrivingPath;
use crate::tui::message::Action;
use crate::tui::series;
use crate::tui::widgets::{block, chart, Theme};

/// The driving path and its amplitude (fraction of the law's KES range).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HysteresisState {
    pub path: DrivingPath,
    /// Amplitude as a fraction of the KES range (8°, 2.5 1/cm, 5 % strain).
    pub amplitude: f64,
}

/// The amplitude's limits, as fractions of the KES range.
const AMPLITUDE_RANGE: (f64, f64) = (0.05, 4.0);

impl Default for HysteresisState {
    fn default() -> Self {
        Self {
            path: DrivingPath::FullCycles,
            amplitude: 1.0,
        }
    }
}

/// The curve Up/Down move from in this tab: the selected one when the law shown is its law,
/// else the first curve of the law shown (the selected one when there is none).
pub(crate) fn start_curve(connector: &ConnectorState, curves: &CurvesState) -> usize {
    let key = &connector.slot().key;
    match curves.selected_curve() {
        Some(c) if key.matches(&c.curve) => curves.selected,
        _ => curves
            .list
            .iter()
            .position(|c| key.matches(&c.curve))
            .unwrap_or(curves.selected),
    }
}

impl HysteresisState {
    /// Handles the tab's actions: next path, amplitude scaled.
    pub(crate) fn update(&mut self, action: &Action, fx: &mut Effects) {
        match *action {
            Action::CyclePath => {
                self.path = match self.path {
                    DrivingPath::FullCycles => DrivingPath::Decaying,
                    DrivingPath::Decaying => DrivingPath::PartialReversals,
                    DrivingPath::PartialReversals => DrivingPath::FullCycles,
                };
                fx.status(format!("driving path: {}", self.path.name()));
            }
            Action::ScaleAmplitude(f) => {
                let wanted = self.amplitude * f;
                self.amplitude = wanted.clamp(AMPLITUDE_RANGE.0, AMPLITUDE_RANGE.1);
                if self.amplitude != wanted {
                    fx.status(if f > 1.0 {
                        "amplitude at its largest, 4 x the KES range (- lowers it)"
                    } else {
                        "amplitude at its smallest, 1/20 of the KES range (+ raises it)"
                    });
                }
            }
            _ => {}
        }
    }

    pub(crate) fn render(
        &self,
        connector: &ConnectorState,
        theme: &Theme,
        area: Rect,
        buf: &mut Buffer,
    ) {
        let law = connector.current();
        let test = series::test_of_law(law);
        let units = test.kes_units();
        let loop_data = series::hysteresis(law, test, self.path, self.amplitude);
        let [left, right] =
            Layout::horizontal([Constraint::Length(30), Constraint::Min(20)]).areas(area);
        let mut lines = vec![
            Line::from(format!("law: {}", connector.slot().key.label())),
            Line::from(format!("path: {} (p)", self.path.name())),
            Line::from(format!(
                "amplitude: {:.3} {} (+/-)",
                loop_data.amplitude_kes, units.x_label
            )),
            Line::from(""),
            Line::from(format!("dissipated [{}]:", loop_data.energy_unit)),
        ];
        if loop_data.energy_per_cycle.is_empty() {
            lines.push(Line::from("  no closed cycle"));
        }
        for (i, e) in loop_data.energy_per_cycle.iter().enumerate() {
            lines.push(Line::from(format!("  cycle {:>2}: {}", i + 1, sig(*e, 3))));
        }
        if !loop_data.open_work.is_empty() {
            lines.push(Line::from("open segments (no cycle):"));
            for w in &loop_data.open_work {
                lines.push(Line::from(format!("  work {}", sig(*w, 3))));
            }
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
}
