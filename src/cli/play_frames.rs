//! `kestrel play --out DIR`: the frames' folder, and what a failed play removes from it;
//! `--compare SCENE --frame-errors CSV`: one row per compared frame, squared errors [m²]
//! (Σ error_m2 / Σ norm_m2 = playback_error²) and both sides' reduced coordinates.

use std::path::{Path, PathBuf};

use kestrel::reduced::{FrameError, ReducedModel};

use super::play::PlayArgs;
use super::CliError;

/// A note on stderr when the model is of a version without a checksum (read as before).
pub fn note_unchecked(model: &Path) {
    if ReducedModel::unchecked_file(model) {
        eprintln!(
            "note: {}: a model of version 1 or 2 has no checksum, so damage to it cannot be \
             told (precompute it again to add one)",
            model.display()
        );
    }
}

/// Removes what a failed play added to `--out`, given the frames it wrote (0 to n − 1);
/// returns the number of frames removed.
pub type Undo = Box<dyn FnOnce(usize) -> usize>;

/// The error of a play whose frames were removed (`removed` of them): an interrupted one
/// says how many.
pub fn undone(e: CliError, removed: usize) -> CliError {
    match e.code.checked_sub(128) {
        Some(sig) if sig > 0 => super::interrupt::interrupted(
            i32::from(sig),
            &format!("{} removed", super::interrupt::count(removed, "frame")),
        ),
        _ => e,
    }
}

/// The files a play reads: the model, and the `--compare` scene with its card.
pub fn play_inputs(args: &PlayArgs) -> Vec<PathBuf> {
    let compared = args.compare.iter().flat_map(|s| super::scene_inputs(s));
    std::iter::once(args.model.clone())
        .chain(compared)
        .collect()
}

/// Checks the `--out` folder (created, none of the `rendered` frames replaced without
/// `--force` nor one of the files read); the image size, and how to remove the frames written and the folders made
/// (`render`'s rule: frames replaced under `--force` stay replaced).
#[cfg(feature = "render")]
pub fn prepare_frames(
    args: &PlayArgs,
    dir: &Path,
    rendered: usize,
) -> Result<((u32, u32), Undo), CliError> {
    let size = super::parse_size(&args.size, "960x720")?;
    let before = super::render::FramesBefore::of(dir, rendered);
    let inputs = play_inputs(args);
    super::check_frames_of(dir, rendered, args.output.force, &inputs)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::failed(format!("cannot create {}: {e}", dir.display())))?;
    let dir = dir.to_path_buf();
    Ok((size, Box::new(move |n| before.remove_new(&dir, n))))
}

#[cfg(not(feature = "render"))]
pub fn prepare_frames(_: &PlayArgs, _: &Path, _: usize) -> Result<((u32, u32), Undo), CliError> {
    Err(CliError::input(
        "--out: kestrel was built without the render feature",
    ))
}

/// Most frames `--frame-errors` records (they are held in memory: 4r values and a few
/// numbers a frame, and the CSV's text).
pub const MAX_FRAME_ERROR_ROWS: usize = 100_000;

/// `--frame-errors`: one row a frame, squared errors \[m²\] then q, q̇, c, ċ (r values each).
pub fn frame_errors_csv(model: &ReducedModel, rows: &[FrameError]) -> String {
    use std::fmt::Write;
    let mut out = String::from(
        "frame,t_s,segment,entry,error_m2,norm_m2,projection_m2,library_m2,played_library_m2,\
         flow_step_m2,followed,followed_irf",
    );
    for name in ["q", "qdot", "c", "cdot"] {
        for k in 1..=model.rank {
            let _ = write!(out, ",{name}{k}");
        }
    }
    out.push('\n');
    for (n, f) in rows.iter().enumerate() {
        let entry = model
            .info
            .palette
            .get(f.entry)
            .map_or("", |p| p.name.as_str());
        let _ = write!(
            out,
            "{n},{},{},{entry},{},{},{},{},{},{},{},{}",
            f.t_s,
            f.segment + 1,
            f.error_m2,
            f.norm_m2,
            f.projection_m2,
            cell(f.library_m2),
            cell(f.played_library_m2),
            cell(f.flow_step_m2),
            cell(f.followed),
            cell(f.followed_irf)
        );
        for v in f.q.iter().chain(&f.qdot).chain(&f.c).chain(&f.cdot) {
            let _ = write!(out, ",{v}");
        }
        out.push('\n');
    }
    out
}

/// A CSV cell of an optional value: empty when there is none.
fn cell<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// `AZ` or `AZ,EL` in degrees, finite.
pub fn parse_sky_rotation(text: &str) -> Result<(f64, f64), CliError> {
    let bad = || {
        CliError::input(format!(
            "--sky-rotation `{text}`: expected AZ or AZ,EL in degrees, e.g. 90,20"
        ))
    };
    let mut parts = text.split(',').map(|p| p.trim().parse::<f64>());
    let az = parts.next().and_then(Result::ok).ok_or_else(bad)?;
    let el = match parts.next() {
        Some(p) => p.map_err(|_| bad())?,
        None => 0.0,
    };
    if parts.next().is_some() || !az.is_finite() || !el.is_finite() {
        return Err(bad());
    }
    Ok((az, el))
}
