//! The least-squares problem: residuals (F(x_i; p(q)) − y_i)/(max y − min y) along each path
//! (one per specimen, stacked), over θ with q = lo + (hi − lo)(1 + sin θ)/2; Jacobian
//! J = ∂F/∂p · ∂p/∂q · dq/dθ, analytic.

use std::cell::{Cell, RefCell};

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DMatrixView, DVector, DVectorView, Dyn, Owned};

use super::coords::Coordinates;
use super::options::{FitProgress, ProgressSink};
use super::path_model::{idx, simulate, simulate_with_jacobian, LawKind, P};
use super::report::law_of;
pub use super::termination::Termination;

mod compressed;
use crate::kes::{Curve, KesTest};
use crate::params::FittedLaw;
use compressed::Compressed;

/// The measured KES values a value-weighted fit (`--weight-values W`) pulls the law toward:
/// the law driven along each specimen's measured path and read as the measured curve is
/// (`report::law_values_along`) gives values v, each adds a residual row
/// W·sqrt(N/m)·(v/v_measured − 1) (N curve rows, m values), so that the objective over N is
/// NRMSE² + W²·(RMS of the relative value gaps)².
#[derive(Debug, Clone)]
pub(crate) struct ValueTargets {
    pub test: KesTest,
    pub names: Vec<&'static str>,
    pub measured: Vec<f64>,
    /// W, the weight of the values' RMS relative gap against the curve's NRMSE.
    pub weight: f64,
    /// The specimens whose paths the law is driven along (their values are `measured`).
    pub specimens: Vec<Curve>,
}

/// The relative gap of a value the law cannot give (its forces are not finite, a value is
/// missing).
const MISSING_VALUE_GAP: f64 = 1.0;

impl ValueTargets {
    /// The relative gaps v/v_measured − 1 of the law of `kind` at `p` along the measured paths.
    pub(crate) fn gaps(&self, kind: LawKind, p: &P) -> Vec<f64> {
        let fitted = law_of(kind, self.test, p).and_then(|law| {
            let f = FittedLaw {
                law,
                offset: p[idx::OFFSET],
            };
            let specimens: Vec<&Curve> = self.specimens.iter().collect();
            super::report::law_values_along(&specimens, &f)
        });
        self.names
            .iter()
            .zip(&self.measured)
            .map(|(n, m)| {
                fitted
                    .and_then(|v| v.get(n))
                    .map_or(MISSING_VALUE_GAP, |v| v / m - 1.0)
            })
            .collect()
    }

    /// RMS of the relative gaps.
    pub(crate) fn rms_gap(&self, kind: LawKind, p: &P) -> f64 {
        let g = self.gaps(kind, p);
        (g.iter().map(|v| v * v).sum::<f64>() / g.len().max(1) as f64).sqrt()
    }
}

/// One specimen's path and forces, its residuals scaled by its own force range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment<'a> {
    pub x: &'a [f64],
    pub y: &'a [f64],
    /// max y − min y of the specimen (of every sample, also when `y` is thinned).
    pub y_range: f64,
}

/// The Levenberg–Marquardt problem over θ: one law driven from a virgin state along every
/// segment, the scaled residuals of all segments stacked.
pub(crate) struct PathProblem<'a> {
    pub coords: Coordinates,
    segments: Vec<Segment<'a>>,
    /// Σ samples of the segments.
    rows: usize,
    /// Value rows after the curve rows (`--weight-values`).
    values: Option<ValueTargets>,
    theta: DVector<f64>,
    pub jacobian_evaluations: Cell<usize>,
    /// NRMSE at the last residual evaluation (for progress reports).
    last_nrmse: Cell<f64>,
    /// Scratch of the drive with sensitivities: forces and ∂F/∂p of the longest segment
    /// (kept between evaluations, so that none allocates them).
    drive_scratch: RefCell<(Vec<f64>, Vec<f64>)>,
    progress: Option<(ProgressSink<'a>, &'a str)>,
}

