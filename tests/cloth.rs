//! Particle cloth: connector balance, invariants, constraints, contacts, solvers, blow-up,
//! virtual KES tests, records and scenes.

use std::path::{Path, PathBuf};

use kestrel::cloth::record::{Camera, RecordInfo, Recording};
use kestrel::cloth::virtual_kes::{run_virtual_kes, VirtualKesSpec};
use kestrel::cloth::{
    ClothError, ClothPipeline, ClothWorld, Grid, Integrator, KesConnectors, KesLaws, Loads,
    Material, Obstacle, ObstacleShape, Preconditioner, ProvotConstraints, SpringFamily,
    SpringNetwork, SpringStiffness, StepParameters, Vec3, MAX_HALVINGS,
};
use kestrel::kes::{Direction, KesTest};
use kestrel::params::FabricParams;
use kestrel::scene::Scene;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cotton() -> FabricParams {
    FabricParams::read(&root().join("scenes/fabrics/cotton_shirting.params.toml")).unwrap()
}

/// Deterministic pseudo-random numbers in [-1, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn vec(&mut self, scale: f64) -> Vec3 {
        Vec3::new(self.next(), self.next(), self.next()) * scale
    }
}

fn kes_world(nu: usize, nv: usize, h: f64) -> ClothWorld {
    kes_world_of(&cotton(), nu, nv, h)
}

/// A flat sheet of `params` in the xz plane, 0.12 kg/m², default loads.
fn kes_world_of(params: &FabricParams, nu: usize, nv: usize, h: f64) -> ClothWorld {
    let grid = Grid::new(nu, nv, h, h).unwrap();
    let kes = KesConnectors::new(&grid, KesLaws::from_params(params).unwrap());
    ClothWorld::flat(
        grid,
        Vec3::zeros(),
        Vec3::x(),
        Vec3::z(),
        0.12,
        Material::Kes(Box::new(kes)),
    )
    .unwrap()
}

fn spring_world(n: usize, size: f64, k: f64) -> ClothWorld {
    let h = size / (n - 1) as f64;
    let grid = Grid::new(n, n, h, h).unwrap();
    let springs = SpringNetwork::new(
        &grid,
        SpringStiffness {
            structural: k,
            shear: k,
            flexion: 0.2 * k,
        },
    )
    .unwrap();
    ClothWorld::flat(
        grid,
        Vec3::zeros(),
        Vec3::x(),
        Vec3::z(),
        0.2,
        Material::Springs(springs),
    )
    .unwrap()
}

/// Perturbs positions and sets random velocities.
fn shake(world: &mut ClothWorld, rng: &mut Lcg, dx: f64, dv: f64) {
    for k in 0..world.len() {
        let x = world.positions()[k] + rng.vec(dx);
        world.set_position(k, x);
        world.set_velocity(k, rng.vec(dv));
    }
}

#[test]
fn every_connector_has_zero_net_force_and_torque() {
    let mut world = kes_world(5, 4, 0.01);
    world.loads = Loads::none();
    let mut rng = Lcg(7);
    shake(&mut world, &mut rng, 0.002, 0.5);
    // drive the friction states away from virgin with a few explicit steps
    let params = StepParameters::new(Integrator::Explicit, 2e-6);
    let mut pipeline = ClothPipeline::new();
    for _ in 0..50 {
        pipeline.step(&params, &mut world).unwrap();
    }
    let Material::Kes(kes) = &world.material else {
        unreachable!()
    };
    let mut checked = 0;
    for c in 0..kes.len() {
        let forces = kes.connector_forces(world.positions(), c);
        let scale: f64 = forces.iter().map(|(_, f)| f.norm()).sum::<f64>() + 1e-30;
        let net: Vec3 = forces.iter().map(|(_, f)| *f).sum();
        let torque: Vec3 = forces
            .iter()
            .map(|(p, f)| world.positions()[*p].cross(f))
            .sum();
        assert!(net.norm() < 1e-12 * scale, "{}: net {net}", kes.describe(c));
        assert!(
            torque.norm() < 1e-12 * scale,
            "{}: torque {torque}",
            kes.describe(c)
        );
        checked += 1;
    }
    // traction 4·4 + 5·3, bending 3·4 + 2·5, shear cells 4·3
    assert_eq!(checked, 16 + 15 + 12 + 10 + 12);
}

