//! A playback against the full simulation of the same impulse sequence: relative l₂ errors
//! √Σ‖x_play − x_full‖² / √Σ‖x_full − mean‖² [m/m], the basis' share, and how far the full
//! simulation's reduced states lie from the IRF library (eq. 9).

use std::time::Instant;

use serde::Serialize;

use crate::scene::{DynamicScene, OffsetBlend};

use super::drive::Driver;
use super::flow::flow_frame;
use super::model::ReducedModel;
use super::play::{frames_of, sequence_frames, Player};
use super::precompute::{dist2, settle_steps};
use super::ReducedError;

/// Relative l2 error from which a playback is reported as not following the full simulation
/// (1 is the error of showing the mean shape at every frame).
pub const PLAYBACK_ERROR_WARNING: f64 = 0.5;

/// A reduced playback against the full simulation of the same impulse sequence.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub frames: usize,
    /// √Σ‖x_play − x_full‖² / √Σ‖x_full − mean‖² over all frames.
    pub playback_error: f64,
    /// The same for the projection of the full simulation on the basis (the basis' own error).
    pub projection_error: f64,
    /// How far the full simulation's reduced states c = Uᵀ(x_full − mean), ċ (eq. 8) lie from
    /// the IRF library: √Σ d_j² / √Σ‖x_full − mean‖², d_j eq. 9's distance \[m\] of frame j's
    /// (c, ċ) to the nearest recorded frame of the IRFs of the entry in force (stop from where
    /// the door reached the end of its range, as in the full simulation) (the sampling's
    /// coverage of this sequence; ≈ 0 on a recorded IRF, f32 rounding). Frames of an entry
    /// the model holds no IRF of have no nearest frame: they are counted in
    /// `library_uncovered_frames`, not here.
    pub library_distance: f64,
    /// Frames whose entry in force has no IRF in the model (not covered at all).
    pub library_uncovered_frames: usize,
    /// Wall time of the full simulation \[s\].
    pub full_s: f64,
    /// The same errors over each impulse of the sequence (its own frames, its own norm).
    pub segments: Vec<SegmentError>,
    /// Each basis mode's share of `playback_error`: √Σ(q_k − c_k)² / √Σ‖x_full − mean‖², c the
    /// full simulation's coordinates; with `projection_error`, the squares sum to the square of
    /// `playback_error` (U orthonormal).
    pub mode_errors: Vec<f64>,
    /// Said when `playback_error` ≥ [`PLAYBACK_ERROR_WARNING`]: the playback does not follow
    /// the full simulation, and whether the basis or the impulse responses are to blame.
    pub warning: Option<String>,
    /// Every frame's errors and coordinates, when asked for ([`compare_frames`]); not in the
    /// JSON summary (`kestrel play --frame-errors` writes them as CSV).
    #[serde(skip)]
    pub frame_errors: Vec<FrameError>,
}

/// One frame of a comparison: squared errors \[m²\] (divide a sum of them by the sum of
/// `norm_m2` for a relative l2 error) and the reduced coordinates of both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameError {
    /// Time of the frame since the sequence's start \[s\].
    pub t_s: f64,
    /// Palette entry in force in the full simulation.
    pub entry: usize,
    /// 0-based impulse of the sequence the frame belongs to.
    pub segment: usize,
    /// Σ‖x_play − x_full‖² over the vertices \[m²\].
    pub error_m2: f64,
    /// Σ‖x_full − mean‖² \[m²\].
    pub norm_m2: f64,
    /// Σ‖U·c − (x_full − mean)‖², the basis' own error \[m²\].
    pub projection_m2: f64,
    /// Eq. 9's distance² of (c, ċ) to the library \[m²\] (None: no IRF of the entry).
    pub library_m2: Option<f64>,
    /// Eq. 9's distance² of the played (q, q̇) to the library \[m²\] (as `library_m2`).
    pub played_library_m2: Option<f64>,
    /// With the flow rule, its one-frame error on the full simulation itself: ‖q′ − c‖² \[m²\],
    /// q′ the flow's step from the previous frame's (c, ċ) under the entry in force (no
    /// previous match: all the entry's frames searched); None on the first frame or with
    /// another rule.
    pub flow_step_m2: Option<f64>,
    /// The recorded frame the player follows (None: at rest).
    pub followed: Option<usize>,
    /// The IRF that frame belongs to (its index among the model's IRFs).
    pub followed_irf: Option<usize>,
    /// Played reduced coordinates q and velocities q̇ \[m, m/s\].
    pub q: Vec<f32>,
    pub qdot: Vec<f32>,
    /// The full simulation's c = Uᵀ(x_full − mean) and ċ (eq. 8) \[m, m/s\].
    pub c: Vec<f32>,
    pub cdot: Vec<f32>,
}

