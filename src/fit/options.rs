//! What a fit is asked for: the friction model, the toe, μ free or zero, the zero offset,
//! the evaluation budget; and where its progress (iteration, NRMSE) goes.

use serde::{Deserialize, Serialize};

crate::named::named_enum! {
    /// Friction model to fit.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum FitModel: "model", exact {
        /// Dahl / Bliman–Sorine first order (α = 1).
        Dahl => "dahl",
        /// Dahl with a free exponent α ≥ 1.
        DahlAlpha => "dahl-alpha",
        /// Bliman–Sorine second order (stiction peak).
        Bs2 => "bs2",
        /// Fit Dahl and second order, with μ free and μ = 0, and keep the lowest AIC.
        Auto => "auto",
    }
}

/// The load-dependent friction level μ: fitted, or 0 (the paper's additive law).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MuMode {
    Free,
    Zero,
}

crate::named::named_enum! {
    /// The traction toe to fit: one shape, or both with the lower AIC kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum ToeChoice: "toe", exact {
        Quadratic => "quadratic",
        Power => "power",
        Auto => "auto",
    }
}

/// The instrument's force zero offset: none (the curve's own zero), or fitted with the law
/// (then exported with it and added wherever the law is driven).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OffsetMode {
    Zero,
    Fit,
}

impl std::str::FromStr for OffsetMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "zero" => Ok(OffsetMode::Zero),
            "fit" => Ok(OffsetMode::Fit),
            o => Err(format!("unknown offset mode `{o}` — expected zero or fit")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    pub model: FitModel,
    /// Traction toe shape (tensile curves only).
    pub toe: ToeChoice,
    pub mu: MuMode,
    /// Fit a force zero offset (the instrument's zero) with the law; it is then exported with
    /// the law and added wherever the law is driven. Off by default (docs/fitting.md).
    pub offset: OffsetMode,
    /// Most residual evaluations for one least-squares run.
    pub max_evaluations: usize,
    /// W of the value-weighted fit (`--weight-values`): the objective is NRMSE² + W²·g², g the
    /// RMS relative gap between the KES values of the law on the instrument's protocol and
    /// the measured ones. 0 (the default): the curve alone (docs/fitting.md).
    pub weight_values: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            model: FitModel::Auto,
            toe: ToeChoice::Auto,
            mu: MuMode::Free,
            offset: OffsetMode::Zero,
            max_evaluations: 400,
            weight_values: 0.0,
        }
    }
}

/// Live progress of a fit: which model, the iteration and the current NRMSE.
#[derive(Debug, Clone, PartialEq)]
pub struct FitProgress {
    pub model: String,
    /// Jacobian evaluations so far in this least-squares run.
    pub iteration: usize,
    /// RMS(residual)/(max − min of the force) at the last evaluation.
    pub nrmse: f64,
}

/// Where progress goes (a channel to a UI, a progress bar); called once per iteration.
pub type ProgressSink<'a> = &'a (dyn Fn(&FitProgress) + Sync);
