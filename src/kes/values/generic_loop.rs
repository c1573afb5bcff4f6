//! A generic loop's values (any curve, SI units): turning points, ranges, the work ∮y dx
//! [x unit · y unit] and the loop's width at mid-x [y unit].

use serde::Serialize;

use super::super::path::Path;
use super::super::Curve;
use super::loops::branch_value_at;
use super::ReadingRules;

/// What a generic loop shows: in the curve's SI units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoopValues {
    pub samples: usize,
    /// Turning points of x.
    pub reversals: usize,
    pub x_min: f64,
    pub x_max: f64,
    pub y_min: f64,
    pub y_max: f64,
    /// ∫y dx along the whole path (the energy dissipated by closed loops) [x unit · y unit].
    pub work: f64,
    /// Rising minus falling branches (each the mean of the branches reaching it) at mid-x.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<f64>,
}

/// Reversals, ranges, work and width at mid-x of a generic loop (any curve, SI units).
pub fn loop_values(curve: &Curve, rules: &ReadingRules) -> LoopValues {
    let n = curve.x.len().min(curve.y.len());
    let (x, y) = (&curve.x[..n], &curve.y[..n]);
    let range = |v: &[f64]| {
        v.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &a| {
                (lo.min(a), hi.max(a))
            })
    };
    let ((x_min, x_max), (y_min, y_max)) = (range(x), range(y));
    let span = x_max - x_min;
    let path = Path::with_fraction(x, rules.reversal_fraction);
    let bs = path.branches();
    let work = (1..n)
        .map(|i| 0.5 * (y[i] + y[i - 1]) * (x[i] - x[i - 1]))
        .sum();
    let mid = 0.5 * (x_min + x_max);
    let half = rules.loop_half_window * span;
    let mean_at = |rising: bool| {
        let v: Vec<f64> = bs
            .iter()
            .filter(|b| b.rising == rising)
            .filter_map(|b| branch_value_at(x, y, b, mid, half).ok())
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let width = match (mean_at(true), mean_at(false)) {
        (Some(r), Some(f)) => Some(r - f),
        _ => None,
    };
    LoopValues {
        samples: x.len(),
        reversals: path.turns().len(),
        x_min,
        x_max,
        y_min,
        y_max,
        work,
        width,
    }
}
