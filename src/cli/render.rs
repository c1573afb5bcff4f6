//! `kestrel render SCENE`: simulates a scene as `kestrel run` does (or reads a `--record`ed
//! file) and renders frames to `DIR/frame_NNNNN.png`, with a progress bar on stderr.

use std::ffi::{OsStr, OsString};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::ProgressBar;
use serde::Serialize;

use kestrel::cloth::record::Recording;
use kestrel::cloth::{check_steps, ClothPipeline};
use kestrel::render::{
    frame_path, positions, render_recording, world_field, ColorBy, FrameTimings, Renderer,
    SceneView,
};

use super::interrupt::Watch;
use super::CliError;

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Scene file (TOML), e.g. scenes/provot_sheet_17.toml; not with --from.
    #[arg(required_unless_present = "from")]
    pub scene: Option<PathBuf>,
    /// Render this record (written by `kestrel run --record`) instead of simulating.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scene", "frames", "every"])]
    pub from: Option<PathBuf>,
    /// Frames to render: the start, then one every K steps.
    #[arg(long, value_name = "N", value_parser = super::whole::<usize>("of frames from 1 to 1000000"))]
    pub frames: Option<usize>,
    /// Folder of the frames (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Image size in pixels.
    #[arg(long, default_value = "1280x720", value_name = "WxH")]
    pub size: String,
    /// Steps between frames (default: the scene's steps spread over the frames).
    #[arg(long, value_name = "K", value_parser = super::whole::<u64>("of steps from 1 to 18446744073709551615"))]
    pub every: Option<u64>,
    /// Colour the cloth by strain, friction or energy, with a legend.
    #[arg(long, value_name = "QUANTITY")]
    pub color_by: Option<ColorBy>,
    /// Fixed colour-map range, e.g. 0:0.1 (default: per frame, rounded to 1, 2, 5 × 10ⁿ).
    #[arg(long, value_name = "LO:HI", requires = "color_by")]
    pub range: Option<String>,
    /// Also encode the frames into this video with ffmpeg (when on PATH).
    #[arg(long, value_name = "FILE")]
    pub video: Option<PathBuf>,
    /// Frames per second of the video.
    #[arg(long, default_value_t = 30, value_name = "FPS", value_parser = super::whole::<u32>("of frames per second from 1 to 4294967295"))]
    pub fps: u32,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

/// Mean, median and largest of one stage over the frames [ms].
#[derive(Debug, Serialize)]
struct Stat {
    mean_ms: f64,
    median_ms: f64,
    max_ms: f64,
}

impl Stat {
    fn of(mut v: Vec<f64>) -> Self {
        if v.is_empty() {
            return Self {
                mean_ms: 0.0,
                median_ms: 0.0,
                max_ms: 0.0,
            };
        }
        v.sort_by(f64::total_cmp);
        Self {
            mean_ms: v.iter().sum::<f64>() / v.len() as f64,
            median_ms: v[v.len() / 2],
            max_ms: v[v.len() - 1],
        }
    }
}

/// The summary; `--json` prints it as is.
#[derive(Debug, Serialize)]
struct RenderSummary {
    source: String,
    adapter: kestrel::render::AdapterSummary,
    width: u32,
    height: u32,
    frames: usize,
    steps: u64,
    every: u64,
    color_by: Option<String>,
    out: String,
    /// Time spent stepping the simulation [ms].
    simulate_ms: f64,
    render: Stat,
    readback: Stat,
    png: Stat,
    /// Wall time of the whole command after the adapter was opened [ms].
    wall_ms: f64,
    video: Option<String>,
}

/// Most frames one render writes.
const MAX_FRAMES: usize = 1_000_000;

fn parse_range(s: &str) -> Result<(f32, f32), CliError> {
    let bad = || {
        CliError::input(format!(
            "--range {s}: expected LO:HI with LO < HI, e.g. 0:0.1"
        ))
    };
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let (lo, hi): (f32, f32) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(CliError::input(format!(
            "--range {}: LO and HI must be finite numbers within ±3.4e38 (the colour scale is \
             single precision), e.g. 0:0.1",
            kestrel::input::printable(s)
        )));
    }
    if lo >= hi {
        return Err(bad());
    }
    Ok((lo, hi))
}

