//! One semi-implicit step (Terzopoulos eqs. 28–31) of a 1 m sheet hanging from one edge at 33²
//! and 65²: the linear thin plate (one factorisation, reused) and the prescribed-metric
//! membrane with bending (K(r) assembled and factored every step); prints the split of the
//! time between assembly, factorisation and solve.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use kestrel::cloth::{
    ClothPipeline, ClothWorld, Grid, Integrator, Material, MetricLaw, RigidityLaw, SpringNetwork,
    SpringStiffness, StepParameters, TerzopoulosParams, TerzopoulosSurface, Vec3,
};

fn sheet(n: usize, params: TerzopoulosParams) -> ClothWorld {
    let h = 1.0 / (n - 1) as f64;
    let grid = Grid::new(n, n, h, h).unwrap();
    let none = SpringStiffness {
        structural: 0.0,
        shear: 0.0,
        flexion: 0.0,
    };
    let mut w = ClothWorld::flat(
        grid,
        Vec3::zeros(),
        Vec3::x(),
        Vec3::z(),
        0.2,
        Material::Springs(SpringNetwork::new(&grid, none).unwrap()),
    )
    .unwrap();
    let surface = TerzopoulosSurface::new(&grid, w.positions(), params).unwrap();
    w.material = Material::Terzopoulos(Box::new(surface));
    for i in 0..n {
        w.pin(i, 0).unwrap();
    }
    w
}

fn models() -> [(&'static str, TerzopoulosParams); 3] {
    let plate = TerzopoulosParams {
        eta: [0.0; 3],
        xi: [0.02, 0.02, 0.02],
        metric: MetricLaw::Linear,
        bending: RigidityLaw::Linear,
        damping_density: 1.0,
        tangent: false,
    };
    let membrane = TerzopoulosParams {
        eta: [50.0, 50.0, 10.0],
        xi: [1e-4, 1e-4, 5e-5],
        metric: MetricLaw::Prescribed,
        bending: RigidityLaw::Curvature,
        damping_density: 1.0,
        tangent: false,
    };
    let tangent = TerzopoulosParams {
        tangent: true,
        ..membrane
    };
    [
        ("linear_plate", plate),
        ("membrane", membrane),
        ("membrane_tangent", tangent),
    ]
}

fn semi_implicit_steps(c: &mut Criterion) {
    let mut g = c.benchmark_group("terzopoulos_step");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for n in [33, 65] {
        for (name, params) in models() {
            let step = StepParameters::new(Integrator::SemiImplicit, 5e-4);
            let mut world = sheet(n, params);
            let mut pipeline = ClothPipeline::new();
            for _ in 0..20 {
                pipeline.step(&step, &mut world).unwrap();
            }
            g.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| pipeline.step(&step, &mut world).unwrap())
            });
            let t = pipeline.semi_implicit_timing();
            let per = |s: f64| 1e3 * s / t.steps as f64;
            eprintln!(
                "{name} {n}x{n}: assembly {:.3} ms, factorisation {:.3} ms, solve {:.3} ms per step ({} factorisations, {} by LU, in {} steps)",
                per(t.assembly_s),
                per(t.factor_s),
                per(t.solve_s),
                t.factorisations,
                t.lu_fallbacks,
                t.steps
            );
        }
    }
    g.finish();
}

criterion_group!(benches, semi_implicit_steps);
criterion_main!(benches);
