//! Backward Euler, M(x₁ − x₀ − Δt·v₀)/Δt² = F(x₁, (x₁ − x₀)/Δt), solved for x₁ [m] by Broyden's
//! method (limited memory, one force evaluation per iteration; Ngo Ngoc & Boivin §5) or by
//! Newton–Krylov (GMRES, Jacobian–vector products by differences), on the block-scaled
//! residual G_i = D_i⁻¹g_i, D_i = (m/Δt² + (γm + cA)/Δt)·I + Σ k·k̂k̂ᵀ [N/m]: |G_i| is a length [m].

use crate::material::LawState;

use super::pipeline::{Preconditioner, StepParameters};
use super::precond::StretchPreconditioner;
use super::world::ClothWorld;
use super::{Mat3, Vec3};

/// How a nonlinear solve ended.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SolveOutcome {
    /// Iterations (Broyden updates or Newton steps).
    pub iterations: usize,
    /// Force evaluations, the cost unit.
    pub evaluations: usize,
    /// max_i |G_i| at the end [m].
    pub residual: f64,
    pub converged: bool,
}

/// Scratch shared by the residuals: forces, velocities, normals and trial law states.
#[derive(Debug, Default, Clone)]
pub(crate) struct Workspace {
    pub force: Vec<Vec3>,
    pub vel: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub trial: Vec<LawState>,
    /// Right-hand side of the preconditioner solve, 3 entries per particle.
    pub rhs: Vec<f64>,
}

impl Workspace {
    pub fn resize(&mut self, world: &ClothWorld) {
        let n = world.len();
        self.force.resize(n, Vec3::zeros());
        self.vel.resize(n, Vec3::zeros());
        self.normals.resize(n, Vec3::zeros());
        self.trial.resize(world.state_len(), LawState::default());
        self.rhs.resize(3 * n, 0.0);
    }
}

/// A scaled residual G(x) over the particles (zero on pinned ones).
pub(crate) trait Residual {
    /// Writes G(x) into `g` and returns max_i |G_i| [m].
    fn eval(&mut self, x: &[Vec3], g: &mut [Vec3]) -> f64;
}

/// The backward-Euler residual of one step.
pub(crate) struct BackwardEuler<'a> {
    pub world: &'a ClothWorld,
    pub x0: &'a [Vec3],
    pub v0: &'a [Vec3],
    pub dt: f64,
    pub d_inv: &'a [Mat3],
    /// When given, G = P⁻¹g instead of D⁻¹g (the norm stays max_i |D_i⁻¹g_i|): Broyden on
    /// P⁻¹g from H₀ = I is Broyden on D⁻¹g from H₀ = P⁻¹D, the same iterates.
    pub precond: Option<&'a StretchPreconditioner>,
    pub ws: &'a mut Workspace,
}

impl Residual for BackwardEuler<'_> {
    fn eval(&mut self, x: &[Vec3], g: &mut [Vec3]) -> f64 {
        let inv_dt = 1.0 / self.dt;
        let ws = &mut *self.ws;
        for ((v, x1), x0) in ws.vel.iter_mut().zip(x).zip(self.x0) {
            *v = (x1 - x0) * inv_dt;
        }
        self.world
            .forces(x, &ws.vel, &mut ws.trial, &mut ws.normals, &mut ws.force);
        let pinned = self.world.pinned();
        let mut norm: f64 = 0.0;
        for k in 0..x.len() {
            // pinned rows: zero residual (and right-hand side of the preconditioner solve)
            let r = if pinned[k] {
                g[k] = Vec3::zeros();
                Vec3::zeros()
            } else {
                let m = self.world.mass[k];
                let r = (x[k] - self.x0[k] - self.v0[k] * self.dt) * (m * inv_dt * inv_dt)
                    - ws.force[k];
                g[k] = self.d_inv[k] * r;
                norm = norm.max(g[k].norm());
                r
            };
            if self.precond.is_some() {
                ws.rhs[3 * k..3 * k + 3].copy_from_slice(r.as_slice());
            }
        }
        if let Some(p) = self.precond {
            p.solve_in_place(&mut ws.rhs);
            for (k, gk) in g.iter_mut().enumerate() {
                *gk = if pinned[k] {
                    Vec3::zeros()
                } else {
                    Vec3::new(ws.rhs[3 * k], ws.rhs[3 * k + 1], ws.rhs[3 * k + 2])
                };
            }
        }
        if norm.is_nan() {
            f64::INFINITY
        } else {
            norm
        }
    }
}

/// The static residual −F_internal(x) of a quasi-static solve (no inertia, no loads).
pub(crate) struct StaticEquilibrium<'a> {
    pub world: &'a ClothWorld,
    pub d_inv: &'a [Mat3],
    pub ws: &'a mut Workspace,
}

