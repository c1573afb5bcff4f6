//! The line preconditioner: the stretch matrix P = D − Σ k·d̂d̂ᵀ [N/m] (off the diagonal, per
//! traction connector) applied by exact block-tridiagonal solves along the warp lines, the
//! weft lines, then the warp lines again (z += P_L⁻¹(r − Pz)); O(n) to build and to apply.
//!
//! P_warp keeps D and the couplings of consecutive particles along each warp line (i, i+1),
//! P_weft those along each weft line (j, j+1); couplings across lines (bending, shear,
//! diagonal springs) stay in D only. After a sweep with one family the residual r − Pz is
//! minus the other family's couplings times that sweep's correction, so a sweep costs one
//! forward and one backward substitution plus one coupling product.

use super::grid::Grid;
use super::world::{ClothWorld, Material};
use super::{Mat3, Vec3};

/// The block-tridiagonal factor of one family of lines (Thomas algorithm): per particle
/// M⁻¹ of its pivot, G = M⁻¹B (B its coupling to the next particle of the line) and the
/// coupling to the previous one.
#[derive(Debug, Clone, Default)]
struct LineFactor {
    m_inv: Vec<Mat3>,
    g: Vec<Mat3>,
    /// Coupling block of particle k to the next particle of its line (zero at the line's end).
    next: Vec<Mat3>,
}

/// One family of lines over the grid: `count` lines of `len` particles, particle t of line
/// l at `l·line_stride + t·stride`.
#[derive(Debug, Clone, Copy)]
struct Lines {
    count: usize,
    len: usize,
    stride: usize,
    line_stride: usize,
}

impl Lines {
    fn warp(g: &Grid) -> Self {
        Self {
            count: g.nv,
            len: g.nu,
            stride: 1,
            line_stride: g.nu,
        }
    }

    fn weft(g: &Grid) -> Self {
        Self {
            count: g.nu,
            len: g.nv,
            stride: g.nu,
            line_stride: 1,
        }
    }

    #[inline]
    fn at(&self, l: usize, t: usize) -> usize {
        l * self.line_stride + t * self.stride
    }
}

impl LineFactor {
    /// Factors D with the couplings `next` along `lines`; false when a pivot is singular.
    fn factor(&mut self, lines: Lines, d: &[Mat3]) -> bool {
        let n = d.len();
        self.m_inv.resize(n, Mat3::zeros());
        self.g.resize(n, Mat3::zeros());
        for l in 0..lines.count {
            let mut prev: Option<usize> = None;
            for t in 0..lines.len {
                let k = lines.at(l, t);
                let mut m = d[k];
                if let Some(p) = prev {
                    // M_k = A_k − Bᵀ_{k−1} G_{k−1}
                    m -= self.next[p].transpose() * self.g[p];
                }
                let Some(m_inv) = m.try_inverse() else {
                    return false;
                };
                self.m_inv[k] = m_inv;
                self.g[k] = m_inv * self.next[k];
                prev = Some(k);
            }
        }
        self.m_inv.iter().all(|m| m.iter().all(|v| v.is_finite()))
    }

    /// z ← P_L⁻¹ r over every line (forward then backward substitution).
    fn solve(&self, lines: Lines, r: &[Vec3], z: &mut [Vec3]) {
        for l in 0..lines.count {
            let mut prev: Option<usize> = None;
            for t in 0..lines.len {
                let k = lines.at(l, t);
                let mut rk = r[k];
                if let Some(p) = prev {
                    rk -= self.next[p].tr_mul(&z[p]);
                }
                z[k] = self.m_inv[k] * rk;
                prev = Some(k);
            }
            for t in (0..lines.len.saturating_sub(1)).rev() {
                let k = lines.at(l, t);
                let after = z[lines.at(l, t + 1)];
                z[k] -= self.g[k] * after;
            }
        }
    }

