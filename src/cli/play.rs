//! `kestrel play MODEL --impulses SEQ`: replays a reduced model under an impulse sequence,
//! optionally renders PNG frames and compares with the full simulation (docs/reduced.md).

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use indicatif::ProgressBar;
use serde::Serialize;

#[cfg(feature = "render")]
use kestrel::reduced::transfer::{
    light_in_model_frame, mode_colours, sky_rotation, FrameShader, ShLight, Transfer,
    TransferSource,
};
use kestrel::reduced::{
    compare_frames, frames_of, parse_sequence, sequence_frames, Comparison, Player, ReducedError,
    ReducedModel, MAX_FLOW_HYSTERESIS, MAX_FLOW_NEIGHBOURS,
};
#[cfg(feature = "render")]
use kestrel::render::{frame_path, Renderer, SceneView};

use kestrel::scene::{DynamicScene, OffsetBlend};

use super::play_frames::{parse_sky_rotation, play_inputs, prepare_frames, MAX_FRAME_ERROR_ROWS};
use super::CliError;

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// Model file written by `kestrel precompute`.
    pub model: PathBuf,
    /// Impulse sequence `name:seconds,…` (names or keys of the palette), e.g.
    /// `open:1.2,stop:1,close:0.8,stop:2`.
    #[arg(long, value_name = "SEQ")]
    pub impulses: String,
    /// Render PNG frames into this folder (headless wgpu, as `kestrel render`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Render every n-th played frame.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = super::whole::<usize>("of frames, at least 1"))]
    pub every: usize,
    /// Image size in pixels (with --out).
    #[arg(long, default_value = "960x720", value_name = "WxH", requires = "out")]
    pub size: String,
    /// Shading of rendered frames: `transfer` (the model's reduced radiance transfer under
    /// the SH sky), `direct` (transfer computed on each rendered frame's mesh), `shadow` (the
    /// renderer's key light and shadow map); default: transfer when the model has one.
    #[arg(long, value_name = "KIND", value_parser = ["transfer", "direct", "shadow"])]
    pub shading: Option<String>,
    /// Turn the SH sky by AZ degrees about +y, then tilt it by EL degrees about +x.
    #[arg(long, value_name = "AZ[,EL]", default_value = "0")]
    pub sky_rotation: String,
    /// Shade with the first R of the model's r_a transfer modes only (1 ≤ R ≤ r_a; Fig. 9).
    #[arg(long, value_name = "R", requires = "out", value_parser = super::whole::<usize>("from 1 to the model's transfer rank r_a"))]
    pub transfer_rank: Option<usize>,
    /// Colour the frames by transfer mode K alone (1 ≤ K ≤ r_a): its irradiance under the sky
    /// on a diverging scale, blue −, grey 0, orange + (Fig. 13).
    #[arg(long, value_name = "K", requires = "out", value_parser = super::whole::<usize>("from 1 to the model's transfer rank r_a"), conflicts_with_all = ["transfer_rank", "shading"])]
    pub transfer_mode: Option<usize>,
    /// Play with this offset rule instead of the model's: `exponential` (eq. 12), `linear`
    /// (fitted offset dynamics) or `flow` (every frame from the nearest recorded frame).
    #[arg(long, value_name = "RULE", value_parser = ["exponential", "linear", "flow"])]
    pub offset: Option<String>,
    /// With the flow rule: average the steps of the K nearest recorded frames (weights 1/d²,
    /// eq. 9's distance), 1 ≤ K ≤ 8; default 1, the nearest frame alone.
    #[arg(long, value_name = "K", value_parser = super::whole::<usize>("of nearest frames from 1 to 8"))]
    pub flow_neighbours: Option<usize>,
    /// With the flow rule: orbit hysteresis H > 1, follow the IRF of the last match while its
    /// next frame is at most H times as far (eq. 9) as the nearest frame; default 1, off
    /// (re-match every frame).
    #[arg(long, value_name = "H")]
    pub flow_hysteresis: Option<f64>,
    /// With the flow rule and K > 1: taper the K nearest frames' weights to 0 at the
    /// (K + 1)-th frame's distance, w = 1/d² − 1/d²_{K+1}, so that the step does not jump when
    /// a frame enters or leaves the K nearest.
    #[arg(long)]
    pub flow_taper: bool,
    /// Also run the full simulation of this scene under the same sequence and report the
    /// relative l2 error of the playback.
    #[arg(long, value_name = "SCENE")]
    pub compare: Option<PathBuf>,
    /// With --compare: write every frame's errors [m²] and both sides' reduced coordinates
    /// (played q, q̇; the full simulation's c, ċ) to this CSV file.
    #[arg(long, value_name = "CSV", requires = "compare")]
    pub frame_errors: Option<PathBuf>,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

