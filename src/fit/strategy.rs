//! The fitting strategy: every candidate law (model × μ × toe) fitted, pinning coordinates at
//! a bound or not identified, and the candidate with the lowest AIC = n ln(RSS/n) + 2k kept.

use std::time::Instant;

use super::coords::{law_kind, Coordinates, Param};
use super::estimate::CurveRanges;
use super::options::{FitModel, FitOptions, MuMode, OffsetMode, ProgressSink, ToeChoice};
use super::path_model::{ElasticKind, LawKind, ShapeKind, P};
use super::problem::{PathProblem, Segment, Solution, ValueTargets};
use super::report::{self, CurveFit, FitStatus, ValuesSideBySide};
use super::thinning::{thinned_path, FIT_SAMPLES};
use crate::kes::{Curve, KesTest};

mod alpha;
mod bounds;
mod checks;
mod estimates;
mod rounds;
mod starts;
use bounds::explain_bounds;
use checks::{degenerate, overflow_reason};
use estimates::{joint_estimate, model_estimate};
use rounds::Leader;

/// Where a candidate's fit starts: its initial estimate (None: from the curve's shape) and,
/// for `auto`, the candidate it must be able to beat to be fitted to the end.
#[derive(Debug, Clone, Copy, Default)]
struct Start {
    estimate: Option<P>,
    leader: Option<Leader>,
}

/// The label suffix of a tensile law whose toe spans the whole measured loading.
const TOE_ONLY: &str = ", toe only";

/// The ranges of every sample of every specimen together (the bounds of the coordinates).
fn joint_ranges(specimens: &[&Curve]) -> CurveRanges {
    let mut all = CurveRanges::of(&[], &[]);
    for c in specimens {
        let r = CurveRanges::of(&c.x, &c.y);
        all.x_min = all.x_min.min(r.x_min);
        all.x_max = all.x_max.max(r.x_max);
        all.y_min = all.y_min.min(r.y_min);
        all.y_max = all.y_max.max(r.y_max);
    }
    all
}

/// The measured KES values a value-weighted fit pulls toward (the specimens' mean); None
/// without `--weight-values` or for a generic loop.
fn value_targets(specimens: &[&Curve], options: &FitOptions) -> Option<ValueTargets> {
    let test = specimens.first()?.test;
    if options.weight_values <= 0.0 || test == KesTest::Loop {
        return None;
    }
    let measured = report::measured_values(specimens);
    let (names, measured) = measured.iter().filter(|(_, v)| *v != 0.0).unzip();
    Some(ValueTargets {
        test,
        names,
        measured,
        weight: options.weight_values,
        specimens: specimens.iter().map(|&c| c.clone()).collect(),
    })
}

/// The law kind of `model` for the test (and whether α is free).
fn model_kind(test: KesTest, model: FitModel, power: bool) -> (LawKind, bool) {
    let (shape, alpha_free) = match model {
        FitModel::Bs2 => (ShapeKind::Bs2, false),
        FitModel::DahlAlpha => (ShapeKind::Dahl, true),
        _ => (ShapeKind::Dahl, false),
    };
    (law_kind(test, shape, power), alpha_free)
}

/// Each specimen thinned on its own (every turning point kept), with its own force range
/// (the scale of its residuals).
fn thin(specimens: &[&Curve]) -> Vec<(Vec<f64>, Vec<f64>, f64)> {
    specimens
        .iter()
        .map(|c| {
            let (x, y) = thinned_path(&c.x, &c.y, FIT_SAMPLES.max(c.x.len() / 8));
            (x, y, CurveRanges::of(&c.x, &c.y).y_range())
        })
        .collect()
}

fn segments_of(thinned: &[(Vec<f64>, Vec<f64>, f64)]) -> Vec<Segment<'_>> {
    thinned
        .iter()
        .map(|(x, y, r)| Segment { x, y, y_range: *r })
        .collect()
}

