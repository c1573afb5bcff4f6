//! Fit from characteristic values: the law whose simulated KES protocol reproduces published
//! KES values (EMT, LT, RT; G, 2HG, 2HG5; B, 2HB), by least squares on the relative errors.
//! Three free parameters per test at most, the rest tied to the targets (see docs/fitting.md).

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use serde::{Deserialize, Serialize};

use super::problem::Termination;
use crate::friction::FrictionShape;
use crate::kes::protocol::{simulate, Protocol};
use crate::kes::values::{kes_values, ReadingRules, KES_TENSILE_MAX_FORCE};
use crate::kes::{
    Direction, KesTest, DEG_RAD, GF_CM2_PER_CM_N_M, GF_CM_PER_CM_N, GF_PER_CM_N_PER_M, PER_CM_PER_M,
};
use crate::material::{BendingLaw, ConnectorLaw, FrictionLaw, ShearLaw, ToeShape, TractionLaw};
use crate::params::{CurveFitQuality, FabricParams};

/// Published KES values of one direction, in Kawabata units (any may be missing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "UPPERCASE")]
pub struct DirectionValues {
    pub emt: Option<f64>,
    pub lt: Option<f64>,
    /// Tensile energy [gf·cm/cm²]; WT = LT·F_m·EMT/2, so it stands for LT when LT is absent.
    pub wt: Option<f64>,
    pub rt: Option<f64>,
    pub g: Option<f64>,
    #[serde(rename = "2HG")]
    pub hg: Option<f64>,
    #[serde(rename = "2HG5")]
    pub hg5: Option<f64>,
    pub b: Option<f64>,
    #[serde(rename = "2HB")]
    pub hb: Option<f64>,
}

/// A values file: the fabric's name and its values per direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricValues {
    pub fabric: String,
    #[serde(default)]
    pub warp: DirectionValues,
    #[serde(default)]
    pub weft: DirectionValues,
}

/// How close one value came: target, achieved, relative error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueMatch {
    pub name: &'static str,
    pub target: f64,
    /// None when the simulated curve does not give the value.
    pub achieved: Option<f64>,
    pub rel_error: Option<f64>,
}

/// One law fitted to values.
#[derive(Debug, Clone, Serialize)]
pub struct ValuesFit {
    pub test: KesTest,
    pub direction: Direction,
    pub law: Option<ConnectorLaw>,
    pub matches: Vec<ValueMatch>,
    pub iterations: usize,
    /// Why there is no law, or remarks.
    pub note: Option<String>,
}

/// A value farther than this from its target (relative) is not reached: the law is refused.
pub const VALUE_TOLERANCE: f64 = 0.01;

/// The values of a test as given (any may be missing), in the order of the file.
fn given(test: KesTest, v: &DirectionValues) -> Vec<(&'static str, Option<f64>)> {
    match test {
        KesTest::Tensile => vec![("EMT", v.emt), ("LT", v.lt), ("WT", v.wt), ("RT", v.rt)],
        KesTest::Shear => vec![("G", v.g), ("2HG", v.hg), ("2HG5", v.hg5)],
        KesTest::Bending => vec![("B", v.b), ("2HB", v.hb)],
        KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => vec![],
    }
}

/// The values a test is fitted to, with their targets (WT read as LT = 2 WT/(F_m EMT)
/// when LT is absent; both given are checked to agree by [`check_values`]).
fn targets(test: KesTest, v: &DirectionValues) -> Vec<(&'static str, f64)> {
    let mut t: Vec<(&'static str, f64)> = given(test, v)
        .into_iter()
        .filter_map(|(n, t)| t.map(|t| (n, t)))
        .filter(|(n, _)| *n != "WT")
        .collect();
    if let (KesTest::Tensile, Some(wt), None, Some(emt)) = (test, v.wt, v.lt, v.emt) {
        t.insert(1, ("LT", lt_of(wt, emt)));
    }
    t
}

/// LT = WT/(F_m·EMT/2) in KES units (F_m = 500 gf/cm, EMT in %).
fn lt_of(wt: f64, emt: f64) -> f64 {
    wt / (KES_TENSILE_MAX_FORCE * emt / 100.0 / 2.0)
}

/// A value as a person reads it: 4 significant digits, exponent form when large or small.
pub fn shown(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-3..1e5).contains(&v.abs()) {
        format!("{v:.3e}")
    } else {
        format!("{}", (v * 1e4).round() / 1e4)
    }
}

