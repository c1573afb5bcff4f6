//! What flows through the workbench: [`Action`]s into `App::update`, [`Job`]s out to the
//! workers, [`Event`]s back from them, and the plain data they carry.

use std::path::{Path, PathBuf};

use super::files::Completion;
use crate::fit::{CurveFit, FitOptions, FitProgress};
use crate::kes::{Curve, Direction};
use crate::material::ConnectorLaw;
use crate::plot::Overlay;

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

    pub(crate) fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }
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
    pub(crate) fn frames(self) -> usize {
        if self == ExportKind::ClothSequence {
            CLOTH_SEQUENCE_FRAMES
        } else {
            1
        }
    }

    /// Rendered from the Cloth tab's simulation (rather than plotted).
    pub(crate) fn is_cloth(self) -> bool {
        matches!(self, ExportKind::ClothFrame | ExportKind::ClothSequence)
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            ExportKind::CurrentView => "current view (curve, overlay, residuals)",
            ExportKind::FabricSheet => "fabric sheet (2 x 3 curves)",
            ExportKind::Hysteresis => "hysteresis view (friction part, energy per cycle)",
            ExportKind::ClothFrame => "cloth: current frame, rendered (1280x720)",
            ExportKind::ClothSequence => "cloth: next 60 frames, rendered to a folder",
        }
    }

    /// The name offered for an export of what is shown: `subject` names the curve, fabric,
    /// law or scene (a file-name slug), e.g. `cotton-shirting-sheet.png`.
    pub(crate) fn default_name(self, subject: &str) -> String {
        match self {
            ExportKind::CurrentView => format!("{subject}.png"),
            ExportKind::FabricSheet => format!("{subject}-sheet.png"),
            ExportKind::Hysteresis => format!("{subject}-law-hysteresis.png"),
            ExportKind::ClothFrame => format!("{subject}-frame.png"),
            ExportKind::ClothSequence => format!("{subject}-frames"),
        }
    }
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
    /// The file's canonical path (where it could be resolved): a file opened twice is kept once.
    pub canonical: Option<PathBuf>,
    /// Which reading this is, numbered by the curve list (0 until listed): a curve read again
    /// gets a new number, and a fit started on an older reading is dropped when it ends.
    pub generation: u64,
}

/// A palette entry of the reduced model being played: its name and key.
#[derive(Debug, Clone, PartialEq)]
pub struct PaletteKey {
    pub name: String,
    pub key: char,
}

/// A path names a reduced model (by its extension).
pub(crate) fn is_model(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "krd")
}

/// What the Cloth tab runs for a fabric card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardTest {
    /// The card's fabric hanging by two corners (a simulation to run, pause and step).
    Hang,
    /// The Cusick drape test: the drape coefficient and folds.
    Drape,
    /// The cantilever bending test of a strip along the warp or the weft: the bending length.
    Cantilever(Direction),
}

impl CardTest {
    pub const ALL: [CardTest; 4] = [
        CardTest::Hang,
        CardTest::Drape,
        CardTest::Cantilever(Direction::Warp),
        CardTest::Cantilever(Direction::Weft),
    ];

    pub(crate) fn title(self) -> String {
        match self {
            CardTest::Hang => "hang".into(),
            CardTest::Drape => "drape test".into(),
            CardTest::Cantilever(d) => format!("cantilever {d}"),
        }
    }
}

/// What the Cloth tab loads: a scene or reduced model file, or a test of a fabric card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClothSource {
    File(PathBuf),
    Card { card: PathBuf, test: CardTest },
}

/// A lab test's outcome as the Cloth tab shows it: lines of figures and the final mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct LabReport {
    pub lines: Vec<String>,
    pub frame: Option<ClothFrame>,
}

/// Commands to a running simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClothControl {
    Run,
    Pause,
    /// One step, then paused.
    Step,
    Stop,
    /// Apply palette entry k of a reduced model (ignored by a full simulation).
    Impulse(usize),
    /// Turn the SH sky of a reduced model's transfer shading to this azimuth about +y \[deg\]
    /// (ignored without a transfer).
    SkyAzimuth(i32),
    /// Render the current state (`ClothFrame`: one PNG at `path`) or run on and render
    /// `ExportKind::frames` frames into the folder `path` (`ClothSequence`), pausing the
    /// simulation; nothing replaced unless `force`.
    Render {
        kind: ExportKind,
        path: PathBuf,
        force: bool,
    },
}

/// What the Cloth tab shows of a simulation at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct ClothFrame {
    pub scene: String,
    /// Particle positions \[m\].
    pub positions: Vec<[f64; 3]>,
    /// Particles along the warp and the weft.
    pub nu: usize,
    pub nv: usize,
    /// Unit vector against gravity (the view's up).
    pub up: [f64; 3],
    pub steps: u64,
    pub time_s: f64,
    /// Mean wall time per step since the last frame \[ms\].
    pub ms_per_step: f64,
    /// Largest deformation rates of structural and shear pairs (0.1 = 10 %).
    pub rate_structural: f64,
    pub rate_shear: f64,
    pub kinetic_j: f64,
    pub elastic_j: f64,
    pub running: bool,
    /// Playback of a reduced model: what a full simulation does not have.
    pub reduced: Option<ReducedStats>,
}

/// What the Cloth tab shows of a reduced model's playback.
#[derive(Debug, Clone, PartialEq)]
pub struct ReducedStats {
    pub rank: usize,
    /// Frames reconstructed per second of wall time (step, mean + U·q, door turn).
    pub frames_per_s: f64,
    /// Palette entry in force.
    pub entry: usize,
    pub entry_name: String,
    /// Door angle \[deg\], with a door.
    pub door_deg: Option<f64>,
    pub jumps: usize,
    /// Impulses refused.
    pub ignored: usize,
    /// The frame shaded by the model's radiance transfer, when it holds one.
    pub shading: Option<TransferShade>,
}

