//! The report of a fit: parameters with SI units and standard errors (cov_p = G cov_q Gᵀ,
//! G = ∂p/∂q, cov_q = s²(JᵀJ)⁻¹), strong correlations, NRMSE = RMS(residual)/(max − min of
//! the measured force), AIC = n ln(RSS/n) + 2k, iterations, termination, time.

use std::time::Duration;

use nalgebra::DMatrix;
use serde::Serialize;

use super::coords::{Coordinates, Param};
use super::path_model::{idx, simulate, ElasticKind, LawKind, ShapeKind, P};
use super::problem::{identified_inverse, Solution, Termination, ValueTargets, NEAR_SINGULAR};
use crate::friction::FrictionShape;
use crate::kes::replicates::summarise;
use crate::kes::values::{kes_values, KesValues, ReadingRules};
use crate::kes::{Curve, KesTest};
use crate::material::{BendingLaw, ConnectorLaw, FrictionLaw, ShearLaw, ToeShape, TractionLaw};
use crate::params::{nrmse, Correlation, FittedLaw, SpecimenNrmse};

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

/// The KES values of a curve beside those of its fitted law driven along the same measured
/// path and read with the same rules (Kawabata units; `docs/kes.md`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ValuesSideBySide {
    /// Read from the measured curve.
    pub measured: KesValues,
    /// Read from the fitted law (with its offset) driven along the measured path, as the
    /// measured curve is read; None when its forces there are not finite (`note` says why).
    pub fitted: Option<KesValues>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ValuesSideBySide {
    /// The fitted law's values against the measured curve's.
    pub fn of(curve: &Curve, fitted: &FittedLaw) -> Self {
        Self::of_specimens(&[curve], fitted)
    }

    /// The fitted law's values against the mean of the specimens' values (one specimen: its
    /// own values; `kes::replicates` reads the mean).
    pub fn of_specimens(specimens: &[&Curve], fitted: &FittedLaw) -> Self {
        let measured = measured_values(specimens);
        let mean_of = (specimens.len() > 1)
            .then(|| format!("measured: the mean of {} specimens", specimens.len()));
        match law_values_along(specimens, fitted) {
            Some(v) => Self {
                measured,
                fitted: Some(v),
                note: mean_of,
            },
            None => Self {
                measured,
                fitted: None,
                note: Some("the fitted law gives non-finite forces along the measured path".into()),
            },
        }
    }

    /// (name, measured, fitted, relative gap fitted/measured − 1) for every measured value.
    pub fn rows(&self) -> Vec<(&'static str, f64, Option<f64>, Option<f64>)> {
        self.measured
            .iter()
            .map(|(name, m)| {
                let f = self.fitted.and_then(|v| v.get(name));
                (name, m, f, f.map(|f| f / m - 1.0))
            })
            .collect()
    }
}

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

/// The connector law of structure `kind` for a curve of `test` at physical parameters `p`
/// (without the zero offset); None for generic loops.
pub(crate) fn law_of(kind: LawKind, test: KesTest, p: &P) -> Option<ConnectorLaw> {
    let shape = match kind.shape {
        ShapeKind::Dahl => FrictionShape::Dahl {
            eps_f: p[Param::EpsF],
            alpha: p[Param::Alpha],
        },
        ShapeKind::Bs2 => FrictionShape::Bs2 {
            eps_f: p[Param::EpsF],
            eta: p[Param::Eta],
            ratio: p[Param::Ratio],
        },
    };
    let friction = FrictionLaw {
        level: p[Param::Level],
        mu: p[Param::Mu],
        shape,
    };
    Some(match test {
        KesTest::Tensile => ConnectorLaw::Traction(TractionLaw {
            k_t: p[Param::K],
            eps1: p[Param::Eps1],
            f1: p[Param::F1],
            eps1_aligned: Some(p[Param::Eps1Aligned]),
            friction,
            toe: if kind.elastic == ElasticKind::PowerToeLine {
                ToeShape::Power
            } else {
                ToeShape::Quadratic
            },
        }),
        KesTest::Shear => ConnectorLaw::Shear(ShearLaw {
            k_s: p[Param::K],
            theta0: 0.0,
            friction,
        }),
        KesTest::Bending => ConnectorLaw::Bending(BendingLaw {
            k_b: p[Param::K],
            k0: 0.0,
            friction,
        }),
        KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
            return None
        }
    })
}

