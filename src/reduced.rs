//! Precomputed reduced dynamics (James & Fatahalian 2003): snapshots of a scene
//! driven by its impulse palette, u ≈ U·q by SVD (σ_r ≥ ε·σ₁), IRF playback with e^(−λt) blends.
//!
//! [`precompute`] samples and reduces a scene into a [`ReducedModel`] (file format in
//! docs/reduced.md); a [`Player`] replays it; [`compare`] measures a playback against the full
//! simulation. Positions in m (in the door's frame when the scene has a door), times in s.

mod basis;
mod compare;
mod drive;
mod flow;
pub use flow::{MAX_FLOW_HYSTERESIS, MAX_FLOW_NEIGHBOURS};
mod model;
mod offset;
mod play;
mod precompute;
mod sample;
mod shard;
pub mod transfer;

use std::path::PathBuf;

use thiserror::Error;

use crate::atomic::WriteError;
use crate::cloth::ClothError;

pub use basis::{frobenius_error, reduce, relative_error, Reduction};
pub use compare::{
    compare, compare_frames, Comparison, FrameError, SegmentError, PLAYBACK_ERROR_WARNING,
};
pub use model::{
    ModelInfo, Orbit, ReducedModel, FRAME_DT_RANGE_S, MODEL_MAGIC, MODEL_VERSION,
    MODEL_VERSION_CHECKSUM, MODEL_VERSION_TRANSFER,
};
pub use play::{frames_of, parse_sequence, sequence_frames, Player, Refusal, MAX_PLAY_FRAMES};
pub use precompute::{precompute, precompute_reporting, PrecomputeOptions, PrecomputeStats};
pub use shard::{
    merge, merge_reporting, precompute_shard, scene_fingerprint, Shard, ShardHeader, SHARD_MAGIC,
};

#[derive(Debug, Error)]
pub enum ReducedError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    TransferOptions(#[from] transfer::TransferOptionsError),
    #[error("the scene has no [reduced] section (impulse palette); see docs/reduced.md")]
    NoPalette,
    #[error("impulse sequence `{text}`: {message}")]
    Sequence { text: String, message: String },
    #[error(transparent)]
    Cloth(#[from] ClothError),
    #[error("cannot read model {0}")]
    Read(#[from] crate::input::Unreadable),
    #[error("{path}: not a kestrel reduced model: {message}")]
    Format { path: PathBuf, message: String },
    /// A model whose checksum does not match its bytes.
    #[error(
        "{path}: the reduced model is damaged: its bytes do not match the checksum at its end \
         (the file was changed after it was written); precompute the model again"
    )]
    Damaged { path: PathBuf },
    #[error("{path}: not a kestrel precompute shard: {message}")]
    ShardFormat { path: PathBuf, message: String },
    /// A model or shard file that ends before its announced data: `have` bytes of at least
    /// `need`.
    #[error(
        "{path}: truncated {what}: the file holds {have} bytes where {need} are expected \
         ({where_}); it was cut short (a copy or a run that did not finish): {fix}"
    )]
    Truncated {
        path: PathBuf,
        what: &'static str,
        have: u64,
        need: String,
        where_: String,
        fix: &'static str,
    },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Reads a file of the reduced family (model, shard) within the input's size limit and parses
/// it with `parse`.
fn read_file<T>(
    path: &std::path::Path,
    parse: fn(&[u8], &std::path::Path) -> Result<T, ReducedError>,
) -> Result<T, ReducedError> {
    let bytes = crate::input::file_bytes(path, crate::input::BINARY_FILE_LIMIT)?;
    parse(&bytes, path)
}

/// Writes `bytes` atomically, refusing to overwrite unless `force`; returns their count.
fn write_file(path: &std::path::Path, bytes: &[u8], force: bool) -> Result<usize, ReducedError> {
    crate::atomic::write_atomic(path, bytes, force)?;
    Ok(bytes.len())
}