/// Why a value cannot be a target, from its definition: (lower bound exclusive, upper bound,
/// the reason in the user's terms).
fn physical_range(name: &str) -> (f64, f64, &'static str) {
    match name {
        "EMT" => (
            0.0,
            100.0,
            "a strain in % at 500 gf/cm, above 0 and at most 100 %",
        ),
        "LT" => (
            0.0,
            2.0,
            "WT/(F_m·EMT/2): the loading curve lies between 0 and F_m, so 0 < LT < 2",
        ),
        "RT" => (
            0.0,
            100.0,
            "the energy returned on unloading over the energy stored, in %: 0 < RT < 100",
        ),
        _ => (
            0.0,
            f64::INFINITY,
            "a rigidity or a hysteresis width: positive and finite",
        ),
    }
}

/// One reason [`check_values`] refused a values file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueProblem {
    #[error("{direction} {name} = {shown}: not physical ({why})", shown = shown(*.value))]
    NotPhysical {
        direction: Direction,
        name: &'static str,
        value: f64,
        why: &'static str,
    },
    #[error("{0}: tensile values need EMT (the strain at 500 gf/cm)")]
    TensileWithoutEmt(Direction),
    #[error(
        "{direction} WT = {wt} and LT = {lt} disagree: with EMT = {emt} %, WT = LT·F_m·EMT/2 \
         gives LT = {expected:.4}"
    )]
    WtLtDisagree {
        direction: Direction,
        wt: f64,
        lt: f64,
        emt: f64,
        expected: f64,
    },
    #[error(
        "no KES values for fabric `{0}`: give [warp] and/or [weft] tables with EMT, LT, WT, RT, \
         G, 2HG, 2HG5, B, 2HB"
    )]
    NoValues(String),
}

/// Every problem [`check_values`] found, one a line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ValueProblems(pub Vec<ValueProblem>);

/// Checks a values file before anything is fitted: at least one value; every value finite
/// and inside its physical range; tensile values with EMT; WT and LT consistent. The error
/// names each bad value (`warp RT = 120: …`).
pub fn check_values(values: &FabricValues) -> Result<(), ValueProblems> {
    let mut problems = Vec::new();
    let mut any = false;
    for (direction, v) in [
        (Direction::Warp, &values.warp),
        (Direction::Weft, &values.weft),
    ] {
        for test in [KesTest::Tensile, KesTest::Shear, KesTest::Bending] {
            let g = given(test, v);
            for &(name, value) in &g {
                let Some(value) = value else { continue };
                any = true;
                let (lo, hi, why) = physical_range(name);
                if !value.is_finite() || value <= lo || value > hi {
                    problems.push(ValueProblem::NotPhysical {
                        direction,
                        name,
                        value,
                        why,
                    });
                }
            }
            let has = |n: &str| g.iter().any(|(m, v)| *m == n && v.is_some());
            if test == KesTest::Tensile && !has("EMT") && g.iter().any(|(_, v)| v.is_some()) {
                problems.push(ValueProblem::TensileWithoutEmt(direction));
            }
        }
        if let (Some(wt), Some(lt), Some(emt)) = (v.wt, v.lt, v.emt) {
            let expected = lt_of(wt, emt);
            if (expected / lt - 1.0).abs() > VALUE_TOLERANCE {
                problems.push(ValueProblem::WtLtDisagree {
                    direction,
                    wt,
                    lt,
                    emt,
                    expected,
                });
            }
        }
    }
    if !any {
        problems.push(ValueProblem::NoValues(values.fabric.clone()));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ValueProblems(problems))
    }
}

