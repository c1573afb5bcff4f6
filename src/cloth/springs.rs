//! Provot's linear springs (Provot eq. 1): F_a = K(l − l₀)·(p_b − p_a)/l on p_a, the opposite on
//! p_b; structural, shear and flexion families with stiffness K [N/m]; energy ½K(l − l₀)² [J].

use serde::{Deserialize, Serialize};

use super::grid::{EdgeFamily, Grid};
use super::{ClothError, Mat3, Vec3};

/// Stiffness of each spring family [N/m]; 0 leaves a family out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpringStiffness {
    /// Structural springs p(i,j)–p(i+1,j) and p(i,j)–p(i,j+1) [N/m].
    pub structural: f64,
    /// Shear springs along the cell diagonals [N/m].
    pub shear: f64,
    /// Flexion springs p(i,j)–p(i+2,j) and p(i,j)–p(i,j+2) [N/m].
    pub flexion: f64,
}

/// The family of a spring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpringFamily {
    Structural,
    Shear,
    Flexion,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spring {
    pub a: u32,
    pub b: u32,
    pub rest: f64,
    pub k: f64,
}

/// Every spring of a grid, in data-structure order.
#[derive(Debug, Clone, PartialEq)]
pub struct SpringNetwork {
    pub stiffness: SpringStiffness,
    pub(crate) springs: Vec<Spring>,
    families: Vec<SpringFamily>,
    edges: Vec<super::grid::GridEdge>,
}

impl SpringNetwork {
    pub fn new(grid: &Grid, stiffness: SpringStiffness) -> Result<Self, ClothError> {
        for (name, k) in [
            ("structural", stiffness.structural),
            ("shear", stiffness.shear),
            ("flexion", stiffness.flexion),
        ] {
            if !(k.is_finite() && k >= 0.0) {
                return Err(ClothError::Invalid(format!(
                    "spring stiffness {name} = {k}: must be finite and >= 0 N/m"
                )));
            }
        }
        let mut springs = Vec::new();
        let mut families = Vec::new();
        let mut edges = Vec::new();
        let groups = [
            (
                SpringFamily::Structural,
                stiffness.structural,
                &[EdgeFamily::StructuralWarp, EdgeFamily::StructuralWeft][..],
            ),
            (
                SpringFamily::Shear,
                stiffness.shear,
                &[EdgeFamily::Shear][..],
            ),
            (
                SpringFamily::Flexion,
                stiffness.flexion,
                &[EdgeFamily::FlexionWarp, EdgeFamily::FlexionWeft][..],
            ),
        ];
        for (family, k, fams) in groups {
            if k == 0.0 {
                continue;
            }
            for e in grid.edges(fams) {
                springs.push(Spring {
                    a: e.a,
                    b: e.b,
                    rest: e.rest,
                    k,
                });
                families.push(family);
                edges.push(e);
            }
        }
        Ok(Self {
            stiffness,
            springs,
            families,
            edges,
        })
    }

    pub fn len(&self) -> usize {
        self.springs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.springs.is_empty()
    }

    /// The family of spring `k`.
    pub fn family(&self, k: usize) -> SpringFamily {
        self.families[k]
    }

    /// The grid edge of spring `k`.
    pub fn edge(&self, k: usize) -> &super::grid::GridEdge {
        &self.edges[k]
    }

    /// Adds every spring force to `f`.
    #[inline]
    pub(crate) fn add_forces(&self, x: &[Vec3], f: &mut [Vec3]) {
        for s in &self.springs {
            let (a, b) = (s.a as usize, s.b as usize);
            let d = x[b] - x[a];
            let l = d.norm();
            if l > 0.0 {
                let fv = d * (s.k * (l - s.rest) / l);
                f[a] += fv;
                f[b] -= fv;
            }
        }
    }

    /// The two forces of spring `k` (on a, on b).
    pub fn spring_forces(&self, x: &[Vec3], k: usize) -> [(usize, Vec3); 2] {
        let s = &self.springs[k];
        let (a, b) = (s.a as usize, s.b as usize);
        let d = x[b] - x[a];
        let l = d.norm();
        let fv = if l > 0.0 {
            d * (s.k * (l - s.rest) / l)
        } else {
            Vec3::zeros()
        };
        [(a, fv), (b, -fv)]
    }

    /// Σ ½K(l − l₀)² \[J\].
    pub(crate) fn energy(&self, x: &[Vec3]) -> f64 {
        self.springs
            .iter()
            .map(|s| {
                let l = (x[s.b as usize] - x[s.a as usize]).norm();
                0.5 * s.k * (l - s.rest).powi(2)
            })
            .sum()
    }

    /// Adds K·k̂k̂ᵀ of every spring at `x` to its particles' 3×3 blocks [N/m].
    pub(crate) fn stiffness_blocks(&self, x: &[Vec3], out: &mut [Mat3]) {
        self.stiffness_edges(x, |a, b, blk| {
            out[a] += blk;
            out[b] += blk;
        });
    }

    /// k·d̂d̂ᵀ [N/m] of each spring (a, b) at `x`: the coupling of the stretch preconditioner.
    pub(crate) fn stiffness_edges(&self, x: &[Vec3], mut f: impl FnMut(usize, usize, Mat3)) {
        for s in &self.springs {
            let d = x[s.b as usize] - x[s.a as usize];
            let l2 = d.norm_squared();
            if l2 > 0.0 {
                f(s.a as usize, s.b as usize, d * d.transpose() * (s.k / l2));
            }
        }
    }
}
