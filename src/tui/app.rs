//! The workbench's state as plain data, the actions that change it, and `App::update`, the only
//! code that changes it. Long work is asked for through [`Job`]s and comes back as events.

use std::path::PathBuf;

use super::cloth::{ClothControl, ClothFrame};
use crate::fit::{CurveFit, FitModel, FitOptions, FitProgress};
use crate::friction::FrictionShape;
use crate::kes::{Curve, KesTest};
use crate::material::{
    BendingLaw, ConnectorLaw, DrivingPath, FrictionLaw, MaterialLaw, ShearLaw, TractionLaw,
};

/// The tabs, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Curves,
    Connector,
    Hysteresis,
    Fit,
    Cloth,
    Export,
}

impl Tab {
    pub const ALL: [Tab; 6] = [
        Tab::Curves,
        Tab::Connector,
        Tab::Hysteresis,
        Tab::Fit,
        Tab::Cloth,
        Tab::Export,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Tab::Curves => "Curves",
            Tab::Connector => "Connector",
            Tab::Hysteresis => "Hysteresis",
            Tab::Fit => "Fit",
            Tab::Cloth => "Cloth",
            Tab::Export => "Export",
        }
    }

    pub fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }
}

/// What a text prompt is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptPurpose {
    /// Open KES curve files (a path; a folder opens every CSV in it).
    Open,
    /// A value for the selected Connector parameter.
    ParameterValue,
    /// Where to save the fabric's parameter set.
    SaveParams,
    /// Where to write a PNG.
    ExportPng(ExportKind),
}

/// A one-line text prompt at the bottom of the screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub purpose: PromptPurpose,
    pub label: String,
    pub text: String,
}

/// What the Export tab writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The selected curve with its fit or the Connector law overlaid.
    CurrentView,
    /// The fabric's six curves in a 2 × 3 sheet.
    FabricSheet,
    /// The hysteresis view of the Connector law.
    Hysteresis,
    /// The Cloth tab's simulation as it stands, rendered (wgpu, 1280 × 720).
    ClothFrame,
    /// The Cloth tab's simulation run on for [`CLOTH_SEQUENCE_FRAMES`] frames, each rendered
    /// to `DIR/frame_NNNNN.png`.
    ClothSequence,
}

/// Frames of a rendered cloth sequence from the Export tab.
pub const CLOTH_SEQUENCE_FRAMES: usize = 60;

impl ExportKind {
    pub const ALL: [ExportKind; 5] = [
        ExportKind::CurrentView,
        ExportKind::FabricSheet,
        ExportKind::Hysteresis,
        ExportKind::ClothFrame,
        ExportKind::ClothSequence,
    ];

    /// Images one export writes.
    pub fn frames(self) -> usize {
        if self == ExportKind::ClothSequence {
            CLOTH_SEQUENCE_FRAMES
        } else {
            1
        }
    }

    /// Rendered from the Cloth tab's simulation (rather than plotted).
    pub fn is_cloth(self) -> bool {
        matches!(self, ExportKind::ClothFrame | ExportKind::ClothSequence)
    }

    pub fn title(self) -> &'static str {
        match self {
            ExportKind::CurrentView => "current view (curve, overlay, residuals)",
            ExportKind::FabricSheet => "fabric sheet (2 x 3 curves)",
            ExportKind::Hysteresis => "hysteresis view (friction part, energy per cycle)",
            ExportKind::ClothFrame => "cloth: current frame, rendered (1280x720)",
            ExportKind::ClothSequence => "cloth: next 60 frames, rendered to a folder",
        }
    }

    pub fn default_name(self) -> &'static str {
        match self {
            ExportKind::CurrentView => "kestrel-curve.png",
            ExportKind::FabricSheet => "kestrel-sheet.png",
            ExportKind::Hysteresis => "kestrel-hysteresis.png",
            ExportKind::ClothFrame => "kestrel-cloth.png",
            ExportKind::ClothSequence => "kestrel-frames",
        }
    }
}

/// A modal question.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirm {
    /// Quit although results are unsaved.
    Quit,
    /// Overwrite an existing file.
    Overwrite(PendingWrite),
}

/// A write waiting for the user's yes to overwrite.
#[derive(Debug, Clone, PartialEq)]
pub enum PendingWrite {
    Params(PathBuf),
    Png(ExportKind, PathBuf),
}

