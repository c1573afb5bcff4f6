//! The tensile toe/line split from more than one start. The least squares can end in a local
//! minimum on either side of "the curve never leaves the toe" (ε₁ on the largest strain): a
//! fit that ends there is started again with ε₁ inside the strain range, one that ends inside
//! is started again as the toe-only law, and the lowest objective is kept (both laws have the
//! same k in the AIC: ε₁ on its bound counts as a parameter) — unless it is a split whose line
//! the curve does not measure (too few of the loading's samples beyond ε₁, or too little gain
//! over the toe-only law): then the toe-only law is kept, saying why.

use super::super::coords::{Coordinates, Param};
use super::super::estimate::{elastic_estimate_within, EpsOneWindow, EPS1_GRID};
use super::super::path_model::P;
use super::rounds::{self, Refined};
use crate::kes::{Curve, KesTest};

/// The pins of a fit, each with its reason.
pub(super) type Pins = Vec<(Param, String)>;

/// Fits a start (coordinates and pins) to the end: `fit_model`'s rounds.
pub(super) type FitFrom<'f, 'a> = &'f dyn Fn(Coordinates, &mut Pins) -> Refined<'a>;

/// Makes a start's coordinates and pins from its physical parameters.
pub(super) type StartCoords<'f> = &'f dyn Fn(&P) -> (Coordinates, Pins);

/// Pins ε₁' = ε₁ when no specimen's path returns below ε₁ after reaching it (only those
/// samples identify ε₁'), saying so.
pub(super) fn pin_eps1_aligned_unless_returning(
    coords: &mut Coordinates,
    specimens: &[&Curve],
) -> Pins {
    if !coords.kind.elastic.is_traction() {
        return Vec::new();
    }
    let e1 = coords.physical(&coords.q)[Param::Eps1];
    let returns = specimens.iter().any(|c| {
        let reached = c.x.iter().position(|&v| v >= e1);
        reached.is_some_and(|r| c.x[r..].iter().any(|&v| v < 0.9 * e1))
    });
    if returns {
        return Vec::new();
    }
    coords.pin(Param::Eps1Aligned);
    coords.q[Param::Eps1Aligned] = 1.0;
    vec![(
        Param::Eps1Aligned,
        "the path never returns below eps1 after reaching it: eps1_aligned = eps1".into(),
    )]
}

/// The line of a toe/line split measures ε₁ only when it carries at least this share of the
/// first loading's samples (those that reach a new largest strain of their specimen)…
const LINE_SHARE: f64 = 0.10;

/// … and at least this many of them.
const LINE_SAMPLES: usize = 5;

/// … and when the split fits better than the toe-only law by more than this in AIC, counting
/// ε₁ as the one parameter the toe-only law (ε₁ fixed at the largest strain) does not have.
const SPLIT_DELTA_AIC: f64 = 2.0;

/// The samples of the first loading (each a new largest strain of its specimen) and those of
/// them beyond `eps1` (on the line).
fn line_support(specimens: &[&Curve], eps1: f64) -> (usize, usize) {
    let (mut loading, mut line) = (0, 0);
    for c in specimens {
        let mut top = f64::NEG_INFINITY;
        for &x in &c.x {
            if x > top {
                top = x;
                loading += 1;
                line += usize::from(x > eps1);
            }
        }
    }
    (loading, line)
}

/// Why a split with ε₁ inside the strains does not measure ε₁ (None: it does): its line
/// carries too few of the first loading's samples, or it beats the toe-only law (objective
/// `toe_only`, when one was fitted) by too little. `samples`: N of the AIC.
fn split_not_identified(
    specimens: &[&Curve],
    eps1: f64,
    objective: f64,
    toe_only: Option<f64>,
    samples: usize,
) -> Option<String> {
    let (loading, line) = line_support(specimens, eps1);
    let share = line as f64 / loading.max(1) as f64;
    if line < LINE_SAMPLES || share < LINE_SHARE {
        return Some(format!(
            "its line carries {line} of the first loading's {loading} samples ({:.1} %; a line needs {:.0} % and {LINE_SAMPLES})",
            100.0 * share,
            100.0 * LINE_SHARE
        ));
    }
    let toe_only = toe_only?;
    let delta = samples as f64 * (toe_only / objective).ln() - 2.0;
    (delta.is_nan() || delta <= SPLIT_DELTA_AIC).then(|| {
        format!(
            "it fits better than the toe-only law by ΔAIC = {delta:.1} only, counting eps1 as a parameter (a line needs more than {SPLIT_DELTA_AIC:.0})"
        )
    })
}

