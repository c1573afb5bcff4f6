//! The report of a fit: parameters with SI units and standard errors (cov_p = G cov_q Gᵀ,
//! G = ∂p/∂q, cov_q = s²(JᵀJ)⁻¹), strong correlations, NRMSE = RMS(residual)/(max − min of
//! the measured force), AIC = n ln(RSS/n) + 2k, iterations, termination, time.

use std::time::Duration;

use serde::Serialize;

use super::coords::Param;
use super::path_model::{idx, simulate, LawKind, ShapeKind, P};
use super::problem::{identified_inverse, Solution, Termination, ValueTargets, NEAR_SINGULAR};
use crate::kes::{Curve, KesTest};
use crate::material::ConnectorLaw;
use crate::params::{nrmse, Correlation, FittedLaw, SpecimenNrmse};

mod intervals;
mod law;

use intervals::{
    clip_to_bounds, combination, conditional_note, exact_trade_note, given_note, one_freed,
    open_bound_shift, propagate, scale_of, Clipped, Trade,
};
pub use law::ValuesSideBySide;
pub(crate) use law::{law_of, law_values_along, measured_values};

/// Outcome of a fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum FitStatus {
    Fitted,
    /// The curve could not be fitted; the reason says why (flat, too few points, no loop…).
    Failed(String),
}

/// One parameter of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamEstimate {
    #[serde(skip)]
    pub param: Param,
    pub name: &'static str,
    pub unit: &'static str,
    pub value: f64,
    /// Standard error (None when pinned or when JᵀJ is singular).
    pub std_error: Option<f64>,
    /// Pinned at its value, with the reason (None when fitted).
    pub pinned: Option<String>,
    /// 95 % Wald interval value ∓ 1.96·std_error (None without a standard error).
    pub interval95: Option<[f64; 2]>,
    /// Fitted but not identified: JᵀJ is singular along it (the curve does not change with
    /// it, or another parameter changes the curve the same way, correlation ±1), so it has
    /// no standard error, interval or correlation.
    pub not_identified: bool,
    /// What the interval means beyond its numbers: a parameter determined only with a pinned
    /// one held at its value (conditional on it: not identified, with the combination the
    /// curve measures), or an interval that reaches one of the parameter's bounds (shown
    /// clipped to it, naming the law at that bound).
    pub interval_note: Option<String>,
    /// Its interval holds only given the value of a coordinate pinned at a bound of the fit
    /// that is a limit of what the curve measures (eps_f at the whole strain range): the
    /// interval is the one given that value (`interval_note` says which and how far it moves).
    pub conditional: bool,
}

/// The reason of a parameter the chosen model does not have free (μ = 0, α = 1).
pub const FIXED_BY_THE_MODEL: &str = "fixed by the model";

/// How the reason of a coordinate the fit pinned at one of its bounds begins.
pub(crate) const AT_BOUND_PREFIX: &str = "at its";

/// z of a two-sided 95 % normal interval (the residual degrees of freedom are hundreds).
pub const Z95: f64 = 1.959_963_984_540_054;

/// A fitted curve.
#[derive(Debug, Clone, Serialize)]
pub struct CurveFit {
    pub file: String,
    pub fabric: String,
    pub test: KesTest,
    pub direction: String,
    /// `dahl`, `dahl+mu`, `dahl-alpha(+mu)`, `bs2`, `bs2+mu`.
    pub model: String,
    pub status: FitStatus,
    /// The chosen law's parameters, in report order.
    pub params: Vec<ParamEstimate>,
    /// Pairs with |correlation| ≥ 0.9.
    pub correlations: Vec<(String, String, f64)>,
    /// The full correlation matrix (None when JᵀJ is singular or nothing is free).
    pub correlation: Option<Correlation>,
    /// RMS(residual)/(max − min of the measured force), as a fraction.
    pub nrmse: f64,
    /// n ln(RSS/n) + 2k, k = `free_parameters`.
    pub aic: f64,
    pub samples: usize,
    /// The parameters the fit chose: the free ones and those it pinned at a bound (a value
    /// on a bound is still the fit's choice, so it costs the AIC like any other).
    pub free_parameters: usize,
    /// Jacobian evaluations (one per Levenberg–Marquardt iteration).
    pub iterations: usize,
    pub evaluations: usize,
    pub termination: Termination,
    pub elapsed_ms: f64,
    /// For `auto`: which model won and why.
    pub selection: Option<String>,
    /// KES values measured and of the fitted law (None for generic loops and failed fits).
    pub values: Option<ValuesSideBySide>,
    /// A joint fit of several specimens of one curve: each specimen's file, samples and
    /// NRMSE (the law driven along its own path from a virgin state); `nrmse` above is then
    /// the pooled figure. Empty for a fit of one curve.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub specimens: Vec<SpecimenNrmse>,
    #[serde(skip)]
    physical: P,
    #[serde(skip)]
    kind: Option<LawKind>,
    /// A candidate of `auto` stopped once it could not win: the lowest AIC it could still
    /// have reached (see `fit/strategy/rounds.rs`); None for a candidate fitted to the end.
    #[serde(skip)]
    aic_floor: Option<f64>,
}

