//! The kes force kernel, scalar against lanes, on the bench's sheet (`kes_forces`: the hanging
//! 70 × 70 kes sheet after 20 Broyden steps): `cargo bench --bench kes_kernel --
//! [scalar|lanes|both] [EVALUATIONS] [ROUNDS]` (or `target/release/deps/kes_kernel-*` with the
//! same arguments). One kernel: that many evaluations (for
//! `valgrind --tool=callgrind`). Both: rounds alternating the kernels, each printing the median
//! wall time of one evaluation and ns per connector on the current rayon pool
//! (`RAYON_NUM_THREADS`), then the medians of the rounds; the two kernels' forces are compared
//! first.

use std::time::Instant;

use kestrel::cloth::{ClothPipeline, ClothWorld, ForceKernel, Integrator, Material};
use kestrel::cloth::{StepParameters, Vec3};
use kestrel::material::LawState;

#[path = "../tests/common.rs"]
mod common;

fn set_kernel(world: &mut ClothWorld, kernel: ForceKernel) {
    if let Material::Kes(k) = &mut world.material {
        k.kernel = kernel;
    }
}

/// The median wall time of one evaluation over `evals` [s], and the forces.
fn time(world: &ClothWorld, evals: usize) -> (f64, Vec<Vec3>, Vec<LawState>) {
    let mut trial = vec![LawState::default(); world.state_len()];
    let mut normals = vec![Vec3::zeros(); world.len()];
    let mut f = vec![Vec3::zeros(); world.len()];
    let mut t = Vec::with_capacity(evals);
    for _ in 0..evals {
        let start = Instant::now();
        world.forces(
            world.positions(),
            world.velocities(),
            &mut trial,
            &mut normals,
            &mut f,
        );
        t.push(start.elapsed().as_secs_f64());
    }
    (median(&mut t), f, trial)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    // cargo bench passes `--bench`
    let args: Vec<String> = std::env::args().filter(|a| !a.starts_with("--")).collect();
    let mode = args.get(1).map_or("both", String::as_str);
    let evals: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(500);
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let mut world = common::hanging_kes_sheet(70);
    let mut pipeline = ClothPipeline::new();
    let params = StepParameters::new(Integrator::Broyden, 1e-3);
    for _ in 0..20 {
        pipeline.step(&params, &mut world).expect("step");
    }
    let connectors = world.material.connector_count() as f64;
    let kernels = match mode {
        "scalar" => vec![ForceKernel::Scalar],
        "lanes" => vec![ForceKernel::Lanes],
        _ => vec![ForceKernel::Scalar, ForceKernel::Lanes],
    };
    if kernels.len() == 1 {
        set_kernel(&mut world, kernels[0]);
        let (t, ..) = time(&world, evals);
        println!(
            "{mode}: {:.1} us, {:.2} ns per connector",
            t * 1e6,
            t * 1e9 / connectors
        );
        return;
    }
    let mut out = Vec::new();
    for &k in &kernels {
        set_kernel(&mut world, k);
        out.push(time(&world, 1));
    }
    println!(
        "forces equal: {}, trial states equal: {}",
        out[0].1 == out[1].1,
        out[0].2 == out[1].2
    );
    let mut medians = vec![Vec::new(); kernels.len()];
    for round in 0..rounds {
        for (n, &k) in kernels.iter().enumerate() {
            set_kernel(&mut world, k);
            let (t, ..) = time(&world, evals);
            medians[n].push(t);
            println!(
                "round {round} {k:?}: {:.1} us, {:.2} ns per connector",
                t * 1e6,
                t * 1e9 / connectors
            );
        }
    }
    for (n, k) in kernels.iter().enumerate() {
        let t = median(&mut medians[n]);
        println!(
            "median {k:?}: {:.1} us, {:.2} ns per connector",
            t * 1e6,
            t * 1e9 / connectors
        );
    }
}
