//! kestrel: a terminal lab workbench for the mechanics of woven fabric.
//!
//! Layers, each importing only from the ones above it:
//!
//! ```text
//! physics   friction, material            (Dahl / Bliman–Sorine operators, connector laws)
//! data      kes, params                   (KES curves, protocols, values; parameter files)
//! numerics  fit, validate, cloth, scene,  (identification, prediction on other paths; cloth
//!           reduced                       simulation, scene files; reduced dynamics)
//! output    plot, render                  (PNG plots; offline frames)
//! ui        tui                           (the terminal workbench)
//! main.rs                                 (command line → library calls)
//! ```
//!
//! Inside the library every quantity is SI (`f64`); Kawabata units appear only at the edges.

pub mod atomic;
pub mod cloth;
pub mod fit;
pub mod friction;
pub mod input;
pub mod kes;
pub mod material;
mod named;
pub mod params;
pub mod plot;
pub mod reduced;
#[cfg(feature = "render")]
pub mod render;
pub mod scene;
#[cfg(feature = "tui")]
pub mod tui;
pub mod validate;

// physics: friction operators and the connector laws built on them.
pub use friction::{FrictionShape, ParamError};
pub use material::{BendingLaw, ConnectorLaw, FrictionLaw, MaterialLaw, ShearLaw, TractionLaw};

// data: KES curves and values, parameter files, atomic writes.
pub use atomic::{write_atomic, WriteError};
pub use kes::{Curve, Direction, KesError, KesTest, KesValues, Protocol};
pub use params::{FabricParams, ParamsError};

// numerics: identification, cloth simulation, scene files, reduced dynamics.
pub use cloth::{ClothPipeline, ClothWorld, Integrator, StepParameters, StepReport};
pub use fit::{fit_curve, fit_fabric, CurveFit, FabricFit, FitModel, FitOptions};
pub use reduced::{ReducedModel, Reduction};
pub use scene::{DynamicScene, Scene, SceneError, SceneFile};

// output: PNG plots.
pub use plot::{CurvePlot, PlotError, PlotSize};