impl<'a> PathProblem<'a> {
    /// One path: residuals (F − y)/y_range.
    #[cfg(test)]
    pub(crate) fn new(coords: Coordinates, x: &'a [f64], y: &'a [f64], y_range: f64) -> Self {
        Self::joint(coords, vec![Segment { x, y, y_range }])
    }

    /// Several specimens of one curve: each driven from a virgin state along its own path.
    pub(crate) fn joint(coords: Coordinates, segments: Vec<Segment<'a>>) -> Self {
        let theta = coords.theta();
        let rows = segments.iter().map(|s| s.x.len()).sum();
        let mut p = Self {
            coords,
            segments,
            rows,
            values: None,
            theta: theta.clone(),
            jacobian_evaluations: Cell::new(0),
            last_nrmse: Cell::new(f64::NAN),
            drive_scratch: RefCell::new((Vec::new(), Vec::new())),
            progress: None,
        };
        p.set_params(&theta);
        p
    }

    /// Adds the value rows of a value-weighted fit (none when `values` is None or W = 0).
    pub(crate) fn with_values(mut self, values: Option<ValueTargets>) -> Self {
        self.values = values.filter(|v| v.weight > 0.0 && !v.names.is_empty());
        self
    }

    /// The value rows at physical parameters `p`: W·sqrt(N/m)·gap.
    fn value_rows(&self, p: &P) -> Vec<f64> {
        let Some(v) = &self.values else {
            return Vec::new();
        };
        let scale = v.weight * (self.rows as f64 / v.names.len() as f64).sqrt();
        v.gaps(self.coords.kind, p)
            .into_iter()
            .map(|g| scale * g)
            .collect()
    }

    /// Jacobian of the scaled residuals with respect to the free coordinates q (not θ).
    #[cfg(test)]
    pub(crate) fn jacobian_q(&self) -> DMatrix<f64> {
        self.jacobian_scaled(None, None)
    }

    /// The Jacobian of the scaled residuals, each column c of the curve rows times
    /// `column_scale[c]` when given (dq/dθ: the Jacobian in θ), in one pass over the path;
    /// the forces of that pass give the scaled curve residuals into `curve_rows` when asked.
    fn jacobian_scaled(
        &self,
        column_scale: Option<&[f64]>,
        curve_rows: Option<&mut [f64]>,
    ) -> DMatrix<f64> {
        let mut j = DMatrix::zeros(self.total_rows(), self.coords.free.len());
        let total_rows = j.nrows();
        self.fill_jacobian(column_scale, curve_rows, j.as_mut_slice(), total_rows);
        j
    }

    /// Curve rows and value rows.
    pub(crate) fn total_rows(&self) -> usize {
        self.rows + self.values.as_ref().map_or(0, |v| v.names.len())
    }

