//! One evaluation of every connector force, F_k = Σ connector forces at x with the laws moved
//! from their committed states [N]: serially, or in one band of connectors per rayon thread;
//! on request with the tangent's factors at x from the same pass.

use rayon::prelude::*;

use crate::material::LawState;

#[cfg(target_arch = "x86_64")]
use super::lanes::LanesPass;
use super::tangent::{BendingFactor, KesTangent, ShearFactor, TractionFactor};
use super::{KesConnectors, Vec3};

/// Connectors from which a force evaluation is split over rayon's threads (a 30 × 30 grid has
/// about 4 400): below, a thread's share costs less than handing it out.
pub(super) const PARALLEL_CONNECTORS: usize = 4096;

/// The trial state and force of a law, inlined into the force kernels.
pub(super) use crate::material::trial_of as trial;

/// How the connector forces are evaluated: one connector at a time, or four at a time in
/// vector lanes (the same numbers; AVX2 on x86-64 processors that have it, else one at a
/// time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ForceKernel {
    /// One connector at a time (the reference).
    Scalar,
    /// Four connectors of a kind at a time.
    #[default]
    Lanes,
}

/// Index ranges of one band of connectors per kind.
#[derive(Debug, Clone)]
pub(super) struct Band {
    pub(super) traction: std::ops::Range<usize>,
    pub(super) bending: std::ops::Range<usize>,
    pub(super) shear: std::ops::Range<usize>,
}

/// Where a band's force evaluation writes K's factors: nowhere, or the band's slices.
pub(super) type FactorSlices<'a> = Option<(
    &'a mut [TractionFactor],
    &'a mut [BendingFactor],
    &'a mut [ShearFactor],
)>;

impl KesConnectors {
    /// Adds every connector force at positions `x` to `f`, with each law moved from its
    /// committed state to the strain at `x`; the trial states are written to `trial`. On more
    /// than one rayon thread a large grid is split in one band of connectors per thread, each
    /// summing into its own force buffer (the sums then differ from one thread's by round-off).
    pub(crate) fn add_forces(&self, x: &[Vec3], trial: &mut [LawState], f: &mut [Vec3]) {
        self.add_forces_into(x, trial, f, None);
    }

    /// `add_forces`, and K's factors at `x` into `t` from the same pass (the geometry, trial
    /// states and elastic forces it computes anyway): the numbers of `tangent(x, trial)`.
    pub(crate) fn add_forces_and_tangent(
        &self,
        x: &[Vec3],
        trial: &mut [LawState],
        f: &mut [Vec3],
        t: &mut KesTangent,
    ) {
        t.resize_for(self);
        self.add_forces_into(x, trial, f, Some(t));
    }

    /// `add_forces`, and K's factors into `t` (sized for these connectors) when given.
    fn add_forces_into(
        &self,
        x: &[Vec3],
        trial: &mut [LawState],
        f: &mut [Vec3],
        t: Option<&mut KesTangent>,
    ) {
        let threads = rayon::current_num_threads();
        let (nt, nb) = (self.traction.len(), self.bending.len());
        let (mut tt, rest) = trial.split_at_mut(nt);
        let (mut tb, mut ts) = rest.split_at_mut(nb);
        let mut factors: FactorSlices<'_> =
            t.map(|t| (&mut t.traction[..], &mut t.bending[..], &mut t.shear[..]));
        if threads < 2 || self.len() < PARALLEL_CONNECTORS {
            let band = self.band(0, 1);
            match factors {
                Some(out) => self.add_band_forces::<true>(&band, x, [tt, tb, ts], f, Some(out)),
                None => self.add_band_forces::<false>(&band, x, [tt, tb, ts], f, None),
            }
            return;
        }
        let mut bands = Vec::with_capacity(threads);
        for t in 0..threads {
            let band = self.band(t, threads);
            let (t0, t1) = std::mem::take(&mut tt).split_at_mut(band.traction.len());
            let (b0, b1) = std::mem::take(&mut tb).split_at_mut(band.bending.len());
            let (s0, s1) = std::mem::take(&mut ts).split_at_mut(2 * band.shear.len());
            (tt, tb, ts) = (t1, b1, s1);
            let out = factors.as_mut().map(|(ft, fb, fs)| {
                let (t0, t1) = std::mem::take(ft).split_at_mut(band.traction.len());
                let (b0, b1) = std::mem::take(fb).split_at_mut(band.bending.len());
                let (s0, s1) = std::mem::take(fs).split_at_mut(band.shear.len());
                (*ft, *fb, *fs) = (t1, b1, s1);
                (t0, b0, s0)
            });
            bands.push((band, [t0, b0, s0], out));
        }
        let n = x.len();
        // collected in band order and summed in that order: the same round-off on every run
        let parts: Vec<Vec<Vec3>> = bands
            .into_par_iter()
            .map(|(band, trial, out)| {
                let mut fb = vec![Vec3::zeros(); n];
                match out {
                    Some(out) => self.add_band_forces::<true>(&band, x, trial, &mut fb, Some(out)),
                    None => self.add_band_forces::<false>(&band, x, trial, &mut fb, None),
                }
                fb
            })
            .collect();
        for part in &parts {
            f.iter_mut().zip(part).for_each(|(f, p)| *f += p);
        }
    }

