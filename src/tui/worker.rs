//! Long work off the UI thread: fits, file loading, saving and exports; results come back as
//! [`Event`]s on a channel.

use std::sync::mpsc::Sender;
use std::thread;

use super::app::{App, Event, Job, PendingWrite};
use super::cloth::{self, ClothControl};
use super::playback;
use crate::atomic::WriteError;
use crate::fit::{assemble_fabric_params, fit_curve_with_progress, CurveFit};
use crate::kes::Curve;
use crate::params::{ParamsError, ParamsFormat};
use crate::plot::PlotError;

/// The long-lived workers: the cloth simulation thread's control channel.
#[derive(Debug, Default)]
pub struct Workers {
    cloth: Option<Sender<ClothControl>>,
}

impl Workers {
    /// Starts `job`; what it needs of the app is copied now.
    pub fn start(&mut self, job: Job, app: &App, tx: Sender<Event>) {
        match job {
            Job::ClothStart(path) => {
                if let Some(old) = self.cloth.take() {
                    let _ = old.send(ClothControl::Stop);
                }
                self.cloth = Some(if playback::is_model(&path) {
                    playback::start(path, tx)
                } else {
                    cloth::start(path, tx)
                });
            }
            Job::Cloth(control) => {
                if let Some(c) = &self.cloth {
                    if c.send(control).is_err() {
                        self.cloth = None;
                    }
                }
            }
            Job::ExportPng { kind, path, force } if kind.is_cloth() => {
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
            other => spawn(other, app, tx),
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        if let Some(c) = self.cloth.take() {
            let _ = c.send(ClothControl::Stop);
        }
    }
}

/// Starts a one-shot `job` on its own thread; what it needs of the app is copied now.
fn spawn(job: Job, app: &App, tx: Sender<Event>) {
    match job {
        Job::ClothStart(_) | Job::Cloth(_) => {}
        Job::Fit {
            curve_index,
            curve,
            options,
        } => {
            thread::spawn(move || {
                let progress = tx.clone();
                let fit = fit_curve_with_progress(&curve, &options, &|p| {
                    let _ = progress.send(Event::FitProgress(p.clone()));
                });
                let _ = tx.send(Event::FitDone {
                    curve_index,
                    fit: Box::new(fit),
                });
            });
        }
        Job::Open(path) => {
            thread::spawn(move || {
                let (curves, errors) = super::load_curves(&[path]);
                let _ = tx.send(Event::Opened { curves, errors });
            });
        }
        Job::SaveParams { path, force } => {
            let members = app.fabric_members();
            let pairs: Vec<(Curve, CurveFit)> = members
                .iter()
                .filter_map(|&i| {
                    let c = &app.curves[i];
                    c.fit
                        .as_ref()
                        .filter(|f| f.is_fitted())
                        .map(|f| (c.curve.clone(), f.clone()))
                })
                .collect();
            let fabric = app
                .selected_curve()
                .map(|c| c.curve.fabric.clone())
                .unwrap_or_default();
            thread::spawn(move || {
                if pairs.is_empty() {
                    let _ = tx.send(Event::Failed(
                        "no fitted curve in this fabric: fit one first".into(),
                    ));
                    return;
                }
                let curves: Vec<&Curve> = pairs.iter().map(|p| &p.0).collect();
                let fits: Vec<CurveFit> = pairs.iter().map(|p| p.1.clone()).collect();
                let params = assemble_fabric_params(&fabric, &curves, &fits);
                let event = match params.write(&path, ParamsFormat::from_path(&path), force) {
                    Ok(()) => Event::Written(path),
                    Err(ParamsError::Write(WriteError::Exists { .. })) => {
                        Event::Exists(PendingWrite::Params(path))
                    }
                    Err(e) => Event::Failed(e.to_string()),
                };
                let _ = tx.send(event);
            });
        }
        Job::ExportPng { kind, path, force } => {
            let request = super::export::ExportRequest::from_app(app, kind);
            thread::spawn(move || {
                let event = match super::export::write(&request, &path, force) {
                    Ok(()) => Event::Written(path),
                    Err(PlotError::Write(WriteError::Exists { .. })) => {
                        Event::Exists(PendingWrite::Png(kind, path))
                    }
                    Err(e) => Event::Failed(e.to_string()),
                };
                let _ = tx.send(event);
            });
        }
    }
}