/// What a render found before it wrote: which frames were there (a link too, dangling or
/// not) and the topmost folder of `--out` that was not. On a failed run the frames it wrote
/// that were not there before are removed, and the folders it made if they are left empty,
/// so a failed command leaves no new file. Frames replaced under `--force` stay replaced;
/// a frame another process made meanwhile is not touched (this run did not write it).
pub(super) struct FramesBefore {
    existed: Vec<bool>,
    made: Option<PathBuf>,
}

impl FramesBefore {
    pub(super) fn of(out: &Path, frames: usize) -> Self {
        let there = |p: &Path| p.symlink_metadata().is_ok();
        let made = out
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !there(a))
            .last()
            .map(Path::to_path_buf);
        Self {
            existed: (0..frames).map(|n| there(&frame_path(out, n))).collect(),
            made,
        }
    }

    /// Removes what the run added, `written` its frames written (0 to written − 1); returns
    /// the number of frames removed.
    pub(super) fn remove_new(&self, out: &Path, written: usize) -> usize {
        let removed = (self.existed.iter().take(written).enumerate())
            .filter(|(n, &e)| !e && std::fs::remove_file(frame_path(out, *n)).is_ok())
            .count();
        if let Some(top) = &self.made {
            // each fails, leaving the folder, unless it is empty
            for dir in out.ancestors().take_while(|a| a.starts_with(top)) {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
        }
        removed
    }

    /// The error of a render stopped by signal `sig` with frames 0 to `written` − 1 written:
    /// what it added is removed first (frames replaced under `--force` stay replaced).
    pub(super) fn interrupted(&self, out: &Path, written: usize, sig: i32) -> CliError {
        let removed = self.remove_new(out, written);
        let frames = super::interrupt::count(removed, "frame");
        super::interrupt::interrupted(sig, &format!("{frames} removed"))
    }
}

