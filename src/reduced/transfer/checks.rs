//! The checks of a transfer's options and of a model's transfer entry.

use super::{TransferInfo, TransferOptions, SH_BANDS, TRANSFER_LIMITS};

/// Why [`TransferOptions::validate`] refused the options; the message names the option.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransferOptionsError {
    #[error("transfer states N_a = {0}: must be 2 to {max}", max = TRANSFER_LIMITS.0)]
    States(usize),
    #[error("transfer samples = {0}: must be 1 to {max} rays per vertex", max = TRANSFER_LIMITS.1)]
    Samples(usize),
    #[error("held-out states = {0}: at most {max}", max = TRANSFER_LIMITS.2)]
    HeldOut(usize),
    #[error("transfer epsilon = {0}: must be in (0, 1)")]
    Epsilon(f64),
    #[error("transfer rank must be >= 1")]
    ZeroRank,
}

impl TransferOptions {
    /// Checks the counts against [`TRANSFER_LIMITS`] and ε_a in (0, 1).
    pub fn validate(&self) -> Result<(), TransferOptionsError> {
        let (s, r, h) = TRANSFER_LIMITS;
        if !(2..=s).contains(&self.states) {
            return Err(TransferOptionsError::States(self.states));
        }
        if !(1..=r).contains(&self.samples) {
            return Err(TransferOptionsError::Samples(self.samples));
        }
        if self.held_out > h {
            return Err(TransferOptionsError::HeldOut(self.held_out));
        }
        if !(self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(TransferOptionsError::Epsilon(self.epsilon));
        }
        if self.rank == Some(0) {
            return Err(TransferOptionsError::ZeroRank);
        }
        Ok(())
    }
}

impl TransferInfo {
    /// Checks a model's transfer entry: 3 bands, 1 ≤ r_a ≤ N_a ≤ `states`, a finite kernel
    /// width > 0, side ±1, finite obstacles.
    pub(crate) fn validate(&self, states: u64) -> Result<(), String> {
        let t = self;
        if t.bands as usize != SH_BANDS {
            return Err(format!(
                "{} SH bands (this kestrel uses {SH_BANDS})",
                t.bands
            ));
        }
        if t.states == 0 || u64::from(t.states) > states || t.rank == 0 || t.rank > t.states {
            return Err(format!(
                "N_a = {} and r_a = {} for {states} states: need 1 <= r_a <= N_a <= states",
                t.states, t.rank
            ));
        }
        if !(t.width.is_finite() && t.width > 0.0 && t.regularisation.is_finite()) {
            return Err(format!(
                "NRBF width {} m and regularisation {}: must be finite, the width > 0",
                t.width, t.regularisation
            ));
        }
        if !(0.0..=1.0).contains(&t.regularisation) {
            return Err(format!(
                "NRBF regularisation {} (-): must be in [0, 1] (a ridge relative to the \
                 kernel matrix)",
                t.regularisation
            ));
        }
        // the errors are relative (σ ratios, Frobenius and l2 ratios): a rank-0 model's is 1,
        // an interpolation's a few at worst
        for (name, v, hi) in [
            ("rel_error", t.rel_error, 1.0),
            ("frobenius_error", t.frobenius_error, 1.0),
            ("held_out_error", t.held_out_error, 1e3),
            (
                "held_out_projection_error",
                t.held_out_projection_error,
                1e3,
            ),
        ] {
            if !(0.0..=hi).contains(&v) {
                return Err(format!(
                    "{name} = {v} (-): must be in [0, {hi}] (a relative error)"
                ));
            }
        }
        if t.side != 1.0 && t.side != -1.0 {
            return Err(format!("side {}: must be 1 or -1", t.side));
        }
        let finite = |v: &[f64; 3]| v.iter().all(|x| x.is_finite());
        let ok = t.obstacles.iter().all(|o| match o {
            crate::cloth::ObstacleShape::Plane { point, normal } => finite(point) && finite(normal),
            crate::cloth::ObstacleShape::Sphere { center, radius } => {
                finite(center) && radius.is_finite()
            }
            crate::cloth::ObstacleShape::Box { min, max } => finite(min) && finite(max),
        });
        if !ok {
            return Err("an obstacle is not finite".into());
        }
        Ok(())
    }
}
