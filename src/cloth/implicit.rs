//! Backward Euler, M(x₁ − x₀ − Δt·v₀)/Δt² = F(x₁, (x₁ − x₀)/Δt), solved for x₁ [m] by Broyden's
//! method (limited memory, one force evaluation per iteration; Ngo Ngoc & Boivin §5) or by
//! Newton–Krylov (GMRES, Jacobian–vector products by differences), on the block-scaled
//! residual G_i = D_i⁻¹g_i, D_i = (m/Δt² + (γm + cA)/Δt)·I + Σ k·k̂k̂ᵀ [N/m]: |G_i| is a length [m].

mod broyden;
mod direct;
mod krylov;
mod newton;
mod residual;

use super::line_precond::LinePreconditioner;
use super::pipeline::{Preconditioner, StepParameters};
use super::precond::StretchPreconditioner;
use super::world::ClothWorld;
use super::{Mat3, Vec3};

use broyden::{broyden_solve, BroydenScratch};
use krylov::{newton_krylov_solve, KrylovScratch};
use newton::{newton_solve, NewtonScratch};
use residual::{
    block_diagonal, block_scaling, invert_block, ActivePreconditioner, BackwardEuler,
    StaticEquilibrium,
};

pub(crate) use residual::Workspace;

/// How a nonlinear solve ended.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SolveOutcome {
    /// Iterations (Broyden updates or Newton steps).
    pub iterations: usize,
    /// Force evaluations, the cost unit.
    pub evaluations: usize,
    /// max_i |G_i| at the end \[m\].
    pub residual: f64,
    pub converged: bool,
    /// Inner linear iterations (conjugate gradients of `newton_tangent` and `newton_direct`,
    /// else 0).
    pub linear_iterations: usize,
}

impl SolveOutcome {
    /// Records the residual norm of the iterate \[m\]; whether the Newton-type iteration
    /// ends there: converged, not finite, or out of iterations.
    fn ends_at(&mut self, norm: f64, tolerance: f64, max_iterations: usize) -> bool {
        self.residual = norm;
        self.converged = norm <= tolerance;
        self.converged || !norm.is_finite() || self.iterations >= max_iterations
    }
}

/// Scratch of a backward-Euler step: the scaling, the predictor's acceleration and the iterate.
#[derive(Debug, Default, Clone)]
struct BackwardEulerScratch {
    ws: Workspace,
    d: Vec<Mat3>,
    d_inv: Vec<Mat3>,
    /// Acceleration of the last solved step, for the predictor.
    a_prev: Vec<Vec3>,
    /// The iterate x₁ (the world keeps x₀ and v₀ until the step ends).
    x: Vec<Vec3>,
}