    /// [`Self::jacobian_scaled`] written into `storage`, column-major with `total_rows` rows
    /// (every entry of the first n columns is written: no zeroing needed).
    fn fill_jacobian(
        &self,
        column_scale: Option<&[f64]>,
        mut curve_rows: Option<&mut [f64]>,
        storage: &mut [f64],
        total_rows: usize,
    ) {
        let p = self.coords.physical(&self.coords.q);
        let cols = self.coords.dp_dq();
        let nz: Vec<Vec<(usize, f64)>> = cols
            .iter()
            .map(|dp| {
                dp.iter()
                    .enumerate()
                    .filter(|(_, v)| **v != 0.0)
                    .map(|(i, v)| (i, *v))
                    .collect()
            })
            .collect();
        debug_assert_eq!(total_rows, self.total_rows());
        debug_assert!(storage.len() >= total_rows * cols.len());
        let longest = self.segments.iter().map(|s| s.x.len()).max().unwrap_or(0);
        let mut scratch = self.drive_scratch.borrow_mut();
        let (f, jp) = &mut *scratch;
        f.resize(longest, 0.0);
        jp.resize(longest * idx::N, 0.0);
        let mut at = 0;
        for s in &self.segments {
            let m = s.x.len();
            simulate_with_jacobian(
                self.coords.kind,
                &p,
                s.x,
                &mut f[..m],
                &mut jp[..m * idx::N],
            );
            let inv_scale = 1.0 / s.y_range;
            if let Some(rows) = curve_rows.as_deref_mut() {
                for ((r, fk), y) in rows[at..at + m].iter_mut().zip(&f[..m]).zip(s.y) {
                    *r = (fk - y) * inv_scale;
                }
            }
            // column-major on both sides: column c of the segment is a combination of
            // contiguous runs of ∂F/∂p (the same sums, term by term, as row by row)
            let sensitivity = |k: usize| &jp[k * m..(k + 1) * m];
            for (c, nz) in nz.iter().enumerate() {
                let column = &mut storage[c * total_rows + at..c * total_rows + at + m];
                let Some((&(k0, v0), more)) = nz.split_first() else {
                    column.iter_mut().for_each(|out| *out = 0.0);
                    continue;
                };
                // Σ ∂F/∂p·∂p/∂q term by term, then / y_range and × dq/dθ (one pass each,
                // the same operations in the same order as element by element)
                let scale = column_scale.map(|d| d[c]);
                if more.is_empty() {
                    // most coordinates are one physical parameter: a scaled copy
                    let terms = column.iter_mut().zip(sensitivity(k0));
                    match scale {
                        Some(d) => {
                            terms.for_each(|(out, dp)| *out = (0.0 + dp * v0) * inv_scale * d)
                        }
                        None => terms.for_each(|(out, dp)| *out = (0.0 + dp * v0) * inv_scale),
                    }
                    continue;
                }
                for (out, dp) in column.iter_mut().zip(sensitivity(k0)) {
                    *out = 0.0 + dp * v0;
                }
                for &(k, v) in more {
                    for (out, dp) in column.iter_mut().zip(sensitivity(k)) {
                        *out += dp * v;
                    }
                }
                match scale {
                    Some(d) => column
                        .iter_mut()
                        .for_each(|out| *out = *out * inv_scale * d),
                    None => column.iter_mut().for_each(|out| *out *= inv_scale),
                }
            }
            at += m;
        }
        if total_rows > self.rows {
            // the values are read from the law's curve along the measured paths: forward differences in q
            // (backward at the upper bound: the law stays inside its range)
            let r0 = self.value_rows(&self.coords.physical(&self.coords.q));
            for (c, &jj) in self.coords.free.iter().enumerate() {
                let (lo, hi) = (self.coords.lo[jj], self.coords.hi[jj]);
                let h = 1e-6 * (hi - lo);
                let mut qs = self.coords.q;
                qs[jj] = if qs[jj] + h <= hi {
                    qs[jj] + h
                } else {
                    qs[jj] - h
                };
                let step = qs[jj] - self.coords.q[jj];
                let rs = self.value_rows(&self.coords.physical(&qs));
                let d = column_scale.map_or(1.0, |d| d[c]);
                for (k, (a, b)) in rs.iter().zip(&r0).enumerate() {
                    let g = if step != 0.0 { (a - b) / step } else { 0.0 };
                    storage[c * total_rows + self.rows + k] =
                        if column_scale.is_some() { g * d } else { g };
                }
            }
        }
    }

    /// Covariance of the free coordinates q, s²(JᵀJ)⁻¹ with s² = RSS/(m − n); None if JᵀJ is
    /// singular or no degrees of freedom are left. (The strategy ranks coordinates by it to
    /// pin the worst determined; reports use [`Self::identified_covariance`].)
    pub(crate) fn covariance(&self) -> Option<DMatrix<f64>> {
        let (jtj, s2) = self.normal_matrix()?;
        Some(jtj.try_inverse()? * s2)
    }

    /// JᵀJ and s² = RSS/(m − n), J and r from one drive of the law with its sensitivities;
    /// None without degrees of freedom or where a residual is not finite.
    pub(crate) fn normal_matrix(&self) -> Option<(DMatrix<f64>, f64)> {
        let (m, n) = (self.total_rows(), self.coords.free.len());
        if m <= n || n == 0 {
            return None;
        }
        let mut storage = Vec::new();
        self.augmented(None, &mut storage);
        let (j, r) = storage.split_at(m * n);
        let r = DVectorView::from_slice(r, m);
        if !all_finite_slice(r.as_slice()) {
            return None;
        }
        let j = DMatrixView::from_slice(j, m, n);
        Some((j.tr_mul(&j), r.norm_squared() / (m - n) as f64))
    }

