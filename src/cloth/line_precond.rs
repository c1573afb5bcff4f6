//! The line preconditioner: a matrix P [N/m] of diagonal blocks D and couplings of neighbours
//! along the lines (the stretch matrix: −k·d̂d̂ᵀ per traction connector or spring; the tangent's
//! traction and shear-side blocks) applied by exact block-tridiagonal solves along the warp
//! lines, the weft lines, then the warp lines again (z += P_L⁻¹(r − Pz)); O(n) to build and apply.
//!
//! P_warp keeps D and the couplings of consecutive particles along each warp line (i, i+1),
//! P_weft those along each weft line (j, j+1); couplings across lines (bending, shear cells'
//! diagonals, diagonal springs) stay in D only. After a sweep with one family the residual r − Pz is
//! minus the other family's couplings times that sweep's correction, so a sweep costs one
//! forward and one backward substitution plus one coupling product. The lines of a family
//! are independent: each sweep runs them on rayon's threads (the weft family kept in
//! transposed order, so that its lines are contiguous too); the result does not depend on
//! the number of threads.

use rayon::prelude::*;

use super::grid::Grid;
use super::world::{ClothWorld, Material};
use super::{Mat3, Vec3};

/// Particles per rayon task of a sweep (whole lines): smaller shares cost more to hand out
/// than they save.
const TASK_PARTICLES: usize = 1024;

/// The block-tridiagonal factor of one family of lines (Thomas algorithm), lines stored one
/// after the other (`len` particles each): per particle M⁻¹ of its pivot, G = M⁻¹B (B its
/// coupling to the next particle of the line), H = M⁻¹Bᵀ₋ (B₋ the previous particle's
/// coupling: one 3 × 3 product on a forward chain instead of two) and that coupling.
#[derive(Debug, Clone, Default)]
struct LineFactor {
    len: usize,
    m_inv: Vec<Mat3>,
    g: Vec<Mat3>,
    h: Vec<Mat3>,
    /// Coupling block of particle k to the next particle of its line (zero at the line's end).
    next: Vec<Mat3>,
}

/// Lines worked side by side in one substitution: each line's recurrence is a chain of
/// dependent 3 × 3 products, so interleaving `LANES` independent lines lets one line's latency
/// overlap the others' (every line still takes the same operations in the same order).
const LANES: usize = 4;

/// Factors `L` lines of `len` particles stored one after the other: D's blocks `d` with the
/// couplings `next`; false when a pivot is singular.
fn factor_lines<const L: usize>(
    len: usize,
    [d, next]: [&[Mat3]; 2],
    m_inv: &mut [Mat3],
    g: &mut [Mat3],
    h: &mut [Mat3],
) -> bool {
    let mut g_prev = [Mat3::zeros(); L];
    for k in 0..len {
        for (j, g_prev) in g_prev.iter_mut().enumerate() {
            let i = j * len + k;
            let mut m = d[i];
            if k > 0 {
                // M_k = A_k − Bᵀ_{k−1} G_{k−1}
                m -= next[i - 1].transpose() * *g_prev;
            }
            let Some(inv) = m.try_inverse() else {
                return false;
            };
            m_inv[i] = inv;
            g[i] = inv * next[i];
            h[i] = if k > 0 {
                inv * next[i - 1].transpose()
            } else {
                Mat3::zeros()
            };
            *g_prev = g[i];
        }
    }
    m_inv.iter().all(|m| m.iter().all(|v| v.is_finite()))
}

/// The `L` lines of `len` particles stored one after the other in `s`, one slice each: an
/// index below `len` is then in bounds of every line without a check per access.
#[inline(always)]
fn lines_of<const L: usize, T>(s: &[T], len: usize) -> [&[T]; L] {
    std::array::from_fn(|j| &s[j * len..(j + 1) * len])
}

/// `lines_of` for a slice written to.
#[inline(always)]
fn lines_of_mut<const L: usize, T>(s: &mut [T], len: usize) -> [&mut [T]; L] {
    let mut rest = s;
    std::array::from_fn(|_| {
        let (line, tail) = std::mem::take(&mut rest).split_at_mut(len);
        rest = tail;
        line
    })
}

/// The back substitution z_k −= G_k z_{k+1} of `L` lines of `len` particles.
#[inline]
fn back_substitute<const L: usize>(len: usize, g: &[Mat3], z: &mut [Vec3]) {
    let (g, z) = (lines_of::<L, _>(g, len), lines_of_mut::<L, _>(z, len));
    let mut after: [Vec3; L] = std::array::from_fn(|j| z[j][len - 1]);
    for k in (0..len - 1).rev() {
        for (j, after) in after.iter_mut().enumerate() {
            z[j][k] -= g[j][k] * *after;
            *after = z[j][k];
        }
    }
}

