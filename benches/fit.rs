//! Identifying a whole fabric (six KES curves of the sample fabric) from the automatic
//! initial estimate, one core.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use kestrel::fit::{fit_curve, FitModel, FitOptions, MuMode, ToeChoice};
use kestrel::kes::sample::sample_fabric;

fn fabric(c: &mut Criterion) {
    let curves = match sample_fabric() {
        Ok(c) => c,
        Err(e) => panic!("sample fabric: {e}"),
    };
    let mut g = c.benchmark_group("fit_fabric_6_curves");
    g.sample_size(10);
    for (name, options) in [
        (
            "dahl_mu_power_toe",
            FitOptions {
                model: FitModel::Dahl,
                mu: MuMode::Free,
                toe: ToeChoice::Power,
                ..FitOptions::default()
            },
        ),
        (
            "paper_law_dahl_mu0_quadratic",
            FitOptions {
                model: FitModel::Dahl,
                mu: MuMode::Zero,
                toe: ToeChoice::Quadratic,
                ..FitOptions::default()
            },
        ),
        ("auto", FitOptions::default()),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                for curve in &curves {
                    black_box(fit_curve(black_box(curve), &options));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, fabric);
criterion_main!(benches);
