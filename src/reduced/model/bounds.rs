//! The numbers a model file may hold, checked on reading: the header's floats (spacings, β,
//! λ, ratios) within their ranges, the palette, pins, door plane and camera as playback needs
//! them, and every shape mean + U·q within [`REACH_M`] of the origin on every axis, so
//! playback, comparison and rendering stay finite; a file shorter than its header announces
//! is said to be truncated.

use std::path::Path;

use crate::cloth::record::{Camera, Truncated, CAMERA_REACH_M};
use crate::kes::units::four_digits;
use crate::scene::validate_palette;

use super::{ModelInfo, ReducedError, ReducedModel, FRAME_DT_RANGE_S};

/// Farthest a mean coordinate (and the door plane's point) may lie from the origin \[m\]: the
/// reach of scenes, cameras and obstacles.
pub(crate) const REACH_M: f64 = CAMERA_REACH_M;

/// Fastest a coordinate of a recorded state may move \[m/s\].
const SPEED_M_PER_S: f64 = 1e6;

/// Slack on |U entry| ≤ 1 (U's columns are orthonormal; f32 rounding).
const BASIS_SLACK: f32 = 1e-3;

/// Checks the model's arrays: the mean within ±[`REACH_M`]; every entry of U at most 1 (its
/// columns are unit vectors); q (projections of displacements of at most 2·reach per
/// coordinate) at most 2·reach·√(3v) and q̇ at most 10⁶ m/s · √(3v); σ ≥ 0 and at most
/// 2·reach·√(3v·N) for N states; the door plane's point within reach. The message names the
/// array, the value and the bound with its unit.
pub(crate) fn check_values(model: &ReducedModel) -> Result<(), String> {
    let m = (3 * model.vertices) as f64;
    let states = model.q.len().checked_div(model.rank).unwrap_or(0) as f64;
    let bounds = [
        ("mean shape", &model.mean, REACH_M, " m"),
        ("basis", &model.basis, 1.0 + f64::from(BASIS_SLACK), ""),
        (
            "recorded states q",
            &model.q,
            2.0 * REACH_M * m.sqrt(),
            " m",
        ),
        (
            "recorded velocities q̇",
            &model.qdot,
            SPEED_M_PER_S * m.sqrt(),
            " m/s",
        ),
        (
            "singular values",
            &model.sigma,
            2.0 * REACH_M * (m * states.max(1.0)).sqrt(),
            " m",
        ),
    ];
    for (what, values, bound, unit) in bounds {
        let beyond = values.iter().position(|&v| f64::from(v).abs() > bound);
        if let Some(i) = beyond {
            return Err(format!(
                "{what}: value {} is {}{unit}, beyond ±{}{unit} (coordinates lie within {} m \
                 of the origin; the file is damaged or was not written by kestrel: precompute \
                 the model again)",
                i + 1,
                four_digits(f64::from(values[i])),
                four_digits(bound),
                four_digits(REACH_M),
            ));
        }
    }
    if let Some(t) = &model.transfer {
        check_transfer(t)?;
    }
    if let Some(i) = model.sigma.iter().position(|&s| s < 0.0) {
        return Err(format!(
            "singular values: value {} is {}, negative (the file is damaged: precompute the \
             model again)",
            i + 1,
            model.sigma[i]
        ));
    }
    if let Some([point, _]) = model.info.door_plane {
        if point.iter().any(|v| v.abs() > REACH_M) {
            return Err(format!(
                "door_plane point [{}] m: beyond {} m of the origin",
                point.map(crate::friction::short_number).join(", "),
                crate::friction::short_number(REACH_M)
            ));
        }
    }
    Ok(())
}

/// Largest magnitude of a transfer coefficient [-]: T = ∫ V max(0, n·s) Y(s) ds / π is at
/// most max |Y_lm| ≤ 0.631 (three SH bands), with slack.
pub(crate) const TRANSFER_MAX: f64 = 1.0;

/// The transfer's arrays: mean within ±[`TRANSFER_MAX`]; basis entries at most 1 (orthonormal
/// columns); weights (projections of transfers of at most 2·TRANSFER_MAX per coefficient) at
/// most 2·TRANSFER_MAX·√(9v); σ ≥ 0 and at most 2·TRANSFER_MAX·√(9v·N_a).
fn check_transfer(t: &super::Transfer) -> Result<(), String> {
    let coefficients = t.mean.len() as f64;
    let states = t.centers.len().max(1) as f64;
    let bounds = [
        ("transfer mean", &t.mean, TRANSFER_MAX),
        ("transfer basis", &t.basis, 1.0 + f64::from(BASIS_SLACK)),
        (
            "transfer weights",
            &t.weights,
            2.0 * TRANSFER_MAX * coefficients.sqrt(),
        ),
        (
            "transfer singular values",
            &t.sigma,
            2.0 * TRANSFER_MAX * (coefficients * states).sqrt(),
        ),
    ];
    for (what, values, bound) in bounds {
        if let Some(i) = values.iter().position(|&v| f64::from(v).abs() > bound) {
            return Err(format!(
                "{what}: value {} is {}, beyond ±{} (no unit: a radiance transfer coefficient \
                 is at most {} in magnitude; the file is damaged or was not written by \
                 kestrel: precompute the model again)",
                i + 1,
                four_digits(f64::from(values[i])),
                four_digits(bound),
                four_digits(TRANSFER_MAX),
            ));
        }
    }
    if let Some(i) = t.sigma.iter().position(|&s| s < 0.0) {
        return Err(format!(
            "transfer singular values: value {} is {}, negative (the file is damaged: \
             precompute the model again)",
            i + 1,
            t.sigma[i]
        ));
    }
    Ok(())
}

