//! Why a Levenberg–Marquardt run stopped, said for people and in `--json`.

use std::fmt;

use levenberg_marquardt::TerminationReason;
use serde::{Serialize, Serializer};

/// Why a least-squares run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// No run was made (the curve could not be fitted).
    NotRun,
    /// The relative change of the residual (ftol) or of the parameters (xtol) became small.
    Converged {
        ftol: bool,
        xtol: bool,
    },
    /// The residuals are orthogonal to the Jacobian's columns (gtol).
    Orthogonal,
    ResidualsZero,
    /// The evaluation budget was spent.
    LostPatience,
    /// A candidate of `auto` stopped once even its linearised optimum could not beat the
    /// leading candidate's AIC.
    Outranked,
    /// A tolerance is below what machine precision can reach.
    NoImprovementPossible(&'static str),
    /// A residual or Jacobian was not finite.
    Numerical(&'static str),
    /// The residuals or the Jacobian could not be computed.
    User(&'static str),
    NoParameters,
    NoResiduals,
    WrongDimensions(&'static str),
}

impl From<TerminationReason> for Termination {
    fn from(t: TerminationReason) -> Self {
        match t {
            TerminationReason::User(s) => Termination::User(s),
            TerminationReason::Numerical(s) => Termination::Numerical(s),
            TerminationReason::ResidualsZero => Termination::ResidualsZero,
            TerminationReason::Orthogonal => Termination::Orthogonal,
            TerminationReason::Converged { ftol, xtol } => Termination::Converged { ftol, xtol },
            TerminationReason::NoImprovementPossible(s) => Termination::NoImprovementPossible(s),
            TerminationReason::LostPatience => Termination::LostPatience,
            TerminationReason::NoParameters => Termination::NoParameters,
            TerminationReason::NoResiduals => Termination::NoResiduals,
            TerminationReason::WrongDimensions(s) => Termination::WrongDimensions(s),
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Termination::NotRun => f.write_str("not run"),
            Termination::Converged { ftol, xtol } => match (ftol, xtol) {
                (true, true) => f.write_str("converged (ftol, xtol)"),
                (true, false) => f.write_str("converged (ftol)"),
                (false, true) => f.write_str("converged (xtol)"),
                (false, false) => f.write_str("converged"),
            },
            Termination::Orthogonal => f.write_str("converged (gtol)"),
            Termination::ResidualsZero => f.write_str("converged (zero residuals)"),
            Termination::LostPatience => f.write_str("stopped: evaluation budget spent"),
            Termination::Outranked => {
                f.write_str("stopped: it cannot beat the leading candidate's AIC")
            }
            Termination::NoImprovementPossible(s) => {
                write!(f, "stopped: no improvement possible ({s})")
            }
            Termination::Numerical(s) => write!(f, "stopped: {s} not finite"),
            Termination::User(s) => write!(f, "stopped: {s} could not be computed"),
            Termination::NoParameters => f.write_str("no free parameters"),
            Termination::NoResiduals => f.write_str("no residuals"),
            Termination::WrongDimensions(s) => write!(f, "stopped: {s} of the wrong dimensions"),
        }
    }
}

impl Serialize for Termination {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
