//! Curves a fit refuses, and why: too few samples, NaN, flat, a path that never moves or
//! never reverses, values beyond the fit's arithmetic.

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
    None
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
