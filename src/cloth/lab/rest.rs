//! A lab specimen brought to rest: backward-Euler steps from zero velocity with Δt doubled up
//! to 1 s (pseudo-transient continuation) until every free particle's unbalanced force
//! |F_i(x)| \[N\] is below 10⁻³ of a full particle's weight ρ·h²·g: static equilibrium with
//! its friction states.

use std::sync::atomic::AtomicBool;

use super::{check_cancel, LabError};
use crate::cloth::pipeline::{ClothPipeline, Integrator, StepParameters};
use crate::cloth::world::{ClothWorld, WorldSnapshot};
use crate::cloth::{ProvotConstraints, Vec3};
use crate::material::LawState;

/// At rest: every free particle's unbalanced force is below this fraction of the weight of a
/// full particle (one cell's mass ρ·h² under the current load g), the same force \[N\] at
/// every particle: on the drape's skirt (a pendulum of length L ≈ 6 cm, stiffness m·g/L about
/// its rest) a force of 10⁻³·m·g moves a particle by L/1000 = 60 µm, an eighth of the
/// shadow's 0.5 mm pixel, and per area it is the same stress imbalance, 10⁻³·ρ·g, at every
/// spacing. Not the particle's own weight: an edge particle carries a quarter to three
/// quarters of ρ·h² (the cells lumped on their corners), which says nothing about how far
/// its force would move the reading.
pub const REST_FORCE_RATIO: f64 = 1e-3;
/// Longest pseudo step \[s\]: at 1 s the inertia M/Δt² is 1/(ω·Δt)² ≈ 0.6 % of the skirt's
/// pendulum stiffness (ω ≈ 12.6 rad/s), so a step is a Newton step of the static problem.
const MAX_PSEUDO_STEP_S: f64 = 1.0;
/// The Newton solve's tolerance \[m\] (max_i |D_i⁻¹g_i|). A converged step leaves a force up to
/// D_i times it on particle i, and D_i reaches the stiffness of the shortest connectors: a
/// yarn clamped at the rim ends in a traction connector as short as h/100 (the drape's
/// anchors), up to 100 times a cell's stretch stiffness. The rest criterion at the first load
/// step of a 5 mm specimen (g/40) is 10⁻³·ρ·h²·g/40 ≈ 4·10⁻¹⁰ N at 60 g/m². At 10⁻¹² m (the
/// tolerance until the eighth round) the force left at the stiff particles next to the rim
/// was 1–7·10⁻⁹ N: steps were accepted with no Newton iteration (the predictor already
/// within tolerance), and the criterion was met only when that remainder happened to fall
/// below it (cotton shirting at 5 mm: 123 static steps at its first load step, and none in
/// 200 with the line preconditioner); at 10⁻¹⁴ m, 9. Positions of 0.15 m have a round-off
/// of 3·10⁻¹⁷ m, so 10⁻¹⁴ m is reachable.
const REST_TOLERANCE_M: f64 = 1e-14;
/// Most pseudo steps before the relaxation gives up.
pub const MAX_REST_STEPS: u64 = 200;

/// How the specimen came to rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rest {
    /// Pseudo steps taken.
    pub steps: u64,
    /// Pseudo steps left unconverged at Δt/8 and taken back (the last kept when at the
    /// dynamic Δt with a residual below the accepted one).
    pub unconverged: u64,
    /// The largest |F_i|/(m·g) over the free particles at the end, m a full particle's mass.
    pub residual: f64,
}

/// The total force F_i(x) \[N\] on every particle of `world` at rest (zero velocity) with its
/// committed friction states.
fn forces_at_rest(world: &ClothWorld) -> Vec<Vec3> {
    let n = world.len();
    let zero = vec![Vec3::zeros(); n];
    let mut trial = vec![LawState::default(); world.state_len()];
    let (mut normals, mut force) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    world.forces(
        world.positions(),
        &zero,
        &mut trial,
        &mut normals,
        &mut force,
    );
    force
}

/// The largest unbalanced force |F_i(x)| over the `free` particles of `world` at rest (zero
/// velocity) with its committed friction states, over the weight of a full particle of mass
/// `particle_mass` \[kg\] under the world's gravity: |F_i|/(m·g).
pub(crate) fn unbalanced_force_ratio(world: &ClothWorld, free: &[bool], particle_mass: f64) -> f64 {
    let weight = particle_mass * world.loads.gravity().norm();
    forces_at_rest(world)
        .iter()
        .zip(free)
        .filter(|(_, &is_free)| is_free)
        .map(|(f, _)| f.norm() / weight)
        .fold(0.0, f64::max)
}