#[derive(Debug, Serialize)]
struct Summary {
    model: String,
    frames: usize,
    vertices: usize,
    rank: usize,
    /// The offset rule played: the model's, or `--offset`'s.
    offset: OffsetBlend,
    /// Nearest frames whose flow steps are averaged (`--flow-neighbours`; 1 with other rules).
    flow_neighbours: usize,
    /// Whether the flow's K nearest weights are tapered (`--flow-taper`).
    flow_taper: bool,
    /// Orbit hysteresis H of the flow (`--flow-hysteresis`; 1: off, and with other rules).
    flow_hysteresis: f64,
    /// Played frames per second, shape reconstruction (mean + U·q, door turn) included, one
    /// thread.
    frames_per_s: f64,
    /// Mean time per frame [µs].
    frame_us: f64,
    jumps: usize,
    ignored: usize,
    /// Each refused impulse: its place in the sequence, the time it came and why.
    refused: Vec<RefusedImpulse>,
    rendered: usize,
    out: Option<String>,
    compare: Option<Comparison>,
}

/// An impulse of the sequence that the player refused.
#[derive(Debug, Clone, Serialize)]
struct RefusedImpulse {
    /// 1-based place in `--impulses`.
    item: usize,
    name: String,
    /// Playback time when it came \[s\].
    at_s: f64,
    reason: String,
}

impl std::fmt::Display for RefusedImpulse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "#{} {} at {:.2} s: {}",
            self.item, self.name, self.at_s, self.reason
        )
    }
}

/// What one pass of the sequence gave: frames, jumps, refused impulses.
struct Pass {
    frames: usize,
    jumps: usize,
    refused: Vec<RefusedImpulse>,
}

/// Plays the whole sequence once; calls `frame` with each world shape.
fn play(
    model: &ReducedModel,
    seq: &[(usize, f64)],
    mut frame: impl FnMut(usize, &[[f32; 3]], &Player, &[f32]) -> Result<(), CliError>,
) -> Result<Pass, CliError> {
    let mut player = Player::new(model);
    let mut local = vec![0f32; 3 * model.vertices];
    let mut world = vec![[0f32; 3]; model.vertices];
    let mut n = 0;
    let mut refused = Vec::new();
    for (item, &(k, d)) in seq.iter().enumerate() {
        if let Err(r) = player.try_impulse(k) {
            refused.push(RefusedImpulse {
                item: item + 1,
                name: model.info.palette[k].name.clone(),
                at_s: n as f64 * model.info.frame_dt,
                reason: r.to_string(),
            });
        }
        for _ in 0..frames_of(d, model.info.frame_dt) {
            player.advance();
            player.shape(&mut local);
            player.to_world(&local, &mut world);
            frame(n, &world, &player, &local)?;
            n += 1;
        }
    }
    Ok(Pass {
        frames: n,
        jumps: player.jumps,
        refused,
    })
}

