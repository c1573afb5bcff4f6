//! The least-squares problem: residuals (F(x_i; p) − y_i)/(max y − min y) along the measured
//! path, bounded coordinates q mapped to unconstrained θ by q = lo + (hi − lo)(1 + sin θ)/2,
//! so bounds are reached at finite θ; the toe bound and the aligned toe by construction.

use std::cell::Cell;
use std::time::Instant;

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt, TerminationReason};
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use serde::{Deserialize, Serialize};

use super::estimate::{initial_estimate, CurveRanges};
use super::path_model::{
    idx, simulate, simulate_with_jacobian, ElasticKind, LawKind, ShapeKind, P,
};
use super::report::{self, CurveFit, FitStatus};
use crate::kes::{Curve, KesTest};

/// Friction model to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitModel {
    /// Dahl / Bliman–Sorine first order (α = 1).
    Dahl,
    /// Dahl with a free exponent α ≥ 1.
    DahlAlpha,
    /// Bliman–Sorine second order (stiction peak).
    Bs2,
    /// Fit Dahl and second order, with μ free and μ = 0, and keep the lowest AIC.
    Auto,
}

impl std::str::FromStr for FitModel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "dahl" => Ok(FitModel::Dahl),
            "dahl-alpha" => Ok(FitModel::DahlAlpha),
            "bs2" => Ok(FitModel::Bs2),
            "auto" => Ok(FitModel::Auto),
            o => Err(format!(
                "unknown model `{o}` — expected dahl, dahl-alpha, bs2 or auto"
            )),
        }
    }
}

/// The load-dependent friction level μ: fitted, or 0 (the paper's additive law).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MuMode {
    Free,
    Zero,
}

/// The traction toe to fit: one shape, or both with the lower AIC kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToeChoice {
    Quadratic,
    Power,
    Auto,
}

impl std::str::FromStr for ToeChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "quadratic" => Ok(ToeChoice::Quadratic),
            "power" => Ok(ToeChoice::Power),
            "auto" => Ok(ToeChoice::Auto),
            o => Err(format!(
                "unknown toe `{o}` — expected quadratic, power or auto"
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    pub model: FitModel,
    /// Traction toe shape (tensile curves only).
    pub toe: ToeChoice,
    pub mu: MuMode,
    /// Fit a force zero offset (the instrument's zero).
    pub offset: bool,
    /// Most residual evaluations for one least-squares run.
    pub max_evaluations: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            model: FitModel::Auto,
            toe: ToeChoice::Auto,
            mu: MuMode::Free,
            offset: true,
            max_evaluations: 400,
        }
    }
}

/// Name of each physical parameter in reports, with its SI unit for each test.
pub fn param_name(i: usize, test: KesTest) -> (&'static str, &'static str) {
    let (force, length) = match test {
        KesTest::Tensile => ("N/m", "-"),
        KesTest::Shear => ("N/m", "rad"),
        KesTest::Bending => ("N", "1/m"),
        KesTest::Loop => ("N", "m"),
    };
    match i {
        idx::K => match test {
            KesTest::Tensile => ("k_t", "N/m"),
            KesTest::Shear => ("k_s", "N/(m*rad)"),
            KesTest::Bending => ("k_b", "N*m"),
            KesTest::Loop => ("k", "N/m"),
        },
        idx::E1 => ("eps1", "-"),
        idx::F1 => ("f1", "N/m"),
        idx::E1A => ("eps1_aligned", "-"),
        idx::LEVEL => ("level", force),
        idx::MU => ("mu", "-"),
        idx::EPSF => ("eps_f", length),
        idx::ALPHA => ("alpha", "-"),
        idx::ETA => ("eta", "-"),
        idx::RATIO => ("ratio", "-"),
        _ => ("offset", force),
    }
}

/// Bounded coordinates q of a law: q = p except q[F1] = φ ∈ [0, 1] with
/// F₁ = k ε₁ (1 + φ)/2 and q[E1A] = ψ ∈ [0, 1] with ε₁' = ε₁(1 − φ + φψ).
#[derive(Debug, Clone)]
pub(crate) struct Coordinates {
    pub kind: LawKind,
    /// Physical indices of the free coordinates, in θ order.
    pub free: Vec<usize>,
    pub lo: P,
    pub hi: P,
    /// Current coordinates (free and pinned).
    pub q: P,
}

