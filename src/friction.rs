//! Rate-independent friction operators over the path variable s = ∫|dε| (MODEL.md §2):
//! Dahl dF/ds = σ·|1 − v_s F/F_c|^α·sign(1 − v_s F/F_c)·v_s with σ = F_c/ε_f, and Bliman–Sorine
//! first and second order. Every operator is stepped exactly (exponential relaxation over Δs).
//!
//! The operators are *unit* hysteresis states z (|z| ≤ 1 from a virgin start) scaled by a
//! level: the force is `level · z`, in the unit of the level (N/m for traction and shear,
//! N for bending moments per width). The material laws let the level grow with load.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A parameter that is out of its physical range: names the field, its value and the rule.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("invalid parameter `{field}` = {value}: {rule}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: f64,
    pub rule: String,
}

impl ParamError {
    pub fn new(field: &'static str, value: f64, rule: impl Into<String>) -> Self {
        Self {
            field,
            value,
            rule: rule.into(),
        }
    }
}

/// Checks `value` is finite and strictly positive.
pub(crate) fn positive(field: &'static str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(field, value, "must be finite and > 0"))
    }
}

/// Checks `value` is finite and ≥ 0.
pub(crate) fn non_negative(field: &'static str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(field, value, "must be finite and >= 0"))
    }
}

/// A hysteresis operator driven by strain increments.
pub trait FrictionOperator {
    /// Moves the operator along the strain path by `d_strain` (any sign, any size: exact).
    fn advance(&mut self, d_strain: f64);
    /// The unit state z, |z| ≤ 1 from a virgin start (force per unit level).
    fn unit_state(&self) -> f64;
    /// The friction force `level · z` at the operator's own level.
    fn force(&self) -> f64;
    /// Back to the virgin state z = 0.
    fn reset(&mut self);
}

/// Dahl's model: level F_c, length ε_f (σ = F_c/ε_f, the stiffness at a reversal from rest)
/// and exponent α ≥ 1 (α = 1: Bliman–Sorine first order).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DahlParams {
    /// Coulomb level F_c, in the unit of the force it scales.
    pub f_c: f64,
    /// Pre-sliding length ε_f, in the unit of the driving strain (fraction, rad or 1/m).
    pub eps_f: f64,
    /// Shape exponent α ≥ 1 (1 = exponential approach).
    #[serde(default = "one")]
    pub alpha: f64,
}

fn one() -> f64 {
    1.0
}

impl DahlParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        non_negative("f_c", self.f_c)?;
        positive("eps_f", self.eps_f)?;
        if !(self.alpha.is_finite() && self.alpha >= 1.0) {
            return Err(ParamError::new("alpha", self.alpha, "must be >= 1"));
        }
        Ok(())
    }
}

/// Bliman–Sorine second order: a fast state (length η ε_f, level f₁) minus a slow one
/// (length ε_f, level f₂); kinetic level f₁ − f₂ after a long slide, stiction peak after a
/// reversal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlimanSorine2Params {
    /// Fast (peak) level f₁.
    pub f1: f64,
    /// Slow level f₂ subtracted, 0 ≤ f₂ < f₁.
    pub f2: f64,
    /// Slow length ε_f, in the unit of the driving strain.
    pub eps_f: f64,
    /// Ratio η of the fast to the slow length, 0 < η < 1.
    pub eta: f64,
}

impl BlimanSorine2Params {
    pub fn validate(&self) -> Result<(), ParamError> {
        non_negative("f1", self.f1)?;
        non_negative("f2", self.f2)?;
        if self.f1 > 0.0 && self.f2 >= self.f1 {
            return Err(ParamError::new(
                "f2",
                self.f2,
                format!(
                    "must be < f1 = {} (positive kinetic level f1 - f2)",
                    self.f1
                ),
            ));
        }
        positive("eps_f", self.eps_f)?;
        if !(self.eta > 0.0 && self.eta < 1.0) {
            return Err(ParamError::new("eta", self.eta, "must satisfy 0 < eta < 1"));
        }
        Ok(())
    }

    /// f₂/f₁, the fraction of the peak level the slow state takes away (0 when f₁ = 0).
    pub fn ratio(&self) -> f64 {
        if self.f1 > 0.0 {
            self.f2 / self.f1
        } else {
            0.0
        }
    }
}

/// Dahl operator stepped exactly: with u = 1 − v_s z, du/ds = −|u|^α sign(u)/ε_f.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DahlOperator {
    pub params: DahlParams,
    z: f64,
}

