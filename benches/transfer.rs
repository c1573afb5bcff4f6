//! Radiance transfer of the door cloth's size (55 × 60 = 3300 vertices): ray-traced transfer
//! of one mesh (64 rays per vertex; RAYON_NUM_THREADS sets the threads) and the reduced
//! shading of one frame (NRBF of N_a = 48 centres, mean + U_a·q_a at r_a = 10, radiance).

use criterion::{criterion_group, criterion_main, Criterion};
use kestrel::reduced::transfer::{
    radiance_of, ShLight, Transfer, TransferInfo, TransferSetup, CLOTH_ALBEDO, SH_COEFFS,
};

const NU: usize = 55;
const NV: usize = 60;

/// A draped sheet: a 0.7 × 1 m grid with a fold of 5 cm along the warp.
fn sheet() -> Vec<[f32; 3]> {
    (0..NU * NV)
        .map(|k| {
            let (i, j) = ((k % NU) as f32, (k / NU) as f32);
            [i * 0.013, 1.9 - j * 0.017, 0.05 * (i * 0.4).sin() + 0.02]
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let x = sheet();
    let setup = TransferSetup {
        nu: NU,
        nv: NV,
        spacing: 0.013,
        side: 1.0,
        obstacles: &[],
        samples: 64,
        seed: 1,
    };
    let mut g = c.benchmark_group("transfer_3300");
    g.sample_size(10);
    g.bench_function("ray_traced_64_rays", |b| {
        b.iter(|| setup.transfer_at(std::hint::black_box(&x)))
    });
    // a synthetic reduced transfer: N_a = 48 centres in q_u of rank 9, r_a = 10
    let (na, ra, r) = (48usize, 10usize, 9usize);
    let tv = SH_COEFFS * NU * NV;
    let states_q: Vec<f32> = (0..na * r)
        .map(|k| ((k * 37) % 101) as f32 * 0.01)
        .collect();
    let transfer = Transfer {
        info: TransferInfo {
            bands: 3,
            samples: 64,
            seed: 1,
            states: na as u32,
            rank: ra as u32,
            side: 1.0,
            width: 0.3,
            regularisation: 1e-8,
            rel_error: 0.0,
            frobenius_error: 0.0,
            held_out: 0,
            held_out_error: 0.0,
            held_out_projection_error: 0.0,
            obstacles: Vec::new(),
        },
        centers: (0..na as u32).collect(),
        sigma: vec![1.0; na],
        mean: (0..tv).map(|k| (k % 9) as f32 * 0.01).collect(),
        basis: (0..tv * ra)
            .map(|k| ((k * 13) % 17) as f32 * 1e-3)
            .collect(),
        weights: (0..na * ra).map(|k| (k % 7) as f32 * 0.1).collect(),
    };
    let sky = ShLight::sky();
    let q: Vec<f32> = states_q[..r].iter().map(|v| v + 0.05).collect();
    let (mut qa, mut t, mut rad) = (vec![0f32; ra], vec![0f32; tv], Vec::new());
    g.bench_function("reduced_frame_na48_ra10", |b| {
        b.iter(|| {
            transfer.coefficients(&states_q, r, std::hint::black_box(&q), &mut qa);
            transfer.vectors(&qa, &mut t);
            radiance_of(&sky, CLOTH_ALBEDO, &t, &mut rad);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
