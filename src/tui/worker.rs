//! Long work off the UI thread: fits, file loading and scans, saving, exports and the cloth
//! threads; each [`Job`] carries what it needs and results come back as [`Event`]s.

pub mod cloth;
pub mod export;
pub mod lab;
pub mod playback;

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::files;
use super::message::{is_model, CardTest, ClothControl, ClothSource, Event, Job, PendingWrite};
use crate::atomic::WriteError;
use crate::fit::{add_properties, assemble_fabric_params, fit_specimens_with_progress, CurveFit};
use crate::kes::{Curve, Direction};
use crate::material::ConnectorLaw;
use crate::params::{ParamsError, ParamsFormat};
use crate::plot::PlotError;

/// The longest the workbench waits at exit for its cloth threads to stop: a renderer torn
/// down by the process exit while its thread still runs can crash the graphics driver.
const STOP_WAIT: Duration = Duration::from_secs(1);

/// The long-lived workers: the cloth simulation thread's control channel, and the cloth
/// threads started (stopped ones too, until they have ended).
#[derive(Debug, Default)]
pub(crate) struct Workers {
    cloth: Option<Sender<ClothControl>>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts `job`: a command to the cloth thread, or a one-shot thread.
    pub(crate) fn start(&mut self, job: Job, tx: Sender<Event>) {
        match job {
            Job::ClothStart { source, run } => {
                if let Some(old) = self.cloth.take() {
                    let _ = old.send(ClothControl::Stop);
                }
                self.threads.retain(|t| !t.is_finished());
                let (control, thread) = match source {
                    ClothSource::File(path) if is_model(&path) => playback::start(path, tx),
                    ClothSource::File(path) => cloth::start(cloth::SceneSource::File(path), tx),
                    ClothSource::Card {
                        card,
                        test: CardTest::Hang,
                    } => cloth::start(cloth::SceneSource::Hanging(card), tx),
                    ClothSource::Card { card, test } => lab::start(card, test, run, tx),
                };
                self.cloth = Some(control);
                self.threads.push(thread);
            }
            Job::Cloth(control) => {
                if let Some(c) = &self.cloth {
                    if c.send(control).is_err() {
                        self.cloth = None;
                    }
                }
            }
            Job::ExportPng {
                kind,
                path,
                force,
                inputs,
                ..
            } if kind.is_cloth() => {
                if let Some(refused) = over_input(&path, &inputs) {
                    let _ = tx.send(refused);
                    return;
                }
                let request = ClothControl::Render { kind, path, force };
                match &self.cloth {
                    Some(c) if c.send(request).is_ok() => {}
                    _ => {
                        self.cloth = None;
                        let _ = tx.send(Event::Failed(
                            "no simulation: load a scene in the Cloth tab first".into(),
                        ));
                    }
                }
            }
            other => {
                thread::spawn(move || {
                    if let Some(event) = run(other, &tx) {
                        let _ = tx.send(event);
                    }
                });
            }
        }
    }
}

impl Drop for Workers {
    /// Stops the cloth thread and waits (at most [`STOP_WAIT`]) for the cloth threads to end.
    fn drop(&mut self) {
        if let Some(c) = self.cloth.take() {
            let _ = c.send(ClothControl::Stop);
        }
        let start = Instant::now();
        while start.elapsed() < STOP_WAIT && self.threads.iter().any(|t| !t.is_finished()) {
            thread::sleep(Duration::from_millis(10));
        }
        for t in self.threads.drain(..).filter(|t| t.is_finished()) {
            let _ = t.join();
        }
    }
}