/// A loaded curve and what kestrel knows of it.
#[derive(Debug, Clone)]
pub struct LoadedCurve {
    pub curve: Curve,
    /// KES values, formatted (name, value with unit), or why not available.
    pub values: Vec<(String, String)>,
    /// The latest fit of this curve, if any.
    pub fit: Option<CurveFit>,
}

/// The Connector tab: the three laws being edited and the selection.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorState {
    /// Traction, bending, shear, in that order.
    pub laws: [ConnectorLaw; 3],
    /// Which law is shown (0 traction, 1 bending, 2 shear).
    pub law: usize,
    pub selected_param: usize,
    /// μ before it was switched off, per law, to restore it.
    pub mu_memory: [f64; 3],
}

impl ConnectorState {
    pub fn current(&self) -> &ConnectorLaw {
        &self.laws[self.law]
    }

    pub fn law_index_for(test: KesTest) -> usize {
        match test {
            KesTest::Tensile => 0,
            KesTest::Bending => 1,
            KesTest::Shear | KesTest::Loop => 2,
        }
    }
}

impl Default for ConnectorState {
    fn default() -> Self {
        let friction = |level, mu, eps_f| FrictionLaw {
            level,
            mu,
            shape: FrictionShape::Dahl { eps_f, alpha: 1.0 },
        };
        Self {
            laws: [
                ConnectorLaw::Traction(TractionLaw {
                    k_t: 15000.0,
                    eps1: 0.03,
                    f1: 250.0,
                    eps1_aligned: None,
                    friction: friction(10.0, 0.3, 0.005),
                    toe: Default::default(),
                }),
                ConnectorLaw::Bending(BendingLaw {
                    k_b: 1.0e-5,
                    k0: 0.0,
                    friction: friction(4.0e-4, 0.1, 10.0),
                }),
                ConnectorLaw::Shear(ShearLaw {
                    k_s: 60.0,
                    theta0: 0.0,
                    friction: friction(1.0, 0.2, 0.008),
                }),
            ],
            law: 0,
            selected_param: 0,
            mu_memory: [0.3, 0.1, 0.2],
        }
    }
}

/// The Hysteresis tab: the driving path and its amplitude (fraction of the law's KES range).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HysteresisState {
    pub path: DrivingPath,
    /// Amplitude as a fraction of the KES range (8°, 2.5 1/cm, 5 % strain).
    pub amplitude: f64,
}

impl Default for HysteresisState {
    fn default() -> Self {
        Self {
            path: DrivingPath::FullCycles,
            amplitude: 1.0,
        }
    }
}

/// The Fit tab.
#[derive(Debug, Clone, PartialEq)]
pub struct FitState {
    pub model: FitModel,
    /// A fit is running on a worker: which curve, and the last progress.
    pub running: Option<(usize, Option<FitProgress>)>,
    /// Iterations seen in the running fit (all models together), for the gauge.
    pub iterations_seen: usize,
}

impl Default for FitState {
    fn default() -> Self {
        Self {
            model: FitModel::Auto,
            running: None,
            iterations_seen: 0,
        }
    }
}

/// A palette entry of the reduced model being played: its name and key.
#[derive(Debug, Clone, PartialEq)]
pub struct PaletteKey {
    pub name: String,
    pub key: char,
}

/// The Cloth tab: the scenes and reduced models found, the one loaded, its last frame, the
/// model's palette (empty for a scene) and the view's angles.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClothTabState {
    /// Scenes (`*.toml`), then reduced models (`*.krd`).
    pub scenes: Vec<PathBuf>,
    pub palette: Vec<PaletteKey>,
    pub selected: usize,
    pub loaded: Option<PathBuf>,
    pub frame: Option<ClothFrame>,
    /// View rotation about the up axis and tilt \[rad\].
    pub yaw: f64,
    pub pitch: f64,
}

/// The Export tab.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExportState {
    pub selected: usize,
    pub last_written: Option<PathBuf>,
    /// A cloth render under way: frames done and in all.
    pub rendering: Option<(usize, usize)>,
    /// The graphics adapter of the last cloth render.
    pub adapter: Option<String>,
}

