//! Connector laws per unit width (docs/model.md): F = F_el(x) + (F_c0 + μ·|F_el(x)|)·z, with z a
//! unit friction state driven along the strain path x. Traction and shear in N/m, bending
//! moment in N·m/m = N; strain as a fraction, shear angle in rad, curvature in 1/m.

use serde::{Deserialize, Serialize};

use crate::friction::{non_negative, positive, FrictionShape, ParamError, UnitFriction};

mod drive;

pub use drive::{drive_parts, friction_part, law_friction, DrivingPath};

/// The friction term of a law: a level F_c0 that may grow with load (μ), and the shape of its
/// unit hysteresis state. μ = 0 is the paper's additive law.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrictionLaw {
    /// Level at zero elastic load, F_c0 (N/m for traction and shear, N for bending).
    pub level: f64,
    /// Growth of the level with the elastic load, 0 ≤ μ < 1 (dimensionless).
    #[serde(default)]
    pub mu: f64,
    /// Shape of the unit state (Dahl or second-order Bliman–Sorine).
    pub shape: FrictionShape,
}

impl FrictionLaw {
    pub(crate) fn validate(&self) -> Result<(), ParamError> {
        non_negative("friction.level", self.level)?;
        if !(self.mu.is_finite() && (0.0..1.0).contains(&self.mu)) {
            return Err(ParamError::new(
                "friction.mu",
                self.mu,
                "must satisfy 0 <= mu < 1",
            ));
        }
        self.shape.validate()
    }

    /// The level at elastic load `f_el`.
    #[inline]
    pub(crate) fn level_at(&self, f_el: f64) -> f64 {
        self.level + self.mu * f_el.abs()
    }
}

/// The state of a law along its path: the last strain, the fibre alignment flag (traction only)
/// and the unit friction state. `Copy`, so a trial step never disturbs the committed state.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LawState {
    /// Last strain reached (fraction, rad or 1/m).
    pub strain: f64,
    /// Traction: the strain has reached ε₁ once, the aligned toe ε₁' applies from now on.
    pub aligned: bool,
    /// Unit friction state.
    pub friction: UnitFriction,
}

/// [`MaterialLaw::trial`], always inlined (the force kernels call it once per connector; out of
/// line it costs a call that spills every live float): the trial state and force at `strain`
/// from `state`.
#[inline(always)]
pub(crate) fn trial_of<L: MaterialLaw + ?Sized>(
    law: &L,
    state: &LawState,
    strain: f64,
) -> (LawState, f64) {
    let mut next = *state;
    next.friction
        .advance(&law.friction().shape, strain - state.strain);
    next.strain = strain;
    law.update_flags(&mut next, strain);
    let f_el = law.elastic(&next, strain);
    let f = f_el + law.friction().level_at(f_el) * next.friction.z();
    (next, f)
}

/// A connector law driven along a strain path.
pub trait MaterialLaw {
    /// Elastic part F_el at `strain` for the given state (the state matters for the toe only).
    fn elastic(&self, state: &LawState, strain: f64) -> f64;
    /// dF_el/dx at `strain` for the given state (N/m per unit strain, or its law's unit).
    fn elastic_slope(&self, state: &LawState, strain: f64) -> f64;
    /// The friction term of the law.
    fn friction(&self) -> &FrictionLaw;
    /// Rules that change the state besides friction (traction's alignment).
    fn update_flags(&self, state: &mut LawState, _strain: f64) {
        let _ = state;
    }

    /// The state and force after moving from `state` to `strain`, without committing it.
    #[inline]
    fn trial(&self, state: &LawState, strain: f64) -> (LawState, f64) {
        trial_of(self, state, strain)
    }

    /// (F_el, dF_el/dx) at `strain`: `elastic` and `elastic_slope` together.
    #[inline]
    fn elastic_and_slope(&self, state: &LawState, strain: f64) -> (f64, f64) {
        let slope = self.elastic_slope(state, strain);
        (self.elastic(state, strain), slope)
    }

    /// (dF/dx, F) of `trial(state, strain)` at `strain` (the trial state `next`): the elastic
    /// slope times 1 + μ·sgn(F_el)·z plus level·dz/dx, the step's direction held (rate
    /// independent: exact away from a reversal), and the force.
    #[inline]
    fn tangent(&self, state: &LawState, next: &LawState, strain: f64) -> (f64, f64) {
        let (f_el, slope) = self.elastic_and_slope(next, strain);
        let fr = self.friction();
        let z = next.friction.z();
        let level = fr.level_at(f_el);
        let tau = slope * (1.0 + fr.mu * 1.0f64.copysign(f_el) * z)
            + level * next.friction.slope(&fr.shape, strain - state.strain);
        (tau, f_el + level * z)
    }