#[test]
fn springs_have_zero_net_force_and_torque_and_hooke_magnitude() {
    let mut world = spring_world(4, 0.3, 7.0);
    let mut rng = Lcg(3);
    shake(&mut world, &mut rng, 0.02, 0.0);
    let Material::Springs(s) = &world.material else {
        unreachable!()
    };
    for k in 0..s.len() {
        let [(a, fa), (b, fb)] = s.spring_forces(world.positions(), k);
        assert!((fa + fb).norm() < 1e-15);
        let torque = world.positions()[a].cross(&fa) + world.positions()[b].cross(&fb);
        assert!(torque.norm() < 1e-14 * fa.norm().max(1e-30));
        let stiffness = match s.family(k) {
            SpringFamily::Flexion => 1.4,
            _ => 7.0,
        };
        let l = (world.positions()[b] - world.positions()[a]).norm();
        let hooke = stiffness * (l - s.edge(k).rest).abs();
        assert!((fa.norm() - hooke).abs() < 1e-12 * hooke.max(1.0));
    }
}

#[test]
fn traction_connector_carries_law_times_width() {
    // a 3 x 3 sheet stretched 2 % along the warp: each warp connector carries F(ε)·w with
    // w = h_weft on the middle row and h_weft/2 on the borders
    let mut world = kes_world(3, 3, 0.01);
    world.map_positions(|p| Vec3::new(p.x * 1.02, p.y, p.z));
    let Material::Kes(kes) = &world.material else {
        unreachable!()
    };
    let law = cotton().warp.traction.unwrap();
    use kestrel::material::MaterialLaw;
    let f = law.drive(&[0.02])[0];
    let total: f64 = (0..kes.len())
        .filter(|&c| kes.describe(c).starts_with("warp traction (1,"))
        .map(|c| kes.connector_forces(world.positions(), c)[0].1.x)
        .sum();
    // the three warp connectors from column 1 to 2 together carry F·(nv − 1)·h_weft
    assert!(
        (total - f * 0.02).abs() < 1e-12 * f,
        "{total} vs {}",
        f * 0.02
    );
    world.loads = Loads::none();
}

#[test]
fn momentum_is_conserved_without_external_loads() {
    let mut world = kes_world(6, 5, 0.01);
    world.loads = Loads::none();
    let mut rng = Lcg(11);
    shake(&mut world, &mut rng, 0.001, 0.3);
    let (p0, l0) = (world.linear_momentum(), world.angular_momentum());
    let scale_p: f64 = world
        .velocities()
        .iter()
        .zip(world.masses())
        .map(|(v, m)| m * v.norm())
        .sum();
    let params = StepParameters::new(Integrator::Explicit, 2e-6);
    let mut pipeline = ClothPipeline::new();
    for _ in 0..500 {
        pipeline.step(&params, &mut world).unwrap();
    }
    let (p1, l1) = (world.linear_momentum(), world.angular_momentum());
    assert!((p1 - p0).norm() < 1e-12 * scale_p, "{p0} → {p1}");
    assert!((l1 - l0).norm() < 1e-12 * scale_p * 0.1, "{l0} → {l1}");
    // backward Euler conserves linear momentum up to the solver's residual
    let mut params = StepParameters::new(Integrator::Broyden, 1e-4);
    params.tolerance = 1e-12;
    params.max_iterations = 400;
    for _ in 0..5 {
        let r = pipeline.step(&params, &mut world).unwrap();
        assert!(r.solve.converged, "{:?}", r.solve);
    }
    let p2 = world.linear_momentum();
    assert!((p2 - p0).norm() < 1e-6 * scale_p, "{p0} → {p2}");
}

