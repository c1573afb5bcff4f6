//! Driving a law along a strain path: sampled paths with reversals, and the elastic and
//! friction parts F = F_el + F_fr along them.

use super::{LawState, MaterialLaw};

/// A strain path to drive a law along: full cycles, decaying amplitudes, or partial reversals
/// that draw minor loops. `amplitude` in the law's strain unit; `per_stroke` samples per
/// full-amplitude stroke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrivingPath {
    FullCycles,
    Decaying,
    PartialReversals,
}

impl DrivingPath {
    pub fn name(self) -> &'static str {
        match self {
            DrivingPath::FullCycles => "full cycles",
            DrivingPath::Decaying => "decaying amplitudes",
            DrivingPath::PartialReversals => "partial reversals (minor loops)",
        }
    }

    /// Reversal points of the path, from 0, as fractions of the amplitude.
    fn reversals(self, one_sided: bool) -> Vec<f64> {
        let r: Vec<f64> = match self {
            DrivingPath::FullCycles => vec![1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0],
            DrivingPath::Decaying => vec![1.0, -0.8, 0.64, -0.51, 0.41, -0.33, 0.26, -0.21, 0.0],
            DrivingPath::PartialReversals => {
                vec![1.0, 0.4, 0.8, 0.2, 0.6, -1.0, -0.4, -0.8, 1.0, 0.0]
            }
        };
        if one_sided {
            // traction carries no compression: drive it over [0, A]
            r.into_iter().map(|v| 0.5 * (v + 1.0)).collect()
        } else {
            r
        }
    }

    /// The sampled path, linear between reversal points.
    pub fn samples(self, amplitude: f64, per_stroke: usize, one_sided: bool) -> Vec<f64> {
        let mut out = vec![0.0];
        let mut x0 = 0.0;
        for r in self.reversals(one_sided) {
            let target = r * amplitude;
            let n = ((per_stroke as f64) * ((target - x0).abs() / amplitude.abs().max(1e-300)))
                .ceil()
                .max(1.0) as usize;
            for k in 1..=n {
                out.push(x0 + (target - x0) * k as f64 / n as f64);
            }
            x0 = target;
        }
        out
    }
}

/// Drives a virgin law along `path`; `at(k, state, x, force)` gives the value of sample k.
pub(super) fn along<L: MaterialLaw + ?Sized, T>(
    law: &L,
    path: &[f64],
    mut at: impl FnMut(usize, &LawState, f64, f64) -> T,
) -> Vec<T> {
    let mut state = LawState::default();
    path.iter()
        .enumerate()
        .map(|(k, &x)| {
            let (next, f) = law.trial(&state, x);
            state = next;
            at(k, &state, x, f)
        })
        .collect()
}

/// Drives a virgin law along `path` and returns (total, elastic, friction) at each sample.
pub fn drive_parts(law: &impl MaterialLaw, path: &[f64]) -> Vec<(f64, f64, f64)> {
    along(law, path, |_, state, x, f| {
        let el = law.elastic(state, x);
        (f, el, f - el)
    })
}

/// A measured curve's friction part: `total − offset − F_el` along the path, with the law's
/// state driven along it (traction's toe depends on whether ε₁ was reached).
pub fn friction_part<L: MaterialLaw>(law: &L, x: &[f64], total: &[f64], offset: f64) -> Vec<f64> {
    let n = x.len().min(total.len());
    along(law, &x[..n], |k, state, xi, _| {
        total[k] - offset - law.elastic(state, xi)
    })
}

/// The law's own friction force along the path, from a virgin state.
pub fn law_friction<L: MaterialLaw>(law: &L, x: &[f64]) -> Vec<f64> {
    along(law, x, |_, state, _, _| law.friction_force(state))
}