    /// Force in `state` (total, elastic plus friction).
    fn force(&self, state: &LawState) -> f64 {
        let f_el = self.elastic(state, state.strain);
        f_el + self.friction().level_at(f_el) * state.friction.z()
    }

    /// Friction part of the force in `state` (force minus elastic part).
    fn friction_force(&self, state: &LawState) -> f64 {
        let f_el = self.elastic(state, state.strain);
        self.friction().level_at(f_el) * state.friction.z()
    }

    /// Drives a virgin sample along `path` (strains in order) and returns the forces.
    fn drive(&self, path: &[f64]) -> Vec<f64> {
        drive::along(self, path, |_, _, _, f| f)
    }
}

/// Shape of the traction toe on [0, ε_c]; both meet the line k_t(ε − ε_c) + F_c with C¹
/// continuity. They coincide at the ends of the quadratic toe's bound (F_c = k_t ε_c/2:
/// F_c(ε/ε_c)², F_c = k_t ε_c: the line itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToeShape {
    /// The paper's quadratic toe (eq. 3), k_t ε_c/2 ≤ F_c ≤ k_t ε_c.
    #[default]
    Quadratic,
    /// A power toe F_c(ε/ε_c)^n with n = k_t ε_c/F_c ≥ 1 (0 < F_c ≤ k_t ε_c): fibres whose
    /// slack is spread unevenly, J-shaped loading curves.
    Power,
}

/// Traction (TC): a quadratic toe on [0, ε_c] joined C¹ to the line k_t(ε − ε_c) + F₁; no
/// compression (F_el = 0 for ε < 0). ε_c = ε₁ on the virgin loading, ε₁' once the strain has
/// reached ε₁, with F₁' = F₁ − k_t(ε₁ − ε₁') so the line and the force stay continuous.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TractionLaw {
    /// Linear rigidity k_t [N/m] (force per width per unit strain).
    pub k_t: f64,
    /// End of the virgin toe ε₁ [-].
    pub eps1: f64,
    /// Force per width at ε₁, F₁ [N/m]; k_t ε₁/2 ≤ F₁ ≤ k_t ε₁ (quadratic toe),
    /// 0 < F₁ ≤ k_t ε₁ (power toe).
    pub f1: f64,
    /// End of the aligned toe ε₁' [-]; 2(ε₁ − F₁/k_t) ≤ ε₁' ≤ ε₁. Defaults to ε₁.
    #[serde(default)]
    pub eps1_aligned: Option<f64>,
    /// Friction term (level in N/m, strain lengths as fractions).
    pub friction: FrictionLaw,
    /// Shape of the toe (quadratic unless said).
    #[serde(default, skip_serializing_if = "is_quadratic")]
    pub toe: ToeShape,
}

fn is_quadratic(t: &ToeShape) -> bool {
    *t == ToeShape::Quadratic
}

impl TractionLaw {
    pub fn validate(&self) -> Result<(), ParamError> {
        positive("k_t", self.k_t)?;
        positive("eps1", self.eps1)?;
        positive("f1", self.f1)?;
        let hi = self.k_t * self.eps1;
        let lo = match self.toe {
            ToeShape::Quadratic => hi / 2.0,
            ToeShape::Power => 0.0,
        };
        let tol = 1e-12 * hi;
        if self.f1 < lo - tol || self.f1 > hi + tol {
            return Err(ParamError::new(
                "f1",
                self.f1,
                match self.toe {
                    ToeShape::Quadratic => format!(
                        "toe bound k_t*eps1/2 <= f1 <= k_t*eps1 requires {} <= f1 <= {} N/m",
                        crate::friction::bound_text(lo),
                        crate::friction::bound_text(hi)
                    ),
                    ToeShape::Power => format!(
                        "power toe bound 0 < f1 <= k_t*eps1 requires f1 <= {} N/m",
                        crate::friction::bound_text(hi)
                    ),
                },
            ));
        }
        if let Some(ea) = self.eps1_aligned {
            let (lo_a, rule) = match self.toe {
                ToeShape::Quadratic => (
                    2.0 * (self.eps1 - self.f1 / self.k_t),
                    "2(eps1 - f1/k_t) <=",
                ),
                ToeShape::Power => (self.eps1 - self.f1 / self.k_t, "eps1 - f1/k_t <"),
            };
            let lo_a = lo_a.max(0.0);
            let above = match self.toe {
                ToeShape::Quadratic => ea >= lo_a - 1e-12,
                ToeShape::Power => ea > lo_a,
            };
            if !(ea.is_finite() && ea > 0.0 && above && ea <= self.eps1 + 1e-12) {
                return Err(ParamError::new(
                    "eps1_aligned",
                    ea,
                    format!(
                        "must satisfy {} = {rule} eps1_aligned <= eps1 = {} (aligned toe bound)",
                        crate::friction::bound_text(lo_a),
                        crate::friction::bound_text(self.eps1)
                    ),
                ));
            }
        }
        self.friction.validate()
    }

