//! External loads (Provot §2.2): gravity m·g, viscous damping −γ·m·v, and a viscous wind
//! c·A·[n·(u − v)]·n on each particle's tributary area A along its unit normal n.

use serde::{Deserialize, Serialize};

use super::grid::Grid;
use super::{SettingError, Vec3};

/// A uniform air stream.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wind {
    /// Air velocity u [m/s].
    pub velocity: [f64; 3],
    /// Viscous coefficient c per unit area [N·s/m³]: force c·A·[n·(u − v)]·n.
    pub coefficient: f64,
}

/// Terzopoulos eq. 10: an ideal Hookean spring k·(r₀ − r) from a particle to a world point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    /// Particle index j·nu + i.
    pub particle: usize,
    /// World point r₀ \[m\].
    pub point: [f64; 3],
    /// Spring constant k [N/m].
    pub stiffness: f64,
}

impl Anchor {
    /// k·(r₀ − r) \[N\].
    #[inline]
    pub(crate) fn force(&self, x: &Vec3) -> Vec3 {
        (Vec3::from(self.point) - x) * self.stiffness
    }
}

/// The loads of a scene.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Loads {
    /// Gravity g [m/s²]. Default (0, −9.81, 0).
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Viscous damping per unit mass γ [1/s]: force −γ·m·v. Default 0.
    #[serde(default)]
    pub damping: f64,
    /// Wind, if any.
    #[serde(default)]
    pub wind: Option<Wind>,
}

fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}

impl Default for Loads {
    fn default() -> Self {
        Self {
            gravity: default_gravity(),
            damping: 0.0,
            wind: None,
        }
    }
}

impl Loads {
    /// No gravity, no damping, no wind.
    pub fn none() -> Self {
        Self {
            gravity: [0.0; 3],
            damping: 0.0,
            wind: None,
        }
    }

    pub(crate) fn gravity(&self) -> Vec3 {
        Vec3::from(self.gravity)
    }

    pub(crate) fn validate(&self) -> Result<(), SettingError> {
        SettingError::finite("gravity", self.gravity)?;
        SettingError::non_negative("damping", self.damping, " 1/s")?;
        if let Some(w) = &self.wind {
            SettingError::finite("wind velocity", w.velocity)?;
            SettingError::non_negative("wind coefficient", w.coefficient, " N*s/m^3")?;
        }
        Ok(())
    }

    /// Adds gravity, damping and wind at positions `x`, velocities `v` to `f`; `normals` is
    /// scratch of the grid's size.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_forces(
        &self,
        grid: &Grid,
        x: &[Vec3],
        v: &[Vec3],
        mass: &[f64],
        area: &[f64],
        normals: &mut [Vec3],
        f: &mut [Vec3],
    ) {
        let g = self.gravity();
        let gamma = self.damping;
        for ((fi, &m), vi) in f.iter_mut().zip(mass).zip(v) {
            *fi += (g - vi * gamma) * m;
        }
        if let Some(w) = &self.wind {
            let u = Vec3::from(w.velocity);
            grid.normals(x, normals);
            for (((fi, n), vi), &a) in f.iter_mut().zip(normals.iter()).zip(v).zip(area) {
                *fi += n * (w.coefficient * a * n.dot(&(u - vi)));
            }
        }
    }

    /// Damping coefficient of particle k per unit velocity [N·s/m] (γ·m + c·A), for the
    /// implicit solvers' scaling.
    #[inline]
    pub(crate) fn damping_estimate(&self, mass: f64, area: f64) -> f64 {
        let c = self.wind.map(|w| w.coefficient).unwrap_or(0.0);
        self.damping * mass + c * area
    }
}
