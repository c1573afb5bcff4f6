//! Where a path reverses: its x range, turning points (with dwells), the direction at each
//! sample, monotone branches and closed cycles ∮y dx, all read with one rule: a reversal counts
//! once x (any unit) comes back by [`REVERSAL_FRACTION`] of its range.

pub use super::values::REVERSAL_FRACTION;

/// One monotone stretch of the path: samples `start..=end`, x rising or falling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Branch {
    pub start: usize,
    pub end: usize,
    pub rising: bool,
}

impl Branch {
    pub(crate) fn range(&self) -> std::ops::RangeInclusive<usize> {
        self.start..=self.end
    }
}

/// A turning point: the first and last sample of its dwell (equal when there is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Turn {
    pub first: usize,
    pub last: usize,
}

/// A closed cycle: samples `first..=last`, the path back at the x it started from (crossing it
/// in its first direction), and the energy dissipated ∮y dx over it [x unit · y unit].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cycle {
    pub first: usize,
    pub last: usize,
    pub energy: f64,
}

/// A stretch outside every closed cycle that still holds a reversal (a partial reversal, a
/// tensile test's load and return): its work ∫y dx, which is no cycle's dissipation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenSegment {
    pub first: usize,
    pub last: usize,
    pub work: f64,
}

/// A path x read for its reversals.
#[derive(Debug, Clone, PartialEq)]
pub struct Path<'a> {
    x: &'a [f64],
    x_min: f64,
    x_max: f64,
    threshold: f64,
    turns: Vec<Turn>,
    first_rising: bool,
}

impl<'a> Path<'a> {
    /// The path read with the workbench's rule, [`REVERSAL_FRACTION`].
    pub fn new(x: &'a [f64]) -> Self {
        Self::with_fraction(x, REVERSAL_FRACTION)
    }

    /// The path read with a reversal once x comes back by `fraction` of its range.
    pub(crate) fn with_fraction(x: &'a [f64], fraction: f64) -> Self {
        let (x_min, x_max) = x
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let span = x_max - x_min;
        let moves = span.is_finite() && span > 0.0;
        let threshold = if moves { fraction * span } else { 0.0 };
        let (turns, first_rising) = if moves {
            turning_points(x, threshold)
        } else {
            (Vec::new(), None)
        };
        let first_rising = first_rising.unwrap_or(x.len() < 2 || x[x.len() - 1] >= x[0]);
        Self {
            x,
            x_min,
            x_max,
            threshold,
            turns,
            first_rising,
        }
    }

    pub fn x_min(&self) -> f64 {
        self.x_min
    }

    pub fn x_max(&self) -> f64 {
        self.x_max
    }

    /// x_max − x_min (NaN or negative for an empty path).
    pub fn span(&self) -> f64 {
        self.x_max - self.x_min
    }