/// A comparison's errors over one impulse of the sequence.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentError {
    /// Palette entry's name.
    pub entry: String,
    /// Start of the impulse in the sequence \[s\].
    pub at_s: f64,
    pub frames: usize,
    /// √Σ‖x_play − x_full‖² / √Σ‖x_full − mean‖² over this impulse's frames.
    pub playback_error: f64,
    /// The same for the projection of the full simulation on the basis.
    pub projection_error: f64,
    /// [`Comparison::library_distance`] over this impulse's frames.
    pub library_distance: f64,
    /// [`Comparison::library_uncovered_frames`] of this impulse.
    pub library_uncovered_frames: usize,
}

/// Sums of squares of a comparison: playback error, norm, projection error, distance to the
/// library.
#[derive(Debug, Clone, Copy, Default)]
struct Squares {
    num: f64,
    den: f64,
    proj: f64,
    library: f64,
    /// Frames with no recorded frame of their entry to measure `library` to.
    uncovered: usize,
}

impl Squares {
    fn add(&mut self, o: Squares) {
        self.num += o.num;
        self.den += o.den;
        self.proj += o.proj;
        self.library += o.library;
        self.uncovered += o.uncovered;
    }

    /// √(squares / den): a sum of squares relative to the norm; 0 where the norm is 0.
    fn relative_of(&self, squares: f64) -> f64 {
        if self.den > 0.0 {
            (squares / self.den).sqrt()
        } else {
            0.0
        }
    }

    /// (playback, projection) relative errors.
    fn relative(&self) -> (f64, f64) {
        (self.relative_of(self.num), self.relative_of(self.proj))
    }
}

impl Comparison {
    fn new(
        frames: usize,
        (playback_error, projection_error): (f64, f64),
        full_s: f64,
        refused: usize,
    ) -> Self {
        let warning = (playback_error >= PLAYBACK_ERROR_WARNING).then(|| {
            let cause = if projection_error >= PLAYBACK_ERROR_WARNING {
                "the basis itself cannot hold these shapes (precompute with a higher rank \
                 or a smaller epsilon)"
                    .to_string()
            } else if refused > 0 {
                format!(
                    "{refused} impulses were refused by the playback but applied in the full \
                     simulation"
                )
            } else {
                "the basis holds these shapes but the impulse responses do not cover this \
                 sequence (precompute for a longer duration)"
                    .to_string()
            };
            format!(
                "the playback does not follow the full simulation: relative error \
                 {playback_error:.2} (1 is no better than the mean shape); {cause}"
            )
        });
        Self {
            frames,
            playback_error,
            projection_error,
            library_distance: 0.0,
            library_uncovered_frames: 0,
            full_s,
            segments: Vec::new(),
            mode_errors: Vec::new(),
            warning,
            frame_errors: Vec::new(),
        }
    }
}

/// Runs `sequence` (entries with durations \[s\]) through the full simulation of `scene` and
/// through `model`, from the same settled state, and compares the shapes frame by frame.
pub fn compare(
    scene: &DynamicScene,
    model: &ReducedModel,
    sequence: &[(usize, f64)],
    progress: &mut dyn FnMut(f64),
) -> Result<Comparison, ReducedError> {
    compare_frames(scene, model, sequence, false, progress)
}

