//! Sampling (§3.5): independent units from the settled state, states recorded every k steps:
//! random chains (seed + c, IRFs of T ∈ [T_min, T_max] s, optionally with switch branches from
//! inside their IRFs) and a tree of IRFs of T_max.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

use crate::scene::{DynamicScene, ReducedSpec, Sampling};

use super::drive::{stop_entry, Driver};
use super::model::Orbit;
use super::precompute::{settle_steps, spec_of, PrecomputeOptions};
use super::ReducedError;

/// One independent piece of a sampling.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Unit {
    /// Random chain `chain` of `frames` frames after the settled state.
    Random { chain: usize, frames: u64 },
    /// A tree IRF: `prefix` (entry, frames) run unrecorded from the settled state, then an IRF
    /// of `entry` for T_max recorded, branching at every `branches[0]` frames into IRFs of
    /// each entry allowed next, those at every `branches[1]`, …
    Tree {
        prefix: Option<(usize, u64)>,
        entry: usize,
        branches: Vec<u64>,
    },
}

/// What a sampling will do: its units, in the order their states are gathered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SamplePlan {
    pub units: Vec<Unit>,
    /// Random chains (the first units).
    pub chains: usize,
    /// Frames of one tree IRF (T_max).
    pub tree_frames: u64,
    pub seed: u64,
    pub duration: f64,
    /// Steps between recorded states and the time between them \[s\].
    pub every: u64,
    pub frame_dt: f64,
}

impl SamplePlan {
    /// Most states units `range` record (each IRF of the tree with its two leading states).
    pub(crate) fn states(&self, range: Range<usize>, entries: usize) -> u64 {
        let irf = self.tree_frames + 2;
        self.units[range]
            .iter()
            .map(|u| match u {
                Unit::Random { frames, .. } => frames + 1,
                Unit::Tree { branches, .. } => {
                    // IRFs of the subtree: each branches into at most entries − 1 per point
                    let mut count = 1u64;
                    let mut level = 1u64;
                    for b in branches {
                        level = level
                            .saturating_mul(self.tree_frames / b)
                            .saturating_mul(entries.saturating_sub(1) as u64);
                        count = count.saturating_add(level);
                    }
                    count.saturating_mul(irf)
                }
            })
            .fold(0u64, u64::saturating_add)
    }

    /// Steps units `range` simulate (for the progress bar; tree prefixes counted).
    fn steps(&self, range: Range<usize>, entries: usize) -> u64 {
        let prefixes: u64 = self.units[range.clone()]
            .iter()
            .map(|u| match u {
                Unit::Tree {
                    prefix: Some((_, f)),
                    ..
                } => *f,
                _ => 0,
            })
            .sum();
        (self.states(range, entries) + prefixes).saturating_mul(self.every)
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
            "duration = {} s: must be > 0",
            crate::friction::short_number(duration)
        )));
    }
    let chains = opts.chains.unwrap_or(spec.chains);
    let total_frames = (duration / frame_dt).round().max(1.0) as u64;
    if chains == 0 || chains as u64 > total_frames {
        use crate::friction::short_number;
        return Err(ReducedError::Invalid(format!(
            "chains = {chains}: must be 1 to {total_frames}, the frames of the sampled {} s at \
             {} s a frame (every = {every} steps of {} s): lengthen the duration, lower \
             every, or use fewer chains",
            short_number(duration),
            short_number(frame_dt),
            short_number(scene.params.dt)
        )));
    }
    crate::cloth::check_steps("reduced duration", total_frames.saturating_mul(every))
        .map_err(|e| ReducedError::Invalid(e.to_string()))?;
    let c = chains as u64;
    let mut units: Vec<Unit> = (0..c)
        .map(|i| Unit::Random {
            chain: i as usize,
            frames: total_frames / c + u64::from(i < total_frames % c),
        })
        .collect();
    let tree_frames = ((spec.t_max / frame_dt).floor() as u64).max(1);
    if spec.sampling == Sampling::Tree {
        let branches: Vec<u64> = spec
            .branch_every
            .iter()
            .map(|b| ((b / frame_dt).round() as u64).clamp(1, tree_frames))
            .collect();
        let start = spec.start_index();
        let after =
            |e: usize| (0..spec.palette.len()).filter(move |&k| k != e && spec.allows(e, k));
        for e1 in after(start) {
            units.push(Unit::Tree {
                prefix: None,
                entry: e1,
                branches: Vec::new(),
            });
            if let Some((&b1, deeper)) = branches.split_first() {
                for i in 1..=tree_frames / b1 {
                    for e2 in after(e1) {
                        units.push(Unit::Tree {
                            prefix: Some((e1, i * b1)),
                            entry: e2,
                            branches: deeper.to_vec(),
                        });
                    }
                }
            }
        }
    }
    let p = SamplePlan {
        units,
        chains,
        tree_frames,
        seed: opts.seed.unwrap_or(spec.seed),
        duration,
        every,
        frame_dt,
    };
    crate::cloth::check_steps(
        "reduced sampling",
        p.steps(0..p.units.len(), spec.palette.len()),
    )
    .map_err(|e| ReducedError::Invalid(e.to_string()))?;
    // the states (3v f32 values each) and the Gram matrix of at most svd_states, in f64
    let states = p.states(0..p.units.len(), spec.palette.len());
    let coordinates = 3 * scene.world.len() as u64;
    let svd = states.min(spec.svd_states as u64);
    let bytes = states
        .saturating_mul(coordinates)
        .saturating_mul(4)
        .saturating_add(
            svd.saturating_mul(svd.saturating_add(coordinates))
                .saturating_mul(8),
        );
    if bytes > crate::input::MEMORY_BUDGET {
        return Err(ReducedError::Invalid(format!(
            "sampling: {states} states of {coordinates} coordinates need about {} MiB, more than the budget of {}; sample less (duration, branch_every) or raise `every`",
            bytes >> 20,
            crate::input::bytes_label(crate::input::MEMORY_BUDGET)
        )));
    }
    Ok(p)
}

