//! Prediction without refit: a parameter file's law driven along a measured path from a virgin
//! state (`FittedLaw::forces`), scored by NRMSE = RMS(F_law − F)/(max F − min F) and by KES values.

use serde::Serialize;
use thiserror::Error;

use crate::kes::{kes_values, Curve, Direction, KesTest, KesValues, ReadingRules};
use crate::params::{nrmse, FabricParams};

#[derive(Debug, Error)]
pub enum ValidateError {
    #[error(
        "{file}: a {test} curve has no connector law to validate (a tensile, shear or bending \
         curve has; `kestrel values` reads compression and surface curves)"
    )]
    NoKesTest { file: String, test: KesTest },
    #[error(
        "{file}: the parameter file of `{fabric}` has no {direction} {test} law — expected a \
         file fitted on that test and direction"
    )]
    NoLaw {
        file: String,
        fabric: String,
        test: KesTest,
        direction: Direction,
    },
    #[error("{file}: the law gives a non-finite force at sample {sample} — the law is not usable on this path")]
    NotFinite { file: String, sample: usize },
    #[error("{file}: the measured force has no range — NRMSE is undefined on a flat curve")]
    Flat { file: String },
    #[error(
        "{file}: the measured force spans {} to {} (SI) — its NRMSE overflows (check the \
         column and its unit)",
        crate::friction::short_number(*.lo),
        crate::friction::short_number(*.hi)
    )]
    Overflow { file: String, lo: f64, hi: f64 },
}

/// The KES values read from the measured curve and from the law's prediction on its path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ValuesSideBySide {
    pub measured: KesValues,
    pub predicted: KesValues,
}

/// How well a law predicts one curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    pub file: String,
    pub test: KesTest,
    pub direction: Direction,
    /// The curve's `# protocol:` metadata (the path's name), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// RMS(predicted − measured)/(max − min of measured), a fraction (`params::nrmse`).
    pub nrmse: f64,
    pub values: ValuesSideBySide,
    /// The predicted forces along the path [N/m, or N for bending].
    #[serde(skip)]
    pub predicted: Vec<f64>,
}

/// Drives `params`' law of the curve's test and direction along the measured path from a
/// virgin state, with the force zero offset it was fitted with, and compares.
pub fn validate_curve(
    params: &FabricParams,
    curve: &Curve,
    rules: &ReadingRules,
) -> Result<Validation, ValidateError> {
    let file = curve.path_name();
    if curve.test == KesTest::Loop || !curve.test.has_connector_law() {
        return Err(ValidateError::NoKesTest {
            file,
            test: curve.test,
        });
    }
    let law = params
        .fitted_law(curve.test, curve.direction)
        .ok_or_else(|| ValidateError::NoLaw {
            file: file.clone(),
            fabric: params.fabric.clone(),
            test: curve.test,
            direction: curve.direction,
        })?;
    let predicted = law.forces(&curve.x);
    if let Some(sample) = predicted.iter().position(|f| !f.is_finite()) {
        return Err(ValidateError::NotFinite { file, sample });
    }
    let score = nrmse(&curve.y, &predicted);
    if !score.is_finite() {
        let (lo, hi) = curve
            .y
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &y| {
                (lo.min(y), hi.max(y))
            });
        // a range of 0 is a flat curve; one too wide for the squares, an overflow
        return Err(if hi > lo {
            ValidateError::Overflow { file, lo, hi }
        } else {
            ValidateError::Flat { file }
        });
    }
    let model = Curve {
        y: predicted.clone(),
        ..curve.clone()
    };
    Ok(Validation {
        file,
        test: curve.test,
        direction: curve.direction,
        protocol: curve.metadata.get("protocol").cloned(),
        nrmse: score,
        values: ValuesSideBySide {
            measured: kes_values(curve, rules).values,
            predicted: kes_values(&model, rules).values,
        },
        predicted,
    })
}

/// The median and the largest of `nrmse` values with the index of the largest; None when empty.
pub fn median_and_worst(nrmse: &[f64]) -> Option<(f64, f64, usize)> {
    let (worst_at, worst) = nrmse
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let mut sorted = nrmse.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
    };
    Some((median, worst, worst_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_worst_of_odd_and_even_lists() {
        assert_eq!(median_and_worst(&[0.3, 0.1, 0.2]), Some((0.2, 0.3, 0)));
        assert_eq!(
            median_and_worst(&[0.1, 0.4, 0.2, 0.3]),
            Some((0.25, 0.4, 1))
        );
        assert_eq!(median_and_worst(&[]), None);
    }
}
