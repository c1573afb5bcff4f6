//! Identification of the connector laws from a curve: initial estimates from the curve's
//! shape (Ngo Ngoc & Boivin §6), then Levenberg–Marquardt on the forces sample by sample
//! along the measured path, with an analytic Jacobian from forward sensitivities.

pub mod estimate;
pub mod fabric;
pub mod path_model;
pub mod problem;
pub mod report;
pub mod values;

pub use fabric::{assemble_fabric_params, fit_fabric, fit_fabrics, FabricFit};
pub use problem::{
    fit_curve, fit_curve_with_progress, FitModel, FitOptions, FitProgress, MuMode, ProgressSink,
    ToeChoice,
};
pub use report::{CurveFit, FitStatus, ParamEstimate};
