//! Playback of a reduced model: the shape mean + U·q of 3300 vertices (55 × 60, the door
//! cloth's size) at ranks 10, 30 and 60, one thread, and one played frame (advance + shape).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kestrel::reduced::{reduce, Player, ReducedModel};
use kestrel::scene::{DynamicScene, Scene, SceneFile};
use std::path::Path;

/// A model of the door scene with a synthetic basis (reduction of random-phase modes), so the
/// bench needs no precomputation.
fn model(rank: usize) -> ReducedModel {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/reduced_door_cloth.toml");
    let file = SceneFile::read(&path).unwrap();
    let scene: DynamicScene = match Scene::build(&file, &path).unwrap() {
        Scene::Dynamic(s) => *s,
        _ => unreachable!(),
    };
    let m = 3 * scene.world.len();
    let n = rank + 20;
    let mut data = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            data[j * m + i] = (0..rank)
                .map(|k| {
                    ((k + 1) as f64 * (i as f64 * 1e-3 + j as f64 * 0.37)).sin() / (k + 1) as f64
                })
                .sum();
        }
    }
    let red = reduce(data, m, 0.0, rank, Some(rank));
    let q: Vec<f32> = red.coords.iter().map(|&x| x as f32).collect();
    let info: kestrel::reduced::ModelInfo = serde_json::from_value(serde_json::json!({
        "name": "bench", "nu": scene.world.grid.nu, "nv": scene.world.grid.nv,
        "h_warp": 0.01, "h_weft": 0.01, "frame_dt": 0.025, "beta": 1.0, "blend_rate": 4.0,
        "palette": scene.reduced.as_ref().unwrap().palette, "start": 0, "stop": 0,
        "door": scene.reduced.as_ref().unwrap().door, "pins": [], "camera": null,
        "rank_tolerance": 0.0, "rel_error": 0.0, "orbits_sampled": 1, "pruned_short": 0,
        "pruned_dead_end": 0
    }))
    .unwrap();
    let orbits = vec![kestrel::reduced::Orbit {
        entry: 1,
        start: 0,
        end: (n - 1) as u32,
    }];
    let qdot = vec![0.0; q.len()];
    ReducedModel::from_reduction(info, &red, q, qdot, orbits)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("reduced_shape_3300");
    for rank in [10, 30, 60] {
        let m = model(rank);
        let mut out = vec![0f32; 3 * m.vertices];
        let q: Vec<f32> = m.q_of(3).to_vec();
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::new("mean_plus_Uq", rank), &rank, |b, _| {
            b.iter(|| m.reconstruct(std::hint::black_box(&q), &mut out))
        });
        let mut world = vec![[0f32; 3]; m.vertices];
        g.bench_with_input(BenchmarkId::new("played_frame", rank), &rank, |b, _| {
            let mut p = Player::new(&m);
            p.impulse(1);
            let mut k = 0;
            b.iter(|| {
                k += 1;
                if k % 15 == 0 {
                    p.impulse(if k % 30 == 0 { 1 } else { 0 });
                }
                p.advance();
                p.shape(&mut out);
                p.to_world(&out, &mut world);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