/// A played frame shaded by reduced radiance transfer under the SH sky.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferShade {
    /// Transfer rank r_a.
    pub rank: usize,
    /// Sky azimuth about +y \[deg\].
    pub sky_deg: i32,
    /// Exit radiance per vertex, sRGB-encoded (vertex order as the positions).
    pub colours: Vec<[u8; 3]>,
}

/// A curve with its overlay and legend, owned so a worker can draw it.
#[derive(Debug, Clone)]
pub struct PlotItem {
    pub curve: Curve,
    pub overlay: Option<Overlay>,
    pub legend: Vec<String>,
}

/// Everything one plotted export needs, copied from the tabs.
#[derive(Debug, Clone)]
pub enum ExportRequest {
    Curve(PlotItem),
    Sheet { title: String, items: Vec<PlotItem> },
    Hysteresis { item: PlotItem, law: ConnectorLaw },
    Nothing(String),
}

/// Work for a worker thread, asked for by `update` and started by the event loop.
#[derive(Debug, Clone)]
pub enum Job {
    /// Fit the curve at `curve_index`: `specimens` is it and its replicates, fitted jointly.
    Fit {
        curve_index: usize,
        specimens: Vec<Curve>,
        options: FitOptions,
    },
    /// Open what the prompt names: a file, a folder, a folder of fabric folders, or a glob
    /// pattern.
    Open(String),
    /// Write the parameter set of `fabric` assembled from its fitted curves, with the laws
    /// accepted in their place (per direction; the law says its test).
    SaveParams {
        path: PathBuf,
        force: bool,
        fabric: String,
        fitted: Vec<(Curve, CurveFit)>,
        accepted: Vec<(Direction, ConnectorLaw)>,
        /// Every curve of the fabric: the card's `[properties]` are read from them.
        curves: Vec<Curve>,
        /// The files of the open curves: never written over.
        inputs: Vec<PathBuf>,
    },
    ExportPng {
        kind: ExportKind,
        path: PathBuf,
        force: bool,
        request: Box<ExportRequest>,
        /// The files of the open curves: never written over.
        inputs: Vec<PathBuf>,
    },
    /// Complete the path typed in the prompt.
    CompletePath(String),
    /// Read the fabric card at the path: once read, the Cloth tab offers its tests.
    ReadCard(PathBuf),
    /// List the scenes and reduced models under `root` (the working directory when empty).
    ScanCloth(PathBuf),
    /// Load a scene, a model or a card's test and start its thread (a simulation paused, a lab
    /// test running); `run` numbers it (a lab test's events carry it).
    ClothStart { source: ClothSource, run: u64 },
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
    /// A card written while a source file differs on disk from the bytes read (the library's
    /// warning).
    CardWritten {
        path: PathBuf,
        warning: String,
    },
    /// The card at `path` read: the warnings about it (its sources changed on disk), or why
    /// it could not be read.
    CardRead {
        path: PathBuf,
        outcome: Result<Vec<String>, String>,
    },
    /// A typed path (`typed`) and its completion.
    PathCompleted {
        typed: String,
        completed: Completion,
    },
    /// The scenes, then the reduced models, found for the Cloth tab.
    ClothScanned(Vec<PathBuf>),
    /// A frame of the running cloth simulation.
    ClothFrame(Box<ClothFrame>),
    /// The progress (0..1) of the lab test started as `run`.
    LabProgress {
        run: u64,
        fraction: f64,
    },
    /// The lab test started as `run` ended: its figures, or why not.
    LabDone {
        run: u64,
        outcome: Result<Box<LabReport>, String>,
    },
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
    /// Open / close the message log (every status and error said, in full).
    ToggleMessages,
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
    /// Connector: the law of the other direction (warp ↔ weft).
    ToggleDirection,
    /// Connector: Dahl ↔ second-order Bliman–Sorine.
    ToggleFrictionModel,
    /// Connector: the traction toe quadratic ↔ power.
    ToggleToe,
    /// Connector: the law shown becomes the fabric's law for its test and direction.
    AcceptLaw,
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
    /// Fit: scroll the result by this many lines (down when positive).
    ScrollResult(isize),
    /// Fit: run the fit of the selected curve on a worker.
    RunFit,
    /// Fit: fit every curve of the selected curve's fabric, one after the other.
    RunFitAll,
    /// Fit: send the fabric's saved card to the Cloth tab (hang, drape test, cantilever).
    SendCard,
    /// Fit: the fitted law becomes the fabric's law (shown in the Connector tab).
    AcceptFit,
    /// Fit, Connector: save the fabric's accepted and fitted laws (asks for a path).
    SaveParams,
    /// Export: write the selected PNG (asks for a path).
    Export,
    /// Cloth: load the selected scene.
    ClothLoad,
    /// Cloth: stop the lab test running.
    ClothStop,
    /// Cloth: run / pause.
    ClothRunPause,
    /// Cloth: one step.
    ClothStep,
    /// Cloth: apply palette entry k of the reduced model being played.
    ClothImpulse(usize),
    /// Cloth: turn the view (yaw, pitch) \[rad\].
    Rotate(f64, f64),
    /// Cloth: turn the sky of a model's transfer shading by this many degrees about +y.
    ClothSky(i32),
    /// A modal question answered.
    Answer(bool),
    Event(Event),
}
