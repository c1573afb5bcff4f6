//! Flow playback (`offset = "flow"`): each frame, the nearest recorded frame x_j (eq. 9) of
//! the entry's IRFs is stepped by its successor, x′ = x_{j+1} + A_e·(x − x_j), x = (q, q̇)
//! \[m, m/s\] (A_e fitted as for linear offsets; the identity where it cannot be fitted), or
//! the same step from each of the K nearest frames averaged with weights 1/d² (eq. 9's d²;
//! tapered, 1/d² − 1/d²_{K+1}, on request); with hysteresis H, the last match's IRF is followed
//! while its next frame is within H × the nearest distance.

use rayon::prelude::*;

use super::model::ReducedModel;

/// Frames kept in the cache of each frame's nearest frames (§5.2's nearest-IRF table).
const NEAR: usize = 24;

/// Most frames of one entry for which the cache is built (it costs frames² distances).
const MAX_CACHED: usize = 20_000;

/// Largest orbit hysteresis H (`kestrel play --flow-hysteresis`), a ratio of eq. 9 distances.
pub const MAX_FLOW_HYSTERESIS: f64 = 100.0;

/// Most nearest frames a flow step may average (`kestrel play --flow-neighbours`).
pub const MAX_FLOW_NEIGHBOURS: usize = 8;

/// The frames j of entry e's IRFs whose successor j + 1 is in the same IRF (samples of the
/// entry's one-frame flow map x_j → x_{j+1}): `starts[e]` those that are an IRF's start (the
/// frame the impulse acts on), `inner[e]` the others; and for each successor s = j + 1
/// (`covered[e]`, sorted) its [`NEAR`] nearest frames of `inner[e]` (and `starts[e]` when the
/// entry has no velocity kick), in `near[e]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FlowFrames {
    starts: Vec<Vec<u32>>,
    inner: Vec<Vec<u32>>,
    covered: Vec<Vec<u32>>,
    near: Vec<Vec<u32>>,
    /// K: nearest frames whose steps are averaged (0 and 1: the nearest alone).
    neighbours: usize,
    /// Weights of the K nearest tapered to 0 at the (K + 1)-th frame's distance.
    tapered: bool,
    /// H² of the orbit hysteresis (0: off): the successor of the last match is followed
    /// while its distance² is at most H² × the nearest frame's.
    hysteresis2: f32,
}

impl ReducedModel {
    /// The model played by the flow with the steps of the `k` nearest frames averaged
    /// (weights 1/d², d² eq. 9's distance to each; 1: the nearest frame alone, the default);
    /// `k` is clamped to 1 ..= [`MAX_FLOW_NEIGHBOURS`]. Set after `with_offset`, which resets it.
    pub fn with_flow_neighbours(mut self, k: usize) -> Self {
        self.flow.neighbours = k.clamp(1, MAX_FLOW_NEIGHBOURS);
        self
    }

    /// The model played by the flow with the K nearest frames' weights tapered:
    /// w_j = 1/d_j² − 1/d_{K+1}² (d_{K+1} eq. 9's distance to the (K + 1)-th nearest frame), so
    /// that a frame's weight falls to 0 as it leaves the K nearest and the step is continuous
    /// in the played state; false (the default): w_j = 1/d_j². No effect with K = 1. Set after
    /// `with_offset`, which resets it.
    pub fn with_flow_taper(mut self, tapered: bool) -> Self {
        self.flow.tapered = tapered;
        self
    }

    /// Whether [`ReducedModel::with_flow_taper`] is on.
    pub fn flow_tapered(&self) -> bool {
        self.flow.tapered
    }

    /// K of [`ReducedModel::with_flow_neighbours`].
    pub fn flow_neighbours(&self) -> usize {
        self.flow.neighbours.max(1)
    }

    /// The model played by the flow with orbit hysteresis H ≥ 1: after an impulse's first
    /// frame, the successor x_{p+1} of the last match p is stepped (alone, as K = 1) while its
    /// eq. 9 distance is at most H × the nearest frame's, so the player follows one IRF
    /// instead of re-matching every frame; beyond it, the nearest frame(s) as without
    /// hysteresis. H = 1 (the default) or less: off. Set after `with_offset`, which resets it.
    pub fn with_flow_hysteresis(mut self, h: f64) -> Self {
        self.flow.hysteresis2 = if h.is_finite() && h > 1.0 {
            (h * h) as f32
        } else {
            0.0
        };
        self
    }

    /// H of [`ReducedModel::with_flow_hysteresis`] (1: off).
    pub fn flow_hysteresis(&self) -> f64 {
        if self.flow.hysteresis2 > 0.0 {
            f64::from(self.flow.hysteresis2).sqrt()
        } else {
            1.0
        }
    }
}

