//! Precomputation (§3.5): sampled chains (sample.rs) reduced by SVD (eqs. 3–7) into q [m],
//! q̇ [m/s] (eq. 8), β of eq. 9 and a pruned IRF library.

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::cloth::Obstacle;
use crate::scene::{DynamicScene, ReducedSpec};

use super::basis::{frobenius_error, reduce, Reduction};
use super::drive::stop_entry;
use super::model::{ModelInfo, Orbit, ReducedModel};
use super::sample::{plan, sample_chains, Chain};
use super::transfer::{
    build_transfer, vertex_normals, TransferInput, TransferOptions, TransferSetup, TransferStats,
};
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
    /// Independent chains the sampling is split into.
    pub chains: Option<usize>,
    /// Also precompute the reduced radiance transfer (§4) from the unreduced states.
    pub transfer: Option<TransferOptions>,
}

/// Recorded states of a palette sequence.
#[derive(Debug, Clone)]
pub(crate) struct Sampled {
    /// Coordinates per state M = 3v.
    pub coordinates: usize,
    /// N states of M positions each [m], state-major.
    pub data: Vec<f32>,
    /// IRFs in chain and sampling order; within a chain, orbit i starts where i − 1 ends (its
    /// switch branches, after them, each from a lead state and a copy of a chain state).
    pub orbits: Vec<Orbit>,
    /// States without a recorded predecessor (q̇ = 0).
    pub rests: Vec<u32>,
    /// Time between states [s].
    pub frame_dt: f64,
    /// Wall time of the simulation [s].
    pub simulate_s: f64,
}

/// What a precomputation produced, for `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct PrecomputeStats {
    pub snapshots: usize,
    /// States the SVD was computed from (every state when at most `svd_states`).
    pub svd_states: usize,
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
    /// The transfer's figures (`transfer_rank`, `transfer_rel_error`, …) with `--transfer`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<TransferStats>,
}

pub(crate) fn spec_of(scene: &DynamicScene) -> Result<&ReducedSpec, ReducedError> {
    scene.reduced.as_ref().ok_or(ReducedError::NoPalette)
}

/// Steps of the settling phase.
pub(crate) fn settle_steps(scene: &DynamicScene, spec: &ReducedSpec) -> u64 {
    (spec.settle / scene.params.dt).round() as u64
}

impl Sampled {
    /// The chains' states one after the other, their IRFs renumbered accordingly.
    pub(crate) fn of_chains(
        chains: Vec<Chain>,
        coordinates: usize,
        frame_dt: f64,
        simulate_s: f64,
    ) -> Self {
        let m = coordinates.max(1);
        let mut data = Vec::with_capacity(chains.iter().map(|c| c.data.len()).sum());
        let (mut orbits, mut rests) = (Vec::new(), Vec::new());
        for c in chains {
            let first = (data.len() / m) as u32;
            rests.extend(c.rests.iter().map(|j| j + first));
            orbits.extend(c.orbits.iter().map(|o| Orbit {
                entry: o.entry,
                start: o.start + first,
                end: o.end + first,
            }));
            data.extend_from_slice(&c.data);
        }
        Self {
            coordinates,
            data,
            orbits,
            rests,
            frame_dt,
            simulate_s,
        }
    }
}

/// q = Uᵀ(x − mean) of every state (M values each), r values per state, state by state on
/// rayon's threads (each state's sums in one order).
fn project(red: &Reduction, data: &[f32]) -> Vec<f32> {
    let m = red.coordinates.max(1);
    let r = red.rank;
    let mut q = vec![0f32; data.len() / m * r];
    q.par_chunks_mut(r.max(1))
        .zip(data.par_chunks(m))
        .for_each(|(qj, x)| {
            for (k, qk) in qj.iter_mut().enumerate() {
                let u = &red.basis[k * m..(k + 1) * m];
                let dot: f64 = u
                    .iter()
                    .zip(x)
                    .zip(&red.mean)
                    .map(|((&u, &x), &mu)| u * (f64::from(x) - mu))
                    .sum();
                *qk = dot as f32;
            }
        });
    q
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
    progress: &(dyn Fn(f64) + Sync),
) -> Result<(ReducedModel, PrecomputeStats), ReducedError> {
    precompute_reporting(scene, opts, progress, &|_| {})
}

