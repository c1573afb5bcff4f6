//! One cloth step: the kes material (cotton shirting, 1 cm spacing, hanging by two corners) at
//! 20², 50², 70² for each integrator, and one evaluation of its forces (what each Broyden
//! iteration costs before any linear algebra); Provot's springs with the explicit integrator at
//! 32², 64², 128², and the cost of Provot's constraint pass on the 17 × 17 sheet.

use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kestrel::cloth::{
    ClothPipeline, ClothWorld, Grid, Integrator, KesConnectors, KesLaws, Material, Preconditioner,
    ProvotConstraints, SpringNetwork, SpringStiffness, StepParameters, Vec3,
};
use kestrel::params::FabricParams;
use kestrel::scene::Scene;

fn kes_sheet(n: usize) -> ClothWorld {
    let params = FabricParams::read(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/fabrics/cotton_shirting.params.toml"),
    )
    .unwrap();
    let grid = Grid::new(n, n, 0.01, 0.01).unwrap();
    let kes = KesConnectors::new(&grid, KesLaws::from_params(&params).unwrap());
    let mut w = ClothWorld::flat(
        grid,
        Vec3::zeros(),
        Vec3::x(),
        -Vec3::y(),
        0.12,
        Material::Kes(Box::new(kes)),
    )
    .unwrap();
    w.loads.damping = 0.2;
    w.pin(0, 0).unwrap();
    w.pin(n - 1, 0).unwrap();
    w
}

fn spring_sheet(n: usize, k: f64) -> ClothWorld {
    let grid = Grid::new(n, n, 0.01, 0.01).unwrap();
    let springs = SpringNetwork::new(
        &grid,
        SpringStiffness {
            structural: k,
            shear: k,
            flexion: 0.2 * k,
        },
    )
    .unwrap();
    let mut w = ClothWorld::flat(
        grid,
        Vec3::zeros(),
        Vec3::x(),
        -Vec3::y(),
        0.2,
        Material::Springs(springs),
    )
    .unwrap();
    w.loads.damping = 0.5;
    w.pin(0, 0).unwrap();
    w.pin(n - 1, 0).unwrap();
    w
}

fn kes_steps(c: &mut Criterion) {
    let mut g = c.benchmark_group("kes_step");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for n in [20, 50, 70] {
        for (integrator, dt, pre) in [
            (Integrator::Broyden, 1e-3, Preconditioner::Stretch),
            (Integrator::Broyden, 1e-3, Preconditioner::Block),
            (Integrator::NewtonKrylov, 1e-3, Preconditioner::Block),
            (Integrator::Explicit, 1e-5, Preconditioner::Block),
        ] {
            let mut params = StepParameters::new(integrator, dt);
            params.preconditioner = pre;
            let name = match (integrator, pre) {
                (Integrator::Broyden, Preconditioner::Block) => "broyden_block",
                _ => integrator.name(),
            };
            let mut world = kes_sheet(n);
            let mut pipeline = ClothPipeline::new();
            // settle into the motion, then report the solver's work per step
            let warm = if integrator == Integrator::Explicit {
                200
            } else {
                20
            };
            for _ in 0..warm {
                pipeline.step(&params, &mut world).unwrap();
            }
            let (mut it, mut ev, steps) = (0, 0, 20);
            for _ in 0..steps {
                let r = pipeline.step(&params, &mut world).unwrap();
                it += r.solve.iterations;
                ev += r.solve.evaluations;
            }
            eprintln!(
                "kes {n}x{n} {name} dt={dt}: {:.1} iterations, {:.1} force evaluations per step",
                it as f64 / steps as f64,
                ev as f64 / steps as f64
            );
            g.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| pipeline.step(&params, &mut world).unwrap())
            });
        }
    }
    g.finish();
}

/// One evaluation of the total force (connectors with their friction trial states, gravity,
/// damping) of the hanging kes sheet after 20 Broyden steps.
fn kes_forces(c: &mut Criterion) {
    let mut g = c.benchmark_group("kes_forces");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for n in [20, 50, 70] {
        let mut world = kes_sheet(n);
        let mut pipeline = ClothPipeline::new();
        let params = StepParameters::new(Integrator::Broyden, 1e-3);
        for _ in 0..20 {
            pipeline.step(&params, &mut world).unwrap();
        }
        let mut trial = vec![Default::default(); world.state_len()];
        let mut normals = vec![Vec3::zeros(); world.len()];
        let mut f = vec![Vec3::zeros(); world.len()];
        if let Material::Kes(k) = &world.material {
            g.throughput(Throughput::Elements(k.len() as u64));
        }
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                world.forces(
                    world.positions(),
                    world.velocities(),
                    &mut trial,
                    &mut normals,
                    &mut f,
                )
            })
        });
    }
    g.finish();
}

fn spring_steps(c: &mut Criterion) {
    let mut g = c.benchmark_group("springs_explicit");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for n in [32, 64, 128] {
        let params = StepParameters::new(Integrator::Explicit, 1e-3);
        let mut world = spring_sheet(n, 1.0);
        let Material::Springs(s) = &world.material else {
            unreachable!()
        };
        g.throughput(Throughput::Elements(s.len() as u64));
        let mut pipeline = ClothPipeline::new();
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| pipeline.step(&params, &mut world).unwrap())
        });
    }
    g.finish();
}

fn provot_constraint_cost(c: &mut Criterion) {
    let mut g = c.benchmark_group("provot_17");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/provot_sheet_17.toml");
    let Scene::Dynamic(scene) = Scene::load(&scene).unwrap() else {
        unreachable!()
    };
    for passes in [0u32, 1, 16] {
        let mut params = scene.params;
        params.constraints = if passes > 0 {
            ProvotConstraints {
                structural: Some(0.1),
                passes,
                ..ProvotConstraints::none()
            }
        } else {
            ProvotConstraints::none()
        };
        let mut world = scene.world.clone();
        let mut pipeline = ClothPipeline::new();
        for _ in 0..200 {
            pipeline.step(&params, &mut world).unwrap();
        }
        g.bench_function(BenchmarkId::new("passes", passes), |b| {
            b.iter(|| pipeline.step(&params, &mut world).unwrap())
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    kes_steps,
    kes_forces,
    spring_steps,
    provot_constraint_cost
);
criterion_main!(benches);