#[test]
fn free_fall_follows_the_closed_form() {
    // no pins: the sheet translates rigidly, x_n = x_0 + g·Δt²·n(n+1)/2 for both schemes
    for integrator in [Integrator::Explicit, Integrator::Broyden] {
        let mut world = kes_world(4, 4, 0.02);
        let x0 = world.positions().to_vec();
        // explicit Euler is only stable below ~1e-5 s for this stiff fabric
        let dt = if integrator == Integrator::Explicit {
            1e-5
        } else {
            1e-3
        };
        let params = StepParameters::new(integrator, dt);
        let mut pipeline = ClothPipeline::new();
        for _ in 0..20 {
            pipeline.step(&params, &mut world).unwrap();
        }
        let drop = -9.81 * dt * dt * 20.0 * 21.0 / 2.0;
        for (x, x0) in world.positions().iter().zip(&x0) {
            assert!(
                ((x - x0) - Vec3::new(0.0, drop, 0.0)).norm() < 1e-9,
                "{integrator}"
            );
        }
    }
}

/// Total mechanical energy: kinetic + elastic + gravity [J].
fn energy(world: &ClothWorld) -> f64 {
    world.kinetic_energy() + world.elastic_energy() + world.gravity_energy()
}

#[test]
fn damping_makes_the_energy_decrease() {
    let mut world = spring_world(9, 0.5, 20.0);
    world.loads.damping = 2.0;
    world.pin(0, 0).unwrap();
    world.pin(8, 0).unwrap();
    let params = StepParameters::new(Integrator::Explicit, 1e-3);
    let mut pipeline = ClothPipeline::new();
    let mut last = energy(&world);
    let e0 = last;
    for k in 1..=1500 {
        pipeline.step(&params, &mut world).unwrap();
        if k % 50 == 0 {
            let e = energy(&world);
            assert!(e < last, "energy rose at step {k}: {last} → {e}");
            last = e;
        }
    }
    assert!(last < e0 - 0.05);
}

#[test]
fn friction_dissipates_what_elasticity_keeps() {
    // a drum: a kes sheet held 2 % stretched by its border, its interior set vibrating in its
    // plane (every yarn stays in tension), no loads. Without friction symplectic Euler keeps
    // the energy; with friction it decays.
    let run = |friction: bool| {
        let mut params = cotton();
        if !friction {
            for d in [&mut params.warp, &mut params.weft] {
                d.traction.as_mut().unwrap().friction.level = 0.0;
                d.traction.as_mut().unwrap().friction.mu = 0.0;
                d.bending.as_mut().unwrap().friction.level = 0.0;
                d.shear.as_mut().unwrap().friction.level = 0.0;
                d.shear.as_mut().unwrap().friction.mu = 0.0;
            }
        }
        let mut world = kes_world_of(&params, 7, 7, 0.01);
        world.loads = Loads::none();
        world.map_positions(|p| p * 1.02);
        for i in 0..7 {
            for (a, b) in [(i, 0), (i, 6), (0, i), (6, i)] {
                world.pin(a, b).unwrap();
            }
        }
        let params = StepParameters::new(Integrator::Explicit, 2e-6);
        let mut pipeline = ClothPipeline::new();
        // the drum at rest, its yarns past ε₁ (aligned toe) after one step
        let mut rest = world.clone();
        pipeline.step(&params, &mut rest).unwrap();
        let e_rest = energy(&rest);
        let mut rng = Lcg(5);
        for k in 0..world.len() {
            if !world.is_pinned(k) {
                let d = rng.vec(0.0001);
                let x = world.positions()[k] + Vec3::new(d.x, 0.0, d.z);
                world.set_position(k, x);
            }
        }
        pipeline.step(&params, &mut world).unwrap();
        let e0 = energy(&world);
        for _ in 0..4000 {
            pipeline.step(&params, &mut world).unwrap();
        }
        assert!(world.deformation_rates().structural > 0.0);
        (e0 - e_rest, energy(&world) - e_rest)
    };
    // vibration energy above the stretched rest state
    let (v0, v_elastic) = run(false);
    assert!(v0 > 0.0);
    assert!((v_elastic - v0).abs() < 0.02 * v0, "{v0} → {v_elastic}");
    let (v0, v_friction) = run(true);
    assert!(v_friction < 0.5 * v0, "{v0} → {v_friction}");
}

