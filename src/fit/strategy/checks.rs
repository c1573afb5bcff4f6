//! Curves a fit refuses, and why: too few samples, NaN, flat, a path that never moves or
//! never reverses, a loop run the wrong way (∮F dx < 0), values beyond the fit's arithmetic.

use crate::fit::estimate::CurveRanges;
use crate::kes::Curve;

/// Why a curve cannot be fitted, if it cannot.
pub(super) fn degenerate(curve: &Curve, ranges: &CurveRanges) -> Option<String> {
    if curve.x.len() != curve.y.len() {
        return Some("x and y have different lengths".into());
    }
    if curve.x.len() < 12 {
        return Some(format!(
            "too few samples: {} (at least 12 are needed)",
            curve.x.len()
        ));
    }
    if curve.x.iter().chain(&curve.y).any(|v| !v.is_finite()) {
        return Some("the curve holds NaN or infinite values".into());
    }
    if ranges.y_range() <= 0.0 {
        return Some("flat curve: the force does not change".into());
    }
    if ranges.x_range() <= 0.0 {
        return Some("the path does not move: strain range is zero".into());
    }
    if !crate::kes::Path::new(&curve.x).reverses() {
        return Some(
            "no loop: the path never reverses, friction cannot be separated from the elastic part"
                .into(),
        );
    }
    let (net, along) = work_along(&curve.x, &curve.y);
    if net < -GIVEN_BACK * along {
        return Some(format!(
            "the curve gives back more work than it takes (net work {} % of the work along the \
             path): a loop run the wrong way, which no law with friction follows from rest — \
             rows in reverse order, or the force's sign flipped?",
            crate::friction::short_number((100.0 * net / along * 10.0).round() / 10.0)
        ));
    }
    None
}

/// Net work a path from rest may give back, as a fraction of the work along it (noise on an
/// elastic curve); a law with friction driven from a virgin state takes ∮F dx ≥ 0.
const GIVEN_BACK: f64 = 0.02;

/// ∫F dx along the path (trapezoid) and ∫|F dx|, in the curve's units.
fn work_along(x: &[f64], y: &[f64]) -> (f64, f64) {
    let steps = x.windows(2).zip(y.windows(2));
    steps.fold((0.0, 0.0), |(net, along), (x, y)| {
        let w = 0.5 * (y[0] + y[1]) * (x[1] - x[0]);
        (net + w, along + w.abs())
    })
}

/// Why a fit cannot start on curves whose values are finite but beyond the range of the
/// fit's arithmetic (the initial slope or a bound overflows), with the ranges in SI.
pub(super) fn overflow_reason(ranges: &CurveRanges) -> String {
    use crate::friction::short_number;
    format!(
        "the curve's values are beyond the range of the fit's arithmetic (forces {} to {}, \
         path {} to {}, in SI): its starting law is not finite",
        short_number(ranges.y_min),
        short_number(ranges.y_max),
        short_number(ranges.x_min),
        short_number(ranges.x_max)
    )
}
