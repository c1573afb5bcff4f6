//! `[reduced]`: the impulse palette of a reduced model (James & Fatahalian 2003), its door and
//! how to sample it; times in s, angles in degrees in the file.

use nalgebra::Vector3;
use serde::Deserialize;
use thiserror::Error;

/// What is wrong with a `[reduced]` section.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ReducedSpecError {
    #[error("reduced.palette: needs at least one entry")]
    EmptyPalette,
    #[error("reduced.palette `{entry}`: key `{key}` used by two entries")]
    Twice { entry: String, key: char },
    #[error(
        "reduced.palette: the name `{name}` is given to entries {first} and {second}; each \
         entry needs a name of its own"
    )]
    NameTwice {
        name: String,
        first: usize,
        second: usize,
    },
    #[error("reduced.palette `{entry}`: next names `{next}`, not an entry")]
    UnknownNext { entry: String, next: String },
    #[error("reduced.palette `{entry}`: wind needs [loads.wind] for its coefficient")]
    WindWithoutLoads { entry: String },
    #[error("reduced.palette `{entry}`: angular_velocity needs [reduced.door]")]
    TurnWithoutDoor { entry: String },
    #[error("reduced.palette `{entry}`: values must be finite")]
    NotFinite { entry: String },
    #[error("reduced.start `{start}`: not a palette entry")]
    UnknownStart { start: String },
    #[error(
        "reduced.door: range_deg must be [lo, hi] with -180 <= lo < hi <= 180 deg (a door \
         turns less than a full turn either way from where it starts)"
    )]
    DoorRange,
    #[error("reduced.door: hinge must be a finite point")]
    DoorHinge,
    #[error("reduced.door: axis must be a finite, non-zero vector")]
    DoorAxis,
    #[error("reduced: need 0 < t_min <= t_max and duration > 0 [s]")]
    Times,
    #[error("reduced: settle must be >= 0 s and every >= 1")]
    Sampling,
    #[error("reduced: rank_tolerance must be in (0, 1), max_rank >= 1")]
    Rank,
    #[error("reduced: blend_rate, dead_end_factor > 0, prune_short >= 0")]
    Blending,
    #[error("reduced: chains >= 1, svd_states >= 2, branch_every values > 0 s (sampling = \"tree\" needs at least one), switch_branches 0 to {MAX_SWITCH_BRANCHES}")]
    Tree,
}

/// How IRFs are sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sampling {
    /// Random palette sequences only (`chains` of them).
    #[default]
    Random,
    /// The random chains, then a tree of IRFs of t_max from the settled state branching at
    /// every `branch_every` (docs/reduced.md).
    Tree,
}

/// Most `switch_branches` per chain IRF.
pub const MAX_SWITCH_BRANCHES: u32 = 8;

/// Law of a random chain's IRF durations T in [t_min, t_max].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DurationLaw {
    /// T = t_min + (t_max − t_min)·u: density 1/(t_max − t_min).
    #[default]
    Uniform,
    /// T = t_min·(t_max/t_min)^u: density 1/(T·ln(t_max/t_min)), the same share of IRFs in
    /// every octave of duration, so short switches are sampled as often as long swings.
    LogUniform,
}

impl DurationLaw {
    /// The duration \[s\] of quantile `u` ∈ [0, 1) in [t_min, t_max] \[s\].
    pub fn duration(self, t_min: f64, t_max: f64, u: f64) -> f64 {
        match self {
            DurationLaw::Uniform => t_min + (t_max - t_min) * u,
            DurationLaw::LogUniform => t_min * (t_max / t_min).powf(u),
        }
    }
}

/// How playback removes the offset between the played state and the IRF it jumped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OffsetBlend {
    /// e^(−λt) (eq. 12).
    #[default]
    Exponential,
    /// δ_{k+1} = A_e·δ_k, A_e fitted per entry to the IRFs' frames (e^(−λt) where unstable).
    Linear,
    /// No offset kept: every frame steps the nearest recorded frame of the entry's IRFs,
    /// x′ = x_{j+1} + A_e·(x − x_j) (docs/reduced.md).
    Flow,
}