/// Work for a worker thread, asked for by `update` and started by the event loop.
#[derive(Debug, Clone)]
pub enum Job {
    Fit {
        curve_index: usize,
        curve: Box<Curve>,
        options: FitOptions,
    },
    Open(PathBuf),
    SaveParams {
        path: PathBuf,
        force: bool,
    },
    ExportPng {
        kind: ExportKind,
        path: PathBuf,
        force: bool,
    },
    /// Load a scene and start its simulation thread (paused).
    ClothStart(PathBuf),
    /// Run, pause, step or stop the simulation thread.
    Cloth(ClothControl),
}

/// What comes back from the workers.
#[derive(Debug, Clone)]
pub enum Event {
    FitProgress(FitProgress),
    FitDone {
        curve_index: usize,
        fit: Box<CurveFit>,
    },
    Opened {
        curves: Vec<LoadedCurve>,
        errors: Vec<String>,
    },
    Written(PathBuf),
    /// A frame of the running cloth simulation.
    ClothFrame(Box<ClothFrame>),
    /// A reduced model was loaded for playback: its palette.
    ClothPalette(Vec<PaletteKey>),
    /// A cloth render: frames written so far, in all, and the adapter drawing them.
    RenderProgress {
        done: usize,
        total: usize,
        adapter: String,
    },
    /// The file exists: ask before overwriting.
    Exists(PendingWrite),
    Failed(String),
}

/// Everything the user can do, named.
#[derive(Debug, Clone)]
pub enum Action {
    NextTab,
    PrevTab,
    GoTab(Tab),
    ToggleHelp,
    Quit,
    /// Escape: close a popup or prompt.
    Cancel,
    Up,
    Down,
    OpenPrompt,
    PromptInput(char),
    PromptBackspace,
    /// Clear the prompt's text (Ctrl-U).
    PromptClear,
    PromptComplete,
    PromptSubmit,
    /// Connector: next law (traction → bending → shear).
    CycleLaw,
    /// Connector: Dahl ↔ second-order Bliman–Sorine.
    ToggleFrictionModel,
    /// Connector: load-dependent level on/off.
    ToggleMu,
    /// Connector: multiply the selected parameter by (1 + fraction).
    Nudge(f64),
    /// Connector: type a value for the selected parameter.
    EditValue,
    /// Hysteresis: next driving path.
    CyclePath,
    /// Hysteresis: scale the amplitude.
    ScaleAmplitude(f64),
    /// Fit: next model.
    CycleModel,
    /// Fit: run the fit of the selected curve on a worker.
    RunFit,
    /// Fit: put the fitted law into the Connector tab.
    AcceptFit,
    /// Fit: save the fabric's parameter set (asks for a path).
    SaveParams,
    /// Export: write the selected PNG (asks for a path).
    Export,
    /// Cloth: load the selected scene.
    ClothLoad,
    /// Cloth: run / pause.
    ClothRunPause,
    /// Cloth: one step.
    ClothStep,
    /// Cloth: apply palette entry k of the reduced model being played.
    ClothImpulse(usize),
    /// Cloth: turn the view (yaw, pitch) \[rad\].
    Rotate(f64, f64),
    /// A modal question answered.
    Answer(bool),
    Event(Event),
}

/// The whole workbench.
#[derive(Debug, Clone)]
pub struct App {
    pub tab: Tab,
    pub curves: Vec<LoadedCurve>,
    pub selected: usize,
    pub connector: ConnectorState,
    pub hysteresis: HysteresisState,
    pub fit: FitState,
    pub export: ExportState,
    pub cloth: ClothTabState,
    pub status: String,
    pub help: bool,
    pub prompt: Option<Prompt>,
    pub confirm: Option<Confirm>,
    /// Fits that are not saved in a parameter file yet.
    pub unsaved: bool,
    pub should_quit: bool,
    /// Colours off (NO_COLOR).
    pub monochrome: bool,
    /// Work asked for by the last updates, taken by the event loop.
    pub jobs: Vec<Job>,
}

impl App {
    pub fn new(curves: Vec<LoadedCurve>, status: String, monochrome: bool) -> Self {
        let mut app = Self {
            tab: Tab::Curves,
            curves,
            selected: 0,
            connector: ConnectorState::default(),
            hysteresis: HysteresisState::default(),
            fit: FitState::default(),
            export: ExportState::default(),
            cloth: ClothTabState {
                scenes: cloth_entries(),
                pitch: 0.35,
                ..ClothTabState::default()
            },
            status,
            help: false,
            prompt: None,
            confirm: None,
            unsaved: false,
            should_quit: false,
            monochrome,
            jobs: Vec::new(),
        };
        app.follow_selection();
        app
    }