impl Coordinates {
    pub fn physical(&self, q: &P) -> P {
        let mut p = *q;
        let phi = q[idx::F1];
        match self.kind.elastic {
            ElasticKind::ToeLine => {
                p[idx::F1] = q[idx::K] * q[idx::E1] * (1.0 + phi) / 2.0;
                p[idx::E1A] = q[idx::E1] * (1.0 - phi + phi * q[idx::E1A]);
            }
            ElasticKind::PowerToeLine => {
                // ε₁' = ε₁ − (1 − ψ)·0.95·F₁/k keeps F₁' ≥ 0.05 F₁ > 0
                p[idx::F1] = q[idx::K] * q[idx::E1] * (1.0 + phi) / 2.0;
                p[idx::E1A] =
                    q[idx::E1] - (1.0 - q[idx::E1A]) * 0.95 * q[idx::E1] * (1.0 + phi) / 2.0;
            }
            ElasticKind::Linear => {}
        }
        p
    }

    /// Coordinates from physical parameters (inverse of [`physical`]).
    pub fn from_physical(kind: LawKind, p: &P) -> P {
        let mut q = *p;
        if kind.elastic == ElasticKind::PowerToeLine {
            let phi = (2.0 * p[idx::F1] / (p[idx::K] * p[idx::E1]) - 1.0).clamp(-0.9, 1.0);
            q[idx::F1] = phi;
            let span = 0.95 * p[idx::E1] * (1.0 + phi) / 2.0;
            q[idx::E1A] = (1.0 - (p[idx::E1] - p[idx::E1A]) / span).clamp(0.0, 1.0);
        } else if kind.elastic == ElasticKind::ToeLine {
            let phi = (2.0 * p[idx::F1] / (p[idx::K] * p[idx::E1]) - 1.0).clamp(0.0, 1.0);
            q[idx::F1] = phi;
            let e1a = p[idx::E1A] / p[idx::E1];
            q[idx::E1A] = if phi > 0.0 {
                ((e1a - 1.0 + phi) / phi).clamp(0.0, 1.0)
            } else {
                1.0
            };
        }
        q
    }

    /// ∂p_i/∂q_j for the free coordinates: `dp[i][col]`.
    fn dp_dq(&self, q: &P) -> Vec<[f64; idx::N]> {
        let mut cols = Vec::with_capacity(self.free.len());
        for &j in &self.free {
            let mut c = [0.0; idx::N];
            c[j] = 1.0;
            if self.kind.elastic == ElasticKind::PowerToeLine {
                let (k, e1, phi, psi) = (q[idx::K], q[idx::E1], q[idx::F1], q[idx::E1A]);
                let a = 0.95 * (1.0 - psi);
                match j {
                    idx::K => c[idx::F1] = e1 * (1.0 + phi) / 2.0,
                    idx::E1 => {
                        c[idx::F1] = k * (1.0 + phi) / 2.0;
                        c[idx::E1A] = 1.0 - a * (1.0 + phi) / 2.0;
                    }
                    idx::F1 => {
                        c[idx::F1] = k * e1 / 2.0;
                        c[idx::E1A] = -a * e1 / 2.0;
                    }
                    idx::E1A => c[idx::E1A] = 0.95 * e1 * (1.0 + phi) / 2.0,
                    _ => {}
                }
            } else if self.kind.elastic == ElasticKind::ToeLine {
                let (k, e1, phi, psi) = (q[idx::K], q[idx::E1], q[idx::F1], q[idx::E1A]);
                match j {
                    idx::K => c[idx::F1] = e1 * (1.0 + phi) / 2.0,
                    idx::E1 => {
                        c[idx::F1] = k * (1.0 + phi) / 2.0;
                        c[idx::E1A] = 1.0 - phi + phi * psi;
                    }
                    idx::F1 => {
                        c[idx::F1] = k * e1 / 2.0;
                        c[idx::E1A] = e1 * (psi - 1.0);
                    }
                    idx::E1A => c[idx::E1A] = e1 * phi,
                    _ => {}
                }
            }
            cols.push(c);
        }
        cols
    }