/// Runs a one-shot `job` on the calling thread; progress goes to `tx`, the answer is returned
/// (None for the cloth jobs, which run on their own thread).
pub fn run(job: Job, tx: &Sender<Event>) -> Option<Event> {
    match job {
        Job::ClothStart { .. } | Job::Cloth(_) => None,
        Job::Fit {
            curve_index,
            specimens,
            options,
        } => {
            let specimens: Vec<&Curve> = specimens.iter().collect();
            let fit = fit_specimens_with_progress(&specimens, &options, &|p| {
                let _ = tx.send(Event::FitProgress(p.clone()));
            });
            Some(Event::FitDone {
                curve_index,
                fit: Box::new(fit),
            })
        }
        Job::Open(text) => {
            let (curves, errors) = files::open(&text);
            Some(Event::Opened { curves, errors })
        }
        Job::CompletePath(typed) => {
            files::complete_path(&typed).map(|completed| Event::PathCompleted { typed, completed })
        }
        Job::ReadCard(path) => {
            let outcome = crate::params::FabricParams::read(&path)
                .map(|card| {
                    crate::fit::fabric::sources_changed_on_disk(&card)
                        .into_iter()
                        .collect()
                })
                .map_err(|e| e.to_string());
            Some(Event::CardRead { path, outcome })
        }
        Job::ScanCloth(root) => Some(Event::ClothScanned(files::cloth_entries(&root))),
        Job::SaveParams {
            path,
            force,
            fabric,
            fitted,
            accepted,
            curves,
            inputs,
        } => Some(
            over_input(&path, &inputs)
                .unwrap_or_else(|| save_params(path, force, &fabric, &fitted, &accepted, &curves)),
        ),
        Job::ExportPng {
            kind,
            path,
            force,
            request,
            inputs,
        } => Some(match over_input(&path, &inputs) {
            Some(refused) => refused,
            None => match export::write(&request, &path, force) {
                Ok(()) => Event::Written(path),
                Err(PlotError::Write(WriteError::Exists { .. })) => {
                    Event::Exists(PendingWrite::Png(kind, path))
                }
                Err(e) => Event::Failed(e.to_string()),
            },
        }),
    }
}

/// The refusal of a write to `path` when it is one of the files read (`inputs`): asked
/// before whether to overwrite, as the command line refuses it even with `--force`.
fn over_input(path: &std::path::Path, inputs: &[PathBuf]) -> Option<Event> {
    crate::atomic::input_clash(path, inputs).map(|why| Event::Failed(format!("not written: {why}")))
}

/// Writes the card of `fabric`: the laws and fit reports of `fitted`, each law accepted in
/// `accepted` in its test and direction's place, and the `[properties]` read from all the
/// fabric's `curves`; the event says what happened.
fn save_params(
    path: PathBuf,
    force: bool,
    fabric: &str,
    fitted: &[(Curve, CurveFit)],
    accepted: &[(Direction, ConnectorLaw)],
    curves: &[Curve],
) -> Event {
    let card = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("toml") || e.eq_ignore_ascii_case("json"));
    if !card {
        return Event::Failed(format!(
            "not written: {}: a card is a .toml or .json file (the name says which)",
            path.display()
        ));
    }
    if fitted.is_empty() && accepted.is_empty() {
        return Event::Failed(
            "nothing to save in this fabric: fit a curve or accept a law first".into(),
        );
    }
    let fitted_curves: Vec<&Curve> = fitted.iter().map(|p| &p.0).collect();
    if let Some(clash) = crate::fit::fabric::slot_clash(fitted_curves.iter().copied()) {
        return Event::Failed(format!("not saved: {clash}"));
    }
    let fits: Vec<CurveFit> = fitted.iter().map(|p| p.1.clone()).collect();
    let mut params = assemble_fabric_params(fabric, &fitted_curves, &fits);
    add_properties(&mut params, &curves.iter().collect::<Vec<_>>());
    for &(direction, law) in accepted {
        let laws = match direction {
            Direction::Weft => &mut params.weft,
            // a bias curve's law is the warp's, as in a parameter file; a law has no
            // normal direction (compression curves carry no law)
            Direction::Warp | Direction::Bias | Direction::Normal => &mut params.warp,
        };
        match law {
            ConnectorLaw::Traction(l) => laws.traction = Some(l),
            ConnectorLaw::Bending(l) => laws.bending = Some(l),
            ConnectorLaw::Shear(l) => laws.shear = Some(l),
        }
    }
    match params.write(&path, ParamsFormat::from_path(&path), force) {
        Ok(()) => match crate::fit::fabric::sources_changed_on_disk(&params) {
            Some(warning) => Event::CardWritten { path, warning },
            None => Event::Written(path),
        },
        Err(ParamsError::Write(WriteError::Exists { .. })) => {
            Event::Exists(PendingWrite::Params(path))
        }
        Err(e) => Event::Failed(e.to_string()),
    }
}
