//! A path's monotone branches: split at the turning points of x (any unit), a reversal counted
//! only once x comes back by a threshold (noise), a dwell (x repeated at a turn) left between.

/// One monotone stretch of the path: samples `start..=end`, x rising or falling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Branch {
    pub start: usize,
    pub end: usize,
    pub rising: bool,
}

impl Branch {
    pub fn range(&self) -> std::ops::RangeInclusive<usize> {
        self.start..=self.end
    }
}

/// A turning point: the first and last sample of its dwell (equal when there is none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    pub first: usize,
    pub last: usize,
}

/// The turning points of `x`. A reversal counts when x comes back by more than `threshold`
/// (same unit as x) from its extreme; the turn is the first sample at that extreme, and its
/// dwell runs while x stays equal to it.
pub fn turning_points(x: &[f64], threshold: f64) -> (Vec<Turn>, Option<bool>) {
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
                if x[i] - x[imin] > threshold {
                    // Rising from imin; a fall before it is a first, falling branch.
                    if x[0] - x[imin] > threshold {
                        turns.push(imin);
                        first_rising = Some(false);
                    } else {
                        first_rising = Some(true);
                    }
                    dir = Some(true);
                    ext = argext(imin, i, true);
                } else if x[imax] - x[i] > threshold {
                    if x[imax] - x[0] > threshold {
                        turns.push(imax);
                        first_rising = Some(true);
                    } else {
                        first_rising = Some(false);
                    }
                    dir = Some(false);
                    ext = argext(imax, i, false);
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

/// The monotone branches of `x`: the first from sample 0 to the first turn, each next one
/// from the end of a dwell to the next turn, the last to the final sample.
pub fn branches(x: &[f64], threshold: f64) -> Vec<Branch> {
    let n = x.len();
    if n < 2 {
        return Vec::new();
    }
    let (turns, first_rising) = turning_points(x, threshold);
    let mut rising = first_rising.unwrap_or(x[n - 1] >= x[0]);
    let mut out = Vec::with_capacity(turns.len() + 1);
    let mut start = 0;
    for t in &turns {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dwell_sits_between_branches() {
        let x = [0.0, 1.0, 2.0, 3.0, 3.0, 3.0, 2.0, 1.0, -1.0, -1.0, 0.0];
        let b = branches(&x, 0.5);
        assert_eq!(
            b,
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
    }

    #[test]
    fn small_wiggles_are_not_reversals() {
        let x = [0.0, 1.0, 0.95, 2.0, 1.98, 3.0, 2.0, 1.0];
        let b = branches(&x, 0.2);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].end, 5);
        // a path that starts by falling
        let b = branches(&[0.0, -1.0, -2.0, 0.0, 2.0], 0.2);
        assert_eq!(b.len(), 2);
        assert!(!b[0].rising && b[1].rising);
    }
}
