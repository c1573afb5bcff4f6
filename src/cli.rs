//! The subcommands: each module holds its clap arguments and a `run` that calls the library
//! and prints. Binary-only (not part of the library).

pub mod interrupt;
pub mod play;
pub mod play_frames;
pub mod precompute;
#[cfg(feature = "render")]
pub mod render;
pub mod run;

use std::fmt;

use indicatif::{ProgressBar, ProgressStyle};
use kestrel::WriteError;

pub mod fit;
pub mod fit_values;
pub mod plot;
pub mod report;
pub mod simulate;
pub mod test;
pub mod tui;
pub mod validate;
pub mod values;

/// Progress bar templates counting frames and simulation steps.
#[cfg(feature = "render")]
pub const FRAMES_BAR: &str = "{bar:40} {pos}/{len} frames  {elapsed_precise} (eta {eta})";
pub const STEPS_BAR: &str = "{bar:40} {pos}/{len} steps  {elapsed_precise} (eta {eta})";

/// A progress bar on stderr of `len` positions drawn with the indicatif `template`, or a
/// hidden one when `hidden` (`--json` output, or work too small to show).
pub fn progress_bar(len: u64, hidden: bool, template: &str) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style);
    }
    pb
}

/// The value parser of a whole-number option whose valid values are `range` (words for the
/// message: `from 1 to 8`): a negative number, a fraction or a word gets the range in its
/// message (exit 2), not clap's "invalid digit"; a number of the option's type goes on to the
/// option's own range check.
pub fn whole<T>(range: &'static str) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
{
    move |s: &str| {
        s.trim()
            .parse::<T>()
            .map_err(|_| format!("expected a whole number {range}"))
    }
}

/// `--size WxH` in pixels, each side within the renderer's
/// [`IMAGE_SIDE_PX`](kestrel::render::IMAGE_SIDE_PX) (16 to 8192: wgpu's default texture
/// limit); `example` is shown in the error.
#[cfg(feature = "render")]
pub fn parse_size(s: &str, example: &str) -> Result<(u32, u32), CliError> {
    let (lo, hi) = kestrel::render::IMAGE_SIDE_PX;
    let bad = || {
        CliError::input(format!(
            "--size {s}: expected WxH with sides of {lo} to {hi} pixels, e.g. {example}"
        ))
    };
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let side = |t: &str| {
        t.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| (lo..=hi).contains(v))
            .ok_or_else(bad)
    };
    Ok((side(w)?, side(h)?))
}

/// Refuses, before any work, a `--out` folder for `frames` rendered frames that is not a
/// folder, or one of whose frames `write_atomic` would refuse (exit 2).
#[cfg(feature = "render")]
pub fn check_frames(dir: &std::path::Path, frames: usize, force: bool) -> Result<(), CliError> {
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::input(format!(
            "--out {}: exists and is not a folder",
            dir.display()
        )));
    }
    (0..frames).try_for_each(|n| check_output(&kestrel::render::frame_path(dir, n), force))
}

/// `check_frames`, and no frame this render writes is one of the command's `inputs` (a
/// record or a card named `frame_00000.png` in the `--out` folder would be replaced).
#[cfg(feature = "render")]
pub fn check_frames_of(
    dir: &std::path::Path,
    frames: usize,
    force: bool,
    inputs: &[std::path::PathBuf],
) -> Result<(), CliError> {
    check_frames(dir, frames, force)?;
    let folder = kestrel::atomic::resolved(dir);
    for input in inputs {
        let found = kestrel::atomic::resolved(input);
        if found.parent() != Some(folder.as_path()) {
            continue;
        }
        let n = found
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("frame_")?.strip_suffix(".png")?.parse().ok())
            .filter(|&n: &usize| n < frames);
        if let Some(message) = n.and_then(|n| {
            kestrel::atomic::input_clash(&kestrel::render::frame_path(dir, n), [input])
        }) {
            return Err(CliError::input(message));
        }
    }
    Ok(())
}

/// The files a scene command reads: the scene and its fabric card.
pub fn scene_inputs(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    kestrel::scene::Scene::files_read(path)
}

/// Refuses, before any work, an output that exists when `--force` is off (exit 2).
pub fn check_output(path: &std::path::Path, force: bool) -> Result<(), CliError> {
    kestrel::atomic::check_target(path, force).map_err(CliError::input)
}

/// `check_output`, and `path` is none of the command's `inputs`: with `--force` it would be
/// replaced by what was made from it (compared as they resolve, `resolved`).
pub fn check_output_of<P: AsRef<std::path::Path>>(
    path: &std::path::Path,
    force: bool,
    inputs: impl IntoIterator<Item = P>,
) -> Result<(), CliError> {
    check_output(path, force)?;
    match kestrel::atomic::input_clash(path, inputs) {
        Some(message) => Err(CliError::input(message)),
        None => Ok(()),
    }
}

