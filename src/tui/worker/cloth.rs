//! The Cloth tab's simulation thread: loads a scene, steps it while running (simulated time no
//! faster than the wall clock), and sends a frame (positions, live statistics) twenty times a second.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::atomic::{write_atomic, WriteError};
use crate::cloth::ClothPipeline;
use crate::render::{frame_path, positions, RenderError, Renderer, SceneView};
use crate::scene::{hanging_scene, Scene};
use crate::tui::message::{ClothControl, ClothFrame, Event, ExportKind, PendingWrite};

/// Size of the frames rendered from the tab \[px\].
pub const RENDER_SIZE: (u32, u32) = (1280, 720);

/// Frames per second of simulated time in a rendered sequence.
const SEQUENCE_FPS: f64 = 30.0;

/// What a simulation thread runs: a scene file, or a fabric card hanging by two corners.
#[derive(Debug, Clone)]
pub enum SceneSource {
    File(PathBuf),
    Hanging(PathBuf),
}

/// Starts the simulation of `source` on its own thread, paused; returns its control channel
/// and the thread.
pub fn start(source: SceneSource, events: Sender<Event>) -> (Sender<ClothControl>, JoinHandle<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = thread::spawn(move || simulate(&source, &rx, &events));
    (tx, thread)
}

fn simulate(source: &SceneSource, control: &Receiver<ClothControl>, events: &Sender<Event>) {
    let (loaded, path) = match source {
        SceneSource::File(path) => (Scene::load(path), path),
        SceneSource::Hanging(card) => (hanging_scene(card), card),
    };
    let scene = match loaded {
        Ok(Scene::Dynamic(s)) => s,
        Ok(Scene::VirtualKes(_)) => {
            let _ = events.send(Event::Failed(format!(
                "{} is a virtual KES test: run it with `kestrel run`",
                path.display()
            )));
            return;
        }
        Err(e) => {
            let _ = events.send(Event::Failed(e.to_string()));
            return;
        }
    };
    let name = scene.name.clone();
    let params = scene.params;
    let camera = scene.camera;
    let door = scene.reduced.as_ref().and_then(|r| r.door);
    let mut renderer: Option<Renderer> = None;
    let mut world = scene.world;
    let mut pipeline = ClothPipeline::new();
    let g = world.loads.gravity;
    let up = unit_or_y([-g[0], -g[1], -g[2]]);
    let mut running = false;
    let mut steps_since = 0u32;
    let mut step_time = Duration::ZERO;
    let mut last_ms = 0.0;
    let mut last_frame = Instant::now() - Duration::from_secs(1);
    // simulated time runs no faster than the wall clock while running
    let mut clock = (Instant::now(), world.time);
    loop {
        let Ok(command) = next_command(control, running) else {
            return;
        };
        let mut single = false;
        match command {
            Some(ClothControl::Run) => {
                running = true;
                clock = (Instant::now(), world.time);
            }
            Some(ClothControl::Pause) => running = false,
            Some(ClothControl::Step) => {
                running = false;
                single = true;
            }
            Some(ClothControl::Stop) => return,
            Some(ClothControl::Impulse(_) | ClothControl::SkyAzimuth(_)) => {}
            Some(ClothControl::Render { kind, path, force }) => {
                running = false;
                let every = steps_per_sequence_frame(params.dt);
                let outcome = render_frames(&mut renderer, kind, &path, force, events, |r, n| {
                    if n > 0 {
                        for _ in 0..every {
                            pipeline.step(&params, &mut world).map_err(|e| {
                                RenderError::Input(format!("simulation stopped: {e}"))
                            })?;
                        }
                    }
                    let x = positions(&world);
                    if n == 0 {
                        let mut view = SceneView::of_world(&world, camera);
                        if let Some(door) = &door {
                            view = view.with_door(door, &x);
                        }
                        r.set_scene(&view, &x)?;
                    }
                    Ok(r.render_png(&x, None)?.0)
                });
                let event = render_answer(&name, kind, path, outcome);
                let _ = events.send(event);
                last_frame = Instant::now() - Duration::from_secs(1);
            }
            None => {}
        }
        let ahead = world.time - clock.1 - clock.0.elapsed().as_secs_f64();
        if running && !single && ahead > 0.0 {
            thread::sleep(Duration::from_secs_f64(ahead.min(0.02)));
        } else if running || single {
            let t = Instant::now();
            if let Err(e) = pipeline.step(&params, &mut world) {
                let _ = events.send(Event::Failed(format!("{name}: {e}")));
                running = false;
            }
            step_time += t.elapsed();
            steps_since += 1;
        }
        if single || last_frame.elapsed() >= Duration::from_millis(50) {
            let rates = world.deformation_rates();
            let frame = ClothFrame {
                scene: name.clone(),
                positions: world.positions().iter().map(|p| [p.x, p.y, p.z]).collect(),
                nu: world.grid.nu,
                nv: world.grid.nv,
                up,
                steps: world.steps,
                time_s: world.time,
                ms_per_step: ms_per_step(step_time, steps_since, &mut last_ms),
                rate_structural: rates.structural,
                rate_shear: rates.shear,
                kinetic_j: world.kinetic_energy(),
                elastic_j: world.elastic_energy(),
                running,
                reduced: None,
            };
            if events.send(Event::ClothFrame(Box::new(frame))).is_err() {
                return;
            }
            steps_since = 0;
            step_time = Duration::ZERO;
            last_frame = Instant::now();
        }
    }
}

