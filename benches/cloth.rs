//! One cloth step: the kes material (cotton shirting, 1 cm spacing, hanging by two corners) at
//! 20², 50², 70² for each integrator and preconditioner, and one evaluation of its forces (what each Broyden
//! iteration costs before any linear algebra); Provot's springs with the explicit integrator at
//! 32², 64², 128², and the cost of Provot's constraint pass on the 17 × 17 sheet.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use kestrel::cloth::{
    ClothPipeline, Integrator, Material, Preconditioner, ProvotConstraints, StepParameters, Vec3,
};
use kestrel::scene::Scene;

#[path = "../tests/common.rs"]
mod common;

use common::{hanging_kes_sheet, hanging_spring_sheet, repo};

/// A group of `samples` samples after `warm_up` of warm-up, measured over `seconds`.
fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
    samples: usize,
    warm_up: Duration,
    seconds: u64,
) -> BenchmarkGroup<'c, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(samples)
        .warm_up_time(warm_up)
        .measurement_time(Duration::from_secs(seconds));
    g
}

fn kes_steps(c: &mut Criterion) {
    let mut g = group(c, "kes_step", 10, Duration::from_millis(500), 3);
    for n in [20, 50, 70] {
        for (integrator, dt, pre) in [
            (Integrator::NewtonTangent, 1e-3, Preconditioner::Lines),
            (Integrator::Broyden, 1e-3, Preconditioner::Stretch),
            (Integrator::Broyden, 1e-3, Preconditioner::Lines),
            (Integrator::Broyden, 1e-3, Preconditioner::Block),
            (Integrator::NewtonKrylov, 1e-3, Preconditioner::Lines),
            (Integrator::NewtonKrylov, 1e-3, Preconditioner::Block),
            (Integrator::Explicit, 1e-5, Preconditioner::Block),
        ] {
            let mut params = StepParameters::new(integrator, dt);
            params.preconditioner = pre;
            let name = match (integrator, pre) {
                (Integrator::Broyden, Preconditioner::Block) => "broyden_block",
                (Integrator::Broyden, Preconditioner::Lines) => "broyden_lines",
                (Integrator::NewtonKrylov, Preconditioner::Lines) => "newton_krylov_lines",
                _ => integrator.name(),
            };
            let mut world = hanging_kes_sheet(n);
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
/// damping) of the hanging kes sheet after 20 Broyden steps, on 1 and 2 rayon threads.
fn kes_forces(c: &mut Criterion) {
    let mut g = group(c, "kes_forces", 20, Duration::from_millis(500), 2);
    for n in [20, 50, 70] {
        let mut world = hanging_kes_sheet(n);
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
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            g.bench_function(BenchmarkId::new(format!("{threads}_threads"), n), |b| {
                pool.install(|| {
                    b.iter(|| {
                        world.forces(
                            world.positions(),
                            world.velocities(),
                            &mut trial,
                            &mut normals,
                            &mut f,
                        )
                    })
                })
            });
        }
    }
    g.finish();
}

fn spring_steps(c: &mut Criterion) {
    let mut g = group(c, "springs_explicit", 20, Duration::from_millis(500), 2);
    for n in [32, 64, 128] {
        let params = StepParameters::new(Integrator::Explicit, 1e-3);
        let mut world = hanging_spring_sheet(n, 1.0);
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
    let mut g = group(c, "provot_17", 20, Duration::from_millis(300), 2);
    let scene = repo("scenes/provot_sheet_17.toml");
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
