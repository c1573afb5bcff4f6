//! Sampling (§3.5): C independent chains from the settled state, chain c a random palette
//! sequence (seed + c) of IRFs with T ∈ [T_min, T_max] s; states recorded every k steps.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

use crate::scene::{DynamicScene, ReducedSpec};

use super::drive::{stop_entry, Driver};
use super::model::Orbit;
use super::precompute::{settle_steps, spec_of, PrecomputeOptions};
use super::ReducedError;

/// What a sampling will do: chains, their recorded frames and seeds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SamplePlan {
    /// Frames recorded after each chain's first (settled) state.
    pub frames: Vec<u64>,
    pub seed: u64,
    pub duration: f64,
    /// Steps between recorded states and the time between them \[s\].
    pub every: u64,
    pub frame_dt: f64,
}

impl SamplePlan {
    pub(crate) fn chains(&self) -> usize {
        self.frames.len()
    }

    /// States of chains `range` (each chain's first state included).
    pub(crate) fn states(&self, range: Range<usize>) -> u64 {
        self.frames[range].iter().map(|f| f + 1).sum()
    }
}

/// The plan of a scene's sampling: `duration` s of frames split evenly over the chains
/// (the first chains take one frame more), with the step and memory bounds checked.
pub(crate) fn plan(
    scene: &DynamicScene,
    opts: &PrecomputeOptions,
) -> Result<SamplePlan, ReducedError> {
    let spec = spec_of(scene)?;
    let every = spec.every as u64;
    let frame_dt = scene.params.dt * every as f64;
    let duration = opts.duration.unwrap_or(spec.duration);
    if !(duration.is_finite() && duration > 0.0) {
        return Err(ReducedError::Invalid(format!(
            "duration = {duration} s: must be > 0"
        )));
    }
    let chains = opts.chains.unwrap_or(spec.chains);
    let total_frames = (duration / frame_dt).round().max(1.0) as u64;
    if chains == 0 || chains as u64 > total_frames {
        return Err(ReducedError::Invalid(format!(
            "chains = {chains}: must be 1 to {total_frames} (the frames of {duration} s at {frame_dt} s)"
        )));
    }
    crate::cloth::check_steps("reduced duration", total_frames.saturating_mul(every))
        .map_err(|e| ReducedError::Invalid(e.to_string()))?;
    let c = chains as u64;
    let frames: Vec<u64> = (0..c)
        .map(|i| total_frames / c + u64::from(i < total_frames % c))
        .collect();
    let p = SamplePlan {
        frames,
        seed: opts.seed.unwrap_or(spec.seed),
        duration,
        every,
        frame_dt,
    };
    // the snapshots (3v values each) and their Gram matrix, in f64
    let states = p.states(0..chains);
    let coordinates = 3 * scene.world.len() as u64;
    let bytes = states
        .saturating_mul(states.saturating_add(coordinates))
        .saturating_mul(8);
    if bytes > crate::input::MEMORY_BUDGET {
        return Err(ReducedError::Invalid(format!(
            "duration = {duration} s: {states} states of {coordinates} coordinates need about {} MiB for the snapshot SVD, more than the budget of {}; sample less or raise `every`",
            bytes >> 20,
            crate::input::bytes_label(crate::input::MEMORY_BUDGET)
        )));
    }
    Ok(p)
}

/// The recorded states of one chain: its settled first state, then `frames` more.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chain {
    /// States of M positions each [m], state-major.
    pub data: Vec<f64>,
    /// IRFs in sampling order, states counted from the chain's first.
    pub orbits: Vec<Orbit>,
}

/// Samples chains `range` of `plan` on all of rayon's threads, each chain on one thread (its
/// cloth steps serial), gathered in chain order: the states do not depend on the threads.
/// `progress` gets the fraction done; returns the chains and the wall time \[s\].
pub(crate) fn sample_chains(
    scene: &DynamicScene,
    plan: &SamplePlan,
    range: Range<usize>,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<(Vec<Chain>, f64), ReducedError> {
    let t0 = Instant::now();
    let spec = spec_of(scene)?;
    let mut settled = Driver::new(scene)?;
    let settle = settle_steps(scene, spec);
    let total = (settle + plan.every * plan.frames[range.clone()].iter().sum::<u64>()).max(1);
    let done = AtomicU64::new(0);
    let tick = |steps: u64| {
        let d = done.fetch_add(steps, Ordering::Relaxed) + steps;
        progress(d as f64 / total as f64);
    };
    for s in 0..settle {
        settled.step()?;
        if s % 256 == 255 {
            tick(256);
        }
    }
    done.store(settle, Ordering::Relaxed);
    let chains = range
        .into_par_iter()
        .map(|c| {
            // one thread per chain: force sums never depend on how many threads there are
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .map_err(|e| ReducedError::Invalid(format!("cannot start a thread: {e}")))?;
            pool.install(|| run_chain(settled.clone(), spec, plan, c, &tick))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((chains, t0.elapsed().as_secs_f64()))
}

/// Chain `c`: a random palette sequence seeded with seed + c from the settled `driver`.
fn run_chain(
    mut driver: Driver,
    spec: &ReducedSpec,
    plan: &SamplePlan,
    c: usize,
    tick: &(dyn Fn(u64) + Sync),
) -> Result<Chain, ReducedError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(plan.seed.wrapping_add(c as u64));
    let (every, frame_dt) = (plan.every, plan.frame_dt);
    let total_frames = plan.frames[c];
    let m = 3 * driver.world.len();
    let mut data = vec![0.0; m * (total_frames as usize + 1)];
    driver.local_positions(&mut data[..m]);
    let mut frames = 1usize;
    let mut orbits = Vec::new();
    let mut current = driver.entry();
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
        tick(n * every);
        orbits.push(Orbit {
            entry: next as u32,
            start: start as u32,
            end: (frames - 1) as u32,
        });
        current = driver.entry();
    }
    data.truncate(frames * m);
    Ok(Chain { data, orbits })
}