/// Mean wall time of the `steps` steps that took `time` \[ms\], kept in `last`; while none
/// are taken (paused), the last figure measured (0 before the first step).
pub(super) fn ms_per_step(time: Duration, steps: u32, last: &mut f64) -> f64 {
    if steps > 0 {
        *last = time.as_secs_f64() * 1e3 / f64::from(steps);
    }
    *last
}

/// Why a worker stops listening: the tab dropped its control channel.
pub(super) struct Disconnected;

/// A worker's next command: polled while running, waited for (up to 100 ms) while paused.
pub(super) fn next_command(
    control: &Receiver<ClothControl>,
    running: bool,
) -> Result<Option<ClothControl>, Disconnected> {
    if running {
        match control.try_recv() {
            Ok(c) => Ok(Some(c)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(Disconnected),
        }
    } else {
        match control.recv_timeout(Duration::from_millis(100)) {
            Ok(c) => Ok(Some(c)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(Disconnected),
        }
    }
}

/// `v` scaled to unit length; +y when it is zero.
pub(super) fn unit_or_y(v: [f64; 3]) -> [f64; 3] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if n > 0.0 {
        [v[0] / n, v[1] / n, v[2] / n]
    } else {
        [0.0, 1.0, 0.0]
    }
}

/// Steps (or model frames) of `dt` [s] between the frames of a rendered sequence.
pub(super) fn steps_per_sequence_frame(dt: f64) -> u64 {
    ((1.0 / SEQUENCE_FPS) / dt).round().max(1.0) as u64
}

/// Writes an Export-tab render: one PNG at `path` (`ClothFrame`) or [`ExportKind::frames`]
/// into the folder `path` (`ClothSequence`), refusing before any work to replace a file unless
/// `force`; the renderer is created on first use and kept. `draw(renderer, n)` prepares frame
/// n (0: the state as it stands, with the scene set; then one sequence interval on each) and
/// returns its PNG. Progress goes to `events` after each frame.
pub(super) fn render_frames(
    renderer: &mut Option<Renderer>,
    kind: ExportKind,
    path: &Path,
    force: bool,
    events: &Sender<Event>,
    mut draw: impl FnMut(&mut Renderer, usize) -> Result<Vec<u8>, RenderError>,
) -> Result<(), RenderError> {
    let sequence = kind == ExportKind::ClothSequence;
    let total = kind.frames();
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
    for n in 0..total {
        let png = draw(r, n)?;
        write_atomic(&path_of(n), &png, force)?;
        let _ = events.send(Event::RenderProgress {
            done: n + 1,
            total,
            adapter: adapter.clone(),
        });
    }
    Ok(())
}

/// The event that answers a render request of `kind` to `path`.
pub(super) fn render_answer(
    name: &str,
    kind: ExportKind,
    path: PathBuf,
    outcome: Result<(), RenderError>,
) -> Event {
    match outcome {
        Ok(()) => Event::Written(path),
        Err(RenderError::Write(WriteError::Exists { .. })) => {
            Event::Exists(PendingWrite::Png(kind, path))
        }
        Err(e) => Event::Failed(format!("{name}: {e}")),
    }
}