/// Refuses, before any work, two outputs of one command that name the same file (one would
/// replace the other): `outputs` are (option, path). Paths are compared as they resolve
/// (links, `.`, `..`, also through folders still to be made).
pub fn check_distinct(outputs: &[(&str, &std::path::Path)]) -> Result<(), CliError> {
    let keys: Vec<std::path::PathBuf> = outputs
        .iter()
        .map(|(_, p)| kestrel::atomic::resolved(p))
        .collect();
    for (i, (a, _)) in outputs.iter().enumerate() {
        for (j, (b, pb)) in outputs.iter().enumerate().skip(i + 1) {
            if keys[i] == keys[j] {
                return Err(CliError::input(format!(
                    "{a} and {b} name the same file {}: one would replace the other",
                    pb.display()
                )));
            }
        }
    }
    Ok(())
}

/// Errors that may be a refused overwrite, or another refusal of what was to be written.
pub trait WriteFailure: fmt::Display {
    fn write_error(&self) -> Option<&WriteError>;

    /// What was to be written is refused as it stands (bad input, exit 2), before any write.
    fn refused(&self) -> bool {
        false
    }
}

macro_rules! write_failure {
    ($($t:ty),*) => {$(
        impl WriteFailure for $t {
            fn write_error(&self) -> Option<&WriteError> {
                match self {
                    Self::Write(e) => Some(e),
                    _ => None,
                }
            }
        }
    )*};
}

write_failure!(
    kestrel::cloth::record::RecordError,
    kestrel::reduced::ReducedError,
    kestrel::PlotError,
    kestrel::kes::WriteCurveError
);

impl WriteFailure for kestrel::ParamsError {
    fn write_error(&self) -> Option<&WriteError> {
        match self {
            Self::Write(e) => Some(e),
            _ => None,
        }
    }

    /// A card its reader would refuse (`FabricParams::write` validates first).
    fn refused(&self) -> bool {
        matches!(self, Self::Invalid { .. } | Self::Property { .. })
    }
}
#[cfg(feature = "render")]
write_failure!(kestrel::render::RenderError);

impl WriteFailure for WriteError {
    fn write_error(&self) -> Option<&WriteError> {
        Some(self)
    }
}

/// A dynamic scene file; a virtual KES test is an error "PATH `refusal`".
pub fn load_dynamic(
    path: &std::path::Path,
    refusal: &str,
) -> Result<kestrel::scene::DynamicScene, CliError> {
    match kestrel::scene::Scene::load(path).map_err(CliError::input)? {
        kestrel::scene::Scene::Dynamic(s) => Ok(*s),
        kestrel::scene::Scene::VirtualKes(_) => {
            Err(CliError::input(format!("{} {refusal}", path.display())))
        }
    }
}

/// Prints a command's summary: one JSON object on a line with `--json`, else the `table`.
pub fn print_summary<T: serde::Serialize>(
    summary: &T,
    json: bool,
    table: impl FnOnce(&T),
) -> Result<(), CliError> {
    if json {
        println!(
            "{}",
            serde_json::to_string(summary).map_err(CliError::failed)?
        );
    } else {
        table(summary);
    }
    Ok(())
}

/// An error to print to the user, with the exit code to return.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    /// 1: the work failed; 2: bad usage or bad input.
    pub code: u8,
}

impl CliError {
    pub fn input(message: impl fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: 2,
        }
    }

    pub fn failed(message: impl fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: 1,
        }
    }

    /// A failed write: bad usage (2) when what was to be written is refused, or the target is
    /// a folder, a device or a FIFO, a name too long, or exists and `--force` is off (also one
    /// that appeared while working), else the work failed (1).
    pub fn written(e: impl WriteFailure) -> Self {
        if e.refused() {
            return Self::input(e);
        }
        match e.write_error() {
            Some(
                WriteError::Exists { .. }
                | WriteError::Folder { .. }
                | WriteError::NotAFile { .. }
                | WriteError::NameTooLong { .. },
            ) => Self::input(e),
            _ => Self::failed(e),
        }
    }

    pub fn exit_code(&self) -> u8 {
        self.code
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// How to read KES files whose metadata lacks the test, direction or gauge length: shared by
/// the commands that read curves.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CurveArgs {
    /// Test of files whose metadata has none (tensile, shear, bending, compression, friction,
    /// roughness).
    #[arg(long)]
    pub test: Option<kestrel::kes::KesTest>,
    /// Direction of files whose metadata has none (warp, weft, bias; normal for compression).
    #[arg(long)]
    pub direction: Option<kestrel::kes::Direction>,
    /// Gauge length [mm] of tensile files with an `elongation [mm]` column (strain =
    /// elongation / gauge length), unless the file has a `# gauge length [mm]:` line.
    #[arg(long, value_name = "MM")]
    pub gauge_length: Option<f64>,
}

