//! The least-squares problem as the levenberg-marquardt crate sees it, compressed: with
//! J = QR (Householder, m × n) the residuals [Qᵀr; ‖(I − QQᵀ)r‖] and the Jacobian [R; 0] have
//! n + 1 rows instead of m, and ‖r_c + J_c·p‖ = ‖r + J·p‖ for every step p.

use std::cell::{Cell, RefCell};

use levenberg_marquardt::LeastSquaresProblem;
use nalgebra::{DMatrix, DVector, DVectorView, Dyn, Owned};

use super::{all_finite_slice, PathProblem};

/// A [`PathProblem`] in compressed form. The crate's trust-region step, its tests (ftol on
/// ‖r‖, xtol, gtol on Jᵀr and the column norms of J) and its pivoted QR see exactly the
/// full problem's quantities (up to rounding), the QR on (n + 1) × n rows. The basis Q is
/// that of the Jacobian at the point where the residuals are taken, so every residual
/// evaluation drives the law once with its sensitivities (the residuals are that drive's
/// forces); the Jacobian of an accepted point is then the one already computed there. A
/// trial point whose ‖r‖ rose gets no QR: the crate rejects it and reads only its norm.
pub(crate) struct Compressed<'a> {
    pub problem: PathProblem<'a>,
    /// The last compressed residual evaluation.
    last: RefCell<Option<Factored>>,
    /// The augmented m × (n + 1) matrix [J | r], kept between evaluations (none allocates it).
    augmented: RefCell<Vec<f64>>,
    /// ‖r‖ at the point the crate stands on (where it last took the Jacobian); infinite
    /// before the first.
    standing: Cell<f64>,
    /// θ of that point and ‖(I − QQᵀ)r‖² there (the minimum of its linearised model).
    standing_minimum: RefCell<Option<(DVector<f64>, f64)>>,
}

impl Compressed<'_> {
    /// The crate stands on θ (it takes the Jacobian there): ‖r‖ and ‖(I − QQᵀ)r‖ there.
    fn stand(&self, theta: DVector<f64>, norm: f64, outside: f64) {
        self.standing.set(norm);
        *self.standing_minimum.borrow_mut() = Some((theta, outside * outside));
    }
}

/// A point where [J | r] was factored.
struct Factored {
    theta: DVector<f64>,
    /// The compressed Jacobian [R; 0].
    jacobian: DMatrix<f64>,
    /// ‖r‖.
    norm: f64,
    /// ‖(I − QQᵀ)r‖.
    outside: f64,
}

/// A trial point whose ‖r‖ exceeds the standing point's by more than this fraction is one
/// the crate rejects (its actual reduction is negative) whatever the residuals' direction.
const NO_DESCENT: f64 = 1e-12;

/// What one residual evaluation found.
enum Evaluated {
    /// The compressed residuals, the compressed Jacobian, ‖r‖.
    Compressed(DVector<f64>, DMatrix<f64>, f64),
    /// A point with a larger ‖r‖ than the standing one's: only its norm.
    Rejected(f64),
}

impl<'a> Compressed<'a> {
    pub(crate) fn new(problem: PathProblem<'a>) -> Self {
        Self {
            problem,
            last: RefCell::new(None),
            augmented: RefCell::new(Vec::new()),
            standing: Cell::new(f64::INFINITY),
            standing_minimum: RefCell::new(None),
        }
    }

    /// The least-squares minimum of the problem linearised where it stands, ‖(I − QQᵀ)r‖²
    /// ([`PathProblem::linearised_minimum`]), from the QR already made at this point (its
    /// last compressed evaluation, or where the crate last took its Jacobian). J in θ is J in
    /// q times dq/dθ column by column, which spans the same space while no dq/dθ is zero;
    /// None otherwise or where not known.
    pub(crate) fn linearised_minimum(&self) -> Option<f64> {
        let theta = self.problem.params();
        if (0..theta.len()).any(|c| self.problem.coords.dq_dtheta(c, theta[c]) == 0.0) {
            return None;
        }
        if let Some(last) = self.last.borrow().as_ref() {
            if last.theta == theta {
                return Some(last.outside * last.outside);
            }
        }
        let standing = self.standing_minimum.borrow();
        let (at, minimum) = standing.as_ref()?;
        (*at == theta).then_some(*minimum)
    }