/// A specimen being brought to rest: its world and pipeline, the dynamic steps' parameters,
/// the residual `accepted` \[m\] of an unconverged dynamic step that is kept, the free
/// particles, the mass of a full particle (ρ·h²) \[kg\] whose weight the unbalanced forces are
/// measured against, and the flag that stops the work.
pub(crate) struct Relaxation<'a> {
    pub world: &'a mut ClothWorld,
    pub pipeline: &'a mut ClothPipeline,
    pub params: &'a StepParameters,
    pub accepted: f64,
    pub free: &'a [bool],
    pub particle_mass: f64,
    pub cancel: Option<&'a AtomicBool>,
}

/// Relaxes the world of `lab` (the kes material, gravity on) to rest from its current
/// positions and friction states: every step starts from zero velocity, Δt starts at the
/// parameters' \[s\] and doubles after each step converged without halving (halves after one
/// left unconverged), up to 1 s; without their Provot constraints (the rest is F(x) = 0 of the
/// laws). `each_step` is called before every static step (a caller's chance to poll for a
/// stop and set the cancel flag).
pub(crate) fn relax_to_rest(
    lab: &mut Relaxation<'_>,
    each_step: &mut dyn FnMut(),
) -> Result<Rest, LabError> {
    let Relaxation {
        world,
        pipeline,
        params: base,
        accepted,
        free,
        particle_mass,
        cancel,
    } = lab;
    let (accepted, particle_mass, cancel) = (*accepted, *particle_mass, *cancel);
    // the laws' equilibrium: no Provot projection after the solve (a projection the forces
    // do not see would make the steps' fixed point one of solve-then-project, not F(x) = 0)
    let mut params = StepParameters {
        tolerance: REST_TOLERANCE_M,
        constraints: ProvotConstraints::none(),
        ..**base
    };
    let mut before = WorldSnapshot::default();
    let mut rest = Rest {
        steps: 0,
        unconverged: 0,
        residual: unbalanced_force_ratio(world, free, particle_mass),
    };
    while rest.residual > REST_FORCE_RATIO {
        each_step();
        check_cancel(cancel)?;
        if rest.steps >= MAX_REST_STEPS || !rest.residual.is_finite() {
            return Err(LabError::NotReached(format!(
                "the specimen did not come to rest in {MAX_REST_STEPS} static steps: a particle's \
                 unbalanced force is {:.2e} of a full particle's weight ρ·h²·g (> \
                 {REST_FORCE_RATIO:.0e})",
                rest.residual
            )));
        }
        world.v.iter_mut().for_each(|v| *v = Vec3::zeros());
        world.save(&mut before);
        // Newton with the tangent (CG preconditioned by its Cholesky factor: at Δt up to 1 s
        // the line preconditioner needs many CG iterations), else the dynamic steps' solver
        // at the same Δt; a step that neither converges is taken back and Δt halved (down to
        // the dynamic Δt, where the dynamic steps' solver's result is kept when its residual
        // is below `accepted`)
        let mut converged = false;
        for integrator in [Integrator::NewtonDirect, base.integrator] {
            params.integrator = integrator;
            let report = pipeline.step(&params, world)?;
            rest.steps += 1;
            if report.solve.converged {
                converged = report.halvings == 0;
                break;
            }
            rest.unconverged += 1;
            if params.dt <= base.dt
                && integrator == base.integrator
                && report.solve.residual <= accepted
            {
                break;
            }
            if params.dt <= base.dt && integrator == base.integrator {
                return Err(LabError::NotReached(format!(
                    "a static step at Δt = {:.1e} s did not converge (residual {:.1e} m > \
                     {accepted:.0e} m): the rest is not trustworthy",
                    params.dt, report.solve.residual
                )));
            }
            world.restore(&before);
            if integrator == base.integrator {
                params.dt = (0.5 * params.dt).max(base.dt);
            }
        }
        if converged {
            params.dt = (2.0 * params.dt).min(MAX_PSEUDO_STEP_S);
        }
        rest.residual = unbalanced_force_ratio(world, free, particle_mass);
    }
    world.v.iter_mut().for_each(|v| *v = Vec3::zeros());
    Ok(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::connectors::tangent_test_sheet;

    /// The lab's relaxation as the tests run it: pseudo-steps of 2 ms that keep the
    /// compression limit, accepted at 10⁻⁶, the particles `free` of mass `particle_mass`.
    fn relax(world: &mut ClothWorld, free: &[bool], particle_mass: f64) -> Rest {
        let mut base = StepParameters::new(Integrator::Broyden, 2e-3);
        base.constraints = ProvotConstraints {
            compression: Some(0.02),
            ..ProvotConstraints::none()
        };
        let mut pipeline = ClothPipeline::new();
        let mut lab = Relaxation {
            world,
            pipeline: &mut pipeline,
            params: &base,
            accepted: 1e-6,
            free,
            particle_mass,
            cancel: None,
        };
        relax_to_rest(&mut lab, &mut || {}).unwrap()
    }

    /// A strip shortened by 5 % between pinned ends, its yarns at −5 % (beyond a 2 %
    /// compression limit; they carry no elastic compression, friction holds them): the rest
    /// is F(x) = 0 of the laws, so the limit the dynamic steps would project to is not
    /// applied, and the pairs stay below it.
    #[test]
    fn rest_is_the_laws_equilibrium_without_the_compression_limit() {
        let (nu, nv, h) = (5, 2, 0.01);
        let mut world = tangent_test_sheet(nu, nv, h);
        world.map_positions(|p| Vec3::new(0.95 * p.x, p.y, p.z));
        for j in 0..nv {
            world.pin(0, j).unwrap();
            world.pin(nu - 1, j).unwrap();
        }
        world.loads.gravity = [0.0, 0.0, -9.81];
        let free: Vec<bool> = (0..world.len()).map(|k| !world.is_pinned(k)).collect();
        let rest = relax(&mut world, &free, 0.12 * h * h);
        assert!(rest.residual <= REST_FORCE_RATIO, "{rest:?}");
        // every free particle's total force against its weight, evaluated here
        let force = forces_at_rest(&world);
        for k in (0..world.len()).filter(|&k| free[k]) {
            let weight = 0.12 * h * h * 9.81;
            assert!(force[k].norm() <= 1e-3 * weight, "{k}: {}", force[k].norm());
        }
        // the warp pairs end shorter than 98 % of h: no projection moved them
        let x = world.positions();
        for j in 0..nv {
            for i in 0..nu - 1 {
                let l = (x[world.grid.index(i + 1, j)] - x[world.grid.index(i, j)]).norm();
                assert!(l < 0.98 * h, "({i},{j}): {l}");
            }
        }
    }

    /// The drape's 5 mm specimen at its first load step (g/40, from flat) with the card that
    /// `kestrel fit kes_data/cotton-shirting/*.csv` writes: the free particles next to the
    /// rim hang on traction connectors as short as 0.17 mm to their anchors (30 times a
    /// cell's stiffness). The static steps bring it to rest within 20 steps, and every free
    /// particle's force, evaluated here, is below 10⁻³ of a full particle's weight under that
    /// load. With the solve's tolerance at 10⁻¹² m the force left at those particles
    /// (D_i·10⁻¹² m, 1–7·10⁻⁹ N) exceeded the criterion (7·10⁻¹⁰ N) and the steps took 123.
    #[test]
    fn five_mm_specimen_comes_to_rest_at_its_first_load_step() {
        use super::super::{card_areal_density, card_laws};
        use crate::cloth::lab::drape::Specimen;
        use crate::params::FabricParams;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/cards/cotton-shirting.kes-fit.params.toml");
        let card = FabricParams::read(&path).unwrap();
        let density = card_areal_density(&card).unwrap();
        let specimen = Specimen::new(0.005).unwrap();
        let mut world = specimen
            .world(card_laws(&card, true).unwrap(), density)
            .unwrap();
        let g = 9.80665 / 40.0;
        world.loads.gravity = [0.0, -g, 0.0];
        world.loads.damping = 1.0;
        let free: Vec<bool> = (0..world.len())
            .map(|k| specimen.kept[k] && !specimen.on_disc[k])
            .collect();
        let h = specimen.grid.h_warp;
        let rest = relax(&mut world, &free, density * h * h);
        assert!(rest.steps <= 20, "{rest:?}");
        let weight = density * h * h * g;
        let force = forces_at_rest(&world);
        for k in (0..world.len()).filter(|&k| free[k]) {
            assert!(force[k].norm() <= 1e-3 * weight, "{k}: {}", force[k].norm());
        }
        // it hangs: the edge has come down under the load
        let lowest = (0..world.len())
            .filter(|&k| free[k])
            .map(|k| world.positions()[k].y)
            .fold(0.0, f64::min);
        assert!(lowest < -1e-4, "{lowest}");
    }
}