impl FlowFrames {
    pub(crate) fn of(model: &ReducedModel) -> Self {
        let n = model.info.palette.len();
        let mut f = Self {
            starts: vec![Vec::new(); n],
            inner: vec![Vec::new(); n],
            covered: vec![Vec::new(); n],
            near: vec![Vec::new(); n],
            neighbours: 1,
            tapered: false,
            hysteresis2: 0.0,
        };
        for o in &model.orbits {
            let e = o.entry as usize;
            if e >= n || o.end <= o.start {
                continue;
            }
            f.starts[e].push(o.start);
            f.inner[e].extend(o.start + 1..o.end);
        }
        for e in 0..n {
            let mut covered: Vec<u32> = f.starts[e]
                .iter()
                .chain(&f.inner[e])
                .map(|j| j + 1)
                .collect();
            covered.sort_unstable();
            covered.dedup();
            let candidates: Vec<u32> = f.candidates(model, e, false).copied().collect();
            if candidates.is_empty() || candidates.len() > MAX_CACHED {
                f.covered[e] = covered;
                continue;
            }
            f.near[e] = covered
                .par_iter()
                .flat_map_iter(|&s| {
                    let (q, qd) = (model.q_of(s as usize), model.qdot_of(s as usize));
                    let mut d: Vec<(f32, u32)> = candidates
                        .iter()
                        .map(|&j| (distance(model, q, qd, j as usize, f32::INFINITY), j))
                        .collect();
                    let k = NEAR.min(d.len());
                    d.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0));
                    d.truncate(k);
                    d.sort_by(|a, b| a.0.total_cmp(&b.0));
                    d.resize(NEAR, (f32::INFINITY, u32::MAX));
                    d.into_iter().map(|(_, j)| j)
                })
                .collect();
            f.covered[e] = covered;
        }
        f
    }

    /// The frames a flow frame of entry `e` is matched among: the IRF starts only on the frame
    /// a velocity kick acts on (`kicked`), else the inner frames, and the starts too when the
    /// entry has no kick (its flow is autonomous from the start on).
    fn candidates<'a>(
        &'a self,
        model: &ReducedModel,
        e: usize,
        kicked: bool,
    ) -> impl Iterator<Item = &'a u32> {
        let kick = model
            .info
            .palette
            .get(e)
            .is_some_and(|p| p.impulse != [0.0; 3]);
        let starts = if kicked || !kick {
            &self.starts[e][..]
        } else {
            &[][..]
        };
        let inner = if kicked { &[][..] } else { &self.inner[e][..] };
        starts.iter().chain(inner)
    }

    /// Whether frame j is matched among entry e's frames (it has a successor in its IRF).
    fn has_successor(&self, e: usize, j: usize) -> bool {
        self.covered
            .get(e)
            .is_some_and(|c| c.binary_search(&(j as u32 + 1)).is_ok())
    }

    /// The cached nearest frames of successor `s` under entry `e`, if cached.
    fn near_of(&self, e: usize, s: usize) -> Option<&[u32]> {
        let at = self.covered.get(e)?.binary_search(&(s as u32)).ok()?;
        self.near.get(e)?.get(at * NEAR..(at + 1) * NEAR)
    }
}

/// Eq. 9's distance² from (q, q̇) to frame j, or at least `bound` once its q part reaches it.
#[inline]
fn distance(model: &ReducedModel, q: &[f32], qd: &[f32], j: usize, bound: f32) -> f32 {
    let dq: f32 = q
        .iter()
        .zip(model.q_of(j))
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    if dq >= bound {
        return dq;
    }
    let dqd: f32 = qd
        .iter()
        .zip(model.qdot_of(j))
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    dq + model.info.beta as f32 * dqd
}