    /// ε₁' (ε₁ when not given).
    pub fn eps1_aligned(&self) -> f64 {
        self.eps1_aligned.unwrap_or(self.eps1)
    }

    /// F₁' = F₁ − k_t(ε₁ − ε₁').
    pub(crate) fn f1_aligned(&self) -> f64 {
        self.f1 - self.k_t * (self.eps1 - self.eps1_aligned())
    }

    /// The toe-and-line elastic force for toe end `eps_c` and toe force `f_c`.
    #[inline]
    pub(crate) fn toe_and_line(toe: ToeShape, k_t: f64, eps_c: f64, f_c: f64, eps: f64) -> f64 {
        if eps <= 0.0 {
            0.0
        } else if eps < eps_c {
            match toe {
                ToeShape::Quadratic => {
                    (k_t * eps / eps_c)
                        * ((1.0 - f_c / (k_t * eps_c)) * eps + 2.0 * f_c / k_t - eps_c)
                }
                ToeShape::Power => f_c * (eps / eps_c).powf(k_t * eps_c / f_c),
            }
        } else {
            k_t * (eps - eps_c) + f_c
        }
    }
}

impl TractionLaw {
    /// d/dε of `toe_and_line` [N/m per unit strain].
    #[inline]
    pub(crate) fn toe_and_line_slope(
        toe: ToeShape,
        k_t: f64,
        eps_c: f64,
        f_c: f64,
        eps: f64,
    ) -> f64 {
        if eps <= 0.0 {
            0.0
        } else if eps < eps_c {
            match toe {
                ToeShape::Quadratic => {
                    (k_t / eps_c)
                        * (2.0 * (1.0 - f_c / (k_t * eps_c)) * eps + 2.0 * f_c / k_t - eps_c)
                }
                ToeShape::Power => {
                    let n = k_t * eps_c / f_c;
                    f_c * n * (eps / eps_c).powf(n - 1.0) / eps_c
                }
            }
        } else {
            k_t
        }
    }
}

impl TractionLaw {
    /// The toe in force for `state`: (ε₁', F₁') once the yarns are aligned, else (ε₁, F₁).
    #[inline]
    fn toe_end(&self, state: &LawState) -> (f64, f64) {
        if state.aligned {
            (self.eps1_aligned(), self.f1_aligned())
        } else {
            (self.eps1, self.f1)
        }
    }
}

impl MaterialLaw for TractionLaw {
    #[inline]
    fn elastic(&self, state: &LawState, strain: f64) -> f64 {
        let (eps1, f1) = self.toe_end(state);
        Self::toe_and_line(self.toe, self.k_t, eps1, f1, strain)
    }
    #[inline]
    fn elastic_slope(&self, state: &LawState, strain: f64) -> f64 {
        let (eps1, f1) = self.toe_end(state);
        Self::toe_and_line_slope(self.toe, self.k_t, eps1, f1, strain)
    }
    /// The power toe's slope from its force, n·F_el/ε (one power instead of two).
    #[inline]
    fn elastic_and_slope(&self, state: &LawState, strain: f64) -> (f64, f64) {
        let f = self.elastic(state, strain);
        let (eps1, f1) = self.toe_end(state);
        if self.toe == ToeShape::Power && strain > 0.0 && strain < eps1 {
            (f, self.k_t * eps1 / f1 * f / strain)
        } else {
            (f, self.elastic_slope(state, strain))
        }
    }
    fn friction(&self) -> &FrictionLaw {
        &self.friction
    }
    #[inline]
    fn update_flags(&self, state: &mut LawState, strain: f64) {
        if strain >= self.eps1 {
            state.aligned = true;
        }
    }
}

