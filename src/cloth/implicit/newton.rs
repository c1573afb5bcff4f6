//! Newton on the backward-Euler residual with the analytic tangent: (M/Δt² + C/Δt + K)δ = −g
//! solved by conjugate gradients to a relative `forcing`, preconditioned by line solves of the
//! same matrix's traction and shear-side couplings (factored every fourth Newton iteration);
//! a step that does not lower ‖D⁻¹g‖₂ is halved (≤ 5 times). `newton_direct` preconditions
//! CG by the same matrix factored by sparse Cholesky (`direct.rs`): exact when fresh.

use super::direct::DirectSolve;
use super::residual::BackwardEuler;
use super::SolveOutcome;
use crate::cloth::connectors::KesTangent;
use crate::cloth::line_precond::LinePreconditioner;
use crate::cloth::pipeline::{Integrator, StepParameters};
use crate::cloth::world::Material;
use crate::cloth::{Mat3, Vec3};

mod cg;
use cg::conjugate_gradients;

/// Most conjugate-gradient iterations per Newton step.
pub(crate) const MAX_CG_ITERATIONS: usize = 500;

/// Newton iterations one factor serves, across steps: the line matrix of a tangent a few
/// iterations old preconditions CG almost as well as the current one (`kes_sheet_70`: 5.79
/// against 5.745 CG iterations per step), for a quarter of the blocks' passes and
/// factorisations; so does a Cholesky factor (exact at its first iteration, then a
/// preconditioner). A change of Δt, damping, masses or pins rebuilds it at once.
const LINE_FACTOR_ITERATIONS: usize = 4;

/// The factor that preconditions CG: line solves (`newton_tangent`) or the whole system's
/// Cholesky factor (`newton_direct`).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Factor {
    #[default]
    Lines,
    Cholesky,
}

/// Scratch of the Newton solver.
#[derive(Debug, Default, Clone)]
pub(crate) struct NewtonScratch {
    r: Vec<Vec3>,
    r_try: Vec<Vec3>,
    x_try: Vec<Vec3>,
    delta: Vec<Vec3>,
    /// CG: residual, preconditioned residual, direction, A·direction.
    res: Vec<Vec3>,
    z: Vec<Vec3>,
    p: Vec<Vec3>,
    q: Vec<Vec3>,
    /// Per particle m/Δt² + (γm + cA)/Δt [N/m].
    inertia: Vec<f64>,
    tangent: KesTangent,
    lines: LinePreconditioner,
    /// The factored system of `newton_direct`.
    direct: DirectSolve,
    /// One buffer per rayon thread but the first for the banded tangent product.
    parts: Vec<Vec<Vec3>>,
    /// Conjugate-gradient iterations of the last solve.
    pub cg_iterations: usize,
    /// The factor in use, the Newton iterations it has served, and the inertia and pins it
    /// was built with.
    factor: Factor,
    factor_age: usize,
    factor_inertia: Vec<f64>,
    factor_pinned: Vec<bool>,
    /// The Cholesky factorisation failed on the system the factor was made for.
    cholesky_failed: bool,
}

/// The unscaled residual g at `x` into `r` (zero on pinned rows), with max_i |D_i⁻¹g_i| [m]
/// and ‖D⁻¹g‖₂ [m]; the kes tangent's factors at `x` into `tangent` from the same force pass
/// when given (`tangent_written` says whether they were).
fn residual(
    be: &mut BackwardEuler<'_>,
    x: &[Vec3],
    r: &mut [Vec3],
    tangent: Option<&mut KesTangent>,
    tangent_written: &mut bool,
) -> (f64, f64) {
    let inv_dt = 1.0 / be.dt;
    let ws = &mut *be.ws;
    for ((v, x1), x0) in ws.vel.iter_mut().zip(x).zip(be.x0) {
        *v = (x1 - x0) * inv_dt;
    }
    *tangent_written = be.world.forces_and_tangent(
        x,
        &ws.vel,
        &mut ws.trial,
        &mut ws.normals,
        &mut ws.force,
        tangent,
    );
    let (mut max, mut sq) = (0.0f64, 0.0);
    // zipped (the same operations in the same order, without an index check per array)
    let rows = r
        .iter_mut()
        .zip(be.world.pinned())
        .zip(x.iter().zip(be.x0).zip(be.v0))
        .zip(be.world.mass.iter().zip(&ws.force).zip(be.d_inv));
    for (((rk, &pinned), ((xk, x0), v0)), ((&m, fk), d_inv)) in rows {
        if pinned {
            *rk = Vec3::zeros();
            continue;
        }
        *rk = (xk - x0 - v0 * be.dt) * (m * inv_dt * inv_dt) - fk;
        let s = (d_inv * *rk).norm();
        max = max.max(s);
        sq += s * s;
    }
    if max.is_nan() {
        (f64::INFINITY, f64::INFINITY)
    } else {
        (max, sq.sqrt())
    }
}

