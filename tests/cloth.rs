//! Particle cloth: connector balance, invariants, constraints, contacts; solvers and blow-up
//! (`solvers`); virtual KES tests, records and scenes (`files`).

mod files;
mod lab;
mod scene_checks;
mod solvers;

use kestrel::cloth::{
    ClothPipeline, ClothWorld, Grid, Integrator, KesConnectors, KesLaws, Loads, Material, Obstacle,
    ObstacleShape, ProvotConstraints, SpringFamily, StepParameters, Vec3,
};
use kestrel::material::LawState;
use kestrel::params::FabricParams;

use rand::rngs::Xoshiro256PlusPlus;

use crate::common::{cotton, rng, springs, symmetric};

/// A random vector with components uniform in [-scale, scale).
fn random_vec(rng: &mut Xoshiro256PlusPlus, scale: f64) -> Vec3 {
    Vec3::new(symmetric(rng), symmetric(rng), symmetric(rng)) * scale
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
    let springs = springs(&grid, k);
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

/// `steps` steps with `integrator`: of `explicit_dt` for the explicit scheme, else of 1 ms;
/// returns the step.
fn run(world: &mut ClothWorld, integrator: Integrator, explicit_dt: f64, steps: usize) -> f64 {
    let dt = if integrator == Integrator::Explicit {
        explicit_dt
    } else {
        1e-3
    };
    let params = StepParameters::new(integrator, dt);
    let mut pipeline = ClothPipeline::new();
    for _ in 0..steps {
        pipeline.step(&params, world).unwrap();
    }
    dt
}

/// An `nu` × `nv` kes sheet at 1 cm without loads, shaken (seed, `dx`, `dv`).
fn shaken_kes_world((nu, nv): (usize, usize), seed: u64, dx: f64, dv: f64) -> ClothWorld {
    let mut world = kes_world(nu, nv, 0.01);
    world.loads = Loads::none();
    shake(&mut world, &mut rng(seed), dx, dv);
    world
}

/// Perturbs positions and sets random velocities.
fn shake(world: &mut ClothWorld, rng: &mut Xoshiro256PlusPlus, dx: f64, dv: f64) {
    for k in 0..world.len() {
        let x = world.positions()[k] + random_vec(rng, dx);
        world.set_position(k, x);
        world.set_velocity(k, random_vec(rng, dv));
    }
}

#[test]
fn every_connector_has_zero_net_force_and_torque() {
    let mut world = shaken_kes_world((5, 4), 7, 0.002, 0.5);
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
    let mut rng = rng(3);
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
    let mut world = shaken_kes_world((6, 5), 11, 0.001, 0.3);
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
        let dt = run(&mut world, integrator, 1e-5, 20);
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
        let mut rng = rng(5);
        for k in 0..world.len() {
            if !world.is_pinned(k) {
                let d = random_vec(&mut rng, 0.0001);
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
fn pins_follow_their_particles_and_unpin_frees_them() {
    let mut world = spring_world(4, 0.1, 100.0);
    world.pin(0, 0).unwrap();
    let k = world.grid.index(0, 0);
    let p = Vec3::new(0.0, 0.5, 0.0);
    world.set_position(k, p);
    world.set_velocity(k, Vec3::x());
    assert_eq!(world.pins()[0].position, p);
    assert_eq!(world.pins()[0].velocity, Vec3::x());
    let dt = 1e-4;
    let params = StepParameters::new(Integrator::Explicit, dt);
    let mut pipeline = ClothPipeline::new();
    pipeline.step(&params, &mut world).unwrap();
    assert_eq!(world.positions()[k], p + Vec3::x() * dt);
    assert_eq!(world.velocities()[k], Vec3::x());
    world.map_positions(|x| x + Vec3::y());
    assert_eq!(world.pins()[0].position, world.positions()[k]);
    world.unpin(k);
    assert!(!world.is_pinned(k));
    assert!(world.pins().is_empty());
    pipeline.step(&params, &mut world).unwrap();
    assert!(world.velocities()[k].y < 0.0, "a free particle falls");
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
        run(&mut world, integrator, 2e-5, 30);
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
            friction: Some(0.3),
            coulomb: None,
            offset: Some(0.002),
        },
        Obstacle {
            shape: ObstacleShape::Box {
                min: [0.2, -0.5, 0.2],
                max: [0.5, -0.15, 0.5],
            },
            friction: Some(0.0),
            coulomb: None,
            offset: Some(0.0),
        },
        Obstacle {
            shape: ObstacleShape::Plane {
                point: [0.0, -0.3, 0.0],
                normal: [0.0, 1.0, 0.0],
            },
            friction: Some(0.5),
            coulomb: None,
            offset: Some(0.001),
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

/// Particles resting on a plane inclined at `angle` [rad] (four unconnected particles: springs
/// of zero stiffness), released from rest under gravity with the plane's `contact` (friction
/// fields only); returns (distance slid down the slope [m], speed down the slope [m/s]) of
/// the first particle after `t` [s] in steps of `dt`, and the largest distance from the plane.
fn slide_on_incline(
    angle: f64,
    contact: (Option<f64>, Option<f64>),
    integrator: Integrator,
    t: f64,
    dt: f64,
) -> (f64, f64, f64) {
    let (s, c) = angle.sin_cos();
    let up_slope = Vec3::new(c, s, 0.0);
    let grid = Grid::new(2, 2, 0.01, 0.01).unwrap();
    let mut world = ClothWorld::flat(
        grid,
        Vec3::zeros(),
        up_slope,
        Vec3::z(),
        0.2,
        Material::Springs(springs(&grid, 0.0)),
    )
    .unwrap();
    let (friction, coulomb) = contact;
    world.obstacles = vec![Obstacle {
        shape: ObstacleShape::Plane {
            point: [0.0; 3],
            normal: [-s, c, 0.0],
        },
        friction,
        coulomb,
        offset: None,
    }];
    let start = world.positions()[0];
    let params = StepParameters::new(integrator, dt);
    let mut pipeline = ClothPipeline::new();
    let mut off_plane: f64 = 0.0;
    for _ in 0..(t / dt).round() as usize {
        let report = pipeline.step(&params, &mut world).unwrap();
        assert!(report.solve.converged);
        off_plane = world
            .positions()
            .iter()
            .map(|x| world.obstacles[0].distance(x).0.abs())
            .fold(off_plane, f64::max);
    }
    let down = -up_slope;
    (
        (world.positions()[0] - start).dot(&down),
        world.velocities()[0].dot(&down),
        off_plane,
    )
}

/// Coulomb contact on an inclined plane: a particle sticks when tan θ ≤ μ and otherwise
/// slides with a = g(sin θ − μ cos θ) (s = a·t²/2, v = a·t), with both integrators; the
/// old velocity-scaling `friction` keeps its closed form, v_t ← (v_t + g sin θ·Δt)(1 − f)
/// per contact, whose fixed point is g sin θ·Δt·(1 − f)/f.
#[test]
fn coulomb_contact_sticks_below_the_friction_angle_and_slides_above_it() {
    let g = 9.81;
    let (t, dt) = (0.5, 1e-3);
    for integrator in [Integrator::Explicit, Integrator::Broyden] {
        for mu in [0.0, 0.165, 0.5] {
            let friction_angle = f64::atan(mu);
            for angle in [friction_angle - 0.02, friction_angle + 0.02, 0.6, 1.0] {
                if angle <= 0.0 {
                    continue;
                }
                let (slid, speed, off) =
                    slide_on_incline(angle, (None, Some(mu)), integrator, t, dt);
                let case = format!("{integrator:?}, mu = {mu}, angle = {angle:.3} rad");
                assert!(off < 1e-12, "{case}: {off:e} m off the plane");
                let a = g * (angle.sin() - mu * angle.cos());
                if a <= 0.0 {
                    assert!(
                        slid.abs() < 1e-12 && speed.abs() < 1e-12,
                        "{case}: {slid:e} m"
                    );
                } else {
                    // symplectic and backward Euler both give s = a·Δt²·n(n+1)/2
                    assert!((speed - a * t).abs() < 1e-9 * a * t, "{case}: v = {speed}");
                    let s = 0.5 * a * t * t;
                    assert!(
                        (slid - s).abs() < 1.5 * dt / t * s,
                        "{case}: s = {slid}, {s}"
                    );
                }
            }
        }
    }
    let (angle, f) = (0.4, 0.25);
    let (_, speed, _) = slide_on_incline(angle, (Some(f), None), Integrator::Explicit, t, dt);
    let fixed = g * angle.sin() * dt * (1.0 - f) / f;
    assert!((speed - fixed).abs() < 1e-9 * fixed, "{speed} vs {fixed}");
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

/// The total force of `world` at positions `x` and velocities `v` (friction moved from its
/// committed states to `x`), with the trial states.
fn forces_at(world: &ClothWorld, x: &[Vec3], v: &[Vec3]) -> (Vec<LawState>, Vec<Vec3>) {
    let n = world.len();
    let mut trial = vec![LawState::default(); world.state_len()];
    let (mut normals, mut f) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    world.forces(x, v, &mut trial, &mut normals, &mut f);
    (trial, f)
}

/// max |a_i − b_i| ≤ 1e-12 · max |b_i|, or the gap and the scale [N].
fn same_forces(a: &[Vec3], b: &[Vec3]) -> Result<(), String> {
    let scale = b.iter().map(|f| f.norm()).fold(0.0, f64::max);
    let gap = a
        .iter()
        .zip(b)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    if gap <= 1e-12 * scale {
        Ok(())
    } else {
        Err(format!("force gap {gap:.3e} N of {scale:.3e} N"))
    }
}

/// The friction path of an accepted step ends where the step ends: after Provot's constraints
/// or a contact moved particles, the committed states are those of the straight increment from
/// the step's start to the projected positions. Checked through the forces: at its own
/// positions a world's force is that of its committed states, which must equal the force of
/// the start-of-step world moved along that increment.
#[test]
fn friction_is_committed_along_the_projected_step() {
    // a ball just under a falling sheet: gravity presses the sheet into it, step after step
    let sphere = Obstacle {
        shape: ObstacleShape::Sphere {
            center: [0.04, -0.021, 0.04],
            radius: 0.02,
        },
        friction: Some(0.0),
        coulomb: None,
        offset: Some(0.0),
    };
    let constraints = ProvotConstraints {
        structural: Some(2e-4),
        shear: None,
        compression: None,
        passes: 4,
    };
    for integrator in [Integrator::Broyden, Integrator::NewtonKrylov] {
        for projection in ["constraint", "contact"] {
            let mut params = StepParameters::new(integrator, 1e-3);
            let mut world = if projection == "constraint" {
                params.constraints = constraints;
                crate::common::hanging_kes_sheet(9)
            } else {
                let mut world = kes_world(9, 9, 0.01);
                world.obstacles = vec![sphere];
                world
            };
            let mut pipeline = ClothPipeline::new();
            let mut checked = 0;
            for _ in 0..120 {
                let start = world.clone();
                let report = pipeline.step(&params, &mut world).unwrap();
                if report.constrained + report.contacts == 0 || report.halvings > 0 {
                    continue;
                }
                let (x, v) = (world.positions(), world.velocities());
                let (_, accepted) = forces_at(&world, x, v);
                let (_, followed) = forces_at(&start, x, v);
                if let Err(e) = same_forces(&accepted, &followed) {
                    panic!("{integrator}, {projection}: {e}");
                }
                checked += 1;
            }
            assert!(
                checked > 5,
                "{integrator}, {projection}: {checked} projected steps"
            );
        }
    }
}

/// A force evaluation split over threads gives the one-thread forces up to round-off and the
/// same trial friction states (a 40 × 40 sheet, shaken, with friction states off virgin).
#[test]
fn forces_on_several_threads_match_one_thread() {
    let mut world = crate::common::hanging_kes_sheet(40);
    let params = StepParameters::new(Integrator::Broyden, 1e-3);
    let mut pipeline = ClothPipeline::new();
    for _ in 0..5 {
        pipeline.step(&params, &mut world).unwrap();
    }
    shake(&mut world, &mut rng(7), 1e-3, 0.1);
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| forces_at(&world, world.positions(), world.velocities()))
    };
    let (trial1, f1) = on(1);
    for threads in [2, 3] {
        let (trial, f) = on(threads);
        assert!(trial == trial1, "{threads} threads: trial states differ");
        if let Err(e) = same_forces(&f, &f1) {
            panic!("{threads} threads: {e}");
        }
    }
}