/// Fits one friction model (not `Auto`) with μ free or zero to every specimen jointly (one
/// specimen: the curve alone).
fn fit_model(
    specimens: &[&Curve],
    model: FitModel,
    mu: MuMode,
    power: bool,
    options: &FitOptions,
    progress: ProgressSink<'_>,
    start: Start,
) -> CurveFit {
    let started = Instant::now();
    let test = specimens[0].test;
    let ranges = joint_ranges(specimens);
    let (kind, alpha_free) = model_kind(test, model, power);
    let label = model_label(model, mu, kind);
    let thinned = thin(specimens);
    let segments = segments_of(&thinned);
    let p0 = start
        .estimate
        .unwrap_or_else(|| joint_estimate(kind, specimens, &segments));
    // a start's coordinates and its pins, from its physical parameters
    let start_coords = |p: &P| {
        let mut coords = Coordinates::new(
            kind,
            test,
            p,
            &ranges,
            alpha_free,
            mu == MuMode::Free,
            options.offset == OffsetMode::Fit,
        );
        let pinned = starts::pin_eps1_aligned_unless_returning(&mut coords, specimens);
        (coords, pinned)
    };
    let (coords, mut pinned) = start_coords(&p0);
    if !coords.start_is_finite() {
        return CurveFit::failed_specimens(specimens, overflow_reason(&ranges));
    }
    let targets = value_targets(specimens, options);
    // the thinned path gives the start, every sample the estimate: each candidate is refined
    // on the thinned path, then on every sample from there (docs/fitting.md, step 2)
    let full_segments: Vec<Segment<'_>> = specimens
        .iter()
        .zip(&thinned)
        .map(|(c, t)| Segment {
            x: &c.x,
            y: &c.y,
            y_range: t.2,
        })
        .collect();
    let all_samples: usize = specimens.iter().map(|c| c.x.len()).sum();
    let kept: usize = thinned.iter().map(|t| t.0.len()).sum();
    let runs = rounds::Runs {
        segments: &segments,
        targets: &targets,
        max_evaluations: options.max_evaluations,
        progress,
        label: label.as_str(),
        test,
        thinning: (kept as f64 / all_samples as f64).sqrt(),
        // the AIC of a value-weighted fit is not on the curve's RSS alone: no early stop
        leader: start.leader.filter(|_| targets.is_none()),
    };
    let every_sample = rounds::Runs {
        segments: &full_segments,
        thinning: 1.0,
        ..runs
    };
    let fit_from = |coords: Coordinates, pinned: &mut Vec<(Param, String)>| {
        let thin = rounds::refine(coords, &runs, pinned);
        if thin.aic_floor.is_some() {
            return thin;
        }
        let mut all = rounds::refine(thin.problem.coords.clone(), &every_sample, pinned);
        all.evaluations += thin.evaluations;
        all.iterations += thin.iterations;
        all
    };
    let first = fit_from(coords, &mut pinned);
    // the tensile toe/line split from more than one start, the lowest objective kept
    let (refined, mut pinned, tries) = if kind.elastic.is_traction() {
        starts::best_split(
            first,
            pinned,
            &p0,
            specimens,
            test,
            &fit_from,
            &start_coords,
        )
    } else {
        (first, pinned, Vec::new())
    };
    let rounds::Refined {
        problem,
        termination,
        evaluations,
        iterations,
        aic_floor,
    } = refined;
    let coords = problem.coords.clone();
    // a coordinate on a bound that is a named value of the law is that simpler law, which
    // the last rounds fitted with it fixed there: the simpler law is the one reported, with
    // what was checked (the free coordinate went there; ε₁: every start of the toe/line split)
    let mut name = label.clone();
    let eps1 = coords.physical(&coords.q)[Param::Eps1];
    for (j, why) in pinned.iter_mut() {
        if !why.starts_with("at its upper") {
            continue;
        }
        match j {
            // the curve never leaves the toe: the toe-only law
            Param::Eps1 => {
                let tried: Vec<String> = tries.iter().map(starts::Try::describe).collect();
                let choice = if tries.iter().any(|t| t.not_identified.is_some()) {
                    "the toe/line split is not identified by this curve, the law whose toe spans the whole loading is reported"
                } else {
                    "of the starts tried, the law whose toe spans the whole loading fits the samples best"
                };
                *why = format!(
                    "fixed by the law (toe only): eps1 = the largest strain measured ({eps1:.4e}): {choice} ({}); k_t and f1 are the slope and the force of the elastic part there, beyond it the law is an extrapolation along a line of slope k_t",
                    tried.join("; ")
                );
                name.push_str(TOE_ONLY);
            }
            // the toe after the first loading is the virgin one: ε₁' = ε₁
            Param::Eps1Aligned => {
                *why = format!(
                    "fixed by the law: eps1_aligned = eps1 ({eps1:.4e}), the toe after the first loading is the virgin one (no crimp set by the first loading); the fit with eps1_aligned free went to this value (within 0.5 % of its range, or heading there and fitting at least as well on it)"
                );
            }
            _ => {}
        }
    }
    // the report (residuals, NRMSE, standard errors) is made on every sample, where the fit ended
    let full = PathProblem::joint(problem.coords.clone(), full_segments.clone())
        .with_values(targets.clone());
    // a candidate stopped as unable to win is never reported: no covariance for it
    let solution = match aic_floor {
        Some(_) => Solution {
            params: full.coords.physical(&full.coords.q),
            covariance: None,
            with_pins_freed: None,
            coords: full.coords.clone(),
            termination,
            evaluations,
            iterations,
        },
        None => Solution {
            with_pins_freed: rounds::pins_freed(&full.coords, &pinned, &full_segments, &targets),
            ..full.solution(termination, evaluations, iterations)
        },
    };
    let mut fit = report::build(
        specimens,
        &solution,
        name,
        &pinned,
        started.elapsed(),
        targets.as_ref(),
    );
    if let Some(floor) = aic_floor {
        fit.set_aic_floor(floor);
    }
    fit
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
    fit_specimens_with_progress(&[curve], options, progress)
}