    /// Band `t` of `of`: the t-th of `of` near-equal slices of each connector kind, in the
    /// order of the states (traction, bending, shear).
    pub(super) fn band(&self, t: usize, of: usize) -> Band {
        let part = |len: usize| (len * t / of)..(len * (t + 1) / of);
        Band {
            traction: part(self.traction.len()),
            bending: part(self.bending.len()),
            shear: part(self.shear.len()),
        }
    }

    /// The forces of the connectors of `band` added to `f`; `trial` holds the band's
    /// traction, bending and shear states (two per shear cell). With `TANGENT`, K's factors
    /// of the band are written to `out` (its slices, of the band's lengths) as well.
    #[inline]
    fn add_band_forces<const TANGENT: bool>(
        &self,
        band: &Band,
        x: &[Vec3],
        [tt, tb, ts]: [&mut [LawState]; 3],
        f: &mut [Vec3],
        out: FactorSlices<'_>,
    ) {
        let (tan_t, tan_b, tan_s) = out.unwrap_or_default();
        // x and f of one length: an index checked against x needs no second check against f
        let n = x.len().min(f.len());
        let (x, f) = (&x[..n], &mut f[..n]);
        let states = &self.states;
        let nt = self.traction.len();
        let nb = self.bending.len();
        let traction = &self.traction[band.traction.clone()];
        #[cfg(target_arch = "x86_64")]
        if self.kernel == ForceKernel::Lanes {
            let pass = LanesPass::<TANGENT> {
                kes: self,
                band,
                x,
                trial: [tt, tb, ts],
                f,
                out: (tan_t, tan_b, tan_s),
            };
            if pass.run() {
                return;
            }
        }
        for (n, (c, out)) in traction.iter().zip(tt).enumerate() {
            let (st, fv, factor) =
                self.traction_force::<TANGENT>(c, x, &states[band.traction.start + n]);
            if let Some(factor) = factor {
                tan_t[n] = factor;
            }
            *out = st;
            f[c.a as usize] += fv;
            f[c.b as usize] -= fv;
        }
        let bending = &self.bending[band.bending.clone()];
        for (n, (c, out)) in bending.iter().zip(tb).enumerate() {
            let (st, fs, factor) =
                self.bending_force::<TANGENT>(c, x, &states[nt + band.bending.start + n]);
            if let Some(factor) = factor {
                tan_b[n] = factor;
            }
            *out = st;
            for (p, fv) in [c.a, c.c, c.b, c.e_plus, c.e_minus].into_iter().zip(fs) {
                f[p as usize] += fv;
            }
        }
        let base = nt + nb;
        let shear = &self.shear[band.shear.clone()];
        for (n, (c, out)) in shear.iter().zip(ts.chunks_exact_mut(2)).enumerate() {
            let s = base + 2 * (band.shear.start + n);
            let (st, fs, factor) = self.shear_force::<TANGENT>(c, x, [&states[s], &states[s + 1]]);
            if let Some(factor) = factor {
                tan_s[n] = factor;
            }
            out.copy_from_slice(&st);
            for (p, fv) in c.p.into_iter().zip(fs) {
                f[p as usize] += fv;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::connectors::tangent::tests::laws;
    use crate::material::{MaterialLaw, ToeShape};

    /// The inlined trial gives `MaterialLaw::trial`'s state and force bit for bit, for every
    /// law of a sheet (both toes), from virgin and loaded states, up and down, across ε₁.
    #[test]
    fn inlined_trial_is_the_laws_trial() {
        fn check<L: MaterialLaw>(law: &L, strains: &[f64]) {
            let mut state = LawState::default();
            for &e in strains {
                assert_eq!(trial(law, &state, e), law.trial(&state, e), "{e}");
                state = law.trial(&state, e).0;
            }
        }
        let mut l = laws();
        l.traction[1].toe = ToeShape::Power;
        let path = [0.0, 0.004, 0.015, 0.03, 0.012, -0.002, 0.0, 0.025, 0.025];
        for law in &l.traction {
            check(law, &path);
        }
        let angles = path.map(|e| 20.0 * e - 0.1);
        for law in &l.bending {
            check(law, &angles);
        }
        for law in &l.shear {
            check(law, &angles);
        }
    }
}
