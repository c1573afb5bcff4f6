//! Playback (§5): on an impulse, jump to the nearest IRF start of that entry under eq. 9 and
//! blend the offset away, q(t) = q_IRF(t) + (q′ − q_IRF(0))·e^(−λt) (eq. 12); shape mean + U·q.

use nalgebra::{Rotation3, Unit};
use thiserror::Error;

use crate::cloth::Vec3;
use crate::scene::{palette_allows, palette_index, IrfEnd, OffsetBlend, PaletteEntrySpec};

use super::flow::{flow_frame, row_times};
use super::model::ReducedModel;
use super::precompute::dist2;
use super::ReducedError;

/// Parses `name:seconds,name:seconds,…` (a name or a key; seconds default 1) against a palette.
pub fn parse_sequence(
    palette: &[PaletteEntrySpec],
    text: &str,
) -> Result<Vec<(usize, f64)>, ReducedError> {
    let err = |message: String| ReducedError::Sequence {
        text: text.to_string(),
        message,
    };
    let mut out = Vec::new();
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if let Some(k) = items.iter().position(|s| s.is_empty()) {
        if !text.trim().is_empty() {
            return Err(err(format!(
                "item {} is empty (two commas in a row, or one at an end): give \
                 name:seconds between commas",
                k + 1
            )));
        }
    }
    for item in items.into_iter().filter(|s| !s.is_empty()) {
        let (name, given, secs) = match item.split_once(':') {
            Some((n, s)) => (
                n.trim(),
                s.trim(),
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| err(format!("`{s}` is not a duration in s")))?,
            ),
            None => (item, "1", 1.0),
        };
        // `1e400` parses as inf: said as the number given, not as "inf"
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(err(format!(
                "duration `{given}` s is out of range: a duration is a finite number of s, >= 0"
            )));
        }
        let k = palette_index(palette, name).ok_or_else(|| {
            let names: Vec<&str> = palette.iter().map(|e| e.name.as_str()).collect();
            err(format!(
                "`{name}` is not in the palette ({})",
                names.join(", ")
            ))
        })?;
        out.push((k, secs));
    }
    if out.is_empty() {
        return Err(err("no impulses".into()));
    }
    Ok(out)
}

/// Most frames one playback plays: 10⁶ (7 hours at 40 frames/s).
pub const MAX_PLAY_FRAMES: usize = 1_000_000;

/// Frames of one impulse lasting `seconds` at `frame_dt` \[s\] (rounded).
pub fn frames_of(seconds: f64, frame_dt: f64) -> usize {
    (seconds / frame_dt).round() as usize
}

/// Frames a whole sequence plays at `frame_dt` \[s\]; none, or more than
/// [`MAX_PLAY_FRAMES`], is an error naming the bound.
pub fn sequence_frames(sequence: &[(usize, f64)], frame_dt: f64) -> Result<usize, ReducedError> {
    let seconds: f64 = sequence.iter().map(|&(_, d)| d).sum();
    if sequence.iter().all(|&(_, d)| frames_of(d, frame_dt) == 0) {
        return Err(ReducedError::Invalid(format!(
            "impulse sequence of {} s plays no frame: each duration rounds to 0 frames of \
             {frame_dt} s",
            crate::friction::short_number(seconds)
        )));
    }
    let frames = sequence
        .iter()
        .try_fold(0usize, |n, &(_, d)| n.checked_add(frames_of(d, frame_dt)))
        .filter(|&n| n <= MAX_PLAY_FRAMES);
    frames.ok_or_else(|| {
        ReducedError::Invalid(format!(
            "impulse sequence of {seconds:.4e} s: more than {MAX_PLAY_FRAMES} frames of {frame_dt} s (at most {} s)",
            MAX_PLAY_FRAMES as f64 * frame_dt
        ))
    })
}

/// Plays a reduced model: the current reduced state, the IRF being followed, the blend offset
/// and the door angle. Scratch only; no allocation per frame.
#[derive(Debug, Clone)]
pub struct Player<'m> {
    model: &'m ReducedModel,
    entry: usize,
    /// State being shown and the end of its orbit.
    state: usize,
    end: usize,
    playing: bool,
    q_off: Vec<f32>,
    qd_off: Vec<f32>,
    /// Scratch of A_e·δ (2r values) and of a flow frame (6r values).
    next_off: Vec<f32>,
    /// Frames since the last jump.
    since: u32,
    q: Vec<f32>,
    qd: Vec<f32>,
    /// Door angle relative to the start [rad].
    angle: f64,
    door: Option<(Vec3, Unit<Vec3>, f64)>,
    /// Impulses refused (transition not allowed, door at its limit, no IRF of that entry).
    pub ignored: usize,
    /// Jumps made (impulses and continuations at an orbit's end).
    pub jumps: usize,
}