impl Residual for StaticEquilibrium<'_> {
    fn eval(&mut self, x: &[Vec3], g: &mut [Vec3]) -> f64 {
        let ws = &mut *self.ws;
        ws.force.fill(Vec3::zeros());
        self.world
            .add_internal_forces(x, &mut ws.trial, &mut ws.force);
        let pinned = self.world.pinned();
        let mut norm: f64 = 0.0;
        for k in 0..x.len() {
            g[k] = if pinned[k] {
                Vec3::zeros()
            } else {
                -(self.d_inv[k] * ws.force[k])
            };
            norm = norm.max(g[k].norm());
        }
        if norm.is_nan() {
            f64::INFINITY
        } else {
            norm
        }
    }
}

#[inline]
fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p.dot(q)).sum()
}

#[inline]
fn norm_inf(a: &[Vec3]) -> f64 {
    a.iter().map(|p| p.norm()).fold(0.0, f64::max)
}

/// D_i⁻¹ per particle at positions `x`, D_i = (m/Δt² + (γm + cA)/Δt)·I + K_i for a dynamic
/// step (`dt` given), D_i = K_i + 10⁻⁶·tr(K_i)/3·I for a static solve.
pub(crate) fn block_scaling(world: &ClothWorld, x: &[Vec3], dt: Option<f64>, out: &mut Vec<Mat3>) {
    block_diagonal(world, x, dt, out);
    for b in out.iter_mut() {
        *b = invert_block(b);
    }
}

fn invert_block(full: &Mat3) -> Mat3 {
    full.try_inverse().unwrap_or_else(|| {
        Mat3::from_diagonal(&full.diagonal().map(|v| if v > 0.0 { 1.0 / v } else { 0.0 }))
    })
}