/// Plays the sequence again, rendering every `--every`-th frame into `dir`, counting the
/// frames written in `rendered`; `stopped` (the interrupt watch) is asked before each frame
/// and after each write.
#[cfg(feature = "render")]
fn render_frames(
    args: &PlayArgs,
    model: &ReducedModel,
    (seq, frames): (&[(usize, f64)], usize),
    dir: &Path,
    (w, h): (u32, u32),
    rendered: &Cell<usize>,
    stopped: &dyn Fn() -> Result<(), CliError>,
) -> Result<(), CliError> {
    stopped()?;
    let mut renderer = Renderer::new(w, h).map_err(CliError::failed)?;
    let view = SceneView::of_model(model);
    let mut shading = shading_of(args, model)?;
    let pb = super::progress_bar(frames as u64, args.output.json, super::FRAMES_BAR);
    let mut first = true;
    let r = play(model, seq, |n, world, player, local| {
        stopped()?;
        pb.set_position(n as u64 + 1);
        if n % args.every != 0 {
            return Ok(());
        }
        if first {
            renderer.set_scene(&view, world).map_err(CliError::failed)?;
            first = false;
        }
        renderer.set_door_angle(player.angle());
        let png = match &mut shading {
            Shading::Shadow => renderer.render_png(world, None).map(|(png, _)| png),
            Shading::Mode(transfer, k, sky) => {
                let light = light_in_model_frame(sky, model.info.door.as_ref(), player.angle());
                let colours = mode_colours(&light, transfer, *k).unwrap_or_default();
                renderer.render_radiance_png(world, &colours)
            }
            Shading::Transfer(transfer, shader) => {
                let radiance = shader.shade(model, transfer, player.q(), local, player.angle());
                renderer.render_radiance_png(world, radiance)
            }
        }
        .map_err(CliError::failed)?;
        let path = frame_path(dir, rendered.get());
        kestrel::atomic::write_atomic(&path, &png, args.output.force).map_err(CliError::written)?;
        rendered.set(rendered.get() + 1);
        stopped()
    });
    pb.finish_and_clear();
    r.map(|_| ())
}

#[cfg(not(feature = "render"))]
fn render_frames(
    _: &PlayArgs,
    _: &ReducedModel,
    _: (&[(usize, f64)], usize),
    _: &Path,
    _: (u32, u32),
    _: &Cell<usize>,
    _: &dyn Fn() -> Result<(), CliError>,
) -> Result<(), CliError> {
    Err(CliError::input(
        "--out: kestrel was built without the render feature",
    ))
}

/// How rendered frames are shaded.
#[cfg(feature = "render")]
enum Shading<'m> {
    Shadow,
    /// The model's transfer (reduced or computed per frame) under the turned sky.
    Transfer(&'m Transfer, FrameShader),
    /// Transfer mode k's irradiance under the turned sky (in the door's frame, as the
    /// transfer's shading).
    Mode(&'m Transfer, usize, ShLight),
}

/// `--shading` and `--sky-rotation` checked against the model.
#[cfg(feature = "render")]
fn shading_of<'m>(args: &PlayArgs, model: &'m ReducedModel) -> Result<Shading<'m>, CliError> {
    let (az, el) = parse_sky_rotation(&args.sky_rotation)?;
    let sky = ShLight::sky().rotated(&sky_rotation(az.to_radians(), el.to_radians()));
    let kind = args
        .shading
        .as_deref()
        .unwrap_or(if model.transfer.is_some() {
            "transfer"
        } else {
            "shadow"
        });
    if kind == "shadow" {
        return Ok(Shading::Shadow);
    }
    let transfer = model.transfer.as_ref().ok_or_else(|| {
        CliError::input(format!(
            "--shading {kind}: {} holds no radiance transfer (precompute it with --transfer)",
            args.model.display()
        ))
    })?;
    let modes = transfer_modes(args, model)?;
    if let Some(k) = modes.1 {
        mode_colours(&sky, transfer, k - 1)
            .ok_or_else(|| CliError::input(format!("--transfer-mode {k}: no such mode")))?;
        return Ok(Shading::Mode(transfer, k - 1, sky));
    }
    let source = match kind {
        "direct" => TransferSource::Direct,
        _ => TransferSource::Reduced { modes: modes.0 },
    };
    Ok(Shading::Transfer(transfer, FrameShader::new(source, sky)))
}