/// Newton's method on the backward-Euler residual of `be` from `x`, stopping when
/// max_i |D_i⁻¹g_i| ≤ `params.tolerance`; each iteration costs one tangent evaluation and
/// at least one force evaluation (both counted in `evaluations`).
pub(crate) fn newton_solve(
    be: &mut BackwardEuler<'_>,
    x: &mut [Vec3],
    params: &StepParameters,
    sc: &mut NewtonScratch,
) -> SolveOutcome {
    let n = x.len();
    for v in [
        &mut sc.r,
        &mut sc.r_try,
        &mut sc.x_try,
        &mut sc.delta,
        &mut sc.res,
        &mut sc.z,
        &mut sc.p,
        &mut sc.q,
    ] {
        v.resize(n, Vec3::zeros());
    }
    let dt = be.dt;
    let world = be.world;
    sc.inertia.clear();
    sc.inertia.extend(
        world
            .mass
            .iter()
            .zip(&world.area)
            .map(|(&m, &a)| m / (dt * dt) + world.loads.damping_estimate(m, a) / dt),
    );
    sc.cg_iterations = 0;
    let mut out = SolveOutcome::default();
    // the tangent's factors come with the first residual (most steps need them there: the
    // predictor rarely meets the tolerance, the first Newton step mostly does)
    let mut tangent_at_x = false;
    let (mut norm, mut merit) =
        residual(be, x, &mut sc.r, Some(&mut sc.tangent), &mut tangent_at_x);
    out.evaluations = 1;
    loop {
        if out.ends_at(norm, params.tolerance, params.max_iterations) {
            break;
        }
        out.iterations += 1;
        // the tangent at x, from the trial states the residual at x left
        let kes = match &world.material {
            Material::Kes(k) => Some(k),
            _ => None,
        };
        if let Some(k) = kes {
            if !tangent_at_x {
                k.tangent(x, &be.ws.trial, &mut sc.tangent);
            }
            // counted as an evaluation either way (fused or a pass of its own)
            out.evaluations += 1;
        }
        // a system the factor was not made for (Δt, damping, masses, pins) rebuilds it, and
        // may take the Cholesky factor again after a failed one
        let same_system = sc.factor_inertia == sc.inertia && sc.factor_pinned == world.pinned();
        if !same_system {
            sc.cholesky_failed = false;
        }
        let kind = match params.integrator {
            Integrator::NewtonDirect if !sc.cholesky_failed => Factor::Cholesky,
            _ => Factor::Lines,
        };
        let ready = kes.is_some_and(|k| {
            let holds = match sc.factor {
                Factor::Lines => sc.lines.is_ready(),
                Factor::Cholesky => sc.direct.is_factored(),
            };
            if holds && sc.factor == kind && sc.factor_age < LINE_FACTOR_ITERATIONS && same_system {
                sc.factor_age += 1;
                return true;
            }
            sc.factor_age = 1;
            sc.factor_inertia.clone_from(&sc.inertia);
            sc.factor_pinned.clear();
            sc.factor_pinned.extend_from_slice(world.pinned());
            sc.factor = kind;
            let (tangent, inertia) = (&sc.tangent, &sc.inertia);
            // the Cholesky factor, else (not asked for, or not positive definite: then the
            // lines until the system changes) the lines
            if kind == Factor::Cholesky {
                if sc.direct.factor(tangent, inertia, world.pinned()) {
                    return true;
                }
                sc.cholesky_failed = true;
            }
            sc.factor = Factor::Lines;
            sc.lines.build_with(world, |diag, edge| {
                diag.extend(inertia.iter().map(|&s| Mat3::identity() * s));
                k.tangent_blocks(tangent, diag, edge);
            })
        });
        if !ready {
            sc.factor = Factor::Lines;
            sc.lines.invalidate();
        }
        conjugate_gradients(be, sc, params.forcing, &mut out);
        // halve the step until ‖D⁻¹g‖₂ goes down (at most 5 times)
        let mut lambda = 1.0;
        loop {
            for ((xt, xi), d) in sc.x_try.iter_mut().zip(x.iter()).zip(&sc.delta) {
                *xt = xi + d * lambda;
            }
            let (nt, mt) = residual(be, &sc.x_try, &mut sc.r_try, None, &mut tangent_at_x);
            out.evaluations += 1;
            if mt < merit || (lambda < 0.05 && nt.is_finite()) {
                (norm, merit) = (nt, mt);
                break;
            }
            if lambda < 0.05 {
                // no finite step: end unconverged on x, its trial states evaluated again
                let (nx, _) = residual(be, x, &mut sc.r, None, &mut tangent_at_x);
                out.evaluations += 1;
                out.residual = nx;
                return out;
            }
            lambda *= 0.5;
        }
        x.copy_from_slice(&sc.x_try);
        std::mem::swap(&mut sc.r, &mut sc.r_try);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::connectors::{bent_sheet, tangent_at, tangent_test_sheet};
    use crate::cloth::implicit::residual::{block_scaling, dot, Workspace};
    use crate::cloth::{ClothWorld, Integrator, Loads};
    use crate::material::LawState;

    /// CG's preconditioner as `newton_solve` builds it (K's diagonal blocks with the traction
    /// and shear-side couplings, three line sweeps) on a sheared, bent 6 × 5 kes sheet with a
    /// pinned corner, on random vectors: symmetric, ⟨x, By⟩ = ⟨Bx, y⟩, and positive, xᵀBx > 0.
    #[test]
    fn line_preconditioner_is_symmetric_and_positive() {
        use rand::rngs::Xoshiro256PlusPlus;
        use rand::{RngExt, SeedableRng};
        let h = 0.01;
        let mut world = tangent_test_sheet(6, 5, h);
        world.pin(0, 0).unwrap();
        let x = bent_sheet(&world, h);
        let t = tangent_at(&world, &x);
        let Material::Kes(kes) = &world.material else {
            unreachable!()
        };
        let mut d = vec![Mat3::identity() * 12.0; x.len()];
        let mut edges = Vec::new();
        kes.tangent_blocks(&t, &mut d, |a, b, m| edges.push((a, b, m)));
        // the shear sides are among the couplings, and they are not symmetric blocks
        assert!(edges
            .iter()
            .any(|(_, _, m)| (m - m.transpose()).norm() > 0.0));
        let mut lines = LinePreconditioner::default();
        assert!(lines.build(&world, &d, |edge| {
            for &(a, b, m) in &edges {
                edge(a, b, m);
            }
        }));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
        let mut random = || -> Vec<Vec3> {
            (0..x.len())
                .map(|_| Vec3::from_fn(|_, _| rng.random::<f64>() - 0.5))
                .collect()
        };
        for _ in 0..20 {
            let (u, w) = (random(), random());
            let (mut bu, mut bw) = (vec![Vec3::zeros(); u.len()], vec![Vec3::zeros(); u.len()]);
            lines.apply(&u, &mut bu);
            lines.apply(&w, &mut bw);
            let (ubw, buw) = (dot(&u, &bw), dot(&bu, &w));
            let scale = dot(&u, &bu).abs().max(dot(&w, &bw).abs());
            assert!((ubw - buw).abs() <= 1e-12 * scale, "{ubw} against {buw}");
            assert!(dot(&u, &bu) > 0.0 && dot(&w, &bw) > 0.0);
        }
    }

    /// A 9 × `nv` strip at 1 cm under `gravity` [m/s²], held by the two corners of its
    /// i = 0 end, and tangent-Newton parameters for Δt = `dt` with CG to 1e-13.
    fn strip_held_at_one_end(
        nv: usize,
        gravity: [f64; 3],
        dt: f64,
    ) -> (ClothWorld, StepParameters) {
        let mut world = tangent_test_sheet(9, nv, 0.01);
        world.loads = Loads {
            gravity,
            ..Loads::none()
        };
        world.pin(0, 0).unwrap();
        world.pin(0, nv - 1).unwrap();
        let mut params = StepParameters::new(Integrator::NewtonTangent, dt);
        params.forcing = 1e-13;
        (world, params)
    }

    /// The world's positions with the free particles moved by `s`·g·Δt² (a start for
    /// backward Euler from rest).
    fn falling_start(world: &ClothWorld, dt: f64, s: f64) -> Vec<Vec3> {
        let g = world.loads.gravity();
        world
            .x
            .iter()
            .zip(world.pinned())
            .map(|(p, &pin)| if pin { *p } else { p + g * (s * dt * dt) })
            .collect()
    }

    /// Newton on backward Euler's step Δt from the world's state at rest, from `start`:
    /// the iterate and the residual it ends at.
    fn newton_from(
        world: &ClothWorld,
        dt: f64,
        start: &[Vec3],
        params: &StepParameters,
        scratch: &mut NewtonScratch,
    ) -> (Vec<Vec3>, f64) {
        let mut d_inv = Vec::new();
        block_scaling(world, &world.x, Some(dt), &mut d_inv);
        let mut ws = Workspace::default();
        ws.resize(world);
        let mut be = BackwardEuler {
            world,
            x0: &world.x,
            v0: &world.v,
            dt,
            d_inv: &d_inv,
            precond: None,
            ws: &mut ws,
        };
        let mut x = start.to_vec();
        let out = newton_solve(&mut be, &mut x, params, scratch);
        (x, out.residual)
    }

    /// A strip 9 × 2 in the xy plane hanging from its two i = 0 particles with gravity along
    /// +x (along the warp, stretching it): every weft pair moves alike, the sheet stays flat and square, so the
    /// angles carry no force and the tangent is exact. Newton's residual then falls
    /// quadratically once close (the friction states switch branch on the way).
    #[test]
    fn newton_converges_quadratically_on_a_smooth_step() {
        let dt = 0.01;
        let (world, mut params) = strip_held_at_one_end(2, [9.81 * 5.0, 0.0, 0.0], dt);
        let start = falling_start(&world, dt, 1.0);
        let mut residuals = Vec::new();
        for k in 0..5 {
            params.max_iterations = k;
            params.tolerance = 1e-300;
            let (_, residual) =
                newton_from(&world, dt, &start, &params, &mut NewtonScratch::default());
            residuals.push(residual);
        }
        assert!(residuals[0] > 1e-4, "{residuals:?}");
        let ratio: Vec<f64> = residuals.windows(2).map(|w| w[1] / w[0]).collect();
        // every iteration gains at least 5×, and the last ones accelerate (the ratio
        // r_{k+1}/r_k falls with r_k: quadratic), down to 1e-9 of the start in four
        assert!(ratio.iter().all(|&q| q < 0.2), "{residuals:?}");
        assert!(ratio[3] < 1e-2 * ratio[2], "{residuals:?}");
        assert!(residuals[4] < 1e-9 * residuals[0], "{residuals:?}");
    }

    /// A line factor kept over Newton iterations changes CG's path, not its answer: with CG
    /// to 1e-13 one Newton iteration from a kept factor gives the fresh factor's iterate to
    /// 1e-9 of its move, from starts that differ each time; the factor is rebuilt after
    /// `LINE_FACTOR_ITERATIONS` iterations and at once when the pins change.
    #[test]
    fn a_kept_line_factor_gives_the_fresh_newton_iterate() {
        let dt = 0.005;
        let (mut world, mut params) = strip_held_at_one_end(4, [9.81 * 5.0, 0.0, -9.81], dt);
        params.max_iterations = 1;
        params.tolerance = 1e-300;
        let mut kept = NewtonScratch::default();
        for k in 0..=LINE_FACTOR_ITERATIONS + 1 {
            if k == LINE_FACTOR_ITERATIONS + 1 {
                world.pin(8, 0).unwrap();
            }
            let start = falling_start(&world, dt, 1.0 + 0.7 * k as f64);
            let (x_kept, _) = newton_from(&world, dt, &start, &params, &mut kept);
            let (x_fresh, _) =
                newton_from(&world, dt, &start, &params, &mut NewtonScratch::default());
            let moved = x_fresh
                .iter()
                .zip(&start)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            let apart = x_kept
                .iter()
                .zip(&x_fresh)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            assert!(
                moved > 1e-7 && apart <= 1e-9 * moved,
                "{k}: {apart} of {moved}"
            );
            // built at the first iteration, kept for the next three, rebuilt at the fifth
            // and at the sixth, whose pins changed
            let built = [1, 1, 1, 1, 2, 3][k];
            assert_eq!(kept.lines.factorisations, built, "{k}");
        }
    }

    /// A 6 × 2 strip of the friction laws, flat, no gravity or damping, its i = 0 end held
    /// and its i = 5 end pulled 1.5 mm along the warp and back twice, slowly (tangent Newton,
    /// 1 ms): the work the moving pins do over the cycles (∮R·dx, the loop area of the
    /// reaction) equals the work done on the connectors (−Σ∮F·dx over every particle, their
    /// hysteresis loops), to the kinetic energy left and 2 %, and it is > 0: the friction
    /// dissipates.
    #[test]
    fn cyclic_strip_dissipates_its_loop_area() {
        use crate::cloth::pipeline::ClothPipeline;
        let (nu, h) = (6, 0.01);
        let mut world = tangent_test_sheet(nu, 2, h);
        let grid = world.grid;
        world.loads = Loads::none();
        for j in 0..2 {
            world.pin(0, j).unwrap();
            world.pin(nu - 1, j).unwrap();
        }
        let moving: Vec<usize> = (0..2).map(|j| grid.index(nu - 1, j)).collect();
        let params = StepParameters::new(Integrator::NewtonTangent, 1e-3);
        let mut pipeline = ClothPipeline::new();
        let (half, speed) = (100, 0.015);
        let internal = |w: &ClothWorld| {
            let mut trial = vec![LawState::default(); w.state_len()];
            let mut f = vec![Vec3::zeros(); w.len()];
            w.add_internal_forces(&w.x, &mut trial, &mut f);
            f
        };
        let (mut w_pins, mut w_internal) = (0.0, 0.0);
        let mut f0 = internal(&world);
        for n in 0..4 * half {
            let v = if (n / half) % 2 == 0 { speed } else { -speed };
            for &k in &moving {
                assert!(world.set_pin_velocity(k, Vec3::new(v, 0.0, 0.0)));
            }
            let x0 = world.x.clone();
            let report = pipeline.step(&params, &mut world).unwrap();
            assert!(report.solve.converged, "{:?}", report.solve);
            let f1 = internal(&world);
            for k in 0..world.len() {
                let dw = -0.5 * (f0[k] + f1[k]).dot(&(world.x[k] - x0[k]));
                w_internal += dw;
                if moving.contains(&k) {
                    w_pins += dw;
                }
            }
            f0 = f1;
        }
        let back = (world.x[moving[0]] - Vec3::new((nu - 1) as f64 * h, 0.0, 0.0)).norm();
        assert!(back < 1e-12, "the pins end {back} m from their start");
        let ke = world.kinetic_energy();
        assert!(w_internal > 0.0, "{w_internal}");
        assert!(
            (w_pins - w_internal).abs() <= 0.02 * w_internal + ke,
            "pins {w_pins} J, connectors {w_internal} J, kinetic {ke} J"
        );
    }
}
