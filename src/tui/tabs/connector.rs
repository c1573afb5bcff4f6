//! The Connector tab: the traction, bending and shear connector laws (elastic part + Dahl or
//! Bliman–Sorine friction) of the selected fabric, one per test and direction, edited
//! parameter by parameter in KES units, driven along the KES protocol, accepted as the
//! fabric's law.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{ListItem, Widget};

use super::curves::CurvesState;
use super::Effects;
use crate::fit::CurveFit;
use crate::friction::FrictionShape;
use crate::kes::units::{law_parameter_unit, significant, typeset_unit};
use crate::kes::{Curve, Direction, KesTest};
use crate::material::{
    BendingLaw, ConnectorLaw, FrictionLaw, MaterialLaw, ShearLaw, ToeShape, TractionLaw,
};
use crate::tui::message::{Action, LoadedCurve};
use crate::tui::prompt::PromptPurpose;
use crate::tui::series;
use crate::tui::widgets::{chart, selection_list, values_paragraph, Series, Theme};

/// Which law the tab shows: a fabric's test and direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LawKey {
    pub fabric: String,
    /// 0 traction, 1 bending, 2 shear (as `ConnectorState::law_index_for` numbers them).
    pub law: usize,
    /// Warp or weft (a bias curve's law is the warp's, as in a parameter file).
    pub direction: Direction,
}

impl LawKey {
    /// The KES test of this law.
    pub fn test(&self) -> KesTest {
        [KesTest::Tensile, KesTest::Bending, KesTest::Shear][self.law % 3]
    }

    /// `tensile warp`.
    pub fn label(&self) -> String {
        format!("{} {}", self.test(), self.direction)
    }

    pub(crate) fn of(curve: &Curve) -> Self {
        Self {
            fabric: curve.fabric.clone(),
            law: ConnectorState::law_index_for(curve.test),
            direction: law_direction(curve.direction),
        }
    }

    pub(crate) fn matches(&self, curve: &Curve) -> bool {
        curve.fabric == self.fabric
            && curve.test == self.test()
            && law_direction(curve.direction) == self.direction
    }
}

/// The curves of `key`'s fabric, test and direction, the selected one first.
fn key_curves<'a>(key: &LawKey, curves: &'a CurvesState) -> Vec<&'a LoadedCurve> {
    let mut order: Vec<usize> = (0..curves.list.len()).collect();
    order.sort_by_key(|&i| i != curves.selected);
    order
        .into_iter()
        .map(|i| &curves.list[i])
        .filter(|c| key.matches(&c.curve))
        .collect()
}

fn toe_name(toe: ToeShape) -> &'static str {
    match toe {
        ToeShape::Quadratic => "quadratic",
        ToeShape::Power => "power",
    }
}

/// The direction whose law a curve's belongs to: weft, else warp (bias included).
fn law_direction(d: Direction) -> Direction {
    if d == Direction::Weft {
        Direction::Weft
    } else {
        Direction::Warp
    }
}

/// Where the law shown comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LawOrigin {
    /// Accepted as the fabric's law (`a` here or in the Fit tab).
    Accepted,
    /// The fit of a curve of this test and direction.
    Fitted(String),
    /// The fit's initial estimate from a curve's shape (no fit yet).
    Estimate(String),
    /// No curve of this test and direction: kestrel's generic default.
    Default,
}

impl LawOrigin {
    /// What it is, and the curve it comes from.
    pub fn parts(&self) -> (&'static str, Option<&str>) {
        match self {
            LawOrigin::Accepted => ("accepted", None),
            LawOrigin::Fitted(c) => ("fitted to", Some(c)),
            LawOrigin::Estimate(c) => ("estimate from", Some(c)),
            LawOrigin::Default => ("generic default", None),
        }
    }

    /// `estimate from tensile_warp.csv`.
    pub fn describe(&self) -> String {
        match self.parts() {
            (what, Some(curve)) => format!("{what} {curve}"),
            (what, None) => what.to_string(),
        }
    }
}

/// A law of the tab: one per fabric, test and direction looked at, with its edits.
#[derive(Debug, Clone, PartialEq)]
pub struct LawSlot {
    pub key: LawKey,
    pub law: ConnectorLaw,
    pub origin: LawOrigin,
    /// Changed here since it came from `origin`.
    pub edited: bool,
}

