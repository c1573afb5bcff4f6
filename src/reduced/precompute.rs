//! Precomputation (§3.5): a random palette sequence with IRF durations T ∈ [T_min, T_max]
//! that respects the allowed transitions, its states recorded every k steps, then reduced.

use std::time::Instant;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use crate::cloth::Obstacle;
use crate::scene::{DynamicScene, ReducedSpec};

use super::basis::{frobenius_error, reduce};
use super::drive::{stop_entry, Driver};
use super::model::{ModelInfo, Orbit, ReducedModel};
use super::ReducedError;

/// Overrides of the scene's `[reduced]` settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrecomputeOptions {
    /// ε of σ_r ≥ ε·σ₁.
    pub epsilon: Option<f64>,
    /// Exact rank instead of ε.
    pub rank: Option<usize>,
    /// Simulated time of the sequence \[s\].
    pub duration: Option<f64>,
    pub seed: Option<u64>,
}

/// Recorded states of a palette sequence.
#[derive(Debug, Clone)]
pub(crate) struct Sampled {
    /// Coordinates per state M = 3v.
    pub coordinates: usize,
    /// N states of M positions each [m], state-major.
    pub data: Vec<f64>,
    /// IRFs in sampling order; orbit i starts where orbit i − 1 ends.
    pub orbits: Vec<Orbit>,
    /// Time between states [s].
    pub frame_dt: f64,
    /// Wall time of the simulation [s].
    pub simulate_s: f64,
}

/// What a precomputation produced, for `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct PrecomputeStats {
    pub snapshots: usize,
    pub coordinates: usize,
    pub rank: usize,
    /// σ_{r+1}/σ₁, the relative l₂ (spectral) error of the rank-r snapshot approximation.
    pub rel_error: f64,
    /// ‖A − A_r‖_F/‖A‖_F.
    pub frobenius_error: f64,
    pub orbits_sampled: usize,
    pub orbits_kept: usize,
    pub pruned_short: usize,
    pub pruned_dead_end: usize,
    /// Palette entries without any kept IRF.
    pub missing: Vec<String>,
    pub simulate_s: f64,
    pub svd_s: f64,
}

fn spec_of(scene: &DynamicScene) -> Result<&ReducedSpec, ReducedError> {
    scene.reduced.as_ref().ok_or(ReducedError::NoPalette)
}

/// Steps of the settling phase and steps between states.
pub(crate) fn settle_steps(scene: &DynamicScene, spec: &ReducedSpec) -> u64 {
    (spec.settle / scene.params.dt).round() as u64
}