/// z ← P_L⁻¹ r over `L` lines of `len` particles (forward then backward substitution); the
/// slices hold those lines only.
fn solve_lines<const L: usize>(
    len: usize,
    [m_inv, g, h]: [&[Mat3]; 3],
    r: &[Vec3],
    z: &mut [Vec3],
) {
    {
        let [m_inv, h] = [m_inv, h].map(|s| lines_of::<L, _>(s, len));
        let (r, z) = (lines_of::<L, _>(r, len), lines_of_mut::<L, _>(z, len));
        let mut prev = [Vec3::zeros(); L];
        for (j, prev) in prev.iter_mut().enumerate() {
            *prev = m_inv[j][0] * r[j][0];
            z[j][0] = *prev;
        }
        for k in 1..len {
            for (j, prev) in prev.iter_mut().enumerate() {
                // M_k⁻¹(r_k − Bᵀ_{k−1}z_{k−1}) = M_k⁻¹r_k − H_k z_{k−1}
                *prev = m_inv[j][k] * r[j][k] - h[j][k] * *prev;
                z[j][k] = *prev;
            }
        }
    }
    back_substitute::<L>(len, g, z);
}

/// dz ← P_L⁻¹(−C·z) over `L` lines of `len` particles, C the couplings of their family
/// (both triangles), and `acc` += dz when given; the slices hold those lines only. The
/// coupling product is taken inside the forward substitution (C·z at particle k needs z at
/// its two neighbours of the same line).
fn solve_line_couplings<const L: usize>(
    len: usize,
    [_, g, h]: [&[Mat3]; 3],
    z: &[Vec3],
    dz: &mut [Vec3],
    acc: Option<&mut [Vec3]>,
) {
    {
        // forward: y_k = M_k⁻¹(−C_{k,k+1}z_{k+1} − C_{k−1,k}ᵀ(z_{k−1} + y_{k−1}))
        //              = −G_k z_{k+1} − H_k(z_{k−1} + y_{k−1})
        let [g, h] = [g, h].map(|s| lines_of::<L, _>(s, len));
        let (z, dz) = (lines_of::<L, _>(z, len), lines_of_mut::<L, _>(dz, len));
        let mut prev = [Vec3::zeros(); L];
        for k in 0..len {
            for (j, prev) in prev.iter_mut().enumerate() {
                let mut yk = Vec3::zeros();
                if k > 0 {
                    yk -= h[j][k] * (z[j][k - 1] + *prev);
                }
                if k + 1 < len {
                    yk -= g[j][k] * z[j][k + 1];
                }
                *prev = yk;
                dz[j][k] = yk;
            }
        }
    }
    back_substitute::<L>(len, g, dz);
    if let Some(acc) = acc {
        acc.iter_mut().zip(dz.iter()).for_each(|(a, d)| *a += d);
    }
}

impl LineFactor {
    /// Groups of `LANES` lines per rayon task (at least one).
    fn groups_per_task(&self) -> usize {
        (TASK_PARTICLES / (LANES * self.len.max(1))).max(1)
    }

    /// The factor's blocks M⁻¹, G, H of the `lines` lines from particle `o`.
    fn lines(&self, o: usize, lines: usize) -> [&[Mat3]; 3] {
        let r = o..o + lines * self.len;
        [&self.m_inv[r.clone()], &self.g[r.clone()], &self.h[r]]
    }

    /// Factors D (`d`, in this family's order) with the couplings `next`; false when a
    /// pivot is singular.
    fn factor(&mut self, d: &[Mat3]) -> bool {
        let (n, len) = (d.len(), self.len);
        for m in [&mut self.m_inv, &mut self.g, &mut self.h] {
            m.resize(n, Mat3::zeros());
        }
        let group = LANES * len;
        let per_task = self.groups_per_task();
        self.m_inv
            .par_chunks_mut(group)
            .zip(
                self.g
                    .par_chunks_mut(group)
                    .zip(self.h.par_chunks_mut(group)),
            )
            .zip(d.par_chunks(group).zip(self.next.par_chunks(group)))
            .with_min_len(per_task)
            .all(|((m_inv, (g, h)), (d, next))| {
                if m_inv.len() == group {
                    factor_lines::<LANES>(len, [d, next], m_inv, g, h)
                } else {
                    (0..m_inv.len() / len).all(|l| {
                        let r = l * len..(l + 1) * len;
                        let (d, next) = (&d[r.clone()], &next[r.clone()]);
                        let (m_inv, g) = (&mut m_inv[r.clone()], &mut g[r.clone()]);
                        factor_lines::<1>(len, [d, next], m_inv, g, &mut h[r])
                    })
                }
            })
    }