impl BackwardEulerScratch {
    /// Predictor x₀ + Δt·v₀ + Δt²·a (a: the last step's acceleration, gravity at first) with
    /// the pins at their targets, `solve`, then
    /// v₁ = (x₁ − x₀)/Δt and the friction states of the last evaluation (at x₁) committed.
    ///
    /// The residual is preconditioned by `precond` (`StepPreconditioner::prepare` at the
    /// predictor); when it cannot be built the step falls back to the block scaling.
    fn step(
        &mut self,
        params: &StepParameters,
        world: &mut ClothWorld,
        precond: &mut StepPreconditioner,
        solve: impl FnOnce(&mut BackwardEuler<'_>, &mut [Vec3]) -> SolveOutcome,
    ) -> SolveOutcome {
        let dt = params.dt;
        self.ws.resize(world);
        if world.steps == 0 || self.a_prev.len() != world.len() {
            self.a_prev.clear();
            self.a_prev.resize(world.len(), world.loads.gravity());
        }
        self.x.clear();
        self.x.extend(
            world
                .x
                .iter()
                .zip(&world.v)
                .zip(&self.a_prev)
                .map(|((xi, vi), ai)| xi + vi * dt + ai * (dt * dt)),
        );
        for (k, target) in world.pin_targets(dt) {
            self.x[k] = target;
        }
        block_diagonal(world, &self.x, Some(dt), &mut self.d);
        self.d_inv.clear();
        self.d_inv.extend(self.d.iter().map(invert_block));
        let precond = precond.prepare(params, world, &self.x, &self.d);
        let outcome = {
            let mut res = BackwardEuler {
                world,
                x0: &world.x,
                v0: &world.v,
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
            .zip(&world.x)
        {
            let v1 = (x1 - x0) * inv_dt;
            *a = (v1 - *v) * inv_dt;
            *v = v1;
        }
        // the new positions swapped in (self.x, the next step's scratch, gets the old ones)
        std::mem::swap(&mut world.x, &mut self.x);
        // the replaced states kept for the pipeline to take the step back (ws.trial, which
        // receives an older buffer, is resized at the next step)
        world.commit_keeping_start(&mut self.ws.trial);
        world.advance_pins(dt);
        outcome
    }
}

/// Steps between factorisations of the stretch preconditioner (sooner when it goes stale).
const REFACTOR_EVERY: usize = 10;

/// The preconditioner of the implicit steppers and when to rebuild it: the stretch factor
/// every `REFACTOR_EVERY` steps (sooner when stale or for a new Δt), the line factor at every
/// step (it costs about one force evaluation).
#[derive(Debug, Default, Clone)]
struct StepPreconditioner {
    stretch: StretchPreconditioner,
    lines: LinePreconditioner,
    /// Steps since the last factorisation of the stretch P.
    since_factor: usize,
    /// Iterations of the first step on the current stretch factor.
    fresh_iterations: usize,
    /// Δt the stretch factor was made for [s] (P holds M/Δt²: a halved step needs a new one).
    factor_dt: f64,
    /// Stretch factorisations before the current step.
    before: u64,
}

impl StepPreconditioner {
    /// The preconditioner of this step at the predictor `x` with the diagonal blocks `d`,
    /// rebuilt as the rules above say; `None` for the block scaling or when it fails.
    fn prepare(
        &mut self,
        params: &StepParameters,
        world: &ClothWorld,
        x: &[Vec3],
        d: &[Mat3],
    ) -> Option<ActivePreconditioner<'_>> {
        self.before = self.stretch.factorisations;
        match params.preconditioner {
            Preconditioner::Block => None,
            Preconditioner::Stretch => {
                let p = &mut self.stretch;
                let refactor = self.since_factor >= REFACTOR_EVERY || self.factor_dt != params.dt;
                if (refactor || !p.is_ready()) && !p.refactor(world, x, d) {
                    p.invalidate();
                }
                p.is_ready()
                    .then_some(ActivePreconditioner::Stretch(&self.stretch))
            }
            Preconditioner::Lines => {
                let p = &mut self.lines;
                if !p.refactor(world, x, d) {
                    p.invalidate();
                }
                p.is_ready()
                    .then_some(ActivePreconditioner::Lines(&mut self.lines))
            }
        }
    }

    /// Book-keeping after a step: a stretch factor that has gone stale (half again the
    /// iterations it took when fresh) or a failed solve is replaced at the next step.
    fn after_step(&mut self, params: &StepParameters, outcome: &SolveOutcome) {
        if self.stretch.factorisations != self.before {
            self.since_factor = 0;
            self.fresh_iterations = outcome.iterations;
            self.factor_dt = params.dt;
        }
        self.since_factor += 1;
        if outcome.iterations > self.fresh_iterations + self.fresh_iterations / 2 + 2
            || !outcome.converged
        {
            self.since_factor = REFACTOR_EVERY;
        }
    }
}

/// Backward Euler stepped by Broyden's method.
#[derive(Debug, Default, Clone)]
pub struct BroydenStepper {
    be: BackwardEulerScratch,
    scratch: BroydenScratch,
    precond: StepPreconditioner,
}

/// Backward Euler stepped by Newton's method with the analytic tangent (conjugate gradients
/// preconditioned by line solves of the tangent's traction and shear-side couplings, or by
/// the system's Cholesky factor for `newton_direct`).
#[derive(Debug, Default, Clone)]
pub struct NewtonTangentStepper {
    be: BackwardEulerScratch,
    scratch: NewtonScratch,
    precond: StepPreconditioner,
}

impl NewtonTangentStepper {
    pub fn new() -> Self {
        Self::default()
    }

    /// One backward-Euler step of `world` by Newton with the analytic tangent (its own
    /// preconditioner: the scene's `preconditioner` is not used).
    pub(crate) fn step(&mut self, params: &StepParameters, world: &mut ClothWorld) -> SolveOutcome {
        let sc = &mut self.scratch;
        let block = StepParameters {
            preconditioner: Preconditioner::Block,
            ..*params
        };
        let (be, precond) = (&mut self.be, &mut self.precond);
        // the whole step on one of rayon's threads: the solver's parallel loops then start
        // from inside the pool instead of handing each one over from outside
        rayon::scope(|_| {
            be.step(&block, world, precond, |res, x| {
                newton_solve(res, x, params, sc)
            })
        })
    }
}

/// Backward Euler stepped by Newton–Krylov, on the same preconditioned residual.
#[derive(Debug, Default, Clone)]
pub struct NewtonKrylovStepper {
    be: BackwardEulerScratch,
    scratch: KrylovScratch,
    precond: StepPreconditioner,
}

impl BroydenStepper {
    pub fn new() -> Self {
        Self::default()
    }

    /// One backward-Euler step of `world` (friction committed once, at the accepted x₁).
    pub(crate) fn step(&mut self, params: &StepParameters, world: &mut ClothWorld) -> SolveOutcome {
        let sc = &mut self.scratch;
        let outcome = self.be.step(params, world, &mut self.precond, |res, x| {
            broyden_solve(
                res,
                x,
                params.tolerance,
                params.max_iterations,
                params.memory,
                sc,
            )
        });
        self.precond.after_step(params, &outcome);
        outcome
    }

    /// Moves the free particles of `world` to static equilibrium of the internal forces
    /// (quasi-static loading) until max_i |D⁻¹g_i| ≤ `tolerance` \[m\], commits the friction
    /// states and zeroes the velocities.
    pub(crate) fn solve_static(
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
    pub(crate) fn step(&mut self, params: &StepParameters, world: &mut ClothWorld) -> SolveOutcome {
        let sc = &mut self.scratch;
        let outcome = self.be.step(params, world, &mut self.precond, |res, x| {
            newton_krylov_solve(res, x, params, sc)
        });
        self.precond.after_step(params, &outcome);
        outcome
    }
}