    fn theta(&self) -> DVector<f64> {
        DVector::from_iterator(
            self.free.len(),
            self.free.iter().map(|&j| {
                let (lo, hi) = (self.lo[j], self.hi[j]);
                let t = (2.0 * (self.q[j] - lo) / (hi - lo) - 1.0).clamp(-0.999, 0.999);
                t.asin()
            }),
        )
    }

    fn set_theta(&mut self, theta: &DVector<f64>) {
        for (k, &j) in self.free.iter().enumerate() {
            let (lo, hi) = (self.lo[j], self.hi[j]);
            self.q[j] = lo + (hi - lo) * (1.0 + theta[k].sin()) / 2.0;
        }
    }
}

/// Live progress of a fit: which model, the iteration and the current NRMSE.
#[derive(Debug, Clone, PartialEq)]
pub struct FitProgress {
    pub model: String,
    /// Jacobian evaluations so far in this least-squares run.
    pub iteration: usize,
    /// RMS(residual)/(max − min of the force) at the last evaluation.
    pub nrmse: f64,
}

/// Where progress goes (a channel to a UI, a progress bar); called once per iteration.
pub type ProgressSink<'a> = &'a (dyn Fn(&FitProgress) + Sync);

/// The Levenberg–Marquardt problem over θ.
pub(crate) struct PathProblem<'a> {
    pub coords: Coordinates,
    x: &'a [f64],
    y: &'a [f64],
    /// 1/(max y − min y): residuals are fractions of the force range.
    inv_scale: f64,
    theta: DVector<f64>,
    pub jacobian_evaluations: Cell<usize>,
    /// NRMSE at the last residual evaluation (for progress reports).
    last_nrmse: Cell<f64>,
    progress: Option<(ProgressSink<'a>, &'a str)>,
}

impl<'a> PathProblem<'a> {
    pub fn new(coords: Coordinates, x: &'a [f64], y: &'a [f64], y_range: f64) -> Self {
        let theta = coords.theta();
        let mut p = Self {
            coords,
            x,
            y,
            inv_scale: 1.0 / y_range,
            theta: theta.clone(),
            jacobian_evaluations: Cell::new(0),
            last_nrmse: Cell::new(f64::NAN),
            progress: None,
        };
        p.set_params(&theta);
        p
    }

    /// Forces of the law at the current coordinates.
    pub fn forces(&self) -> Vec<f64> {
        let p = self.coords.physical(&self.coords.q);
        let mut out = vec![0.0; self.x.len()];
        simulate(self.coords.kind, &p, self.x, &mut out);
        out
    }

    /// Jacobian of the scaled residuals with respect to the free coordinates q (not θ).
    pub fn jacobian_q(&self) -> DMatrix<f64> {
        let m = self.x.len();
        let p = self.coords.physical(&self.coords.q);
        let mut f = vec![0.0; m];
        let mut jp = vec![0.0; m * idx::N];
        simulate_with_jacobian(self.coords.kind, &p, self.x, &mut f, &mut jp);
        let cols = self.coords.dp_dq(&self.coords.q);
        let mut j = DMatrix::zeros(m, cols.len());
        for (c, dp) in cols.iter().enumerate() {
            let nz: Vec<(usize, f64)> = dp
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(i, v)| (i, *v))
                .collect();
            for i in 0..m {
                let row = &jp[i * idx::N..(i + 1) * idx::N];
                let mut s = 0.0;
                for &(k, v) in &nz {
                    s += row[k] * v;
                }
                j[(i, c)] = s * self.inv_scale;
            }
        }
        j
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for PathProblem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, theta: &DVector<f64>) {
        self.theta.copy_from(theta);
        self.coords.set_theta(theta);
    }

    fn params(&self) -> DVector<f64> {
        self.theta.clone()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let f = self.forces();
        let r = DVector::from_iterator(
            f.len(),
            f.iter().zip(self.y).map(|(a, b)| (a - b) * self.inv_scale),
        );
        self.last_nrmse
            .set((r.norm_squared() / r.len().max(1) as f64).sqrt());
        r.iter().all(|v| v.is_finite()).then_some(r)
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        self.jacobian_evaluations
            .set(self.jacobian_evaluations.get() + 1);
        if let Some((sink, model)) = self.progress {
            sink(&FitProgress {
                model: model.to_string(),
                iteration: self.jacobian_evaluations.get(),
                nrmse: self.last_nrmse.get(),
            });
        }
        let mut j = self.jacobian_q();
        for (c, &k) in self.coords.free.iter().enumerate() {
            let (lo, hi) = (self.coords.lo[k], self.coords.hi[k]);
            let dq = (hi - lo) * self.theta[c].cos() / 2.0;
            j.column_mut(c).scale_mut(dq);
        }
        j.iter().all(|v| v.is_finite()).then_some(j)
    }
}

