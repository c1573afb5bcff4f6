//! The reduced model file (`.krd`): mean shape, basis U, reduced coordinates q [m] and
//! velocities q̇ [m/s] of every recorded state, and the IRF library; little-endian f32.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cloth::record::{Camera, Reader, Truncated};
use crate::scene::{DoorSpec, IrfEnd, OffsetBlend, PaletteEntrySpec};

mod bounds;
mod checksum;

use super::transfer::{Transfer, TransferInfo, SH_COEFFS};
use super::{ReducedError, Reduction};

/// First eight bytes of a model file.
pub const MODEL_MAGIC: &[u8; 8] = b"KESTRELD";
/// Version of the model format without a transfer section, and without a checksum (read,
/// no longer written).
pub const MODEL_VERSION: u32 = 1;
/// Version of a model with a reduced radiance transfer section (`precompute --transfer`),
/// without a checksum (read, no longer written).
pub const MODEL_VERSION_TRANSFER: u32 = 2;
/// Version of the model files written: version 1 or 2's layout (the transfer section where
/// the header has a `transfer` entry), then the SHA-256 of every byte before it.
pub const MODEL_VERSION_CHECKSUM: u32 = 3;

/// The header of a version-2 model: the version-1 header and the transfer's entry.
#[derive(Serialize)]
struct TransferHeader<'a> {
    #[serde(flatten)]
    info: &'a ModelInfo,
    transfer: &'a TransferInfo,
}

/// The transfer's entry of a header, read apart from the rest.
#[derive(Deserialize)]
struct TransferEntry {
    #[serde(default)]
    transfer: Option<TransferInfo>,
}

/// One impulse response (IRF) of the library: recorded states `start..=end` under palette
/// entry `entry`; state `start` is the one before the impulse (x⁰ of eq. 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orbit {
    pub entry: u32,
    pub start: u32,
    pub end: u32,
}

impl Orbit {
    /// Steps of the orbit (states after x⁰).
    pub(crate) fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// The JSON block of a model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Scene name.
    pub name: String,
    /// Particles along the warp and the weft; rest spacings \[m\].
    pub nu: u32,
    pub nv: u32,
    pub h_warp: f64,
    pub h_weft: f64,
    /// Time between recorded states \[s\].
    pub frame_dt: f64,
    /// β of the metric of eq. 9 \[s²\].
    pub beta: f64,
    /// λ of the blend of eq. 12 [1/s].
    pub blend_rate: f64,
    pub palette: Vec<PaletteEntrySpec>,
    /// Entry the model starts under (state 0 is the settled state under it).
    pub start: u32,
    /// Entry that holds the door still (taken when the door reaches the end of its range).
    pub stop: Option<u32>,
    pub door: Option<DoorSpec>,
    /// The door leaf's plane at the start, (point, normal) \[m\]: the scene's first plane
    /// obstacle (absent in models written before it was stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub door_plane: Option<[[f64; 3]; 2]>,
    /// Pinned particles (index j·nu + i).
    pub pins: Vec<u32>,
    pub camera: Option<Camera>,
    /// ε of σ_r ≥ ε·σ₁ and the resulting σ_{r+1}/σ₁.
    pub rank_tolerance: f64,
    pub rel_error: f64,
    /// IRFs sampled, and pruned as short or dead ends.
    pub orbits_sampled: u32,
    pub pruned_short: u32,
    pub pruned_dead_end: u32,
    /// Playback at the end of an IRF (models without it: `continue`).
    #[serde(default)]
    pub irf_end: IrfEnd,
    /// How playback removes a jump's offset (models without it: `exponential`).
    #[serde(default)]
    pub offset: OffsetBlend,
    /// SHA-256 (hex) of the scene file's bytes the model was precomputed from (`kestrel
    /// precompute` and `merge` record it; absent in models written before, or made by the
    /// library alone): `play --compare` checks the scene against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene_sha256: Option<String>,
}

/// Shortest and longest time between recorded states \[s\]: playback advances one state
/// per `frame_dt`, and every duration is counted in states.
pub const FRAME_DT_RANGE_S: (f64, f64) = (1e-6, 10.0);