impl CurveArgs {
    pub fn overrides(&self) -> Result<kestrel::kes::CurveOverrides, CliError> {
        Ok(kestrel::kes::CurveOverrides {
            test: self.test,
            direction: self.direction,
            gauge_length: gauge_length_m(self.gauge_length)?,
        })
    }
}

/// The KES files the command line names, a folder opened as the workbench opens it
/// (`kestrel::kes::folder`: its `.csv` files, or those of each sub-folder); the files of those
/// folders that are not `.csv` are named in a note on stderr.
pub fn kes_paths(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>, CliError> {
    let found = kestrel::kes::folder::kes_files(paths).map_err(CliError::input)?;
    if let Some(note) = found.skipped_note() {
        eprintln!("note: {note}");
    }
    Ok(found.files)
}

/// What the command line's KES `paths` read: each path, and the files of its folders (as
/// `kes_paths` opens them, without its note); outputs are checked against all of them.
pub fn curve_inputs(paths: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut files = paths.to_vec();
    if let Ok(found) = kestrel::kes::folder::kes_files(paths) {
        files.extend(found.files);
    }
    files
}

/// `--gauge-length MM` in metres, refused outside a file's gauge lengths (1 mm to 10 m).
pub fn gauge_length_m(mm: Option<f64>) -> Result<Option<f64>, CliError> {
    let (lo, hi) = kestrel::kes::import::GAUGE_LENGTH_RANGE_M;
    match mm {
        Some(v) if (lo..=hi).contains(&(v * 1e-3)) => Ok(Some(v * 1e-3)),
        Some(v) => Err(CliError::input(format!(
            "--gauge-length {}: expected a positive length in mm (1 to 10000), e.g. \
             --gauge-length 200",
            kestrel::friction::short_number(v)
        ))),
        None => Ok(None),
    }
}

/// What a command that writes files and prints a summary does with them: shared by `run`,
/// `render`, `precompute` and `play`.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct OutputArgs {
    /// Overwrite existing output files.
    #[arg(long)]
    pub force: bool,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// How to read generic loop records (any delimited file): shared by `values` and `fit`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LoopArgs {
    /// Generic loop: x column, by header text (`Position [mm]`) or 1-based index.
    #[arg(long, requires = "y")]
    pub x: Option<String>,
    /// Generic loop: unit of the x column (m, mm, um, %, -, rad, deg, 1/m, 1/cm, …);
    /// default: the header's brackets.
    #[arg(long, requires = "x")]
    pub x_unit: Option<String>,
    /// Generic loop: y column, by header text (`Friction [uN]`) or 1-based index.
    #[arg(long, requires = "x")]
    pub y: Option<String>,
    /// Generic loop: unit of the y column (N, mN, uN, gf, N/m, gf/cm, …).
    #[arg(long, requires = "y")]
    pub y_unit: Option<String>,
    /// Generic loop: flip the sign of x.
    #[arg(long, requires = "x")]
    pub flip_x: bool,
    /// Generic loop: flip the sign of y (a rig that logs the reaction).
    #[arg(long, requires = "y")]
    pub flip_y: bool,
    /// Generic loop: keep the rows where a column (in the file's unit) is above or below a
    /// value, e.g. `Normal [uN] > 1e6`.
    #[arg(long = "where", value_name = "FILTER", requires = "x")]
    pub filter: Option<String>,
}

impl LoopArgs {
    /// The loop reading spec, or None when no columns were named.
    pub fn spec(
        &self,
        direction: Option<kestrel::kes::Direction>,
    ) -> Result<Option<kestrel::kes::import::LoopSpec>, CliError> {
        use kestrel::kes::import::{ColumnRef, LoopColumn, LoopSpec, RowFilter};
        let (Some(x), Some(y)) = (&self.x, &self.y) else {
            return Ok(None);
        };
        let column = |text: &str| {
            text.parse::<ColumnRef>()
                .map_err(|e| CliError::input(format!("bad column `{text}`: {e}")))
        };
        let filter = match &self.filter {
            Some(f) => Some(f.parse::<RowFilter>().map_err(CliError::input)?),
            None => None,
        };
        Ok(Some(LoopSpec {
            x: LoopColumn {
                column: column(x)?,
                unit: self.x_unit.clone(),
                negate: self.flip_x,
            },
            y: LoopColumn {
                column: column(y)?,
                unit: self.y_unit.clone(),
                negate: self.flip_y,
            },
            filter,
            direction,
        }))
    }
}