/// The KES values measured on the specimens: their mean (one specimen: its own values).
/// The KES values of `fitted` read as the measured ones are: the law driven from a virgin
/// state along each specimen's measured path (its own protocol, whatever it was), its forces
/// read with the same reading rules and metadata, and the specimens' mean. None where the
/// law's forces are not finite.
pub(crate) fn law_values_along(specimens: &[&Curve], fitted: &FittedLaw) -> Option<KesValues> {
    let rules = ReadingRules::default();
    let mut each = Vec::with_capacity(specimens.len());
    for &c in specimens {
        let mut law = c.clone();
        law.y = fitted.forces(&c.x);
        if law.y.iter().any(|v| !v.is_finite()) {
            return None;
        }
        each.push(kes_values(&law, &rules));
    }
    Some(summarise(specimens, each).mean)
}

pub(crate) fn measured_values(specimens: &[&Curve]) -> KesValues {
    let rules = ReadingRules::default();
    let each = specimens.iter().map(|c| kes_values(c, &rules)).collect();
    summarise(specimens, each).mean
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

/// cov(a, b) of physical parameters, G cov_q Gᵀ (`g[col][param]` = ∂p/∂q); terms with a zero
/// derivative are skipped, so a coordinate that is not identified (NaN covariance) taints only
/// the parameters that depend on it.
fn propagate(g: &[P], cov: Option<&DMatrix<f64>>, a: Param, b: Param) -> Option<f64> {
    let cov = cov?;
    let mut s = 0.0;
    for (u, gu) in g.iter().enumerate().filter(|(_, gu)| gu[a] != 0.0) {
        for (v, gv) in g.iter().enumerate().filter(|(_, gv)| gv[b] != 0.0) {
            s += gu[a] * cov[(u, v)] * gv[b];
        }
    }
    Some(s)
}

/// The standard error beyond which a parameter is not determined (the pinning rule's scale,
/// `fit/strategy/rounds.rs`): its bound span for the dimensionless fractions, else its value.
fn scale_of(i: Param, value: f64, coords: &Coordinates) -> f64 {
    match i {
        Param::Mu | Param::Eta | Param::Ratio | Param::Alpha | Param::Offset => {
            coords.hi[i] - coords.lo[i]
        }
        _ => value.abs().max(1e-300),
    }
}

/// Why parameter `i`, determined only while the coordinates `held` keep their pinned values,
/// is not identified, and what the curve measures instead: i·h^−γ for the held parameter h it
/// follows most closely, γ = cov(ln i, ln h)/var(ln h) rounded (to an integer within 0.25 of
/// one, else to 0.1) — the combination whose variance with h free is least — with its 95 %
/// interval (Wald on its logarithm, h free). `relative`: i's standard error with h free over
/// its scale (None where JᵀJ does not determine it then).
fn conditional_note(
    i: Param,
    held: &[Param],
    p: &P,
    relative: Option<f64>,
    cov: &dyn Fn(Param, Param) -> Option<f64>,
    test: KesTest,
) -> String {
    let correlation = |h: Param| -> f64 {
        let r = (|| Some(cov(i, h)? / (cov(i, i)? * cov(h, h)?).sqrt()))().unwrap_or(f64::NAN);
        if r.is_finite() {
            r
        } else {
            0.0
        }
    };
    let Some(&h) = held
        .iter()
        .max_by(|a, b| correlation(**a).abs().total_cmp(&correlation(**b).abs()))
    else {
        return "conditional on a pinned value: not identified by this curve".into();
    };
    // where no correlation is known (JᵀJ singular with the pins freed), every pinned value
    let named: Vec<Param> = if correlation(h) == 0.0 {
        held.to_vec()
    } else {
        vec![h]
    };
    let given: Vec<String> = named
        .iter()
        .map(|j| format!("{} = {:.4e}", j.name(test), p[*j]))
        .collect();
    let freed: Vec<&str> = named.iter().map(|j| j.name(test)).collect();
    let held_name = h.name(test);
    let mut note = format!(
        "conditional on {} (pinned): with {} free",
        given.join(", "),
        freed.join(" and ")
    );
    match relative {
        Some(rel) => note.push_str(&format!(
            " its standard error is {:.0} % of its scale (correlation {:+.3} with {held_name})",
            100.0 * rel,
            correlation(h)
        )),
        None => note.push_str(" the curve does not determine it"),
    }
    let combination = combination(i, h, p, cov, test);
    match combination {
        Some(c) => note.push_str(&format!(": the curve measures {c}")),
        None => note.push_str(": not identified by this curve"),
    }
    note
}

/// The combination i·h^−γ the curve measures of a parameter i that follows a held one h:
/// γ = cov(ln i, ln h)/var(ln h) rounded (to an integer within 0.25 of one, else to 0.1), the
/// combination whose variance with h free is least, with its 95 % interval (Wald on its
/// logarithm, h free); None where either value is not positive or γ rounds to 0.
fn combination(
    i: Param,
    h: Param,
    p: &P,
    cov: &dyn Fn(Param, Param) -> Option<f64>,
    test: KesTest,
) -> Option<String> {
    let (name, held_name) = (i.name(test), h.name(test));
    let (vi, vh, c) = (p[i], p[h], cov(i, h)?);
    let (var_i, var_h) = (cov(i, i)?, cov(h, h)?);
    if !(vi > 0.0 && vh > 0.0 && var_i > 0.0 && var_h > 0.0 && c.is_finite()) {
        return None;
    }
    let raw = c * vh / (var_h * vi);
    let gamma = rounded_power(raw);
    if gamma == 0.0 || !gamma.is_finite() {
        return None;
    }
    let value = vi / vh.powf(gamma);
    let var_log =
        var_i / (vi * vi) - 2.0 * gamma * c / (vi * vh) + gamma * gamma * var_h / (vh * vh);
    if !(var_log > 0.0 && value.is_finite()) {
        return None;
    }
    let spread = (Z95 * var_log.sqrt()).exp();
    Some(format!(
        "{} = {value:.4e}, 95 % [{:.4e}, {:.4e}]",
        power_name(name, held_name, gamma),
        value / spread,
        value * spread
    ))
}

/// The pinned coordinate `j` freed alone beside the free ones: their covariance where it
/// determines `i`; else, where JᵀJ is singular (an eigenvalue of the scaled JᵀJ below 10⁻⁶)
/// with `i` in the direction it does not determine, the power γ for which i/j^γ stays
/// constant along that direction (the combination the curve measures), γ rounded as in
/// [`combination`]; None otherwise.
fn one_freed(
    i: Param,
    j: Param,
    coords: &Coordinates,
    freed: &Coordinates,
    jtj: &DMatrix<f64>,
    s2: f64,
    p: &P,
) -> Option<Trade> {
    let mut one = coords.clone();
    one.free.push(j);
    let at: Vec<usize> = one
        .free
        .iter()
        .map(|c| freed.free.iter().position(|f| f == c))
        .collect::<Option<_>>()?;
    let n = at.len();
    let g = one.dp_dq();
    let sub = DMatrix::from_fn(n, n, |a, b| jtj[(at[a], at[b])]);
    if let Some(cov) = identified_inverse(&sub, s2) {
        let var = propagate(&g, Some(&cov), i, i);
        if var.is_some_and(|v| v > 0.0 && v.is_finite()) {
            return Some(Trade::Covariance(g, cov));
        }
    }
    let d: Vec<f64> = at.iter().map(|&a| jtj[(a, a)].max(0.0).sqrt()).collect();
    if d.iter().any(|v| !(*v > 0.0 && v.is_finite())) {
        return None;
    }
    let scaled = DMatrix::from_fn(n, n, |a, b| jtj[(at[a], at[b])] / (d[a] * d[b]));
    let eigen = scaled.symmetric_eigen();
    let (k, lambda) = eigen
        .eigenvalues
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))?;
    // an exact trade computed in floating point (the sensitivities of two parameters that
    // change the law identically agree to rounding, not to the bit): estimates correlated
    // beyond ±(1 − 10⁻⁶)
    if *lambda >= 1e3 * NEAR_SINGULAR {
        return None;
    }
    // the direction in q, then in the physical parameters
    let dq: Vec<f64> = (0..n).map(|a| eigen.eigenvectors[(a, k)] / d[a]).collect();
    let dp = |x: Param| -> f64 { g.iter().zip(&dq).map(|(col, v)| col[x] * v).sum() };
    let (di, dj) = (dp(i) / p[i], dp(j) / p[j]);
    let raw = di / dj;
    if !(raw.is_finite() && p[i] > 0.0 && p[j] > 0.0 && di.abs() > 1e-3 * dj.abs()) {
        return None;
    }
    let gamma = rounded_power(raw);
    (gamma != 0.0).then_some(Trade::Exact(gamma))
}

