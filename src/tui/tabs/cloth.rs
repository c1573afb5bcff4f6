//! The Cloth tab: a fabric card's tests (hang, drape test, cantilever), the scenes and reduced
//! models found, the one loaded running on a worker (run, pause, step, palette impulses), its
//! live statistics or the lab test's figures, and an orthographic wireframe (coloured by the
//! exit radiance of a model's radiance transfer, when it holds one).

mod draw;

use std::path::PathBuf;

use super::Effects;
use crate::tui::message::{
    is_model, Action, CardTest, ClothControl, ClothFrame, ClothSource, Job, LabReport, PaletteKey,
};

/// One row of the tab's list: a test of the card, or a scene or model file.
#[derive(Debug, Clone, PartialEq)]
pub enum ClothEntry {
    Card(CardTest),
    File(PathBuf),
}

/// A lab test of the card (drape test, cantilever): running (its progress) or done (its
/// figures, why it failed, or that it was stopped).
#[derive(Debug, Clone, PartialEq)]
pub struct LabState {
    pub test: CardTest,
    /// The run that started it ([`ClothTabState::run`]): only that run's events are its own.
    pub run: u64,
    /// 0..1 while running; None when done.
    pub progress: Option<f64>,
    pub lines: Vec<String>,
}

/// The card and the scenes and reduced models found, the one loaded, its last frame, the
/// model's palette (empty for a scene), the lab test and the view's angles.
#[derive(Debug, Clone, PartialEq)]
pub struct ClothTabState {
    /// Scenes (`*.toml`), then reduced models (`*.krd`).
    pub scenes: Vec<PathBuf>,
    /// The fabric card sent from the Fit tab or opened by path: its tests head the list.
    pub card: Option<PathBuf>,
    pub palette: Vec<PaletteKey>,
    /// Index into [`Self::entries`].
    pub selected: usize,
    /// The simulation loaded: a scene or model file, or the card (hanging).
    pub loaded: Option<PathBuf>,
    /// The card test loaded (hang) or run (drape, cantilever), if the last load was one.
    pub card_test: Option<CardTest>,
    pub lab: Option<LabState>,
    pub frame: Option<ClothFrame>,
    /// View rotation about the up axis and tilt \[rad\].
    pub yaw: f64,
    pub pitch: f64,
    /// Azimuth of the SH sky of a model's transfer shading about +y \[deg\], 0..360.
    pub sky_deg: i32,
    /// Counts the cloth threads started: each load is a new run, and a lab test's events
    /// carry the run that sent them (a stopped test's late answer is not the next one's).
    pub run: u64,
}

impl Default for ClothTabState {
    fn default() -> Self {
        Self {
            scenes: Vec::new(),
            card: None,
            palette: Vec::new(),
            selected: 0,
            loaded: None,
            card_test: None,
            lab: None,
            frame: None,
            yaw: 0.0,
            pitch: 0.35,
            sky_deg: 0,
            run: 0,
        }
    }
}