    /// How far x must come back to reverse (unit of x).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    pub(crate) fn turns(&self) -> &[Turn] {
        &self.turns
    }

    /// Whether x reverses at least once.
    pub(crate) fn reverses(&self) -> bool {
        !self.turns.is_empty()
    }

    /// The monotone branches: the first from sample 0 to the first turn, each next one from
    /// the end of a dwell to the next turn, the last to the final sample.
    pub(crate) fn branches(&self) -> Vec<Branch> {
        let n = self.x.len();
        if n < 2 {
            return Vec::new();
        }
        let mut rising = self.first_rising;
        let mut out = Vec::with_capacity(self.turns.len() + 1);
        let mut start = 0;
        for t in &self.turns {
            out.push(Branch {
                start,
                end: t.first,
                rising,
            });
            start = t.last;
            rising = !rising;
        }
        if start < n - 1 || out.is_empty() {
            out.push(Branch {
                start,
                end: n - 1,
                rising,
            });
        }
        out
    }

    /// Whether x rises at each sample: the direction of the step that arrives there (sample 0
    /// takes the first branch's). A dwell keeps the direction it arrived with; noise under
    /// the threshold keeps its branch's.
    pub(crate) fn rising(&self) -> Vec<bool> {
        let mut out = Vec::with_capacity(self.x.len());
        let mut rising = self.first_rising;
        let mut turns = self.turns.iter().peekable();
        for i in 0..self.x.len() {
            if turns.peek().is_some_and(|t| i > t.last) {
                turns.next();
                rising = !rising;
            }
            out.push(rising);
        }
        out
    }

    /// Whether each sample loads: its arriving step moves away from x = 0 (|x| grows), read
    /// at the step's midpoint; sample 0 copies sample 1.
    pub(crate) fn loading(&self) -> Vec<bool> {
        let x = self.x;
        let mut flags: Vec<bool> = self
            .rising()
            .into_iter()
            .enumerate()
            .map(|(i, rising)| {
                let mid = if i == 0 {
                    x[0]
                } else {
                    0.5 * (x[i] + x[i - 1])
                };
                if rising {
                    mid >= 0.0
                } else {
                    mid <= 0.0
                }
            })
            .collect();
        if flags.len() > 1 {
            flags[0] = flags[1];
        }
        flags
    }

    /// Path length |dx| since the direction last changed, at each sample.
    pub(crate) fn distance_since_turn(&self) -> Vec<f64> {
        let (x, rising) = (self.x, self.rising());
        let mut out = vec![0.0; x.len()];
        for i in 1..x.len() {
            out[i] = if rising[i] != rising[i - 1] {
                0.0
            } else {
                out[i - 1] + (x[i] - x[i - 1]).abs()
            };
        }
        out
    }

    /// The closed cycles, end to end where they follow each other. From a start s (sample 0,
    /// then each cycle's end) a cycle takes at least two turns and ends at the second turn if
    /// that is back at x\[s\] (within the threshold), else where the path next crosses x\[s\]
    /// moving in its first direction, or at the last sample if the path ends back at x\[s\]
    /// moving that way. A start that never closes gives way to the next turn;
    /// what no cycle covers is left to [`Path::open_segments`].
    pub fn closed_cycles(&self, y: &[f64]) -> Vec<Cycle> {
        self.cycle_bounds()
            .into_iter()
            .map(|(first, last)| Cycle {
                first,
                last,
                energy: work(self.x, y, first, last),
            })
            .collect()
    }

    /// The stretches outside the closed cycles that hold a turn, with their work ∫y dx.
    pub fn open_segments(&self, y: &[f64]) -> Vec<OpenSegment> {
        let n = self.x.len().min(y.len());
        if n < 2 {
            return Vec::new();
        }
        let mut gaps = Vec::new();
        let mut from = 0;
        for (first, last) in self.cycle_bounds() {
            if first > from {
                gaps.push((from, first));
            }
            from = last;
        }
        if from < n - 1 {
            gaps.push((from, n - 1));
        }
        gaps.into_iter()
            .filter(|&(a, b)| self.turns.iter().any(|t| t.first > a && t.first < b))
            .map(|(first, last)| OpenSegment {
                first,
                last,
                work: work(self.x, y, first, last),
            })
            .collect()
    }

    fn cycle_bounds(&self) -> Vec<(usize, usize)> {
        let x = self.x;
        let n = x.len();
        let rising = self.rising();
        let mut out = Vec::new();
        let mut start = 0;
        loop {
            let ahead: Vec<&Turn> = self.turns.iter().filter(|t| t.first > start).collect();
            let Some(second) = ahead.get(1) else {
                break;
            };
            let x0 = x[start];
            // the first direction from `start`: of the step after it (after its dwell)
            let after = self
                .turns
                .iter()
                .find(|t| t.first == start)
                .map_or(start, |t| t.last);
            let up = rising[(after + 1).min(n - 1)];
            let sign = if up { 1.0 } else { -1.0 };
            let end = if (x[second.first] - x0).abs() <= self.threshold {
                Some(second.first)
            } else {
                (second.last + 1..n)
                    .find(|&i| {
                        rising[i] == up && (x[i] - x0) * sign >= 0.0 && (x[i - 1] - x0) * sign < 0.0
                    })
                    .or_else(|| {
                        let back = rising[n - 1] == up && (x[n - 1] - x0).abs() <= self.threshold;
                        (back && n - 1 > second.last).then_some(n - 1)
                    })
            };
            match end {
                Some(end) => {
                    out.push((start, end));
                    start = end;
                }
                None => start = ahead[0].first,
            }
        }
        out
    }
}

/// ∫y dx by trapezoids over samples `first..=last` (signed).
fn work(x: &[f64], y: &[f64], first: usize, last: usize) -> f64 {
    (first + 1..=last)
        .map(|i| 0.5 * (y[i] + y[i - 1]) * (x[i] - x[i - 1]))
        .sum()
}