/// What freeing one pinned coordinate says of a parameter that depends on it.
enum Trade {
    /// ∂p/∂q and the covariance of the coordinates with it freed (JᵀJ invertible there).
    Covariance(Vec<P>, DMatrix<f64>),
    /// JᵀJ singular with it: the power γ of the combination i/j^γ the curve measures.
    Exact(f64),
}

/// A power rounded to an integer within 0.25 of one, else to 0.1.
fn rounded_power(raw: f64) -> f64 {
    if (raw - raw.round()).abs() < 0.25 {
        raw.round()
    } else {
        (raw * 10.0).round() / 10.0
    }
}

/// The note of a parameter that trades exactly with a pinned one (JᵀJ singular with both):
/// the curve measures i/j^γ, whose interval is i's given j (j fixed, the combination's
/// logarithm has i's relative standard error `se`/i).
fn exact_trade_note(i: Param, j: Param, gamma: f64, p: &P, se: f64, test: KesTest) -> String {
    let (name, held) = (i.name(test), j.name(test));
    let value = p[i] / p[j].powf(gamma);
    let spread = (Z95 * se / p[i]).exp();
    let combination = power_name(name, held, gamma);
    format!(
        "conditional on {held} = {:.4e} (pinned): {name} trades with {held} (with {held} free, JᵀJ is singular along them to 10⁻⁶): the curve measures {combination} = {value:.4e}, 95 % [{:.4e}, {:.4e}]",
        p[j],
        value / spread,
        value * spread
    )
}

