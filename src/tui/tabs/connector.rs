//! The Connector tab: the traction, bending and shear connector laws (elastic part + Dahl or
//! Bliman–Sorine friction) edited parameter by parameter, driven along the KES protocol.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{ListItem, Widget};

use super::curves::CurvesState;
use super::Effects;
use crate::friction::FrictionShape;
use crate::kes::KesTest;
use crate::material::{BendingLaw, ConnectorLaw, FrictionLaw, MaterialLaw, ShearLaw, TractionLaw};
use crate::tui::message::Action;
use crate::tui::prompt::PromptPurpose;
use crate::tui::series;
use crate::tui::widgets::{chart, selection_list, values_paragraph, Series, Theme};

/// The three laws being edited and the selection.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorState {
    /// Traction, bending, shear, in that order.
    pub laws: [ConnectorLaw; 3],
    /// Which law is shown (0 traction, 1 bending, 2 shear).
    pub law: usize,
    pub selected_param: usize,
    /// μ before it was switched off, per law, to restore it.
    pub mu_memory: [f64; 3],
}

impl Default for ConnectorState {
    fn default() -> Self {
        let friction = |level, mu, eps_f| FrictionLaw {
            level,
            mu,
            shape: FrictionShape::Dahl { eps_f, alpha: 1.0 },
        };
        Self {
            laws: [
                ConnectorLaw::Traction(TractionLaw {
                    k_t: 15000.0,
                    eps1: 0.03,
                    f1: 250.0,
                    eps1_aligned: None,
                    friction: friction(10.0, 0.3, 0.005),
                    toe: Default::default(),
                }),
                ConnectorLaw::Bending(BendingLaw {
                    k_b: 1.0e-5,
                    k0: 0.0,
                    friction: friction(4.0e-4, 0.1, 10.0),
                }),
                ConnectorLaw::Shear(ShearLaw {
                    k_s: 60.0,
                    theta0: 0.0,
                    friction: friction(1.0, 0.2, 0.008),
                }),
            ],
            law: 0,
            selected_param: 0,
            mu_memory: [0.3, 0.1, 0.2],
        }
    }
}

impl ConnectorState {
    pub fn current(&self) -> &ConnectorLaw {
        &self.laws[self.law]
    }

    pub(crate) fn law_index_for(test: KesTest) -> usize {
        match test {
            KesTest::Tensile => 0,
            KesTest::Bending => 1,
            KesTest::Shear | KesTest::Loop => 2,
            KesTest::Compression | KesTest::Friction | KesTest::Roughness => 2,
        }
    }

    /// Shows the law of `test` (the selected curve's), from its first parameter.
    pub(crate) fn follow(&mut self, test: KesTest) {
        self.law = Self::law_index_for(test);
        self.selected_param = 0;
    }

    /// Puts a fitted law in its place and shows it.
    pub(crate) fn accept(&mut self, law: ConnectorLaw, test: KesTest) {
        let i = Self::law_index_for(test);
        self.laws[i] = law;
        self.law = i;
    }

    /// Handles the tab's actions: Up/Down, law, friction model, μ, nudges, typed values.
    pub(crate) fn update(&mut self, action: &Action, fx: &mut Effects) {
        match *action {
            Action::Up | Action::Down => {
                let n = self.current().parameters().len();
                self.selected_param =
                    super::ring_step(self.selected_param, n, matches!(action, Action::Up));
            }
            Action::CycleLaw => {
                self.law = (self.law + 1) % 3;
                self.selected_param = 0;
            }
            Action::ToggleFrictionModel => {
                let i = self.law;
                let second = matches!(self.laws[i].friction().shape, FrictionShape::Dahl { .. });
                self.laws[i] = self.laws[i].with_shape(second);
                self.selected_param = self.selected_param.min(self.laws[i].parameters().len() - 1);
                fx.status(format!(
                    "friction: {}",
                    if second {
                        "second-order Bliman-Sorine"
                    } else {
                        "Dahl"
                    }
                ));
            }
            Action::ToggleMu => {
                let i = self.law;
                let mu = self.laws[i].friction().mu;
                let next = if mu > 0.0 {
                    self.mu_memory[i] = mu;
                    0.0
                } else {
                    self.mu_memory[i].max(0.05)
                };
                match self.laws[i].with_mu(next) {
                    Ok(l) => {
                        self.laws[i] = l;
                        fx.status(if next > 0.0 {
                            format!("load-dependent friction level on: mu = {next}")
                        } else {
                            "load-dependent friction level off (the paper's additive law)".into()
                        });
                    }
                    Err(e) => fx.status(format!("refused: {e}")),
                }
            }
            Action::Nudge(fraction) => {
                let params = self.current().parameters();
                if let Some(p) = params.get(self.selected_param) {
                    let value = if p.value == 0.0 {
                        fraction.abs() * 1e-3 * fraction.signum()
                    } else {
                        p.value * (1.0 + fraction)
                    };
                    self.set_parameter(p.name, value, fx);
                }
            }
            Action::EditValue => {
                let params = self.current().parameters();
                if let Some(p) = params.get(self.selected_param) {
                    fx.prompt(
                        PromptPurpose::ParameterValue,
                        &format!("{} [{}] =", p.name, p.unit),
                        format!("{}", p.value),
                    );
                }
            }
            _ => {}
        }
    }

    /// The value typed for the selected parameter.
    pub(crate) fn submit_value(&mut self, text: &str, fx: &mut Effects) {
        match text.parse::<f64>() {
            Ok(v) => {
                let params = self.current().parameters();
                if let Some(p) = params.get(self.selected_param) {
                    self.set_parameter(p.name, v, fx);
                }
            }
            Err(_) => fx.status(format!("refused: `{text}` is not a number")),
        }
    }

    fn set_parameter(&mut self, name: &str, value: f64, fx: &mut Effects) {
        let i = self.law;
        match self.laws[i].with_parameter(name, value) {
            Ok(l) => {
                self.laws[i] = l;
                fx.status(format!("{name} = {value:.6e}"));
            }
            Err(e) => fx.status(format!("refused: {e}")),
        }
    }

    pub(crate) fn render(&self, curves: &CurvesState, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let [left, right] =
            Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(area);
        let law = self.current();
        let friction = match law.friction().shape {
            FrictionShape::Dahl { .. } => "Dahl",
            FrictionShape::Bs2 { .. } => "Bliman-Sorine 2",
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
        selection_list(
            theme,
            "connector law (SI)",
            items,
            Some(header + self.selected_param),
            left,
            buf,
        );
        let [plot, values] =
            Layout::vertical([Constraint::Min(8), Constraint::Length(7)]).areas(right);
        let test = series::test_of_law(law);
        let units = test.kes_units();
        let measured = curves.selected_curve().filter(|c| c.curve.test == test);
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
        let [mv, sv] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(values);
        values_paragraph(
            "measured",
            &measured
                .map(|c| c.values.clone())
                .unwrap_or_else(|| vec![("".into(), format!("select a {test} curve"))]),
        )
        .render(mv, buf);
        values_paragraph("law", &series::protocol_values(law, test)).render(sv, buf);
    }
}