#[test]
fn pinned_particles_stay_put() {
    for integrator in [
        Integrator::Explicit,
        Integrator::Broyden,
        Integrator::NewtonKrylov,
    ] {
        let mut world = kes_world(6, 6, 0.02);
        world.pin(0, 0).unwrap();
        world.pin(5, 0).unwrap();
        let held = [world.positions()[0], world.positions()[5]];
        let dt = if integrator == Integrator::Explicit {
            2e-5
        } else {
            1e-3
        };
        let params = StepParameters::new(integrator, dt);
        let mut pipeline = ClothPipeline::new();
        for _ in 0..30 {
            pipeline.step(&params, &mut world).unwrap();
        }
        assert_eq!(
            [world.positions()[0], world.positions()[5]],
            held,
            "{integrator}"
        );
        assert_eq!(world.velocities()[0], Vec3::zeros());
        assert!(
            world.positions()[30].y < -1e-6,
            "{integrator}: the rest falls"
        );
    }
}

#[test]
fn obstacles_are_never_penetrated() {
    let obstacles = [
        Obstacle {
            shape: ObstacleShape::Sphere {
                center: [0.15, -0.2, 0.15],
                radius: 0.1,
            },
            friction: 0.3,
            offset: 0.002,
        },
        Obstacle {
            shape: ObstacleShape::Box {
                min: [0.2, -0.5, 0.2],
                max: [0.5, -0.15, 0.5],
            },
            friction: 0.0,
            offset: 0.0,
        },
        Obstacle {
            shape: ObstacleShape::Plane {
                point: [0.0, -0.3, 0.0],
                normal: [0.0, 1.0, 0.0],
            },
            friction: 0.5,
            offset: 0.001,
        },
    ];
    let mut world = spring_world(13, 0.3, 20.0);
    world.obstacles = obstacles.to_vec();
    let params = StepParameters::new(Integrator::Explicit, 1e-3);
    let mut pipeline = ClothPipeline::new();
    let mut contacts = 0;
    for _ in 0..600 {
        contacts += pipeline.step(&params, &mut world).unwrap().contacts;
        for o in &world.obstacles {
            for x in world.positions() {
                assert!(o.distance(x).0 >= -1e-12, "{x} inside {o:?}");
            }
        }
    }
    assert!(contacts > 100, "the sheet should land: {contacts} contacts");
}

#[test]
fn provot_adjustment_follows_the_paper() {
    let grid = Grid::new(2, 2, 1.0, 1.0).unwrap();
    let edges = grid.edges(&[kestrel::cloth::EdgeFamily::StructuralWarp]);
    let c = ProvotConstraints {
        structural: Some(0.1),
        shear: None,
        compression: None,
        passes: 1,
    };
    // both loose: both ends move to the middle, which stays
    let mut x = vec![
        Vec3::zeros(),
        Vec3::new(1.5, 0.0, 0.0),
        Vec3::z(),
        Vec3::new(1.0, 0.0, 1.0),
    ];
    c.apply(&edges, &[false; 4], &mut x);
    assert!((x[0] - Vec3::new(0.2, 0.0, 0.0)).norm() < 1e-15);
    assert!((x[1] - Vec3::new(1.3, 0.0, 0.0)).norm() < 1e-15);
    // one fixed: the loose end alone moves to (1 + τ_c)·l₀
    let mut x = vec![
        Vec3::zeros(),
        Vec3::new(0.0, 2.0, 0.0),
        Vec3::z(),
        Vec3::new(1.0, 0.0, 1.0),
    ];
    c.apply(&edges, &[true, false, false, false], &mut x);
    assert_eq!(x[0], Vec3::zeros());
    assert!((x[1] - Vec3::new(0.0, 1.1, 0.0)).norm() < 1e-15);
    // both fixed: nothing moves
    let mut y = x.clone();
    y[1] = Vec3::new(3.0, 0.0, 0.0);
    let before = y.clone();
    c.apply(&edges, &[true, true, false, false], &mut y);
    assert_eq!(y, before);
}