/// One start of the toe/line split and where its fit ended.
#[derive(Debug, Clone)]
pub(super) struct Try {
    /// Where it started, in the report's words.
    pub start: String,
    /// ε₁ where it ended.
    pub eps1: f64,
    /// Whether it ended with ε₁ on the largest strain (the toe-only law).
    pub toe_only: bool,
    /// The RMS of its scaled residuals on every sample (a fraction); None: stopped as unable
    /// to win against the best candidate so far.
    pub nrmse: Option<f64>,
    /// The start whose fit is reported.
    pub kept: bool,
    /// Why its ε₁ inside the strains is not measured, if it is not ([`split_not_identified`]).
    pub not_identified: Option<String>,
}

impl Try {
    /// "start: ended on the largest strain (NRMSE 0.331 % on the samples fitted)".
    pub(super) fn describe(&self) -> String {
        let at = if self.toe_only {
            "on the largest strain".to_string()
        } else {
            format!("at eps1 = {:.4e}", self.eps1)
        };
        let kept = if self.kept { ", kept" } else { "" };
        let why = self
            .not_identified
            .as_ref()
            .map_or(String::new(), |w| format!(", not a measured eps1: {w}"));
        match self.nrmse {
            Some(n) => format!(
                "{}: ended {at} (NRMSE {:.4} %{kept}){why}",
                self.start,
                100.0 * n
            ),
            None => format!(
                "{}: stopped {at}, where it could not beat the best law so far",
                self.start
            ),
        }
    }
}

/// Whether ε₁ is pinned on its upper bound (the largest strain).
fn eps1_on_top(pinned: &[(Param, String)]) -> bool {
    pinned
        .iter()
        .any(|(j, why)| *j == Param::Eps1 && why.starts_with("at its upper"))
}

