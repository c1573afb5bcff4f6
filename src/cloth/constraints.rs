//! Provot's deformation-rate constraints (Provot §5): after a step, every structural pair (and
//! optionally every cell diagonal) longer than (1 + τ_c)·l₀ is shortened to it along its
//! direction — both ends to the middle, or the loose end to a fixed one; repeatable passes.
//! The same dynamic inverse can keep structural pairs from shortening below (1 − τ_k)·l₀: the
//! geometric constraint of yarns that carry no compression.

use serde::{Deserialize, Serialize};

use super::grid::GridEdge;
use super::{SettingError, Vec3};

/// Critical deformation rates per family (fractions: 0.1 = 10 %) and the number of passes.
/// In a file, a field left out takes its value from [`ProvotConstraints::none`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProvotConstraints {
    /// τ_c of the structural pairs, if constrained.
    pub structural: Option<f64>,
    /// τ_c of the cell diagonals (shear springs), if constrained.
    pub shear: Option<f64>,
    /// Largest compression τ_k of the structural pairs (l ≥ (1 − τ_k)·l₀), if constrained.
    pub compression: Option<f64>,
    /// Passes over all pairs per step (Provot: one, or two for better convergence).
    pub passes: u32,
}

/// Most constraint passes per step (Provot uses one or two).
pub const MAX_PASSES: u32 = 100;

impl Default for ProvotConstraints {
    fn default() -> Self {
        Self::none()
    }
}

impl ProvotConstraints {
    /// No constraint.
    pub fn none() -> Self {
        Self {
            structural: None,
            shear: None,
            compression: None,
            passes: 1,
        }
    }

    pub fn is_active(&self) -> bool {
        self.passes > 0
            && (self.structural.is_some() || self.shear.is_some() || self.compression.is_some())
    }

    pub(crate) fn validate(&self) -> Result<(), SettingError> {
        if self.passes > MAX_PASSES {
            return Err(SettingError::range(
                "constraints passes",
                f64::from(self.passes),
                " passes per step",
                "at most 100",
            ));
        }
        for (name, t) in [
            ("structural", self.structural),
            ("shear", self.shear),
            ("compression", self.compression),
        ] {
            if let Some(t) = t {
                if !(t.is_finite() && t >= 0.0) || (name == "compression" && t >= 1.0) {
                    return Err(SettingError::range(
                        format!("constraint {name}"),
                        t,
                        "",
                        "finite, >= 0 (and < 1 for compression)",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Applies the passes to positions `x` (pairs in data-structure order); `fixed[k]` marks
    /// particles held by another dynamic inverse. Returns the number of pairs adjusted.
    pub fn apply(&self, edges: &[GridEdge], fixed: &[bool], x: &mut [Vec3]) -> usize {
        let mut adjusted = 0;
        for _ in 0..self.passes {
            for e in edges {
                let (tau, compression) = if e.family.is_structural() {
                    (self.structural, self.compression)
                } else {
                    (self.shear, None)
                };
                if tau.is_none() && compression.is_none() {
                    continue;
                }
                let (a, b) = (e.a as usize, e.b as usize);
                let d = x[b] - x[a];
                let l = d.norm();
                let target = match (tau, compression) {
                    (Some(t), _) if l > (1.0 + t) * e.rest => (1.0 + t) * e.rest,
                    (_, Some(c)) if l < (1.0 - c) * e.rest && l > 0.0 => (1.0 - c) * e.rest,
                    _ => continue,
                };
                let dir = d / l;
                match (fixed[a], fixed[b]) {
                    (false, false) => {
                        let mid = (x[a] + x[b]) * 0.5;
                        x[a] = mid - dir * (0.5 * target);
                        x[b] = mid + dir * (0.5 * target);
                    }
                    (true, false) => x[b] = x[a] + dir * target,
                    (false, true) => x[a] = x[b] - dir * target,
                    (true, true) => continue,
                }
                adjusted += 1;
            }
        }
        adjusted
    }
}
