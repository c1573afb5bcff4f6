//! The numbers a model file may hold, checked on reading: every shape mean + U·q within
//! [`REACH_M`] of the origin on every axis, so playback, comparison and rendering stay finite;
//! a file shorter than its header announces is said to be truncated.

use crate::cloth::record::CAMERA_REACH_M;

use std::path::Path;

use crate::cloth::record::Truncated;
use crate::kes::units::four_digits;

use super::{ReducedError, ReducedModel};

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