/// `i/j`, `i*j`, `i/j^γ` or `i*j^γ` for i·j^−γ.
fn power_name(name: &str, held: &str, gamma: f64) -> String {
    let power = if gamma.abs() == 1.0 {
        String::new()
    } else {
        format!("^{}", gamma.abs())
    };
    let op = if gamma > 0.0 { '/' } else { '*' };
    format!("{name}{op}{held}{power}")
}

/// Where `j` is pinned at a bound that is the fit's limit rather than the law's (eps_f at the
/// whole strain range or at its smallest, a rigidity at ×/÷ 50 of its estimate, alpha at 8,
/// the level at the force range, eps1 at its smallest, the offset): how far i's estimate moves
/// when j moves by its own value beyond that bound, cov(i, j)/var(j)·p_j (j freed); None for
/// a bound the law has itself (mu, f2/f1, eta, a level of 0, alpha = 1).
fn open_bound_shift(
    i: Param,
    j: Param,
    p: &P,
    coords: &Coordinates,
    cov: &dyn Fn(Param, Param) -> Option<f64>,
) -> Option<f64> {
    let upper = coords.q[j] >= coords.hi[j];
    let lower = coords.q[j] <= coords.lo[j];
    let open = match j {
        Param::EpsF | Param::K | Param::Offset => upper || lower,
        Param::Alpha | Param::Level => upper,
        Param::Eps1 => lower,
        _ => false,
    };
    if !open {
        return None;
    }
    let slope = cov(i, j)? / cov(j, j).filter(|v| *v > 0.0)?;
    let moved = slope * p[j].abs();
    moved.is_finite().then_some(moved)
}

