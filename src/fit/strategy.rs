//! The fitting strategy: every candidate law (model × μ × toe) fitted, pinning coordinates at
//! a bound or not identified, and the candidate with the lowest AIC = n ln(RSS/n) + 2k kept.

use std::time::Instant;

use super::coords::{law_kind, Coordinates, Param};
use super::estimate::{initial_estimate, CurveRanges};
use super::options::{FitModel, FitOptions, MuMode, OffsetMode, ProgressSink, ToeChoice};
use super::path_model::{ElasticKind, LawKind, ShapeKind};
use super::problem::{run_lm, PathProblem, Termination};
use super::report::{self, CurveFit, FitStatus, ValuesSideBySide};
use super::thinning::{thinned_path, FIT_SAMPLES};
use crate::kes::{Curve, KesTest};

/// A coordinate closer than this fraction of its span to a bound after a run is pinned there.
/// (Wider margins pin coordinates that are merely passing by and wreck the fit.)
const AT_BOUND: f64 = 0.005;

/// Why a curve cannot be fitted, if it cannot.
fn degenerate(curve: &Curve, ranges: &CurveRanges) -> Option<String> {
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

/// Relative standard error above which a coordinate is not identified: against its bound
/// span for the dimensionless ones, against its value for the others.
fn relative_error(coords: &Coordinates, j: Param, se: f64) -> f64 {
    match j {
        Param::Mu
        | Param::Eta
        | Param::Ratio
        | Param::F1
        | Param::Eps1Aligned
        | Param::Offset
        | Param::Alpha => se / (coords.hi[j] - coords.lo[j]),
        _ => se / coords.q[j].abs().max(1e-300),
    }
}

/// Fits one friction model (not `Auto`) with μ free or zero.
fn fit_model(
    curve: &Curve,
    model: FitModel,
    mu: MuMode,
    power: bool,
    options: &FitOptions,
    progress: ProgressSink<'_>,
) -> CurveFit {
    let start = Instant::now();
    let ranges = CurveRanges::of(&curve.x, &curve.y);
    let (shape, alpha_free) = match model {
        FitModel::Bs2 => (ShapeKind::Bs2, false),
        FitModel::DahlAlpha => (ShapeKind::Dahl, true),
        _ => (ShapeKind::Dahl, false),
    };
    let kind = law_kind(curve.test, shape, power);
    let label = model_label(model, mu, kind);
    let p0 = initial_estimate(kind, &curve.x, &curve.y);
    let mut coords = Coordinates::new(
        kind,
        curve.test,
        &p0,
        &ranges,
        alpha_free,
        mu == MuMode::Free,
        options.offset == OffsetMode::Fit,
    );
    let mut pinned: Vec<(Param, String)> = Vec::new();
    // ε₁' is identified only by samples below ε₁ after the strain has reached it
    if kind.elastic.is_traction() {
        let e1 = coords.physical(&coords.q)[Param::Eps1];
        let reached = curve.x.iter().position(|&v| v >= e1);
        let returns = reached.is_some_and(|r| curve.x[r..].iter().any(|&v| v < 0.9 * e1));
        if !returns {
            coords.pin(Param::Eps1Aligned);
            coords.q[Param::Eps1Aligned] = 1.0;
            pinned.push((
                Param::Eps1Aligned,
                "the path never returns below eps1 after reaching it: eps1_aligned = eps1".into(),
            ));
        }
    }
    let (x_fit, y_fit) = thinned_path(&curve.x, &curve.y, FIT_SAMPLES.max(curve.x.len() / 8));
    // standard errors of the thinned fit, scaled to what every sample would give
    let thinning = (x_fit.len() as f64 / curve.x.len() as f64).sqrt();
    let mut evaluations = 0;
    let mut iterations = 0;
    let mut termination;
    let y_range = ranges.y_range();
    let mut problem;
    let mut round = 0;
    loop {
        round += 1;
        // a short first run: coordinates heading for a bound are pinned there (the sin map
        // converges only linearly at a bound), then the rest is refined
        let budget = if round == 1 {
            (2 * (coords.free.len() + 1)).min(options.max_evaluations)
        } else {
            options.max_evaluations
        };
        let (pr, term, evals) = run_lm(
            coords.clone(),
            &x_fit,
            &y_fit,
            y_range,
            budget,
            Some((progress, label.as_str())),
        );
        problem = pr;
        termination = term;
        evaluations += evals;
        iterations += problem.jacobian_evaluations.get();
        coords = problem.coords.clone();
        if round > 6 || coords.free.len() <= 1 {
            break;
        }
        let at_bound: Vec<(Param, bool)> = coords
            .free
            .iter()
            .filter_map(|&j| {
                let t = coords.position(j);
                if t < AT_BOUND {
                    Some((j, false))
                } else if t > 1.0 - AT_BOUND {
                    Some((j, true))
                } else {
                    None
                }
            })
            .collect();
        if !at_bound.is_empty() {
            for (j, upper) in at_bound {
                coords.pin(j);
                coords.q[j] = if upper { coords.hi[j] } else { coords.lo[j] };
                let name = j.name(curve.test);
                let shown = coords.physical(&coords.q)[j];
                pinned.push((
                    j,
                    format!(
                        "at its {} bound ({name} = {shown:.6e}): the curve asks for a value beyond the physical range",
                        if upper { "upper" } else { "lower" }
                    ),
                ));
            }
            continue;
        }
        if round == 1 && termination == Termination::LostPatience {
            continue;
        }
        // pin the worst-determined coordinate and refit
        let worst = problem.covariance().and_then(|cov| {
            coords
                .free
                .iter()
                .enumerate()
                .filter_map(|(c, &j)| {
                    let se = cov[(c, c)].max(0.0).sqrt();
                    let relative = relative_error(&coords, j, thinning * se);
                    (relative > 1.0 || !relative.is_finite()).then_some((j, relative))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
        });
        match worst {
            Some((j, rel)) => {
                coords.pin(j);
                pinned.push((
                    j,
                    format!(
                        "not identified by this curve (standard error {:.0} % of its scale): pinned at its value",
                        rel * 100.0
                    ),
                ));
            }
            None => break,
        }
    }
    // the report (residuals, NRMSE, standard errors) is made on every sample
    let full = PathProblem::new(problem.coords.clone(), &curve.x, &curve.y, y_range);
    let solution = full.solution(termination, evaluations, iterations);
    report::build(curve, &solution, label, &pinned, start.elapsed())
}

fn model_label(model: FitModel, mu: MuMode, kind: LawKind) -> String {
    let base = match model {
        FitModel::Dahl | FitModel::Auto => "dahl",
        FitModel::DahlAlpha => "dahl-alpha",
        FitModel::Bs2 => "bs2",
    };
    let toe = if kind.elastic == ElasticKind::PowerToeLine {
        ", power toe"
    } else {
        ""
    };
    match mu {
        MuMode::Free => format!("{base}+mu{toe}"),
        MuMode::Zero => format!("{base}{toe}"),
    }
}

/// Fits the law of the curve's test to the curve. Degenerate input gives a report whose
/// status says why, never a panic. `Auto` fits `dahl`, `dahl+mu`, `bs2` and `bs2+mu` and keeps
/// the lowest AIC = n ln(RSS/n) + 2k (k free parameters), saying why.
pub fn fit_curve(curve: &Curve, options: &FitOptions) -> CurveFit {
    fit_curve_with_progress(curve, options, &|_| {})
}

/// [`fit_curve`], reporting each iteration to `progress`.
pub fn fit_curve_with_progress(
    curve: &Curve,
    options: &FitOptions,
    progress: ProgressSink<'_>,
) -> CurveFit {
    let ranges = CurveRanges::of(&curve.x, &curve.y);
    if let Some(reason) = degenerate(curve, &ranges) {
        return CurveFit::failed(curve, reason);
    }
    // a generic loop's x has an arbitrary origin: fit about the middle of its range (the
    // elastic part k(x − x_mid) and the load-dependent level need a physical origin)
    let centred;
    let curve = if curve.test == KesTest::Loop {
        let mid = 0.5 * (ranges.x_min + ranges.x_max);
        let mut c = curve.clone();
        c.x.iter_mut().for_each(|v| *v -= mid);
        c.metadata.insert("x_origin_si".into(), format!("{mid:e}"));
        centred = c;
        &centred
    } else {
        curve
    };
    let toes: &[bool] = match (curve.test, options.toe) {
        (KesTest::Tensile, ToeChoice::Auto) => &[false, true],
        (KesTest::Tensile, ToeChoice::Power) => &[true],
        _ => &[false],
    };
    let (models, mus): (&[FitModel], &[MuMode]) = if options.model == FitModel::Auto {
        (
            &[FitModel::Dahl, FitModel::Bs2],
            &[MuMode::Zero, MuMode::Free],
        )
    } else {
        (
            std::slice::from_ref(&options.model),
            std::slice::from_ref(&options.mu),
        )
    };
    let start = Instant::now();
    let mut candidates: Vec<CurveFit> = Vec::new();
    for &model in models {
        for &mu in mus {
            for &power in toes {
                candidates.push(fit_model(curve, model, mu, power, options, progress));
            }
        }
    }
    if candidates.len() == 1 {
        return refuse_unphysical(curve, candidates.remove(0));
    }
    let summary: Vec<String> = candidates
        .iter()
        .map(|c| format!("{} {:.1} (NRMSE {:.3} %)", c.model, c.aic, 100.0 * c.nrmse))
        .collect();
    let best = candidates
        .into_iter()
        .filter(|c| matches!(c.status, FitStatus::Fitted))
        .min_by(|a, b| a.aic.total_cmp(&b.aic));
    match best {
        Some(mut b) => {
            b.selection = Some(format!(
                "lowest AIC = n ln(RSS/n) + 2k among {}",
                summary.join(", ")
            ));
            b.elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
            refuse_unphysical(curve, b)
        }
        None => CurveFit::failed(curve, "no model could be fitted".into()),
    }
}

/// A fit whose law is not valid or whose NRMSE is not finite is no fit: its report says why.
/// A fit kept gets its KES values beside the measured ones.
fn refuse_unphysical(curve: &Curve, mut fit: CurveFit) -> CurveFit {
    if !fit.is_fitted() {
        return fit;
    }
    if !fit.nrmse.is_finite() {
        return CurveFit::failed(curve, "the fitted law gives non-finite forces".into());
    }
    if let Some(Err(e)) = fit.law().map(|l| l.validate()) {
        return CurveFit::failed(curve, format!("the fitted law is not valid: {e}"));
    }
    fit.values = fit
        .fitted_law()
        .map(|law| ValuesSideBySide::of(curve, &law));
    fit
}
