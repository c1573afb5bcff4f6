//! The quad grid: particle p(i, j) at index j·nu + i, i along the warp (spacing h_warp [m]),
//! j along the weft (spacing h_weft [m]); edges by family and tributary weights (½ on a border).

use super::{ClothError, Vec3};

/// A regular nu × nv grid of particles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// Particles along the warp (index i).
    pub nu: usize,
    /// Particles along the weft (index j).
    pub nv: usize,
    /// Rest spacing along the warp \[m\].
    pub h_warp: f64,
    /// Rest spacing along the weft \[m\].
    pub h_weft: f64,
}

/// The family of a pair of particles: structural (warp or weft neighbours), shear (cell
/// diagonals), flexion (second neighbours along a yarn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeFamily {
    StructuralWarp,
    StructuralWeft,
    Shear,
    FlexionWarp,
    FlexionWeft,
}

impl EdgeFamily {
    pub(crate) fn name(self) -> &'static str {
        match self {
            EdgeFamily::StructuralWarp => "structural warp",
            EdgeFamily::StructuralWeft => "structural weft",
            EdgeFamily::Shear => "shear",
            EdgeFamily::FlexionWarp => "flexion warp",
            EdgeFamily::FlexionWeft => "flexion weft",
        }
    }

    pub(crate) fn is_structural(self) -> bool {
        matches!(
            self,
            EdgeFamily::StructuralWarp | EdgeFamily::StructuralWeft
        )
    }
}

/// A pair of particles with its rest length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridEdge {
    pub a: u32,
    pub b: u32,
    /// Rest length \[m\].
    pub rest: f64,
    pub family: EdgeFamily,
}

/// Spacings a grid accepts [m]: a micrometre (finer than any yarn) to 100 m (beyond any
/// cloth); outside, energies and positions lose their meaning in f64 and f32.
pub const SPACING_RANGE_M: (f64, f64) = (1e-6, 100.0);

impl Grid {
    /// The grid a record or a reduced model announces in its header, taken as written (the
    /// readers check it against the data that follows).
    pub(crate) fn of_header(nu: u32, nv: u32, h_warp: f64, h_weft: f64) -> Self {
        Self {
            nu: nu as usize,
            nv: nv as usize,
            h_warp,
            h_weft,
        }
    }

    /// `Ok` when `len` positions (named `what`) fill the grid.
    pub(crate) fn check_len(&self, len: usize, what: &str) -> Result<(), ClothError> {
        if len == self.len() {
            Ok(())
        } else {
            Err(ClothError::Invalid(format!(
                "{len} {what} for a {} x {} grid",
                self.nu, self.nv
            )))
        }
    }

