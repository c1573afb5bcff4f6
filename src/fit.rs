//! Identification of the connector laws from a curve: initial estimates from the curve's
//! shape (Ngo Ngoc & Boivin §6), then Levenberg–Marquardt on the forces sample by sample
//! along the measured path, with an analytic Jacobian from forward sensitivities.

mod coords;
pub mod estimate;
pub mod fabric;
mod options;
pub mod path_model;
mod problem;
pub mod report;
mod strategy;
mod termination;
mod thinning;
pub mod values;

pub use coords::Param;
pub use fabric::{add_properties, assemble_fabric_params, fit_fabric, fit_fabrics, FabricFit};
pub use options::{FitModel, FitOptions, FitProgress, MuMode, OffsetMode, ProgressSink, ToeChoice};
pub use problem::Termination;
pub use report::{CurveFit, FitStatus, ParamEstimate, ValuesSideBySide, FIXED_BY_THE_MODEL};
pub use strategy::{
    fit_curve, fit_curve_with_progress, fit_specimens, fit_specimens_with_progress,
};
pub use thinning::thinned_samples;