    /// dz ← P_L⁻¹(−C·z) and z_acc += dz over every line, C the couplings of this family
    /// (both triangles): the correction of a sweep after a sweep of the other family left
    /// the residual −C·z. The coupling product is taken on the fly, inside the forward
    /// substitution (C·z at particle k needs z at its two neighbours of the same line).
    fn solve_couplings(&self, lines: Lines, z: &[Vec3], dz: &mut [Vec3], z_acc: &mut [Vec3]) {
        let len = lines.len;
        if len == 0 {
            return;
        }
        for l in 0..lines.count {
            // forward: y_k = M_k⁻¹(−C_{k,k+1}z_{k+1} − C_{k−1,k}ᵀ(z_{k−1} + y_{k−1}))
            let mut prev = lines.at(l, 0);
            let mut rk = if len > 1 {
                -(self.next[prev] * z[lines.at(l, 1)])
            } else {
                Vec3::zeros()
            };
            dz[prev] = self.m_inv[prev] * rk;
            for t in 1..len {
                let k = lines.at(l, t);
                rk = -self.next[prev].tr_mul(&(z[prev] + dz[prev]));
                if t + 1 < len {
                    rk -= self.next[k] * z[lines.at(l, t + 1)];
                }
                dz[k] = self.m_inv[k] * rk;
                prev = k;
            }
            // backward, adding each final correction to z_acc
            z_acc[prev] += dz[prev];
            for t in (0..len - 1).rev() {
                let k = lines.at(l, t);
                let after = dz[prev];
                dz[k] -= self.g[k] * after;
                z_acc[k] += dz[k];
                prev = k;
            }
        }
    }
}

/// The factored line preconditioner of a grid world, rebuilt at each step's predictor.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinePreconditioner {
    grid: Option<Grid>,
    warp: LineFactor,
    weft: LineFactor,
    /// Diagonal blocks with the pinned rows made the identity.
    diag: Vec<Mat3>,
    /// Scratch of one application: residual, correction, positions as vectors.
    r: Vec<Vec3>,
    dz: Vec<Vec3>,
    z: Vec<Vec3>,
    /// Factorisations done.
    pub factorisations: u64,
}

impl LinePreconditioner {
    /// Builds P's two line factors at `x` from the unscaled diagonal blocks `d` (D_i of
    /// `block_scaling`); pinned rows are the identity and couple to nothing. Returns false
    /// (and holds no factor) when the material has no stretch couplings or a pivot is
    /// singular: the caller falls back to the block scaling.
    pub(crate) fn refactor(&mut self, world: &ClothWorld, x: &[Vec3], d: &[Mat3]) -> bool {
        self.build(world, d, |edge| match &world.material {
            Material::Springs(s) => s.stiffness_edges(x, edge),
            Material::Kes(k) => k.stiffness_edges(x, edge),
            Material::Terzopoulos(_) => {}
        })
    }

    /// Builds the line factors of a matrix with diagonal blocks `d` and the couplings −m of
    /// each pair (a, b, m) that `edges` passes on (pairs not along a line are left out).
    pub(crate) fn build(
        &mut self,
        world: &ClothWorld,
        d: &[Mat3],
        edges: impl FnOnce(&mut dyn FnMut(usize, usize, Mat3)),
    ) -> bool {
        self.grid = None;
        let g = world.grid;
        let n = world.len();
        if n != g.nu * g.nv || d.len() != n {
            return false;
        }
        for f in [&mut self.warp, &mut self.weft] {
            f.next.clear();
            f.next.resize(n, Mat3::zeros());
        }
        let pinned = world.pinned();
        let mut any = false;
        {
            let (warp, weft) = (&mut self.warp.next, &mut self.weft.next);
            let mut edge = |a: usize, b: usize, m: Mat3| {
                let (a, b) = (a.min(b), a.max(b));
                if pinned[a] || pinned[b] {
                    return;
                }
                if b == a + 1 && a % g.nu + 1 < g.nu {
                    warp[a] -= m;
                    any = true;
                } else if b == a + g.nu {
                    weft[a] -= m;
                    any = true;
                }
            };
            edges(&mut edge);
        }
        if !any {
            return false;
        }
        self.diag.clear();
        self.diag.extend(
            d.iter()
                .zip(pinned)
                .map(|(b, &p)| if p { Mat3::identity() } else { *b }),
        );
        if !self.warp.factor(Lines::warp(&g), &self.diag)
            || !self.weft.factor(Lines::weft(&g), &self.diag)
        {
            return false;
        }
        self.grid = Some(g);
        self.factorisations += 1;
        true
    }