impl<'m> Player<'m> {
    /// At rest in the settled state under the start entry.
    pub fn new(model: &'m ReducedModel) -> Self {
        let r = model.rank;
        let door = model.info.door.map(|d| {
            (
                Vec3::from(d.hinge),
                Unit::new_normalize(Vec3::from(d.axis)),
                (d.range_deg[1] - d.range_deg[0]).to_radians(),
            )
        });
        Self {
            model,
            entry: model.info.start as usize,
            state: 0,
            end: 0,
            playing: false,
            q_off: vec![0.0; r],
            qd_off: vec![0.0; r],
            next_off: vec![0.0; 6 * r],
            since: 0,
            q: model.q_of(0).to_vec(),
            qd: vec![0.0; r],
            angle: 0.0,
            door,
            ignored: 0,
            jumps: 0,
        }
    }

    pub fn entry(&self) -> usize {
        self.entry
    }

    /// Door angle relative to the start \[rad\].
    pub fn angle(&self) -> f64 {
        self.angle
    }

    fn allowed(&self, k: usize) -> bool {
        palette_allows(&self.model.info.palette, self.entry, k)
    }

    fn at_limit(&self, omega: f64) -> bool {
        match self.door {
            Some((_, _, hi)) => {
                (omega > 0.0 && self.angle >= hi) || (omega < 0.0 && self.angle <= 0.0)
            }
            None => false,
        }
    }

    /// Applies palette entry `k`; false (and counted in `ignored`) when refused.
    pub fn impulse(&mut self, k: usize) -> bool {
        self.try_impulse(k).is_ok()
    }

    /// Applies palette entry `k`, or says why it was refused (and counts it in `ignored`).
    pub fn try_impulse(&mut self, k: usize) -> Result<(), Refusal> {
        let palette = &self.model.info.palette;
        if k < palette.len() && k == self.entry && palette[k].impulse == [0.0; 3] {
            return Ok(()); // already under this forcing
        }
        let refusal = if k >= palette.len() {
            Some(Refusal::NotInPalette(k))
        } else if !self.allowed(k) {
            Some(Refusal::NotAllowed {
                from: palette[self.entry].name.clone(),
                to: palette[k].name.clone(),
            })
        } else if self.at_limit(palette[k].angular_velocity) {
            Some(Refusal::DoorAtLimit)
        } else {
            None
        };
        match refusal {
            Some(r) => {
                self.ignored += 1;
                Err(r)
            }
            None => self.jump_to_start(k),
        }
    }

