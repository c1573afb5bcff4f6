//! Rate-independent friction over the path variable s = ∫|dε| (docs/model.md): Dahl
//! dF/ds = σ·|1 − v_s F/F_c|^α·sign(1 − v_s F/F_c)·v_s with σ = F_c/ε_f (α = 1: Bliman–Sorine
//! first order) and Bliman–Sorine second order, each stepped exactly over Δs.
//!
//! A [`FrictionShape`] drives a *unit* state [`UnitFriction`] z (|z| ≤ 1 from a virgin start)
//! scaled by a level: the force is `level · z`, in the unit of the level (N/m for traction and
//! shear, N for bending moments per width). The material laws let the level grow with load.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A parameter that is out of its physical range: names the field, its value and the rule.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("invalid parameter `{field}` = {}: {rule}", short_number(*value))]
pub struct ParamError {
    pub field: &'static str,
    pub value: f64,
    pub rule: String,
}

/// A number as written by hand: plain between 1e-4 and 1e6, else in exponent form (`1e-300`).
pub fn short_number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A bound in a message: six decimals in the range people type, else short (`1e300`, not
/// three hundred digits).
pub(crate) fn bound_text(v: f64) -> String {
    if v == 0.0 || (1e-4..1e6).contains(&v.abs()) {
        format!("{v:.6}")
    } else {
        short_number(v)
    }
}

impl ParamError {
    pub(crate) fn new(field: &'static str, value: f64, rule: impl Into<String>) -> Self {
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

fn one() -> f64 {
    1.0
}

/// One exact Dahl step of the unit state z over Δε with exponent α and length ε_f.
#[inline]
pub(crate) fn dahl_step(z: f64, d_strain: f64, eps_f: f64, alpha: f64) -> f64 {
    if d_strain == 0.0 {
        return z;
    }
    // the step's sign: signum without its NaN test (a NaN step gives a NaN state either way)
    let v = 1.0f64.copysign(d_strain);
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

/// One exact second-order step of the unit states (z₁, z₂).
#[inline]
pub(crate) fn bs2_step(
    z1: f64,
    z2: f64,
    d_strain: f64,
    eps_f: f64,
    eta: f64,
    ratio: f64,
) -> (f64, f64) {
    if d_strain == 0.0 {
        return (z1, z2);
    }
    let v = 1.0f64.copysign(d_strain);
    let ds = d_strain.abs();
    let e_slow = (-ds / eps_f).exp();
    let e_fast = (-ds / (eta * eps_f)).exp();
    (
        v + (z1 - v) * e_fast,
        -ratio * v + (z2 + ratio * v) * e_slow,
    )
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
            FrictionShape::Dahl { eps_f, alpha } => {
                positive("eps_f", eps_f)?;
                if !(alpha.is_finite() && alpha >= 1.0) {
                    return Err(ParamError::new("alpha", alpha, "must be >= 1"));
                }
            }
            FrictionShape::Bs2 { eps_f, eta, ratio } => {
                if !(ratio.is_finite() && (0.0..1.0).contains(&ratio)) {
                    return Err(ParamError::new(
                        "ratio",
                        ratio,
                        "f2/f1 must satisfy 0 <= ratio < 1 (f2 < f1)",
                    ));
                }
                positive("eps_f", eps_f)?;
                if !(eta > 0.0 && eta < 1.0) {
                    return Err(ParamError::new("eta", eta, "must satisfy 0 < eta < 1"));
                }
            }
        }
        Ok(())
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
}

impl UnitFriction {
    /// dz/dε of a state reached by a step of sign `v` (+1 or −1; 0, a step of zero length,
    /// takes the reversal direction −sign z, the stiffer side): Dahl |1 − vz|^α·sgn(1 − vz)/ε_f,
    /// second order (1 − vz₁)/(ηε_f) − (vz₂ + r)/ε_f, the same ODEs the exact steps solve.
    #[inline]
    pub fn slope(&self, shape: &FrictionShape, v: f64) -> f64 {
        let v = if v != 0.0 {
            1.0f64.copysign(v)
        } else if self.z() > 0.0 {
            -1.0
        } else {
            1.0
        };
        match *shape {
            FrictionShape::Dahl { eps_f, alpha } => {
                let u = 1.0 - v * self.z1;
                let p = if alpha == 1.0 {
                    u
                } else {
                    u.abs().powf(alpha) * u.signum()
                };
                p / eps_f
            }
            FrictionShape::Bs2 { eps_f, eta, ratio } => {
                (1.0 - v * self.z1) / (eta * eps_f) - (v * self.z2 + ratio) / eps_f
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        let dahl = |eps_f, alpha| FrictionShape::Dahl { eps_f, alpha };
        let bs2 = |eps_f, eta, ratio| FrictionShape::Bs2 { eps_f, eta, ratio };
        for (shape, field) in [
            (dahl(0.0, 1.0), "eps_f"),
            (bs2(0.1, 0.5, 1.5), "ratio"),
            (bs2(0.1, 1.0, 0.5), "eta"),
            (dahl(0.1, 0.5), "alpha"),
        ] {
            let e = shape.validate().unwrap_err();
            assert_eq!(e.field, field);
            if field == "ratio" {
                assert!(e.to_string().contains("f2 < f1"), "{e}");
            }
        }
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
    fn slope_matches_differences_of_the_exact_step() {
        let shapes = [
            FrictionShape::Dahl {
                eps_f: 0.01,
                alpha: 1.0,
            },
            FrictionShape::Dahl {
                eps_f: 0.01,
                alpha: 2.5,
            },
            FrictionShape::Bs2 {
                eps_f: 0.01,
                eta: 0.3,
                ratio: 0.4,
            },
        ];
        for shape in shapes {
            for (z0, d) in [(0.2, 0.004), (0.2, -0.003), (-0.6, 0.01)] {
                let mut a = UnitFriction::virgin();
                a.advance(&shape, 0.5 * z0);
                let mut p = a;
                p.advance(&shape, d);
                let h = 1e-7;
                let (mut hi, mut lo) = (a, a);
                hi.advance(&shape, d + h);
                lo.advance(&shape, d - h);
                let fd = (hi.z() - lo.z()) / (2.0 * h);
                let an = p.slope(&shape, d);
                assert!(
                    (fd - an).abs() < 1e-5 * an.abs().max(1.0),
                    "{shape:?} {d}: {fd} vs {an}"
                );
            }
        }
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