/// A range's end in a message: `0`, `1e-6`, `100`, `1e8`.
pub(crate) fn range_number(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e5).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// What a model's sizes announce, for a message.
pub(crate) fn sizes(vertices: u64, rank: u64, states: u64, orbits: u64) -> String {
    format!("{vertices} vertices, rank {rank}, {states} states, {orbits} IRFs")
}

/// A model file of `have` bytes that ends before the `need` its header announces.
pub(crate) fn truncated(path: &Path, have: usize, need: String, where_: String) -> ReducedError {
    ReducedError::Truncated {
        path: path.to_path_buf(),
        what: "reduced model",
        have: have as u64,
        need,
        where_,
        fix: "copy or precompute the model again",
    }
}

/// Where a file that ends within its header ends.
pub(crate) fn in_header(t: Truncated) -> String {
    format!("it ends within its header: {}", String::from(t))
}

/// β of the metric [s²]: max|q|²/max|q̇|² (precompute), a time scale √β of at most 10⁶ s
/// (11 days: longer than any recording).
pub const BETA_RANGE_S2: (f64, f64) = (0.0, 1e12);
/// λ of the offset blend e^(−λt) [1/s]: a time constant 1/λ of at least 1 µs (the shortest
/// `frame_dt`); 0 keeps the offset.
pub const BLEND_RATE_RANGE_PER_S: (f64, f64) = (0.0, 1e6);

/// A header float: name, value, unit, range, why the range.
type HeaderRange = (&'static str, f64, &'static str, (f64, f64), &'static str);

/// Each header float with its unit, its range and why (the spacings as the cloth grid's
/// `SPACING_RANGE_M`); `frame_dt` is checked first on its own.
fn header_ranges(i: &ModelInfo) -> [HeaderRange; 6] {
    let spacing = crate::cloth::SPACING_RANGE_M;
    [
        (
            "h_warp",
            i.h_warp,
            "m",
            spacing,
            "the spacings a cloth grid accepts",
        ),
        (
            "h_weft",
            i.h_weft,
            "m",
            spacing,
            "the spacings a cloth grid accepts",
        ),
        (
            "beta",
            i.beta,
            "s^2",
            BETA_RANGE_S2,
            "a time scale sqrt(beta) of at most 1e6 s",
        ),
        (
            "blend_rate",
            i.blend_rate,
            "1/s",
            BLEND_RATE_RANGE_PER_S,
            "a time constant of at least 1 us",
        ),
        (
            "rank_tolerance",
            i.rank_tolerance,
            "-",
            (0.0, 1.0),
            "a ratio sigma_r/sigma_1",
        ),
        (
            "rel_error",
            i.rel_error,
            "-",
            (0.0, 1.0),
            "a ratio sigma_r+1/sigma_1",
        ),
    ]
}

impl ModelInfo {
    /// Checks what playback relies on: `frame_dt` within [`FRAME_DT_RANGE_S`], the spacings,
    /// β, λ, the rank tolerance and error within their ranges (`header_ranges`), the palette and its door, the start and stop entries, pins
    /// inside the grid of `vertices`, the door plane and the camera.
    pub(super) fn validate(&self, vertices: u64) -> Result<(), String> {
        let (lo, hi) = FRAME_DT_RANGE_S;
        if !(self.frame_dt >= lo && self.frame_dt <= hi) {
            return Err(format!(
                "frame_dt = {} s: must be in [{lo:e}, {hi}] s",
                self.frame_dt
            ));
        }
        for (name, v, unit, (lo, hi), why) in header_ranges(self) {
            if !(v.is_finite() && v >= lo && v <= hi) {
                return Err(format!(
                    "{name} = {} {unit}: must be in [{}, {}] {unit} ({why})",
                    range_number(v),
                    range_number(lo),
                    range_number(hi)
                ));
            }
        }
        validate_palette(&self.palette, self.door.as_ref(), None).map_err(|e| e.to_string())?;
        let entries = self.palette.len();
        if self.start as usize >= entries || self.stop.is_some_and(|s| s as usize >= entries) {
            let stop = self.stop.map_or("none".into(), |s| s.to_string());
            return Err(format!(
                "start entry {} or stop entry {stop} is not one of the {entries} palette entries \
                 (0 to {})",
                self.start,
                entries.saturating_sub(1)
            ));
        }
        if let Some(p) = self.pins.iter().find(|&&p| u64::from(p) >= vertices) {
            return Err(format!("pin {p} outside the {vertices} vertices"));
        }
        if self
            .door_plane
            .is_some_and(|pl| pl.iter().flatten().any(|v| !v.is_finite()))
        {
            return Err("door_plane must be finite".into());
        }
        // a plane's normal has a direction: a zero vector gives the shading nothing to face
        if let Some([_, n]) = self.door_plane {
            if n.iter().map(|v| v * v).sum::<f64>() <= 0.0 {
                return Err(format!(
                    "door_plane normal [{}] is zero — expected the door leaf's normal",
                    n.map(crate::friction::short_number).join(", ")
                ));
            }
        }
        self.camera
            .as_ref()
            .map_or(Ok(()), Camera::validate)
            .map_err(|e| e.to_string())
    }
}