    /// Jumps to the nearest start of an IRF of entry k (eq. 9).
    fn jump_to_start(&mut self, k: usize) -> Result<(), Refusal> {
        let m = self.model;
        let beta = m.info.beta as f32;
        let best = m
            .orbits
            .iter()
            .filter(|o| o.entry as usize == k && !o.is_empty())
            .map(|o| {
                let s = o.start as usize;
                (dist2(&self.q, &self.qd, m.q_of(s), m.qdot_of(s), beta), o)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let Some((_, o)) = best else {
            self.ignored += 1;
            return Err(Refusal::NoResponse);
        };
        self.entry = k;
        self.jump(o.start as usize, o.end as usize);
        Ok(())
    }

    fn jump(&mut self, state: usize, end: usize) {
        let m = self.model;
        for (o, (a, b)) in self.q_off.iter_mut().zip(self.q.iter().zip(m.q_of(state))) {
            *o = a - b;
        }
        for (o, (a, b)) in self
            .qd_off
            .iter_mut()
            .zip(self.qd.iter().zip(m.qdot_of(state)))
        {
            *o = a - b;
        }
        self.state = state;
        self.end = end;
        self.since = 0;
        self.playing = true;
        self.jumps += 1;
    }

    /// At an orbit's end, carries on under the same entry from the nearest state inside
    /// another IRF of that entry; false when there is none.
    fn continue_entry(&mut self) -> bool {
        let m = self.model;
        let beta = m.info.beta as f32;
        let mut best: Option<(f32, usize, usize)> = None;
        for o in m.orbits.iter().filter(|o| o.entry as usize == self.entry) {
            for j in o.start as usize + 1..o.end as usize {
                let d = dist2(&self.q, &self.qd, m.q_of(j), m.qdot_of(j), beta);
                if best.is_none_or(|b| d < b.0) {
                    best = Some((d, j, o.end as usize));
                }
            }
        }
        match best {
            Some((_, j, end)) => {
                self.jump(j, end);
                true
            }
            None => false,
        }
    }

    /// Advances one recorded frame (frame_dt seconds).
    pub fn advance(&mut self) {
        let m = self.model;
        if self.playing && m.info.offset == OffsetBlend::Flow {
            // the frame a velocity kick acts on is matched among the IRF starts only; after
            // the first frame, among the cached nearest frames of the last match's successor
            let kicked = self.since == 0 && m.info.palette[self.entry].impulse != [0.0; 3];
            let previous = (self.since > 0).then_some(self.state);
            self.since += 1;
            let (q, qd, scratch) = (&mut self.q, &mut self.qd, &mut self.next_off);
            match flow_frame(m, self.entry, kicked, previous, q, qd, scratch) {
                Some(j) => self.state = j,
                None => {
                    self.playing = false;
                    self.qd.fill(0.0);
                }
            }
        } else if self.playing {
            let rest = m.info.irf_end == IrfEnd::Rest;
            if self.state >= self.end && (rest || !self.continue_entry()) {
                self.playing = false;
                self.qd.fill(0.0);
            }
            if self.playing {
                self.state += 1;
                self.since += 1;
                let (q, qd) = (m.q_of(self.state), m.qdot_of(self.state));
                match m.offset_dynamics.get(self.entry).and_then(Option::as_ref) {
                    Some(a) => {
                        // δ ← A_e·δ, then the IRF's state plus δ
                        let r = m.rank;
                        for (row, out) in a.chunks_exact(2 * r).zip(self.next_off.iter_mut()) {
                            *out = row_times(row, &self.q_off, &self.qd_off);
                        }
                        let (nq, nqd) = self.next_off[..2 * r].split_at(r);
                        self.q_off.copy_from_slice(nq);
                        self.qd_off.copy_from_slice(nqd);
                        for k in 0..r {
                            self.q[k] = q[k] + self.q_off[k];
                            self.qd[k] = qd[k] + self.qd_off[k];
                        }
                    }
                    None => {
                        let decay = (-(m.info.blend_rate * m.info.frame_dt) * self.since as f64)
                            .exp() as f32;
                        for k in 0..m.rank {
                            self.q[k] = q[k] + self.q_off[k] * decay;
                            self.qd[k] = qd[k] + self.qd_off[k] * decay;
                        }
                    }
                }
            }
        }
        if let Some((_, _, hi)) = self.door {
            let omega = m.info.palette[self.entry].angular_velocity;
            let next = self.angle + omega * m.info.frame_dt;
            // max/min rather than clamp: no panic even on a range a caller left reversed
            self.angle = next.max(0.0).min(hi);
            if self.angle != next && omega != 0.0 {
                if let Some(s) = m.info.stop {
                    // A stop without responses is counted in `ignored` like any refusal.
                    let _ = self.jump_to_start(s as usize);
                }
            }
        }
    }

    /// Reduced coordinates q of the frame shown \[m\].
    pub fn q(&self) -> &[f32] {
        &self.q
    }

    /// Reduced velocities q̇ of the frame shown \[m/s\].
    pub fn qdot(&self) -> &[f32] {
        &self.qd
    }

    /// The recorded frame being followed (the flow's last match, or the IRF's frame under
    /// the other rules); None at rest.
    pub fn followed(&self) -> Option<usize> {
        self.playing.then_some(self.state)
    }

    /// The shape in the model's frame (door frame), mean + U·q, into `out` (3v values) \[m\].
    #[inline]
    pub fn shape(&self, out: &mut [f32]) {
        self.model.reconstruct(&self.q, out);
    }

    /// Turns a door-frame shape into world positions by the door angle.
    pub fn to_world(&self, local: &[f32], out: &mut [[f32; 3]]) {
        match self.door {
            Some((h, axis, _)) => {
                let r = Rotation3::from_axis_angle(&axis, self.angle).cast::<f32>();
                let h = h.cast::<f32>();
                for (o, p) in out.iter_mut().zip(local.chunks_exact(3)) {
                    let x = h + r * (nalgebra::Vector3::new(p[0], p[1], p[2]) - h);
                    *o = [x.x, x.y, x.z];
                }
            }
            None => {
                for (o, p) in out.iter_mut().zip(local.chunks_exact(3)) {
                    *o = [p[0], p[1], p[2]];
                }
            }
        }
    }
}

/// Why a player refused an impulse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Refusal {
    #[error("palette entry {0} does not exist")]
    NotInPalette(usize),
    #[error("the palette does not allow {from} → {to}")]
    NotAllowed { from: String, to: String },
    #[error("the door is at the end of its range")]
    DoorAtLimit,
    #[error("the model holds no impulse response of this entry")]
    NoResponse,
}
