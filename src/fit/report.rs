//! The report of a fit: parameters with SI units and standard errors (from the Jacobian and
//! the residual variance, cov = s²(JᵀJ)⁻¹), strong correlations, NRMSE = RMS(residual)/(max −
//! min of the measured force), AIC, iterations, termination, time.

use std::time::Duration;

use levenberg_marquardt::TerminationReason;
use nalgebra::DMatrix;
use serde::Serialize;

use super::path_model::{idx, simulate, ElasticKind, LawKind, ShapeKind, P};
use super::problem::{param_name, PathProblem};
use crate::friction::FrictionShape;
use crate::kes::{Curve, KesTest};
use crate::material::{BendingLaw, ConnectorLaw, FrictionLaw, ShearLaw, ToeShape, TractionLaw};

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
    pub name: &'static str,
    pub unit: &'static str,
    pub value: f64,
    /// Standard error (None when pinned or when JᵀJ is singular).
    pub std_error: Option<f64>,
    /// Pinned at its value, with the reason (None when fitted).
    pub pinned: Option<String>,
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
    pub params: Vec<ParamEstimate>,
    /// Pairs with |correlation| ≥ 0.9.
    pub correlations: Vec<(String, String, f64)>,
    /// RMS(residual)/(max − min of the measured force), as a fraction.
    pub nrmse: f64,
    /// n ln(RSS/n) + 2k.
    pub aic: f64,
    pub samples: usize,
    pub free_parameters: usize,
    /// Jacobian evaluations (one per Levenberg–Marquardt iteration).
    pub iterations: usize,
    pub evaluations: usize,
    pub termination: String,
    pub elapsed_ms: f64,
    /// For `auto`: which model won and why.
    pub selection: Option<String>,
    #[serde(skip)]
    pub physical: P,
    #[serde(skip)]
    pub kind: Option<LawKind>,
}

impl CurveFit {
    pub(crate) fn failed(curve: &Curve, reason: String) -> Self {
        Self {
            file: source_name(curve),
            fabric: curve.fabric.clone(),
            test: curve.test,
            direction: curve.direction.to_string(),
            model: String::new(),
            status: FitStatus::Failed(reason),
            params: Vec::new(),
            correlations: Vec::new(),
            nrmse: f64::NAN,
            aic: f64::INFINITY,
            samples: curve.x.len(),
            free_parameters: 0,
            iterations: 0,
            evaluations: 0,
            termination: "not run".into(),
            elapsed_ms: 0.0,
            selection: None,
            physical: [0.0; idx::N],
            kind: None,
        }
    }

    pub fn is_fitted(&self) -> bool {
        self.status == FitStatus::Fitted
    }

    /// The value of a parameter by name.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.params.iter().find(|p| p.name == name).map(|p| p.value)
    }

    /// The model's forces along a path (offset included), for overlays and residuals.
    pub fn forces(&self, x: &[f64]) -> Option<Vec<f64>> {
        let kind = self.kind?;
        let mut out = vec![0.0; x.len()];
        simulate(kind, &self.physical, x, &mut out);
        Some(out)
    }

    /// The fitted law (without the instrument's zero offset); None for generic loops.
    pub fn law(&self) -> Option<ConnectorLaw> {
        let kind = self.kind?;
        let p = &self.physical;
        let shape = match kind.shape {
            ShapeKind::Dahl => FrictionShape::Dahl {
                eps_f: p[idx::EPSF],
                alpha: p[idx::ALPHA],
            },
            ShapeKind::Bs2 => FrictionShape::Bs2 {
                eps_f: p[idx::EPSF],
                eta: p[idx::ETA],
                ratio: p[idx::RATIO],
            },
        };
        let friction = FrictionLaw {
            level: p[idx::LEVEL],
            mu: p[idx::MU],
            shape,
        };
        Some(match self.test {
            KesTest::Tensile => ConnectorLaw::Traction(TractionLaw {
                k_t: p[idx::K],
                eps1: p[idx::E1],
                f1: p[idx::F1],
                eps1_aligned: Some(p[idx::E1A]),
                friction,
                toe: if kind.elastic == ElasticKind::PowerToeLine {
                    ToeShape::Power
                } else {
                    ToeShape::Quadratic
                },
            }),
            KesTest::Shear => ConnectorLaw::Shear(ShearLaw {
                k_s: p[idx::K],
                theta0: 0.0,
                friction,
            }),
            KesTest::Bending => ConnectorLaw::Bending(BendingLaw {
                k_b: p[idx::K],
                k0: 0.0,
                friction,
            }),
            KesTest::Loop => return None,
        })
    }
}