impl DahlOperator {
    pub fn new(params: DahlParams) -> Self {
        Self { params, z: 0.0 }
    }

    /// Starts from a given unit state z₀ (|z₀| ≤ 1 keeps |z| ≤ 1).
    pub fn with_state(params: DahlParams, z0: f64) -> Self {
        Self { params, z: z0 }
    }
}

/// One exact Dahl step of the unit state z over Δε with exponent α and length ε_f.
#[inline]
pub fn dahl_step(z: f64, d_strain: f64, eps_f: f64, alpha: f64) -> f64 {
    if d_strain == 0.0 {
        return z;
    }
    let v = d_strain.signum();
    let ds = d_strain.abs();
    if alpha == 1.0 {
        v + (z - v) * (-ds / eps_f).exp()
    } else {
        // |u|^(1−α) grows linearly in s: |u|^(1−α) = |u₀|^(1−α) + (α−1)s/ε_f.
        let u0 = 1.0 - v * z;
        if u0 == 0.0 {
            return z;
        }
        let a = u0.abs().powf(1.0 - alpha) + (alpha - 1.0) * ds / eps_f;
        let u = u0.signum() * a.powf(-1.0 / (alpha - 1.0));
        v * (1.0 - u)
    }
}

impl FrictionOperator for DahlOperator {
    #[inline]
    fn advance(&mut self, d_strain: f64) {
        self.z = dahl_step(self.z, d_strain, self.params.eps_f, self.params.alpha);
    }
    fn unit_state(&self) -> f64 {
        self.z
    }
    fn force(&self) -> f64 {
        self.params.f_c * self.z
    }
    fn reset(&mut self) {
        self.z = 0.0;
    }
}

/// Bliman–Sorine first order: dx/ds = (−x + f₁v_s)/ε_f, F = x. Equal to Dahl with α = 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlimanSorine1Operator {
    /// Level f₁ (= F_c).
    pub f1: f64,
    /// Length ε_f.
    pub eps_f: f64,
    z: f64,
}

impl BlimanSorine1Operator {
    pub fn new(f1: f64, eps_f: f64) -> Result<Self, ParamError> {
        DahlParams {
            f_c: f1,
            eps_f,
            alpha: 1.0,
        }
        .validate()?;
        Ok(Self { f1, eps_f, z: 0.0 })
    }
}

impl FrictionOperator for BlimanSorine1Operator {
    #[inline]
    fn advance(&mut self, d_strain: f64) {
        self.z = dahl_step(self.z, d_strain, self.eps_f, 1.0);
    }
    fn unit_state(&self) -> f64 {
        self.z
    }
    fn force(&self) -> f64 {
        self.f1 * self.z
    }
    fn reset(&mut self) {
        self.z = 0.0;
    }
}

/// Bliman–Sorine second order in unit form: z₁ → v_s over η ε_f, z₂ → −r v_s over ε_f with
/// r = f₂/f₁; z = z₁ + z₂ and F = f₁·z.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlimanSorine2Operator {
    pub params: BlimanSorine2Params,
    z1: f64,
    z2: f64,
}

impl BlimanSorine2Operator {
    pub fn new(params: BlimanSorine2Params) -> Self {
        Self {
            params,
            z1: 0.0,
            z2: 0.0,
        }
    }

    /// The two unit states (fast, slow).
    pub fn states(&self) -> (f64, f64) {
        (self.z1, self.z2)
    }
}

/// One exact second-order step of the unit states (z₁, z₂).
#[inline]
pub fn bs2_step(z1: f64, z2: f64, d_strain: f64, eps_f: f64, eta: f64, ratio: f64) -> (f64, f64) {
    if d_strain == 0.0 {
        return (z1, z2);
    }
    let v = d_strain.signum();
    let ds = d_strain.abs();
    let e_slow = (-ds / eps_f).exp();
    let e_fast = (-ds / (eta * eps_f)).exp();
    (
        v + (z1 - v) * e_fast,
        -ratio * v + (z2 + ratio * v) * e_slow,
    )
}

impl FrictionOperator for BlimanSorine2Operator {
    #[inline]
    fn advance(&mut self, d_strain: f64) {
        let p = &self.params;
        (self.z1, self.z2) = bs2_step(self.z1, self.z2, d_strain, p.eps_f, p.eta, p.ratio());
    }
    fn unit_state(&self) -> f64 {
        self.z1 + self.z2
    }
    fn force(&self) -> f64 {
        self.params.f1 * (self.z1 + self.z2)
    }
    fn reset(&mut self) {
        self.z1 = 0.0;
        self.z2 = 0.0;
    }
}