/// `validate` and `MaterialLaw` of a linear law F = k(x − x₀) + friction, from the names of
/// its rigidity k and rest value x₀: k > 0, x₀ finite, a valid friction term.
macro_rules! linear_law {
    ($law:ident, $k:ident, $rest:ident) => {
        impl $law {
            pub(crate) fn validate(&self) -> Result<(), ParamError> {
                positive(stringify!($k), self.$k)?;
                if !self.$rest.is_finite() {
                    return Err(ParamError::new(
                        stringify!($rest),
                        self.$rest,
                        "must be finite",
                    ));
                }
                self.friction.validate()
            }
        }

        impl MaterialLaw for $law {
            #[inline]
            fn elastic(&self, _state: &LawState, strain: f64) -> f64 {
                self.$k * (strain - self.$rest)
            }
            #[inline]
            fn elastic_slope(&self, _state: &LawState, _strain: f64) -> f64 {
                self.$k
            }
            fn friction(&self) -> &FrictionLaw {
                &self.friction
            }
        }
    };
}

/// Bending (BC): M = k_b(K − K₀) + friction on the curvature path K.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BendingLaw {
    /// Bending rigidity per width k_b [N·m] (moment per width \[N\] per curvature [1/m]).
    pub k_b: f64,
    /// Rest curvature K₀ [1/m].
    #[serde(default)]
    pub k0: f64,
    /// Friction term (level in N, lengths in 1/m).
    pub friction: FrictionLaw,
}

linear_law!(BendingLaw, k_b, k0);

/// Shear (SC): F_s = k_s(θ − θ₀) + friction on the shear-angle path; θ is the deviation from
/// the rest angle between warp and weft (as in a KES file), θ₀ an offset from it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShearLaw {
    /// Shear rigidity per width k_s [N/(m·rad)].
    pub k_s: f64,
    /// Rest shear angle θ₀ \[rad\] (0: warp and weft at right angles).
    #[serde(default)]
    pub theta0: f64,
    /// Friction term (level in N/m, lengths in rad).
    pub friction: FrictionLaw,
}

linear_law!(ShearLaw, k_s, theta0);

/// Any of the three laws, for code that handles them alike (fitting, protocols, cloth).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "law", rename_all = "snake_case")]
pub enum ConnectorLaw {
    Traction(TractionLaw),
    Bending(BendingLaw),
    Shear(ShearLaw),
}

impl ConnectorLaw {
    pub(crate) fn validate(&self) -> Result<(), ParamError> {
        match self {
            ConnectorLaw::Traction(l) => l.validate(),
            ConnectorLaw::Bending(l) => l.validate(),
            ConnectorLaw::Shear(l) => l.validate(),
        }
    }
}

impl MaterialLaw for ConnectorLaw {
    #[inline]
    fn elastic(&self, state: &LawState, strain: f64) -> f64 {
        match self {
            ConnectorLaw::Traction(l) => l.elastic(state, strain),
            ConnectorLaw::Bending(l) => l.elastic(state, strain),
            ConnectorLaw::Shear(l) => l.elastic(state, strain),
        }
    }
    #[inline]
    fn elastic_slope(&self, state: &LawState, strain: f64) -> f64 {
        match self {
            ConnectorLaw::Traction(l) => l.elastic_slope(state, strain),
            ConnectorLaw::Bending(l) => l.elastic_slope(state, strain),
            ConnectorLaw::Shear(l) => l.elastic_slope(state, strain),
        }
    }
    fn friction(&self) -> &FrictionLaw {
        match self {
            ConnectorLaw::Traction(l) => &l.friction,
            ConnectorLaw::Bending(l) => &l.friction,
            ConnectorLaw::Shear(l) => &l.friction,
        }
    }
    #[inline]
    fn update_flags(&self, state: &mut LawState, strain: f64) {
        if let ConnectorLaw::Traction(l) = self {
            l.update_flags(state, strain);
        }
    }
}

#[cfg(test)]
mod tests;

/// One named parameter of a law, for editors: name, SI unit, value.
#[derive(Debug, Clone, PartialEq)]
pub struct LawParameter {
    pub name: &'static str,
    pub unit: &'static str,
    pub value: f64,
}

