//! The Cloth tab's playback thread for a reduced model (`.krd`): plays it with the library's
//! [`Player`] in real time (simulated time no faster than the wall clock), applies palette impulses.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use super::app::{Event, ExportKind, PaletteKey, PendingWrite, CLOTH_SEQUENCE_FRAMES};
use super::cloth::{ClothControl, ClothFrame, ReducedStats, RENDER_SIZE};
use crate::atomic::{write_atomic, WriteError};
use crate::reduced::{Player, ReducedModel};
use crate::render::{frame_path, RenderError, Renderer, SceneView};

/// The reduced models (`*.krd`) of a folder, sorted.
pub fn reduced_models(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "krd"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A path names a reduced model (by its extension).
pub fn is_model(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "krd")
}

/// Loads the model at `path` and plays it on its own thread, paused; returns its control channel.
pub fn start(path: PathBuf, events: Sender<Event>) -> Sender<ClothControl> {
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || match ReducedModel::read(&path) {
        Ok(model) => play(&model, &rx, &events),
        Err(e) => {
            let _ = events.send(Event::Failed(e.to_string()));
        }
    });
    tx
}

/// Plays frames while running; the shape of the current frame is in `world` after each step.
struct Playback<'m> {
    model: &'m ReducedModel,
    player: Player<'m>,
    local: Vec<f32>,
    world: Vec<[f32; 3]>,
    frames: u64,
}

impl<'m> Playback<'m> {
    fn new(model: &'m ReducedModel) -> Self {
        let mut p = Self {
            model,
            player: Player::new(model),
            local: vec![0.0; 3 * model.vertices],
            world: vec![[0.0; 3]; model.vertices],
            frames: 0,
        };
        p.reconstruct();
        p
    }

    fn reconstruct(&mut self) {
        self.player.shape(&mut self.local);
        self.player.to_world(&self.local, &mut self.world);
    }

    fn advance(&mut self) {
        self.player.advance();
        self.reconstruct();
        self.frames += 1;
    }

    fn time(&self) -> f64 {
        self.frames as f64 * self.model.info.frame_dt
    }
}