/// The friction model of a material law: shape of the unit state. Its level lives in the law.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum FrictionShape {
    /// Dahl / Bliman–Sorine first order with length ε_f and exponent α.
    Dahl {
        eps_f: f64,
        #[serde(default = "one")]
        alpha: f64,
    },
    /// Bliman–Sorine second order: slow length ε_f, fast/slow ratio η, f₂/f₁ ratio r.
    Bs2 { eps_f: f64, eta: f64, ratio: f64 },
}

impl FrictionShape {
    pub fn validate(&self) -> Result<(), ParamError> {
        match *self {
            FrictionShape::Dahl { eps_f, alpha } => DahlParams {
                f_c: 1.0,
                eps_f,
                alpha,
            }
            .validate(),
            FrictionShape::Bs2 { eps_f, eta, ratio } => {
                if !(ratio.is_finite() && (0.0..1.0).contains(&ratio)) {
                    return Err(ParamError::new(
                        "ratio",
                        ratio,
                        "f2/f1 must satisfy 0 <= ratio < 1 (f2 < f1)",
                    ));
                }
                BlimanSorine2Params {
                    f1: 1.0,
                    f2: ratio,
                    eps_f,
                    eta,
                }
                .validate()
            }
        }
    }

    /// The length ε_f of the (slow) state.
    pub fn eps_f(&self) -> f64 {
        match *self {
            FrictionShape::Dahl { eps_f, .. } | FrictionShape::Bs2 { eps_f, .. } => eps_f,
        }
    }

    /// Short name: `dahl` or `bs2`.
    pub fn name(&self) -> &'static str {
        match self {
            FrictionShape::Dahl { .. } => "dahl",
            FrictionShape::Bs2 { .. } => "bs2",
        }
    }
}

/// The unit state of a [`FrictionShape`], stepped exactly. Enum dispatch keeps it inlinable.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UnitFriction {
    z1: f64,
    z2: f64,
}

impl UnitFriction {
    pub fn virgin() -> Self {
        Self::default()
    }

    /// z = z₁ + z₂ (z₂ = 0 for Dahl).
    #[inline]
    pub fn z(&self) -> f64 {
        self.z1 + self.z2
    }

    #[inline]
    pub fn advance(&mut self, shape: &FrictionShape, d_strain: f64) {
        match *shape {
            FrictionShape::Dahl { eps_f, alpha } => {
                self.z1 = dahl_step(self.z1, d_strain, eps_f, alpha);
            }
            FrictionShape::Bs2 { eps_f, eta, ratio } => {
                (self.z1, self.z2) = bs2_step(self.z1, self.z2, d_strain, eps_f, eta, ratio);
            }
        }
    }

    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        let e = DahlParams {
            f_c: 1.0,
            eps_f: 0.0,
            alpha: 1.0,
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field, "eps_f");
        let e = BlimanSorine2Params {
            f1: 1.0,
            f2: 1.5,
            eps_f: 0.1,
            eta: 0.5,
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field, "f2");
        assert!(e.to_string().contains("f1 - f2"), "{e}");
        let e = BlimanSorine2Params {
            f1: 1.0,
            f2: 0.5,
            eps_f: 0.1,
            eta: 1.0,
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field, "eta");
        let e = DahlParams {
            f_c: 1.0,
            eps_f: 0.1,
            alpha: 0.5,
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field, "alpha");
    }

    #[test]
    fn dahl_alpha_general_reduces_to_alpha_one() {
        // α slightly above one must approach the exponential closed form.
        let z = dahl_step(0.3, 0.02, 0.01, 1.0 + 1e-9);
        let z1 = dahl_step(0.3, 0.02, 0.01, 1.0);
        assert!((z - z1).abs() < 1e-6, "{z} vs {z1}");
    }

    #[test]
    fn dahl_alpha_two_closed_form() {
        // α = 2 from z = 0 going up: u = 1/(1 + s/ε_f), z = 1 − u.
        let z = dahl_step(0.0, 0.03, 0.01, 2.0);
        assert!((z - (1.0 - 1.0 / 4.0)).abs() < 1e-12);
    }

    #[test]
    fn serde_shapes_round_trip() {
        let s = FrictionShape::Bs2 {
            eps_f: 0.01,
            eta: 0.3,
            ratio: 0.4,
        };
        let t = toml::to_string(&s).unwrap();
        assert!(t.contains("model = \"bs2\""), "{t}");
        let back: FrictionShape = toml::from_str(&t).unwrap();
        assert_eq!(s, back);
    }
}
