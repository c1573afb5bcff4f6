//! The friction part of a curve (total minus the law's elastic part along the path) and the
//! energy dissipated per cycle, ∮y dx by trapezoids, in the curve's SI units.

use crate::fit::estimate::directions;
use crate::material::{LawState, MaterialLaw};

/// One cycle of a path: samples `first..=last`, the work ∮y dx over them, and whether the path
/// came back to the x where the cycle began (an open cycle's work is still reported: for a
/// tensile test that ends at zero force it is the loop closed along the x axis).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cycle {
    pub first: usize,
    pub last: usize,
    pub energy: f64,
    pub closed: bool,
}

/// `total − offset − F_el` along the path, with the law's state driven along it (traction's
/// toe depends on whether ε₁ was reached).
pub fn friction_part<L: MaterialLaw>(law: &L, x: &[f64], total: &[f64], offset: f64) -> Vec<f64> {
    let mut state = LawState::default();
    x.iter()
        .zip(total)
        .map(|(&xi, &yi)| {
            let (next, _) = law.trial(&state, xi);
            state = next;
            yi - offset - law.elastic(&state, xi)
        })
        .collect()
}

/// The law's own friction force along the path, from a virgin state.
pub fn law_friction<L: MaterialLaw>(law: &L, x: &[f64]) -> Vec<f64> {
    let mut state = LawState::default();
    x.iter()
        .map(|&xi| {
            let (next, _) = law.trial(&state, xi);
            state = next;
            law.friction_force(&state)
        })
        .collect()
}

/// Indices of the turning samples of a path (the extreme sample of each run of one
/// direction, dwell included), using the noise-robust [`directions`].
fn turning_points(x: &[f64], v: &[f64]) -> Vec<usize> {
    let mut turns = Vec::new();
    let mut run_start = 0;
    for i in 1..x.len() {
        if v[i] != v[i - 1] {
            let dir = v[i - 1];
            let mut best = run_start;
            for j in run_start..i {
                if dir * x[j] > dir * x[best] {
                    best = j;
                }
            }
            turns.push(best);
            run_start = best;
        }
    }
    turns
}

/// The work ∮y dx per cycle. A cycle ends where the path returns to its start moving in its
/// first direction (after two reversals: 0 → +a → −a → 0 is one cycle); a path that never
/// comes back there (one-sided, as 0 → a → 0 → a) is cut at every second reversal. What is
/// left after the last cut is a cycle if it holds a reversal, open unless it returns.
pub fn dissipation_per_cycle(x: &[f64], y: &[f64]) -> Vec<Cycle> {
    let n = x.len().min(y.len());
    if n < 3 {
        return Vec::new();
    }
    let x = &x[..n];
    let (lo, hi) = x
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let range = hi - lo;
    if range.is_nan() || range <= 0.0 {
        return Vec::new();
    }
    let hysteresis = 1e-3 * range;
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-2 * range + hysteresis;
    let v = directions(x, hysteresis);
    let turns = turning_points(x, &v);
    let (x0, v0) = (x[0], v[0]);
    let work = |a: usize, b: usize| -> f64 {
        (a + 1..=b)
            .map(|i| 0.5 * (y[i] + y[i - 1]) * (x[i] - x[i - 1]))
            .sum()
    };
    let mut cycles = Vec::new();
    let mut start = 0;
    loop {
        let ahead: Vec<usize> = turns.iter().copied().filter(|&t| t > start).collect();
        if ahead.is_empty() {
            break;
        }
        if let Some(&second) = ahead.get(1) {
            let limit = ahead.get(2).copied().unwrap_or(n - 1);
            let back = (second + 1..=limit)
                .find(|&i| v[i] == v0 && (x[i] - x0) * v0 >= 0.0 && (x[i - 1] - x0) * v0 < 0.0);
            if let Some(end) = back {
                cycles.push(Cycle {
                    first: start,
                    last: end,
                    energy: work(start, end),
                    closed: true,
                });
                start = end;
                continue;
            }
            let closed = near(x[second], x[start]);
            if closed || ahead.len() > 2 {
                cycles.push(Cycle {
                    first: start,
                    last: second,
                    energy: work(start, second),
                    closed,
                });
                start = second;
                continue;
            }
        }
        cycles.push(Cycle {
            first: start,
            last: n - 1,
            energy: work(start, n - 1),
            closed: near(x[n - 1], x[start]),
        });
        break;
    }
    cycles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turning_points_skip_dwell_and_noise() {
        let x = [0.0, 1.0, 2.0, 2.0, 2.0, 1.0, 0.0, -1.0, -1.0, 0.0];
        let v = directions(&x, 1e-3);
        assert_eq!(turning_points(&x, &v), vec![2, 7]);
    }

    #[test]
    fn short_or_flat_paths_have_no_cycle() {
        assert!(dissipation_per_cycle(&[0.0, 1.0], &[0.0, 1.0]).is_empty());
        assert!(dissipation_per_cycle(&[1.0; 5], &[0.0; 5]).is_empty());
        // monotone: no reversal, no cycle
        assert!(dissipation_per_cycle(&[0.0, 1.0, 2.0, 3.0], &[0.0; 4]).is_empty());
    }
}