/// Refuses to start when a frame or the video would be replaced without `--force`, when the
/// video names a folder, or when ffmpeg is not there to make it.
/// Neither may be one of the files read (the record, or the scene and its card).
fn check_outputs(args: &RenderArgs, frames: usize) -> Result<(), CliError> {
    let inputs = match (&args.from, &args.scene) {
        (Some(record), _) => vec![record.clone()],
        (None, Some(scene)) => super::scene_inputs(scene),
        (None, None) => Vec::new(),
    };
    super::check_frames_of(&args.out, frames, args.output.force, &inputs)?;
    if let Some(v) = &args.video {
        // a folder is never replaced, also with --force; without ffmpeg no video can be made
        super::check_output_of(v, args.output.force, &inputs)?;
        if !on_path("ffmpeg") {
            return Err(CliError::input(no_ffmpeg(&args.out, v, args.fps)));
        }
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::failed(format!("cannot create {}: {e}", args.out.display())))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn run(args: RenderArgs) -> Result<(), CliError> {
    let (width, height) = super::parse_size(&args.size, "1280x720")?;
    let range = args.range.as_deref().map(parse_range).transpose()?;
    if args.fps == 0 {
        return Err(CliError::input("--fps must be >= 1"));
    }
    let t_start;
    let mut renderer;
    let mut timings: Vec<FrameTimings> = Vec::new();
    let mut simulate = Duration::ZERO;
    let (source, steps, every, before, watch);
    if let Some(from) = &args.from {
        // before the record is read or the renderer made: what a record cannot show
        if let Some(by) = args.color_by.filter(|b| !b.from_positions()) {
            return Err(CliError::input(format!(
                "--from {}: a record holds positions only; --color-by {by} needs a simulation \
                 (render the scene file instead)",
                from.display()
            )));
        }
        let rec = Recording::read(from).map_err(CliError::input)?;
        check_record(from, &rec)?;
        before = FramesBefore::of(&args.out, rec.frames.len());
        check_outputs(&args, rec.frames.len())?;
        watch = Watch::start();
        renderer = Renderer::new(width, height).map_err(|e| {
            before.remove_new(&args.out, 0);
            CliError::failed(e)
        })?;
        t_start = Instant::now();
        let pb = super::progress_bar(rec.frames.len() as u64, args.output.json, super::FRAMES_BAR);
        let done = std::cell::Cell::new(0);
        let result = render_recording(
            &mut renderer,
            &rec,
            args.color_by,
            range,
            &args.out,
            args.output.force,
            |p| {
                done.set(p.done);
                pb.set_position(p.done as u64);
                match watch.signal() {
                    Some(_) => ControlFlow::Break(()),
                    None => ControlFlow::Continue(()),
                }
            },
        );
        if let Some(sig) = watch.signal() {
            pb.abandon();
            return Err(before.interrupted(&args.out, done.get(), sig));
        }
        match result {
            Ok(t) => timings = t,
            Err(e) => {
                pb.abandon();
                before.remove_new(&args.out, done.get());
                return Err(CliError::written(e));
            }
        }
        pb.finish_and_clear();
        source = from.display().to_string();
        every = rec.info.every as u64;
        steps = rec.frames.last().map(|f| f.step).unwrap_or(0);
    } else {
        let path = args
            .scene
            .as_ref()
            .ok_or_else(|| CliError::input("give a scene file or --from FILE"))?;
        let scene = super::load_dynamic(path, "is a virtual KES test; render a dynamic scene")?;
        let mut world = scene.world;
        let frames = args.frames.unwrap_or(60);
        if !(1..=MAX_FRAMES).contains(&frames) {
            return Err(CliError::input(format!(
                "--frames {frames}: must be 1 to {MAX_FRAMES}"
            )));
        }
        let k = match args.every {
            Some(0) => return Err(CliError::input("--every must be >= 1")),
            Some(k) => k,
            None => (scene.steps / (frames.max(2) as u64 - 1)).max(1),
        };
        check_steps("--frames x --every", (frames as u64 - 1).saturating_mul(k))
            .map_err(CliError::input)?;
        if args.color_by == Some(ColorBy::Friction)
            && world_field(ColorBy::Friction, &world).is_none()
        {
            return Err(CliError::input(format!(
                "--color-by friction needs KES connectors (material kind = \"kes\"); {} uses {}",
                path.display(),
                world.material.name()
            )));
        }
        before = FramesBefore::of(&args.out, frames);
        check_outputs(&args, frames)?;
        watch = Watch::start();
        // a failure with frames 0 to n − 1 written: what the run added is removed
        let undo = |n: usize, e: CliError| {
            before.remove_new(&args.out, n);
            e
        };
        renderer = Renderer::new(width, height).map_err(|e| undo(0, CliError::failed(e)))?;
        t_start = Instant::now();
        let mut view = SceneView::of_world(&world, scene.camera);
        if let Some(door) = scene.reduced.as_ref().and_then(|r| r.door.as_ref()) {
            view = view.with_door(door, &positions(&world));
        }
        renderer
            .set_scene(&view, &positions(&world))
            .map_err(|e| undo(0, CliError::failed(e)))?;
        let pb = super::progress_bar(frames as u64, args.output.json, super::FRAMES_BAR);
        let mut pipeline = ClothPipeline::new();
        let fail = |pb: &ProgressBar, n: usize, e: CliError| {
            pb.abandon();
            undo(n, e)
        };
        // between steps and frames: an interrupt removes the frames 0 to n − 1 written
        let stop = |pb: &ProgressBar, n: usize| match watch.signal() {
            Some(sig) => {
                pb.abandon();
                Err(before.interrupted(&args.out, n, sig))
            }
            None => Ok(()),
        };
        for n in 0..frames {
            if n > 0 {
                let t0 = Instant::now();
                for _ in 0..k {
                    stop(&pb, n)?;
                    pipeline.step(&scene.params, &mut world).map_err(|e| {
                        fail(&pb, n, CliError::failed(format!("{}: {e}", path.display())))
                    })?;
                }
                simulate += t0.elapsed();
            }
            let field = args
                .color_by
                .and_then(|by| world_field(by, &world))
                .map(|f| f.with_range(range));
            let (png, t) = renderer
                .render_png(&positions(&world), field.as_ref())
                .map_err(|e| fail(&pb, n, CliError::failed(e)))?;
            kestrel::atomic::write_atomic(&frame_path(&args.out, n), &png, args.output.force)
                .map_err(|e| fail(&pb, n, CliError::written(e)))?;
            timings.push(t);
            pb.inc(1);
            stop(&pb, n + 1)?;
        }
        pb.finish_and_clear();
        source = path.display().to_string();
        every = k;
        steps = world.steps;
    }
    // a video that could not be made fails the command: its frames go too (ffmpeg gets the
    // terminal's Ctrl-C as well, and fails)
    let video = match &args.video {
        Some(v) => {
            let new_video = v.symlink_metadata().is_err();
            let made = make_video(&args.out, v, args.fps, args.output.force).map_err(|e| {
                match watch.signal() {
                    Some(sig) => before.interrupted(&args.out, timings.len(), sig),
                    None => {
                        before.remove_new(&args.out, timings.len());
                        e
                    }
                }
            })?;
            // a signal to kestrel alone (not ffmpeg's process group) while ffmpeg ran
            if let Some(sig) = watch.signal() {
                if new_video {
                    let _ = std::fs::remove_file(v);
                }
                return Err(before.interrupted(&args.out, timings.len(), sig));
            }
            Some(made)
        }
        None => None,
    };
    let summary = RenderSummary {
        source,
        adapter: renderer.adapter().clone(),
        width,
        height,
        frames: timings.len(),
        steps,
        every,
        color_by: args.color_by.map(|c| c.name().to_string()),
        out: args.out.display().to_string(),
        simulate_ms: ms(simulate),
        render: Stat::of(timings.iter().map(|t| ms(t.render)).collect()),
        readback: Stat::of(timings.iter().map(|t| ms(t.readback)).collect()),
        png: Stat::of(timings.iter().map(|t| ms(t.encode)).collect()),
        wall_ms: ms(t_start.elapsed()),
        video,
    };
    super::print_summary(&summary, args.output.json, print_table)
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// ffmpeg's arguments that encode `pattern` (numbered PNG frames) into `video`; the padding
/// makes both sides even, as libx264 with yuv420p needs.
fn ffmpeg_args(fps: u32, pattern: &Path, video: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["-framerate", &fps.to_string(), "-i"]
        .iter()
        .map(OsString::from)
        .collect();
    args.push(pattern.into());
    args.extend(
        [
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-vf",
            "pad=ceil(iw/2)*2:ceil(ih/2)*2",
        ]
        .map(OsString::from),
    );
    args.push(video.into());
    args
}

/// `word` as one POSIX shell word: as is when it holds only safe characters, else in single
/// quotes (a quote inside written `'\''`).
fn shell_word(word: &OsStr) -> String {
    let w = word.to_string_lossy();
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !w.is_empty() && w.chars().all(safe) {
        w.into_owned()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// The ffmpeg command line a user can paste into a shell.
fn ffmpeg_hint(fps: u32, pattern: &Path, video: &Path) -> String {
    let words: Vec<String> = ffmpeg_args(fps, pattern, video)
        .iter()
        .map(|a| shell_word(a))
        .collect();
    format!("ffmpeg {}", words.join(" "))
}

/// Why `--video` cannot be made: ffmpeg is not on PATH; how to make it later from the frames.
fn no_ffmpeg(dir: &Path, video: &Path, fps: u32) -> String {
    format!(
        "--video {}: ffmpeg is not on PATH, so no video can be made (install it, e.g. \
         `apt-get install ffmpeg`; or render without --video and run: {})",
        video.display(),
        ffmpeg_hint(fps, &dir.join("frame_%05d.png"), video)
    )
}

/// Runs ffmpeg on the frames into a temporary beside the video (`.NAME.PID.tmp.EXT`: ffmpeg
/// picks the container by the extension), then puts it in place (replacing only with
/// `force`): the video's path, or why it could not be made, leaving no file.
fn make_video(dir: &Path, video: &Path, fps: u32, force: bool) -> Result<String, CliError> {
    let pattern = dir.join("frame_%05d.png");
    if !on_path("ffmpeg") {
        return Err(CliError::failed(no_ffmpeg(dir, video, fps)));
    }
    let name = video.file_name().unwrap_or_default().to_string_lossy();
    let ext = video.extension().unwrap_or_default().to_string_lossy();
    let tmp = video.with_file_name(format!(".{name}.{}.tmp.{ext}", std::process::id()));
    let status = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y"])
        .args(ffmpeg_args(fps, &pattern, &tmp))
        .status();
    let failed = |e: String| CliError::failed(format!("{e} making {}", video.display()));
    let placed = match status {
        Ok(s) if s.success() && force => {
            std::fs::rename(&tmp, video).map_err(|e| failed(e.to_string()))
        }
        // a video that appeared while the frames were made is not replaced (exit 2)
        Ok(s) if s.success() => std::fs::hard_link(&tmp, video).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => CliError::input(format!(
                "{} exists; pass --force to overwrite it",
                video.display()
            )),
            _ => failed(e.to_string()),
        }),
        Ok(s) => Err(failed(format!("ffmpeg failed ({s})"))),
        Err(e) => Err(failed(format!("cannot run ffmpeg: {e}"))),
    };
    let _ = std::fs::remove_file(&tmp);
    placed?;
    Ok(video.display().to_string())
}

fn print_table(s: &RenderSummary) {
    println!("source       {}", s.source);
    println!("adapter      {}", s.adapter);
    println!(
        "frames       {} at {}x{} in {} (step {}, every {} steps){}",
        s.frames,
        s.width,
        s.height,
        s.out,
        s.steps,
        s.every,
        s.color_by
            .as_ref()
            .map(|c| format!(", coloured by {c}"))
            .unwrap_or_default()
    );
    if s.simulate_ms > 0.0 {
        println!("simulation   {:.1} ms stepping", s.simulate_ms);
    }
    for (name, st) in [
        ("render", &s.render),
        ("readback", &s.readback),
        ("png", &s.png),
    ] {
        println!(
            "{name:<12} {:.2} ms/frame mean, {:.2} median, {:.2} max",
            st.mean_ms, st.median_ms, st.max_ms
        );
    }
    println!("wall time    {:.1} ms", s.wall_ms);
    if let Some(v) = &s.video {
        println!("video        {v}");
    }
}

/// A record that has frames, all of them finite, before anything is written: the error names
/// the record (and the frame and particle of the first position that is not finite).
fn check_record(from: &Path, rec: &Recording) -> Result<(), CliError> {
    if rec.frames.is_empty() {
        return Err(CliError::input(format!(
            "--from {}: the record has no frames",
            from.display()
        )));
    }
    for (n, f) in rec.frames.iter().enumerate() {
        if let Some(k) = f
            .positions
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return Err(CliError::input(format!(
                "--from {}: frame {n} (step {}), particle {k}: a position is not finite (the \
                 simulation that wrote the record blew up)",
                from.display(),
                f.step
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hint pasted into bash gives ffmpeg exactly the arguments kestrel would pass.
    #[test]
    fn the_ffmpeg_hint_parses_in_bash_into_the_same_arguments() {
        let pattern = Path::new("out dir/it's/frame_%05d.png");
        let video = Path::new("cloth (1).mp4");
        let hint = ffmpeg_hint(30, pattern, video);
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "set -- {}; printf '%s\\n' \"$@\"",
                hint.trim_start_matches("ffmpeg ")
            ))
            .output()
            .expect("bash runs");
        assert!(out.status.success(), "{hint}");
        let words: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect();
        let expected: Vec<String> = ffmpeg_args(30, pattern, video)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(words, expected, "{hint}");
        assert!(hint.contains("'pad=ceil(iw/2)*2:ceil(ih/2)*2'"), "{hint}");
    }
}
