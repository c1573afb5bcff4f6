//! The connectors' tangent stiffness K = −∂F/∂x [N/m] at x with the laws' trial states, kept
//! per connector (matrix-free): traction w·[τ/h·d̂d̂ᵀ + max(F, 0)/l·(I − d̂d̂ᵀ)], bending
//! w·τ_b/h·∇φ∇φᵀ, shear A·½(τ_w + τ_f)·∇θ∇θᵀ (τ = dF/dstrain ≥ 0, the law's tangent with
//! its friction; the angles' second derivatives are left out, the Gauss–Newton part).

use crate::material::{LawState, MaterialLaw};

use super::{shear_angle, turning_angle, KesConnectors, Mat3, Vec3};

/// Per-connector factors of K at one x.
#[derive(Debug, Default, Clone)]
pub(crate) struct KesTangent {
    /// Traction: unit direction d̂, axial w·τ/h and lateral w·max(F, 0)/l [N/m].
    traction: Vec<(Vec3, f64, f64)>,
    /// Bending: ∇φ at p_a, p_c, p_b, p_{e+}, p_{e−} [1/m] and w·τ_b/h [N·m].
    bending: Vec<([Vec3; 5], f64)>,
    /// Shear: ∇θ at the four corners [1/m] and A·½(τ_w + τ_f) [N·m/rad].
    shear: Vec<([Vec3; 4], f64)>,
}

impl KesConnectors {
    /// K's factors at `x`, each law's tangent taken at its trial state in `trial` (the states
    /// `add_forces` wrote for the same x).
    pub(crate) fn tangent(&self, x: &[Vec3], trial: &[LawState], out: &mut KesTangent) {
        let (nt, nb) = (self.traction.len(), self.bending.len());
        out.traction.clear();
        for (k, c) in self.traction.iter().enumerate() {
            let d = x[c.b as usize] - x[c.a as usize];
            let l = d.norm();
            let law = &self.laws.traction[c.dir as usize];
            let strain = l / c.rest - 1.0;
            let next = &trial[k];
            let tau = law.tangent(&self.states[k], next, strain).max(0.0);
            let force = law.force(next);
            let (dir, lateral) = if l > 0.0 {
                (d / l, c.width * force.max(0.0) / l)
            } else {
                (Vec3::zeros(), 0.0)
            };
            out.traction.push((dir, c.width * tau / c.rest, lateral));
        }
        out.bending.clear();
        for (k, c) in self.bending.iter().enumerate() {
            let (ep, em) = (x[c.e_plus as usize], x[c.e_minus as usize]);
            let (phi, d_ra, d_rb, d_e) =
                turning_angle(x[c.a as usize], x[c.c as usize], x[c.b as usize], ep - em);
            let law = &self.laws.bending[c.dir as usize];
            let tau = law
                .tangent(&self.states[nt + k], &trial[nt + k], phi / c.rest)
                .max(0.0);
            out.bending.push((
                [-d_ra, d_ra - d_rb, d_rb, d_e, -d_e],
                c.width * tau / c.rest,
            ));
        }
        out.shear.clear();
        let base = nt + nb;
        for (k, c) in self.shear.iter().enumerate() {
            let (theta, d_tw, d_tf) = shear_angle(c.p.map(|i| x[i as usize]));
            let s = base + 2 * k;
            let tau: f64 = (0..2)
                .map(|d| self.laws.shear[d].tangent(&self.states[s + d], &trial[s + d], theta))
                .sum();
            let g = [
                -(d_tw + d_tf) * 0.5,
                (d_tw - d_tf) * 0.5,
                (d_tf - d_tw) * 0.5,
                (d_tw + d_tf) * 0.5,
            ];
            out.shear.push((g, c.area * 0.5 * tau.max(0.0)));
        }
    }

    /// y += K·v with K's factors `t`.
    pub(crate) fn add_tangent_product(&self, t: &KesTangent, v: &[Vec3], y: &mut [Vec3]) {
        for (c, &(dir, axial, lateral)) in self.traction.iter().zip(&t.traction) {
            let (a, b) = (c.a as usize, c.b as usize);
            let u = v[b] - v[a];
            let along = dir.dot(&u);
            let f = dir * (along * (axial - lateral)) + u * lateral;
            y[a] -= f;
            y[b] += f;
        }
        for (c, (g, k)) in self.bending.iter().zip(&t.bending) {
            let p = [c.a, c.c, c.b, c.e_plus, c.e_minus];
            let s: f64 = p.iter().zip(g).map(|(&i, gi)| gi.dot(&v[i as usize])).sum();
            for (&i, gi) in p.iter().zip(g) {
                y[i as usize] += gi * (k * s);
            }
        }
        for (c, (g, k)) in self.shear.iter().zip(&t.shear) {
            let s: f64 = c.p.iter().zip(g).map(|(&i, gi)| gi.dot(&v[i as usize])).sum();
            for (&i, gi) in c.p.iter().zip(g) {
                y[i as usize] += gi * (k * s);
            }
        }
    }

    /// K's diagonal blocks added to `diag`, and its traction couplings −K_ab passed to
    /// `edge(a, b, K_aa)` (the blocks a line preconditioner keeps).
    pub(crate) fn tangent_blocks(
        &self,
        t: &KesTangent,
        diag: &mut [Mat3],
        mut edge: impl FnMut(usize, usize, Mat3),
    ) {
        for (c, &(dir, axial, lateral)) in self.traction.iter().zip(&t.traction) {
            let blk = dir * dir.transpose() * (axial - lateral) + Mat3::identity() * lateral;
            diag[c.a as usize] += blk;
            diag[c.b as usize] += blk;
            edge(c.a as usize, c.b as usize, blk);
        }
        for (c, (g, k)) in self.bending.iter().zip(&t.bending) {
            for (&i, gi) in [c.a, c.c, c.b, c.e_plus, c.e_minus].iter().zip(g) {
                diag[i as usize] += gi * gi.transpose() * *k;
            }
        }
        for (c, (g, k)) in self.shear.iter().zip(&t.shear) {
            for (&i, gi) in c.p.iter().zip(g) {
                diag[i as usize] += gi * gi.transpose() * *k;
            }
        }
    }
}
