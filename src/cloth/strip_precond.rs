//! Experimental: block-tridiagonal solves on strips of two lines (6 × 6 pivots).

use super::{Mat3, Vec3};
use nalgebra::{Matrix6, Vector6};

type M6 = Matrix6<f64>;
type V6 = Vector6<f64>;

#[derive(Debug, Clone, Default)]
pub(crate) struct StripFactor {
    len: usize,
    lines: usize,
    /// per strip position: M⁻¹, G = M⁻¹B, B (block diagonal of the two lines' next couplings)
    m_inv: Vec<M6>,
    g: Vec<M6>,
    b: Vec<M6>,
    /// couplings to the next line (P's block), family order
    pub across: Vec<Mat3>,
    /// couplings (l,k)→(l+1,k+1) and (l,k)→(l+1,k−1) (cells' diagonals), family order
    pub da: Vec<Mat3>,
    pub db: Vec<Mat3>,
}

fn pack(a: &Mat3, x: &Mat3, d: &Mat3) -> M6 {
    let mut m = M6::zeros();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(a);
    m.fixed_view_mut::<3, 3>(0, 3).copy_from(x);
    m.fixed_view_mut::<3, 3>(3, 0).copy_from(&x.transpose());
    m.fixed_view_mut::<3, 3>(3, 3).copy_from(d);
    m
}

impl StripFactor {
    /// Factors the strips (lines 2s, 2s+1; a last odd line with an identity partner that
    /// couples to nothing). `d` diagonal, `next` along-line couplings, `across` to the next line.
    pub(crate) fn factor(&mut self, len: usize, lines: usize, d: &[Mat3], next: &[Mat3]) -> bool {
        self.len = len;
        self.lines = lines;
        let strips = lines.div_ceil(2);
        let n6 = strips * len;
        self.m_inv.resize(n6, M6::zeros());
        self.g.resize(n6, M6::zeros());
        self.b.resize(n6, M6::zeros());
        for s in 0..strips {
            let (l0, l1) = (2 * s, 2 * s + 1);
            for k in 0..len {
                let i0 = l0 * len + k;
                let (a, x, dd, n1) = if l1 < lines {
                    let i1 = l1 * len + k;
                    (d[i0], self.across[i0], d[i1], next[i1])
                } else {
                    (d[i0], Mat3::zeros(), Mat3::identity(), Mat3::zeros())
                };
                let p = s * len + k;
                let mut b = M6::zeros();
                b.fixed_view_mut::<3, 3>(0, 0).copy_from(&next[i0]);
                b.fixed_view_mut::<3, 3>(3, 3).copy_from(&n1);
                if l1 < lines && k + 1 < len {
                    b.fixed_view_mut::<3, 3>(0, 3).copy_from(&self.da[i0]);
                    b.fixed_view_mut::<3, 3>(3, 0)
                        .copy_from(&self.db[i0 + 1].transpose());
                }
                let mut m = pack(&a, &x, &dd);
                if k > 0 {
                    m -= self.b[p - 1].transpose() * self.g[p - 1];
                }
                let Some(inv) = m.try_inverse() else {
                    return false;
                };
                self.m_inv[p] = inv;
                self.g[p] = inv * b;
                self.b[p] = b;
            }
        }
        true
    }

    fn get(&self, v: &[Vec3], s: usize, k: usize) -> V6 {
        let i0 = 2 * s * self.len + k;
        let a = v[i0];
        let b = if 2 * s + 1 < self.lines {
            v[i0 + self.len]
        } else {
            Vec3::zeros()
        };
        V6::new(a.x, a.y, a.z, b.x, b.y, b.z)
    }

    fn put(&self, v: &mut [Vec3], s: usize, k: usize, y: &V6) {
        let i0 = 2 * s * self.len + k;
        v[i0] = Vec3::new(y[0], y[1], y[2]);
        if 2 * s + 1 < self.lines {
            v[i0 + self.len] = Vec3::new(y[3], y[4], y[5]);
        }
    }

    /// z ← S⁻¹ r.
    pub(crate) fn solve(&self, r: &[Vec3], z: &mut [Vec3]) {
        let len = self.len;
        let mut ys = vec![V6::zeros(); len];
        for s in 0..self.lines.div_ceil(2) {
            let o = s * len;
            let mut prev = V6::zeros();
            for k in 0..len {
                let mut rk = self.get(r, s, k);
                if k > 0 {
                    rk -= self.b[o + k - 1].tr_mul(&prev);
                }
                prev = self.m_inv[o + k] * rk;
                ys[k] = prev;
            }
            for k in (0..len - 1).rev() {
                let after = ys[k + 1];
                ys[k] -= self.g[o + k] * after;
            }
            for (k, y) in ys.iter().enumerate() {
                self.put(z, s, k, y);
            }
        }
    }

    /// out ← −E·v, E the couplings between strips (line 2s+1 to 2s+2).
    pub(crate) fn minus_between(&self, v: &[Vec3], out: &mut [Vec3]) {
        let len = self.len;
        for l in 0..self.lines {
            for k in 0..len {
                let i = l * len + k;
                let mut o = Vec3::zeros();
                if l % 2 == 1 && l + 1 < self.lines {
                    o -= self.across[i] * v[i + len];
                    if k + 1 < len {
                        o -= self.da[i] * v[i + len + 1];
                    }
                    if k > 0 {
                        o -= self.db[i] * v[i + len - 1];
                    }
                }
                if l % 2 == 0 && l > 0 {
                    o -= self.across[i - len].tr_mul(&v[i - len]);
                    if k > 0 {
                        o -= self.da[i - len - 1].tr_mul(&v[i - len - 1]);
                    }
                    if k + 1 < len {
                        o -= self.db[i - len + 1].tr_mul(&v[i - len + 1]);
                    }
                }
                out[i] = o;
            }
        }
    }
}
