//! The connectors' tangent stiffness K = −∂F/∂x [N/m] at x with the laws' trial states, kept
//! per connector (matrix-free): traction w·[τ/h·d̂d̂ᵀ + max(F, 0)/l·(I − d̂d̂ᵀ)], bending
//! w·τ_b/h·∇φ∇φᵀ, shear A·½(τ_w + τ_f)·∇θ∇θᵀ (τ = dF/dstrain ≥ 0, the law's tangent with
//! its friction; the angles' second derivatives are left out, the Gauss–Newton part).

use rayon::prelude::*;

use crate::material::{LawState, MaterialLaw};

use super::forces::{Band, PARALLEL_CONNECTORS};
use super::{shear_angle, turning_angle, Bending, KesConnectors, Mat3, Shear, Traction, Vec3};

/// K's factors of one traction connector, with its particles (so that a product reads one
/// record per connector).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct TractionFactor {
    /// Unit direction d̂ from p_a to p_b.
    pub(super) dir: Vec3,
    /// Axial stiffness w·τ/h [N/m].
    pub(super) axial: f64,
    /// Lateral stiffness w·max(F, 0)/l [N/m].
    pub(super) lateral: f64,
    /// p_a, p_b.
    pub(super) ends: [u32; 2],
}

/// K's factors of one bending connector: ∂φ/∂r_a, ∂φ/∂r_b, ∂φ/∂e [1/m] (∇φ at p_a, p_c, p_b,
/// p_{e+}, p_{e−} is −∂_a, ∂_a − ∂_b, ∂_b, ∂_e, −∂_e), w·τ_b/h [N·m] and those particles.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct BendingFactor {
    pub(super) grad: [Vec3; 3],
    pub(super) k: f64,
    /// p_a, p_c, p_b, p_{e+}, p_{e−}.
    pub(super) points: [u32; 5],
}

/// K's factors of one shear cell: ∂θ/∂(warp), ∂θ/∂(weft) [1/m] (∇θ at the corners p00, p10,
/// p01, p11 is ½(−∂_w − ∂_f), ½(∂_w − ∂_f), ½(∂_f − ∂_w), ½(∂_w + ∂_f)), A·½(τ_w + τ_f)
/// [N·m/rad] and the corners.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct ShearFactor {
    pub(super) grad: [Vec3; 2],
    pub(super) k: f64,
    pub(super) corners: [u32; 4],
}

/// Per-connector factors of K at one x.
#[derive(Debug, Default, Clone)]
pub(crate) struct KesTangent {
    pub(super) traction: Vec<TractionFactor>,
    pub(super) bending: Vec<BendingFactor>,
    pub(super) shear: Vec<ShearFactor>,
}

impl KesTangent {
    /// Sized for `kes` (every factor then written by the force evaluation that fills it).
    pub(super) fn resize_for(&mut self, kes: &KesConnectors) {
        self.traction
            .resize(kes.traction.len(), TractionFactor::default());
        self.bending
            .resize(kes.bending.len(), BendingFactor::default());
        self.shear.resize(kes.shear.len(), ShearFactor::default());
    }
}

/// A law's trial state, force and tangent at `strain` from `state`, with one elastic
/// evaluation: the state and force of [`MaterialLaw::trial`], the τ of
/// [`MaterialLaw::tangent`] (the same operations, so the same numbers).
#[inline(always)]
pub(super) fn trial_and_tangent<L: MaterialLaw>(
    law: &L,
    state: &LawState,
    strain: f64,
) -> (LawState, f64, f64) {
    let mut next = *state;
    next.friction
        .advance(&law.friction().shape, strain - state.strain);
    next.strain = strain;
    law.update_flags(&mut next, strain);
    let (tau, force) = law.tangent(state, &next, strain);
    (next, force, tau)
}

/// The traction factor from the connector's geometry (d = p_b − p_a, l = |d|), force and τ.
#[inline(always)]
pub(super) fn traction_factor(
    c: &Traction,
    d: Vec3,
    l: f64,
    force: f64,
    tau: f64,
) -> TractionFactor {
    let tau = tau.max(0.0);
    let (dir, lateral) = if l > 0.0 {
        let inv_l = 1.0 / l;
        (d * inv_l, c.width * force.max(0.0) * inv_l)
    } else {
        (Vec3::zeros(), 0.0)
    };
    TractionFactor {
        dir,
        axial: c.width * tau / c.rest,
        lateral,
        ends: [c.a, c.b],
    }
}