    pub(crate) fn is_ready(&self) -> bool {
        self.grid.is_some()
    }

    /// Drops the factor (the next step refactors).
    pub(crate) fn invalidate(&mut self) {
        self.grid = None;
    }

    /// z ← B·r, B ≈ P⁻¹ by three sweeps (symmetric: warp, weft, warp).
    pub(crate) fn apply(&mut self, r: &[Vec3], z: &mut [Vec3]) {
        let Some(g) = self.grid else {
            z.copy_from_slice(r);
            return;
        };
        let n = r.len();
        for v in [&mut self.r, &mut self.dz, &mut self.z] {
            v.resize(n, Vec3::zeros());
        }
        let (warp, weft) = (Lines::warp(&g), Lines::weft(&g));
        // warp sweep from z = 0; the residual left is −C_weft·z, then −C_warp·dz
        self.warp.solve(warp, r, z);
        self.z.clone_from_slice(z);
        self.weft.solve_couplings(weft, &self.z, &mut self.dz, z);
        self.warp.solve_couplings(warp, &self.dz, &mut self.r, z);
    }

    /// rhs ← B·rhs (3 entries per particle), B ≈ P⁻¹ by three sweeps: warp, weft, warp.
    pub(crate) fn solve_in_place(&mut self, rhs: &mut [f64]) {
        let Some(g) = self.grid else {
            return;
        };
        let n = rhs.len() / 3;
        for v in [&mut self.r, &mut self.dz, &mut self.z] {
            v.resize(n, Vec3::zeros());
        }
        for (k, r) in self.r.iter_mut().enumerate() {
            *r = Vec3::new(rhs[3 * k], rhs[3 * k + 1], rhs[3 * k + 2]);
        }
        let (warp, weft) = (Lines::warp(&g), Lines::weft(&g));
        self.warp.solve(warp, &self.r, &mut self.z);
        self.r.clone_from(&self.z);
        self.weft.solve_couplings(weft, &self.r, &mut self.dz, &mut self.z);
        self.warp.solve_couplings(warp, &self.dz, &mut self.r, &mut self.z);
        for (k, z) in self.z.iter().enumerate() {
            rhs[3 * k..3 * k + 3].copy_from_slice(z.as_slice());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One family on a single line against the dense solve of the same block tridiagonal.
    #[test]
    fn line_solve_matches_the_dense_solve() {
        let n = 5;
        let lines = Lines {
            count: 1,
            len: n,
            stride: 1,
            line_stride: n,
        };
        let mut f = LineFactor::default();
        let mut d = Vec::new();
        f.next.resize(n, Mat3::zeros());
        for k in 0..n {
            let s = k as f64;
            let a = Mat3::new(3.0 + s, 0.2, 0.1, 0.2, 4.0, 0.3 * s, 0.1, 0.3 * s, 5.0);
            d.push(a);
            if k + 1 < n {
                f.next[k] = Mat3::new(-1.0, 0.1 * s, 0.0, 0.2, -0.5, 0.1, 0.0, 0.3, -0.7);
            }
        }
        assert!(f.factor(lines, &d));
        let r: Vec<Vec3> = (0..n)
            .map(|k| Vec3::new(1.0, -(k as f64), 0.5 * k as f64))
            .collect();
        let mut z = vec![Vec3::zeros(); n];
        f.solve(lines, &r, &mut z);
        let mut dense = nalgebra::DMatrix::<f64>::zeros(3 * n, 3 * n);
        for (k, dk) in d.iter().enumerate() {
            dense.view_mut((3 * k, 3 * k), (3, 3)).copy_from(dk);
            if k + 1 < n {
                dense
                    .view_mut((3 * k, 3 * k + 3), (3, 3))
                    .copy_from(&f.next[k]);
                dense
                    .view_mut((3 * k + 3, 3 * k), (3, 3))
                    .copy_from(&f.next[k].transpose());
            }
        }
        let rhs = nalgebra::DVector::from_iterator(3 * n, r.iter().flat_map(|v| v.iter().copied()));
        let exact = dense.lu().solve(&rhs).unwrap();
        for k in 0..n {
            for c in 0..3 {
                assert!((z[k][c] - exact[3 * k + c]).abs() < 1e-12, "{k} {c}");
            }
        }
    }
}
