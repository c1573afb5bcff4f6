//! The force kernel four connectors at a time: each kind's geometry (strain, turning angle,
//! shear angle and their gradients) and its forces computed in lanes of four (one AVX2 register
//! per quantity), the particles gathered per lane group and the forces scattered in connector
//! order. The laws' trials, atan2 and asin stay per lane and
//! every lane runs the scalar kernel's operations in its order, so forces, trial states and
//! tangent factors are the scalar kernel's bit for bit.

use crate::material::LawState;

use super::forces::{trial, Band};
use super::tangent::{
    bending_factor, shear_factor, traction_factor, trial_and_tangent, BendingFactor, ShearFactor,
    TractionFactor,
};
use super::{Bending, KesConnectors, Shear, Traction, Vec3};

mod vector;

use vector::{either, field, index, Simd, L, N, V};

/// One band's force pass by the lanes kernel, compiled for AVX2 (x86-64 processors that have
/// it, found at run time); the scalar kernel's pass elsewhere.
pub(super) struct LanesPass<'a, const TANGENT: bool> {
    pub(super) kes: &'a KesConnectors,
    pub(super) band: &'a Band,
    pub(super) x: &'a [Vec3],
    /// The band's traction, bending and shear trial states.
    pub(super) trial: [&'a mut [LawState]; 3],
    pub(super) f: &'a mut [Vec3],
    pub(super) out: (
        &'a mut [TractionFactor],
        &'a mut [BendingFactor],
        &'a mut [ShearFactor],
    ),
}

impl<const TANGENT: bool> LanesPass<'_, TANGENT> {
    /// Runs the pass: in AVX2 lanes where the processor has them, else false (nothing done).
    pub(super) fn run(self) -> bool {
        match Simd::try_new() {
            Some(simd) => {
                pulp::Simd::vectorize(simd, Pass { pass: self, simd });
                true
            }
            None => false,
        }
    }
}

/// A pass with its instruction set.
struct Pass<'a, const TANGENT: bool> {
    pass: LanesPass<'a, TANGENT>,
    simd: Simd,
}

impl<const TANGENT: bool> pulp::WithSimd for Pass<'_, TANGENT> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Pass { pass, simd } = self;
        let LanesPass {
            kes,
            band,
            x,
            trial: [tt, tb, ts],
            f,
            out: (tan_t, tan_b, tan_s),
        } = pass;
        let (nt, nb) = (kes.traction.len(), kes.bending.len());
        let (t, b, s) = (&band.traction, &band.bending, &band.shear);
        let states = &kes.states;
        let traction = &kes.traction[t.clone()];
        kes.traction_lanes::<TANGENT>(simd, (traction, &states[t.clone()]), x, tt, f, tan_t);
        let bending = &kes.bending[b.clone()];
        let st = &states[nt + b.start..nt + b.end];
        kes.bending_lanes::<TANGENT>(simd, (bending, st), x, tb, f, tan_b);
        let st = &states[nt + nb + 2 * s.start..nt + nb + 2 * s.end];
        kes.shear_lanes::<TANGENT>(simd, (&kes.shear[s.clone()], st), x, ts, f, tan_s);
    }
}

impl KesConnectors {
    /// `add_band_forces`' traction loop, four connectors at a time (a last group of fewer
    /// by the scalar kernel): `cs` the band's connectors, `states` their committed states.
    #[inline(always)]
    fn traction_lanes<const TANGENT: bool>(
        &self,
        simd: Simd,
        (cs, states): (&[Traction], &[LawState]),
        x: &[Vec3],
        trial_out: &mut [LawState],
        f: &mut [Vec3],
        tan: &mut [TractionFactor],
    ) {
        let groups = cs.len() / N;
        for g in 0..groups {
            let r = g * N..(g + 1) * N;
            let c = &cs[r.clone()];
            let d = V::gather(simd, x, index(c, |c| c.b)) - V::gather(simd, x, index(c, |c| c.a));
            let l = d.norm();
            let strain = l.div(field(simd, c, |c| c.rest)) - L::splat(simd, 1.0);
            let (strain, ls) = (strain.lanes(), l.lanes());
            let ds = if TANGENT {
                d.lanes()
            } else {
                [Vec3::zeros(); N]
            };
            let mut force = [0.0; N];
            for i in 0..N {
                let law = &self.laws.traction[c[i].dir as usize];
                let state = &states[r.start + i];
                let st = if TANGENT {
                    let (st, fi, tau) = trial_and_tangent(law, state, strain[i]);
                    if let Some(t) = tan.get_mut(r.start + i) {
                        *t = traction_factor(&c[i], ds[i], ls[i], fi, tau);
                    }
                    force[i] = fi;
                    st
                } else {
                    let (st, fi) = trial(law, state, strain[i]);
                    force[i] = fi;
                    st
                };
                if let Some(out) = trial_out.get_mut(r.start + i) {
                    *out = st;
                }
            }
            let s = (field(simd, c, |c| c.width) * L::new(simd, force)).div(l);
            let fv = d.scale(s).or_zero(l.gt(0.0)).lanes();
            for (c, v) in c.iter().zip(fv) {
                f[c.a as usize] += v;
                f[c.b as usize] -= v;
            }
        }
        for (n, c) in cs.iter().enumerate().skip(groups * N) {
            let (st, fv, factor) = self.traction_force::<TANGENT>(c, x, &states[n]);
            if let (Some(factor), Some(t)) = (factor, tan.get_mut(n)) {
                *t = factor;
            }
            if let Some(out) = trial_out.get_mut(n) {
                *out = st;
            }
            f[c.a as usize] += fv;
            f[c.b as usize] -= fv;
        }
    }