/// The bending factor from the turning angle's gradients and τ_b.
#[inline(always)]
pub(super) fn bending_factor(c: &Bending, grad: [Vec3; 3], tau: f64) -> BendingFactor {
    BendingFactor {
        grad,
        k: c.width * tau.max(0.0) / c.rest,
        points: [c.a, c.c, c.b, c.e_plus, c.e_minus],
    }
}

/// The shear factor from the shear angle's gradients and τ_w + τ_f.
#[inline(always)]
pub(super) fn shear_factor(c: &Shear, grad: [Vec3; 2], tau: f64) -> ShearFactor {
    ShearFactor {
        grad,
        k: c.area * 0.5 * tau.max(0.0),
        corners: c.p,
    }
}

/// m += k·a·aᵀ, each entry as (a_i·a_j)·k (the numbers of `m += a * aᵀ * k`), its six
/// distinct products once.
#[inline(always)]
fn add_sym_outer(m: &mut Mat3, a: &Vec3, k: f64) {
    let (x, y, z) = (a.x, a.y, a.z);
    let (xy, xz, yz) = ((x * y) * k, (x * z) * k, (y * z) * k);
    m[(0, 0)] += (x * x) * k;
    m[(1, 1)] += (y * y) * k;
    m[(2, 2)] += (z * z) * k;
    m[(0, 1)] += xy;
    m[(1, 0)] += xy;
    m[(0, 2)] += xz;
    m[(2, 0)] += xz;
    m[(1, 2)] += yz;
    m[(2, 1)] += yz;
}

impl KesConnectors {
    /// K's factors at `x`, each law's tangent taken at its trial state in `trial` (the states
    /// `add_forces` wrote for the same x).
    pub(crate) fn tangent(&self, x: &[Vec3], trial: &[LawState], out: &mut KesTangent) {
        let (nt, nb) = (self.traction.len(), self.bending.len());
        out.traction.clear();
        out.traction
            .par_extend(self.traction.par_iter().enumerate().map(|(k, c)| {
                let d = x[c.b as usize] - x[c.a as usize];
                let l = d.norm();
                let law = &self.laws.traction[c.dir as usize];
                let strain = l / c.rest - 1.0;
                let (tau, force) = law.tangent(&self.states[k], &trial[k], strain);
                traction_factor(c, d, l, force, tau)
            }));
        out.bending.clear();
        out.bending
            .par_extend(self.bending.par_iter().enumerate().map(|(k, c)| {
                let (ep, em) = (x[c.e_plus as usize], x[c.e_minus as usize]);
                let (phi, d_ra, d_rb, d_e) =
                    turning_angle(x[c.a as usize], x[c.c as usize], x[c.b as usize], ep - em);
                let law = &self.laws.bending[c.dir as usize];
                let tau = law
                    .tangent(&self.states[nt + k], &trial[nt + k], phi / c.rest)
                    .0;
                bending_factor(c, [d_ra, d_rb, d_e], tau)
            }));
        out.shear.clear();
        let base = nt + nb;
        out.shear
            .par_extend(self.shear.par_iter().enumerate().map(|(k, c)| {
                let (theta, d_tw, d_tf) = shear_angle(c.p.map(|i| x[i as usize]));
                let s = base + 2 * k;
                let [tw, tf] = [0, 1].map(|d| {
                    self.laws.shear[d]
                        .tangent(&self.states[s + d], &trial[s + d], theta)
                        .0
                });
                shear_factor(c, [d_tw, d_tf], tw + tf)
            }));
    }

    /// y += K·v with K's factors `t`, in one band of connectors per rayon thread on a large
    /// grid (each band summing into its own buffer of `parts`, added to y in band order: the
    /// sums differ from one thread's by round-off, as the forces' do).
    pub(crate) fn add_tangent_product_banded(
        &self,
        t: &KesTangent,
        v: &[Vec3],
        y: &mut [Vec3],
        parts: &mut Vec<Vec<Vec3>>,
    ) {
        let threads = rayon::current_num_threads();
        if threads < 2 || self.len() < PARALLEL_CONNECTORS {
            self.add_band_tangent_product(&self.band(0, 1), t, v, y);
            return;
        }
        let n = y.len();
        parts.resize_with(threads - 1, Vec::new);
        for p in parts.iter_mut() {
            p.clear();
            p.resize(n, Vec3::zeros());
        }
        let mut outs: Vec<&mut [Vec3]> = std::iter::once(&mut *y)
            .chain(parts.iter_mut().map(|p| p.as_mut_slice()))
            .collect();
        outs.par_iter_mut()
            .enumerate()
            .for_each(|(b, out)| self.add_band_tangent_product(&self.band(b, threads), t, v, out));
        let parts = &*parts;
        y.par_chunks_mut(1024).enumerate().for_each(|(c, yc)| {
            for p in parts {
                for (yk, pk) in yc.iter_mut().zip(&p[c * 1024..]) {
                    *yk += pk;
                }
            }
        });
    }

