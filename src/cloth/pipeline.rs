//! The step pipeline: integrate (explicit, backward Euler or semi-implicit), Provot's constraints, obstacles by
//! dynamic inverse (v = Δx/Δt for moved particles), then the blow-up check; time in s.

use serde::{Deserialize, Serialize};

use super::constraints::ProvotConstraints;
use super::explicit::SymplecticEulerStepper;
use super::implicit::{BroydenStepper, NewtonKrylovStepper, NewtonTangentStepper, SolveOutcome};
use super::semi_implicit::{SemiImplicitStepper, SemiImplicitTiming};
use super::world::{ClothWorld, WorldSnapshot};
use super::{ClothError, SettingError, Vec3};
use crate::material::LawState;

crate::named::named_enum! {
    /// The preconditioner of the implicit steps (Broyden's H₀, Newton–Krylov's left
    /// preconditioner).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Preconditioner: "preconditioner", folded_snake {
        /// D⁻¹, the per-particle block scaling.
        Block => "block",
        /// P⁻¹, P = D with the stretch stiffness k·d̂d̂ᵀ of each traction connector (or
        /// spring) coupling its ends, by sparse Cholesky.
        #[default]
        Stretch => "stretch",
        /// P applied by block-tridiagonal solves along the warp, weft and warp lines again
        /// (O(n), rebuilt every step).
        Lines => "lines",
    }
}

crate::named::named_enum! {
    /// The time integrator of a scene.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Integrator: "integrator", folded_snake {
        /// Symplectic Euler (Provot eq. 2).
        Explicit => "explicit" | "symplectic_euler" | "euler",
        /// Backward Euler solved by limited-memory Broyden.
        Broyden => "broyden" | "implicit",
        /// Backward Euler solved by Newton–Krylov (GMRES, differenced Jacobian–vector products).
        NewtonKrylov => "newton_krylov" | "newton" | "nk",
        /// Backward Euler solved by Newton with the analytic tangent and preconditioned
        /// conjugate gradients.
        NewtonTangent => "newton_tangent" | "newton_cg" | "tangent",
        /// Backward Euler solved by Newton with the analytic tangent and conjugate gradients
        /// preconditioned by the system's sparse Cholesky factor (refactored every fourth
        /// Newton iteration; the line solves where Cholesky fails).
        NewtonDirect => "newton_direct" | "newton_cholesky" | "direct",
        /// Terzopoulos' semi-implicit scheme (eqs. 28–31), for the `terzopoulos` material.
        SemiImplicit => "semi_implicit" | "terzopoulos",
    }
}

impl Integrator {
    /// The solver settings of a step (`[integrator]` keys), each read by some integrators only.
    pub const SOLVER_KEYS: [&'static str; 6] = [
        "tolerance",
        "max_iterations",
        "memory",
        "krylov_dim",
        "forcing",
        "preconditioner",
    ];

    /// Whether this integrator reads the solver setting `key` (one of [`Self::SOLVER_KEYS`];
    /// any other key: true): explicit and semi-implicit read none; the Newton solvers with the
    /// analytic tangent no `memory`, `krylov_dim` or `preconditioner` (their own).
    pub fn reads(self, key: &str) -> bool {
        use Integrator::*;
        match key {
            "tolerance" | "max_iterations" => {
                matches!(self, Broyden | NewtonKrylov | NewtonTangent | NewtonDirect)
            }
            "memory" => self == Broyden,
            "krylov_dim" => self == NewtonKrylov,
            "forcing" => matches!(self, NewtonKrylov | NewtonTangent | NewtonDirect),
            "preconditioner" => matches!(self, Broyden | NewtonKrylov),
            _ => true,
        }
    }

    /// The integrators that read `key`, for messages: "broyden and newton_krylov".
    pub fn readers(key: &str) -> String {
        let names: Vec<&str> = [
            Integrator::Explicit,
            Integrator::Broyden,
            Integrator::NewtonKrylov,
            Integrator::NewtonTangent,
            Integrator::NewtonDirect,
            Integrator::SemiImplicit,
        ]
        .into_iter()
        .filter(|i| i.reads(key))
        .map(Integrator::name)
        .collect();
        match names.split_last() {
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => "none".into(),
        }
    }
}

/// Most steps of one run (scene `steps`, `--steps`, frames × steps between them): 10⁸.
pub const MAX_STEPS: u64 = 100_000_000;
/// Most implicit iterations per step, stored Broyden steps and GMRES iterations.
pub const MAX_ITERATIONS: usize = 10_000;
pub const MAX_MEMORY: usize = 100;
pub const MAX_KRYLOV_DIM: usize = 200;

/// Refuses more than [`MAX_STEPS`] steps; `what` names the input (`steps`, `--frames × --every`).
pub fn check_steps(what: &str, steps: u64) -> Result<(), SettingError> {
    if steps > MAX_STEPS {
        // three significant digits: a count from a huge duration is not read to the step
        let v = steps as f64;
        let unit = 10f64.powf((v.log10().floor() - 2.0).max(0.0));
        return Err(SettingError::range(
            what.to_string(),
            (v / unit).round() * unit,
            " steps",
            "at most 1e8 steps",
        ));
    }
    Ok(())
}