/// Drives the scene with a random palette sequence and records its states; `progress` gets
/// the fraction done.
pub(crate) fn sample(
    scene: &DynamicScene,
    opts: &PrecomputeOptions,
    progress: &mut dyn FnMut(f64),
) -> Result<Sampled, ReducedError> {
    let t0 = Instant::now();
    let spec = spec_of(scene)?;
    let dt = scene.params.dt;
    let every = spec.every as u64;
    let frame_dt = dt * every as f64;
    let duration = opts.duration.unwrap_or(spec.duration);
    if !(duration.is_finite() && duration > 0.0) {
        return Err(ReducedError::Invalid(format!(
            "duration = {duration} s: must be > 0"
        )));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed.unwrap_or(spec.seed));
    let mut driver = Driver::new(scene)?;
    let settle = settle_steps(scene, spec);
    let total_frames = (duration / frame_dt).round().max(1.0) as u64;
    crate::cloth::check_steps("reduced duration", total_frames.saturating_mul(every))
        .map_err(|e| ReducedError::Invalid(e.to_string()))?;
    // the snapshots (3v values each) and their Gram matrix, in f64
    let coordinates = 3 * scene.world.len() as u64;
    let bytes = total_frames
        .saturating_mul(total_frames.saturating_add(coordinates))
        .saturating_mul(8);
    if bytes > crate::input::MEMORY_BUDGET {
        return Err(ReducedError::Invalid(format!(
            "duration = {duration} s: {total_frames} states of {coordinates} coordinates need about {} MiB for the snapshot SVD, more than the budget of {}; sample less or raise `every`",
            bytes >> 20,
            crate::input::bytes_label(crate::input::MEMORY_BUDGET)
        )));
    }
    let total_steps = (settle + total_frames * every) as f64;
    for s in 0..settle {
        driver.step()?;
        if s % 256 == 0 {
            progress(s as f64 / total_steps);
        }
    }
    let m = 3 * driver.world.len();
    let mut data = vec![0.0; m * (total_frames as usize + 1)];
    driver.local_positions(&mut data[..m]);
    let mut frames = 1usize;
    let mut orbits = Vec::new();
    let mut current = spec.start_index();
    let stop = stop_entry(spec);
    while (frames as u64) <= total_frames {
        // Next entry: allowed from the current one, and able to run t_min inside the door's range.
        let candidates: Vec<usize> = (0..spec.palette.len())
            .filter(|&k| k != current && spec.allows(current, k))
            .filter(|&k| driver.time_to_limit(spec.palette[k].angular_velocity) >= spec.t_min)
            .collect();
        let next = if candidates.is_empty() {
            stop.unwrap_or(spec.start_index())
        } else {
            candidates[rng.random_range(0..candidates.len())]
        };
        let mut t = spec.t_min + (spec.t_max - spec.t_min) * rng.random::<f64>();
        t = t.min(driver.time_to_limit(spec.palette[next].angular_velocity));
        let left = total_frames + 1 - frames as u64;
        // floor: a swing never runs past the door's range.
        let n = ((t / frame_dt).floor() as u64).clamp(1, left);
        driver.set_entry(next);
        let start = frames - 1;
        for _ in 0..n {
            for _ in 0..every {
                driver.step()?;
            }
            driver.local_positions(&mut data[frames * m..(frames + 1) * m]);
            frames += 1;
        }
        orbits.push(Orbit {
            entry: next as u32,
            start: start as u32,
            end: (frames - 1) as u32,
        });
        current = driver.entry();
        progress((settle + (frames as u64 - 1) * every) as f64 / total_steps);
    }
    data.truncate(frames * m);
    Ok(Sampled {
        coordinates: m,
        data,
        orbits,
        frame_dt,
        simulate_s: t0.elapsed().as_secs_f64(),
    })
}

/// Squared distance of eq. 9 between two states.
#[inline]
pub(crate) fn dist2(q1: &[f32], qd1: &[f32], q2: &[f32], qd2: &[f32], beta: f32) -> f32 {
    let a: f32 = q1.iter().zip(q2).map(|(a, b)| (a - b) * (a - b)).sum();
    let b: f32 = qd1.iter().zip(qd2).map(|(a, b)| (a - b) * (a - b)).sum();
    a + beta * b
}

/// Samples, reduces and builds the IRF library of a scene with a `[reduced]` palette.
pub fn precompute(
    scene: &DynamicScene,
    opts: &PrecomputeOptions,
    progress: &mut dyn FnMut(f64),
) -> Result<(ReducedModel, PrecomputeStats), ReducedError> {
    let sampled = sample(scene, opts, progress)?;
    build(scene, sampled, opts)
}