    /// y += K·v with K's factors `t` (serially).
    #[cfg(test)]
    pub(crate) fn add_tangent_product(&self, t: &KesTangent, v: &[Vec3], y: &mut [Vec3]) {
        self.add_band_tangent_product(&self.band(0, 1), t, v, y);
    }

    /// y += K·v over the connectors of `band` (the factors carry their particles).
    #[inline]
    fn add_band_tangent_product(&self, band: &Band, t: &KesTangent, v: &[Vec3], y: &mut [Vec3]) {
        // v and y of one length: an index checked against v needs no second check against y
        let n = v.len().min(y.len());
        let (v, y) = (&v[..n], &mut y[..n]);
        for tf in t.traction.get(band.traction.clone()).unwrap_or_default() {
            let (a, b) = (tf.ends[0] as usize, tf.ends[1] as usize);
            let (dir, axial, lateral) = (tf.dir, tf.axial, tf.lateral);
            let u = v[b] - v[a];
            let along = dir.dot(&u);
            let f = dir * (along * (axial - lateral)) + u * lateral;
            y[a] -= f;
            y[b] += f;
        }
        // a partial K (the tests' traction-only one) has no factors of the other kinds
        for bf in t.bending.get(band.bending.clone()).unwrap_or_default() {
            let ([d_a, d_b, d_e], k) = (bf.grad, bf.k);
            let [a, m, b, ep, em] = bf.points.map(|i| i as usize);
            // ∇φ·v with ∇φ = (−∂_a, ∂_a − ∂_b, ∂_b, ∂_e, −∂_e), then y += ∇φ·(k·s)
            let s =
                k * (d_a.dot(&(v[m] - v[a])) + d_b.dot(&(v[b] - v[m])) + d_e.dot(&(v[ep] - v[em])));
            let (fa, fb, fe) = (d_a * s, d_b * s, d_e * s);
            y[a] -= fa;
            y[m] += fa - fb;
            y[b] += fb;
            y[ep] += fe;
            y[em] -= fe;
        }
        for sf in t.shear.get(band.shear.clone()).unwrap_or_default() {
            let ([d_w, d_f], k) = (sf.grad, sf.k);
            let [p00, p10, p01, p11] = sf.corners.map(|i| i as usize);
            // ∇θ = ½(−∂_w − ∂_f, ∂_w − ∂_f, ∂_f − ∂_w, ∂_w + ∂_f) at p00, p10, p01, p11
            let (u, w) = (v[p11] - v[p00], v[p10] - v[p01]);
            let s = 0.25 * k * (d_w.dot(&(u + w)) + d_f.dot(&(u - w)));
            let (plus, minus) = (d_w + d_f, d_w - d_f);
            y[p00] -= plus * s;
            y[p10] += minus * s;
            y[p01] -= minus * s;
            y[p11] += plus * s;
        }
    }