/// [`precompute`], reporting the fraction of the simulation done to `simulated` and of the
/// transfer's states to `transfer`.
pub fn precompute_reporting(
    scene: &DynamicScene,
    opts: &PrecomputeOptions,
    simulated: &(dyn Fn(f64) + Sync),
    transfer: &(dyn Fn(f64) + Sync),
) -> Result<(ReducedModel, PrecomputeStats), ReducedError> {
    if let Some(t) = &opts.transfer {
        t.validate()?;
    }
    let plan = plan(scene, opts)?;
    let m = 3 * scene.world.len();
    let (chains, simulate_s) = sample_chains(scene, &plan, 0..plan.units.len(), simulated)?;
    build(
        scene,
        Sampled::of_chains(chains, m, plan.frame_dt, simulate_s),
        opts,
        transfer,
    )
}

/// Reduces sampled states into a model: SVD, q and q̇ (eq. 8), β, pruned IRF library.
pub(crate) fn build(
    scene: &DynamicScene,
    sampled: Sampled,
    opts: &PrecomputeOptions,
    transfer_progress: &(dyn Fn(f64) + Sync),
) -> Result<(ReducedModel, PrecomputeStats), ReducedError> {
    let spec = spec_of(scene)?;
    let t0 = Instant::now();
    let m = sampled.coordinates.max(1);
    let n = sampled.data.len() / m;
    if n == 0 {
        return Err(ReducedError::Invalid(
            "the sampling recorded no states".into(),
        ));
    }
    let epsilon = opts.epsilon.unwrap_or(spec.rank_tolerance);
    // the basis from at most svd_states evenly spaced states; every state projected on it
    let step = n.div_ceil(spec.svd_states.max(1)).max(1);
    let subset: Vec<f64> = (0..n)
        .step_by(step)
        .flat_map(|j| {
            sampled.data[j * m..(j + 1) * m]
                .iter()
                .map(|&x| f64::from(x))
        })
        .collect();
    let svd_states = subset.len() / m;
    let red = reduce(subset, m, epsilon, spec.max_rank, opts.rank);
    let r = red.rank;
    if r == 0 {
        return Err(ReducedError::Invalid(
            "the recorded states do not move: rank 0".into(),
        ));
    }
    let q = project(&red, &sampled.data);
    let svd_s = t0.elapsed().as_secs_f64();
    let inv_dt = (1.0 / sampled.frame_dt) as f32;
    let mut qdot = vec![0f32; q.len()];
    let mut rest = vec![false; n];
    for &j in &sampled.rests {
        if let Some(x) = rest.get_mut(j as usize) {
            *x = true;
        }
    }
    for j in 1..n {
        if rest[j] {
            continue; // no recorded predecessor: the settled state or a tree IRF's lead
        }
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
        .map(|o| {
            let (qe, qde) = state(o.end);
            all.iter()
                .enumerate()
                .filter(|&(k, s)| !short[k] && s.start != o.end)
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
        irf_end: spec.irf_end,
        offset: spec.offset,
        scene_sha256: None,
    };
    let mut stats = PrecomputeStats {
        snapshots: n,
        svd_states,
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
        transfer: None,
    };
    let mut model = ReducedModel::from_reduction(info, &red, q, qdot, orbits);
    if let Some(t) = &opts.transfer {
        let obstacles: Vec<_> = world
            .obstacles
            .iter()
            .map(|o| o.shape)
            .chain(world.potentials.iter().map(|p| p.obstacle().shape))
            .collect();
        let setup = TransferSetup {
            nu: world.grid.nu,
            nv: world.grid.nv,
            spacing: world.grid.h_warp.min(world.grid.h_weft),
            side: seen_side(&model),
            obstacles: &obstacles,
            samples: t.samples,
            seed: t.seed,
        };
        let input = TransferInput {
            data: &sampled.data,
            q: &model.q,
            rank: r,
        };
        let (transfer, tstats) = build_transfer(&setup, &input, t, transfer_progress)?;
        model.transfer = Some(transfer);
        stats.transfer = Some(tstats);
    }
    Ok((model, stats))
}

/// The side of the cloth the camera sees at the mean shape: +1 where the mesh normals
/// (warp × weft) point towards the eye on the whole, else −1 (+1 without a camera).
fn seen_side(model: &ReducedModel) -> f32 {
    let Some(cam) = model.info.camera else {
        return 1.0;
    };
    let x: Vec<[f32; 3]> = model
        .mean
        .chunks_exact(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    let g = model.info.grid();
    let facing: f64 = vertex_normals(g.nu, g.nv, &x)
        .iter()
        .zip(&x)
        .map(|(n, p)| {
            (0..3)
                .map(|k| f64::from(n[k]) * (cam.eye[k] - f64::from(p[k])))
                .sum::<f64>()
        })
        .sum();
    if facing >= 0.0 {
        1.0
    } else {
        -1.0
    }
}