    pub fn selected_curve(&self) -> Option<&LoadedCurve> {
        self.curves.get(self.selected)
    }

    /// The Connector law follows the test of the selected curve.
    fn follow_selection(&mut self) {
        if let Some(c) = self.selected_curve() {
            self.connector.law = ConnectorState::law_index_for(c.curve.test);
            self.connector.selected_param = 0;
        }
    }

    /// Indices of the curves of the selected curve's fabric.
    pub fn fabric_members(&self) -> Vec<usize> {
        let Some(sel) = self.selected_curve() else {
            return Vec::new();
        };
        self.curves
            .iter()
            .enumerate()
            .filter(|(_, c)| c.curve.fabric == sel.curve.fabric)
            .map(|(i, _)| i)
            .collect()
    }

    fn open_prompt(&mut self, purpose: PromptPurpose, label: &str, text: String) {
        self.prompt = Some(Prompt {
            purpose,
            label: label.to_string(),
            text,
        });
    }

    /// The one place that changes the state.
    pub fn update(&mut self, action: Action) {
        if let Some(confirm) = self.confirm.clone() {
            match action {
                Action::Answer(yes) => {
                    self.confirm = None;
                    if yes {
                        match confirm {
                            Confirm::Quit => self.should_quit = true,
                            Confirm::Overwrite(PendingWrite::Params(path)) => {
                                self.jobs.push(Job::SaveParams { path, force: true })
                            }
                            Confirm::Overwrite(PendingWrite::Png(kind, path)) => {
                                if kind.is_cloth() {
                                    self.export.rendering = Some((0, kind.frames()));
                                }
                                self.jobs.push(Job::ExportPng {
                                    kind,
                                    path,
                                    force: true,
                                })
                            }
                        }
                    } else {
                        self.status = "cancelled".into();
                    }
                }
                Action::Cancel => {
                    self.confirm = None;
                    self.status = "cancelled".into();
                }
                Action::Event(e) => self.on_event(e),
                _ => {}
            }
            return;
        }
        if self.prompt.is_some() {
            match action {
                Action::PromptInput(c) => {
                    if let Some(p) = self.prompt.as_mut() {
                        p.text.push(c);
                    }
                }
                Action::PromptBackspace => {
                    if let Some(p) = self.prompt.as_mut() {
                        p.text.pop();
                    }
                }
                Action::PromptClear => {
                    if let Some(p) = self.prompt.as_mut() {
                        p.text.clear();
                    }
                }
                Action::PromptComplete => {
                    if let Some(p) = self.prompt.as_mut() {
                        if let Some(done) = super::complete_path(&p.text) {
                            p.text = done;
                        }
                    }
                }
                Action::PromptSubmit => self.submit_prompt(),
                Action::Cancel => {
                    self.prompt = None;
                    self.status = "cancelled".into();
                }
                Action::Event(e) => self.on_event(e),
                _ => {}
            }
            return;
        }
        if self.help {
            match action {
                Action::ToggleHelp | Action::Cancel => self.help = false,
                Action::Quit => self.request_quit(),
                Action::Event(e) => self.on_event(e),
                _ => {}
            }
            return;
        }
        match action {
            Action::NextTab => self.tab = Tab::ALL[(self.tab.index() + 1) % Tab::ALL.len()],
            Action::PrevTab => {
                self.tab = Tab::ALL[(self.tab.index() + Tab::ALL.len() - 1) % Tab::ALL.len()]
            }
            Action::GoTab(t) => self.tab = t,
            Action::ToggleHelp => self.help = true,
            Action::Quit => self.request_quit(),
            Action::Cancel => {}
            Action::Up => self.move_selection(true),
            Action::Down => self.move_selection(false),
            Action::OpenPrompt => self.open_prompt(
                PromptPurpose::Open,
                "open KES file or folder (Tab completes):",
                "kes_data/".into(),
            ),
            Action::CycleLaw => {
                self.connector.law = (self.connector.law + 1) % 3;
                self.connector.selected_param = 0;
            }
            Action::ToggleFrictionModel => {
                let i = self.connector.law;
                let second = matches!(
                    self.connector.laws[i].friction().shape,
                    FrictionShape::Dahl { .. }
                );
                self.connector.laws[i] = self.connector.laws[i].with_shape(second);
                self.connector.selected_param = self
                    .connector
                    .selected_param
                    .min(self.connector.laws[i].parameters().len() - 1);
                self.status = format!(
                    "friction: {}",
                    if second {
                        "second-order Bliman-Sorine"
                    } else {
                        "Dahl"
                    }
                );
            }
            Action::ToggleMu => {
                let i = self.connector.law;
                let mu = self.connector.laws[i].friction().mu;
                let next = if mu > 0.0 {
                    self.connector.mu_memory[i] = mu;
                    0.0
                } else {
                    self.connector.mu_memory[i].max(0.05)
                };
                match self.connector.laws[i].with_mu(next) {
                    Ok(l) => {
                        self.connector.laws[i] = l;
                        self.status = if next > 0.0 {
                            format!("load-dependent friction level on: mu = {next}")
                        } else {
                            "load-dependent friction level off (the paper's additive law)".into()
                        };
                    }
                    Err(e) => self.status = format!("refused: {e}"),
                }
            }
            Action::Nudge(fraction) => {
                let i = self.connector.law;
                let params = self.connector.laws[i].parameters();
                if let Some(p) = params.get(self.connector.selected_param) {
                    let value = if p.value == 0.0 {
                        fraction.abs() * 1e-3 * fraction.signum()
                    } else {
                        p.value * (1.0 + fraction)
                    };
                    self.set_parameter(p.name, value);
                }
            }
            Action::EditValue => {
                if self.tab == Tab::Connector {
                    let params = self.connector.current().parameters();
                    if let Some(p) = params.get(self.connector.selected_param) {
                        self.open_prompt(
                            PromptPurpose::ParameterValue,
                            &format!("{} [{}] =", p.name, p.unit),
                            format!("{}", p.value),
                        );
                    }
                }
            }
            Action::CyclePath => {
                self.hysteresis.path = match self.hysteresis.path {
                    DrivingPath::FullCycles => DrivingPath::Decaying,
                    DrivingPath::Decaying => DrivingPath::PartialReversals,
                    DrivingPath::PartialReversals => DrivingPath::FullCycles,
                };
                self.status = format!("driving path: {}", self.hysteresis.path.name());
            }
            Action::ScaleAmplitude(f) => {
                self.hysteresis.amplitude = (self.hysteresis.amplitude * f).clamp(0.05, 4.0);
            }
            Action::CycleModel => {
                self.fit.model = match self.fit.model {
                    FitModel::Auto => FitModel::Dahl,
                    FitModel::Dahl => FitModel::Bs2,
                    FitModel::Bs2 => FitModel::DahlAlpha,
                    FitModel::DahlAlpha => FitModel::Auto,
                };
            }
            Action::RunFit => self.run_fit(),
            Action::AcceptFit => self.accept_fit(),
            Action::SaveParams => {
                if self.curves.iter().all(|c| c.fit.is_none()) {
                    self.status = "nothing to save: fit a curve first (Fit tab, Enter)".into();
                } else {
                    let fabric = self
                        .selected_curve()
                        .map(|c| crate::fit::fabric::fabric_slug(&c.curve.fabric))
                        .unwrap_or_else(|| "fabric".into());
                    self.open_prompt(
                        PromptPurpose::SaveParams,
                        "save parameter set to (.toml or .json):",
                        format!("{fabric}.params.toml"),
                    );
                }
            }
            Action::Export => {
                let kind = ExportKind::ALL[self.export.selected.min(ExportKind::ALL.len() - 1)];
                if kind.is_cloth() && self.cloth.loaded.is_none() {
                    self.status = "no simulation: load a scene in the Cloth tab first".into();
                } else if kind.is_cloth() && self.export.rendering.is_some() {
                    self.status = "a render is already running".into();
                } else {
                    let label = if kind == ExportKind::ClothSequence {
                        "write frames to folder:"
                    } else {
                        "write PNG to:"
                    };
                    self.open_prompt(
                        PromptPurpose::ExportPng(kind),
                        label,
                        kind.default_name().to_string(),
                    );
                }
            }
            Action::ClothLoad => match self.cloth.scenes.get(self.cloth.selected) {
                Some(path) => {
                    self.cloth.loaded = Some(path.clone());
                    self.cloth.frame = None;
                    self.cloth.palette.clear();
                    self.jobs.push(Job::ClothStart(path.clone()));
                    self.status = if super::playback::is_model(path) {
                        format!(
                            "loading model {} — Space plays, palette keys apply impulses",
                            path.display()
                        )
                    } else {
                        format!("loaded {} — Space runs, n steps", path.display())
                    };
                }
                None => {
                    self.status = "no scenes: start kestrel in the folder that holds scenes/".into()
                }
            },
            Action::ClothRunPause => {
                if self.cloth.loaded.is_none() {
                    self.status = "load a scene first (Enter)".into();
                } else {
                    let running = self.cloth.frame.as_ref().is_some_and(|f| f.running);
                    self.jobs.push(Job::Cloth(if running {
                        ClothControl::Pause
                    } else {
                        ClothControl::Run
                    }));
                }
            }
            Action::ClothStep => {
                if self.cloth.loaded.is_some() {
                    self.jobs.push(Job::Cloth(ClothControl::Step));
                }
            }
            Action::ClothImpulse(k) => match self.cloth.palette.get(k) {
                Some(entry) => {
                    self.status = format!("impulse: {}", entry.name);
                    self.jobs.push(Job::Cloth(ClothControl::Impulse(k)));
                }
                None => self.status = "no reduced model playing: load a .krd first".into(),
            },
            Action::Rotate(yaw, pitch) => {
                self.cloth.yaw = (self.cloth.yaw + yaw).rem_euclid(std::f64::consts::TAU);
                self.cloth.pitch = (self.cloth.pitch + pitch).clamp(-1.5, 1.5);
            }
            Action::Answer(_) => {}
            Action::PromptInput(_)
            | Action::PromptBackspace
            | Action::PromptClear
            | Action::PromptComplete
            | Action::PromptSubmit => {}
            Action::Event(e) => self.on_event(e),
        }
    }