fn source_name(curve: &Curve) -> String {
    curve
        .source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// Covariance of the free coordinates q and their standard errors, or None if JᵀJ is
/// singular or there are no degrees of freedom left.
pub(crate) fn covariance(problem: &PathProblem<'_>) -> Option<(DMatrix<f64>, Vec<f64>)> {
    use levenberg_marquardt::LeastSquaresProblem;
    let r = problem.residuals()?;
    let j = problem.jacobian_q();
    let (m, n) = j.shape();
    if m <= n || n == 0 {
        return None;
    }
    let s2 = r.norm_squared() / (m - n) as f64;
    let jtj = j.transpose() * &j;
    let inv = jtj.try_inverse()?;
    let cov = inv * s2;
    let se = (0..n).map(|i| cov[(i, i)].max(0.0).sqrt()).collect();
    Some((cov, se))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    curve: &Curve,
    problem: &PathProblem<'_>,
    kind: LawKind,
    model: String,
    pinned: &[(usize, String)],
    termination: TerminationReason,
    evaluations: usize,
    iterations: usize,
    elapsed: Duration,
) -> CurveFit {
    let coords = &problem.coords;
    let p = coords.physical(&coords.q);
    let forces = problem.forces();
    let rss: f64 = forces
        .iter()
        .zip(&curve.y)
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    let n = curve.y.len() as f64;
    let y_range = curve.y.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        - curve.y.iter().cloned().fold(f64::INFINITY, f64::min);
    let nrmse = (rss / n).sqrt() / y_range;
    let k = coords.free.len();
    let aic = n * (rss / n).max(1e-300).ln() + 2.0 * k as f64;
    // physical covariance: cov_p = G cov_q Gᵀ with G = ∂p/∂q (scaled residuals → × range²)
    let stats = covariance(problem);
    let mut params_out = Vec::new();
    let mut list: Vec<usize> = vec![idx::K];
    if kind.elastic.is_traction() {
        list.extend([idx::E1, idx::F1, idx::E1A]);
    }
    list.extend([idx::LEVEL, idx::MU, idx::EPSF]);
    match kind.shape {
        ShapeKind::Dahl => list.push(idx::ALPHA),
        ShapeKind::Bs2 => list.extend([idx::ETA, idx::RATIO]),
    }
    list.push(idx::OFFSET);
    // G by central differences of the (smooth, cheap) map q → p
    let g: Vec<[f64; idx::N]> = coords
        .free
        .iter()
        .map(|&j| {
            let h = 1e-7 * (coords.hi[j] - coords.lo[j]).abs().max(1e-300);
            let (mut qp, mut qm) = (coords.q, coords.q);
            qp[j] += h;
            qm[j] -= h;
            let (pp, pm) = (coords.physical(&qp), coords.physical(&qm));
            let mut c = [0.0; idx::N];
            for i in 0..idx::N {
                c[i] = (pp[i] - pm[i]) / (2.0 * h);
            }
            c
        })
        .collect();
    let cov_p = |a: usize, b: usize| -> Option<f64> {
        let (cov, _) = stats.as_ref()?;
        let mut s = 0.0;
        for (u, gu) in g.iter().enumerate() {
            for (v, gv) in g.iter().enumerate() {
                s += gu[a] * cov[(u, v)] * gv[b];
            }
        }
        Some(s)
    };
    let depends_on_free = |i: usize| g.iter().any(|c| c[i] != 0.0);
    for &i in &list {
        let (name, unit) = param_name(i, curve.test);
        let pin = pinned
            .iter()
            .find(|(j, _)| *j == i || (i == idx::F1 && *j == idx::F1))
            .map(|(_, why)| why.clone());
        let model_fixed = match i {
            idx::MU => !coords.free.contains(&idx::MU),
            idx::ALPHA => !coords.free.contains(&idx::ALPHA) && pin.is_none(),
            idx::OFFSET => !coords.free.contains(&idx::OFFSET) && pin.is_none(),
            _ => false,
        };
        let std_error = if depends_on_free(i) {
            cov_p(i, i).map(|v| v.max(0.0).sqrt())
        } else {
            None
        };
        params_out.push(ParamEstimate {
            name,
            unit,
            value: p[i],
            std_error,
            pinned: if model_fixed && pin.is_none() {
                Some("fixed by the model".into())
            } else {
                pin
            },
        });
    }
    let mut correlations = Vec::new();
    if stats.is_some() {
        for (a_pos, &a) in list.iter().enumerate() {
            for &b in &list[a_pos + 1..] {
                if !(depends_on_free(a) && depends_on_free(b)) {
                    continue;
                }
                if let (Some(ab), Some(aa), Some(bb)) = (cov_p(a, b), cov_p(a, a), cov_p(b, b)) {
                    let c = ab / (aa * bb).sqrt();
                    if c.abs() >= 0.9 && c.is_finite() {
                        correlations.push((
                            param_name(a, curve.test).0.to_string(),
                            param_name(b, curve.test).0.to_string(),
                            c,
                        ));
                    }
                }
            }
        }
    }
    CurveFit {
        file: source_name(curve),
        fabric: curve.fabric.clone(),
        test: curve.test,
        direction: curve.direction.to_string(),
        model,
        status: FitStatus::Fitted,
        params: params_out,
        correlations,
        nrmse,
        aic,
        samples: curve.y.len(),
        free_parameters: k,
        iterations,
        evaluations,
        termination: format!("{termination:?}"),
        elapsed_ms: elapsed.as_secs_f64() * 1e3,
        selection: None,
        physical: p,
        kind: Some(kind),
    }
}