    /// K's diagonal blocks added to `diag`, and its couplings of neighbours along a line
    /// passed to `edge(a, b, −K_ab)` (the blocks a line preconditioner keeps): each traction
    /// connector's (symmetric), and those of each shear cell's four sides (a < b).
    pub(crate) fn tangent_blocks(
        &self,
        t: &KesTangent,
        diag: &mut [Mat3],
        mut edge: impl FnMut(usize, usize, Mat3),
    ) {
        for tf in &t.traction {
            let (dir, axial, lateral) = (tf.dir, tf.axial, tf.lateral);
            let blk = dir * dir.transpose() * (axial - lateral) + Mat3::identity() * lateral;
            let (a, b) = (tf.ends[0] as usize, tf.ends[1] as usize);
            diag[a] += blk;
            diag[b] += blk;
            edge(a, b, blk);
        }
        for bf in &t.bending {
            for (&i, gi) in bf.points.iter().zip(&bending_gradient(&bf.grad)) {
                add_sym_outer(&mut diag[i as usize], gi, bf.k);
            }
        }
        for sf in &t.shear {
            let ([d_w, d_f], k) = (sf.grad, sf.k);
            // ∇θ = ½(−P, M, −M, P) at p00, p10, p01, p11 (P = ∂_w + ∂_f, M = ∂_w − ∂_f), so
            // K's blocks k·∇θ_a∇θ_bᵀ are ±¼k·PPᵀ, MMᵀ, PMᵀ or MPᵀ: three outer products
            let (p, m) = (d_w + d_f, d_w - d_f);
            let q = 0.25 * k;
            let pm = p * m.transpose() * q;
            let [p00, p10, p01, p11] = sf.corners.map(|i| i as usize);
            for (i, g) in [(p00, &p), (p11, &p), (p10, &m), (p01, &m)] {
                add_sym_outer(&mut diag[i], g, q);
            }
            // −K_ab of the cell's sides (p00–p10, p01–p11 along the warp, p00–p01, p10–p11
            // along the weft), lower index first; its diagonals p00–p11, p10–p01 lie on no line
            edge(p00, p10, pm);
            edge(p01, p11, pm.transpose());
            edge(p00, p01, -pm);
            edge(p10, p11, -pm.transpose());
        }
    }
}

/// ∇φ at p_a, p_c, p_b, p_{e+}, p_{e−} from ∂φ/∂r_a, ∂φ/∂r_b, ∂φ/∂e [1/m].
#[inline(always)]
pub(super) fn bending_gradient(&[d_a, d_b, d_e]: &[Vec3; 3]) -> [Vec3; 5] {
    [-d_a, d_a - d_b, d_b, d_e, -d_e]
}

