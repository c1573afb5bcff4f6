//! Particle cloth (docs/cloth.md): a quad grid of particles m_i ẍ_i = F_i(x, v) with Provot's
//! springs, KES connectors scaled per width or Terzopoulos' elastic surface, integrated
//! explicitly, by backward Euler or by Terzopoulos' semi-implicit scheme; SI.
//!
//! State lives in [`ClothWorld`] (particles, material with its friction states, loads, pins,
//! obstacles); a [`ClothPipeline`] steps it and holds scratch memory (and the
//! Newton solver's line factor, kept over a few iterations across steps).

mod block_sparse;
pub(crate) mod connectors;
mod constraints;
mod cyclic_strip;
mod explicit;
mod grid;
mod implicit;
pub mod lab;
mod line_precond;
mod loads;
mod obstacle;
mod pipeline;
mod precond;
pub mod record;
mod semi_implicit;
mod springs;
mod terzopoulos;
pub mod virtual_kes;
mod world;

use thiserror::Error;

pub use connectors::{ConnectorKind, ForceKernel, KesConnectors, KesLaws};
pub use constraints::{ProvotConstraints, MAX_PASSES};
pub use cyclic_strip::{CyclicStrip, StripEnergy};
pub use explicit::SymplecticEulerStepper;
pub(crate) use grid::SPACING_RANGE_M;
pub use grid::{EdgeFamily, Grid, GridEdge};
pub use implicit::{BroydenStepper, NewtonKrylovStepper, NewtonTangentStepper, SolveOutcome};
pub use loads::{Anchor, Loads, Wind};
pub use obstacle::{CollisionPotential, Obstacle, ObstacleShape};
pub use pipeline::{
    check_steps, ClothPipeline, Integrator, Preconditioner, StepParameters, StepReport,
    MAX_HALVINGS, MAX_STEPS,
};
pub use semi_implicit::{SemiImplicitStepper, SemiImplicitTiming};
pub use springs::{SpringFamily, SpringNetwork, SpringStiffness};
pub use terzopoulos::{MetricLaw, RigidityLaw, TerzopoulosParams, TerzopoulosSurface};
pub use world::{ClothWorld, DeformationRates, Material, Pin, WorldSnapshot};

/// A 3-vector of `f64` (positions in m, velocities in m/s, forces in N).
pub type Vec3 = nalgebra::Vector3<f64>;
/// A 3×3 matrix of `f64` (stiffness blocks in N/m).
pub(crate) type Mat3 = nalgebra::Matrix3<f64>;

/// What can stop a simulation.
#[derive(Debug, Error)]
pub enum ClothError {
    /// The state became non-finite or its energy ran away.
    #[error(
        "blow-up at step {step} (t = {shown} s): {reason}; worst connector: {connector}",
        shown = time_shown(*.time)
    )]
    BlowUp {
        step: u64,
        time: f64,
        reason: String,
        connector: String,
    },
    /// A world that cannot be built (bad grid, missing law, bad pin...).
    #[error("invalid cloth: {0}")]
    Invalid(String),
    /// A material setting out of its range.
    #[error("invalid cloth: {0}")]
    Setting(#[from] SettingError),
}

/// A simulated time as a person reads it: six decimals, in exponent form beyond 10⁶ s.
fn time_shown(t: f64) -> String {
    if t.abs() < 1e6 {
        format!("{t:.6}")
    } else {
        format!("{t:.6e}")
    }
}

/// A setting out of its range: step parameters, constraints, loads, obstacles, material.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SettingError {
    /// A number outside its range: its name, value and unit (with a leading space), the rule.
    #[error("{name} = {shown}{unit}: must be {rule}", shown = crate::friction::short_number(*.value))]
    Range {
        name: String,
        value: f64,
        unit: &'static str,
        rule: &'static str,
    },
    /// A vector with a component that is not finite.
    #[error("{name} {value:?} must be finite")]
    NotFinite { name: &'static str, value: [f64; 3] },
    #[error("solver counts: max_iterations must be in 1..=10000, memory in 2..=100, krylov_dim in 1..=200")]
    SolverCounts,
    #[error(
        "plane: the point must be within 1e6 m of the origin on every axis and the normal \
         finite and non-zero"
    )]
    Plane,
    #[error(
        "sphere: center must be within 1e6 m of the origin on every axis and radius = {shown} m \
         in (0, 1e6]",
        shown = crate::friction::short_number(*.radius)
    )]
    Sphere { radius: f64 },
    #[error(
        "box: min {min:?} must be below max {max:?} on every axis, both within 1e6 m of the \
         origin"
    )]
    Box { min: [f64; 3], max: [f64; 3] },
    /// A virtual bending test turned beyond what its strip's gauge cells bend.
    #[error(
        "kes_test max = {shown} 1/cm: the bending strip's {cells} gauge cells bend to at most \
         {largest} 1/cm ({rate} rad a cell over the 1 cm gauge; beyond, the mesh's curve leaves \
         the law); set gauge_cells = {needed} or more for {shown} 1/cm",
        rate = virtual_kes::MAX_BEND_PER_CELL_RAD,
        shown = crate::friction::short_number(*.max),
        largest = crate::friction::short_number(*.largest)
    )]
    BendingCells {
        max: f64,
        cells: usize,
        largest: f64,
        needed: usize,
    },
    /// An obstacle's contact laws that do not go together.
    #[error("obstacle: {0}")]
    Contact(&'static str),
}

impl SettingError {
    pub(crate) fn range(
        name: impl Into<String>,
        value: f64,
        unit: &'static str,
        rule: &'static str,
    ) -> Self {
        SettingError::Range {
            name: name.into(),
            value,
            unit,
            rule,
        }
    }

    /// `Ok` when `value` is finite and ≥ 0, else the range error.
    pub(crate) fn non_negative(
        name: impl Into<String>,
        value: f64,
        unit: &'static str,
    ) -> Result<(), Self> {
        if value.is_finite() && value >= 0.0 {
            Ok(())
        } else {
            Err(Self::range(name, value, unit, "finite and >= 0"))
        }
    }

    /// `Ok` when `value` is finite and > 0, else the range error.
    pub(crate) fn positive(
        name: impl Into<String>,
        value: f64,
        unit: &'static str,
    ) -> Result<(), Self> {
        if value.is_finite() && value > 0.0 {
            Ok(())
        } else {
            Err(Self::range(name, value, unit, "finite and > 0"))
        }
    }

    /// `Ok` when every component of `value` is finite.
    pub(crate) fn finite(name: &'static str, value: [f64; 3]) -> Result<(), Self> {
        if value.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(Self::NotFinite { name, value })
        }
    }
}