    /// The compressed residuals and Jacobian at the current θ; None where either is not
    /// finite. A point no lower than the standing one (`skip_ascent`) gets no QR: the crate
    /// uses only the norm of its residuals.
    fn evaluate(&self, skip_ascent: bool) -> Option<Evaluated> {
        let mut a = self.augmented.borrow_mut();
        let (m, n) = self.problem.augmented_theta(&mut a);
        let norm = DVectorView::from_slice(&a[m * n..m * (n + 1)], m).norm();
        if skip_ascent && norm > self.standing.get() * (1.0 + NO_DESCENT) {
            return all_finite_slice(&a[..m * (n + 1)]).then_some(Evaluated::Rejected(norm));
        }
        let (rc, jc) = householder_compress(&mut a[..m * (n + 1)], m, n);
        (rc.iter().chain(jc.iter()).all(|v| v.is_finite()))
            .then_some(Evaluated::Compressed(rc, jc, norm))
    }
}

/// Householder QR, in place, of the augmented m × (n + 1) matrix [J | r] (m > n, column-major
/// in `storage`): its triangle holds R (J = QR) in the first n columns and Qᵀr in the last,
/// whose rows below n have the norm ‖(I − QQᵀ)r‖. Returns ([Qᵀr; ‖(I − QQᵀ)r‖], [R; 0]). Each
/// reflection works on contiguous columns of the storage.
pub(super) fn householder_compress(
    storage: &mut [f64],
    m: usize,
    n: usize,
) -> (DVector<f64>, DMatrix<f64>) {
    debug_assert_eq!(storage.len(), m * (n + 1));
    for k in 0..n.min(m) {
        let (head, tail) = storage.split_at_mut((k + 1) * m);
        let v = &mut head[k * m + k..];
        let norm = dot(v, v).sqrt();
        if norm == 0.0 {
            continue;
        }
        // x → α e₁ with α = −sign(x₀)‖x‖; v = x − α e₁, and H = I − 2vvᵀ/‖v‖²
        let x0 = v[0];
        let alpha = if x0 > 0.0 { -norm } else { norm };
        v[0] = x0 - alpha;
        let v_norm2 = 2.0 * norm * (norm + x0.abs());
        for column in tail.chunks_exact_mut(m) {
            let c = &mut column[k..];
            let s = 2.0 * dot(v, c) / v_norm2;
            c.iter_mut().zip(v.iter()).for_each(|(b, a)| *b -= s * a);
        }
        v[0] = alpha;
    }
    let mut rc = DVector::zeros(n + 1);
    let mut jc = DMatrix::zeros(n + 1, n);
    let r = &storage[n * m..];
    for c in 0..n {
        for row in 0..=c {
            jc[(row, c)] = storage[c * m + row];
        }
        rc[c] = r[c];
    }
    rc[n] = DVectorView::from_slice(&r[n..], m - n).norm();
    (rc, jc)
}

