//! Kelley's limited-memory Broyden method on a residual G: one evaluation per iteration,
//! restart after `memory` stored steps, an unconverged solve ending on its best iterate.

use super::residual::{dot, Residual};
use super::SolveOutcome;
use crate::cloth::Vec3;

/// Scratch of Kelley's limited-memory Broyden method: the stored steps s_j and their squared
/// norms.
#[derive(Debug, Default, Clone)]
pub(crate) struct BroydenScratch {
    s: Vec<Vec<Vec3>>,
    best: Vec<Vec3>,
    ssq: Vec<f64>,
    g: Vec<Vec3>,
    z: Vec<Vec3>,
}

/// Broyden's ("good") method with H₀ = I on G (Kelley, Iterative Methods for Linear and
/// Nonlinear Equations, alg. brsol): s_{n+1} = z/(1 − s_nᵀz/‖s_n‖²), z = −G + Σ s_{j+1}(s_jᵀz)/‖s_j‖²;
/// one evaluation of G per iteration; restarts after `memory` stored steps; an unconverged
/// solve ends on its best iterate.
pub(crate) fn broyden_solve(
    res: &mut impl Residual,
    x: &mut [Vec3],
    tol: f64,
    max_iterations: usize,
    memory: usize,
    sc: &mut BroydenScratch,
) -> SolveOutcome {
    let n = x.len();
    let memory = memory.max(2);
    if sc.s.len() < memory {
        sc.s.resize(memory, Vec::new());
        sc.ssq.resize(memory, 0.0);
    }
    for s in &mut sc.s {
        s.resize(n, Vec3::zeros());
    }
    sc.g.resize(n, Vec3::zeros());
    sc.z.resize(n, Vec3::zeros());
    sc.best.clear();
    sc.best.extend_from_slice(x);
    let mut out = SolveOutcome {
        evaluations: 1,
        ..SolveOutcome::default()
    };
    let mut norm = res.eval(x, &mut sc.g);
    out.residual = norm;
    if norm <= tol {
        out.converged = true;
        return out;
    }
    let restart = |sc: &mut BroydenScratch| {
        for (s, g) in sc.s[0].iter_mut().zip(&sc.g) {
            *s = -g;
        }
        sc.ssq[0] = dot(&sc.s[0], &sc.s[0]);
    };
    restart(sc);
    let mut best = norm;
    let mut m = 0; // index of the newest stored step
    while out.iterations < max_iterations {
        out.iterations += 1;
        for (xi, si) in x.iter_mut().zip(&sc.s[m]) {
            *xi += si;
        }
        norm = res.eval(x, &mut sc.g);
        out.evaluations += 1;
        // Safeguard: a step that makes the residual not finite is halved up to 6 times, and
        // the memory restarts from there (a residual that merely grows is left to Broyden).
        let mut backtracked = false;
        let mut lambda = 1.0;
        while !norm.is_finite() && lambda > 0.02 {
            lambda *= 0.5;
            for (xi, si) in x.iter_mut().zip(&sc.s[m]) {
                *xi -= si * lambda;
            }
            norm = res.eval(x, &mut sc.g);
            out.evaluations += 1;
            backtracked = true;
        }
        out.residual = norm;
        if norm <= tol {
            out.converged = true;
            break;
        }
        if norm < best {
            best = norm;
            sc.best.copy_from_slice(x);
        }
        if backtracked || m + 1 == memory || sc.ssq[m] == 0.0 {
            restart(sc);
            m = 0;
            continue;
        }
        for (z, g) in sc.z.iter_mut().zip(&sc.g) {
            *z = -g;
        }
        for j in 0..m {
            let c = dot(&sc.s[j], &sc.z) / sc.ssq[j];
            for (z, s) in sc.z.iter_mut().zip(&sc.s[j + 1]) {
                *z += s * c;
            }
        }
        let denom = 1.0 - dot(&sc.s[m], &sc.z) / sc.ssq[m];
        if denom.abs() < 1e-12 || !denom.is_finite() {
            restart(sc);
            m = 0;
            continue;
        }
        for (s, z) in sc.s[m + 1].iter_mut().zip(&sc.z) {
            *s = z / denom;
        }
        m += 1;
        sc.ssq[m] = dot(&sc.s[m], &sc.s[m]);
    }
    if !out.converged && (norm > best || norm.is_nan()) {
        // end on the best iterate, evaluated again so that the trial states match it
        x.copy_from_slice(&sc.best);
        out.residual = res.eval(x, &mut sc.g);
        out.evaluations += 1;
    }
    out
}