/// The law structure a curve's test calls for (`power` picks the power toe for tensile).
pub fn law_kind(test: KesTest, shape: ShapeKind, power: bool) -> LawKind {
    LawKind {
        elastic: match test {
            KesTest::Tensile if power => ElasticKind::PowerToeLine,
            KesTest::Tensile => ElasticKind::ToeLine,
            _ => ElasticKind::Linear,
        },
        shape,
    }
}

/// Coordinates, bounds and free set for a model on a curve, from an initial estimate.
pub(crate) fn coordinates(
    kind: LawKind,
    test: KesTest,
    p0: &P,
    ranges: &CurveRanges,
    alpha_free: bool,
    mu_free: bool,
    offset: bool,
) -> Coordinates {
    let yr = ranges.y_range();
    let xr = ranges.x_range();
    let mut lo = [0.0; idx::N];
    let mut hi = [0.0; idx::N];
    let k0 = p0[idx::K].abs().max(1e-300);
    // a generic loop's rigidity may be of either sign (a tilted loop); a law's is positive
    let (k_lo, k_hi) = if test == KesTest::Loop {
        let span = 50.0 * k0 + yr / xr.max(1e-300);
        (-span, span)
    } else {
        (k0 / 50.0, k0 * 50.0)
    };
    lo[idx::K] = k_lo;
    hi[idx::K] = k_hi;
    lo[idx::E1] = 1e-3 * ranges.x_max.abs().max(1e-12);
    hi[idx::E1] = ranges.x_max.abs().max(1e-12);
    // φ: F₁ = k ε₁ (1 + φ)/2; the power toe goes down to n = 2/(1 + φ) = 10
    lo[idx::F1] = if kind.elastic == ElasticKind::PowerToeLine {
        -0.8
    } else {
        0.0
    };
    hi[idx::F1] = 1.0;
    lo[idx::E1A] = 0.0;
    hi[idx::E1A] = 1.0;
    lo[idx::LEVEL] = 0.0;
    hi[idx::LEVEL] = yr;
    lo[idx::MU] = 0.0;
    hi[idx::MU] = 0.99;
    lo[idx::EPSF] = 1e-5 * xr;
    hi[idx::EPSF] = xr;
    lo[idx::ALPHA] = 1.0;
    hi[idx::ALPHA] = 8.0;
    lo[idx::ETA] = 0.01;
    hi[idx::ETA] = 0.99;
    lo[idx::RATIO] = 0.0;
    hi[idx::RATIO] = 0.95;
    lo[idx::OFFSET] = -0.1 * yr;
    hi[idx::OFFSET] = 0.1 * yr;
    let mut free = vec![idx::K];
    if kind.elastic.is_traction() {
        free.extend([idx::E1, idx::F1, idx::E1A]);
    }
    free.extend([idx::LEVEL, idx::EPSF]);
    if mu_free {
        free.push(idx::MU);
    }
    match kind.shape {
        ShapeKind::Dahl if alpha_free => free.push(idx::ALPHA),
        ShapeKind::Dahl => {}
        ShapeKind::Bs2 => free.extend([idx::ETA, idx::RATIO]),
    }
    if offset {
        free.push(idx::OFFSET);
    }
    let mut p = *p0;
    if !mu_free {
        p[idx::MU] = 0.0;
    }
    if !alpha_free {
        p[idx::ALPHA] = 1.0;
    }
    if !offset {
        p[idx::OFFSET] = 0.0;
    }
    let mut q = Coordinates::from_physical(kind, &p);
    // start strictly inside the bounds
    for &j in &free {
        let (l, h) = (lo[j], hi[j]);
        q[j] = q[j].clamp(l + 1e-3 * (h - l), h - 1e-3 * (h - l));
    }
    Coordinates {
        kind,
        free,
        lo,
        hi,
        q,
    }
}