/// [`compare`], and with `record` every frame's errors and coordinates in
/// [`Comparison::frame_errors`] (2r + 2r values and a few numbers a frame).
pub fn compare_frames(
    scene: &DynamicScene,
    model: &ReducedModel,
    sequence: &[(usize, f64)],
    record: bool,
    progress: &mut dyn FnMut(f64),
) -> Result<Comparison, ReducedError> {
    let spec = scene.reduced.as_ref().ok_or(ReducedError::NoPalette)?;
    let every = spec.every as u64;
    let frame_dt = scene.params.dt * every as f64;
    let m = 3 * scene.world.len();
    if (frame_dt - model.info.frame_dt).abs() > 1e-12 * frame_dt || m != model.mean.len() {
        return Err(ReducedError::Invalid(format!(
            "the model ({} vertices, frame {} s) was not made from this scene ({} vertices, frame {} s)",
            model.vertices,
            model.info.frame_dt,
            m / 3,
            frame_dt
        )));
    }
    for w in sequence.windows(2) {
        if !spec.allows(w[0].0, w[1].0) {
            return Err(ReducedError::Invalid(format!(
                "transition {} → {} is not allowed by the palette",
                spec.palette[w[0].0].name, spec.palette[w[1].0].name
            )));
        }
    }
    let mut driver = Driver::new(scene)?;
    for _ in 0..settle_steps(scene, spec) {
        driver.step()?;
    }
    let mut player = Player::new(model);
    let total = sequence_frames(sequence, frame_dt)?;
    let (mut full, mut play) = (vec![0.0f64; m], vec![0.0f32; m]);
    let mut total_sq = Squares::default();
    let mut modes = vec![0.0f64; model.rank];
    let mut segments = Vec::with_capacity(sequence.len());
    let mut c = vec![0.0f64; model.rank];
    driver.local_positions(&mut full);
    project(model, &full, &mut c);
    let inv_dt = 1.0 / frame_dt;
    let (mut cq, mut cqdot) = (vec![0f32; model.rank], vec![0f32; model.rank]);
    let mut before = c.clone();
    let mut frames = 0usize;
    let mut full_s = 0.0;
    let mut at_s = 0.0;
    let mut frame_errors = Vec::new();
    // the flow's one-frame step from the full simulation's previous (c, ċ), when recorded
    let probe_flow = record && model.info.offset == OffsetBlend::Flow;
    let (mut pq, mut pqd) = (vec![0f32; model.rank], vec![0f32; model.rank]);
    let mut probe_scratch = vec![0f32; 6 * model.rank];
    for (segment, &(k, d)) in sequence.iter().enumerate() {
        driver.set_entry(k);
        player.impulse(k);
        let mut seg = Squares::default();
        let seg_frames = frames_of(d, frame_dt);
        for frame_in_seg in 0..seg_frames {
            let t = Instant::now();
            for _ in 0..every {
                driver.step()?;
            }
            full_s += t.elapsed().as_secs_f64();
            driver.local_positions(&mut full);
            player.advance();
            player.shape(&mut play);
            before.copy_from_slice(&c);
            // (cq, cq̇) still hold the previous frame's full state
            let mut stepped = false;
            if probe_flow && frames > 0 {
                pq.copy_from_slice(&cq);
                pqd.copy_from_slice(&cqdot);
                let kicked = frame_in_seg == 0 && spec.palette[k].impulse != [0.0; 3];
                let (e, sc) = (driver.entry(), &mut probe_scratch);
                stepped = flow_frame(model, e, kicked, None, &mut pq, &mut pqd, sc).is_some();
            }
            project(model, &full, &mut c);
            for (i, (&now, &was)) in c.iter().zip(&before).enumerate() {
                cq[i] = now as f32;
                cqdot[i] = ((now - was) * inv_dt) as f32;
            }
            let flow_step_m2 = stepped.then(|| {
                pq.iter()
                    .zip(&cq)
                    .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
                    .sum::<f64>()
            });
            let library = library_distance2(model, driver.entry(), &cq, &cqdot);
            match library {
                Some(d2) => seg.library += d2,
                None => seg.uncovered += 1,
            }
            // this frame's own sums (the segment's are summed as before, value by value)
            let mut own = Squares::default();
            for ((sq, &qk), &ck) in modes.iter_mut().zip(player.q()).zip(&c) {
                *sq += (f64::from(qk) - ck).powi(2);
            }
            for i in 0..m {
                let d = full[i] - model.mean[i] as f64;
                seg.den += d * d;
                own.den += d * d;
                let e = play[i] as f64 - full[i];
                seg.num += e * e;
                own.num += e * e;
                let p: f64 = (0..model.rank)
                    .map(|col| model.basis[col * m + i] as f64 * c[col])
                    .sum();
                seg.proj += (p - d) * (p - d);
                own.proj += (p - d) * (p - d);
            }
            if record {
                let followed = player.followed();
                frame_errors.push(FrameError {
                    t_s: (frames + 1) as f64 * frame_dt,
                    entry: driver.entry(),
                    segment,
                    error_m2: own.num,
                    norm_m2: own.den,
                    projection_m2: own.proj,
                    library_m2: library,
                    played_library_m2: library_distance2(
                        model,
                        driver.entry(),
                        player.q(),
                        player.qdot(),
                    ),
                    flow_step_m2,
                    followed,
                    followed_irf: followed.and_then(|j| irf_of(model, j)),
                    q: player.q().to_vec(),
                    qdot: player.qdot().to_vec(),
                    c: cq.clone(),
                    cdot: cqdot.clone(),
                });
            }
            frames += 1;
            progress(frames as f64 / total.max(1) as f64);
        }
        total_sq.add(seg);
        let (playback_error, projection_error) = seg.relative();
        segments.push(SegmentError {
            entry: spec.palette[k].name.clone(),
            at_s,
            frames: seg_frames,
            playback_error,
            projection_error,
            library_distance: seg.relative_of(seg.library),
            library_uncovered_frames: seg.uncovered,
        });
        at_s += d;
    }
    let mut out = Comparison::new(frames, total_sq.relative(), full_s, player.ignored);
    out.library_distance = total_sq.relative_of(total_sq.library);
    out.library_uncovered_frames = total_sq.uncovered;
    out.segments = segments;
    out.frame_errors = frame_errors;
    out.mode_errors = modes.iter().map(|&sq| total_sq.relative_of(sq)).collect();
    Ok(out)
}