    /// Checks the grid has at least 2 × 2 particles and spacings within `SPACING_RANGE_M` (1 µm to 100 m).
    pub fn new(nu: usize, nv: usize, h_warp: f64, h_weft: f64) -> Result<Self, ClothError> {
        if nu < 2 || nv < 2 {
            return Err(ClothError::Invalid(format!(
                "grid {nu} x {nv}: needs at least 2 x 2 particles"
            )));
        }
        if nu.saturating_mul(nv) > u32::MAX as usize / 2 {
            return Err(ClothError::Invalid(format!(
                "grid {nu} x {nv} is too large"
            )));
        }
        let (lo, hi) = SPACING_RANGE_M;
        for (name, h) in [("h_warp", h_warp), ("h_weft", h_weft)] {
            if !(h >= lo && h <= hi) {
                return Err(ClothError::Invalid(format!(
                    "grid spacing {name} = {} m: must be {lo:e} to {hi} m",
                    crate::friction::short_number(h)
                )));
            }
        }
        Ok(Self {
            nu,
            nv,
            h_warp,
            h_weft,
        })
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.nu * self.nv
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn index(&self, i: usize, j: usize) -> usize {
        j * self.nu + i
    }

    /// The corners of cell (i, j), by particle index: (i, j), (i+1, j), (i, j+1), (i+1, j+1).
    #[inline]
    pub fn cell_corners(&self, i: usize, j: usize) -> [usize; 4] {
        [
            self.index(i, j),
            self.index(i + 1, j),
            self.index(i, j + 1),
            self.index(i + 1, j + 1),
        ]
    }

    /// (i, j) of a particle index.
    #[inline]
    pub fn coords(&self, k: usize) -> (usize, usize) {
        (k % self.nu, k / self.nu)
    }

    /// Tributary weight along one direction: ½ on a border, 1 inside.
    #[inline]
    pub(crate) fn border_weight(k: usize, n: usize) -> f64 {
        if k == 0 || k + 1 == n {
            0.5
        } else {
            1.0
        }
    }

    /// Area a particle stands for \[m²\] (h_warp·h_weft, halved on each border it lies on).
    pub(crate) fn tributary_area(&self, k: usize) -> f64 {
        let (i, j) = self.coords(k);
        self.h_warp
            * self.h_weft
            * Self::border_weight(i, self.nu)
            * Self::border_weight(j, self.nv)
    }

    /// Rest extent of the sheet \[m\] along warp and weft.
    pub(crate) fn extent(&self) -> (f64, f64) {
        (
            (self.nu - 1) as f64 * self.h_warp,
            (self.nv - 1) as f64 * self.h_weft,
        )
    }

    /// Every edge of the given families, in data-structure order (j-major, then i).
    pub fn edges(&self, families: &[EdgeFamily]) -> Vec<GridEdge> {
        let mut out = Vec::new();
        let diag = self.h_warp.hypot(self.h_weft);
        for &family in families {
            for j in 0..self.nv {
                for i in 0..self.nu {
                    let a = self.index(i, j) as u32;
                    let mut push = |ii: usize, jj: usize, rest: f64| {
                        out.push(GridEdge {
                            a,
                            b: self.index(ii, jj) as u32,
                            rest,
                            family,
                        })
                    };
                    match family {
                        EdgeFamily::StructuralWarp if i + 1 < self.nu => {
                            push(i + 1, j, self.h_warp)
                        }
                        EdgeFamily::StructuralWeft if j + 1 < self.nv => {
                            push(i, j + 1, self.h_weft)
                        }
                        EdgeFamily::FlexionWarp if i + 2 < self.nu => {
                            push(i + 2, j, 2.0 * self.h_warp)
                        }
                        EdgeFamily::FlexionWeft if j + 2 < self.nv => {
                            push(i, j + 2, 2.0 * self.h_weft)
                        }
                        EdgeFamily::Shear if i + 1 < self.nu && j + 1 < self.nv => {
                            push(i + 1, j + 1, diag);
                            // the other diagonal, p(i+1, j) – p(i, j+1)
                            out.push(GridEdge {
                                a: self.index(i + 1, j) as u32,
                                b: self.index(i, j + 1) as u32,
                                rest: diag,
                                family,
                            });
                        }
                        _ => {}
                    }
                }
            }
        }
        out
    }

    /// Names an edge by its particles' grid coordinates.
    pub(crate) fn describe_edge(&self, e: &GridEdge) -> String {
        let (ia, ja) = self.coords(e.a as usize);
        let (ib, jb) = self.coords(e.b as usize);
        format!("{} ({ia},{ja})-({ib},{jb})", e.family.name())
    }

    /// Unit surface normals n_i = t_warp × t_weft from neighbour differences (one-sided on
    /// a border), written into `out`.
    pub(crate) fn normals(&self, x: &[Vec3], out: &mut [Vec3]) {
        let (nu, nv) = (self.nu, self.nv);
        for j in 0..nv {
            let (jl, jh) = (j.saturating_sub(1), (j + 1).min(nv - 1));
            for i in 0..nu {
                let (il, ih) = (i.saturating_sub(1), (i + 1).min(nu - 1));
                let tu = x[j * nu + ih] - x[j * nu + il];
                let tv = x[jh * nu + i] - x[jl * nu + i];
                let n = tu.cross(&tv);
                let l = n.norm();
                out[j * nu + i] = if l > 0.0 { n / l } else { Vec3::zeros() };
            }
        }
    }
}