/// Everything a step needs besides the world.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepParameters {
    /// Time step Δt \[s\].
    pub dt: f64,
    pub integrator: Integrator,
    /// Provot's deformation-rate constraints (applied after any integrator). Default none.
    pub constraints: ProvotConstraints,
    /// Implicit steps stop when max_i |D_i⁻¹g_i| ≤ tolerance \[m\], g = M(x₁ − x₀ − Δt·v₀)/Δt² − F
    /// and D_i the block scaling (docs/cloth.md). Default 1e-8 m.
    pub tolerance: f64,
    /// Implicit: most Broyden iterations or Newton steps per step. Default 100.
    pub max_iterations: usize,
    /// Broyden: steps stored before a restart. Default 20.
    pub memory: usize,
    /// Broyden: the initial inverse Jacobian H₀. Default `Stretch`.
    pub preconditioner: Preconditioner,
    /// Newton–Krylov: most GMRES iterations per Newton step. Default 40.
    pub krylov_dim: usize,
    /// Newton–Krylov: relative GMRES tolerance (forcing term). Default 0.1.
    pub forcing: f64,
    /// Blow-up when the kinetic energy exceeds this multiple of the world's reference energy
    /// (or any state is not finite, or a structural pair reaches 100× its rest length).
    /// Default 1e4.
    pub runaway_factor: f64,
}

/// The longest time step \[s\]: the drape test's static steps reach 1 s; no dynamic step is
/// near it (the shipped scenes take 0.1 to 5 ms).
pub const MAX_DT_S: f64 = 1.0;

impl StepParameters {
    /// Defaults for an integrator and a time step.
    pub fn new(integrator: Integrator, dt: f64) -> Self {
        Self {
            dt,
            integrator,
            constraints: ProvotConstraints::none(),
            tolerance: 1e-8,
            max_iterations: 100,
            memory: 20,
            preconditioner: Preconditioner::Stretch,
            krylov_dim: 40,
            forcing: 0.1,
            runaway_factor: 1e4,
        }
    }

    pub fn validate(&self) -> Result<(), SettingError> {
        if !(self.dt.is_finite() && self.dt > 0.0 && self.dt <= MAX_DT_S) {
            return Err(SettingError::range(
                "dt",
                self.dt,
                " s",
                "finite, > 0 and at most 1 s (a cloth's step resolves its motion: the shipped \
                 scenes take 0.1 to 5 ms, the drape test's static steps at most 1 s)",
            ));
        }
        SettingError::positive("tolerance", self.tolerance, " m")?;
        if !(1..=MAX_ITERATIONS).contains(&self.max_iterations)
            || !(2..=MAX_MEMORY).contains(&self.memory)
            || !(1..=MAX_KRYLOV_DIM).contains(&self.krylov_dim)
        {
            return Err(SettingError::SolverCounts);
        }
        if !(self.forcing > 0.0 && self.forcing < 1.0) {
            return Err(SettingError::range(
                "forcing",
                self.forcing,
                "",
                "in (0, 1)",
            ));
        }
        self.constraints.validate()
    }
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepReport {
    /// The implicit solve (zero iterations and one evaluation for the explicit step).
    pub solve: SolveOutcome,
    /// Pairs shortened by Provot's constraints.
    pub constrained: usize,
    /// Particles put back on an obstacle.
    pub contacts: usize,
    /// Implicit steps that did not converge and were taken again as two halves (counted at
    /// every level; the evaluations of the attempts are in `solve`).
    pub halvings: usize,
}

/// How often an implicit step that does not converge is halved before its best iterate is
/// accepted (Δt/8 at the finest).
pub const MAX_HALVINGS: usize = 3;

/// Steps a world; holds the integrators' scratch memory and the Newton solver's line factor,
/// kept across steps (a fresh pipeline takes another CG path to the same tolerance).
#[derive(Debug, Default, Clone)]
pub struct ClothPipeline {
    explicit: SymplecticEulerStepper,
    broyden: BroydenStepper,
    newton: NewtonKrylovStepper,
    tangent: NewtonTangentStepper,
    semi_implicit: SemiImplicitStepper,
    x_start: Vec<Vec3>,
    /// The world before an implicit step, per halving level, to take the step back.
    before: Vec<WorldSnapshot>,
    /// Law states at the start of a step that may be projected, and scratch to re-follow them.
    start_states: Vec<LawState>,
    trial: Vec<LawState>,
    force: Vec<Vec3>,
}

impl ClothPipeline {
    pub fn new() -> Self {
        Self::default()
    }

    /// Advances `world` by one step; a blow-up is an error naming the step, the time and the
    /// worst connector.
    pub fn step(
        &mut self,
        params: &StepParameters,
        world: &mut ClothWorld,
    ) -> Result<StepReport, ClothError> {
        let report = self.advance(params, world, 0)?;
        world.steps += 1;
        check_blow_up(params, world)?;
        Ok(report)
    }