    /// The covariance a report shows: s²(JᵀJ)⁻¹ over the coordinates JᵀJ identifies; the rows
    /// and columns of a coordinate it does not identify ([`not_identified`]) are NaN, so no
    /// number is made up for it. None if even the rest cannot be inverted.
    pub(crate) fn identified_covariance(&self) -> Option<DMatrix<f64>> {
        let (jtj, s2) = self.normal_matrix()?;
        identified_inverse(&jtj, s2)
    }

    /// The problem at its current coordinates as plain values.
    pub(crate) fn solution(
        &self,
        termination: Termination,
        evaluations: usize,
        iterations: usize,
    ) -> Solution {
        Solution {
            params: self.coords.physical(&self.coords.q),
            covariance: self.identified_covariance(),
            with_pins_freed: None,
            coords: self.coords.clone(),
            termination,
            evaluations,
            iterations,
        }
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
        let p = self.coords.physical(&self.coords.q);
        let mut curve = vec![0.0; self.rows];
        let mut at = 0;
        for s in &self.segments {
            let m = s.x.len();
            let rows = &mut curve[at..at + m];
            simulate(self.coords.kind, &p, s.x, rows);
            let inv = 1.0 / s.y_range;
            for (v, y) in rows.iter_mut().zip(s.y) {
                *v = (*v - y) * inv;
            }
            at += m;
        }
        self.with_value_rows(curve)
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        self.count_jacobian();
        self.jacobian_theta()
    }
}

impl PathProblem<'_> {
    /// Counts a Jacobian evaluation (a Levenberg–Marquardt iteration) and reports progress.
    fn count_jacobian(&self) {
        self.jacobian_evaluations
            .set(self.jacobian_evaluations.get() + 1);
        if let Some((sink, model)) = self.progress {
            sink(&FitProgress {
                model: model.to_string(),
                iteration: self.jacobian_evaluations.get(),
                nrmse: self.last_nrmse.get(),
            });
        }
    }

    /// The scaled curve residuals followed by the value rows; records the curve's NRMSE.
    /// None where any is not finite.
    fn with_value_rows(&self, curve: Vec<f64>) -> Option<DVector<f64>> {
        let curve_rss: f64 = curve.iter().map(|v| v * v).sum();
        self.last_nrmse
            .set((curve_rss / self.rows.max(1) as f64).sqrt());
        let mut rows = curve;
        if self.values.is_some() {
            rows.extend(self.value_rows(&self.coords.physical(&self.coords.q)));
        }
        rows.iter()
            .all(|v| v.is_finite())
            .then(|| DVector::from_vec(rows))
    }

    /// dq/dθ of each free coordinate at the current θ.
    fn dq_dtheta(&self) -> Vec<f64> {
        (0..self.coords.free.len())
            .map(|c| self.coords.dq_dtheta(c, self.theta[c]))
            .collect()
    }

    /// The Jacobian of the residuals in θ; None where it is not finite.
    fn jacobian_theta(&self) -> Option<DMatrix<f64>> {
        let j = self.jacobian_scaled(Some(&self.dq_dtheta()), None);
        all_finite(&j).then_some(j)
    }

    /// The Jacobian in θ and the residuals from one drive of the law with its sensitivities,
    /// as the column-major m × (n + 1) matrix [J | r] written into `storage` (grown as needed,
    /// kept by the caller between evaluations); returns (m, n). Its entries are not checked:
    /// a non-finite one makes the Householder QR of [J | r] non-finite (every entry enters
    /// its column's reflection or is an entry of R), so the caller checks what it uses.
    pub(crate) fn augmented_theta(&self, storage: &mut Vec<f64>) -> (usize, usize) {
        self.augmented(Some(&self.dq_dtheta()), storage)
    }

    /// The least-squares minimum of the problem linearised where it stands: ‖(I − QQᵀ)r‖²,
    /// J = QR the Jacobian in the coordinates q (not θ: a coordinate on its bound keeps its
    /// column), every step unbounded; None where r or J is not finite.
    pub(crate) fn linearised_minimum(&self) -> Option<f64> {
        let mut storage = Vec::new();
        let (m, n) = self.augmented(None, &mut storage);
        if m <= n {
            return all_finite_slice(&storage).then_some(0.0);
        }
        let (rc, jc) = compressed::householder_compress(&mut storage, m, n);
        let finite = all_finite_slice(rc.as_slice()) && all_finite(&jc);
        finite.then(|| rc[n] * rc[n])
    }

    /// [J | r] as in [`Self::augmented_theta`], J's curve columns times `column_scale` when
    /// given.
    fn augmented(&self, column_scale: Option<&[f64]>, storage: &mut Vec<f64>) -> (usize, usize) {
        let (m, n) = (self.total_rows(), self.coords.free.len());
        storage.resize(m * (n + 1), 0.0);
        let (j, r) = storage.split_at_mut(m * n);
        self.fill_jacobian(column_scale, Some(&mut r[..self.rows]), j, m);
        let curve_rss: f64 = r[..self.rows].iter().map(|v| v * v).sum();
        self.last_nrmse
            .set((curve_rss / self.rows.max(1) as f64).sqrt());
        if self.values.is_some() {
            let values = self.value_rows(&self.coords.physical(&self.coords.q));
            r[self.rows..].copy_from_slice(&values);
        }
        (m, n)
    }
}

