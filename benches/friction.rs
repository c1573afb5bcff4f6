//! Stepping a 10⁶-sample strain path through each friction shape and each law.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use kestrel::friction::{FrictionShape, UnitFriction};
use kestrel::material::{BendingLaw, FrictionLaw, LawState, MaterialLaw, ShearLaw, TractionLaw};

const N: usize = 1_000_000;

/// Strain increments of a cyclic path with decaying amplitude (all zones of the laws).
fn increments() -> Vec<f64> {
    (0..N)
        .map(|i| {
            let t = i as f64 * 1e-3;
            0.05 * (1.0 + 0.5 * (t * 0.1).cos()) * t.cos() * 1e-3
        })
        .collect()
}

fn path() -> Vec<f64> {
    let mut x = 0.02;
    increments()
        .into_iter()
        .map(|d| {
            x += d;
            x
        })
        .collect()
}

fn operators(c: &mut Criterion) {
    let d = increments();
    let mut g = c.benchmark_group("operator");
    g.throughput(Throughput::Elements(N as u64));
    let run = |shape: &FrictionShape, d: &[f64]| {
        let mut z = UnitFriction::virgin();
        let mut acc = 0.0;
        for &x in d {
            z.advance(shape, x);
            acc += z.z();
        }
        acc
    };
    for alpha in [1.0, 2.0] {
        g.bench_function(format!("dahl_alpha_{alpha}"), |b| {
            let shape = FrictionShape::Dahl { eps_f: 0.01, alpha };
            b.iter(|| black_box(run(black_box(&shape), black_box(&d))))
        });
    }
    g.bench_function("bliman_sorine_2", |b| {
        let shape = FrictionShape::Bs2 {
            eps_f: 0.01,
            eta: 0.2,
            ratio: 0.4,
        };
        b.iter(|| black_box(run(black_box(&shape), black_box(&d))))
    });
    g.finish();
}

fn laws(c: &mut Criterion) {
    let p = path();
    let friction = FrictionLaw {
        level: 1.0,
        mu: 0.2,
        shape: FrictionShape::Bs2 {
            eps_f: 0.01,
            eta: 0.2,
            ratio: 0.4,
        },
    };
    let traction = TractionLaw {
        k_t: 2000.0,
        eps1: 0.03,
        f1: 40.0,
        eps1_aligned: Some(0.025),
        toe: Default::default(),
        friction,
    };
    let bending = BendingLaw {
        k_b: 1e-5,
        k0: 0.0,
        friction,
    };
    let shear = ShearLaw {
        k_s: 50.0,
        theta0: 0.0,
        friction: FrictionLaw {
            shape: FrictionShape::Dahl {
                eps_f: 0.01,
                alpha: 1.0,
            },
            ..friction
        },
    };
    let mut g = c.benchmark_group("law");
    g.throughput(Throughput::Elements(N as u64));
    fn run(law: &impl MaterialLaw, p: &[f64]) -> f64 {
        let mut s = LawState::default();
        let mut acc = 0.0;
        for &x in p {
            let (n, f) = law.trial(&s, x);
            s = n;
            acc += f;
        }
        acc
    }
    g.bench_function("traction_bs2_mu", |b| {
        b.iter(|| black_box(run(&traction, black_box(&p))))
    });
    g.bench_function("bending_bs2_mu", |b| {
        b.iter(|| black_box(run(&bending, black_box(&p))))
    });
    g.bench_function("shear_dahl_mu", |b| {
        b.iter(|| black_box(run(&shear, black_box(&p))))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = operators, laws
}
criterion_main!(benches);