/// One frame of flow playback under entry `entry`: (q, q̇) stepped in place; the frame matched
/// (the nearest), or None when the entry has no frames. `kicked`: the frame a velocity kick
/// (α^I ≠ 0) acts on. `previous`: the frame matched one frame earlier under the same entry,
/// whose successor's cached nearest frames are searched (the first frame after an impulse
/// searches them all). `scratch`: 6r values. With K > 1 nearest frames (and the nearest not at
/// distance 0), x′ = Σ w_j·(x_{j+1} + A_e·(x − x_j)) / Σ w_j, w_j = 1/d_j². A_e need not be
/// stable here: it maps one frame's fresh δ, never a δ carried along.
pub(crate) fn flow_frame(
    model: &ReducedModel,
    entry: usize,
    kicked: bool,
    previous: Option<usize>,
    q: &mut [f32],
    qd: &mut [f32],
    scratch: &mut [f32],
) -> Option<usize> {
    let f = &model.flow;
    if entry >= f.starts.len() {
        return None;
    }
    let cached = previous.and_then(|p| f.near_of(entry, p + 1));
    let k = model.flow_neighbours().min(MAX_FLOW_NEIGHBOURS);
    // the k nearest (d², frame), nearest first, and the (k + 1)-th for tapered weights
    let kept = if f.tapered && k > 1 { k + 1 } else { k };
    let mut near = [(f32::INFINITY, usize::MAX); MAX_FLOW_NEIGHBOURS + 1];
    let mut consider = |j: u32| {
        if j != u32::MAX {
            let d = distance(model, q, qd, j as usize, near[kept - 1].0);
            if d < near[kept - 1].0 {
                let mut i = kept - 1;
                while i > 0 && near[i - 1].0 > d {
                    near[i] = near[i - 1];
                    i -= 1;
                }
                near[i] = (d, j as usize);
            }
        }
    };
    match cached.filter(|_| !kicked) {
        Some(cands) => cands.iter().for_each(|&j| consider(j)),
        None => f
            .candidates(model, entry, kicked)
            .for_each(|&j| consider(j)),
    }
    let (d0, mut j) = near[0];
    if j == usize::MAX {
        return None;
    }
    let mut follow = false;
    if let Some(p) = previous.filter(|_| f.hysteresis2 > 0.0 && !kicked) {
        let s = p + 1;
        if s != j
            && f.has_successor(entry, s)
            && distance(model, q, qd, s, f32::INFINITY) <= f.hysteresis2 * d0
        {
            (j, follow) = (s, true);
        }
    }
    let r = model.rank;
    let (delta, rest) = scratch.split_at_mut(2 * r);
    let (step, acc) = rest.split_at_mut(2 * r);
    if follow || k == 1 || d0 == 0.0 || near[1].1 == usize::MAX {
        step_from(model, entry, j, q, qd, delta, step);
        q.copy_from_slice(&step[..r]);
        qd.copy_from_slice(&step[r..2 * r]);
        return Some(j);
    }
    acc[..2 * r].fill(0.0);
    let mut weights = 0.0f32;
    // tapered: w_j = 1/d_j² − 1/d_{K+1}², which falls to 0 as frame j leaves the K nearest,
    // so the step does not jump when the set of neighbours changes (1/d² when all tie)
    let taper = if kept > k && near[k].1 != usize::MAX && near[k].0 > near[0].0 {
        1.0 / near[k].0
    } else {
        0.0
    };
    for &(d, jn) in near[..k].iter().filter(|n| n.1 != usize::MAX) {
        let w = 1.0 / d - taper;
        step_from(model, entry, jn, q, qd, delta, step);
        for (a, s) in acc.iter_mut().zip(step.iter()) {
            *a += w * s;
        }
        weights += w;
    }
    for (x, a) in q.iter_mut().chain(qd.iter_mut()).zip(acc.iter()) {
        *x = a / weights;
    }
    Some(j)
}

/// x_{j+1} + A_e·(x − x_j) into `out` (q then q̇, 2r values); `delta`: 2r values of scratch.
fn step_from(
    model: &ReducedModel,
    entry: usize,
    j: usize,
    q: &[f32],
    qd: &[f32],
    delta: &mut [f32],
    out: &mut [f32],
) {
    let r = model.rank;
    let (dq, dqd) = delta[..2 * r].split_at_mut(r);
    for k in 0..r {
        dq[k] = q[k] - model.q_of(j)[k];
        dqd[k] = qd[k] - model.qdot_of(j)[k];
    }
    let (q1, qd1) = (model.q_of(j + 1), model.qdot_of(j + 1));
    let (oq, oqd) = out[..2 * r].split_at_mut(r);
    match model.offset_dynamics.get(entry).and_then(Option::as_ref) {
        Some(a) => {
            let (q_rows, qd_rows) = a.split_at(r * 2 * r);
            for (k, row) in q_rows.chunks_exact(2 * r).enumerate() {
                oq[k] = q1[k] + row_times(row, dq, dqd);
            }
            for (k, row) in qd_rows.chunks_exact(2 * r).enumerate() {
                oqd[k] = qd1[k] + row_times(row, dq, dqd);
            }
        }
        None => {
            for k in 0..r {
                oq[k] = q1[k] + dq[k];
                oqd[k] = qd1[k] + dqd[k];
            }
        }
    }
}

/// A row of A (2r values) times δ = (δq, δq̇).
#[inline]
pub(crate) fn row_times(row: &[f32], dq: &[f32], dqd: &[f32]) -> f32 {
    let (aq, aqd) = row.split_at(dq.len());
    aq.iter().zip(dq).map(|(a, d)| a * d).sum::<f32>()
        + aqd.iter().zip(dqd).map(|(a, d)| a * d).sum::<f32>()
}