    fn request_quit(&mut self) {
        if self.unsaved {
            self.confirm = Some(Confirm::Quit);
        } else {
            self.should_quit = true;
        }
    }

    fn move_selection(&mut self, up: bool) {
        match self.tab {
            Tab::Connector => {
                let n = self.connector.current().parameters().len();
                let s = &mut self.connector.selected_param;
                *s = if up { (*s + n - 1) % n } else { (*s + 1) % n };
            }
            Tab::Cloth => {
                let n = self.cloth.scenes.len().max(1);
                let s = &mut self.cloth.selected;
                *s = if up { (*s + n - 1) % n } else { (*s + 1) % n };
            }
            Tab::Export => {
                let n = ExportKind::ALL.len();
                let s = &mut self.export.selected;
                *s = if up { (*s + n - 1) % n } else { (*s + 1) % n };
            }
            _ => {
                let n = self.curves.len();
                if n > 0 {
                    self.selected = if up {
                        (self.selected + n - 1) % n
                    } else {
                        (self.selected + 1) % n
                    };
                    self.follow_selection();
                }
            }
        }
    }

    fn set_parameter(&mut self, name: &str, value: f64) {
        let i = self.connector.law;
        match self.connector.laws[i].with_parameter(name, value) {
            Ok(l) => {
                self.connector.laws[i] = l;
                self.status = format!("{name} = {value:.6e}");
            }
            Err(e) => self.status = format!("refused: {e}"),
        }
    }