/// The laws being edited, the one shown, and the laws accepted as the fabrics'.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorState {
    /// Every law looked at (never empty), with its edits.
    pub slots: Vec<LawSlot>,
    /// The slot shown.
    pub shown: usize,
    pub selected_param: usize,
    /// μ before it was switched off, per law (traction, bending, shear), to restore it.
    pub mu_memory: [f64; 3],
    /// The laws accepted as their fabric's, per test and direction: what a save writes for
    /// them instead of the fit.
    pub accepted: Vec<(LawKey, ConnectorLaw)>,
}

/// kestrel's generic default law of index `law` (0 traction, 1 bending, 2 shear), SI.
fn default_law(law: usize) -> ConnectorLaw {
    let friction = |level, mu, eps_f| FrictionLaw {
        level,
        mu,
        shape: FrictionShape::Dahl { eps_f, alpha: 1.0 },
    };
    match law {
        0 => ConnectorLaw::Traction(TractionLaw {
            k_t: 15000.0,
            eps1: 0.03,
            f1: 250.0,
            eps1_aligned: None,
            friction: friction(10.0, 0.3, 0.005),
            toe: Default::default(),
        }),
        1 => ConnectorLaw::Bending(BendingLaw {
            k_b: 1.0e-5,
            k0: 0.0,
            friction: friction(4.0e-4, 0.1, 10.0),
        }),
        _ => ConnectorLaw::Shear(ShearLaw {
            k_s: 60.0,
            theta0: 0.0,
            friction: friction(1.0, 0.2, 0.008),
        }),
    }
}

impl Default for ConnectorState {
    fn default() -> Self {
        Self {
            slots: vec![LawSlot {
                key: LawKey {
                    fabric: String::new(),
                    law: 0,
                    direction: Direction::Warp,
                },
                law: default_law(0),
                origin: LawOrigin::Default,
                edited: false,
            }],
            shown: 0,
            selected_param: 0,
            mu_memory: [0.3, 0.1, 0.2],
            accepted: Vec::new(),
        }
    }
}

/// A parameter as the tab shows it: name, value and unit in KES units.
pub(crate) struct KesParameter {
    pub name: &'static str,
    pub value: f64,
    pub unit: String,
    /// KES per SI.
    factor: f64,
}

/// The law's parameters in KES units (`kes::units::law_parameter_unit`).
pub(crate) fn kes_parameters(law: &ConnectorLaw) -> Vec<KesParameter> {
    law.parameters()
        .into_iter()
        .map(|p| {
            let strain = p.name.starts_with("eps");
            let (unit, factor) = law_parameter_unit(p.unit, strain);
            KesParameter {
                name: p.name,
                value: p.value * factor,
                unit: typeset_unit(unit),
                factor,
            }
        })
        .collect()
}

impl ConnectorState {
    pub fn current(&self) -> &ConnectorLaw {
        &self.slot().law
    }

    /// The law shown, with its key and origin.
    pub fn slot(&self) -> &LawSlot {
        &self.slots[self.shown.min(self.slots.len() - 1)]
    }

    fn slot_mut(&mut self) -> &mut LawSlot {
        let i = self.shown.min(self.slots.len() - 1);
        &mut self.slots[i]
    }

    pub(crate) fn law_index_for(test: KesTest) -> usize {
        match test {
            KesTest::Tensile => 0,
            KesTest::Bending => 1,
            KesTest::Shear | KesTest::Loop => 2,
            KesTest::Compression | KesTest::Friction | KesTest::Roughness => 2,
        }
    }

    /// The law accepted for `key`, if any.
    pub(crate) fn accepted_law(&self, key: &LawKey) -> Option<&ConnectorLaw> {
        self.accepted.iter().find(|(k, _)| k == key).map(|(_, l)| l)
    }

    /// Shows the law of the selected curve's fabric, test and direction, from its first
    /// parameter; compression and surface curves have no law: the tab then stays as it is.
    pub(crate) fn follow(&mut self, curves: &CurvesState) {
        if let Some(c) = curves
            .selected_curve()
            .filter(|c| c.curve.test.has_connector_law())
        {
            self.show(LawKey::of(&c.curve), curves);
        }
    }

