//! The `--record` file: particle positions [m, f32] of every n-th step, little-endian, with a
//! JSON block describing the grid, camera and obstacles (format in docs/cloth.md).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::atomic::{write_atomic, WriteError};

use super::obstacle::Obstacle;
use super::world::ClothWorld;

/// First eight bytes of a record file.
pub(crate) const MAGIC: &[u8; 8] = b"KESTRELR";
/// Version of the record format.
pub(crate) const RECORD_VERSION: u32 = 1;

#[derive(Debug, Error)]
pub enum RecordError {
    #[error("cannot read {0}")]
    Read(#[from] crate::input::Unreadable),
    #[error("not a kestrel record: {0}")]
    Format(String),
    #[error("{path}: not a kestrel record: {message}")]
    File { path: PathBuf, message: String },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// A pinhole camera: where it is, what it looks at, which way is up, vertical field of view.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Camera {
    /// Eye position \[m\].
    pub eye: [f64; 3],
    /// Point looked at \[m\].
    pub target: [f64; 3],
    /// Up direction. Default (0, 1, 0).
    #[serde(default = "up")]
    pub up: [f64; 3],
    /// Vertical field of view \[deg\]. Default 40.
    #[serde(default = "fov")]
    pub fov_deg: f64,
}

/// Farthest a camera's eye or target may be from the origin on any axis \[m\]: the renderer
/// works in f32, whose view matrices lose a scene seen from much farther.
pub const CAMERA_REACH_M: f64 = 1e6;

/// Why [`Camera::validate`] refused a camera; the message names the field.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CameraError {
    #[error(
        "camera: eye {eye:?} and target {target:?} must be finite and within {reach:e} m of \
         the origin on every axis",
        reach = CAMERA_REACH_M
    )]
    OutOfReach { eye: [f64; 3], target: [f64; 3] },
    #[error("camera: eye and target coincide")]
    Coincident,
    #[error("camera: up {0:?} must be finite, non-zero and not along the view")]
    Up([f64; 3]),
    #[error("camera: fov_deg = {0} deg must be in (0, 180)")]
    FieldOfView(f64),
}

impl Camera {
    /// Checks the eye and target (finite, within [`CAMERA_REACH_M`], apart), the up direction
    /// (not along the view) and the field of view (0 to 180 deg).
    pub fn validate(&self) -> Result<(), CameraError> {
        let within = |v: &[f64; 3]| v.iter().all(|c| c.is_finite() && c.abs() <= CAMERA_REACH_M);
        if !(within(&self.eye) && within(&self.target)) {
            return Err(CameraError::OutOfReach {
                eye: self.eye,
                target: self.target,
            });
        }
        let v = |a: [f64; 3]| nalgebra::Vector3::from(a);
        let view = v(self.target) - v(self.eye);
        if view.norm() < 1e-9 {
            return Err(CameraError::Coincident);
        }
        let up = v(self.up);
        if !(up.iter().all(|c| c.is_finite())
            && up.cross(&view).norm() > 1e-9 * up.norm() * view.norm())
        {
            return Err(CameraError::Up(self.up));
        }
        if !(self.fov_deg > 0.0 && self.fov_deg < 180.0) {
            return Err(CameraError::FieldOfView(self.fov_deg));
        }
        Ok(())
    }
}

fn up() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}

fn fov() -> f64 {
    40.0
}

/// The JSON block of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordInfo {
    /// Scene name.
    pub name: String,
    /// Particles along the warp and the weft.
    pub nu: u32,
    pub nv: u32,
    /// Rest spacings \[m\].
    pub h_warp: f64,
    pub h_weft: f64,
    /// Time step \[s\] and steps between frames.
    pub dt: f64,
    pub every: u32,
    #[serde(default)]
    pub camera: Option<Camera>,
    #[serde(default)]
    pub obstacles: Vec<Obstacle>,
}

impl RecordInfo {
    /// The recorded cloth's grid.
    pub fn grid(&self) -> super::Grid {
        super::Grid::of_header(self.nu, self.nv, self.h_warp, self.h_weft)
    }

    /// Checks the grid (at least 2 x 2, as every cloth), the spacings and time step (finite, > 0), `every`
    /// (>= 1) and the camera.
    fn validate(&self) -> Result<(), String> {
        if self.nu < 2 || self.nv < 2 {
            return Err(format!(
                "grid {} x {}: a cloth has at least 2 x 2 particles",
                self.nu, self.nv
            ));
        }
        for (name, v, unit) in [
            ("h_warp", self.h_warp, "m"),
            ("h_weft", self.h_weft, "m"),
            ("dt", self.dt, "s"),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} = {v} {unit}: must be finite and > 0"));
            }
        }
        if self.every == 0 {
            return Err("every = 0: must be >= 1 step".into());
        }
        self.camera
            .as_ref()
            .map_or(Ok(()), Camera::validate)
            .map_err(|e| e.to_string())
    }
}

/// One recorded frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub step: u64,
    /// Simulated time \[s\].
    pub time: f64,
    /// Positions \[m\], particle p(i, j) at index j·nu + i.
    pub positions: Vec<[f32; 3]>,
}

