//! The tensile toe/line split from more than one start. The least squares can end in a local
//! minimum on either side of "the curve never leaves the toe" (ε₁ on the largest strain): a
//! fit that ends there is started again with ε₁ inside the strain range, one that ends inside
//! is started again as the toe-only law, and the lowest objective is kept (both laws have the
//! same k in the AIC: ε₁ on its bound counts as a parameter).

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
        match self.nrmse {
            Some(n) => format!(
                "{}: ended {at} (NRMSE {:.4} %{kept})",
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
/// `first` ended on it, the toe-only law when it ended inside. `start_coords` makes a start's
/// coordinates and pins from its physical parameters. The work of every start is counted.
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
        };
        (t, objective)
    };
    let (t, mut best_objective) = ended(&first, &pinned, "eps1 free from the curve's estimate");
    let mut tries = vec![t];
    let (mut evaluations, mut iterations) = (first.evaluations, first.iterations);
    let mut best = (first, pinned, 0);
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
        let better = t.nrmse.is_some() && objective < best_objective;
        tries.push(t);
        if better {
            best_objective = objective;
            best = (r, pinned, tries.len() - 1);
        }
    }
    let (mut refined, pinned, kept) = best;
    tries[kept].kept = true;
    refined.evaluations = evaluations;
    refined.iterations = iterations;
    (refined, pinned, tries)
}