    /// Integrator, constraints and contacts over `params.dt`. An implicit step that does not
    /// converge is taken back and done as two half steps (down to Δt/2^MAX_HALVINGS).
    fn advance(
        &mut self,
        params: &StepParameters,
        world: &mut ClothWorld,
        level: usize,
    ) -> Result<StepReport, ClothError> {
        let dt = params.dt;
        let mut report = StepReport::default();
        let implicit = matches!(
            params.integrator,
            Integrator::Broyden
                | Integrator::NewtonKrylov
                | Integrator::NewtonTangent
                | Integrator::NewtonDirect
        );
        let may_halve = implicit && level < MAX_HALVINGS;
        if may_halve {
            if self.before.len() <= level {
                self.before.resize_with(level + 1, WorldSnapshot::default);
            }
            // the law states stay with the world: the step's commit keeps them
            world.save_step_start(&mut self.before[level]);
        }
        let constrained = params.constraints.is_active();
        if constrained {
            self.x_start.clone_from(&world.x);
        }
        let projected = constrained || !world.obstacles.is_empty();
        // the snapshot, when taken, holds the start states already
        if projected && !may_halve {
            world.copy_states(&mut self.start_states);
        }
        match params.integrator {
            Integrator::Explicit => {
                self.explicit.step(params, world);
                report.solve = SolveOutcome {
                    iterations: 0,
                    evaluations: 1,
                    residual: 0.0,
                    converged: true,
                    linear_iterations: 0,
                };
            }
            Integrator::Broyden => report.solve = self.broyden.step(params, world),
            Integrator::NewtonKrylov => report.solve = self.newton.step(params, world),
            Integrator::NewtonTangent | Integrator::NewtonDirect => {
                if !matches!(world.material, super::world::Material::Kes(_)) {
                    return Err(ClothError::Invalid(format!(
                        "integrator {} needs the kes material (its analytic tangent is the kes \
                         connectors'); use broyden",
                        params.integrator.name()
                    )));
                }
                report.solve = self.tangent.step(params, world);
            }
            Integrator::SemiImplicit => {
                self.semi_implicit.step(dt, world)?;
                report.solve = SolveOutcome {
                    iterations: 1,
                    evaluations: 1,
                    residual: 0.0,
                    converged: true,
                    linear_iterations: 0,
                };
            }
        }
        if may_halve && !report.solve.converged {
            if !world.restore_step_start(&self.before[level]) {
                return Err(ClothError::Invalid(
                    "an unconverged step could not be taken back: its start states were not \
                     kept"
                        .into(),
                ));
            }
            let half = StepParameters {
                dt: 0.5 * dt,
                ..*params
            };
            let first = self.advance(&half, world, level + 1)?;
            let second = self.advance(&half, world, level + 1)?;
            let (a, b) = (first.solve, second.solve);
            return Ok(StepReport {
                solve: SolveOutcome {
                    iterations: report.solve.iterations + a.iterations + b.iterations,
                    evaluations: report.solve.evaluations + a.evaluations + b.evaluations,
                    residual: a.residual.max(b.residual),
                    converged: a.converged && b.converged,
                    linear_iterations: report.solve.linear_iterations
                        + a.linear_iterations
                        + b.linear_iterations,
                },
                constrained: first.constrained + second.constrained,
                contacts: first.contacts + second.contacts,
                halvings: 1 + first.halvings + second.halvings,
            });
        }
        if constrained {
            report.constrained = world.apply_constraints(&params.constraints, &self.x_start, dt);
        }
        if !world.obstacles.is_empty() {
            report.contacts = world.resolve_contacts(dt);
        }
        if report.constrained + report.contacts > 0 {
            // the start states: kept by the step's commit when it may be halved, else copied
            let start = (!may_halve).then_some(&self.start_states[..]);
            world.refollow_friction(start, &mut self.trial, &mut self.force);
        }
        world.time += dt;
        Ok(report)
    }

    /// Time spent in the semi-implicit integrator's phases so far.
    pub fn semi_implicit_timing(&self) -> SemiImplicitTiming {
        self.semi_implicit.timing
    }
}

/// NaN/inf or runaway kinetic energy at every step; a structural pair 100× its rest length
/// every 8 steps.
fn check_blow_up(params: &StepParameters, world: &ClothWorld) -> Result<(), ClothError> {
    let finite = world
        .x
        .iter()
        .chain(&world.v)
        .all(|p| p.iter().all(|c| c.is_finite()));
    let reason = if !finite {
        Some("positions or velocities are not finite".to_string())
    } else {
        let ke = world.kinetic_energy();
        let limit = params.runaway_factor * world.reference_energy();
        if ke > limit {
            Some(format!(
                "runaway energy: kinetic {ke:.3e} J > {limit:.3e} J"
            ))
        } else if world.steps % 8 == 0 && world.deformation_rates().structural > 99.0 {
            Some("runaway deformation: a structural pair beyond 100x its rest length".into())
        } else {
            None
        }
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(ClothError::BlowUp {
            step: world.steps,
            time: world.time,
            reason,
            connector: world.worst_connector(),
        }),
    }
}