/// A whole record: header and frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub info: RecordInfo,
    pub frames: Vec<Frame>,
}

impl Recording {
    pub fn new(info: RecordInfo) -> Self {
        Self {
            info,
            frames: Vec::new(),
        }
    }

    /// Appends the world's current positions as a frame.
    pub fn push(&mut self, world: &ClothWorld) {
        self.frames.push(Frame {
            step: world.steps,
            time: world.time,
            positions: world
                .x
                .iter()
                .map(|p| [p.x as f32, p.y as f32, p.z as f32])
                .collect(),
        });
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, RecordError> {
        let json = serde_json::to_vec(&self.info)
            .map_err(|e| RecordError::Format(format!("cannot encode the header: {e}")))?;
        let n = self.info.nu as usize * self.info.nv as usize;
        let mut out = Vec::with_capacity(32 + json.len() + self.frames.len() * (16 + 12 * n));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&RECORD_VERSION.to_le_bytes());
        out.extend_from_slice(&self.info.nu.to_le_bytes());
        out.extend_from_slice(&self.info.nv.to_le_bytes());
        out.extend_from_slice(&(self.frames.len() as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        for f in &self.frames {
            if f.positions.len() != n {
                return Err(RecordError::Format(format!(
                    "frame at step {} has {} positions, the grid {n}",
                    f.step,
                    f.positions.len()
                )));
            }
            out.extend_from_slice(&f.step.to_le_bytes());
            out.extend_from_slice(&f.time.to_le_bytes());
            for p in &f.positions {
                for c in p {
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        }
        Ok(out)
    }

    /// Parses a record's bytes, checking every length.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, RecordError> {
        let mut r = Reader::new(bytes);
        let magic = r.take(8)?;
        if magic != MAGIC {
            return Err(RecordError::Format(
                match crate::input::binary_kind(magic) {
                    Some(what) => format!("this is {what}"),
                    None => "bad magic (expected KESTRELR)".into(),
                },
            ));
        }
        let version = r.u32()?;
        if version != RECORD_VERSION {
            return Err(RecordError::Format(format!(
                "version {version} (this kestrel reads {RECORD_VERSION})"
            )));
        }
        let (nu, nv, frames, json_len) = (r.u32()?, r.u32()?, r.u32()?, r.u32()?);
        let info: RecordInfo = serde_json::from_slice(r.take(json_len as usize)?)
            .map_err(|e| RecordError::Format(format!("header: {e}")))?;
        if (info.nu, info.nv) != (nu, nv) {
            return Err(RecordError::Format(format!(
                "header grid {}x{} differs from {nu}x{nv}",
                info.nu, info.nv
            )));
        }
        info.validate().map_err(RecordError::Format)?;
        // checked u64 arithmetic: announced sizes that do not match the bytes present are
        // refused before anything is allocated
        let n = u64::from(nu) * u64::from(nv);
        let frame_len = n.checked_mul(12).and_then(|b| b.checked_add(16));
        let total = frame_len.and_then(|f| f.checked_mul(u64::from(frames)));
        if total != Some(r.remaining() as u64) {
            return Err(RecordError::Format(format!(
                "{} bytes of frames for {frames} frames of {nu} x {nv} particles",
                r.remaining()
            )));
        }
        let n = n as usize; // at most the bytes present
        let mut out = Vec::with_capacity(frames as usize);
        for _ in 0..frames {
            let step = u64::from_le_bytes(r.array()?);
            let time = f64::from_le_bytes(r.array()?);
            let mut positions = Vec::with_capacity(n);
            for _ in 0..n {
                let mut p = [0f32; 3];
                for c in &mut p {
                    *c = f32::from_le_bytes(r.array()?);
                }
                positions.push(p);
            }
            out.push(Frame {
                step,
                time,
                positions,
            });
        }
        Ok(Self { info, frames: out })
    }

    /// Reads a record file.
    pub fn read(path: &Path) -> Result<Self, RecordError> {
        let bytes = crate::input::file_bytes(path, crate::input::BINARY_FILE_LIMIT)?;
        Self::from_bytes(&bytes).map_err(|e| match e {
            RecordError::Format(message) => RecordError::File {
                path: path.to_path_buf(),
                message,
            },
            e => e,
        })
    }

    /// Writes the record atomically; refuses to overwrite unless `force`.
    pub fn write(&self, path: &Path, force: bool) -> Result<(), RecordError> {
        write_atomic(path, &self.to_bytes()?, force)?;
        Ok(())
    }
}

/// Reads little-endian fields off a byte slice, failing at its end (records and reduced
/// models).
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// The data ended before a field: the offset where it was wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Truncated(usize);

impl From<Truncated> for String {
    fn from(t: Truncated) -> Self {
        format!("truncated at byte {}", t.0)
    }
}

impl From<Truncated> for RecordError {
    fn from(t: Truncated) -> Self {
        RecordError::Format(t.into())
    }
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Truncated> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(Truncated(self.at))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], Truncated> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Truncated> {
        Ok(u32::from_le_bytes(self.array()?))
    }
}