    /// `add_band_forces`' bending loop, four connectors at a time.
    #[inline(always)]
    fn bending_lanes<const TANGENT: bool>(
        &self,
        simd: Simd,
        (cs, states): (&[Bending], &[LawState]),
        x: &[Vec3],
        trial_out: &mut [LawState],
        f: &mut [Vec3],
        tan: &mut [BendingFactor],
    ) {
        let groups = cs.len() / N;
        let one = L::splat(simd, 1.0);
        for g in 0..groups {
            let r = g * N..(g + 1) * N;
            let c = &cs[r.clone()];
            let gather = |p: fn(&Bending) -> u32| V::gather(simd, x, index(c, p));
            let (xa, xc, xb) = (gather(|c| c.a), gather(|c| c.c), gather(|c| c.b));
            let e = gather(|c| c.e_plus) - gather(|c| c.e_minus);
            // turning_angle, lane by lane
            let ra = xc - xa;
            let rb = xb - xc;
            let le = e.norm();
            let inv_le = one.div(le).or(le.gt(0.0), 0.0);
            let eh = e.scale(inv_le);
            let rab = ra.cross(rb);
            let y = rab.dot(eh);
            let xx = ra.dot(rb);
            let den = xx * xx + y * y;
            let drop = either(simd, den.eq(0.0), le.eq(0.0));
            let phi = y.zip(xx, f64::atan2).unless(drop, 0.0);
            let inv = one.div(den);
            let d_ra = (rb.cross(eh).scale(xx) - rb.scale(y))
                .scale(inv)
                .unless(drop);
            let d_rb = (eh.cross(ra).scale(xx) - ra.scale(y))
                .scale(inv)
                .unless(drop);
            let d_e = (rab - eh.scale(rab.dot(eh)))
                .scale(xx * inv * inv_le)
                .unless(drop);
            let curvature = phi.div(field(simd, c, |c| c.rest)).lanes();
            let grads = if TANGENT {
                [d_ra.lanes(), d_rb.lanes(), d_e.lanes()]
            } else {
                [[Vec3::zeros(); N]; 3]
            };
            let mut moment = [0.0; N];
            for i in 0..N {
                let law = &self.laws.bending[c[i].dir as usize];
                let state = &states[r.start + i];
                let st = if TANGENT {
                    let (st, m, tau) = trial_and_tangent(law, state, curvature[i]);
                    if let Some(t) = tan.get_mut(r.start + i) {
                        let grad = [grads[0][i], grads[1][i], grads[2][i]];
                        *t = bending_factor(&c[i], grad, tau);
                    }
                    moment[i] = m;
                    st
                } else {
                    let (st, m) = trial(law, state, curvature[i]);
                    moment[i] = m;
                    st
                };
                if let Some(out) = trial_out.get_mut(r.start + i) {
                    *out = st;
                }
            }
            let q = -field(simd, c, |c| c.width) * L::new(simd, moment);
            let forces = [
                (-d_ra).scale(q).lanes(),
                (d_ra - d_rb).scale(q).lanes(),
                d_rb.scale(q).lanes(),
                d_e.scale(q).lanes(),
                (-d_e).scale(q).lanes(),
            ];
            for (i, c) in c.iter().enumerate() {
                let p = [c.a, c.c, c.b, c.e_plus, c.e_minus];
                for (p, fv) in p.into_iter().zip(&forces) {
                    f[p as usize] += fv[i];
                }
            }
        }
        for (n, c) in cs.iter().enumerate().skip(groups * N) {
            let (st, fs, factor) = self.bending_force::<TANGENT>(c, x, &states[n]);
            if let (Some(factor), Some(t)) = (factor, tan.get_mut(n)) {
                *t = factor;
            }
            if let Some(out) = trial_out.get_mut(n) {
                *out = st;
            }
            for (p, fv) in [c.a, c.c, c.b, c.e_plus, c.e_minus].into_iter().zip(fs) {
                f[p as usize] += fv;
            }
        }
    }

