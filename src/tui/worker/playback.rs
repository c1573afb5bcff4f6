//! The Cloth tab's playback thread for a reduced model (`.krd`): plays it with the library's
//! [`Player`] in real time (simulated time no faster than the wall clock), applies palette
//! impulses, and shades frames with the model's radiance transfer when it holds one.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::cloth::{
    next_command, render_answer, render_frames, steps_per_sequence_frame, unit_or_y,
};
use crate::reduced::transfer::{
    sky_rotation, srgb8, FrameShader, ShLight, Transfer, TransferSource,
};
use crate::reduced::{Player, ReducedModel};
use crate::render::{Renderer, SceneView};
use crate::tui::message::{
    ClothControl, ClothFrame, Event, PaletteKey, ReducedStats, TransferShade,
};

/// Loads the model at `path` and plays it on its own thread, paused; returns its control channel
/// and the thread.
pub fn start(path: PathBuf, events: Sender<Event>) -> (Sender<ClothControl>, JoinHandle<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = thread::spawn(move || match ReducedModel::read(&path) {
        Ok(model) => play(&model, &rx, &events),
        Err(e) => {
            let _ = events.send(Event::Failed(e.to_string()));
        }
    });
    (tx, thread)
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

/// A model's reduced transfer and the default sky turned by `sky_deg` about +y: the exit
/// radiance of the played frame, as `kestrel play --out --shading transfer` computes it.
struct Shading<'m> {
    transfer: &'m Transfer,
    sky_deg: i32,
    shader: FrameShader,
}

impl<'m> Shading<'m> {
    fn new(transfer: &'m Transfer) -> Self {
        let all = TransferSource::Reduced {
            modes: transfer.info.rank as usize,
        };
        Self {
            transfer,
            sky_deg: 0,
            shader: FrameShader::new(all, ShLight::sky()),
        }
    }

    fn turn_sky(&mut self, azimuth_deg: i32) {
        self.sky_deg = azimuth_deg;
        let az = f64::from(azimuth_deg).to_radians();
        self.shader.sky = ShLight::sky().rotated(&sky_rotation(az, 0.0));
    }

    /// The radiance of `pb`'s current frame.
    fn shade(&mut self, pb: &Playback) -> &[[f32; 3]] {
        let player = &pb.player;
        let (q, angle) = (player.q(), player.angle());
        self.shader
            .shade(pb.model, self.transfer, q, &pb.local, angle)
    }

    fn shade_of(&mut self, pb: &Playback) -> TransferShade {
        let colours = self.shade(pb).iter().map(|&c| srgb8(c)).collect();
        TransferShade {
            rank: self.transfer.info.rank as usize,
            sky_deg: self.sky_deg,
            colours,
        }
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
    let up = unit_or_y(info.door.map(|d| d.axis).unwrap_or([0.0, 1.0, 0.0]));
    let mut pb = Playback::new(model);
    let mut shading = model.transfer.as_ref().map(Shading::new);
    let mut renderer: Option<Renderer> = None;
    let mut running = false;
    let mut frames_since = 0u32;
    let mut frame_time = Duration::ZERO;
    let mut last_ms = 0.0;
    let mut frames_per_s = 0.0;
    let mut last_frame = Instant::now() - Duration::from_secs(1);
    let mut clock = (Instant::now(), 0.0);
    loop {
        let Ok(command) = next_command(control, running) else {
            return;
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
            Some(ClothControl::SkyAzimuth(deg)) => {
                if let Some(s) = shading.as_mut() {
                    s.turn_sky(deg);
                }
                send_now = true;
            }
            Some(ClothControl::Render { kind, path, force }) => {
                running = false;
                let every = steps_per_sequence_frame(info.frame_dt);
                let outcome = render_frames(&mut renderer, kind, &path, force, events, |r, n| {
                    if n == 0 {
                        r.set_scene(&SceneView::of_model(pb.model), &pb.world)?;
                    } else {
                        for _ in 0..every {
                            pb.advance();
                        }
                    }
                    r.set_door_angle(pb.player.angle());
                    match shading.as_mut() {
                        Some(s) => r.render_radiance_png(&pb.world, s.shade(&pb)),
                        None => Ok(r.render_png(&pb.world, None)?.0),
                    }
                });
                let event = render_answer(&info.name, kind, path, outcome);
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
                ms_per_step: super::cloth::ms_per_step(frame_time, frames_since, &mut last_ms),
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
                    shading: shading.as_mut().map(|s| s.shade_of(&pb)),
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