/// What playback does at the end of an IRF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IrfEnd {
    /// Carry on from the nearest state inside another IRF of the same entry.
    #[default]
    Continue,
    /// Hold the IRF's last state (the paper: IRFs long enough to come to rest).
    Rest,
}

/// `[reduced.door]`: the pinned particles ride on a door turning about a hinge axis.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct DoorSpec {
    /// A point on the hinge axis \[m\].
    pub hinge: [f64; 3],
    /// Direction of the hinge axis (positive angles turn right-handed about it). Default +Y.
    #[serde(default = "y_axis")]
    pub axis: [f64; 3],
    /// Range of the door angle \[deg\], starting at the lower end. Default 0..90.
    #[serde(default = "door_range")]
    pub range_deg: [f64; 2],
}

fn y_axis() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}

fn door_range() -> [f64; 2] {
    [0.0, 90.0]
}

/// `[[reduced.palette]]`: one (α^I, α^F) pair of the impulse palette (James & Fatahalian eq. 11).
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PaletteEntrySpec {
    /// Name used in impulse sequences (`open:1.5,stop:1`).
    pub name: String,
    /// Key that applies it in the TUI (one character).
    pub key: char,
    /// α^I: velocity added to every free particle on the first step [m/s]. Default zero.
    #[serde(default)]
    pub impulse: [f64; 3],
    /// α^F: door angular velocity while the entry lasts [rad/s]. Default 0.
    #[serde(default)]
    pub angular_velocity: f64,
    /// α^F: wind velocity while the entry lasts [m/s] (needs `[loads.wind]`); default the
    /// scene's wind (or none).
    pub wind: Option<[f64; 3]>,
    /// Entries that may follow this one (names); empty: any.
    #[serde(default)]
    pub next: Vec<String>,
}

/// `[reduced]`: the impulse palette and how to sample it.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReducedSpec {
    pub palette: Vec<PaletteEntrySpec>,
    /// The door carrying the pins, if any.
    pub door: Option<DoorSpec>,
    /// Entry the scene settles under before sampling and playback starts from (name). Default
    /// the first.
    pub start: Option<String>,
    /// Settling time under `start` before sampling \[s\]. Default 1.
    #[serde(default = "one")]
    pub settle: f64,
    /// Simulated time of the random palette sequence \[s\].
    pub duration: f64,
    /// Bounds of one IRF's duration \[s\].
    pub t_min: f64,
    pub t_max: f64,
    /// Steps between recorded states. Default 10.
    #[serde(default = "ten")]
    pub every: u32,
    /// ε: keep rank r with σ_r ≥ ε·σ₁. Default 0.015.
    #[serde(default = "eps")]
    pub rank_tolerance: f64,
    /// Most rank kept. Default 64.
    #[serde(default = "max_rank")]
    pub max_rank: usize,
    /// λ of the blend e^(−λt) (eq. 12) [1/s]. Default 4.
    #[serde(default = "blend")]
    pub blend_rate: f64,
    /// IRFs shorter than this fraction of t_min are pruned. Default 0.5.
    #[serde(default = "half")]
    pub prune_short: f64,
    /// An IRF is a dead end when its end lies farther from every IRF start than this multiple
    /// of the median such distance (metric of eq. 9). Default 4.
    #[serde(default = "four")]
    pub dead_end_factor: f64,
    /// Seed of the random sequence. Default 1.
    #[serde(default = "seed")]
    pub seed: u64,
    /// Independent chains the sampled time is split into, each from the settled state with
    /// seed + c (run on all cores, or split into shards). Default 1.
    #[serde(default = "one_chain")]
    pub chains: usize,
    /// Law of the random chains' IRF durations in [t_min, t_max]. Default `uniform`.
    #[serde(default)]
    pub durations: DurationLaw,
    /// Random chains: IRFs branched from each chain IRF at frames drawn uniformly inside it,
    /// each into another entry allowed next (a stop in mid-swing, a switch in mid-stop), of a
    /// duration by the same law, within the same sampled time. Default 0: none.
    #[serde(default)]
    pub switch_branches: u32,
    /// Random chains only, or also a tree of IRFs.
    #[serde(default)]
    pub sampling: Sampling,
    /// Tree: time between branch points on the IRFs of level 1, 2, … \[s\]; the tree has
    /// 1 + len levels.
    #[serde(default)]
    pub branch_every: Vec<f64>,
    /// Playback at the end of an IRF. Default `continue`.
    #[serde(default)]
    pub irf_end: IrfEnd,
    /// How playback removes a jump's offset. Default `exponential`.
    #[serde(default)]
    pub offset: OffsetBlend,
    /// Most states the SVD is computed from (evenly spaced; every state is projected). Default 2000.
    #[serde(default = "svd_states")]
    pub svd_states: usize,
}