/// Fits ONE law to several specimens of one curve (same test; `kes::replicate_groups`) jointly:
/// each specimen driven from a virgin state along its own path, the residuals of all of them
/// (each in fractions of its own force range) in one least-squares problem. The report's
/// NRMSE is the pooled one (RMS of every specimen's scaled residuals) and `specimens` gives
/// each specimen's own. One specimen: [`fit_curve`].
pub fn fit_specimens(specimens: &[&Curve], options: &FitOptions) -> CurveFit {
    fit_specimens_with_progress(specimens, options, &|_| {})
}

/// [`fit_specimens`], reporting each iteration to `progress`.
pub fn fit_specimens_with_progress(
    specimens: &[&Curve],
    options: &FitOptions,
    progress: ProgressSink<'_>,
) -> CurveFit {
    let Some(&first) = specimens.first() else {
        return CurveFit::failed_specimens(&[], "no curve to fit".into());
    };
    if let Some(other) = specimens.iter().find(|c| c.test != first.test) {
        return CurveFit::failed_specimens(
            specimens,
            format!(
                "specimens of different tests ({} and {}) cannot share one law",
                first.test, other.test
            ),
        );
    }
    if !first.test.has_connector_law() {
        return CurveFit::failed_specimens(
            specimens,
            format!(
                "a {} curve has no connector law to fit (its KES values: `kestrel values`)",
                first.test
            ),
        );
    }
    for c in specimens {
        if let Some(reason) = degenerate(c, &CurveRanges::of(&c.x, &c.y)) {
            let reason = if specimens.len() > 1 {
                format!("specimen {}: {reason}", c.path_name())
            } else {
                reason
            };
            return CurveFit::failed_specimens(specimens, reason);
        }
    }
    // a generic loop's x has an arbitrary origin: fit about the middle of its range (the
    // elastic part k(x − x_mid) and the load-dependent level need a physical origin)
    let centred: Vec<Curve> = if first.test == KesTest::Loop {
        specimens
            .iter()
            .map(|&curve| {
                let ranges = CurveRanges::of(&curve.x, &curve.y);
                let mid = 0.5 * (ranges.x_min + ranges.x_max);
                let mut c = curve.clone();
                c.x.iter_mut().for_each(|v| *v -= mid);
                c.metadata.insert("x_origin_si".into(), format!("{mid:e}"));
                c
            })
            .collect()
    } else {
        Vec::new()
    };
    let centred_refs: Vec<&Curve> = centred.iter().collect();
    let specimens = if centred.is_empty() {
        specimens
    } else {
        &centred_refs[..]
    };
    let curve = first;
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
    // the estimate depends on the law's kind only: μ free and μ = 0 share it, and the
    // friction shapes of one elastic law share its elastic part
    let mut elastic = Vec::new();
    let estimates: Vec<(FitModel, bool, P)> = models
        .iter()
        .flat_map(|&m| toes.iter().map(move |&t| (m, t)))
        .map(|(m, t)| (m, t, model_estimate(specimens, m, t, &mut elastic)))
        .collect();
    // candidates in listing order (the order of the report and of a full tie)
    let listed: Vec<(FitModel, MuMode, bool)> = models
        .iter()
        .flat_map(|&m| {
            mus.iter()
                .flat_map(move |&u| toes.iter().map(move |&t| (m, u, t)))
        })
        .collect();
    // `auto` fits the candidates with μ free first: the laws with μ = 0 then stop as soon as
    // even their linearised optimum cannot beat the best of them (rounds::Leader)
    let mut order: Vec<usize> = (0..listed.len()).collect();
    if options.model == FitModel::Auto {
        order.sort_by_key(|&i| listed[i].1 != MuMode::Free);
    }
    let mut fitted_in_order: Vec<Option<CurveFit>> = vec![None; listed.len()];
    for i in order {
        let (model, mu, power) = listed[i];
        let estimate = estimates
            .iter()
            .find(|e| e.0 == model && e.1 == power)
            .map(|e| e.2);
        let leader = if options.model == FitModel::Auto {
            leader_of(fitted_in_order.iter().flatten())
        } else {
            None
        };
        let start = Start { estimate, leader };
        fitted_in_order[i] = Some(fit_model(
            specimens, model, mu, power, options, progress, start,
        ));
    }
    let mut candidates: Vec<CurveFit> = fitted_in_order.into_iter().flatten().collect();
    // a second-order law with f2/f1 = 0 is a first-order one of length eta·eps_f: that Dahl
    // law is fitted from it, so the simpler law competes from the same optimum
    if options.model == FitModel::Auto {
        let reduced: Vec<CurveFit> = candidates
            .iter()
            .filter(|c| c.is_fitted() && c.aic_floor().is_none() && c.model.starts_with("bs2"))
            .filter(|c| {
                c.params.iter().any(|p| {
                    p.param == Param::Ratio
                        && p.pinned
                            .as_deref()
                            .is_some_and(|w| w.starts_with("at its lower"))
                })
            })
            .map(|c| {
                let mut p = c.physical();
                p[Param::EpsF] *= p[Param::Eta];
                p[Param::Alpha] = 1.0;
                let mu = if c.model.contains("+mu") {
                    MuMode::Free
                } else {
                    MuMode::Zero
                };
                let power = c.model.contains("power toe");
                let start = Start {
                    estimate: Some(p),
                    leader: None,
                };
                let mut d = fit_model(
                    specimens,
                    FitModel::Dahl,
                    mu,
                    power,
                    options,
                    progress,
                    start,
                );
                d.model = format!("{} (bs2 with f2/f1 = 0)", d.model);
                d
            })
            .collect();
        candidates.extend(reduced);
    }
    if candidates.len() == 1 {
        let mut only = candidates.remove(0);
        explain_bounds(&mut only, &[]);
        return refuse_unphysical(specimens, only);
    }
    let summary: Vec<String> = candidates
        .iter()
        .map(|c| match c.aic_floor() {
            Some(floor) => format!(
                "{} stopped at {:.1} (NRMSE {:.3} %; it could reach no lower than {floor:.1})",
                c.model,
                c.aic,
                100.0 * c.nrmse
            ),
            None => format!("{} {:.1} (NRMSE {:.3} %)", c.model, c.aic, 100.0 * c.nrmse),
        })
        .collect();
    let fitted: Vec<&CurveFit> = candidates.iter().filter(|c| c.is_fitted()).collect();
    let best = fitted
        .iter()
        .copied()
        .filter(|c| c.aic_floor().is_none())
        .reduce(|best, c| if better(c, best) { c } else { best })
        .cloned();
    match best {
        Some(mut b) => {
            explain_bounds(&mut b, &fitted);
            let objective = if options.weight_values > 0.0 {
                format!(
                    "every candidate fitted to the curve and its KES values (--weight-values {}): lowest AIC = n ln(NRMSE² + W²·g²) + 2k, g the RMS relative gap of the values",
                    crate::friction::short_number(options.weight_values)
                )
            } else {
                "lowest AIC = n ln(RSS/n) + 2k".into()
            };
            let alpha = alpha::alpha_note(specimens, options, progress, &b).unwrap_or_default();
            b.selection = Some(format!(
                "{objective} (a tie within {AIC_TIE} goes to fewer free parameters, then to the first listed) among {}{alpha}",
                summary.join(", ")
            ));
            b.elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
            refuse_unphysical(specimens, b)
        }
        // every candidate failed: the first one's reason (they share the curve) says why
        None => {
            let reason = candidates.iter().find_map(|c| match &c.status {
                FitStatus::Failed(r) => Some(format!("no model could be fitted: {r}")),
                FitStatus::Fitted => None,
            });
            let reason = reason.unwrap_or_else(|| "no model could be fitted".into());
            CurveFit::failed_specimens(specimens, reason)
        }
    }
}