/// A coordinate closer than this fraction of its span to a bound after a run is pinned there.
/// (Wider margins pin coordinates that are merely passing by and wreck the fit.)
const AT_BOUND: f64 = 0.005;

/// One least-squares run; returns the problem at its optimum, the termination, evaluations.
fn run_lm<'a>(
    coords: Coordinates,
    x: &'a [f64],
    y: &'a [f64],
    y_range: f64,
    max_evaluations: usize,
    progress: Option<(ProgressSink<'a>, &'a str)>,
) -> (PathProblem<'a>, TerminationReason, usize) {
    let mut problem = PathProblem::new(coords, x, y, y_range);
    problem.progress = progress;
    let n = problem.coords.free.len().max(1);
    let lm = LevenbergMarquardt::new()
        .with_patience((max_evaluations / (n + 1)).max(1))
        .with_ftol(1e-7)
        .with_xtol(1e-7);
    let (problem, report) = lm.minimize(problem);
    (problem, report.termination, report.number_of_evaluations)
}

/// Samples the least-squares runs aim for: longer curves are thinned to about this many, or
/// to an eighth of their samples when that is more (long noisy records keep their detail).
pub const FIT_SAMPLES: usize = 240;

/// The indices of the samples the least-squares runs use: every `stride`-th sample, the first
/// and the last, and every turning point of the path (a sample where x stops rising or
/// falling). The laws are rate independent and exact over any monotone increment (the friction
/// operators step in closed form, the toe remembers only the largest strain, which a turning
/// point or the current sample holds), so the law driven along the thinned path gives exactly
/// the forces of the full path at the samples kept.
pub fn thinned_samples(x: &[f64], target: usize) -> Vec<usize> {
    let n = x.len();
    let stride = n.div_ceil(target.max(1)).max(1);
    if stride == 1 {
        return (0..n).collect();
    }
    (0..n)
        .filter(|&i| {
            if i == 0 || i + 1 == n || i % stride == 0 {
                return true;
            }
            let before = x[i] - x[i - 1];
            let after = x[i + 1] - x[i];
            before * after < 0.0 || (before == 0.0) != (after == 0.0)
        })
        .collect()
}