/// Whether every entry of a matrix is finite (over its contiguous storage: the matrix
/// iterator's stride logic cost as much as assembling the Jacobian).
fn all_finite(j: &DMatrix<f64>) -> bool {
    all_finite_slice(j.as_slice())
}

/// Whether every value is finite: an OR over the whole slice without an early exit, which
/// vectorises (the finite case, by far the common one, reads every value anyway).
pub(super) fn all_finite_slice(v: &[f64]) -> bool {
    !v.iter().fold(false, |bad, x| bad | !x.is_finite())
}

/// s²(JᵀJ)⁻¹ over the coordinates JᵀJ identifies; the rows and columns of a coordinate it
/// does not identify ([`not_identified`]) are NaN, so no number is made up for it. None if
/// even the rest cannot be inverted.
pub(crate) fn identified_inverse(jtj: &DMatrix<f64>, s2: f64) -> Option<DMatrix<f64>> {
    let n = jtj.nrows();
    let unidentified = not_identified(jtj);
    let keep: Vec<usize> = (0..n).filter(|&c| !unidentified[c]).collect();
    let sub = DMatrix::from_fn(keep.len(), keep.len(), |a, b| jtj[(keep[a], keep[b])]);
    let inv = sub.try_inverse()?;
    let mut cov = DMatrix::from_element(n, n, f64::NAN);
    for (a, &ca) in keep.iter().enumerate() {
        for (b, &cb) in keep.iter().enumerate() {
            cov[(ca, cb)] = inv[(a, b)] * s2;
        }
    }
    Some(cov)
}

/// An eigenvalue of the scaled JᵀJ (unit diagonal) below this is a direction the curve does
/// not determine: the estimates along it would correlate beyond ±(1 − 10⁻⁹).
pub(crate) const NEAR_SINGULAR: f64 = 1e-9;

/// The coordinates JᵀJ does not identify: a column of J that is zero (the curve does not
/// change with the coordinate), or a coordinate taking part (|component| > 0.1) in a
/// near-null direction of D⁻¹JᵀJD⁻¹, D = diag(JᵀJ)^½ (two or more coordinates that change
/// the curve in the same way).
pub(crate) fn not_identified(jtj: &DMatrix<f64>) -> Vec<bool> {
    let n = jtj.nrows();
    let d: Vec<f64> = (0..n).map(|c| jtj[(c, c)].max(0.0).sqrt()).collect();
    let mut out: Vec<bool> = d.iter().map(|v| !(*v > 0.0 && v.is_finite())).collect();
    let live: Vec<usize> = (0..n).filter(|&c| !out[c]).collect();
    if live.len() < 2 {
        return out;
    }
    let scaled = DMatrix::from_fn(live.len(), live.len(), |a, b| {
        jtj[(live[a], live[b])] / (d[live[a]] * d[live[b]])
    });
    if scaled.iter().any(|v| !v.is_finite()) {
        return vec![true; n];
    }
    let eigen = scaled.symmetric_eigen();
    for (k, &lambda) in eigen.eigenvalues.iter().enumerate() {
        if lambda < NEAR_SINGULAR {
            for (a, &c) in live.iter().enumerate() {
                if eigen.eigenvectors[(a, k)].abs() > 0.1 {
                    out[c] = true;
                }
            }
        }
    }
    out
}