/// The best of the toe/line splits started from `first` (the fit from the curve's estimate
/// `p0`) and from other starts, each fitted by `fit_from`: ε₁ in the first half and in 50–85 % of the largest strain when
/// `first` ended on it, the toe-only law when it ended inside. A split with ε₁ inside whose
/// line is not identified ([`split_not_identified`]) gives way to the toe-only law, and its
/// try says why. `start_coords` makes a start's coordinates and pins from its physical
/// parameters. The work of every start is counted.
pub(super) fn best_split<'a>(
    first: Refined<'a>,
    pinned: Pins,
    p0: &P,
    specimens: &[&Curve],
    test: KesTest,
    fit_from: FitFrom<'_, 'a>,
    start_coords: StartCoords<'_>,
) -> (Refined<'a>, Pins, Vec<Try>) {
    // a candidate stopped as unable to win is not started again
    if first.aic_floor.is_some() {
        return (first, pinned, Vec::new());
    }
    let kind = first.problem.coords.kind;
    let top = |c: &Curve| c.x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // the specimen that reaches the largest strain shows the most of the toe/line split
    let Some(curve) = specimens.iter().max_by(|a, b| top(a).total_cmp(&top(b))) else {
        return (first, pinned, Vec::new());
    };
    let first_on_top = eps1_on_top(&pinned);
    let half = EPS1_GRID / 2;
    let line_top = EPS1_GRID * 85 / 100;
    let starts: Vec<(EpsOneWindow, &str)> = if first_on_top {
        vec![
            (
                EpsOneWindow(1, half),
                "started with eps1 in the first half of the strain range",
            ),
            (
                EpsOneWindow(half + 1, line_top),
                "started with eps1 at 50-85 % of the largest strain",
            ),
        ]
    } else {
        vec![(
            EpsOneWindow(EPS1_GRID, EPS1_GRID),
            "the toe-only law (eps1 on the largest strain)",
        )]
    };
    let ended = |r: &Refined<'_>, pinned: &[(Param, String)], start: &str| {
        let coords = &r.problem.coords;
        let objective = rounds::objective(&r.problem);
        let rows = r.problem.total_rows().max(1) as f64;
        let nrmse = r.aic_floor.is_none().then(|| (objective / rows).sqrt());
        let t = Try {
            start: start.to_string(),
            eps1: coords.physical(&coords.q)[Param::Eps1],
            toe_only: eps1_on_top(pinned),
            nrmse,
            kept: false,
            not_identified: None,
        };
        (t, objective)
    };
    let (t, objective) = ended(&first, &pinned, "eps1 free from the curve's estimate");
    let mut tries = vec![t];
    let (mut evaluations, mut iterations) = (first.evaluations, first.iterations);
    // every start's fit, beside its entry in `tries`, with its objective
    let mut fits = vec![(first, pinned, objective)];
    for (window, start) in starts {
        let e = elastic_estimate_within(kind.elastic, &curve.x, &curve.y, window);
        let mut p = *p0;
        for j in [Param::K, Param::Eps1, Param::F1, Param::Eps1Aligned] {
            p[j] = e[j];
        }
        let (mut coords, mut pinned) = start_coords(&p);
        if !coords.start_is_finite() {
            continue;
        }
        if window.0 == EPS1_GRID {
            rounds::pin_at_bounds(&mut coords, &[(Param::Eps1, true)], &mut pinned, test);
        }
        let r = fit_from(coords, &mut pinned);
        evaluations += r.evaluations;
        iterations += r.iterations;
        let (t, objective) = ended(&r, &pinned, start);
        tries.push(t);
        fits.push((r, pinned, objective));
    }
    // the lowest objective of the starts fitted to the end (the first always is), and the
    // lowest of those that ended as the toe-only law
    let lowest = |toe_only: bool| {
        (0..tries.len())
            .filter(|&i| tries[i].nrmse.is_some() && (!toe_only || tries[i].toe_only))
            .min_by(|&a, &b| fits[a].2.total_cmp(&fits[b].2))
    };
    let mut kept = lowest(false).unwrap_or(0);
    // a split whose line the curve does not measure is not reported: the toe-only law is
    if !tries[kept].toe_only {
        let toe_only = lowest(true);
        let samples = specimens.iter().map(|c| c.x.len()).sum();
        let why = split_not_identified(
            specimens,
            tries[kept].eps1,
            fits[kept].2,
            toe_only.map(|i| fits[i].2),
            samples,
        );
        if let Some(why) = why {
            tries[kept].not_identified = Some(why);
            // the toe-only start fitted to the end, else one stopped as unable to win, else
            // the toe-only law fitted from where the split ended
            let stopped = (0..tries.len()).find(|&i| tries[i].toe_only);
            kept = match toe_only.or(stopped) {
                Some(i) => i,
                None => {
                    let mut coords = fits[kept].0.problem.coords.clone();
                    let mut pinned = fits[kept].1.clone();
                    pinned.retain(|(j, _)| *j != Param::Eps1);
                    rounds::pin_at_bounds(&mut coords, &[(Param::Eps1, true)], &mut pinned, test);
                    let r = fit_from(coords, &mut pinned);
                    evaluations += r.evaluations;
                    iterations += r.iterations;
                    let (t, objective) = ended(&r, &pinned, "the toe-only law from where it ended");
                    tries.push(t);
                    fits.push((r, pinned, objective));
                    tries.len() - 1
                }
            };
        }
    }
    tries[kept].kept = true;
    let (mut refined, pinned, _) = fits.swap_remove(kept);
    refined.evaluations = evaluations;
    refined.iterations = iterations;
    (refined, pinned, tries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kes::Direction;

    /// A tensile path 0 → 1 → 0 in steps of 0.01 (101 loading samples, 201 in all).
    fn up_and_down() -> Curve {
        let up = (0..=100).map(|i| f64::from(i) / 100.0);
        let down = (0..100).rev().map(|i| f64::from(i) / 100.0);
        let x: Vec<f64> = up.chain(down).collect();
        Curve {
            fabric: String::new(),
            test: KesTest::Tensile,
            direction: Direction::Warp,
            y: x.clone(),
            x,
            metadata: Default::default(),
            source: None,
            sha256: None,
        }
    }

    #[test]
    fn a_split_needs_a_tenth_of_the_loading_and_two_aic_points_over_the_toe_only_law() {
        let c = up_and_down();
        let n = c.x.len();
        // the loading is the 101 samples that reach a new largest strain; the unloading
        // samples beyond eps1 are not on the line's loading
        assert_eq!(line_support(&[&c], 0.955), (101, 5));
        assert_eq!(line_support(&[&c, &c], 0.855), (202, 30));
        // 5 of 101 (5 %) on the line: not measured, whatever the toe-only law gives
        let why = split_not_identified(&[&c], 0.955, 1.0, Some(10.0), n);
        assert!(why.is_some_and(|w| w.contains("carries 5 of the first loading's 101")));
        // 15 of 101: measured when it beats the toe-only law by more than 2 AIC points with
        // eps1 counted, N ln(RSS_toe/RSS) − 2 > 2; unknown without a toe-only fit
        assert_eq!(split_not_identified(&[&c], 0.855, 1.0, None, n), None);
        let toe_only = |delta: f64| ((delta + 2.0) / n as f64).exp();
        assert_eq!(
            split_not_identified(&[&c], 0.855, 1.0, Some(toe_only(2.5)), n),
            None
        );
        let why = split_not_identified(&[&c], 0.855, 1.0, Some(toe_only(1.5)), n);
        assert!(why.is_some_and(|w| w.contains("ΔAIC = 1.5 only")));
    }
}
