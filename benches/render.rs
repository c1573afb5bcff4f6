//! One offline frame of the 70 × 70 sheet (1 m, sagging over a ball, about 9.7k triangles)
//! at 1280 × 720 and 1920 × 1080: render, readback and PNG encoding (fast) separately, and
//! the whole frame.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use kestrel::render::{encode_png, SceneView};

#[path = "../tests/common.rs"]
mod common;

use common::{gpu_or_skip, view_over_a_ball};

fn sheet(n: usize) -> (SceneView, Vec<[f32; 3]>) {
    let h = 1.0 / (n - 1) as f32;
    let x = (0..n * n)
        .map(|k| {
            let (i, j) = ((k % n) as f32 * h, (k / n) as f32 * h);
            let (u, v) = (i - 0.5, j - 0.5);
            let r2 = u * u + v * v;
            [
                u,
                0.35 - 0.5 * r2 + 0.02 * (12.0 * u).sin() * (9.0 * v).cos(),
                v,
            ]
        })
        .collect();
    let view = view_over_a_ball(
        n,
        h as f64,
        ([0.0, 0.0, 0.0], 0.3),
        ([1.4, 1.0, 1.8], [0.0, 0.0, 0.0]),
    );
    (view, x)
}

fn frames(c: &mut Criterion) {
    let (view, x) = sheet(70);
    let mut g = c.benchmark_group("render_70x70");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(4));
    for (w, h) in [(1280u32, 720u32), (1920, 1080)] {
        let Some(mut r) = gpu_or_skip(w, h) else {
            break;
        };
        eprintln!("adapter: {}", r.adapter());
        r.set_scene(&view, &x).unwrap();
        let size = format!("{w}x{h}");
        g.bench_function(BenchmarkId::new("render", &size), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| r.render(&x, None).unwrap().1.render)
                    .sum()
            })
        });
        g.bench_function(BenchmarkId::new("readback", &size), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| r.render(&x, None).unwrap().1.readback)
                    .sum()
            })
        });
        let (image, _) = r.render(&x, None).unwrap();
        g.bench_function(BenchmarkId::new("png", &size), |b| {
            b.iter(|| encode_png(&image).unwrap())
        });
        g.bench_function(BenchmarkId::new("frame", &size), |b| {
            b.iter(|| r.render_png(&x, None).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