    /// z ← P_L⁻¹ r over every line (forward then backward substitution).
    fn solve(&self, r: &[Vec3], z: &mut [Vec3]) {
        let len = self.len;
        z.par_chunks_mut(LANES * len)
            .enumerate()
            .with_min_len(self.groups_per_task())
            .for_each(|(t, z)| {
                let o = t * LANES * len;
                if z.len() == LANES * len {
                    let r = &r[o..o + LANES * len];
                    solve_lines::<LANES>(len, self.lines(o, LANES), r, z);
                } else {
                    for (l, z) in z.chunks_exact_mut(len).enumerate() {
                        let o = o + l * len;
                        solve_lines::<1>(len, self.lines(o, 1), &r[o..o + len], z);
                    }
                }
            });
    }

    /// dz ← P_L⁻¹(−C·z) over every line, C the couplings of this family (both triangles),
    /// and `acc` += dz when given: the correction of a sweep after a sweep of the other
    /// family left the residual −C·z.
    fn solve_couplings(&self, z: &[Vec3], dz: &mut [Vec3], acc: Option<&mut [Vec3]>) {
        let len = self.len;
        let group = LANES * len;
        let run = |t: usize, dz: &mut [Vec3], mut acc: Option<&mut [Vec3]>| {
            let o = t * group;
            if dz.len() == group {
                let f = self.lines(o, LANES);
                solve_line_couplings::<LANES>(len, f, &z[o..o + group], dz, acc);
            } else {
                for (l, dz) in dz.chunks_exact_mut(len).enumerate() {
                    let (o, r) = (o + l * len, l * len..(l + 1) * len);
                    let f = self.lines(o, 1);
                    let acc = acc.as_deref_mut().map(|a| &mut a[r]);
                    solve_line_couplings::<1>(len, f, &z[o..o + len], dz, acc);
                }
            }
        };
        let per_task = self.groups_per_task();
        match acc {
            Some(acc) => dz
                .par_chunks_mut(group)
                .zip(acc.par_chunks_mut(group))
                .enumerate()
                .with_min_len(per_task)
                .for_each(|(t, (dz, acc))| run(t, dz, Some(acc))),
            None => dz
                .par_chunks_mut(group)
                .enumerate()
                .with_min_len(per_task)
                .for_each(|(t, dz)| run(t, dz, None)),
        }
    }
}

/// `out` ← `v` (nu × nv, warp lines contiguous) in weft order (nv × nu, weft lines
/// contiguous): out[i·nv + j] = v[j·nu + i].
fn to_weft_order(g: &Grid, v: &[Vec3], out: &mut [Vec3]) {
    let (nu, nv) = (g.nu, g.nv);
    out.par_chunks_mut(nv)
        .enumerate()
        .with_min_len((TASK_PARTICLES / nv.max(1)).max(1))
        .for_each(|(i, col)| {
            for (j, o) in col.iter_mut().enumerate() {
                *o = v[j * nu + i];
            }
        });
}

/// `dz` ← `dz_weft` back in warp order, and `z` += it.
fn add_from_weft_order(g: &Grid, dz_weft: &[Vec3], dz: &mut [Vec3], z: &mut [Vec3]) {
    let (nu, nv) = (g.nu, g.nv);
    dz.par_chunks_mut(nu)
        .zip(z.par_chunks_mut(nu))
        .enumerate()
        .with_min_len((TASK_PARTICLES / nu.max(1)).max(1))
        .for_each(|(j, (dz, z))| {
            for (i, (d, zk)) in dz.iter_mut().zip(z.iter_mut()).enumerate() {
                *d = dz_weft[i * nv + j];
                *zk += *d;
            }
        });
}