/// The blocks D_i of `block_scaling`, not inverted [N/m].
pub(crate) fn block_diagonal(world: &ClothWorld, x: &[Vec3], dt: Option<f64>, out: &mut Vec<Mat3>) {
    let n = world.len();
    out.clear();
    out.resize(n, Mat3::zeros());
    match &world.material {
        super::Material::Springs(s) => s.stiffness_blocks(x, out),
        super::Material::Kes(k) => k.stiffness_blocks(x, out),
        super::Material::Terzopoulos(t) => t.stiffness_blocks(x, out),
    }
    for (k, b) in out.iter_mut().enumerate() {
        let d = match dt {
            Some(dt) => {
                world.mass[k] / (dt * dt)
                    + world.loads.damping_estimate(world.mass[k], world.area[k]) / dt
            }
            None => 1e-6 * b.trace() / 3.0,
        };
        *b += Mat3::identity() * d;
    }
}

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
        out.residual = norm;
        if norm <= params.tolerance {
            out.converged = true;
            break;
        }
        if !norm.is_finite() || out.iterations >= params.max_iterations {
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

/// Scratch of a backward-Euler step: the scaling, the step-start state and the iterate.
#[derive(Debug, Default, Clone)]
struct BackwardEulerScratch {
    ws: Workspace,
    d: Vec<Mat3>,
    d_inv: Vec<Mat3>,
    /// Acceleration of the last solved step, for the predictor.
    a_prev: Vec<Vec3>,
    x0: Vec<Vec3>,
    v0: Vec<Vec3>,
    x: Vec<Vec3>,
}

impl BackwardEulerScratch {
    /// Predictor x₀ + Δt·v₀ + Δt²·a (a: the last step's acceleration, gravity at first) with
    /// the pins at their targets, `solve`, then
    /// v₁ = (x₁ − x₀)/Δt and the friction states of the last evaluation (at x₁) committed.
    ///
    /// With `precond`, the residual is preconditioned by P, refactored at the predictor when
    /// the flag asks for it or it holds no factor; when P cannot be factored the step falls
    /// back to the block scaling.
    fn step(
        &mut self,
        params: &StepParameters,
        world: &mut ClothWorld,
        precond: Option<(&mut StretchPreconditioner, bool)>,
        solve: impl FnOnce(&mut BackwardEuler<'_>, &mut [Vec3]) -> SolveOutcome,
    ) -> SolveOutcome {
        let dt = params.dt;
        self.ws.resize(world);
        self.x0.clone_from(&world.x);
        self.v0.clone_from(&world.v);
        if world.steps == 0 || self.a_prev.len() != world.len() {
            self.a_prev.clear();
            self.a_prev.resize(world.len(), world.loads.gravity());
        }
        self.x.clear();
        self.x.extend(
            self.x0
                .iter()
                .zip(&self.v0)
                .zip(&self.a_prev)
                .map(|((xi, vi), ai)| xi + vi * dt + ai * (dt * dt)),
        );
        for (k, target) in world.pin_targets(dt) {
            self.x[k] = target;
        }
        block_diagonal(world, &self.x, Some(dt), &mut self.d);
        self.d_inv.clear();
        self.d_inv.extend(self.d.iter().map(invert_block));
        let precond = match precond {
            Some((p, refactor)) => {
                if (refactor || !p.is_ready()) && !p.refactor(world, &self.x, &self.d) {
                    p.invalidate();
                }
                p.is_ready().then_some(&*p)
            }
            None => None,
        };
        let outcome = {
            let mut res = BackwardEuler {
                world,
                x0: &self.x0,
                v0: &self.v0,
                dt,
                d_inv: &self.d_inv,
                precond,
                ws: &mut self.ws,
            };
            solve(&mut res, &mut self.x)
        };
        let inv_dt = 1.0 / dt;
        for (((v, a), x1), x0) in world
            .v
            .iter_mut()
            .zip(&mut self.a_prev)
            .zip(&self.x)
            .zip(&self.x0)
        {
            let v1 = (x1 - x0) * inv_dt;
            *a = (v1 - *v) * inv_dt;
            *v = v1;
        }
        world.x.clone_from(&self.x);
        world.commit(&mut self.ws.trial);
        world.advance_pins(dt);
        outcome
    }
}

/// Steps between factorisations of the stretch preconditioner (sooner when it goes stale).
const REFACTOR_EVERY: usize = 10;

/// Backward Euler stepped by Broyden's method.
#[derive(Debug, Default, Clone)]
pub struct BroydenStepper {
    be: BackwardEulerScratch,
    scratch: BroydenScratch,
    precond: StretchPreconditioner,
    /// Steps since the last factorisation of P.
    since_factor: usize,
    /// Broyden iterations of the first step on the current factor.
    fresh_iterations: usize,
    /// Δt the factor was made for [s] (P holds M/Δt²: a halved step needs a new one).
    factor_dt: f64,
}

/// Backward Euler stepped by Newton–Krylov (the reference).
#[derive(Debug, Default, Clone)]
pub struct NewtonKrylovStepper {
    be: BackwardEulerScratch,
    scratch: KrylovScratch,
}

impl BroydenStepper {
    pub fn new() -> Self {
        Self::default()
    }

    /// One backward-Euler step of `world` (friction committed once, at the accepted x₁).
    pub fn step(&mut self, params: &StepParameters, world: &mut ClothWorld) -> SolveOutcome {
        let sc = &mut self.scratch;
        let before = self.precond.factorisations;
        let precond = match params.preconditioner {
            Preconditioner::Block => None,
            Preconditioner::Stretch => {
                let refactor = self.since_factor >= REFACTOR_EVERY || self.factor_dt != params.dt;
                Some((&mut self.precond, refactor))
            }
        };
        let outcome = self.be.step(params, world, precond, |res, x| {
            broyden_solve(
                res,
                x,
                params.tolerance,
                params.max_iterations,
                params.memory,
                sc,
            )
        });
        if self.precond.factorisations != before {
            self.since_factor = 0;
            self.fresh_iterations = outcome.iterations;
            self.factor_dt = params.dt;
        }
        self.since_factor += 1;
        // a factor that has gone stale (half again the iterations it took when fresh) or a
        // failed solve is replaced at the next step
        if outcome.iterations > self.fresh_iterations + self.fresh_iterations / 2 + 2
            || !outcome.converged
        {
            self.since_factor = REFACTOR_EVERY;
        }
        outcome
    }

    /// Moves the free particles of `world` to static equilibrium of the internal forces
    /// (quasi-static loading) until max_i |D⁻¹g_i| ≤ `tolerance` [m], commits the friction
    /// states and zeroes the velocities.
    pub fn solve_static(
        &mut self,
        params: &StepParameters,
        tolerance: f64,
        world: &mut ClothWorld,
    ) -> SolveOutcome {
        let be = &mut self.be;
        be.ws.resize(world);
        block_scaling(world, &world.x, None, &mut be.d_inv);
        be.x.clone_from(&world.x);
        let outcome = {
            let mut res = StaticEquilibrium {
                world,
                d_inv: &be.d_inv,
                ws: &mut be.ws,
            };
            broyden_solve(
                &mut res,
                &mut be.x,
                tolerance,
                params.max_iterations,
                params.memory,
                &mut self.scratch,
            )
        };
        world.x.clone_from(&be.x);
        world.v.fill(Vec3::zeros());
        world.commit(&mut be.ws.trial);
        outcome
    }
}

impl NewtonKrylovStepper {
    pub fn new() -> Self {
        Self::default()
    }

    /// One backward-Euler step of `world` by Newton–Krylov.
    pub fn step(&mut self, params: &StepParameters, world: &mut ClothWorld) -> SolveOutcome {
        let sc = &mut self.scratch;
        self.be.step(params, world, None, |res, x| {
            newton_krylov_solve(res, x, params, sc)
        })
    }
}