/// The law for test `test` from free coordinates `u` (log-scaled or bounded), tied to targets.
fn law_from(test: KesTest, u: &[f64], t: &[(&'static str, f64)]) -> ConnectorLaw {
    let get = |name: &str| t.iter().find(|(n, _)| *n == name).map(|x| x.1);
    let squash = |v: f64, lo: f64, hi: f64| lo + (hi - lo) * (1.0 + v.tanh()) / 2.0;
    match test {
        KesTest::Tensile => {
            // power toe over the whole extension: ε₁ = EMT, n from φ, k_t sets EMT,
            // the friction level grows with load (μ) to set RT; a small constant part.
            let emt = get("EMT").unwrap_or(5.0) / 100.0;
            let k_t = u[0].exp();
            let phi = squash(u[1], -0.8, 1.0);
            let mu = squash(u.get(2).copied().unwrap_or(0.0), 0.0, 0.95);
            ConnectorLaw::Traction(TractionLaw {
                k_t,
                eps1: emt,
                f1: k_t * emt * (1.0 + phi) / 2.0,
                eps1_aligned: None,
                friction: FrictionLaw {
                    level: 2.0 * GF_PER_CM_N_PER_M,
                    mu,
                    shape: FrictionShape::Dahl {
                        eps_f: 0.1 * emt,
                        alpha: 1.0,
                    },
                },
                toe: ToeShape::Power,
            })
        }
        KesTest::Shear => {
            let k_s = u[0].exp();
            let level = u[1].exp();
            let mu = squash(u.get(2).copied().unwrap_or(-10.0), 0.0, 0.95);
            ConnectorLaw::Shear(ShearLaw {
                k_s,
                theta0: 0.0,
                friction: FrictionLaw {
                    level,
                    mu,
                    shape: FrictionShape::Dahl {
                        eps_f: 0.3 * DEG_RAD,
                        alpha: 1.0,
                    },
                },
            })
        }
        _ => {
            let k_b = u[0].exp();
            let level = u.get(1).map(|v| v.exp()).unwrap_or(0.0);
            ConnectorLaw::Bending(BendingLaw {
                k_b,
                k0: 0.0,
                friction: FrictionLaw {
                    level,
                    mu: 0.0,
                    shape: FrictionShape::Dahl {
                        eps_f: 0.08 * PER_CM_PER_M,
                        alpha: 1.0,
                    },
                },
            })
        }
    }
}

/// Simulated values of a law (None where the protocol or a value fails).
fn achieved(law: &ConnectorLaw, test: KesTest, names: &[(&'static str, f64)]) -> Vec<Option<f64>> {
    let Ok(protocol) = Protocol::kes(test) else {
        return vec![None; names.len()];
    };
    match simulate(law, &protocol, 401, "values fit", Direction::Warp) {
        Ok(curve) => {
            let reading = kes_values(&curve, &ReadingRules::default());
            names.iter().map(|(n, _)| reading.values.get(n)).collect()
        }
        Err(_) => vec![None; names.len()],
    }
}

struct ValuesProblem {
    test: KesTest,
    targets: Vec<(&'static str, f64)>,
    u: DVector<f64>,
}

impl ValuesProblem {
    fn residual_at(&self, u: &DVector<f64>) -> DVector<f64> {
        let law = law_from(self.test, u.as_slice(), &self.targets);
        let got = achieved(&law, self.test, &self.targets);
        DVector::from_iterator(
            self.targets.len(),
            self.targets
                .iter()
                .zip(got)
                .map(|((_, t), g)| g.map(|g| g / t - 1.0).unwrap_or(10.0)),
        )
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for ValuesProblem {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;
    fn set_params(&mut self, u: &DVector<f64>) {
        self.u.copy_from(u);
    }
    fn params(&self) -> DVector<f64> {
        self.u.clone()
    }
    fn residuals(&self) -> Option<DVector<f64>> {
        Some(self.residual_at(&self.u))
    }
    /// Central differences: the values are read from a simulated curve, not a closed form.
    fn jacobian(&self) -> Option<DMatrix<f64>> {
        let n = self.u.len();
        let m = self.targets.len();
        let mut j = DMatrix::zeros(m, n);
        for c in 0..n {
            let h = 1e-4;
            let (mut up, mut um) = (self.u.clone(), self.u.clone());
            up[c] += h;
            um[c] -= h;
            let d = (self.residual_at(&up) - self.residual_at(&um)) / (2.0 * h);
            j.set_column(c, &d);
        }
        Some(j)
    }
}

/// Initial coordinates from the targets (closed forms of the simplest law).
fn initial(test: KesTest, t: &[(&'static str, f64)]) -> Vec<f64> {
    let get = |name: &str| t.iter().find(|(n, _)| *n == name).map(|x| x.1);
    match test {
        KesTest::Tensile => {
            let emt = get("EMT").unwrap_or(5.0) / 100.0;
            // F_m = F₁ at ε₁ = EMT with a power toe n ≈ 2: k_t ≈ 2 F_m / EMT
            let fm = 500.0 * GF_PER_CM_N_PER_M;
            let mut u = vec![(2.0 * fm / emt).ln(), 0.0];
            if get("RT").is_some() {
                u.push(0.0);
            }
            u
        }
        KesTest::Shear => {
            let g = get("G").unwrap_or(1.0) * GF_PER_CM_N_PER_M / DEG_RAD;
            let hg = get("2HG").unwrap_or(1.0) * GF_PER_CM_N_PER_M;
            let mut u = vec![g.ln(), (hg / 2.0).ln()];
            if get("2HG5").is_some() {
                u.push(-1.0);
            }
            u
        }
        _ => {
            let b = get("B").unwrap_or(0.1) * GF_CM2_PER_CM_N_M;
            let hb = get("2HB").unwrap_or(0.05) * GF_CM_PER_CM_N;
            let mut u = vec![b.ln()];
            if get("2HB").is_some() {
                u.push((hb / 2.0).ln());
            }
            u
        }
    }
}

/// Fits the law of `test` in `direction` to the published values.
pub(crate) fn fit_values(
    test: KesTest,
    direction: Direction,
    values: &DirectionValues,
) -> ValuesFit {
    let no_law = |note: String| ValuesFit {
        test,
        direction,
        law: None,
        matches: Vec::new(),
        iterations: 0,
        note: Some(note),
    };
    let t = targets(test, values);
    if t.is_empty() {
        return no_law(format!("no {test} values given"));
    }
    if test == KesTest::Tensile && !t.iter().any(|(n, _)| *n == "EMT") {
        return no_law("tensile values need EMT".into());
    }
    let u0 = initial(test, &t);
    let problem = ValuesProblem {
        test,
        targets: t.clone(),
        u: DVector::from_vec(u0),
    };
    let (problem, report) = LevenbergMarquardt::new()
        .with_patience(60)
        .minimize(problem);
    let law = law_from(test, problem.u.as_slice(), &t);
    let got = achieved(&law, test, &t);
    let matches: Vec<ValueMatch> = t
        .iter()
        .zip(got)
        .map(|(&(name, target), a)| ValueMatch {
            name,
            target,
            achieved: a,
            rel_error: a.map(|a| a / target - 1.0),
        })
        .collect();
    let missed: Vec<String> = matches
        .iter()
        .filter(|m| m.rel_error.is_none_or(|e| e.abs() > VALUE_TOLERANCE))
        .map(|m| match m.achieved {
            Some(a) => format!(
                "{} = {} is not reached (closest {})",
                m.name,
                shown(m.target),
                shown(a)
            ),
            None => format!(
                "{} = {} is not reached (the law gives none)",
                m.name,
                shown(m.target)
            ),
        })
        .collect();
    let termination = Termination::from(report.termination).to_string();
    let (law, note) = match law.validate() {
        Err(e) => (None, format!("no valid law: {e}")),
        Ok(()) if !missed.is_empty() => (
            None,
            format!(
                "unreachable by the law within {:.0} %: {}",
                100.0 * VALUE_TOLERANCE,
                missed.join(", ")
            ),
        ),
        Ok(()) => (Some(law), termination),
    };
    ValuesFit {
        test,
        direction,
        law,
        matches,
        iterations: report.number_of_evaluations,
        note: Some(note),
    }
}

/// Fits every law a values file allows and assembles the fabric's parameter set.
pub fn fit_fabric_values(values: &FabricValues) -> (FabricParams, Vec<ValuesFit>) {
    let mut params = FabricParams::new(values.fabric.clone());
    let mut fits = Vec::new();
    for (direction, v) in [
        (Direction::Warp, &values.warp),
        (Direction::Weft, &values.weft),
    ] {
        for test in [KesTest::Tensile, KesTest::Shear, KesTest::Bending] {
            let fit = fit_values(test, direction, v);
            if fit.matches.is_empty() {
                continue;
            }
            let laws = if direction == Direction::Weft {
                &mut params.weft
            } else {
                &mut params.warp
            };
            match fit.law {
                Some(ConnectorLaw::Traction(l)) => laws.traction = Some(l),
                Some(ConnectorLaw::Shear(l)) => laws.shear = Some(l),
                Some(ConnectorLaw::Bending(l)) => laws.bending = Some(l),
                None => {}
            }
            let worst = fit
                .matches
                .iter()
                .filter_map(|m| m.rel_error.map(f64::abs))
                .fold(0.0, f64::max);
            params.fits.push(CurveFitQuality {
                file: "(KES values)".into(),
                test: test.to_string(),
                direction: direction.to_string(),
                model: "values: dahl+mu, power toe".into(),
                nrmse: None,
                iterations: fit.iterations,
                termination: format!(
                    "{}; worst value error {:.2} %",
                    fit.note.clone().unwrap_or_default(),
                    100.0 * worst
                ),
                ..Default::default()
            });
            fits.push(fit);
        }
    }
    params.provenance.kestrel_version = env!("CARGO_PKG_VERSION").to_string();
    params.provenance.date = super::fabric::utc_now_rfc3339();
    (params, fits)
}