/// The IRF (index in the model's IRFs) that steps on from state j (start ≤ j < end; a state
/// that ends one IRF and starts the next belongs to the next), else the one it ends, if any.
fn irf_of(model: &ReducedModel, j: usize) -> Option<usize> {
    let holds = |o: &super::Orbit, last: bool| {
        let (start, end) = (o.start as usize, o.end as usize);
        start <= j && (j < end || (last && j == end))
    };
    let orbits = &model.orbits;
    orbits
        .iter()
        .position(|o| holds(o, false))
        .or_else(|| orbits.iter().position(|o| holds(o, true)))
}

/// c = Uᵀ(x − mean) of local positions `x` \[m\].
fn project(model: &ReducedModel, x: &[f64], c: &mut [f64]) {
    let m = x.len();
    for (col, ck) in c.iter_mut().enumerate() {
        let u = &model.basis[col * m..(col + 1) * m];
        *ck = u
            .iter()
            .zip(x)
            .zip(&model.mean)
            .map(|((&u, &x), &mu)| u as f64 * (x - mu as f64))
            .sum();
    }
}

/// Eq. 9's squared distance \[m²\] of (q, q̇) to the nearest recorded frame of the IRFs of
/// entry `entry`; `None` where the model holds none (no frame to be near).
fn library_distance2(model: &ReducedModel, entry: usize, q: &[f32], qdot: &[f32]) -> Option<f64> {
    let beta = model.info.beta as f32;
    let nearest = model
        .orbits
        .iter()
        .filter(|o| o.entry as usize == entry)
        .flat_map(|o| o.start as usize..=o.end as usize)
        .map(|j| dist2(q, qdot, model.q_of(j), model.qdot_of(j), beta))
        .fold(f32::INFINITY, f32::min);
    nearest.is_finite().then(|| f64::from(nearest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_playback_error_near_one_is_said_with_its_cause() {
        assert_eq!(Comparison::new(10, (0.3, 0.1), 0.0, 0).warning, None);
        let basis = Comparison::new(10, (0.96, 0.9), 0.0, 0).warning.unwrap();
        assert!(
            basis.contains("0.96") && basis.contains("basis itself"),
            "{basis}"
        );
        let refused = Comparison::new(10, (0.96, 0.1), 0.0, 2).warning.unwrap();
        assert!(refused.contains("2 impulses were refused"), "{refused}");
        let library = Comparison::new(10, (0.6, 0.1), 0.0, 0).warning.unwrap();
        assert!(library.contains("impulse responses"), "{library}");
    }
}