/// "given j = …": the value a conditional interval of i holds for, and how far i moves with j.
fn given_note(
    i: Param,
    j: Param,
    p: &P,
    coords: &Coordinates,
    moved: f64,
    se: f64,
    test: KesTest,
) -> String {
    let (name, held) = (i.name(test), j.name(test));
    let side = if coords.q[j] >= coords.hi[j] {
        format!("the curve says only {held} >= {:.4e}", p[j])
    } else {
        format!("the curve says only {held} <= {:.4e}", p[j])
    };
    format!(
        "conditional: given {held} = {:.4e} (pinned at a bound: {side}); {name} follows it, moving by {moved:+.3e} ({:.0} standard errors) as {held} moves by its own value",
        p[j],
        moved.abs() / se.max(1e-300)
    )
}

/// A Wald interval against the values the law allows.
enum Clipped {
    /// Clipped to them, and when it reached a bound, what that says.
    Within([f64; 2], Option<String>),
    /// It spans all of them, from the lower bound to the upper: the curve does not determine
    /// the parameter (the note says so with the interval).
    WholeRange(String),
}

/// The Wald interval clipped to the values the law allows for `i` (its fit bounds where they
/// have a physical meaning, else zero for a positive quantity), and when it reaches one, what
/// that says.
fn clip_to_bounds(i: Param, wald: [f64; 2], coords: &Coordinates, test: KesTest) -> Clipped {
    let (lo, hi) = match i {
        Param::Mu
        | Param::Eta
        | Param::Ratio
        | Param::Alpha
        | Param::Level
        | Param::EpsF
        | Param::Eps1
        | Param::Offset => (coords.lo[i], coords.hi[i]),
        Param::K if test == KesTest::Loop => return Clipped::Within(wald, None),
        Param::K | Param::F1 | Param::Eps1Aligned => (0.0, f64::INFINITY),
    };
    let name = i.name(test);
    if wald[0] < lo && wald[1] > hi {
        return Clipped::WholeRange(format!(
            "not determined by this curve: its 95 % interval [{:.4e}, {:.4e}] spans the whole range the law allows, [{lo:.4e}, {hi:.4e}]",
            wald[0], wald[1]
        ));
    }
    let meaning = |upper: bool| -> &'static str {
        match (i, upper) {
            (Param::Mu, false) => "the law with load-independent friction (mu = 0) is within it",
            (Param::Mu, true) => "the steepest growth of the friction with load the law allows (mu = 0.99, an unloading slope of 1 %) is within it",
            (Param::Ratio, false) => "the first-order (Dahl) law, f2/f1 = 0, is within it",
            (Param::Ratio, true) => "the strongest stiction the law allows (f2/f1 = 0.95) is within it",
            (Param::Eta, _) => "the law with eta at the end of its range is within it",
            (Param::Alpha, false) => "the paper's Dahl law (alpha = 1) is within it",
            (Param::Level, false) => "a law with no friction at zero load (the loop's width from mu alone) is within it",
            (Param::EpsF, true) => "a friction that never saturates on this path (eps_f the whole strain range) is within it",
            (Param::EpsF, false) => "a friction that saturates at once after a reversal is within it",
            (Param::Eps1, true) => "the toe-only law (eps1 at the largest strain) is within it",
            (Param::K | Param::F1 | Param::Eps1Aligned, false) => "the curve does not tell it from zero",
            _ => "the curve does not tell it from the end of the range the fit allows",
        }
    };
    let reached = if wald[0] < lo {
        Some((false, lo))
    } else if wald[1] > hi {
        Some((true, hi))
    } else {
        None
    };
    let clipped = [wald[0].max(lo), wald[1].min(hi)];
    let note = reached.map(|(upper, bound)| {
        format!(
            "the 95 % interval [{:.4e}, {:.4e}] reaches the {} bound {name} = {bound:.4e}: {}; shown clipped to [{:.4e}, {:.4e}]",
            wald[0],
            wald[1],
            if upper { "upper" } else { "lower" },
            meaning(upper),
            clipped[0],
            clipped[1]
        )
    });
    Clipped::Within(clipped, note)
}