/// aᵀb over slices of equal length, in four independent partial sums (a sequential sum waits
/// on each addition; this one pipelines and vectorises).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (a4, b4) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = a4
        .remainder()
        .iter()
        .zip(b4.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a4.zip(b4) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Compressed<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, theta: &DVector<f64>) {
        self.problem.set_params(theta);
    }

    fn params(&self) -> DVector<f64> {
        self.problem.params()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        match self.evaluate(true)? {
            Evaluated::Compressed(rc, jacobian, norm) => {
                *self.last.borrow_mut() = Some(Factored {
                    theta: self.problem.params(),
                    jacobian,
                    norm,
                    outside: rc[rc.len() - 1],
                });
                Some(rc)
            }
            // the crate rejects this point (its ‖r‖ rose) and reads only the norm
            Evaluated::Rejected(norm) => {
                let n = self.problem.coords.free.len();
                let mut rc = DVector::zeros(n + 1);
                rc[n] = norm;
                Some(rc)
            }
        }
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        self.problem.count_jacobian();
        let theta = self.problem.params();
        if let Some(last) = self.last.borrow().as_ref() {
            if last.theta == theta {
                self.stand(theta, last.norm, last.outside);
                return Some(last.jacobian.clone());
            }
        }
        match self.evaluate(false)? {
            Evaluated::Compressed(rc, jc, norm) => {
                self.stand(theta, norm, rc[rc.len() - 1]);
                Some(jc)
            }
            Evaluated::Rejected(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::coords::{law_kind, Coordinates, Param};
    use crate::fit::estimate::CurveRanges;
    use crate::fit::path_model::{idx, simulate, ShapeKind, P};
    use crate::kes::KesTest;
    use levenberg_marquardt::LevenbergMarquardt;

    /// A second-order shear law along two cycles (x, y with a wobble), coordinates started
    /// away from it, and the curve's force range.
    fn shear_problem() -> (Vec<f64>, Vec<f64>, Coordinates, f64) {
        let x = cycles();
        let kind = law_kind(KesTest::Shear, ShapeKind::Bs2, false);
        let mut p: P = [0.0; idx::N];
        p[Param::K] = 60.0;
        p[Param::Level] = 0.8;
        p[Param::Mu] = 0.2;
        p[Param::EpsF] = 0.02;
        p[Param::Eta] = 0.3;
        p[Param::Ratio] = 0.4;
        p[Param::Alpha] = 1.0;
        let mut y = vec![0.0; x.len()];
        simulate(kind, &p, &x, &mut y);
        // a wobble, so the optimum has residuals
        y.iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v += 0.02 * (i as f64 * 0.7).sin());
        let ranges = CurveRanges::of(&x, &y);
        let mut p0 = p;
        p0[Param::K] *= 1.2;
        p0[Param::Level] *= 0.7;
        p0[Param::EpsF] *= 1.5;
        let coords = Coordinates::new(kind, KesTest::Shear, &p0, &ranges, false, true, false);
        let range = ranges.y_range();
        (x, y, coords, range)
    }

    /// The crate's solver with `patience` and tolerances of 1e-7.
    fn solver(patience: usize) -> LevenbergMarquardt<f64> {
        LevenbergMarquardt::new()
            .with_patience(patience)
            .with_ftol(1e-7)
            .with_xtol(1e-7)
    }

    fn cycles() -> Vec<f64> {
        (0..=240)
            .map(|i| 0.14 * (i as f64 * std::f64::consts::PI / 60.0).sin())
            .collect()
    }

    #[test]
    fn the_linearised_minimum_is_the_least_squares_minimum_of_the_problem_in_q() {
        let (x, y, coords, range) = shear_problem();
        let problem = PathProblem::new(coords, &x, &y, range);
        let (r, j) = (problem.residuals().unwrap(), problem.jacobian_q());
        // min over p of ‖r + J p‖², by the SVD's least-squares solution
        let step = j.clone().svd(true, true).solve(&(-&r), 1e-14).unwrap();
        let minimum = (&r + &j * &step).norm_squared();
        let linearised = problem.linearised_minimum().unwrap();
        assert!(
            (linearised - minimum).abs() <= 1e-9 * r.norm_squared(),
            "{linearised} vs {minimum}"
        );
        // the start is off the law: the columns explain most of r, not all
        assert!(minimum > 0.0 && minimum < 0.5 * r.norm_squared());
    }

    #[test]
    fn the_compressed_problem_has_the_full_problems_linear_model() {
        let (x, y, coords, range) = shear_problem();
        let full = PathProblem::new(coords.clone(), &x, &y, range);
        let (r, j) = (full.residuals().unwrap(), full.jacobian_theta().unwrap());
        let compressed = Compressed::new(PathProblem::new(coords, &x, &y, range));
        let rc = compressed.residuals().unwrap();
        let jc = compressed.jacobian().unwrap();
        assert_eq!(rc.len(), j.ncols() + 1);
        // ‖r_c + J_c p‖ = ‖r + J p‖ for any step p (p = 0: the residual norm itself)
        for s in [0.0, 1e-3, 0.1, 1.0] {
            let p = DVector::from_fn(j.ncols(), |c, _| s * (1.0 + c as f64).sin());
            let a = (&r + &j * &p).norm();
            let b = (&rc + &jc * &p).norm();
            assert!(
                (a - b).abs() <= 1e-12 * a.max(1e-300),
                "step {s}: {a} vs {b}"
            );
        }
        // Jᵀr and the column norms of J (the crate's gtol and scaling) are those of the full J
        let (g, gc) = (j.transpose() * &r, jc.transpose() * &rc);
        assert!((&g - &gc).amax() <= 1e-12 * g.amax());
        for c in 0..j.ncols() {
            let (a, b) = (j.column(c).norm(), jc.column(c).norm());
            assert!((a - b).abs() <= 1e-12 * a, "column {c}: {a} vs {b}");
        }
    }

    #[test]
    fn the_augmented_householder_qr_keeps_every_steps_residual_norm_with_a_zero_column() {
        // 7 × 3 with a zero middle column (a coordinate the curve does not change)
        let j = DMatrix::from_fn(7, 3, |r, c| {
            if c == 1 {
                0.0
            } else {
                ((r * 3 + c * 5) as f64 * 0.9).sin() + if r == c { 2.0 } else { 0.0 }
            }
        });
        let r = DVector::from_fn(7, |i, _| (i as f64 * 1.3).cos());
        let mut augmented: Vec<f64> = j.iter().chain(r.iter()).copied().collect();
        let (rc, jc) = householder_compress(&mut augmented, 7, 3);
        assert_eq!((rc.len(), jc.shape()), (4, (4, 3)));
        // [R; 0]: nothing below the diagonal
        for c in 0..3 {
            for row in c + 1..4 {
                assert_eq!(jc[(row, c)], 0.0);
            }
        }
        for s in [0.0, 0.5, 3.0] {
            let p = DVector::from_fn(3, |c, _| s * (2.0 + c as f64).cos());
            let (a, b) = ((&r + &j * &p).norm(), (&rc + &jc * &p).norm());
            assert!((a - b).abs() <= 1e-13 * a, "step {s}: {a} vs {b}");
        }
        // the least-squares minimum (the part of r the columns cannot explain) is the same
        let minimum = |a: &DMatrix<f64>, b: &DVector<f64>| {
            let step = a.clone().svd(true, true).solve(b, 1e-12).unwrap();
            (b - a * step).norm()
        };
        let (full, compressed) = (minimum(&j, &r), minimum(&jc, &rc));
        assert!(
            (full - compressed).abs() <= 1e-13 * r.norm(),
            "{full} vs {compressed}"
        );
        assert!(
            full < 0.99 * r.norm(),
            "the test's columns explain part of r"
        );
    }

    #[test]
    fn a_rejected_trial_point_has_the_full_residual_norm_and_a_run_its_linearised_minimum() {
        let (x, y, coords, range) = shear_problem();
        let mut compressed = Compressed::new(PathProblem::new(coords.clone(), &x, &y, range));
        // the crate's first calls: residuals and Jacobian at the start, where it then stands
        let start = compressed.residuals().unwrap().norm();
        compressed.jacobian().unwrap();
        // a trial point far off: its ‖r‖ rose, so it gets no QR, only its norm
        let theta = compressed.params().map(|t| t + 0.7);
        compressed.set_params(&theta);
        let rc = compressed.residuals().unwrap();
        let mut full = PathProblem::new(coords.clone(), &x, &y, range);
        full.set_params(&theta);
        let r = full.residuals().unwrap();
        assert!(r.norm() > start, "the trial point is worse");
        assert_eq!(rc.len(), theta.len() + 1);
        assert!(rc.rows(0, theta.len()).iter().all(|v| *v == 0.0));
        assert!((rc.norm() - r.norm()).abs() <= 1e-12 * r.norm());
        // a run ends with the Gauss–Newton minimum of the point it ends on, from its own QR
        let lm = solver(5);
        let (ended, _) = lm.minimize(Compressed::new(PathProblem::new(coords, &x, &y, range)));
        let known = ended.linearised_minimum().unwrap();
        let in_q = ended.problem.linearised_minimum().unwrap();
        assert!(
            (known - in_q).abs() <= 1e-9 * ended.problem.residuals().unwrap().norm_squared(),
            "{known} vs {in_q}"
        );
    }

    #[test]
    fn the_crate_takes_the_same_steps_on_the_compressed_problem() {
        let (x, y, coords, range) = shear_problem();
        let lm = solver(40);
        let (full, full_report) = lm.minimize(PathProblem::new(coords.clone(), &x, &y, range));
        let (compressed, report) =
            lm.minimize(Compressed::new(PathProblem::new(coords, &x, &y, range)));
        assert_eq!(full_report.termination, report.termination);
        assert_eq!(
            full_report.number_of_evaluations,
            report.number_of_evaluations
        );
        let (a, b) = (full.params(), compressed.problem.params());
        for (u, v) in a.iter().zip(b.iter()) {
            assert!((u - v).abs() <= 1e-8 * (1.0 + u.abs()), "{a} vs {b}");
        }
    }
}