/// The samples of (x, y) that [`thinned_samples`] keeps.
pub(crate) fn thinned_path(x: &[f64], y: &[f64], target: usize) -> (Vec<f64>, Vec<f64>) {
    thinned_samples(x, target)
        .into_iter()
        .map(|i| (x[i], y[i]))
        .unzip()
}

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
    let mut coords = coordinates(
        kind,
        curve.test,
        &p0,
        &ranges,
        alpha_free,
        mu == MuMode::Free,
        options.offset,
    );
    let mut pinned: Vec<(usize, String)> = Vec::new();
    // ε₁' is identified only by samples below ε₁ after the strain has reached it
    if kind.elastic.is_traction() {
        let e1 = coords.physical(&coords.q)[idx::E1];
        let reached = curve.x.iter().position(|&v| v >= e1);
        let returns = reached.is_some_and(|r| curve.x[r..].iter().any(|&v| v < 0.9 * e1));
        if !returns {
            coords.free.retain(|&j| j != idx::E1A);
            coords.q[idx::E1A] = 1.0;
            pinned.push((
                idx::E1A,
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
        let at_bound: Vec<(usize, bool)> = coords
            .free
            .iter()
            .filter_map(|&j| {
                let span = coords.hi[j] - coords.lo[j];
                let t = (coords.q[j] - coords.lo[j]) / span;
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
                coords.free.retain(|&k| k != j);
                let value = if upper { coords.hi[j] } else { coords.lo[j] };
                coords.q[j] = value;
                let (name, _) = param_name(j, curve.test);
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
        if round == 1 && matches!(termination, TerminationReason::LostPatience) {
            continue;
        }
        // pin the worst-determined coordinate and refit
        let stats = report::covariance(&problem);
        let worst = stats.and_then(|(_, se_q)| {
            coords
                .free
                .iter()
                .enumerate()
                .filter_map(|(c, &j)| {
                    let value = coords.q[j];
                    let bound_span = coords.hi[j] - coords.lo[j];
                    let relative = match j {
                        idx::MU
                        | idx::ETA
                        | idx::RATIO
                        | idx::F1
                        | idx::E1A
                        | idx::OFFSET
                        | idx::ALPHA => thinning * se_q[c] / bound_span,
                        _ => thinning * se_q[c] / value.abs().max(1e-300),
                    };
                    (relative > 1.0 || !relative.is_finite()).then_some((j, relative))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
        });
        match worst {
            Some((j, rel)) => {
                coords.free.retain(|&k| k != j);
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
    report::build(
        curve,
        &full,
        kind,
        label.clone(),
        &pinned,
        termination,
        evaluations,
        iterations,
        start.elapsed(),
    )
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
        return candidates.remove(0);
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
            b
        }
        None => CurveFit::failed(curve, "no model could be fitted".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use levenberg_marquardt::differentiate_numerically;

    #[test]
    fn analytic_jacobian_matches_differentiate_numerically() {
        // a tensile-like path with a return below ε₁ and a second loading
        let mut x: Vec<f64> = (0..=120).map(|i| 0.06 * i as f64 / 120.0).collect();
        x.extend((1..=80).map(|i| 0.06 - 0.05 * i as f64 / 80.0));
        x.extend((1..=60).map(|i| 0.01 + 0.03 * i as f64 / 60.0));
        for (elastic_test, shape, alpha_free) in [
            (KesTest::Tensile, ShapeKind::Dahl, false),
            (KesTest::Tensile, ShapeKind::Bs2, false),
            (KesTest::Shear, ShapeKind::Dahl, true),
            (KesTest::Bending, ShapeKind::Bs2, false),
        ] {
            let kind = law_kind(elastic_test, shape, false);
            let mut p = [0.0; idx::N];
            p[idx::K] = 1000.0;
            p[idx::E1] = 0.03;
            p[idx::F1] = 22.0;
            p[idx::E1A] = 0.024;
            p[idx::LEVEL] = 1.5;
            p[idx::MU] = 0.2;
            p[idx::EPSF] = 0.004;
            p[idx::ALPHA] = if alpha_free { 1.6 } else { 1.0 };
            p[idx::ETA] = 0.3;
            p[idx::RATIO] = 0.4;
            p[idx::OFFSET] = 0.1;
            let mut y = vec![0.0; x.len()];
            simulate(kind, &p, &x, &mut y);
            let ranges = CurveRanges::of(&x, &y);
            // perturb the start so the Jacobian is not taken at the optimum
            let mut p0 = p;
            p0[idx::K] *= 1.1;
            p0[idx::LEVEL] *= 0.8;
            p0[idx::EPSF] *= 1.3;
            let coords = coordinates(kind, elastic_test, &p0, &ranges, alpha_free, true, true);
            let mut problem = PathProblem::new(coords, &x, &y, ranges.y_range());
            let analytic = problem.jacobian().unwrap();
            let numeric = differentiate_numerically(&mut problem).unwrap();
            let scale = analytic.amax().max(1.0);
            let diff = (&analytic - &numeric).amax();
            assert!(
                diff < 1e-5 * scale,
                "{elastic_test} {shape:?}: max difference {diff} (scale {scale})"
            );
        }
    }
}