/// The factored line preconditioner of a grid world, rebuilt by its caller when it goes stale.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinePreconditioner {
    grid: Option<Grid>,
    warp: LineFactor,
    /// The weft family in weft order (particle (i, j) at i·nv + j).
    weft: LineFactor,
    /// Diagonal blocks with the pinned rows made the identity, in weft order.
    diag_weft: Vec<Mat3>,
    /// Diagonal blocks with the pinned rows made the identity.
    diag: Vec<Mat3>,
    /// Per particle (warp order): its column i and its index in weft order.
    column: Vec<u32>,
    weft_pos: Vec<u32>,
    /// Scratch of one application: a vector in weft order and its correction, the
    /// corrections in warp order, the right-hand side and result of `solve_in_place`.
    z_weft: Vec<Vec3>,
    dz_weft: Vec<Vec3>,
    dz: Vec<Vec3>,
    dz2: Vec<Vec3>,
    r: Vec<Vec3>,
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
        self.build_with(world, |diag, edge| {
            diag.extend_from_slice(d);
            edges(edge);
        })
    }

    /// `build` with the diagonal blocks written by `fill` into its (empty) first argument,
    /// which passes the couplings on to its second in the same pass (no list in between).
    pub(crate) fn build_with(
        &mut self,
        world: &ClothWorld,
        fill: impl FnOnce(&mut Vec<Mat3>, &mut dyn FnMut(usize, usize, Mat3)),
    ) -> bool {
        self.grid = None;
        let g = world.grid;
        let n = world.len();
        if n != g.nu * g.nv || n == 0 {
            return false;
        }
        if self.weft_pos.len() != n || self.warp.len != g.nu || self.weft.len != g.nv {
            // particle (i, j) = j·nu + i: its column i and its place i·nv + j in weft order
            self.column = (0..n).map(|k| (k % g.nu) as u32).collect();
            self.weft_pos = (0..n)
                .map(|k| ((k % g.nu) * g.nv + k / g.nu) as u32)
                .collect();
        }
        self.warp.len = g.nu;
        self.weft.len = g.nv;
        for f in [&mut self.warp, &mut self.weft] {
            f.next.clear();
            f.next.resize(n, Mat3::zeros());
        }
        let pinned = world.pinned();
        let mut any = false;
        self.diag.clear();
        {
            let (warp, weft) = (&mut self.warp.next, &mut self.weft.next);
            let (column, weft_pos) = (&self.column, &self.weft_pos);
            let mut edge = |a: usize, b: usize, m: Mat3| {
                let (a, b) = (a.min(b), a.max(b));
                if pinned[a] || pinned[b] {
                    return;
                }
                if b == a + 1 && column[a] as usize + 1 < g.nu {
                    warp[a] -= m;
                    any = true;
                } else if b == a + g.nu {
                    weft[weft_pos[a] as usize] -= m;
                    any = true;
                }
            };
            fill(&mut self.diag, &mut edge);
        }
        if !any || self.diag.len() != n {
            return false;
        }
        for (b, &p) in self.diag.iter_mut().zip(pinned) {
            if p {
                *b = Mat3::identity();
            }
        }
        self.diag_weft.resize(n, Mat3::zeros());
        for (b, &w) in self.diag.iter().zip(&self.weft_pos) {
            self.diag_weft[w as usize] = *b;
        }
        if !self.warp.factor(&self.diag) || !self.weft.factor(&self.diag_weft) {
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
        for v in [
            &mut self.z_weft,
            &mut self.dz_weft,
            &mut self.dz,
            &mut self.dz2,
        ] {
            v.resize(n, Vec3::zeros());
        }
        // warp sweep from z = 0; the residual left is −C_weft·z, then −C_warp·dz
        self.warp.solve(r, z);
        to_weft_order(&g, z, &mut self.z_weft);
        self.weft
            .solve_couplings(&self.z_weft, &mut self.dz_weft, None);
        add_from_weft_order(&g, &self.dz_weft, &mut self.dz, z);
        self.warp.solve_couplings(&self.dz, &mut self.dz2, Some(z));
    }

    /// rhs ← B·rhs (3 entries per particle), B ≈ P⁻¹ by three sweeps: warp, weft, warp.
    pub(crate) fn solve_in_place(&mut self, rhs: &mut [f64]) {
        if self.grid.is_none() {
            return;
        }
        let n = rhs.len() / 3;
        let (mut r, mut z) = (std::mem::take(&mut self.r), std::mem::take(&mut self.z));
        r.clear();
        r.extend(rhs.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])));
        z.resize(n, Vec3::zeros());
        self.apply(&r, &mut z);
        for (c, zk) in rhs.chunks_exact_mut(3).zip(&z) {
            c.copy_from_slice(zk.as_slice());
        }
        (self.r, self.z) = (r, z);
    }
}

#[cfg(test)]
mod tests;