impl ModelInfo {
    /// The modelled cloth's grid.
    pub fn grid(&self) -> crate::cloth::Grid {
        crate::cloth::Grid::of_header(self.nu, self.nv, self.h_warp, self.h_weft)
    }
}

/// A reduced model: the shape is mean + U·q (in the door's frame when there is a door).
#[derive(Debug, Clone, PartialEq)]
pub struct ReducedModel {
    pub info: ModelInfo,
    /// Vertices v; coordinates are 3v.
    pub vertices: usize,
    pub rank: usize,
    /// All singular values of the snapshot matrix \[m\].
    pub sigma: Vec<f32>,
    /// Mean shape, 3v values \[m\].
    pub mean: Vec<f32>,
    /// U: 3v × r, column-major.
    pub basis: Vec<f32>,
    /// q of every recorded state, r values each \[m\].
    pub q: Vec<f32>,
    /// q̇ of every recorded state (backward differences, eq. 8) [m/s].
    pub qdot: Vec<f32>,
    /// The IRF library (kept orbits).
    pub orbits: Vec<Orbit>,
    /// The reduced radiance transfer, when precomputed (`precompute --transfer`).
    pub transfer: Option<Transfer>,
    /// A_e of each entry for `OffsetBlend::Linear` (derived from q, q̇ and the IRFs; 2r × 2r
    /// row-major; None: that entry blends by e^(−λt)).
    pub(crate) offset_dynamics: Vec<Option<Vec<f32>>>,
    /// The frames of each entry's IRFs for `OffsetBlend::Flow` (derived; empty otherwise).
    pub(crate) flow: super::flow::FlowFrames,
}

/// Basis vectors summed in one pass of [`ReducedModel::reconstruct`].
const FUSED_COLUMNS: usize = 8;

/// out\[i\] ← b\[i\] + q₀·u₀\[i\] + … + q_(K−1)·u_(K−1)\[i\], summed in that order; b is
/// `base`, or `out` itself when None.
#[inline(always)]
fn add_columns<const K: usize>(
    out: &mut [f32],
    base: Option<&[f32]>,
    cols: [&[f32]; K],
    q: &[f32],
) {
    let n = out.len();
    let cols: [&[f32]; K] = cols.map(|u| &u[..n]);
    let q: [f32; K] = std::array::from_fn(|k| q[k]);
    let sum = |mut s: f32, i: usize| {
        for k in 0..K {
            s += q[k] * cols[k][i];
        }
        s
    };
    match base {
        Some(base) => {
            for ((i, o), &b) in out.iter_mut().enumerate().zip(&base[..n]) {
                *o = sum(b, i);
            }
        }
        None => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = sum(*o, i);
            }
        }
    }
}

impl ReducedModel {
    /// The model of a reduction: its mean, singular values and basis in `f32`, with q and q̇
    /// of the recorded states (r values each) and the IRF library.
    pub fn from_reduction(
        info: ModelInfo,
        red: &Reduction,
        q: Vec<f32>,
        qdot: Vec<f32>,
        orbits: Vec<Orbit>,
    ) -> Self {
        let single = |v: &[f64]| v.iter().map(|&x| x as f32).collect();
        Self {
            info,
            vertices: red.coordinates / 3,
            rank: red.rank,
            sigma: single(&red.sigma),
            mean: single(&red.mean),
            basis: single(&red.basis),
            q,
            qdot,
            orbits,
            transfer: None,
            offset_dynamics: Vec::new(),
            flow: Default::default(),
        }
        .with_offset_dynamics()
    }

    /// Fits A_e when the model blends offsets linearly or plays by the flow, and lists the
    /// flow's frames for the latter.
    fn with_offset_dynamics(mut self) -> Self {
        self.offset_dynamics = Vec::new();
        self.flow = Default::default();
        if matches!(self.info.offset, OffsetBlend::Linear | OffsetBlend::Flow) {
            self.offset_dynamics =
                super::offset::fit_offset_dynamics(&self, self.info.offset == OffsetBlend::Linear);
        }
        if self.info.offset == OffsetBlend::Flow {
            self.flow = super::flow::FlowFrames::of(&self);
        }
        self
    }

    /// The model played with another offset rule than the one it was precomputed with
    /// (`kestrel play --offset`); the file's bytes are not changed by it.
    pub fn with_offset(mut self, offset: OffsetBlend) -> Self {
        if offset == self.info.offset {
            // A_e and the flow's frames were derived for this rule when the model was read
            return self;
        }
        self.info.offset = offset;
        self.with_offset_dynamics()
    }

