//! The lab's tests of a fabric card on the mesh: the cantilever bending test (ASTM D1388,
//! Peirce's bending length \[cm\]) and the Cusick drape test (drape coefficient [%], folds).
//! UI-free: a card, options, a progress callback (0..1), a cancel flag → a serde result.

pub mod cantilever;
pub mod drape;
mod lowering;
mod rest;
mod shadow;
mod specimen;

use std::sync::atomic::{AtomicBool, Ordering};

use thiserror::Error;

use super::connectors::KesLaws;
use super::ClothError;
use crate::kes::GF_CM2_PER_CM_N_M;
use crate::material::FrictionLaw;
use crate::params::FabricParams;

pub use cantilever::{run_cantilever, CantileverOptions, CantileverResult};
pub use lowering::DynamicLowering;

/// Standard gravity \[m/s²\]: the lab's tests' load, and the gram-force of W and B.
pub(crate) const STANDARD_GRAVITY: f64 = 9.806_65;
pub use drape::{
    drape_reading, run_drape, DrapeOptions, DrapeReading, DrapeResult, Lowering, Specimen,
    DEFAULT_CELL_MM,
};

/// Barnes' kinetic damping: the motion is stopped (every velocity set to zero) at each peak
/// of the kinetic energy, i.e. at the first step whose kinetic energy is below the previous
/// step's. A mode released from rest is stopped near its equilibrium, a quarter period later.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KineticDamping {
    /// Kinetic energy after the previous step \[J\] (0 after a stop).
    previous: f64,
    /// Stops so far.
    stops: u64,
}

impl KineticDamping {
    /// Whether the motion must be stopped after a step that ends with kinetic energy
    /// `energy` \[J\].
    pub(crate) fn stop(&mut self, energy: f64) -> bool {
        if energy < self.previous {
            self.previous = 0.0;
            self.stops += 1;
            true
        } else {
            self.previous = energy;
            false
        }
    }

    /// Starts again from rest without a stop (the motion was reset for another reason).
    pub(crate) fn restart(&mut self) {
        self.previous = 0.0;
    }
}

/// What can stop a lab test.
#[derive(Debug, Error)]
pub enum LabError {
    /// The card lacks what the test needs (a law, the areal density).
    #[error("{0}")]
    Card(String),
    /// An option out of its range.
    #[error("{0}")]
    Option(String),
    /// The mesh failed (blow-up, invalid world).
    #[error(transparent)]
    Cloth(#[from] ClothError),
    /// The test did not reach its result (no equilibrium, no 41.5° overhang).
    #[error("{0}")]
    NotReached(String),
    /// The cancel flag was raised.
    #[error("cancelled")]
    Cancelled,
}

/// `Err(Cancelled)` when `cancel` is raised.
fn check_cancel(cancel: Option<&AtomicBool>) -> Result<(), LabError> {
    match cancel {
        Some(c) if c.load(Ordering::Relaxed) => Err(LabError::Cancelled),
        _ => Ok(()),
    }
}

/// The card's six laws; with `friction` off, every friction level and its growth with load μ
/// are zero (no friction force at all).
fn card_laws(card: &FabricParams, friction: bool) -> Result<KesLaws, LabError> {
    let mut laws = KesLaws::from_params(card).map_err(|e| LabError::Card(e.to_string()))?;
    if !friction {
        let off = |f: &mut FrictionLaw| {
            f.level = 0.0;
            f.mu = 0.0;
        };
        for d in 0..2 {
            off(&mut laws.traction[d].friction);
            off(&mut laws.bending[d].friction);
            off(&mut laws.shear[d].friction);
        }
    }
    Ok(laws)
}

/// The card's areal density ρ_A [kg/m²] (its `[properties] areal_density`).
fn card_areal_density(card: &FabricParams) -> Result<f64, LabError> {
    card.properties
        .as_ref()
        .and_then(|p| p.areal_density)
        .filter(|a| a.is_finite() && *a > 0.0)
        .ok_or_else(|| {
            LabError::Card(format!(
                "fabric `{}`: the card has no areal density: add `[properties] areal_density` \
                 [kg/m2] (`kestrel fit CURVES... --weight 120g/m2`, or a curve with a `# weight` line)",
                card.fabric
            ))
        })
}

/// Peirce's bending length c = (B/W)^(1/3) \[cm\] of the bending law of `laws` along `dir`
/// (0 warp, 1 weft) at `areal_density` \[kg/m²\] (B in gf·cm²/cm, W in gf/cm²).
fn peirce_bending_length_cm(laws: &KesLaws, dir: usize, areal_density: f64) -> f64 {
    let b = rigidity_gf_cm2_per_cm(laws.bending[dir].k_b);
    (b / weight_gf_per_cm2(areal_density)).cbrt()
}

/// Bending rigidity k_b [N·m] in Kawabata's unit, gf·cm²/cm.
fn rigidity_gf_cm2_per_cm(k_b: f64) -> f64 {
    k_b / GF_CM2_PER_CM_N_M
}

/// Areal density [kg/m²] as a weight per area in gf/cm² (1 kg/m² = 0.1 gf/cm²).
fn weight_gf_per_cm2(areal_density: f64) -> f64 {
    areal_density * 0.1
}