#[test]
fn provot_constraint_bounds_the_deformation_rate() {
    let run = |constraints: ProvotConstraints| {
        let mut world = spring_world(17, 1.0, 4.0);
        world.loads.damping = 0.5;
        world.pin(0, 0).unwrap();
        world.pin(16, 0).unwrap();
        let mut params = StepParameters::new(Integrator::Explicit, 0.005);
        params.constraints = constraints;
        let mut pipeline = ClothPipeline::new();
        for _ in 0..200 {
            pipeline.step(&params, &mut world).unwrap();
        }
        world.deformation_rates()
    };
    let free = run(ProvotConstraints::none());
    assert!(free.structural > 1.0, "super-elastic: {}", free.structural);
    let held = run(ProvotConstraints {
        structural: Some(0.1),
        shear: Some(0.1),
        compression: None,
        passes: 32,
    });
    assert!(held.structural <= 0.1 + 0.005, "{}", held.structural);
    assert!(held.shear <= 0.1 + 0.005, "{}", held.shear);
}

#[test]
fn broyden_and_newton_krylov_agree_on_a_step() {
    let mut start = kes_world(8, 8, 0.02);
    start.pin(0, 0).unwrap();
    start.pin(7, 0).unwrap();
    let mut pipeline = ClothPipeline::new();
    let params = StepParameters::new(Integrator::Broyden, 1e-3);
    for _ in 0..10 {
        pipeline.step(&params, &mut start).unwrap();
    }
    let mut results = Vec::new();
    for integrator in [Integrator::Broyden, Integrator::NewtonKrylov] {
        let mut world = start.clone();
        let mut params = StepParameters::new(integrator, 1e-3);
        params.tolerance = 1e-12;
        params.max_iterations = 1000;
        params.forcing = 1e-3;
        params.memory = 60;
        let report = ClothPipeline::new().step(&params, &mut world).unwrap();
        assert!(report.solve.converged, "{integrator}: {:?}", report.solve);
        results.push(world.positions().to_vec());
    }
    let moved: f64 = results[0]
        .iter()
        .zip(start.positions())
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    let diff: f64 = results[0]
        .iter()
        .zip(&results[1])
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-7);
    assert!(
        diff < 1e-3 * moved,
        "differ by {diff} m for a step of {moved} m"
    );
}

/// The bench's sheet: n × n at 1 cm hanging in the xy plane by two corners, after 20 Broyden
/// steps of 1 ms (block-scaled) under its weight.
fn hanging_kes_sheet(n: usize) -> ClothWorld {
    let grid = Grid::new(n, n, 0.01, 0.01).unwrap();
    let kes = KesConnectors::new(&grid, KesLaws::from_params(&cotton()).unwrap());
    let mut sheet = ClothWorld::flat(
        grid,
        Vec3::zeros(),
        Vec3::x(),
        -Vec3::y(),
        0.12,
        Material::Kes(Box::new(kes)),
    )
    .unwrap();
    sheet.loads.damping = 0.2;
    sheet.pin(0, 0).unwrap();
    sheet.pin(n - 1, 0).unwrap();
    let mut params = StepParameters::new(Integrator::Broyden, 1e-3);
    params.preconditioner = Preconditioner::Block;
    let mut pipeline = ClothPipeline::new();
    for _ in 0..20 {
        pipeline.step(&params, &mut sheet).unwrap();
    }
    sheet
}