/// ∇θ at p00, p10, p01, p11 from ∂θ/∂(warp), ∂θ/∂(weft) [1/m].
#[inline(always)]
pub(super) fn shear_gradient(&[d_w, d_f]: &[Vec3; 2]) -> [Vec3; 4] {
    [
        -(d_w + d_f) * 0.5,
        (d_w - d_f) * 0.5,
        (d_f - d_w) * 0.5,
        (d_w + d_f) * 0.5,
    ]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cloth::connectors::KesLaws;
    use crate::cloth::grid::Grid;
    use crate::friction::FrictionShape;
    use crate::material::{BendingLaw, FrictionLaw, ShearLaw, ToeShape, TractionLaw};

    /// A flat nu × nv sheet of [`laws`] in the xy plane, spacing h [m], 0.12 kg/m², no pins.
    pub(crate) fn flat_sheet(nu: usize, nv: usize, h: f64) -> crate::cloth::ClothWorld {
        use crate::cloth::{ClothWorld, Grid};
        let grid = Grid::new(nu, nv, h, h).unwrap();
        let kes = KesConnectors::new(&grid, laws());
        ClothWorld::flat(
            grid,
            Vec3::zeros(),
            Vec3::x(),
            Vec3::y(),
            0.12,
            crate::cloth::world::Material::Kes(Box::new(kes)),
        )
        .unwrap()
    }

    /// Six laws with Dahl friction (level growing with load, μ = 0.3), quadratic toes.
    pub(crate) fn laws() -> KesLaws {
        let fr = |level, eps_f| FrictionLaw {
            level,
            mu: 0.3,
            shape: FrictionShape::Dahl { eps_f, alpha: 1.0 },
        };
        let t = |k_t: f64| TractionLaw {
            k_t,
            eps1: 0.02,
            f1: 0.7 * k_t * 0.02,
            eps1_aligned: None,
            friction: fr(0.5, 0.004),
            toe: ToeShape::Quadratic,
        };
        let b = BendingLaw {
            k_b: 1e-5,
            k0: 0.0,
            friction: fr(2e-6, 4.0),
        };
        let s = ShearLaw {
            k_s: 0.5,
            theta0: 0.0,
            friction: fr(0.05, 0.01),
        };
        KesLaws {
            traction: [t(500.0), t(300.0)],
            bending: [b, b],
            shear: [s, s],
        }
    }

    /// The force pass that writes K's factors (`add_forces_and_tangent`) gives the forces,
    /// trial states and factors of `add_forces` followed by `tangent`, bit for bit, on one
    /// thread and split in bands on two: a 32 × 30 sheet stretched into the power toe (warp),
    /// sheared and bent, its friction states committed from a larger deformation.
    #[test]
    fn forces_with_tangent_match_a_pass_of_their_own() {
        let (nu, nv, h) = (32, 30, 0.01);
        let grid = Grid::new(nu, nv, h, h).unwrap();
        let mut l = laws();
        l.traction[0].toe = ToeShape::Power;
        let mut kes = KesConnectors::new(&grid, l);
        assert!(kes.len() >= PARALLEL_CONNECTORS, "{}", kes.len());
        let place = |s: f64| -> Vec<Vec3> {
            (0..nu * nv)
                .map(|k| {
                    let (i, j) = grid.coords(k);
                    let (u, w) = (i as f64 * h, j as f64 * h);
                    let z = 2e-3 * s * ((i * j) as f64 * 0.3).sin();
                    Vec3::new(u * (1.0 + 0.03 * s) + 0.1 * s * w, w * (1.0 + 0.01 * s), z)
                })
                .collect()
        };
        let n = nu * nv;
        let mut trial = vec![LawState::default(); kes.state_len()];
        let mut f = vec![Vec3::zeros(); n];
        kes.add_forces(&place(1.0), &mut trial, &mut f);
        kes.commit(&mut trial);
        let x = place(0.6);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let (mut t1, mut f1) = (
                    vec![LawState::default(); kes.state_len()],
                    vec![Vec3::zeros(); n],
                );
                kes.add_forces(&x, &mut t1, &mut f1);
                let mut k1 = KesTangent::default();
                kes.tangent(&x, &t1, &mut k1);
                let (mut t2, mut f2) = (
                    vec![LawState::default(); kes.state_len()],
                    vec![Vec3::zeros(); n],
                );
                let mut k2 = KesTangent::default();
                kes.add_forces_and_tangent(&x, &mut t2, &mut f2, &mut k2);
                assert_eq!(f1, f2, "{threads} threads");
                assert_eq!(t1, t2, "{threads} threads");
                assert_eq!(k1.traction, k2.traction, "{threads} threads");
                assert_eq!(k1.bending, k2.bending, "{threads} threads");
                assert_eq!(k1.shear, k2.shear, "{threads} threads");
            });
        }
        // the case is not trivial: the power toe in use, angles and their stiffness non-zero
        let mut t = KesTangent::default();
        kes.add_forces_and_tangent(&x, &mut trial, &mut f, &mut t);
        let toe = (0..kes.traction.len()).any(|k| {
            let c = &kes.traction[k];
            let strain = (x[c.b as usize] - x[c.a as usize]).norm() / c.rest - 1.0;
            c.dir == super::super::WARP && strain > 0.0 && strain < 0.02
        });
        assert!(toe);
        assert!(t
            .bending
            .iter()
            .any(|b| b.k > 0.0 && b.grad[0].norm() > 0.0));
        assert!(t.shear.iter().any(|s| s.k > 0.0 && s.grad[0].norm() > 0.0));
    }

    /// A flat sheet stretched by (1 + ε_u, 1 + ε_v): no bending moment or shear force acts
    /// there, so K's left-out angle Hessians carry zero force and K is the exact −∂F/∂x.
    /// The traction friction states come from a larger stretch (unloading, away from the
    /// reversal, z ≠ 0).
    #[test]
    fn tangent_matches_differences_of_the_force() {
        let (nu, nv, h) = (5, 4, 0.01);
        let grid = Grid::new(nu, nv, h, h).unwrap();
        let mut kes = KesConnectors::new(&grid, laws());
        let place = |su: f64, sv: f64| -> Vec<Vec3> {
            (0..nu * nv)
                .map(|k| {
                    let (i, j) = grid.coords(k);
                    Vec3::new(i as f64 * h * (1.0 + su), j as f64 * h * (1.0 + sv), 0.0)
                })
                .collect()
        };
        let n = nu * nv;
        let mut trial = vec![LawState::default(); kes.state_len()];
        let mut f = vec![Vec3::zeros(); n];
        kes.add_forces(&place(0.04, 0.03), &mut trial, &mut f);
        kes.commit(&mut trial);
        let x = place(0.03, 0.012);
        let mut trial = vec![LawState::default(); kes.state_len()];
        f.fill(Vec3::zeros());
        kes.add_forces(&x, &mut trial, &mut f);
        assert!(trial[0].friction.z().abs() > 0.1, "{:?}", trial[0]);
        let mut t = KesTangent::default();
        kes.tangent(&x, &trial, &mut t);
        // a fixed direction with out-of-plane parts (bending and shear move with it)
        let v: Vec<Vec3> = (0..n)
            .map(|k| {
                let s = k as f64;
                Vec3::new((0.7 * s).sin(), (1.3 * s).cos(), (2.1 * s + 0.4).sin())
            })
            .collect();
        let mut kv = vec![Vec3::zeros(); n];
        kes.add_tangent_product(&t, &v, &mut kv);
        // bending and shear sit at their reversal (Δ = 0, z = 0), where z = sgn Δ·(1 − e^{−|Δ|/ε_f})
        // makes a central difference first order: its error falls with ε, 10× per decade
        let mut worst_of = Vec::new();
        for eps in [1e-7, 1e-8] {
            let force_at = |sign: f64| {
                let xs: Vec<Vec3> = x
                    .iter()
                    .zip(&v)
                    .map(|(p, d)| p + d * (sign * eps))
                    .collect();
                let mut tr = vec![LawState::default(); kes.state_len()];
                let mut fs = vec![Vec3::zeros(); n];
                kes.add_forces(&xs, &mut tr, &mut fs);
                fs
            };
            let (fp, fm) = (force_at(1.0), force_at(-1.0));
            let scale = kv.iter().map(|p| p.norm()).fold(0.0, f64::max);
            let mut worst = 0.0f64;
            for k in 0..n {
                let fd = -(fp[k] - fm[k]) / (2.0 * eps);
                worst = worst.max((fd - kv[k]).norm() / scale);
            }
            worst_of.push(worst);
        }
        assert!(worst_of[1] < 1e-5, "{worst_of:?}");
        assert!(worst_of[1] < 0.2 * worst_of[0], "{worst_of:?}");
        let scale = kv.iter().map(|p| p.norm()).fold(0.0, f64::max);
        // K's blocks: the diagonal and the couplings along lines give the same product
        let mut diag = vec![Mat3::zeros(); n];
        let mut edges = Vec::new();
        kes.tangent_blocks(&t, &mut diag, |a, b, m| edges.push((a, b, m)));
        for k in 0..n {
            let mut y = diag[k] * v[k];
            for &(a, b, m) in &edges {
                if a == k {
                    y -= m * v[b];
                } else if b == k {
                    y -= m.transpose() * v[a];
                }
            }
            let mut kv_traction = vec![Vec3::zeros(); n];
            let only = KesTangent {
                traction: t.traction.clone(),
                ..KesTangent::default()
            };
            kes.add_tangent_product(&only, &v, &mut kv_traction);
            // the blocks hold the traction part whole, the bending and shear diagonal, and the
            // shear couplings of each cell's sides: k·∇θ_a∇θ_bᵀ (not its diagonals')
            let mut rest = diag[k] * 0.0;
            let mut sides = Vec3::zeros();
            for (c, bf) in kes.bending.iter().zip(&t.bending) {
                let (g, kb) = (bending_gradient(&bf.grad), &bf.k);
                for (&i, gi) in [c.a, c.c, c.b, c.e_plus, c.e_minus].iter().zip(&g) {
                    if i as usize == k {
                        rest += gi * gi.transpose() * *kb;
                    }
                }
            }
            for (c, sf) in kes.shear.iter().zip(&t.shear) {
                let (g, ks) = (shear_gradient(&sf.grad), &sf.k);
                for (&i, gi) in c.p.iter().zip(&g) {
                    if i as usize == k {
                        rest += gi * gi.transpose() * *ks;
                    }
                }
                let [p00, p10, p01, p11] = c.p.map(|i| i as usize);
                for (a, b, ga, gb) in [
                    (p00, p10, g[0], g[1]),
                    (p01, p11, g[2], g[3]),
                    (p00, p01, g[0], g[2]),
                    (p10, p11, g[1], g[3]),
                ] {
                    if a == k {
                        sides += ga * gb.dot(&v[b]) * *ks;
                    } else if b == k {
                        sides += gb * ga.dot(&v[a]) * *ks;
                    }
                }
            }
            let expect = kv_traction[k] + rest * v[k] + sides;
            assert!((y - expect).norm() < 1e-9 * scale, "{k}");
        }
    }
}
