//! Shear and bending: a slope (G, B) as the mean of four branch regressions over a range each
//! side, and loop widths (2HG, 2HG5, 2HB) at ±a from local lines; every reading window ends
//! at least [`TURN_MARGIN`] of the amplitude before the turning point on its side.

use super::{line_fit, samples_in, short, within, KesPath, KesReading};
use crate::kes::path::Branch;

/// A reading window must end at least this fraction of the amplitude before the turning point
/// of its side: at the turn the return branch starts from the loading one (the loop closes
/// there) and the friction on it builds up over the first part of the return, so a width read
/// near the turn is pinched and a slope there mixes both regimes. The standard paths leave
/// 34 % (shear ±8°, last window 5.25°) and 40 % (bending ±2.5 cm⁻¹, last window 1.5 cm⁻¹).
pub const TURN_MARGIN: f64 = 0.1;

/// How a loop test is read: the slope's name and range, the widths' names and positions,
/// the half window of the local lines, the unit of x (KES units).
pub(super) struct LoopReading<const N: usize> {
    pub unit: &'static str,
    pub slope: &'static str,
    pub range: [f64; 2],
    pub widths: [(&'static str, f64); N],
    pub half: f64,
    /// The instrument's amplitude, in `unit`: another one is noted (the values then compare
    /// only with curves of the same amplitude).
    pub standard: f64,
}

/// A turning point further than this fraction from the standard amplitude is another one.
const AMPLITUDE_TOLERANCE: f64 = 0.02;

/// Why a branch or a width could not be read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Miss {
    /// The window ends within the margin of the turning point on its side.
    Margin,
    /// No branch (of the needed direction) reaches the position.
    Reach,
    /// Branches reach it, but at most this many samples lie in the window.
    Samples(usize),
}

/// The amplitude the window ending at `end` (absolute) needs.
fn needed(end: f64) -> f64 {
    end / (1.0 - TURN_MARGIN)
}

/// Whether a window ending at `end` fits a side that turns at `side` (a little slack for
/// values converted SI → KES units).
fn fits(end: f64, side: f64) -> bool {
    needed(end) <= side + 1e-9 * side.abs().max(1.0)
}

/// The value of branch `b` at `at`, from its least-squares line over `at ± half`, if the branch
/// reaches `at`.
pub(super) fn branch_value_at(
    x: &[f64],
    y: &[f64],
    b: &Branch,
    at: f64,
    half: f64,
) -> Result<f64, Miss> {
    let (lo, hi) = b
        .range()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), i| {
            (lo.min(x[i]), hi.max(x[i]))
        });
    if !within(at, lo, hi) {
        return Err(Miss::Reach);
    }
    let samples = samples_in(x, y, b, at - half, at + half);
    let n = samples.clone().count();
    line_fit(samples)
        .map(|(mx, my, s)| my + s * (at - mx))
        .ok_or(Miss::Samples(n))
}

/// Loop width at `at`: the first rising branch minus the first falling branch that read it.
fn width_at(x: &[f64], y: &[f64], bs: &[Branch], at: f64, half: f64) -> Result<f64, Miss> {
    let first = |rising: bool| {
        let mut miss = Miss::Reach;
        for b in bs.iter().filter(|b| b.rising == rising) {
            match branch_value_at(x, y, b, at, half) {
                Ok(v) => return Ok(v),
                Err(Miss::Samples(n)) => {
                    miss = match miss {
                        Miss::Samples(m) => Miss::Samples(m.max(n)),
                        _ => Miss::Samples(n),
                    }
                }
                Err(_) => {}
            }
        }
        Err(miss)
    };
    match (first(true), first(false)) {
        (Ok(up), Ok(down)) => Ok(up - down),
        (Err(Miss::Samples(n)), _) | (_, Err(Miss::Samples(n))) => Err(Miss::Samples(n)),
        _ => Err(Miss::Reach),
    }
}

/// Slopes of the first rising and first falling branch over [lo, hi] and over [−hi, −lo], on
/// the sides whose turning point (`reach`: + side, − side) leaves the margin.
fn slopes(x: &[f64], y: &[f64], bs: &[Branch], lo: f64, hi: f64, reach: [f64; 2]) -> Vec<f64> {
    let mut out = Vec::with_capacity(4);
    for ((a, b), side) in [(lo, hi), (-hi, -lo)].into_iter().zip(reach) {
        if !fits(hi, side) {
            continue;
        }
        for rising in [true, false] {
            if let Some(s) = bs
                .iter()
                .filter(|br| br.rising == rising)
                .find_map(|br| line_fit(samples_in(x, y, br, a, b)).map(|(_, _, s)| s))
            {
                out.push(s);
            }
        }
    }
    out
}