impl CurveFit {
    /// For a candidate of `auto` stopped once it could not beat the leading candidate: the
    /// lowest AIC it could still have reached, which is above the leader's.
    pub(crate) fn aic_floor(&self) -> Option<f64> {
        self.aic_floor
    }

    /// Marks the candidate as stopped before convergence, with the lowest AIC it could reach.
    pub(crate) fn set_aic_floor(&mut self, floor: f64) {
        self.aic_floor = Some(floor);
    }

    /// No fit of these specimens (one curve, or replicates of one), with the reason.
    pub(crate) fn failed_specimens(specimens: &[&Curve], reason: String) -> Self {
        let first = specimens.first();
        Self {
            file: specimens_name(specimens),
            fabric: first.map_or_else(String::new, |c| c.fabric.clone()),
            test: first.map_or(KesTest::Loop, |c| c.test),
            direction: first.map_or_else(String::new, |c| c.direction.to_string()),
            model: String::new(),
            status: FitStatus::Failed(reason),
            params: Vec::new(),
            correlations: Vec::new(),
            correlation: None,
            nrmse: f64::NAN,
            aic: f64::INFINITY,
            samples: specimens.iter().map(|c| c.x.len()).sum(),
            free_parameters: 0,
            iterations: 0,
            evaluations: 0,
            termination: Termination::NotRun,
            elapsed_ms: 0.0,
            selection: None,
            values: None,
            specimens: Vec::new(),
            physical: [0.0; idx::N],
            kind: None,
            aic_floor: None,
        }
    }

    /// The law a fit of `curve` starts from, before any iteration (Dahl, μ free, quadratic
    /// toe): the initial estimate from the curve's shape put strictly inside the fit's bounds;
    /// None for a generic loop or a law that would not validate.
    pub fn starting_law(curve: &Curve) -> Option<ConnectorLaw> {
        let kind = super::coords::law_kind(curve.test, ShapeKind::Dahl, false);
        let p0 = super::estimate::initial_estimate(kind, &curve.x, &curve.y);
        let ranges = super::estimate::CurveRanges::of(&curve.x, &curve.y);
        let coords =
            super::coords::Coordinates::new(kind, curve.test, &p0, &ranges, false, true, false);
        law_of(kind, curve.test, &coords.physical(&coords.q)).filter(|l| l.validate().is_ok())
    }

    pub fn is_fitted(&self) -> bool {
        self.status == FitStatus::Fitted
    }

    /// The value of a parameter of the chosen law (None if the law has no such parameter).
    pub fn value(&self, param: Param) -> Option<f64> {
        self.params
            .iter()
            .find(|p| p.param == param)
            .map(|p| p.value)
    }

    /// The chosen law's parameters and their values, in report order.
    pub fn values(&self) -> impl Iterator<Item = (Param, f64)> + '_ {
        self.params.iter().map(|p| (p.param, p.value))
    }

    /// The model's forces along a path from a virgin state (offset included), for overlays
    /// and residuals: the exported law through [`FittedLaw::forces`], or the loop's model.
    pub fn forces(&self, x: &[f64]) -> Option<Vec<f64>> {
        if let Some(fitted) = self.fitted_law() {
            return Some(fitted.forces(x));
        }
        let kind = self.kind?;
        let mut out = vec![0.0; x.len()];
        simulate(kind, &self.physical, x, &mut out);
        Some(out)
    }

    /// The physical parameter vector of the chosen law (a start for a related fit).
    pub(crate) fn physical(&self) -> P {
        self.physical
    }

    /// The fitted law with the force zero offset it was scored with (0 unless `--offset fit`);
    /// None for generic loops and failed fits.
    pub fn fitted_law(&self) -> Option<FittedLaw> {
        Some(FittedLaw {
            law: self.law()?,
            offset: self.physical[Param::Offset],
        })
    }

    /// The force zero offset fitted with the law; None when it was not fitted.
    pub fn offset(&self) -> Option<f64> {
        self.params
            .iter()
            .find(|p| p.param == Param::Offset)
            .map(|p| p.value)
    }

    /// The fitted law (without the instrument's zero offset); None for generic loops.
    pub fn law(&self) -> Option<ConnectorLaw> {
        law_of(self.kind?, self.test, &self.physical)
    }
}