/// `--transfer-rank` and `--transfer-mode` checked against the model's transfer rank r_a:
/// (modes used, mode shown alone).
fn transfer_modes(
    args: &PlayArgs,
    model: &ReducedModel,
) -> Result<(usize, Option<usize>), CliError> {
    let asked = args.transfer_rank.or(args.transfer_mode);
    let Some(n) = asked else {
        return Ok((usize::MAX, None));
    };
    let option = if args.transfer_mode.is_some() {
        "--transfer-mode"
    } else {
        "--transfer-rank"
    };
    let ra = match &model.transfer {
        Some(t) => t.info.rank as usize,
        None => {
            return Err(CliError::input(format!(
                "{option} {n}: {} holds no radiance transfer (precompute it with --transfer)",
                args.model.display()
            )))
        }
    };
    if args.shading.as_deref().is_some_and(|k| k != "transfer") {
        return Err(CliError::input(format!(
            "{option} needs --shading transfer (the reduced transfer's modes)"
        )));
    }
    if !(1..=ra).contains(&n) {
        return Err(CliError::input(format!(
            "{option} {n}: the model's transfer has modes 1 to {ra} (r_a = {ra})"
        )));
    }
    Ok(if args.transfer_mode.is_some() {
        (ra, Some(n))
    } else {
        (n, None)
    })
}

/// Refuses `flag` (with its value) unless `model` plays with the flow rule.
fn needs_flow(model: &ReducedModel, flag: String) -> Result<(), CliError> {
    if model.info.offset == OffsetBlend::Flow {
        return Ok(());
    }
    Err(CliError::input(format!(
        "{flag}: the model plays with {} offsets; it needs the flow rule (--offset flow)",
        format!("{:?}", model.info.offset).to_lowercase()
    )))
}

