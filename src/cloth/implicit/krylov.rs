//! Inexact Newton on a residual G: J_G δ = −G solved by GMRES to a relative `forcing`, with
//! Jacobian–vector products by differences, J_G v ≈ (G(x + εv) − G(x))/ε.

use super::residual::{dot, norm_inf, Residual};
use super::SolveOutcome;
use crate::cloth::pipeline::StepParameters;
use crate::cloth::Vec3;

/// Scratch of the Newton–Krylov solver: GMRES basis, Hessenberg matrix, rotations.
#[derive(Debug, Default, Clone)]
pub(crate) struct KrylovScratch {
    basis: Vec<Vec<Vec3>>,
    g: Vec<Vec3>,
    g_pert: Vec<Vec3>,
    x_pert: Vec<Vec3>,
    w: Vec<Vec3>,
    delta: Vec<Vec3>,
}

/// Inexact Newton: solve J_G δ = −G to relative accuracy `forcing` by GMRES (at most
/// `krylov_dim` iterations), with J_G v ≈ (G(x + εv) − G(x))/ε, then x ← x + δ.
pub(crate) fn newton_krylov_solve(
    res: &mut impl Residual,
    x: &mut [Vec3],
    params: &StepParameters,
    sc: &mut KrylovScratch,
) -> SolveOutcome {
    let n = x.len();
    let kdim = params.krylov_dim.max(1);
    sc.basis.resize(kdim + 1, Vec::new());
    for b in &mut sc.basis {
        b.resize(n, Vec3::zeros());
    }
    for v in [
        &mut sc.g,
        &mut sc.g_pert,
        &mut sc.x_pert,
        &mut sc.w,
        &mut sc.delta,
    ] {
        v.resize(n, Vec3::zeros());
    }
    let mut out = SolveOutcome::default();
    loop {
        let norm = res.eval(x, &mut sc.g);
        out.evaluations += 1;
        if out.ends_at(norm, params.tolerance, params.max_iterations) {
            break;
        }
        out.iterations += 1;
        // GMRES on J δ = −g from δ = 0.
        let beta = dot(&sc.g, &sc.g).sqrt();
        for (b, g) in sc.basis[0].iter_mut().zip(&sc.g) {
            *b = -g / beta;
        }
        let mut h = vec![vec![0.0; kdim]; kdim + 1];
        let (mut cs, mut sn) = (vec![0.0; kdim], vec![0.0; kdim]);
        let mut rhs = vec![0.0; kdim + 1];
        rhs[0] = beta;
        let x_scale = 1.0 + norm_inf(x);
        let mut k_used = 0;
        for j in 0..kdim {
            // w = J v_j by a forward difference
            let vnorm = norm_inf(&sc.basis[j]);
            let eps = 1e-7 * x_scale / vnorm.max(1e-300);
            for ((xp, xi), v) in sc.x_pert.iter_mut().zip(x.iter()).zip(&sc.basis[j]) {
                *xp = xi + v * eps;
            }
            res.eval(&sc.x_pert, &mut sc.g_pert);
            out.evaluations += 1;
            for ((w, gp), g) in sc.w.iter_mut().zip(&sc.g_pert).zip(&sc.g) {
                *w = (gp - g) / eps;
            }
            // modified Gram–Schmidt
            for (hi, basis) in h.iter_mut().zip(&sc.basis).take(j + 1) {
                let hij = dot(&sc.w, basis);
                hi[j] = hij;
                for (w, b) in sc.w.iter_mut().zip(basis) {
                    *w -= b * hij;
                }
            }
            let hn = dot(&sc.w, &sc.w).sqrt();
            h[j + 1][j] = hn;
            if hn > 0.0 {
                for (b, w) in sc.basis[j + 1].iter_mut().zip(&sc.w) {
                    *b = w / hn;
                }
            }
            // Givens rotations
            for i in 0..j {
                let t = cs[i] * h[i][j] + sn[i] * h[i + 1][j];
                h[i + 1][j] = -sn[i] * h[i][j] + cs[i] * h[i + 1][j];
                h[i][j] = t;
            }
            let r = h[j][j].hypot(h[j + 1][j]);
            if r > 0.0 {
                cs[j] = h[j][j] / r;
                sn[j] = h[j + 1][j] / r;
            } else {
                cs[j] = 1.0;
                sn[j] = 0.0;
            }
            h[j][j] = r;
            h[j + 1][j] = 0.0;
            rhs[j + 1] = -sn[j] * rhs[j];
            rhs[j] *= cs[j];
            k_used = j + 1;
            if rhs[j + 1].abs() <= params.forcing * beta || hn == 0.0 {
                break;
            }
        }
        // back substitution and update
        let mut y = vec![0.0; k_used];
        for i in (0..k_used).rev() {
            let mut s = rhs[i];
            for (l, yl) in y.iter().enumerate().take(k_used).skip(i + 1) {
                s -= h[i][l] * yl;
            }
            y[i] = if h[i][i] != 0.0 { s / h[i][i] } else { 0.0 };
        }
        sc.delta.fill(Vec3::zeros());
        for (yi, b) in y.iter().zip(&sc.basis) {
            for (d, bv) in sc.delta.iter_mut().zip(b) {
                *d += bv * *yi;
            }
        }
        for (xi, d) in x.iter_mut().zip(&sc.delta) {
            *xi += d;
        }
    }
    out
}