/// The recorded states of one unit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chain {
    /// States of M positions each [m], state-major.
    pub data: Vec<f32>,
    /// IRFs in sampling order, states counted from the unit's first.
    pub orbits: Vec<Orbit>,
    /// States without a recorded predecessor (q̇ = 0): the first, and each tree IRF's lead.
    pub rests: Vec<u32>,
}

impl Chain {
    /// Appends `driver`'s state (its local positions) as the next state.
    fn push_state(&mut self, driver: &Driver) {
        let at = self.data.len();
        self.data.resize(at + 3 * driver.world.len(), 0.0);
        driver.local_positions(&mut self.data[at..]);
    }

    /// Starts an IRF from `driver`'s state x⁰: `lead` (the state one frame before, recorded
    /// without a predecessor), then x⁰. Returns the lead's index; x⁰ is the next.
    fn begin_irf(&mut self, lead: &[f32], driver: &Driver) -> u32 {
        let first = (self.data.len() / lead.len()) as u32;
        self.rests.push(first);
        self.data.extend_from_slice(lead);
        self.push_state(driver);
        first
    }
}

/// Samples units `range` of `plan` on all of rayon's threads, each unit on one thread (its
/// cloth steps serial), gathered in unit order: the states do not depend on the threads.
/// `progress` gets the fraction done; returns the units' states and the wall time \[s\].
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
    let total = (settle + plan.steps(range.clone(), spec.palette.len())).max(1);
    let done = AtomicU64::new(0);
    let tick = |steps: u64| {
        let d = done.fetch_add(steps, Ordering::Relaxed) + steps;
        progress((d as f64 / total as f64).min(1.0));
    };
    for s in 0..settle {
        settled.step()?;
        if s % 256 == 255 {
            tick(256);
        }
    }
    done.store(settle, Ordering::Relaxed);
    let chains = plan.units[range]
        .par_iter()
        .map(|unit| {
            // one thread per unit: force sums never depend on how many threads there are
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .map_err(|e| ReducedError::Invalid(format!("cannot start a thread: {e}")))?;
            pool.install(|| match unit {
                Unit::Random { chain, frames } => {
                    run_chain(settled.clone(), spec, plan, (*chain, *frames), &tick)
                }
                Unit::Tree {
                    prefix,
                    entry,
                    branches,
                } => run_tree(&settled, spec, plan, (*prefix, *entry, branches), &tick),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((chains, t0.elapsed().as_secs_f64()))
}

/// Random chain `c` of `total_frames` frames: a palette sequence seeded with seed + c from the
/// settled `driver`; with `switch_branches` N, each chain IRF also branches N IRFs (their
/// own generator, so the chain's sequence is that of the chain without branches, cut
/// shorter), whose states follow the chain's and count in the same `total_frames`.
fn run_chain(
    mut driver: Driver,
    spec: &ReducedSpec,
    plan: &SamplePlan,
    (c, total_frames): (usize, u64),
    tick: &(dyn Fn(u64) + Sync),
) -> Result<Chain, ReducedError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(plan.seed.wrapping_add(c as u64));
    let mut branch_rng =
        Xoshiro256PlusPlus::seed_from_u64(plan.seed.wrapping_add(c as u64) ^ BRANCH_SEED);
    let (every, frame_dt) = (plan.every, plan.frame_dt);
    let m = 3 * driver.world.len();
    let mut data = vec![0.0; m * (total_frames as usize + 1)];
    driver.local_positions(&mut data[..m]);
    let mut frames = 1usize;
    let mut orbits = Vec::new();
    let mut branches = Chain {
        data: Vec::new(),
        orbits: Vec::new(),
        rests: Vec::new(),
    };
    let branch_states = |b: &Chain| (b.data.len() / m.max(1)) as u64;
    let mut current = driver.entry();
    let stop = stop_entry(spec);
    while frames as u64 + branch_states(&branches) <= total_frames {
        // Next entry: allowed from the current one, and able to run t_min inside the door's range.
        let next = next_entry(spec, &driver, current, &mut rng)
            .unwrap_or_else(|| stop.unwrap_or(spec.start_index()));
        let mut t = spec
            .durations
            .duration(spec.t_min, spec.t_max, rng.random::<f64>());
        t = t.min(driver.time_to_limit(spec.palette[next].angular_velocity));
        let left = total_frames + 1 - frames as u64 - branch_states(&branches);
        // floor: a swing never runs past the door's range.
        let n = ((t / frame_dt).floor() as u64).clamp(1, left);
        // branch points: frames strictly inside the IRF (after 1 … n − 1 of its frames)
        let mut points: Vec<u64> = if n >= 2 {
            (0..spec.switch_branches)
                .map(|_| branch_rng.random_range(1..n))
                .collect()
        } else {
            Vec::new()
        };
        points.sort_unstable();
        let mut snapshots = Vec::new();
        driver.set_entry(next);
        let start = frames - 1;
        for f in 1..=n {
            for _ in 0..every {
                driver.step()?;
            }
            driver.local_positions(&mut data[frames * m..(frames + 1) * m]);
            frames += 1;
            for _ in points.iter().filter(|&&p| p == f) {
                snapshots.push((frames - 1, driver.clone()));
            }
        }
        tick(n * every);
        orbits.push(Orbit {
            entry: next as u32,
            start: start as u32,
            end: (frames - 1) as u32,
        });
        current = driver.entry();
        for (x0, snapshot) in snapshots {
            let left = (total_frames + 1).saturating_sub(frames as u64 + branch_states(&branches));
            let lead = &data[(x0 - 1) * m..x0 * m];
            record_branch(
                snapshot,
                lead,
                spec,
                plan,
                left,
                &mut branch_rng,
                &mut branches,
                tick,
            )?;
        }
    }
    data.truncate(frames * m);
    // the branches' states after the chain's
    let first = frames as u32;
    data.extend_from_slice(&branches.data);
    orbits.extend(branches.orbits.iter().map(|o| Orbit {
        entry: o.entry,
        start: o.start + first,
        end: o.end + first,
    }));
    let mut rests = vec![0];
    rests.extend(branches.rests.iter().map(|j| j + first));
    Ok(Chain {
        data,
        orbits,
        rests,
    })
}

/// Mixed into a chain's seed for the generator of its switch branches.
const BRANCH_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// An entry allowed after `current`, other than it, able to run t_min inside the door's
/// range, drawn uniformly; None when there is none.
fn next_entry(
    spec: &ReducedSpec,
    driver: &Driver,
    current: usize,
    rng: &mut Xoshiro256PlusPlus,
) -> Option<usize> {
    let candidates: Vec<usize> = (0..spec.palette.len())
        .filter(|&k| k != current && spec.allows(current, k))
        .filter(|&k| driver.time_to_limit(spec.palette[k].angular_velocity) >= spec.t_min)
        .collect();
    (!candidates.is_empty()).then(|| candidates[rng.random_range(0..candidates.len())])
}

/// A switch branch from a chain state: `lead` (the state one frame before it), x⁰ (the
/// `driver`'s state), then an IRF of an entry allowed after the driver's, drawn as a chain
/// draws its next (duration by the law, within the door's range), in at most `left` states;
/// nothing when fewer than 3 are left or no entry may follow.
#[allow(clippy::too_many_arguments)]
fn record_branch(
    mut driver: Driver,
    lead: &[f32],
    spec: &ReducedSpec,
    plan: &SamplePlan,
    left: u64,
    rng: &mut Xoshiro256PlusPlus,
    out: &mut Chain,
    tick: &(dyn Fn(u64) + Sync),
) -> Result<(), ReducedError> {
    if left < 3 {
        return Ok(());
    }
    let Some(next) = next_entry(spec, &driver, driver.entry(), rng) else {
        return Ok(());
    };
    let t = spec
        .durations
        .duration(spec.t_min, spec.t_max, rng.random::<f64>())
        .min(driver.time_to_limit(spec.palette[next].angular_velocity));
    let n = ((t / plan.frame_dt).floor() as u64).clamp(1, left - 2);
    let first = out.begin_irf(lead, &driver);
    driver.set_entry(next);
    for _ in 0..n {
        for _ in 0..plan.every {
            driver.step()?;
        }
        out.push_state(&driver);
    }
    tick(n * plan.every);
    out.orbits.push(Orbit {
        entry: next as u32,
        start: first + 1,
        end: first + 1 + n as u32,
    });
    Ok(())
}

/// A tree unit: its prefix from the settled state, then its IRF and subtree. The door's range
/// is lifted where the motion does not depend on the angle; elsewhere an IRF ends at the range
/// and a prefix that would leave it records nothing.
fn run_tree(
    settled: &Driver,
    spec: &ReducedSpec,
    plan: &SamplePlan,
    (prefix, entry, branches): (Option<(usize, u64)>, usize, &[u64]),
    tick: &(dyn Fn(u64) + Sync),
) -> Result<Chain, ReducedError> {
    let mut driver = settled.clone();
    driver.lift_range_if_invariant();
    let m = 3 * driver.world.len();
    let mut prev = vec![0.0f32; m];
    driver.local_positions(&mut prev);
    let mut out = Chain {
        data: Vec::new(),
        orbits: Vec::new(),
        rests: Vec::new(),
    };
    if let Some((e, frames)) = prefix {
        let omega = spec.palette[e].angular_velocity;
        if driver.time_to_limit(omega) < frames as f64 * plan.frame_dt {
            return Ok(out);
        }
        driver.set_entry(e);
        for f in 0..frames {
            if f + 1 == frames {
                driver.local_positions(&mut prev);
            }
            for _ in 0..plan.every {
                driver.step()?;
            }
        }
        tick(frames * plan.every);
    }
    record_tree(driver, &prev, spec, plan, (entry, branches), &mut out, tick)?;
    Ok(out)
}

/// Records an IRF of `entry` from `driver`'s state (`prev` the state one frame before) — a
/// lead state, x⁰, then up to T_max of frames — and, at every `branches[0]` frames of it, an
/// IRF of each entry allowed next with the deeper branches.
fn record_tree(
    mut driver: Driver,
    prev: &[f32],
    spec: &ReducedSpec,
    plan: &SamplePlan,
    (entry, branches): (usize, &[u64]),
    out: &mut Chain,
    tick: &(dyn Fn(u64) + Sync),
) -> Result<(), ReducedError> {
    let m = prev.len();
    let omega = spec.palette[entry].angular_velocity;
    let n = plan
        .tree_frames
        .min((driver.time_to_limit(omega) / plan.frame_dt).floor() as u64);
    if n == 0 {
        return Ok(());
    }
    let lead = out.begin_irf(prev, &driver);
    driver.set_entry(entry);
    let mut snapshots = Vec::new();
    for f in 1..=n {
        for _ in 0..plan.every {
            driver.step()?;
        }
        out.push_state(&driver);
        if let Some(&b) = branches.first() {
            if f % b == 0 {
                snapshots.push((f, driver.clone()));
            }
        }
    }
    tick(n * plan.every);
    out.orbits.push(Orbit {
        entry: entry as u32,
        start: lead + 1,
        end: lead + 1 + n as u32,
    });
    for (f, snapshot) in snapshots {
        let j = (lead + 1 + f as u32 - 1) as usize;
        let before = out.data[j * m..(j + 1) * m].to_vec();
        for next in (0..spec.palette.len()).filter(|&k| k != entry && spec.allows(entry, k)) {
            record_tree(
                snapshot.clone(),
                &before,
                spec,
                plan,
                (next, &branches[1..]),
                out,
                tick,
            )?;
        }
    }
    Ok(())
}