/// The candidate with the lowest AIC among those fitted to the end (the one ranking of
/// [`better`]), as the one a later candidate must be able to beat.
fn leader_of<'c>(fitted: impl Iterator<Item = &'c CurveFit>) -> Option<Leader> {
    fitted
        .filter(|c| c.is_fitted() && c.aic_floor().is_none() && c.nrmse.is_finite())
        .reduce(|best, c| if better(c, best) { c } else { best })
        .map(|c| Leader {
            aic: c.aic,
            nrmse: c.nrmse,
            free_parameters: c.free_parameters,
            samples: c.samples,
        })
}

/// Two AICs closer than this are a tie (the same law reached by two candidates).
const AIC_TIE: f64 = 1e-6;

/// The one AIC ranking of every report and legend: lower AIC wins; a tie goes to fewer free
/// parameters; a full tie keeps the candidate listed first (`best`).
fn better(c: &CurveFit, best: &CurveFit) -> bool {
    let tie = (c.aic - best.aic).abs() <= AIC_TIE * best.aic.abs().max(1.0);
    if tie {
        c.free_parameters < best.free_parameters
    } else {
        c.aic < best.aic
    }
}

/// A fit whose law is not valid or whose NRMSE is not finite is no fit: its report says why.
/// A fit kept gets its KES values beside the measured ones (the specimens' mean).
fn refuse_unphysical(specimens: &[&Curve], mut fit: CurveFit) -> CurveFit {
    if !fit.is_fitted() {
        return fit;
    }
    if !fit.nrmse.is_finite() {
        return CurveFit::failed_specimens(
            specimens,
            "the fitted law gives non-finite forces".into(),
        );
    }
    if let Some(Err(e)) = fit.law().map(|l| l.validate()) {
        return CurveFit::failed_specimens(specimens, format!("the fitted law is not valid: {e}"));
    }
    fit.values = fit
        .fitted_law()
        .map(|law| ValuesSideBySide::of_specimens(specimens, &law));
    fit
}