fn svd_states() -> usize {
    2000
}

fn one_chain() -> usize {
    1
}

fn one() -> f64 {
    1.0
}
fn ten() -> u32 {
    10
}
fn eps() -> f64 {
    0.015
}
fn max_rank() -> usize {
    64
}
fn blend() -> f64 {
    4.0
}
fn half() -> f64 {
    0.5
}
fn four() -> f64 {
    4.0
}
fn seed() -> u64 {
    1
}

/// Index of a palette entry by name, or by key when `name` is one character.
pub fn palette_index(palette: &[PaletteEntrySpec], name: &str) -> Option<usize> {
    palette.iter().position(|e| e.name == name).or_else(|| {
        let mut c = name.chars();
        match (c.next(), c.next()) {
            (Some(k), None) => palette.iter().position(|e| e.key == k),
            _ => None,
        }
    })
}

/// Whether palette entry `to` may follow entry `from` (an empty `next` allows any).
pub fn palette_allows(palette: &[PaletteEntrySpec], from: usize, to: usize) -> bool {
    let next = &palette[from].next;
    next.is_empty() || next.iter().any(|n| palette[to].name == *n)
}

impl ReducedSpec {
    /// Index of an entry by name or key.
    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        palette_index(&self.palette, name)
    }

    /// Index of the start entry.
    pub(crate) fn start_index(&self) -> usize {
        self.start
            .as_deref()
            .and_then(|s| self.find(s))
            .unwrap_or(0)
    }

    /// Whether entry `to` may follow entry `from`.
    pub(crate) fn allows(&self, from: usize, to: usize) -> bool {
        palette_allows(&self.palette, from, to)
    }

    /// Checks the palette, durations and tolerances; `wind` says whether the scene has wind.
    pub(crate) fn validate(&self, wind: bool) -> Result<(), ReducedSpecError> {
        validate_palette(&self.palette, self.door.as_ref(), Some(wind))?;
        if let Some(s) = &self.start {
            if self.find(s).is_none() {
                return Err(ReducedSpecError::UnknownStart { start: s.clone() });
            }
        }
        let pos = |v: f64| v.is_finite() && v > 0.0;
        if !(pos(self.t_min) && self.t_max >= self.t_min && pos(self.duration)) {
            return Err(ReducedSpecError::Times);
        }
        if !(self.settle.is_finite() && self.settle >= 0.0) || self.every == 0 {
            return Err(ReducedSpecError::Sampling);
        }
        if !(self.rank_tolerance > 0.0 && self.rank_tolerance < 1.0) || self.max_rank == 0 {
            return Err(ReducedSpecError::Rank);
        }
        if !(pos(self.blend_rate) && self.prune_short >= 0.0 && pos(self.dead_end_factor)) {
            return Err(ReducedSpecError::Blending);
        }
        if self.chains == 0
            || self.svd_states < 2
            || !self.branch_every.iter().all(|&b| pos(b))
            || (self.sampling == Sampling::Tree && self.branch_every.is_empty())
            || self.switch_branches > MAX_SWITCH_BRANCHES
        {
            return Err(ReducedSpecError::Tree);
        }
        Ok(())
    }
}