pub fn run(args: PlayArgs) -> Result<(), CliError> {
    let mut model = ReducedModel::read(&args.model).map_err(CliError::input)?;
    super::play_frames::note_unchecked(&args.model);
    if let Some(rule) = args.offset.as_deref() {
        model = model.with_offset(match rule {
            "linear" => OffsetBlend::Linear,
            "flow" => OffsetBlend::Flow,
            _ => OffsetBlend::Exponential,
        });
    }
    if let Some(k) = args.flow_neighbours {
        needs_flow(&model, format!("--flow-neighbours {k}"))?;
        if !(1..=MAX_FLOW_NEIGHBOURS).contains(&k) {
            return Err(CliError::input(format!(
                "--flow-neighbours {k}: must be 1 to {MAX_FLOW_NEIGHBOURS} nearest frames"
            )));
        }
        model = model.with_flow_neighbours(k);
    }
    if args.flow_taper {
        if model.info.offset != OffsetBlend::Flow || model.flow_neighbours() < 2 {
            return Err(CliError::input(
                "--flow-taper: needs the flow rule (--offset flow) and --flow-neighbours K >= 2",
            ));
        }
        model = model.with_flow_taper(true);
    }
    if let Some(h) = args.flow_hysteresis {
        needs_flow(
            &model,
            format!("--flow-hysteresis {}", kestrel::fit::values::shown(h)),
        )?;
        if !(h.is_finite() && (1.0..=MAX_FLOW_HYSTERESIS).contains(&h)) {
            return Err(CliError::input(format!(
                "--flow-hysteresis {}: must be 1 (off) to {MAX_FLOW_HYSTERESIS} (a ratio of \
                 eq. 9 distances, no unit)",
                kestrel::fit::values::shown(h)
            )));
        }
        model = model.with_flow_hysteresis(h);
    }
    let seq = parse_sequence(&model.info.palette, &args.impulses).map_err(CliError::input)?;
    let frames = sequence_frames(&seq, model.info.frame_dt).map_err(CliError::input)?;
    if args.every == 0 {
        return Err(CliError::input("--every must be >= 1"));
    }
    parse_sky_rotation(&args.sky_rotation)?;
    transfer_modes(&args, &model)?;
    if args.shading.as_deref().is_some_and(|k| k != "shadow") && model.transfer.is_none() {
        return Err(CliError::input(format!(
            "--shading {}: {} holds no radiance transfer (precompute it with --transfer)",
            args.shading.as_deref().unwrap_or_default(),
            args.model.display()
        )));
    }
    if let Some(path) = &args.frame_errors {
        if frames > MAX_FRAME_ERROR_ROWS {
            return Err(CliError::input(format!(
                "--frame-errors: the sequence plays {frames} frames; at most \
                 {MAX_FRAME_ERROR_ROWS} are recorded (shorten --impulses)"
            )));
        }
        super::check_output_of(path, args.output.force, play_inputs(&args))?;
    }
    // The scene to compare against is read and checked before any work: one without an
    // impulse palette is bad input, named.
    let compared = match &args.compare {
        Some(path) => {
            let scene = super::load_dynamic(path, "is not a dynamic scene")?;
            if scene.reduced.is_none() {
                return Err(CliError::input(format!(
                    "--compare {}: the scene has no [reduced] section (impulse palette) to play \
                     the sequence in; see docs/reduced.md",
                    path.display()
                )));
            }
            if let Some(made_from) = &model.info.scene_sha256 {
                let sha = kestrel::reduced::scene_fingerprint(path).map_err(CliError::input)?;
                if sha != *made_from {
                    return Err(CliError::input(format!(
                        "--compare {}: not the scene {} was made from (its SHA-256 {}… differs \
                         from the one recorded, {}…): compare a model with its own scene",
                        path.display(),
                        args.model.display(),
                        sha.chars().take(12).collect::<String>(),
                        made_from.chars().take(12).collect::<String>()
                    )));
                }
            }
            Some(scene)
        }
        None => None,
    };
    // The frames' folder and size are checked before any work; a play that fails after it
    // removes the frames it wrote and the folders it made (what was there stays).
    // The watch starts with the folder: a signal in the timing loop or the renderer's start
    // removes it too (it was left, empty).
    let (size, undo, watch) = match &args.out {
        Some(dir) => {
            let watch = super::interrupt::Watch::start();
            let (size, undo) = prepare_frames(&args, dir, frames.div_ceil(args.every))?;
            (Some(size), Some(undo), Some(watch))
        }
        None => (None, None, None),
    };
    let written = Cell::new(0);
    let result = finish(&args, &model, &seq, compared, (size, watch), &written);
    match (result, undo) {
        (Err(e), Some(undo)) => Err(super::play_frames::undone(e, undo(written.get()))),
        (result, _) => result,
    }
}