#[test]
fn stretch_preconditioned_broyden_converges_to_the_same_step_in_fewer_iterations() {
    let start = hanging_kes_sheet(16);
    let mut results = Vec::new();
    for pre in [Preconditioner::Block, Preconditioner::Stretch] {
        // the iterations at the default tolerance, x₁ at a tight one
        let mut params = StepParameters::new(Integrator::Broyden, 1e-3);
        params.preconditioner = pre;
        let mut world = start.clone();
        let report = ClothPipeline::new().step(&params, &mut world).unwrap();
        assert!(report.solve.converged, "{pre:?}: {:?}", report.solve);
        params.tolerance = 1e-13;
        params.max_iterations = 1000;
        params.memory = 60;
        let mut world = start.clone();
        let tight = ClothPipeline::new().step(&params, &mut world).unwrap();
        assert!(tight.solve.converged, "{pre:?}: {:?}", tight.solve);
        results.push((world.positions().to_vec(), report.solve.iterations));
    }
    let (block, stretch) = (&results[0], &results[1]);
    let moved: f64 = block
        .0
        .iter()
        .zip(start.positions())
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    let diff: f64 = block
        .0
        .iter()
        .zip(&stretch.0)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-6);
    // tight solves of the same equation: the roots agree far below the default 1e-8 m
    assert!(diff < 1e-9, "x₁ differ by {diff} m for a step of {moved} m");
    assert!(
        2 * stretch.1 <= block.1,
        "stretch {} iterations, block {}",
        stretch.1,
        block.1
    );
}

#[test]
fn an_unconverged_implicit_step_is_taken_again_as_two_halves() {
    let start = hanging_kes_sheet(12);
    let dt = 1e-3;
    let mut params = StepParameters::new(Integrator::Broyden, dt);
    params.preconditioner = Preconditioner::Block;
    // the reference: two half steps converged tightly (the default tolerance is on the
    // scaled residual; x₁ itself is then only good to ~1e-6 m on this stiff sheet)
    params.tolerance = 1e-12;
    params.memory = 60;
    params.max_iterations = 1000;
    let half = StepParameters {
        dt: dt / 2.0,
        ..params
    };
    let mut two_halves = start.clone();
    let mut pipeline = ClothPipeline::new();
    let mut half_iterations = 0;
    for _ in 0..2 {
        let r = pipeline.step(&half, &mut two_halves).unwrap();
        assert!(r.solve.converged && r.halvings == 0, "{r:?}");
        half_iterations = half_iterations.max(r.solve.iterations);
    }
    let full = ClothPipeline::new()
        .step(&params, &mut start.clone())
        .unwrap();
    assert!(full.solve.converged && full.halvings == 0);
    assert!(
        half_iterations < full.solve.iterations,
        "a half step takes {half_iterations} iterations, a whole one {}",
        full.solve.iterations
    );
    // too few iterations for a whole step, enough for a half one (its predictor differs
    // from the reference's: the number may move a little)
    let cap = (half_iterations + full.solve.iterations) / 2;
    eprintln!(
        "iterations: half {half_iterations}, whole {}",
        full.solve.iterations
    );
    let capped = StepParameters {
        max_iterations: cap,
        ..params
    };
    let mut world = start.clone();
    let report = ClothPipeline::new().step(&capped, &mut world).unwrap();
    assert_eq!(report.halvings, 1, "{report:?}");
    assert!(report.solve.converged, "{report:?}");
    // the failed attempt's work is counted
    assert!(report.solve.iterations >= cap + 2, "{report:?}");
    assert_eq!(world.steps, start.steps + 1);
    assert!((world.time - (start.time + dt)).abs() < 1e-15);
    let diff = world
        .positions()
        .iter()
        .zip(two_halves.positions())
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(
        diff < 1e-9,
        "the halved step is {diff} m from two half steps"
    );
    // the friction states were committed once per half step, as in the reference
    assert!(world.elastic_energy() > 0.0);
    assert!((world.elastic_energy() - two_halves.elastic_energy()).abs() < 1e-9);
    // at the finest level the best iterate is accepted and reported unconverged
    let starved = StepParameters {
        max_iterations: 1,
        ..params
    };
    let mut world = start.clone();
    let report = ClothPipeline::new().step(&starved, &mut world).unwrap();
    assert!(!report.solve.converged);
    assert_eq!(report.halvings, (1 << MAX_HALVINGS) - 1, "{report:?}");
    assert!((world.time - (start.time + dt)).abs() < 1e-15);
}