/// Checks a palette and its door: each name and key once, `next` naming entries, finite
/// values, turns only with a door, the door's range (lo < hi, finite) and axis; `wind` says
/// whether the scene has wind (None: not checked, as in a model file, which simulates nothing).
pub(crate) fn validate_palette(
    palette: &[PaletteEntrySpec],
    door: Option<&DoorSpec>,
    wind: Option<bool>,
) -> Result<(), ReducedSpecError> {
    if palette.is_empty() {
        return Err(ReducedSpecError::EmptyPalette);
    }
    for (i, e) in palette.iter().enumerate() {
        if let Some(k) = palette[..i].iter().position(|o| o.name == e.name) {
            return Err(ReducedSpecError::NameTwice {
                name: e.name.clone(),
                first: k + 1,
                second: i + 1,
            });
        }
    }
    for (i, e) in palette.iter().enumerate() {
        if palette[..i].iter().any(|o| o.key == e.key) {
            return Err(ReducedSpecError::Twice {
                entry: e.name.clone(),
                key: e.key,
            });
        }
        for n in &e.next {
            if !palette.iter().any(|o| o.name == *n) {
                return Err(ReducedSpecError::UnknownNext {
                    entry: e.name.clone(),
                    next: n.clone(),
                });
            }
        }
        if e.wind.is_some() && wind == Some(false) {
            return Err(ReducedSpecError::WindWithoutLoads {
                entry: e.name.clone(),
            });
        }
        if e.angular_velocity != 0.0 && door.is_none() {
            return Err(ReducedSpecError::TurnWithoutDoor {
                entry: e.name.clone(),
            });
        }
        let finite = e
            .impulse
            .iter()
            .chain(e.wind.iter().flatten())
            .all(|v| v.is_finite())
            && e.angular_velocity.is_finite();
        if !finite {
            return Err(ReducedSpecError::NotFinite {
                entry: e.name.clone(),
            });
        }
    }
    if let Some(d) = door {
        if d.range_deg[0] >= d.range_deg[1]
            || d.range_deg.iter().any(|v| !(-180.0..=180.0).contains(v))
        {
            return Err(ReducedSpecError::DoorRange);
        }
        if !d.hinge.iter().all(|v| v.is_finite()) {
            return Err(ReducedSpecError::DoorHinge);
        }
        if !(d.axis.iter().all(|v| v.is_finite()) && Vector3::from(d.axis).norm() >= 1e-12) {
            return Err(ReducedSpecError::DoorAxis);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::DurationLaw;

    /// Quantiles u = (i + ½)/N: the durations' mean and share below t against the closed forms
    /// of each law on [t_min, t_max] = [0.4, 2] s.
    #[test]
    fn the_duration_laws_have_their_closed_form_mean_and_distribution() {
        let (lo, hi, n) = (0.4, 2.0, 100_000);
        let draws = |law: DurationLaw| -> Vec<f64> {
            (0..n)
                .map(|i| law.duration(lo, hi, (i as f64 + 0.5) / n as f64))
                .collect()
        };
        let mean = |t: &[f64]| t.iter().sum::<f64>() / t.len() as f64;
        let below = |t: &[f64], x: f64| t.iter().filter(|&&d| d < x).count() as f64 / n as f64;
        let uniform = draws(DurationLaw::Uniform);
        let log = draws(DurationLaw::LogUniform);
        assert!((mean(&uniform) - (lo + hi) / 2.0).abs() < 1e-9);
        // log-uniform: density 1/(T ln(hi/lo)), mean (hi − lo)/ln(hi/lo) = 0.994 s
        let log_mean = (hi - lo) / (hi / lo).ln();
        assert!((mean(&log) - log_mean).abs() < 1e-6, "{}", mean(&log));
        for x in [0.5, 0.7, 1.0, 1.5] {
            assert!((below(&uniform, x) - (x - lo) / (hi - lo)).abs() < 1e-4);
            let share = (x / lo).ln() / (hi / lo).ln();
            assert!((below(&log, x) - share).abs() < 1e-4, "{x}");
        }
        // every draw in [t_min, t_max]; the same share in each octave
        assert!(log.iter().all(|&t| (lo..=hi).contains(&t)));
        assert!((below(&log, 0.8) - below(&log, 1.6) / 2.0).abs() < 1e-4);
        assert_eq!(DurationLaw::Uniform.duration(lo, hi, 0.0), lo);
        assert!((DurationLaw::LogUniform.duration(lo, hi, 0.5) - (lo * hi).sqrt()).abs() < 1e-12);
    }
}