    /// Recorded states N.
    pub(crate) fn states(&self) -> usize {
        self.q.len() / self.rank.max(1)
    }

    /// q of state j.
    #[inline]
    pub fn q_of(&self, j: usize) -> &[f32] {
        &self.q[j * self.rank..(j + 1) * self.rank]
    }

    /// q̇ of state j.
    #[inline]
    pub fn qdot_of(&self, j: usize) -> &[f32] {
        &self.qdot[j * self.rank..(j + 1) * self.rank]
    }

    /// mean + U·q into `out` (3v values) \[m\], no allocation. The basis vectors are taken
    /// `FUSED_COLUMNS` (8) at a time, so `out` is read and written once per group rather than
    /// once per vector; each value is still summed as mean + q₁u₁ + q₂u₂ + … in that order
    /// (the same bits as one axpy per basis vector; tested).
    #[inline]
    pub fn reconstruct(&self, q: &[f32], out: &mut [f32]) {
        let m = self.mean.len();
        let out = &mut out[..m];
        let r = q.len().min(self.rank);
        let col = |k: usize| &self.basis[k * m..(k + 1) * m];
        // the first group starts from the mean; the later ones from `out`
        let mut base = Some(&self.mean[..]);
        let mut k = 0;
        while k + FUSED_COLUMNS <= r {
            let cols = std::array::from_fn(|i| col(k + i));
            add_columns::<FUSED_COLUMNS>(out, base.take(), cols, &q[k..]);
            k += FUSED_COLUMNS;
        }
        while k + 4 <= r {
            add_columns::<4>(
                out,
                base.take(),
                std::array::from_fn(|i| col(k + i)),
                &q[k..],
            );
            k += 4;
        }
        while k < r {
            add_columns::<1>(out, base.take(), [col(k)], &q[k..]);
            k += 1;
        }
        if let Some(mean) = base {
            out.copy_from_slice(mean);
        }
    }