/// The turning points of `x` and whether it first rises. A reversal counts when x comes
/// back by more than `threshold` (unit of x) from its extreme; the turn is the first sample
/// at that extreme, and its dwell runs while x stays equal to it.
fn turning_points(x: &[f64], threshold: f64) -> (Vec<Turn>, Option<bool>) {
    let n = x.len();
    if n < 2 {
        return (Vec::new(), None);
    }
    let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * scale;
    let argext = |from: usize, to: usize, rising: bool| -> usize {
        let mut best = from;
        for i in from..=to {
            if (rising && x[i] > x[best]) || (!rising && x[i] < x[best]) {
                best = i;
            }
        }
        best
    };
    let mut turns = Vec::new();
    let mut first_rising = None;
    let mut dir: Option<bool> = None; // Some(true): rising
    let (mut imin, mut imax, mut ext) = (0, 0, 0);
    for i in 1..n {
        match dir {
            None => {
                if x[i] > x[imax] {
                    imax = i;
                }
                if x[i] < x[imin] {
                    imin = i;
                }
                // The first move past the threshold: rising from imin or falling from imax.
                let start = if x[i] - x[imin] > threshold {
                    Some((imin, true))
                } else if x[imax] - x[i] > threshold {
                    Some((imax, false))
                } else {
                    None
                };
                if let Some((from, rising)) = start {
                    // A move the other way before it is a first branch of its own.
                    let before = if rising {
                        x[0] - x[from]
                    } else {
                        x[from] - x[0]
                    };
                    if before > threshold {
                        turns.push(from);
                    }
                    first_rising = Some(rising != (before > threshold));
                    dir = Some(rising);
                    ext = argext(from, i, rising);
                }
            }
            Some(rising) => {
                let further = if rising { x[i] > x[ext] } else { x[i] < x[ext] };
                let back = if rising { x[ext] - x[i] } else { x[i] - x[ext] };
                if further {
                    ext = i;
                } else if back > threshold {
                    turns.push(ext);
                    dir = Some(!rising);
                    ext = argext(ext, i, !rising);
                }
            }
        }
    }
    let turns = turns
        .into_iter()
        .map(|first| {
            let mut last = first;
            while last + 1 < n && same(x[last + 1], x[first]) {
                last += 1;
            }
            Turn { first, last }
        })
        .collect();
    (turns, first_rising)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends `steps` samples from the last x (0 if none) to `to`.
    fn stroke(x: &mut Vec<f64>, to: f64, steps: usize) {
        let from = x.last().copied().unwrap_or(0.0);
        x.extend((1..=steps).map(|i| from + (to - from) * i as f64 / steps as f64));
    }

    #[test]
    fn dwell_sits_between_branches() {
        let x = [0.0, 1.0, 2.0, 3.0, 3.0, 3.0, 2.0, 1.0, -1.0, -1.0, 0.0];
        let p = Path::with_fraction(&x, 0.125);
        assert_eq!(
            p.turns(),
            [Turn { first: 3, last: 5 }, Turn { first: 8, last: 9 }]
        );
        assert_eq!(
            p.branches(),
            vec![
                Branch {
                    start: 0,
                    end: 3,
                    rising: true
                },
                Branch {
                    start: 5,
                    end: 8,
                    rising: false
                },
                Branch {
                    start: 9,
                    end: 10,
                    rising: true
                },
            ]
        );
        // a dwell keeps the direction it arrived with
        let t = true;
        let f = false;
        assert_eq!(p.rising(), [t, t, t, t, t, t, f, f, f, f, t]);
        assert_eq!(
            p.distance_since_turn(),
            [0.0, 1.0, 2.0, 3.0, 3.0, 3.0, 0.0, 1.0, 3.0, 3.0, 0.0]
        );
    }

    #[test]
    fn noise_under_the_threshold_is_no_turn() {
        // 0 → 1 → −1 with back-steps of 0.5 % of the range (2): under REVERSAL_FRACTION
        let mut x = vec![0.0];
        for k in 1..=50 {
            let v = k as f64 / 50.0;
            x.extend([v, v - 0.01]);
        }
        for k in 1..=100 {
            let v = 1.0 - k as f64 / 50.0;
            x.extend([v, v + 0.01]);
        }
        let p = Path::new(&x);
        assert!(REVERSAL_FRACTION * p.span() > 0.01);
        assert_eq!(p.turns().len(), 1);
        assert_eq!(x[p.turns()[0].first], 1.0);
        assert_eq!(p.branches().len(), 2);
        // one direction change along the whole path
        let r = p.rising();
        assert_eq!(r.windows(2).filter(|w| w[0] != w[1]).count(), 1);
        // the same back-steps are reversals once the threshold is under them
        assert!(Path::with_fraction(&x, 0.001).turns().len() > 100);
        // a path that starts by falling
        let b = Path::with_fraction(&[0.0, -1.0, -2.0, 0.0, 2.0], 0.05).branches();
        assert_eq!(b.len(), 2);
        assert!(!b[0].rising && b[1].rising);
    }

    #[test]
    fn loading_moves_away_from_zero() {
        // 0 → 2 → −2 → 0: loading, unloading, loading (negative side), unloading
        let x = [0.0, 1.0, 2.0, 1.0, 0.0, -1.0, -2.0, -1.0, 0.0];
        assert_eq!(
            Path::new(&x).loading(),
            [true, true, true, false, false, true, true, false, false]
        );
    }

    #[test]
    fn flat_short_and_monotone_paths_have_no_cycle() {
        let paths: [&[f64]; 4] = [&[], &[1.0], &[1.0; 5], &[0.0, 1.0, 2.0, 3.0]];
        for x in paths {
            let p = Path::new(x);
            assert!(!p.reverses());
            assert!(p.closed_cycles(&vec![1.0; x.len()]).is_empty());
            assert!(p.open_segments(&vec![1.0; x.len()]).is_empty());
        }
    }

    #[test]
    fn a_parallelogram_loop_dissipates_its_area() {
        // y = k x + h on rising x, k x − h on falling x, the switch a vertical step at each
        // turn (a dwell): one closed cycle 0 → a → −a → 0 of area 2h · 2a
        let (k, h, a) = (3.0, 0.25, 1.5);
        fn leg(x: &mut Vec<f64>, y: &mut Vec<f64>, to: f64, k: f64, shift: f64) {
            let n0 = x.len();
            stroke(x, to, 40);
            y.extend(x[n0..].iter().map(|v| k * v + shift));
        }
        let (mut x, mut y) = (vec![0.0], vec![h]);
        leg(&mut x, &mut y, a, k, h);
        x.push(a);
        y.push(k * a - h);
        leg(&mut x, &mut y, -a, k, -h);
        x.push(-a);
        y.push(-k * a + h);
        leg(&mut x, &mut y, 0.0, k, h);
        let p = Path::new(&x);
        let cycles = p.closed_cycles(&y);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert_eq!((cycles[0].first, cycles[0].last), (0, x.len() - 1));
        let area = 4.0 * h * a;
        assert!((cycles[0].energy - area).abs() < 1e-12 * area, "{cycles:?}");
        assert!(cycles[0].energy >= 0.0);
        assert!(p.open_segments(&y).is_empty());
        // run backwards the loop turns the other way: energy is given, not dissipated
        let (xr, yr): (Vec<f64>, Vec<f64>) = x.iter().rev().zip(y.iter().rev()).unzip();
        let back = Path::new(&xr).closed_cycles(&yr);
        assert!((back[0].energy + area).abs() < 1e-12 * area);
    }

    #[test]
    fn partial_reversals_are_open_segments_not_cycles() {
        // tensile: load and return short of the start (residual strain): no closed cycle
        let mut x = vec![0.0];
        stroke(&mut x, 1.0, 50);
        stroke(&mut x, 0.3, 35);
        let y: Vec<f64> = x.iter().map(|v| v * v).collect();
        let p = Path::new(&x);
        assert!(p.reverses());
        assert!(p.closed_cycles(&y).is_empty());
        let open = p.open_segments(&y);
        assert_eq!(open.len(), 1);
        assert_eq!((open[0].first, open[0].last), (0, x.len() - 1));
        // a minor loop that never comes back to the start: 0 → 1 → 0.4 → 0.8
        let mut x = vec![0.0];
        stroke(&mut x, 1.0, 50);
        stroke(&mut x, 0.4, 30);
        stroke(&mut x, 0.8, 20);
        let p = Path::new(&x);
        assert_eq!(p.turns().len(), 2);
        assert!(p.closed_cycles(&x).is_empty());
        assert_eq!(p.open_segments(&x).len(), 1);
    }

    #[test]
    fn one_sided_cycles_close_at_the_second_turn() {
        // 0 → 1 → 0 → 1 → 0 → 1: two closed cycles, a last rise with no turn
        let mut x = vec![0.0];
        for to in [1.0, 0.0, 1.0, 0.0, 1.0] {
            stroke(&mut x, to, 20);
        }
        let y: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
        let p = Path::new(&x);
        let cycles = p.closed_cycles(&y);
        assert_eq!(cycles.len(), 2);
        assert_eq!((cycles[0].first, cycles[0].last), (0, 40));
        assert_eq!((cycles[1].first, cycles[1].last), (40, 80));
        // an elastic path stores and returns: nothing dissipated
        assert!(cycles.iter().all(|c| c.energy.abs() < 1e-12));
        assert!(p.open_segments(&y).is_empty());
    }

    #[test]
    fn a_minor_loop_inside_a_cycle_closes_with_the_major_one() {
        // 0 → 1 → 0.4 → 0.8 → −1 → 0: one closed cycle over the whole path
        let mut x = vec![0.0];
        for to in [1.0, 0.4, 0.8, -1.0, 0.0] {
            stroke(&mut x, to, 20);
        }
        let p = Path::new(&x);
        assert_eq!(p.turns().len(), 4);
        let c = p.closed_cycles(&x);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].first, c[0].last), (0, x.len() - 1));
    }
}