fn play(model: &ReducedModel, control: &Receiver<ClothControl>, events: &Sender<Event>) {
    let info = &model.info;
    let palette = info
        .palette
        .iter()
        .map(|e| PaletteKey {
            name: e.name.clone(),
            key: e.key,
        })
        .collect();
    if events.send(Event::ClothPalette(palette)).is_err() {
        return;
    }
    let up = info.door.map(|d| d.axis).unwrap_or([0.0, 1.0, 0.0]);
    let up = {
        let n = (up[0] * up[0] + up[1] * up[1] + up[2] * up[2]).sqrt();
        if n > 0.0 {
            [up[0] / n, up[1] / n, up[2] / n]
        } else {
            [0.0, 1.0, 0.0]
        }
    };
    let mut pb = Playback::new(model);
    let mut renderer: Option<Renderer> = None;
    let mut running = false;
    let mut frames_since = 0u32;
    let mut frame_time = Duration::ZERO;
    let mut frames_per_s = 0.0;
    let mut last_frame = Instant::now() - Duration::from_secs(1);
    let mut clock = (Instant::now(), 0.0);
    loop {
        let command = if running {
            match control.try_recv() {
                Ok(c) => Some(c),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return,
            }
        } else {
            match control.recv_timeout(Duration::from_millis(100)) {
                Ok(c) => Some(c),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        };
        let mut single = false;
        let mut send_now = false;
        match command {
            Some(ClothControl::Run) => {
                running = true;
                clock = (Instant::now(), pb.time());
            }
            Some(ClothControl::Pause) => {
                running = false;
                send_now = true;
            }
            Some(ClothControl::Step) => {
                running = false;
                single = true;
            }
            Some(ClothControl::Stop) => return,
            Some(ClothControl::Impulse(k)) => {
                pb.player.impulse(k);
                send_now = true;
            }
            Some(ClothControl::Render { kind, path, force }) => {
                running = false;
                let outcome = render(&mut renderer, &mut pb, kind, &path, force, events);
                let event = match outcome {
                    Ok(()) => Event::Written(path),
                    Err(RenderError::Write(WriteError::Exists { .. })) => {
                        Event::Exists(PendingWrite::Png(kind, path))
                    }
                    Err(e) => Event::Failed(format!("{}: {e}", info.name)),
                };
                let _ = events.send(event);
                send_now = true;
            }
            None => {}
        }
        let ahead = pb.time() - clock.1 - clock.0.elapsed().as_secs_f64();
        if running && !single && ahead > 0.0 {
            thread::sleep(Duration::from_secs_f64(ahead.min(0.02)));
        } else if running || single {
            let t = Instant::now();
            pb.advance();
            frame_time += t.elapsed();
            frames_since += 1;
        }
        if single || send_now || last_frame.elapsed() >= Duration::from_millis(50) {
            if frames_since > 0 && frame_time > Duration::ZERO {
                frames_per_s = f64::from(frames_since) / frame_time.as_secs_f64();
            }
            let frame = ClothFrame {
                scene: info.name.clone(),
                positions: pb
                    .world
                    .iter()
                    .map(|p| [f64::from(p[0]), f64::from(p[1]), f64::from(p[2])])
                    .collect(),
                nu: info.nu as usize,
                nv: info.nv as usize,
                up,
                steps: pb.frames,
                time_s: pb.time(),
                ms_per_step: if frames_since > 0 {
                    frame_time.as_secs_f64() * 1e3 / f64::from(frames_since)
                } else {
                    0.0
                },
                rate_structural: 0.0,
                rate_shear: 0.0,
                kinetic_j: 0.0,
                elastic_j: 0.0,
                running,
                reduced: Some(ReducedStats {
                    rank: model.rank,
                    frames_per_s,
                    entry: pb.player.entry(),
                    entry_name: info
                        .palette
                        .get(pb.player.entry())
                        .map(|e| e.name.clone())
                        .unwrap_or_default(),
                    door_deg: info
                        .door
                        .map(|d| d.range_deg[0] + pb.player.angle().to_degrees()),
                    jumps: pb.player.jumps,
                    ignored: pb.player.ignored,
                }),
            };
            if events.send(Event::ClothFrame(Box::new(frame))).is_err() {
                return;
            }
            frames_since = 0;
            frame_time = Duration::ZERO;
            last_frame = Instant::now();
        }
    }
}

/// Renders the shape now shown, or plays on and renders a sequence (every frame of the model
/// nearest to 30 per simulated second), for the Export tab.
fn render(
    renderer: &mut Option<Renderer>,
    pb: &mut Playback,
    kind: ExportKind,
    path: &Path,
    force: bool,
    events: &Sender<Event>,
) -> Result<(), RenderError> {
    let sequence = kind == ExportKind::ClothSequence;
    let total = if sequence { CLOTH_SEQUENCE_FRAMES } else { 1 };
    let path_of = |n: usize| {
        if sequence {
            frame_path(path, n)
        } else {
            path.to_path_buf()
        }
    };
    if !force {
        if let Some(p) = (0..total).map(path_of).find(|p| p.exists()) {
            return Err(RenderError::Write(WriteError::Exists { path: p }));
        }
    }
    if sequence {
        std::fs::create_dir_all(path)
            .map_err(|e| RenderError::Input(format!("cannot create {}: {e}", path.display())))?;
    }
    let r = match renderer {
        Some(r) => r,
        None => renderer.insert(Renderer::new(RENDER_SIZE.0, RENDER_SIZE.1)?),
    };
    let adapter = r.adapter().to_string();
    r.set_scene(&SceneView::of_model(pb.model), &pb.world)?;
    let every = ((1.0 / 30.0) / pb.model.info.frame_dt).round().max(1.0) as usize;
    for n in 0..total {
        if n > 0 {
            for _ in 0..every {
                pb.advance();
            }
        }
        r.set_door_angle(pb.player.angle());
        let (png, _) = r.render_png(&pb.world, None)?;
        write_atomic(&path_of(n), &png, force)?;
        let _ = events.send(Event::RenderProgress {
            done: n + 1,
            total,
            adapter: adapter.clone(),
        });
    }
    Ok(())
}