    fn submit_prompt(&mut self) {
        let Some(prompt) = self.prompt.take() else {
            return;
        };
        let text = prompt.text.trim().to_string();
        match prompt.purpose {
            PromptPurpose::Open => {
                if text.is_empty() {
                    self.status = "no path given".into();
                } else {
                    self.jobs.push(Job::Open(PathBuf::from(text)));
                    self.status = "opening…".into();
                }
            }
            PromptPurpose::ParameterValue => match text.parse::<f64>() {
                Ok(v) => {
                    let params = self.connector.current().parameters();
                    if let Some(p) = params.get(self.connector.selected_param) {
                        self.set_parameter(p.name, v);
                    }
                }
                Err(_) => self.status = format!("refused: `{text}` is not a number"),
            },
            PromptPurpose::SaveParams => {
                if text.is_empty() {
                    self.status = "no path given".into();
                } else {
                    self.jobs.push(Job::SaveParams {
                        path: PathBuf::from(text),
                        force: false,
                    });
                }
            }
            PromptPurpose::ExportPng(kind) => {
                if text.is_empty() {
                    self.status = "no path given".into();
                } else {
                    self.jobs.push(Job::ExportPng {
                        kind,
                        path: PathBuf::from(text),
                        force: false,
                    });
                    self.status = if kind.is_cloth() {
                        self.export.rendering = Some((0, kind.frames()));
                        "rendering…".into()
                    } else {
                        "writing PNG…".into()
                    };
                }
            }
        }
    }