/// Reduces sampled states into a model: SVD, q and q̇ (eq. 8), β, pruned IRF library.
pub(crate) fn build(
    scene: &DynamicScene,
    sampled: Sampled,
    opts: &PrecomputeOptions,
) -> Result<(ReducedModel, PrecomputeStats), ReducedError> {
    let spec = spec_of(scene)?;
    let t0 = Instant::now();
    let m = sampled.coordinates;
    let n = sampled.data.len() / m;
    let epsilon = opts.epsilon.unwrap_or(spec.rank_tolerance);
    let red = reduce(sampled.data, m, epsilon, spec.max_rank, opts.rank);
    let svd_s = t0.elapsed().as_secs_f64();
    let r = red.rank;
    if r == 0 {
        return Err(ReducedError::Invalid(
            "the recorded states do not move: rank 0".into(),
        ));
    }
    let q: Vec<f32> = red.coords.iter().map(|&x| x as f32).collect();
    let inv_dt = (1.0 / sampled.frame_dt) as f32;
    let mut qdot = vec![0f32; q.len()];
    for j in 1..n {
        for k in 0..r {
            qdot[j * r + k] = (q[j * r + k] - q[(j - 1) * r + k]) * inv_dt;
        }
    }
    let max_norm2 = |v: &[f32]| {
        v.chunks_exact(r)
            .map(|c| c.iter().map(|x| x * x).sum::<f32>())
            .fold(0f32, f32::max)
    };
    let (mq, mqd) = (max_norm2(&q), max_norm2(&qdot));
    let beta = if mqd > 0.0 { mq / mqd } else { 1.0 };

    // Pruning: short orbits, then dead ends (end far from every other IRF's start).
    let frames_min = spec.prune_short * spec.t_min / sampled.frame_dt;
    let all = &sampled.orbits;
    let short: Vec<bool> = all.iter().map(|o| (o.len() as f64) < frames_min).collect();
    let state = |j: u32| (&q[j as usize * r..][..r], &qdot[j as usize * r..][..r]);
    let end_dist: Vec<f32> = all
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let (qe, qde) = state(o.end);
            all.iter()
                .enumerate()
                .filter(|&(k, s)| k != i + 1 && !short[k] && s.start != o.end)
                .map(|(_, s)| {
                    let (qs, qds) = state(s.start);
                    dist2(qe, qde, qs, qds, beta).sqrt()
                })
                .fold(f32::INFINITY, f32::min)
        })
        .collect();
    let mut finite: Vec<f32> = end_dist.iter().copied().filter(|d| d.is_finite()).collect();
    finite.sort_by(f32::total_cmp);
    let median = finite.get(finite.len() / 2).copied().unwrap_or(0.0);
    let dead: Vec<bool> = end_dist
        .iter()
        .map(|&d| d.is_finite() && median > 0.0 && d > spec.dead_end_factor as f32 * median)
        .collect();
    let mut keep: Vec<bool> = (0..all.len()).map(|i| !short[i] && !dead[i]).collect();
    // Never leave a sampled entry without an IRF: keep its longest one.
    let mut missing = Vec::new();
    for (e, entry) in spec.palette.iter().enumerate() {
        let mine: Vec<usize> = (0..all.len())
            .filter(|&i| all[i].entry as usize == e)
            .collect();
        if !mine.iter().any(|&i| keep[i]) {
            match mine.iter().max_by_key(|&&i| all[i].len()) {
                Some(&i) => keep[i] = true,
                None => missing.push(entry.name.clone()),
            }
        }
    }
    let pruned_short = (0..all.len()).filter(|&i| short[i] && !keep[i]).count();
    let pruned_dead_end = (0..all.len())
        .filter(|&i| !short[i] && dead[i] && !keep[i])
        .count();
    let orbits: Vec<Orbit> = all
        .iter()
        .zip(&keep)
        .filter(|(_, &k)| k)
        .map(|(o, _)| *o)
        .collect();
    let rel_error = red.spectral_error(r);
    let world = &scene.world;
    let info = ModelInfo {
        name: scene.name.clone(),
        nu: world.grid.nu as u32,
        nv: world.grid.nv as u32,
        h_warp: world.grid.h_warp,
        h_weft: world.grid.h_weft,
        frame_dt: sampled.frame_dt,
        beta: beta as f64,
        blend_rate: spec.blend_rate,
        palette: spec.palette.clone(),
        start: spec.start_index() as u32,
        stop: stop_entry(spec).map(|s| s as u32),
        door: spec.door,
        door_plane: spec.door.and_then(|_| {
            world
                .obstacles
                .iter()
                .find_map(Obstacle::plane)
                .map(|(p, n)| [p, n])
        }),
        pins: world.pins().iter().map(|p| p.particle as u32).collect(),
        camera: scene.camera,
        rank_tolerance: epsilon,
        rel_error,
        orbits_sampled: all.len() as u32,
        pruned_short: pruned_short as u32,
        pruned_dead_end: pruned_dead_end as u32,
    };
    let stats = PrecomputeStats {
        snapshots: n,
        coordinates: m,
        rank: r,
        rel_error,
        frobenius_error: frobenius_error(&red.sigma, r),
        orbits_sampled: all.len(),
        orbits_kept: orbits.len(),
        pruned_short,
        pruned_dead_end,
        missing,
        simulate_s: sampled.simulate_s,
        svd_s,
    };
    let model = ReducedModel::from_reduction(info, &red, q, qdot, orbits);
    Ok((model, stats))
}
