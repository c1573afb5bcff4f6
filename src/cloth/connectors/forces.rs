//! One evaluation of every connector force, F_k = Σ connector forces at x with the laws moved
//! from their committed states [N]: serially, or in one band of connectors per rayon thread.

use rayon::prelude::*;

use crate::material::LawState;

use super::{KesConnectors, Vec3};

/// Connectors from which a force evaluation is split over rayon's threads (a 30 × 30 grid has
/// about 4 400): below, a thread's share costs less than handing it out.
pub(super) const PARALLEL_CONNECTORS: usize = 4096;

/// Index ranges of one band of connectors per kind.
#[derive(Debug, Clone)]
pub(super) struct Band {
    pub(super) traction: std::ops::Range<usize>,
    pub(super) bending: std::ops::Range<usize>,
    pub(super) shear: std::ops::Range<usize>,
}

impl KesConnectors {
    /// Adds every connector force at positions `x` to `f`, with each law moved from its
    /// committed state to the strain at `x`; the trial states are written to `trial`. On more
    /// than one rayon thread a large grid is split in one band of connectors per thread, each
    /// summing into its own force buffer (the sums then differ from one thread's by round-off).
    pub(crate) fn add_forces(&self, x: &[Vec3], trial: &mut [LawState], f: &mut [Vec3]) {
        let threads = rayon::current_num_threads();
        let (nt, nb) = (self.traction.len(), self.bending.len());
        let (mut tt, rest) = trial.split_at_mut(nt);
        let (mut tb, mut ts) = rest.split_at_mut(nb);
        if threads < 2 || self.len() < PARALLEL_CONNECTORS {
            self.add_band_forces(&self.band(0, 1), x, [tt, tb, ts], f);
            return;
        }
        let mut bands = Vec::with_capacity(threads);
        for t in 0..threads {
            let band = self.band(t, threads);
            let (t0, t1) = std::mem::take(&mut tt).split_at_mut(band.traction.len());
            let (b0, b1) = std::mem::take(&mut tb).split_at_mut(band.bending.len());
            let (s0, s1) = std::mem::take(&mut ts).split_at_mut(2 * band.shear.len());
            (tt, tb, ts) = (t1, b1, s1);
            bands.push((band, [t0, b0, s0]));
        }
        let n = x.len();
        // collected in band order and summed in that order: the same round-off on every run
        let parts: Vec<Vec<Vec3>> = bands
            .into_par_iter()
            .map(|(band, trial)| {
                let mut fb = vec![Vec3::zeros(); n];
                self.add_band_forces(&band, x, trial, &mut fb);
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
    /// traction, bending and shear states (two per shear cell).
    #[inline]
    fn add_band_forces(
        &self,
        band: &Band,
        x: &[Vec3],
        [tt, tb, ts]: [&mut [LawState]; 3],
        f: &mut [Vec3],
    ) {
        let states = &self.states;
        let nt = self.traction.len();
        let nb = self.bending.len();
        for ((k, c), out) in band
            .traction
            .clone()
            .zip(&self.traction[band.traction.clone()])
            .zip(tt)
        {
            let (st, fv) = self.traction_force(c, x, &states[k]);
            *out = st;
            f[c.a as usize] += fv;
            f[c.b as usize] -= fv;
        }
        for ((k, c), out) in band
            .bending
            .clone()
            .zip(&self.bending[band.bending.clone()])
            .zip(tb)
        {
            let (st, fs) = self.bending_force(c, x, &states[nt + k]);
            *out = st;
            for (p, fv) in [c.a, c.c, c.b, c.e_plus, c.e_minus].into_iter().zip(fs) {
                f[p as usize] += fv;
            }
        }
        let base = nt + nb;
        for ((k, c), out) in band
            .shear
            .clone()
            .zip(&self.shear[band.shear.clone()])
            .zip(ts.chunks_exact_mut(2))
        {
            let s = base + 2 * k;
            let (st, fs) = self.shear_force(c, x, [&states[s], &states[s + 1]]);
            out.copy_from_slice(&st);
            for (p, fv) in c.p.into_iter().zip(fs) {
                f[p as usize] += fv;
            }
        }
    }
}