    /// Shows the law of `key`: as edited here, else the accepted law, the fitted law, the
    /// fit's initial estimate from a curve of that test and direction (the selected one
    /// first), or the generic default.
    fn show(&mut self, key: LawKey, curves: &CurvesState) {
        self.selected_param = 0;
        let existing = self.slots.iter().position(|s| s.key == key);
        if let Some(i) = existing.filter(|&i| self.slots[i].edited) {
            self.shown = i;
            return;
        }
        let (law, origin) = self.starting_law(&key, curves);
        let slot = LawSlot {
            key,
            law,
            origin,
            edited: false,
        };
        self.shown = match existing {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
    }

    fn starting_law(&self, key: &LawKey, curves: &CurvesState) -> (ConnectorLaw, LawOrigin) {
        if let Some(law) = self.accepted_law(key) {
            return (*law, LawOrigin::Accepted);
        }
        // the selected curve first, then the fabric's others of this test and direction
        let candidates = key_curves(key, curves);
        if let Some((law, c)) = candidates
            .iter()
            .find_map(|c| Some((c.fit.as_ref()?.law()?, c)))
        {
            return (law, LawOrigin::Fitted(c.curve.source_name()));
        }
        if let Some((law, c)) = candidates
            .iter()
            .find_map(|c| Some((CurveFit::starting_law(&c.curve)?, c)))
        {
            return (law, LawOrigin::Estimate(c.curve.source_name()));
        }
        (default_law(key.law), LawOrigin::Default)
    }

    /// Makes `law` the fabric's law for `key` (what a save writes for it) and shows it.
    pub(crate) fn accept(&mut self, key: LawKey, law: ConnectorLaw) {
        self.accepted.retain(|(k, _)| *k != key);
        self.accepted.push((key.clone(), law));
        let slot = LawSlot {
            key: key.clone(),
            law,
            origin: LawOrigin::Accepted,
            edited: false,
        };
        match self.slots.iter().position(|s| s.key == key) {
            Some(i) => {
                self.slots[i] = slot;
                self.shown = i;
            }
            None => {
                self.slots.push(slot);
                self.shown = self.slots.len() - 1;
            }
        }
    }

    /// Accepts the fitted law of the selected curve (the Fit tab's `a`).
    pub(crate) fn accept_fit(&mut self, curve: &Curve, law: ConnectorLaw) {
        self.accept(LawKey::of(curve), law);
    }

    /// Handles the tab's actions: Up/Down, law, direction, friction model, toe, μ, nudges,
    /// typed values, accept. True when a law was accepted (the fabric's laws changed).
    pub(crate) fn update(
        &mut self,
        action: &Action,
        curves: &CurvesState,
        fx: &mut Effects,
    ) -> bool {
        match *action {
            Action::Up | Action::Down => {
                let n = self.current().parameters().len();
                self.selected_param =
                    super::ring_step(self.selected_param, n, matches!(action, Action::Up));
            }
            Action::CycleLaw | Action::ToggleDirection => {
                let mut key = self.slot().key.clone();
                if matches!(action, Action::CycleLaw) {
                    key.law = (key.law + 1) % 3;
                } else {
                    key.direction = match key.direction {
                        Direction::Weft => Direction::Warp,
                        _ => Direction::Weft,
                    };
                }
                self.show(key, curves);
                fx.status(format!(
                    "{} law: {}",
                    self.slot().key.label(),
                    self.slot().origin.describe()
                ));
            }
            Action::AcceptLaw => {
                let slot = self.slot().clone();
                self.accept(slot.key.clone(), slot.law);
                let fabric = if slot.key.fabric.is_empty() {
                    "the fabric".to_string()
                } else {
                    slot.key.fabric.clone()
                };
                fx.status(format!(
                    "{} law accepted as {fabric}'s ({}{}): s saves the fabric's accepted and fitted laws",
                    slot.key.label(),
                    slot.origin.describe(),
                    if slot.edited { ", edited" } else { "" }
                ));
                return true;
            }
            Action::ToggleFrictionModel => {
                let second = matches!(self.current().friction().shape, FrictionShape::Dahl { .. });
                let law = self.current().with_shape(second);
                self.edit(law);
                self.selected_param = self.selected_param.min(law.parameters().len() - 1);
                fx.status(format!(
                    "friction: {}",
                    if second {
                        "second-order Bliman-Sorine"
                    } else {
                        "Dahl"
                    }
                ));
            }
            Action::ToggleToe => {
                let ConnectorLaw::Traction(mut l) = *self.current() else {
                    fx.status("only the traction law has a toe");
                    return false;
                };
                l.toe = match l.toe {
                    ToeShape::Quadratic => ToeShape::Power,
                    ToeShape::Power => ToeShape::Quadratic,
                };
                match l.validate() {
                    Ok(()) => {
                        self.edit(ConnectorLaw::Traction(l));
                        fx.status(format!("toe: {}", toe_name(l.toe)));
                    }
                    Err(e) => fx.status(format!("refused: {e}")),
                }
            }
            Action::ToggleMu => {
                let i = self.slot().key.law;
                let mu = self.current().friction().mu;
                let next = if mu > 0.0 {
                    self.mu_memory[i] = mu;
                    0.0
                } else {
                    self.mu_memory[i].max(0.05)
                };
                match self.current().with_mu(next) {
                    Ok(l) => {
                        self.edit(l);
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
                let params = kes_parameters(self.current());
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
        false
    }

    /// The value typed for the selected parameter, in the KES unit shown.
    pub(crate) fn submit_value(&mut self, text: &str, fx: &mut Effects) {
        match text.parse::<f64>() {
            Ok(v) => {
                let params = kes_parameters(self.current());
                if let Some(p) = params.get(self.selected_param) {
                    self.set_parameter(p.name, v / p.factor, fx);
                }
            }
            Err(_) => fx.status(format!("refused: `{text}` is not a number")),
        }
    }

    /// The law shown replaced by an edit of it.
    fn edit(&mut self, law: ConnectorLaw) {
        let slot = self.slot_mut();
        if slot.law != law {
            slot.law = law;
            slot.edited = true;
        }
    }

    /// Sets parameter `name` to `value` (SI); the status shows it in KES units.
    fn set_parameter(&mut self, name: &str, value: f64, fx: &mut Effects) {
        match self.current().with_parameter(name, value) {
            Ok(l) => {
                self.edit(l);
                let shown = kes_parameters(&l).into_iter().find(|p| p.name == name);
                fx.status(match shown {
                    Some(p) => format!("{name} = {} {}", significant(p.value, 6), p.unit),
                    None => format!("{name} = {value:.6e}"),
                });
            }
            Err(e) => fx.status(format!("refused: {e}")),
        }
    }

    pub(crate) fn render(&self, curves: &CurvesState, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let [left, right] =
            Layout::horizontal([Constraint::Length(36), Constraint::Min(20)]).areas(area);
        let slot = self.slot();
        let law = &slot.law;
        let friction = match law.friction().shape {
            FrictionShape::Dahl { .. } => "Dahl",
            FrictionShape::Bs2 { .. } => "Bliman-Sorine 2",
        };
        let edited = if slot.edited { ", edited" } else { "" };
        let from = match slot.origin.parts() {
            (what, Some(curve)) => ListItem::new(vec![
                Line::from(format!("from     {what}{edited}")),
                Line::from(format!("         {curve}")),
            ]),
            (what, None) => ListItem::new(format!("from     {what}{edited}")),
        };
        let mut items: Vec<ListItem> = vec![
            ListItem::new(format!("law      {} (l, d)", slot.key.label())),
            from,
            ListItem::new(format!("friction {friction} (f)")),
            ListItem::new(format!(
                "mu       {} (m)",
                if law.friction().mu > 0.0 { "on" } else { "off" }
            )),
        ];
        if let ConnectorLaw::Traction(l) = law {
            items.push(ListItem::new(format!("toe      {} (t)", toe_name(l.toe))));
        }
        items.push(ListItem::new(""));
        let header = items.len();
        for p in kes_parameters(law) {
            items.push(ListItem::new(format!(
                "{:<12} {:>9} {}",
                p.name,
                significant(p.value, 4),
                p.unit
            )));
        }
        let title = if slot.key.fabric.is_empty() {
            "law (KES units; a accepts)".to_string()
        } else {
            format!("{} (a accepts)", slot.key.fabric)
        };
        selection_list(
            theme,
            &title,
            items,
            Some(header + self.selected_param),
            left,
            buf,
        );
        let [plot, values] =
            Layout::vertical([Constraint::Min(8), Constraint::Length(7)]).areas(right);
        let test = slot.key.test();
        let units = test.kes_units();
        let measured = key_curves(&slot.key, curves).into_iter().next();
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
            &format!("{} law on the KES protocol", slot.key.label()),
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
                .unwrap_or_else(|| vec![("".into(), format!("no {} curve", slot.key.label()))]),
        )
        .render(mv, buf);
        values_paragraph("law", &series::protocol_values(law, test)).render(sv, buf);
    }
}