/// The rest of `run` once every input is checked: playback, frames, comparison, summary.
fn finish(
    args: &PlayArgs,
    model: &ReducedModel,
    seq: &[(usize, f64)],
    compared: Option<DynamicScene>,
    (size, watch): (Option<(u32, u32)>, Option<super::interrupt::Watch>),
    written: &Cell<usize>,
) -> Result<(), CliError> {
    let stopped = || watch.as_ref().map_or(Ok(()), |w| w.check(String::new));
    // Timing: the sequence replayed until 0.5 s have passed, no output. Playback is
    // deterministic: the first pass gives the counts.
    let t0 = Instant::now();
    let mut passes = 0;
    let mut played = 0usize;
    let mut sink = 0f32;
    let mut first = None;
    while passes == 0 || t0.elapsed().as_secs_f64() < 0.5 {
        let pass = play(model, seq, |_, w, _, _| {
            sink += w[0][0];
            stopped()
        })?;
        played += pass.frames;
        passes += 1;
        first.get_or_insert(pass);
    }
    let elapsed = t0.elapsed().as_secs_f64();
    std::hint::black_box(sink);
    let frames_per_s = played as f64 / elapsed;
    let Some(Pass {
        frames,
        jumps,
        refused,
    }) = first
    else {
        return Err(CliError::failed("the sequence was not played"));
    };
    if let (Some(dir), Some(size)) = (&args.out, size) {
        render_frames(args, model, (seq, frames), dir, size, written, &stopped)?;
    }
    // the last check of the frames; `--compare` after them runs outside the watch (its
    // progress has no way to stop it: a signal there ends the command as usual)
    stopped()?;
    drop(watch);
    let comparison = match compared {
        Some(scene) => {
            let pb = if args.output.json {
                ProgressBar::hidden()
            } else {
                ProgressBar::new(1000)
            };
            let record = args.frame_errors.is_some();
            let c = compare_frames(&scene, model, seq, record, &mut |f| {
                pb.set_position((f * 1000.0) as u64)
            })
            .map_err(|e| match e {
                ReducedError::Invalid(_) | ReducedError::TransferOptions(_) => CliError::input(e),
                e => CliError::failed(e),
            })?;
            pb.finish_and_clear();
            if let Some(path) = &args.frame_errors {
                let csv = super::play_frames::frame_errors_csv(model, &c.frame_errors);
                kestrel::atomic::write_atomic(path, csv.as_bytes(), args.output.force)
                    .map_err(CliError::written)?;
            }
            Some(c)
        }
        None => None,
    };
    let s = Summary {
        model: args.model.display().to_string(),
        frames,
        vertices: model.vertices,
        rank: model.rank,
        offset: model.info.offset,
        flow_neighbours: model.flow_neighbours(),
        flow_taper: model.flow_tapered(),
        flow_hysteresis: model.flow_hysteresis(),
        frames_per_s,
        frame_us: 1e6 / frames_per_s,
        jumps,
        ignored: refused.len(),
        refused,
        rendered: written.get(),
        out: args.out.as_ref().map(|p| p.display().to_string()),
        compare: comparison,
    };
    super::print_summary(&s, args.output.json, |s| {
        println!("model        {}", s.model);
        println!(
            "played       {} frames of {} vertices at rank {} ({} jumps, {} impulses refused)",
            s.frames, s.vertices, s.rank, s.jumps, s.ignored
        );
        for r in &s.refused {
            println!("refused      {r}");
        }
        println!(
            "rate         {:.0} frames/s ({:.2} us/frame, reconstruction included, one thread)",
            s.frames_per_s, s.frame_us
        );
        if let Some(o) = &s.out {
            println!("rendered     {} frames in {o}", s.rendered);
        }
        if let Some(c) = &s.compare {
            println!(
                "vs full sim  relative l2 error {:.4} (projection on the basis {:.4}, distance to the library {:.4}), {} frames",
                c.playback_error, c.projection_error, c.library_distance, c.frames
            );
            if c.library_uncovered_frames > 0 {
                println!(
                    "  uncovered  {} frames of entries the model holds no impulse response of (not in the library distance)",
                    c.library_uncovered_frames
                );
            }
            for g in &c.segments {
                println!(
                    "  segment    {:>6.2} s {:<10} {:>4} frames: error {:.4} (projection {:.4}, library {:.4})",
                    g.at_s, g.entry, g.frames, g.playback_error, g.projection_error, g.library_distance
                );
            }
            let modes: Vec<String> = c.mode_errors.iter().map(|e| format!("{e:.4}")).collect();
            println!("  by mode    {}", modes.join(" "));
            if let Some(w) = &c.warning {
                println!("warning      {w}");
            }
        }
    })
}