#[test]
fn blow_up_is_an_error_naming_step_time_and_connector() {
    let mut world = spring_world(9, 0.2, 5000.0);
    world.pin(0, 0).unwrap();
    let params = StepParameters::new(Integrator::Explicit, 0.01);
    let mut pipeline = ClothPipeline::new();
    let mut err = None;
    for _ in 0..1000 {
        if let Err(e) = pipeline.step(&params, &mut world) {
            err = Some(e);
            break;
        }
    }
    let Some(ClothError::BlowUp {
        step,
        time,
        connector,
        ..
    }) = &err
    else {
        panic!("no blow-up reported: {err:?}");
    };
    assert!(*step >= 1 && *step < 1000);
    assert!((time - *step as f64 * 0.01).abs() < 1e-9);
    assert!(connector.contains("structural") || connector.contains("shear"));
    let text = err.as_ref().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains(&format!("step {step}")), "{text}");
}

#[test]
fn virtual_kes_tests_match_the_single_law() {
    let params = cotton();
    let laws = KesLaws::from_params(&params).unwrap();
    for test in [KesTest::Tensile, KesTest::Shear, KesTest::Bending] {
        for direction in [Direction::Warp, Direction::Weft] {
            let mut spec = VirtualKesSpec::new(test, direction);
            spec.points = 20;
            let r = run_virtual_kes(&spec, &laws, |_, _| {}).unwrap();
            assert!(r.nrmse <= 0.02, "{test} {direction}: nrmse {}", r.nrmse);
            // the curve really goes somewhere and comes back with hysteresis
            let top = r.mesh.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(top > 0.0);
            let csv = r.to_csv(&params.fabric);
            assert!(csv.contains(&format!("# test: {test}")));
            assert_eq!(
                csv.lines().filter(|l| !l.starts_with('#')).count(),
                r.x.len() + 1
            );
        }
    }
}

#[test]
fn record_round_trips_and_rejects_truncation() {
    let mut world = kes_world(3, 2, 0.01);
    let mut rec = Recording::new(RecordInfo {
        name: "t".into(),
        nu: 3,
        nv: 2,
        h_warp: 0.01,
        h_weft: 0.01,
        dt: 1e-3,
        every: 1,
        camera: Some(Camera {
            eye: [0.0, 0.0, 1.0],
            target: [0.0; 3],
            up: [0.0, 1.0, 0.0],
            fov_deg: 30.0,
        }),
        obstacles: vec![],
    });
    rec.push(&world);
    world.set_position(4, Vec3::new(1.5, -2.0, 0.25));
    world.steps = 7;
    world.time = 0.007;
    rec.push(&world);
    let bytes = rec.to_bytes().unwrap();
    assert_eq!(&bytes[..8], b"KESTRELR");
    let back = Recording::from_bytes(&bytes).unwrap();
    assert_eq!(back, rec);
    assert_eq!(back.frames[1].positions[4], [1.5, -2.0, 0.25]);
    assert!(Recording::from_bytes(&bytes[..bytes.len() - 3]).is_err());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.rec");
    rec.write(&path, false).unwrap();
    assert!(rec.write(&path, false).is_err());
    assert_eq!(Recording::read(&path).unwrap(), rec);
}

#[test]
fn every_scene_loads_and_steps() {
    let dir = root().join("scenes");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        n += 1;
        match Scene::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            Scene::Dynamic(mut s) => {
                let mut pipeline = ClothPipeline::new();
                for _ in 0..3 {
                    pipeline
                        .step(&s.params, &mut s.world)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                }
            }
            Scene::VirtualKes(s) => assert!(s.spec.points >= 2, "{}", path.display()),
        }
    }
    assert!(n >= 8, "only {n} scenes in {}", dir.display());
}

#[test]
fn scene_errors_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path: &Path = &dir.path().join("bad.toml");
    std::fs::write(
        path,
        "name = \"x\"\n[grid]\nnu = 1\nnv = 3\nsize = [1.0, 1.0]\nareal_density = 0.1\n\
         [material]\nkind = \"springs\"\nstructural = 1.0\nshear = 1.0\nflexion = 1.0\n\
         [integrator]\nkind = \"explicit\"\ndt = 0.001\nsteps = 1\n",
    )
    .unwrap();
    let e = Scene::load(path).unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("2 x 2"), "{e}");
}