    /// `add_band_forces`' shear loop, four cells at a time; `states` and `trial_out` hold two
    /// states per cell (warp, weft).
    #[inline(always)]
    fn shear_lanes<const TANGENT: bool>(
        &self,
        simd: Simd,
        (cs, states): (&[Shear], &[LawState]),
        x: &[Vec3],
        trial_out: &mut [LawState],
        f: &mut [Vec3],
        tan: &mut [ShearFactor],
    ) {
        let groups = cs.len() / N;
        let [warp, weft] = &self.laws.shear;
        let (one, half) = (L::splat(simd, 1.0), L::splat(simd, 0.5));
        for g in 0..groups {
            let r = g * N..(g + 1) * N;
            let c = &cs[r.clone()];
            let corner = |k: usize| V::gather(simd, x, index(c, |c| c.p[k]));
            let p = [corner(0), corner(1), corner(2), corner(3)];
            // shear_angle, lane by lane
            let tw = (p[1] - p[0] + p[3] - p[2]).scale(half);
            let tf = (p[2] - p[0] + p[3] - p[1]).scale(half);
            let (lw, lf) = (tw.norm(), tf.norm());
            let drop = either(simd, lw.eq(0.0), lf.eq(0.0));
            let (inv_lw, inv_lf) = (one.div(lw), one.div(lf));
            let (uw, uf) = (tw.scale(inv_lw), tf.scale(inv_lf));
            let cos = uw.dot(uf).clamp(-1.0, 1.0);
            let inv_s = one.div((one - cos * cos).sqrt().max(1e-12));
            let theta = cos.map(f64::asin).unless(drop, 0.0).lanes();
            let d_tw = (uf - uw.scale(cos)).scale(inv_lw * inv_s).unless(drop);
            let d_tf = (uw - uf.scale(cos)).scale(inv_lf * inv_s).unless(drop);
            let grads = if TANGENT {
                [d_tw.lanes(), d_tf.lanes()]
            } else {
                [[Vec3::zeros(); N]; 2]
            };
            let mut sum = [0.0; N];
            for i in 0..N {
                let s = 2 * (r.start + i);
                let (sw, sf) = (&states[s], &states[s + 1]);
                let (stw, stf) = if TANGENT {
                    let (stw, fw, tw) = trial_and_tangent(warp, sw, theta[i]);
                    let (stf, ff, tf) = trial_and_tangent(weft, sf, theta[i]);
                    if let Some(t) = tan.get_mut(r.start + i) {
                        *t = shear_factor(&c[i], [grads[0][i], grads[1][i]], tw + tf);
                    }
                    sum[i] = fw + ff;
                    (stw, stf)
                } else {
                    let (stw, fw) = trial(warp, sw, theta[i]);
                    let (stf, ff) = trial(weft, sf, theta[i]);
                    sum[i] = fw + ff;
                    (stw, stf)
                };
                if let Some(out) = trial_out.get_mut(s..s + 2) {
                    out.copy_from_slice(&[stw, stf]);
                }
            }
            let q = -field(simd, c, |c| c.area) * half * L::new(simd, sum);
            let hq = half * q;
            let (hw, hf) = (d_tw.scale(hq), d_tf.scale(hq));
            let forces = [
                (-(hw + hf)).lanes(),
                (hw - hf).lanes(),
                (hf - hw).lanes(),
                (hw + hf).lanes(),
            ];
            for (i, c) in c.iter().enumerate() {
                for (p, fv) in c.p.into_iter().zip(&forces) {
                    f[p as usize] += fv[i];
                }
            }
        }
        for (n, c) in cs.iter().enumerate().skip(groups * N) {
            let s = 2 * n;
            let (st, fs, factor) = self.shear_force::<TANGENT>(c, x, [&states[s], &states[s + 1]]);
            if let (Some(factor), Some(t)) = (factor, tan.get_mut(n)) {
                *t = factor;
            }
            if let Some(out) = trial_out.get_mut(s..s + 2) {
                out.copy_from_slice(&st);
            }
            for (p, fv) in c.p.into_iter().zip(fs) {
                f[p as usize] += fv;
            }
        }
    }
}

#[cfg(test)]
mod tests;