/// A card's name without its `.params.toml` / `.params.json`.
fn card_label(card: &std::path::Path) -> String {
    let name = card
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    [".params.toml", ".params.json", ".toml", ".json"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .map_or_else(|| name.clone(), str::to_string)
}

impl ClothTabState {
    /// The palette keys in force: those of a reduced model loaded, else none.
    pub(crate) fn live_palette(&self) -> &[PaletteKey] {
        if self.loaded.is_some() {
            &self.palette
        } else {
            &[]
        }
    }

    /// Handles the tab's actions: selection, load, run/pause, step, impulses, view.
    pub(crate) fn update(&mut self, action: &Action, fx: &mut Effects) {
        match *action {
            Action::Up | Action::Down => {
                let up = matches!(action, Action::Up);
                self.selected = super::ring_step(self.selected, self.entries().len(), up);
            }
            Action::ClothLoad => self.load(fx),
            Action::ClothStop => self.stop(fx),
            Action::ClothRunPause => {
                if self.loaded.is_none() {
                    fx.status(if self.lab_running().is_some() {
                        "the lab test runs by itself: Esc stops it"
                    } else {
                        "load a scene first (Enter)"
                    });
                } else {
                    let running = self.frame.as_ref().is_some_and(|f| f.running);
                    fx.job(Job::Cloth(if running {
                        ClothControl::Pause
                    } else {
                        ClothControl::Run
                    }));
                }
            }
            Action::ClothStep if self.loaded.is_some() => {
                fx.job(Job::Cloth(ClothControl::Step));
            }
            Action::ClothImpulse(k) => match self.palette.get(k) {
                Some(entry) => {
                    fx.status(format!("impulse: {}", entry.name));
                    fx.job(Job::Cloth(ClothControl::Impulse(k)));
                }
                None => fx.status("no reduced model playing: load a .krd first"),
            },
            Action::ClothSky(step_deg) => self.turn_sky(step_deg, fx),
            Action::Rotate(yaw, pitch) => {
                self.yaw = (self.yaw + yaw).rem_euclid(std::f64::consts::TAU);
                self.pitch = (self.pitch + pitch).clamp(-1.5, 1.5);
            }
            _ => {}
        }
    }

    /// Turns the sky of the model's transfer shading by `step_deg` about +y (the worker shades
    /// the next frames under it); says why not without a model or without a transfer.
    fn turn_sky(&mut self, step_deg: i32, fx: &mut Effects) {
        let reduced = self.frame.as_ref().and_then(|f| f.reduced.as_ref());
        match reduced.map(|r| r.shading.is_some()) {
            Some(true) if self.loaded.is_some() => {
                self.sky_deg = (self.sky_deg + step_deg).rem_euclid(360);
                fx.status(format!("sky turned to {} deg about +y", self.sky_deg));
                fx.job(Job::Cloth(ClothControl::SkyAzimuth(self.sky_deg)));
            }
            Some(false) if self.loaded.is_some() => {
                fx.status("this model holds no radiance transfer: precompute it with --transfer")
            }
            _ => fx.status("the sky lights a reduced model's transfer: load a .krd first"),
        }
    }

    /// The rows of the list: the card's tests (with a card), then the files found.
    pub fn entries(&self) -> Vec<ClothEntry> {
        let tests = self
            .card
            .iter()
            .flat_map(|_| CardTest::ALL.map(ClothEntry::Card));
        tests
            .chain(self.scenes.iter().cloned().map(ClothEntry::File))
            .collect()
    }

    /// Rows before the first file: the card's tests.
    fn card_rows(&self) -> usize {
        if self.card.is_some() {
            CardTest::ALL.len()
        } else {
            0
        }
    }

    /// Loads the selected row: a scene or model (paused), the card hanging (paused), or a lab
    /// test of the card (running; its figures come back when done).
    fn load(&mut self, fx: &mut Effects) {
        let entry = self.entries().get(self.selected).cloned();
        if let (Some(ClothEntry::Card(test)), Some(lab)) = (&entry, self.lab_running()) {
            if lab.test == *test {
                fx.status(format!(
                    "{} is running: Esc stops it (Enter restarts nothing)",
                    test.title()
                ));
                return;
            }
        }
        // a test still running is stopped by what starts now (the worker stops its thread)
        let stopped = self.lab_running().map(|l| l.test.title());
        if let Some(lab) = self.lab.as_mut().filter(|l| l.progress.is_some()) {
            lab.progress = None;
            lab.lines = vec!["stopped".into()];
        }
        self.run += 1;
        let source = match (entry, self.card.clone()) {
            (Some(ClothEntry::File(path)), _) => {
                fx.status(if is_model(&path) {
                    format!(
                        "loading model {} — Space plays, palette keys apply impulses",
                        path.display()
                    )
                } else {
                    format!("loaded {} — Space runs, n steps", path.display())
                });
                self.loaded = Some(path.clone());
                self.card_test = None;
                ClothSource::File(path)
            }
            (Some(ClothEntry::Card(test)), Some(card)) => {
                let label = card_label(&card);
                if test == CardTest::Hang {
                    fx.status(format!("{label} hanging — Space runs, n steps"));
                    self.loaded = Some(card.clone());
                } else {
                    fx.status(format!(
                        "{} of {label} running — its figures show when done",
                        test.title()
                    ));
                    self.loaded = None;
                    self.lab = Some(LabState {
                        test,
                        run: self.run,
                        progress: Some(0.0),
                        lines: Vec::new(),
                    });
                }
                self.card_test = Some(test);
                ClothSource::Card { card, test }
            }
            _ => {
                fx.status(
                    "no scenes: start kestrel in the folder that holds scenes/, or open a card (o)",
                );
                return;
            }
        };
        if let (Some(stopped), Some(status)) = (stopped, fx.status.as_mut()) {
            status.push_str(&format!(" ({stopped} stopped)"));
        }
        self.frame = None;
        self.palette.clear();
        // a new worker starts under the default sky
        self.sky_deg = 0;
        fx.job(Job::ClothStart {
            source,
            run: self.run,
        });
    }

    /// The lab test running, if one is.
    fn lab_running(&self) -> Option<&LabState> {
        self.lab.as_ref().filter(|l| l.progress.is_some())
    }

    /// Esc: stops the lab test running (its thread is told to stop; its late answer is
    /// ignored), or says there is none.
    fn stop(&mut self, fx: &mut Effects) {
        match self.lab.as_mut().filter(|l| l.progress.is_some()) {
            Some(lab) => {
                lab.progress = None;
                lab.lines = vec!["stopped (Esc): Enter runs it again".into()];
                fx.status(format!("{} stopped", lab.test.title()));
                fx.job(Job::Cloth(ClothControl::Stop));
            }
            None => fx.status(if self.loaded.is_some() {
                "no test running: Esc stops a drape or cantilever test (Space pauses a simulation)"
            } else {
                "no test running"
            }),
        }
    }

    /// A fabric card to test (sent from the Fit tab or opened by path): its tests head the
    /// list, the first selected.
    pub(crate) fn set_card(&mut self, card: PathBuf, fx: &mut Effects) {
        fx.status(format!(
            "card {}: hang, drape test or cantilever — Enter runs the one selected",
            card_label(&card)
        ));
        // another card's figures are not this one's
        if self.card.as_ref() != Some(&card) {
            self.lab = None;
        }
        self.card = Some(card);
        self.selected = 0;
    }

    /// The lab test of `run` running, if that is the one shown.
    fn lab_of(&mut self, run: u64) -> Option<&mut LabState> {
        self.lab
            .as_mut()
            .filter(|l| l.run == run && l.progress.is_some())
    }

    /// A lab test's progress (0..1), from the thread of `run`.
    pub(crate) fn on_lab_progress(&mut self, run: u64, fraction: f64) {
        if let Some(lab) = self.lab_of(run) {
            lab.progress = Some(fraction.clamp(0.0, 1.0));
        }
    }

    /// The lab test of `run` ended: its figures and final mesh, or why it did not reach a
    /// result. The answer of a test stopped (Esc, or another test or scene started) is not
    /// shown: it is no other test's.
    pub(crate) fn on_lab_done(
        &mut self,
        run: u64,
        outcome: Result<Box<LabReport>, String>,
        fx: &mut Effects,
    ) {
        let Some(lab) = self
            .lab
            .as_mut()
            .filter(|l| l.run == run && l.progress.is_some())
        else {
            return;
        };
        lab.progress = None;
        match outcome {
            Ok(report) => {
                fx.status(format!(
                    "{} done: {}",
                    lab.test.title(),
                    report.lines.first().cloned().unwrap_or_default()
                ));
                lab.lines = report.lines;
                self.frame = report.frame;
            }
            Err(why) => {
                fx.status(format!("error: {}: {why}", lab.test.title()));
                lab.lines = vec![format!("failed: {why}")];
            }
        }
    }

    /// The list found by the scan job; a scene or model loaded from elsewhere (named on the
    /// command line) stays in it, selected.
    pub(crate) fn on_scanned(&mut self, scenes: Vec<PathBuf>) {
        self.scenes = scenes;
        match self.loaded.clone() {
            Some(loaded) if self.card.as_ref() != Some(&loaded) => self.list_and_select(loaded),
            _ => self.selected = self.selected.min(self.entries().len().saturating_sub(1)),
        }
    }

    /// Lists `path` (a scene or a reduced model named on the command line), selects it and
    /// loads it.
    pub(crate) fn open(&mut self, path: PathBuf, fx: &mut Effects) {
        self.list_and_select(path);
        self.update(&Action::ClothLoad, fx);
    }

    /// Selects `path` in the list, appending it when it is not there (by its canonical path:
    /// `trunc.krd` named on the command line is the scan's `./trunc.krd`).
    fn list_and_select(&mut self, path: PathBuf) {
        let canonical = std::fs::canonicalize(&path).ok();
        let same = |p: &PathBuf| {
            *p == path || canonical.is_some() && std::fs::canonicalize(p).ok() == canonical
        };
        let at = match self.scenes.iter().position(same) {
            Some(i) => i,
            None => {
                self.scenes.push(path);
                self.scenes.len() - 1
            }
        };
        self.selected = self.card_rows() + at;
    }

    pub(crate) fn on_palette(&mut self, palette: Vec<PaletteKey>, fx: &mut Effects) {
        let names: Vec<&str> = palette.iter().map(|p| p.name.as_str()).collect();
        fx.status(format!(
            "model loaded — Space plays; impulses: {}",
            names.join(", ")
        ));
        self.palette = palette;
    }
}