    /// The file's bytes (layout in docs/reduced.md).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ReducedError> {
        let json = match &self.transfer {
            None => serde_json::to_vec(&self.info),
            Some(t) => serde_json::to_vec(&TransferHeader {
                info: &self.info,
                transfer: &t.info,
            }),
        }
        .map_err(|e| ReducedError::Invalid(format!("cannot encode the header: {e}")))?;
        let version = MODEL_VERSION_CHECKSUM;
        let floats =
            self.sigma.len() + self.mean.len() + self.basis.len() + self.q.len() + self.qdot.len();
        let mut out = Vec::with_capacity(
            36 + json.len() + 4 * floats + 12 * self.orbits.len() + checksum::LEN,
        );
        out.extend_from_slice(MODEL_MAGIC);
        for v in [
            version,
            self.vertices as u32,
            self.rank as u32,
            self.states() as u32,
            self.orbits.len() as u32,
            self.sigma.len() as u32,
            json.len() as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&json);
        for block in [&self.sigma, &self.mean, &self.basis, &self.q, &self.qdot] {
            for x in block.iter() {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        for o in &self.orbits {
            for v in [o.entry, o.start, o.end] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        if let Some(t) = &self.transfer {
            for c in &t.centers {
                out.extend_from_slice(&c.to_le_bytes());
            }
            for block in [&t.sigma, &t.mean, &t.basis, &t.weights] {
                for x in block.iter() {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        checksum::seal(&mut out);
        Ok(out)
    }

    /// Parses a model's bytes, checking every length and index; `path` names it in errors.
    /// A version-3 file whose checksum does not match is refused as damaged (one cut short
    /// is said to be cut short); versions 1 and 2 have none and are read unchecked.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self, ReducedError> {
        if version_of(bytes) != Some(MODEL_VERSION_CHECKSUM) {
            return Self::parse(bytes, path);
        }
        let intact = checksum::intact(bytes);
        match Self::parse(bytes, path) {
            Err(e @ ReducedError::Truncated { .. }) => Err(e),
            _ if !intact => Err(ReducedError::Damaged {
                path: path.to_path_buf(),
            }),
            parsed => parsed,
        }
    }

    /// `from_bytes` without the checksum's comparison.
    fn parse(bytes: &[u8], path: &Path) -> Result<Self, ReducedError> {
        let bad = |message: String| ReducedError::Format {
            path: path.to_path_buf(),
            message,
        };
        let truncated = |need, where_| bounds::truncated(path, bytes.len(), need, where_);
        let cut = |t: Truncated| truncated("more".into(), bounds::in_header(t));
        let mut r = Reader::new(bytes);
        let magic = r.take(8).map_err(cut)?;
        if magic != MODEL_MAGIC {
            return Err(bad(match crate::input::binary_kind(magic) {
                Some(what) => format!("this is {what}"),
                None => "bad magic (expected KESTRELD)".into(),
            }));
        }
        let version = r.u32().map_err(cut)?;
        if !(MODEL_VERSION..=MODEL_VERSION_CHECKSUM).contains(&version) {
            return Err(bad(format!(
                "version {version} (this kestrel reads {MODEL_VERSION} to {MODEL_VERSION_CHECKSUM})"
            )));
        }
        let trailer = if version == MODEL_VERSION_CHECKSUM {
            checksum::LEN as u64
        } else {
            0
        };
        let mut h = [0u64; 6];
        for v in &mut h {
            *v = u64::from(r.u32().map_err(cut)?);
        }
        let [vertices, rank, states, orbits, singular, json_len] = h;
        let json = r.take(json_len as usize).map_err(cut)?;
        let info: ModelInfo =
            serde_json::from_slice(json).map_err(|e| bad(format!("header: {e}")))?;
        let transfer_info = serde_json::from_slice::<TransferEntry>(json)
            .map_err(|e| bad(format!("header: transfer: {e}")))?
            .transfer;
        match (version, &transfer_info) {
            (MODEL_VERSION_TRANSFER, None) => {
                return Err(bad(
                    "version 2 without a transfer entry in the header".into()
                ))
            }
            (MODEL_VERSION, Some(_)) => {
                return Err(bad("version 1 with a transfer entry in the header".into()))
            }
            _ => {}
        }
        if u64::from(info.nu) * u64::from(info.nv) != vertices || vertices == 0 {
            return Err(bad(format!(
                "header grid {}x{} for {vertices} vertices",
                info.nu, info.nv
            )));
        }
        if rank == 0 || states == 0 {
            return Err(bad(format!(
                "rank {rank} and {states} states: both must be >= 1"
            )));
        }
        info.validate(vertices).map_err(bad)?;
        // checked u64 arithmetic: announced sizes that do not match the bytes present are
        // refused before anything is allocated
        let m = 3 * vertices;
        let floats = m
            .checked_mul(rank)
            .and_then(|b| states.checked_mul(rank)?.checked_mul(2)?.checked_add(b))
            .and_then(|f| f.checked_add(singular + m));
        let transfer_bytes = match &transfer_info {
            None => Some(0),
            Some(t) => {
                t.validate(states)
                    .map_err(|m| bad(format!("transfer: {m}")))?;
                let (na, ra) = (u64::from(t.states), u64::from(t.rank));
                let tv = SH_COEFFS as u64 * vertices;
                tv.checked_mul(ra + 1)
                    .and_then(|f| f.checked_add(na * ra + na))
                    .and_then(|f| f.checked_mul(4))
                    .and_then(|b| b.checked_add(4 * na))
            }
        };
        let need = floats
            .and_then(|f| f.checked_mul(4))
            .and_then(|b| b.checked_add(12 * orbits))
            .and_then(|b| b.checked_add(transfer_bytes?))
            .and_then(|b| b.checked_add(trailer));
        let have = r.remaining() as u64;
        // sizes a file within the read limit can hold, and more than there are: cut short
        let limit = crate::input::BINARY_FILE_LIMIT;
        if let Some(n) = need.filter(|&n| n > have && n <= limit) {
            let at = bytes.len() as u64 - have;
            return Err(truncated(
                (at + n).to_string(),
                bounds::sizes(vertices, rank, states, orbits),
            ));
        }
        if need != Some(have) {
            return Err(bad(format!(
                "{} bytes after the header for {vertices} vertices, rank {rank}, {states} states, {orbits} IRFs{}",
                r.remaining(),
                if trailer > 0 { " and the checksum" } else { "" }
            )));
        }
        // every size now fits in the bytes present
        let [vertices, rank, states, orbits, singular] =
            [vertices, rank, states, orbits, singular].map(|v| v as usize);
        let m = 3 * vertices;
        // every value finite: a NaN would play and compare as if it were a shape (a NaN error
        // reads as no error)
        let floats = |r: &mut Reader, n: usize, what: &str| -> Result<Vec<f32>, ReducedError> {
            let s = r.take(4 * n).map_err(cut)?;
            let v: Vec<f32> = s
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if v.iter().all(|x| x.is_finite()) {
                Ok(v)
            } else {
                Err(bad(format!("{what}: a value is not finite")))
            }
        };
        let sigma = floats(&mut r, singular, "singular values")?;
        let mean = floats(&mut r, m, "mean shape")?;
        let basis = floats(&mut r, m * rank, "basis")?;
        let q = floats(&mut r, states * rank, "recorded states")?;
        let qdot = floats(&mut r, states * rank, "recorded velocities")?;
        let mut list = Vec::with_capacity(orbits);
        for _ in 0..orbits {
            let o = Orbit {
                entry: r.u32().map_err(cut)?,
                start: r.u32().map_err(cut)?,
                end: r.u32().map_err(cut)?,
            };
            if o.entry as usize >= info.palette.len() || o.start > o.end || o.end as usize >= states
            {
                return Err(bad(format!(
                    "IRF {} of entry {}, states {} to {}: out of range ({} entries, {states} \
                     states)",
                    list.len(),
                    o.entry,
                    o.start,
                    o.end,
                    info.palette.len()
                )));
            }
            list.push(o);
        }
        if info.start as usize >= info.palette.len() {
            return Err(bad("start entry out of range".into()));
        }
        let transfer = match transfer_info {
            None => None,
            Some(t) => {
                let (na, ra) = (t.states as usize, t.rank as usize);
                let mut centers = Vec::with_capacity(na);
                for _ in 0..na {
                    let c = r.u32().map_err(cut)?;
                    if c as usize >= states {
                        return Err(bad(format!("transfer: centre state {c} of {states}")));
                    }
                    centers.push(c);
                }
                let tv = SH_COEFFS * vertices;
                let sigma = floats(&mut r, na, "transfer")?;
                let mean = floats(&mut r, tv, "transfer")?;
                let basis = floats(&mut r, tv * ra, "transfer")?;
                let weights = floats(&mut r, na * ra, "transfer")?;
                Some(Transfer {
                    info: t,
                    centers,
                    sigma,
                    mean,
                    basis,
                    weights,
                })
            }
        };
        let model = Self {
            info,
            vertices,
            rank,
            sigma,
            mean,
            basis,
            q,
            qdot,
            orbits: list,
            transfer,
            offset_dynamics: Vec::new(),
            flow: Default::default(),
        };
        bounds::check_values(&model).map_err(bad)?;
        Ok(model.with_offset_dynamics())
    }

    /// Reads a model file.
    pub fn read(path: &Path) -> Result<Self, ReducedError> {
        super::read_file(path, Self::from_bytes)
    }

    /// Whether the model file at `path` is of a version without a checksum (1 or 2: damage
    /// to it cannot be told); reads its first 12 bytes only. False for anything else.
    pub fn unchecked_file(path: &Path) -> bool {
        use std::io::Read;
        let mut head = [0u8; 12];
        let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
        read.is_ok()
            && matches!(
                version_of(&head),
                Some(MODEL_VERSION | MODEL_VERSION_TRANSFER)
            )
    }

    /// Writes the model atomically; refuses to overwrite unless `force`. Returns its size
    /// \[bytes\].
    pub fn write(&self, path: &Path, force: bool) -> Result<usize, ReducedError> {
        super::write_file(path, &self.to_bytes()?, force)
    }
}

/// The version of a model file's bytes (after the magic), if they start as one.
fn version_of(bytes: &[u8]) -> Option<u32> {
    if bytes.get(..8)? != MODEL_MAGIC {
        return None;
    }
    let v = bytes.get(8..12)?;
    Some(u32::from_le_bytes([v[0], v[1], v[2], v[3]]))
}