    fn run_fit(&mut self) {
        if self.fit.running.is_some() {
            self.status = "a fit is already running".into();
            return;
        }
        let Some(curve) = self.selected_curve().map(|c| c.curve.clone()) else {
            self.status = "no curve selected: open one with o".into();
            return;
        };
        let options = FitOptions {
            model: self.fit.model,
            ..FitOptions::default()
        };
        self.status = format!("fitting {} {} …", curve.test, curve.direction);
        self.jobs.push(Job::Fit {
            curve_index: self.selected,
            curve: Box::new(curve),
            options,
        });
        self.fit.running = Some((self.selected, None));
        self.fit.iterations_seen = 0;
    }

    fn accept_fit(&mut self) {
        let Some(c) = self.selected_curve() else {
            return;
        };
        match c.fit.as_ref().and_then(|f| f.law()) {
            Some(law) => {
                let i = ConnectorState::law_index_for(c.curve.test);
                self.connector.laws[i] = law;
                self.connector.law = i;
                self.status = format!("fitted {} law accepted into the Connector tab", law.name());
            }
            None => self.status = "no fitted law for this curve: run the fit first".into(),
        }
    }

    fn on_event(&mut self, event: Event) {
        match event {
            Event::FitProgress(p) => {
                self.fit.iterations_seen += 1;
                if let Some((_, last)) = self.fit.running.as_mut() {
                    *last = Some(p);
                }
            }
            Event::FitDone { curve_index, fit } => {
                self.fit.running = None;
                self.status = match &fit.status {
                    crate::fit::FitStatus::Fitted => {
                        self.unsaved = true;
                        format!(
                            "fit done: {} NRMSE {:.2} % in {:.0} ms",
                            fit.model,
                            100.0 * fit.nrmse,
                            fit.elapsed_ms
                        )
                    }
                    crate::fit::FitStatus::Failed(why) => format!("fit failed: {why}"),
                };
                if let Some(c) = self.curves.get_mut(curve_index) {
                    c.fit = Some(*fit);
                }
            }
            Event::Opened { curves, errors } => {
                let n = curves.len();
                if n > 0 {
                    self.selected = self.curves.len();
                    self.curves.extend(curves);
                    self.follow_selection();
                }
                self.status = if errors.is_empty() {
                    format!("opened {n} curve(s)")
                } else {
                    format!("opened {n} curve(s); {}", errors.join("; "))
                };
            }
            Event::Written(path) => {
                self.export.rendering = None;
                if path.extension().is_some_and(|e| e == "toml" || e == "json") {
                    self.unsaved = false;
                } else {
                    self.export.last_written = Some(path.clone());
                }
                self.status = format!("written {}", path.display());
            }
            Event::ClothFrame(frame) => self.cloth.frame = Some(*frame),
            Event::ClothPalette(palette) => {
                let names: Vec<&str> = palette.iter().map(|p| p.name.as_str()).collect();
                self.status = format!("model loaded — Space plays; impulses: {}", names.join(", "));
                self.cloth.palette = palette;
            }
            Event::RenderProgress {
                done,
                total,
                adapter,
            } => {
                self.export.rendering = Some((done, total));
                self.status = format!("rendering frame {done}/{total} on {adapter}");
                self.export.adapter = Some(adapter);
            }
            Event::Exists(pending) => {
                self.export.rendering = None;
                let path = match &pending {
                    PendingWrite::Params(p) | PendingWrite::Png(_, p) => p.display().to_string(),
                };
                self.status = format!("{path} exists: overwrite? (y/n)");
                self.confirm = Some(Confirm::Overwrite(pending));
            }
            Event::Failed(message) => {
                self.export.rendering = None;
                self.status = format!("error: {message}");
            }
        }
    }
}

/// The Cloth tab's list: the dynamic scenes of `scenes/`, then the reduced models of `scenes/`
/// and of the working directory.
fn cloth_entries() -> Vec<PathBuf> {
    let scenes = std::path::Path::new("scenes");
    let mut out = super::cloth::dynamic_scenes(scenes);
    out.extend(super::playback::reduced_models(scenes));
    out.extend(super::playback::reduced_models(std::path::Path::new(".")));
    out
}