/// Slope over the range on both sides (4 branch regressions averaged) and loop widths at ±a.
pub(super) fn loop_test<const N: usize>(
    path: &KesPath,
    spec: &LoopReading<N>,
    reading: &mut KesReading,
) -> (Option<f64>, [Option<f64>; N]) {
    let (x, y, bs) = (&path.x, &path.y, &path.branches);
    let unit = spec.unit;
    // how far the path goes each side: the turning points (0 on a side it never reaches)
    let reach = [
        x.iter().copied().fold(0.0, f64::max),
        -x.iter().copied().fold(0.0, f64::min),
    ];
    let turns = format!("+{}/-{} {unit}", short(reach[0]), short(reach[1]));
    let standard = spec.standard;
    if reach
        .iter()
        .any(|r| (r - standard).abs() > AMPLITUDE_TOLERANCE * standard)
    {
        reading.notes.push(format!(
            "the path turns at {turns}, not the instrument's +/-{} {unit}: {} and the loop \
             widths compare only with curves of the same amplitude",
            short(standard),
            spec.slope
        ));
    }
    // sides that reach into a window (from `start`) but turn within the margin after its end
    let short_sides = |start: f64, end: f64| {
        reach
            .iter()
            .filter(|&&r| r > start && !fits(end, r))
            .count()
    };
    let margin_text = |what: String, end: f64| {
        format!(
            "{what} must end {} % of the amplitude before the turning point, so it needs an \
             amplitude of at least {} {unit}, and the path turns at {turns}",
            100.0 * TURN_MARGIN,
            short(needed(end))
        )
    };
    let [lo, hi] = spec.range;
    let s = slopes(x, y, bs, lo, hi, reach);
    let slope = if s.is_empty() {
        let reason = if short_sides(lo, hi) > 0 {
            margin_text(format!("the window {lo}..{hi} {unit}"), hi)
        } else {
            format!("no branch has two samples between {lo} and {hi} (or -{hi} and -{lo})")
        };
        reading.missing(spec.slope, reason);
        None
    } else {
        if s.len() < 4 {
            let why = if short_sides(lo, hi) > 0 {
                format!(
                    "; {}",
                    margin_text(format!("the window {lo}..{hi} {unit}"), hi)
                )
            } else {
                String::new()
            };
            reading.notes.push(format!(
                "{} from {} of 4 branch regressions (the path does not cover \
                 +/-{lo}..{hi} both ways{why})",
                spec.slope,
                s.len()
            ));
        }
        Some(s.iter().sum::<f64>() / s.len() as f64)
    };
    let reversal = bs.len() > 1;
    let half = spec.half;
    let mut out = [None; N];
    for (k, &(name, at)) in spec.widths.iter().enumerate() {
        let end = at + half;
        let sides: Vec<Result<f64, Miss>> = [(at, reach[0]), (-at, reach[1])]
            .into_iter()
            .map(|(p, side)| {
                if fits(end, side) {
                    width_at(x, y, bs, p, half)
                } else if side > at - half {
                    Err(Miss::Margin)
                } else {
                    Err(Miss::Reach)
                }
            })
            .collect();
        let widths: Vec<f64> = sides.iter().filter_map(|r| r.ok()).collect();
        let window = format!("{at}+/-{half} {unit}");
        if widths.is_empty() {
            let few = sides.iter().find_map(|r| match r {
                Err(Miss::Samples(n)) => Some(*n),
                _ => None,
            });
            let reason = if !reversal {
                format!(
                    "no reversal: the loop width at +/-{at} needs the return branch as well \
                     as the loading one"
                )
            } else if let Some(n) = few {
                format!(
                    "the loading and return branches reach +/-{at}, but {n} sample(s) of one \
                     of them lie in the reading window {window} (and its mirror) and the local \
                     line needs at least 2: the path is sampled too coarsely"
                )
            } else if sides.contains(&Err(Miss::Margin)) {
                margin_text(format!("the window {window}"), end)
            } else {
                format!("no loading and return branch both reach +/-{at}")
            };
            reading.missing(name, reason);
        } else {
            if widths.len() == 1 {
                let why = if sides.contains(&Err(Miss::Margin)) {
                    format!(
                        ": on the other side {}",
                        margin_text(format!("the window {window}"), end)
                    )
                } else {
                    format!(" (the path misses -{at} or +{at})")
                };
                reading
                    .notes
                    .push(format!("{name} from one side only{why}"));
            }
            let width = widths.iter().sum::<f64>() / widths.len() as f64;
            // the loading branch lies above the return one in a measured loop: a negative
            // width is a path run backwards (rows in reverse order) or a sign flipped
            if width < 0.0 {
                reading.notes.push(format!(
                    "{name} is negative: the return branch lies above the loading one (rows in \
                     reverse order, or the force's sign flipped?)"
                ));
            }
            out[k] = Some(width);
        }
    }
    (slope, out)
}