impl ConnectorLaw {
    /// `traction`, `bending` or `shear`.
    pub fn name(&self) -> &'static str {
        match self {
            ConnectorLaw::Traction(_) => "traction",
            ConnectorLaw::Bending(_) => "bending",
            ConnectorLaw::Shear(_) => "shear",
        }
    }

    fn friction_mut(&mut self) -> &mut FrictionLaw {
        match self {
            ConnectorLaw::Traction(l) => &mut l.friction,
            ConnectorLaw::Bending(l) => &mut l.friction,
            ConnectorLaw::Shear(l) => &mut l.friction,
        }
    }

    /// Every editable parameter with its SI unit, in a stable order.
    pub fn parameters(&self) -> Vec<LawParameter> {
        let p = |name, unit, value| LawParameter { name, unit, value };
        let (level_unit, length_unit) = match self {
            ConnectorLaw::Traction(_) => ("N/m", "-"),
            ConnectorLaw::Bending(_) => ("N", "1/m"),
            ConnectorLaw::Shear(_) => ("N/m", "rad"),
        };
        let mut out = match self {
            ConnectorLaw::Traction(l) => vec![
                p("k_t", "N/m", l.k_t),
                p("eps1", "-", l.eps1),
                p("f1", "N/m", l.f1),
                p("eps1_aligned", "-", l.eps1_aligned()),
            ],
            ConnectorLaw::Bending(l) => vec![p("k_b", "N*m", l.k_b), p("k0", "1/m", l.k0)],
            ConnectorLaw::Shear(l) => {
                vec![p("k_s", "N/(m*rad)", l.k_s), p("theta0", "rad", l.theta0)]
            }
        };
        let f = self.friction();
        out.push(p("level", level_unit, f.level));
        out.push(p("mu", "-", f.mu));
        match f.shape {
            FrictionShape::Dahl { eps_f, alpha } => {
                out.push(p("eps_f", length_unit, eps_f));
                out.push(p("alpha", "-", alpha));
            }
            FrictionShape::Bs2 { eps_f, eta, ratio } => {
                out.push(p("eps_f", length_unit, eps_f));
                out.push(p("eta", "-", eta));
                out.push(p("ratio", "-", ratio));
            }
        }
        out
    }

    /// The law with parameter `name` set to `value`, validated; the error says why not.
    pub fn with_parameter(&self, name: &str, value: f64) -> Result<Self, ParamError> {
        let mut law = *self;
        match (&mut law, name) {
            (ConnectorLaw::Traction(l), "k_t") => l.k_t = value,
            (ConnectorLaw::Traction(l), "eps1") => l.eps1 = value,
            (ConnectorLaw::Traction(l), "f1") => l.f1 = value,
            (ConnectorLaw::Traction(l), "eps1_aligned") => l.eps1_aligned = Some(value),
            (ConnectorLaw::Bending(l), "k_b") => l.k_b = value,
            (ConnectorLaw::Bending(l), "k0") => l.k0 = value,
            (ConnectorLaw::Shear(l), "k_s") => l.k_s = value,
            (ConnectorLaw::Shear(l), "theta0") => l.theta0 = value,
            (l, "level") => l.friction_mut().level = value,
            (l, "mu") => l.friction_mut().mu = value,
            (l, field) => {
                let shape = &mut l.friction_mut().shape;
                match (shape, field) {
                    (FrictionShape::Dahl { eps_f, .. }, "eps_f")
                    | (FrictionShape::Bs2 { eps_f, .. }, "eps_f") => *eps_f = value,
                    (FrictionShape::Dahl { alpha, .. }, "alpha") => *alpha = value,
                    (FrictionShape::Bs2 { eta, .. }, "eta") => *eta = value,
                    (FrictionShape::Bs2 { ratio, .. }, "ratio") => *ratio = value,
                    _ => {
                        return Err(ParamError::new(
                            "name",
                            value,
                            format!("`{field}` is not a parameter of this law"),
                        ))
                    }
                }
            }
        }
        law.validate()?;
        Ok(law)
    }

    /// The same law with the other friction shape (Dahl ↔ second order), lengths kept.
    pub fn with_shape(&self, second_order: bool) -> Self {
        let mut law = *self;
        let f = law.friction_mut();
        f.shape = match (f.shape, second_order) {
            (FrictionShape::Dahl { eps_f, .. }, true) => FrictionShape::Bs2 {
                eps_f,
                eta: 0.3,
                ratio: 0.3,
            },
            (FrictionShape::Bs2 { eps_f, .. }, false) => FrictionShape::Dahl { eps_f, alpha: 1.0 },
            (s, _) => s,
        };
        law
    }

    /// μ of the law's friction term.
    pub fn friction_mu(&self) -> f64 {
        self.friction().mu
    }

    /// The same law with μ set (0 switches the load-dependent level off).
    pub fn with_mu(&self, mu: f64) -> Result<Self, ParamError> {
        self.with_parameter("mu", mu)
    }
}