fn source_name(curve: &Curve) -> String {
    curve
        .source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// The source files of the specimens, joined by ` + ` (one curve: its file).
fn specimens_name(specimens: &[&Curve]) -> String {
    specimens
        .iter()
        .map(|c| source_name(c))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The report of a solution on every sample of every specimen (one curve, or replicates of
/// one); `pinned` says why a parameter was taken out of the free set.
pub(crate) fn build(
    specimens: &[&Curve],
    solution: &Solution,
    model: String,
    pinned: &[(Param, String)],
    elapsed: Duration,
    values: Option<&ValueTargets>,
) -> CurveFit {
    let coords = &solution.coords;
    let kind = coords.kind;
    let p = solution.params;
    let curve = specimens[0];
    // a coordinate pinned at a bound was chosen by the fit: it counts in the AIC's k, so a law
    // with that parameter removed or fixed at a named value wins on the same forces
    let k = coords.free.len()
        + pinned
            .iter()
            .filter(|(_, why)| why.starts_with(AT_BOUND_PREFIX))
            .count();
    let list = Param::of_law(kind);
    let g = coords.dp_dq();
    // the covariance the report shows: with every coordinate the fit pinned freed again at its
    // value, so no interval is conditional on a pinned value; without such pins, the fit's
    let shown = solution.with_pins_freed.as_ref();
    let freed_cov = shown.and_then(|(_, jtj, s2)| identified_inverse(jtj, *s2));
    let shown_g = shown.map_or_else(|| g.clone(), |(c, _, _)| c.dp_dq());
    let shown_cov = match shown {
        Some(_) => freed_cov.as_ref(),
        None => solution.covariance.as_ref(),
    };
    let cov_c = |a: Param, b: Param| propagate(&g, solution.covariance.as_ref(), a, b);
    let cov_p = |a: Param, b: Param| propagate(&shown_g, shown_cov, a, b);
    let depends_on_free = |i: Param| g.iter().any(|c| c[i] != 0.0);
    let mut params_out = Vec::new();
    for &i in &list {
        let pin = pinned
            .iter()
            .find(|(j, _)| *j == i)
            .map(|(_, why)| why.clone());
        // an offset that was not fitted is no parameter of the law: not reported
        if i == Param::Offset && !coords.free.contains(&i) && pin.is_none() {
            continue;
        }
        let model_fixed = match i {
            Param::Mu => !coords.free.contains(&Param::Mu),
            Param::Alpha => !coords.free.contains(&Param::Alpha) && pin.is_none(),
            _ => false,
        };
        // a variance that is not a positive number (NaN from a direction JᵀJ does not
        // identify, 0, or no covariance at all) is no standard error: "not identified"
        let positive = |v: &f64| *v > 0.0 && v.is_finite();
        let variance = cov_c(i, i).filter(positive);
        let mut not_identified = depends_on_free(i) && variance.is_none();
        let mut std_error = variance.filter(|_| depends_on_free(i)).map(f64::sqrt);
        let mut interval_note = None;
        // with the pinned coordinates freed: the interval the curve gives, or, where the
        // parameter is determined only with a pinned value held fixed, "not identified" with
        // what the curve does measure
        let mut conditional = false;
        if let (Some(se_c), Some((freed, jtj, _))) = (std_error, shown) {
            let held: Vec<Param> = freed
                .free
                .iter()
                .filter(|j| !coords.free.contains(j))
                .copied()
                .collect();
            let scale = scale_of(i, p[i], coords);
            // a pin at a bound the law itself does not have (eps_f at the whole strain range…)
            // is a limit, not an estimate: the curve says only that the value is beyond it
            let open = held.iter().copied().find_map(|j| {
                let moved = open_bound_shift(i, j, &p, coords, &cov_p)?;
                (moved.abs() > Z95 * se_c).then_some((j, moved))
            });
            match (cov_p(i, i).filter(positive).map(f64::sqrt), open) {
                (_, Some((j, moved))) => {
                    // it follows the pinned limit: as a power of it (grows without bound as
                    // it does), not identified; a little (a rigidity absorbing a stroke-long
                    // friction), its interval holds only given the pinned value
                    let power = moved / p[i];
                    let given = given_note(i, j, &p, coords, moved, se_c, curve.test);
                    if power.abs() >= 0.5 {
                        std_error = None;
                        not_identified = true;
                        let measures = combination(i, j, &p, &cov_p, curve.test)
                            .map_or_else(String::new, |c| format!("; the curve measures {c}"));
                        interval_note = Some(format!("{given}{measures}"));
                    } else {
                        conditional = true;
                        interval_note =
                            Some(format!("{given}; the interval is the one given that value"));
                    }
                }
                (Some(se), None) if se <= scale || se_c > scale => std_error = Some(se),
                (se, None) => {
                    std_error = None;
                    not_identified = true;
                    // the pinned coordinate it depends on, freed alone: its covariance gives
                    // the combination the curve measures; where JᵀJ is singular with it,
                    // the direction it does not determine does
                    let s2 = shown.map_or(0.0, |(_, _, s2)| *s2);
                    let alone = held.iter().find_map(|&j| {
                        match one_freed(i, j, coords, freed, jtj, s2, &p)? {
                            Trade::Covariance(g1, cov1) => {
                                let at = |a: Param, b: Param| propagate(&g1, Some(&cov1), a, b);
                                let rel = at(i, i).filter(positive)?.sqrt() / scale;
                                (rel > 1.0).then(|| {
                                    conditional_note(i, &[j], &p, Some(rel), &at, curve.test)
                                })
                            }
                            Trade::Exact(gamma) => {
                                Some(exact_trade_note(i, j, gamma, &p, se_c, curve.test))
                            }
                        }
                    });
                    interval_note = Some(alone.unwrap_or_else(|| {
                        conditional_note(i, &held, &p, se.map(|se| se / scale), &cov_p, curve.test)
                    }));
                }
            }
        }
        let mut interval95 = std_error
            .filter(|se| se.is_finite())
            .map(|se| [p[i] - Z95 * se, p[i] + Z95 * se]);
        if let Some(wald) = interval95 {
            match clip_to_bounds(i, wald, coords, curve.test) {
                Clipped::Within(clipped, note) => {
                    interval95 = Some(clipped);
                    interval_note = interval_note.or(note);
                }
                // an interval over the whole range the law allows says nothing of the value
                Clipped::WholeRange(note) => {
                    interval95 = None;
                    std_error = None;
                    not_identified = true;
                    interval_note = Some(note);
                }
            }
        }
        params_out.push(ParamEstimate {
            param: i,
            name: i.name(curve.test),
            unit: i.unit(curve.test),
            value: p[i],
            std_error,
            interval95,
            pinned: if model_fixed && pin.is_none() {
                Some(FIXED_BY_THE_MODEL.into())
            } else {
                pin
            },
            not_identified,
            conditional,
            interval_note,
        });
    }
    // a correlation of ±1 between two fitted coordinates: neither is identified (the curve
    // gives their combination only). F₁ and ε₁' are derived from the toe coordinates (φ, ψ)
    // and may follow k or ε₁ exactly, so they are not tested.
    let correlation_of = |a: Param, b: Param| -> Option<f64> {
        let r = cov_p(a, b)? / (cov_p(a, a)? * cov_p(b, b)?).sqrt();
        r.is_finite().then_some(r)
    };
    let with_se: Vec<Param> = params_out
        .iter()
        .filter(|e| e.std_error.is_some() && coords.free.contains(&e.param))
        .filter(|e| !matches!(e.param, Param::F1 | Param::Eps1Aligned))
        .map(|e| e.param)
        .collect();
    let mut collinear: Vec<Param> = Vec::new();
    for (n_a, &a) in with_se.iter().enumerate() {
        for &b in &with_se[n_a + 1..] {
            if correlation_of(a, b).is_none_or(|r| r.abs() > 1.0 - NEAR_SINGULAR) {
                collinear.extend([a, b]);
            }
        }
    }
    for e in params_out
        .iter_mut()
        .filter(|e| collinear.contains(&e.param))
    {
        e.std_error = None;
        e.interval95 = None;
        e.not_identified = true;
    }
    let mut correlations = Vec::new();
    let with_error: Vec<Param> = params_out
        .iter()
        .filter(|e| e.std_error.is_some_and(|se| se > 0.0))
        .map(|e| e.param)
        .collect();
    let correlation = (!with_error.is_empty())
        .then(|| {
            let matrix: Option<Vec<Vec<f64>>> = with_error
                .iter()
                .map(|&a| {
                    with_error
                        .iter()
                        .map(|&b| Some(cov_p(a, b)? / (cov_p(a, a)? * cov_p(b, b)?).sqrt()))
                        .collect()
                })
                .collect();
            Some(Correlation {
                names: with_error
                    .iter()
                    .map(|a| a.name(curve.test).to_string())
                    .collect(),
                matrix: matrix?,
            })
        })
        .flatten();
    if solution.covariance.is_some() {
        for (a_pos, &a) in list.iter().enumerate() {
            for &b in &list[a_pos + 1..] {
                if !(depends_on_free(a) && depends_on_free(b)) {
                    continue;
                }
                if !(with_error.contains(&a) && with_error.contains(&b)) {
                    continue;
                }
                if let (Some(ab), Some(aa), Some(bb)) = (cov_p(a, b), cov_p(a, a), cov_p(b, b)) {
                    let c = ab / (aa * bb).sqrt();
                    if c.abs() >= 0.9 && c.is_finite() {
                        correlations.push((
                            a.name(curve.test).to_string(),
                            b.name(curve.test).to_string(),
                            c,
                        ));
                    }
                }
            }
        }
    }
    let mut fit = CurveFit {
        file: specimens_name(specimens),
        fabric: curve.fabric.clone(),
        test: curve.test,
        direction: curve.direction.to_string(),
        model,
        status: FitStatus::Fitted,
        params: params_out,
        correlations,
        correlation,
        nrmse: f64::NAN,
        aic: f64::INFINITY,
        samples: specimens.iter().map(|c| c.y.len()).sum(),
        free_parameters: k,
        iterations: solution.iterations,
        evaluations: solution.evaluations,
        termination: solution.termination,
        elapsed_ms: elapsed.as_secs_f64() * 1e3,
        selection: None,
        values: None,
        specimens: Vec::new(),
        physical: p,
        kind: Some(kind),
        aic_floor: None,
    };
    // NRMSE and AIC of what is exported: the law (and offset) driven along every sample
    if let [curve] = specimens {
        let forces = fit.forces(&curve.x).unwrap_or_default();
        let rss: f64 = forces
            .iter()
            .zip(&curve.y)
            .map(|(f, y)| (f - y) * (f - y))
            .sum();
        let n = curve.y.len() as f64;
        fit.nrmse = nrmse(&curve.y, &forces);
        fit.aic = n * (rss / n).max(1e-300).ln() + 2.0 * k as f64;
        if let Some(v) = values.filter(|v| v.weight > 0.0) {
            fit.aic = weighted_aic(n, k, fit.nrmse, v.weight * v.rms_gap(kind, &p));
        }
        return fit;
    }
    // several specimens: each driven from a virgin state along its own path; the pooled NRMSE
    // is the RMS of all scaled residuals, sqrt(Σ n_s NRMSE_s² / Σ n_s), and the AIC is taken on
    // the same scaled residuals (RSS in fractions of each specimen's force range)
    let each: Vec<SpecimenNrmse> = specimens
        .iter()
        .map(|c| SpecimenNrmse {
            file: source_name(c),
            samples: c.y.len(),
            nrmse: nrmse(&c.y, &fit.forces(&c.x).unwrap_or_default()),
        })
        .collect();
    let n = each.iter().map(|s| s.samples).sum::<usize>() as f64;
    let scaled_rss: f64 = each
        .iter()
        .map(|s| s.samples as f64 * s.nrmse * s.nrmse)
        .sum();
    fit.nrmse = (scaled_rss / n).sqrt();
    fit.aic = n * (scaled_rss / n).max(1e-300).ln() + 2.0 * k as f64;
    if let Some(v) = values.filter(|v| v.weight > 0.0) {
        fit.aic = weighted_aic(n, k, fit.nrmse, v.weight * v.rms_gap(kind, &p));
    }
    fit.specimens = each;
    fit
}

/// The AIC of a value-weighted fit, on the objective it minimised: N ln(NRMSE² + (W·g)²) + 2k
/// (g the RMS relative gap of the KES values, N the curve samples, k free parameters).
fn weighted_aic(n: f64, k: usize, nrmse: f64, weighted_gap: f64) -> f64 {
    n * (nrmse * nrmse + weighted_gap * weighted_gap)
        .max(1e-300)
        .ln()
        + 2.0 * k as f64
}