/// A least-squares solution as plain values: what a report is made from.
#[derive(Debug, Clone)]
pub(crate) struct Solution {
    /// The coordinates at the optimum, with their bounds and free set.
    pub coords: Coordinates,
    /// Physical parameters p(q).
    pub params: P,
    /// Covariance of the free coordinates q (see [`PathProblem::covariance`]).
    pub covariance: Option<DMatrix<f64>>,
    /// The coordinates with every coordinate the fit pinned (at a bound, or as not identified)
    /// freed again at its value, JᵀJ over them and s² (None when nothing was pinned so): the
    /// intervals of the others not conditional on the pinned values.
    pub with_pins_freed: Option<(Coordinates, DMatrix<f64>, f64)>,
    pub termination: Termination,
    /// Residual evaluations over all runs.
    pub evaluations: usize,
    /// Jacobian evaluations (Levenberg–Marquardt iterations) over all runs.
    pub iterations: usize,
}

/// One least-squares run: the problem at its optimum, why it stopped, the residual
/// evaluations, and the objective there (‖r‖², value rows included) where the run ended on a
/// point whose residuals it evaluated (every termination but a failure).
pub(crate) struct LmRun<'a> {
    pub problem: PathProblem<'a>,
    pub termination: Termination,
    pub evaluations: usize,
    pub objective: Option<f64>,
    /// [`PathProblem::linearised_minimum`] at the point the run ended on, where the run's
    /// last QR was made there.
    pub linearised_minimum: Option<f64>,
}

/// One least-squares run from `coords` ([`LmRun`]).
pub(crate) fn run_lm<'a>(
    coords: Coordinates,
    segments: Vec<Segment<'a>>,
    values: Option<ValueTargets>,
    max_evaluations: usize,
    progress: Option<(ProgressSink<'a>, &'a str)>,
) -> LmRun<'a> {
    let mut problem = PathProblem::joint(coords, segments).with_values(values);
    problem.progress = progress;
    let free = problem.coords.free.len();
    let n = free.max(1);
    let lm = LevenbergMarquardt::new()
        .with_patience((max_evaluations / (n + 1)).max(1))
        .with_ftol(1e-7)
        .with_xtol(1e-7);
    let (problem, report, linearised_minimum) = if free > 0 && problem.total_rows() > free + 1 {
        // the same iterates on n + 1 rows: the crate's pivoted QR of the m × n Jacobian at
        // every iteration was a third of the fit's time
        let (c, report) = lm.minimize(Compressed::new(problem));
        let minimum = c.linearised_minimum();
        (c.problem, report, minimum)
    } else {
        let (problem, report) = lm.minimize(problem);
        (problem, report, None)
    };
    let termination: Termination = report.termination.into();
    // the crate keeps ½‖r‖² of the point it ends on (its last accepted one); after a failed
    // evaluation the problem may stand elsewhere, and the objective is not known
    let ended_on_a_point = matches!(
        termination,
        Termination::Converged { .. }
            | Termination::Orthogonal
            | Termination::ResidualsZero
            | Termination::LostPatience
            | Termination::NoImprovementPossible(_)
    );
    let objective = 2.0 * report.objective_function;
    LmRun {
        problem,
        termination,
        evaluations: report.number_of_evaluations,
        objective: (ended_on_a_point && objective.is_finite()).then_some(objective),
        linearised_minimum,
    }
}

#[cfg(test)]
mod tests;
