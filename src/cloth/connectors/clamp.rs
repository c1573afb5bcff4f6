//! Yarns clamped along a curved edge (the drape's disc rim): a yarn leaving the clamp between a
//! held particle c and a free one b is held at its crossing q of the edge [m], where the clamp
//! fixes its tangent: traction q–b with rest |b − q|, a hinge at q with K = φ/(|b − q|/2), and
//! b's bending with rest (|b − q| + |b′ − b|)/2.

use std::collections::HashSet;

use super::{Bending, KesConnectors, Vec3, WARP};
use crate::material::LawState;

/// A yarn leaving a clamp: `held` (inside, held), `free` (its neighbour along the yarn, outside)
/// and `anchor`, a held particle at the yarn's crossing of the clamp's edge (`held` itself when
/// that particle lies on the edge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClampedYarn {
    pub held: u32,
    pub free: u32,
    pub anchor: u32,
}

impl KesConnectors {
    /// Moves each yarn's clamp onto its anchor, at the flat positions `x` (anchors placed):
    /// the traction connector held–free becomes anchor–free with rest |b − q|; the bending
    /// connector centred on the held particle with the free one as an arm end is replaced by a
    /// hinge (fixed arm end, anchor, free), the fixed end on the yarn inside (the held particle,
    /// or its other neighbour when the anchor is the held particle), rest |b − q|/2 (the
    /// clamp's tangent is known at q, so the hinge spans q to the free segment's middle) and
    /// the fixed cross-yarn axis `axis[dir]` (two held particles, e₊ − e₋ oriented as the
    /// yarn family's own); the free particle's bending takes the anchor as its arm end, rest
    /// the mean of its arms. A yarn whose held particle lies on the edge with its other
    /// neighbour free too (tangent to the edge) keeps its connectors. `held` marks the held
    /// particles. States restart virgin. The flat `x` is then at rest: φ = 0, θ = 0, ε = 0.
    pub(crate) fn clamp_yarns(
        &mut self,
        x: &[Vec3],
        held: &[bool],
        yarns: &[ClampedYarn],
        axis: [[u32; 2]; 2],
    ) {
        let is_held = |p: u32| held.get(p as usize).copied().unwrap_or(false);
        let dist = |p: u32, q: u32| (x[p as usize] - x[q as usize]).norm();
        let grid = self.grid;
        // along the yarn family `dir`, is q after p (higher index)?
        let forward = |dir: u8, p: u32, q: u32| {
            let (pi, pj) = grid.coords(p as usize);
            let (qi, qj) = grid.coords(q as usize);
            if dir == WARP {
                qi > pi
            } else {
                qj > pj
            }
        };
        let mut replaced: HashSet<(u32, u32)> = HashSet::new();
        let mut hinges = Vec::new();
        for y in yarns {
            let Some(t) = self
                .traction
                .iter_mut()
                .find(|t| (t.a, t.b) == (y.held, y.free) || (t.a, t.b) == (y.free, y.held))
            else {
                continue;
            };
            let (dir, width) = (t.dir, t.width);
            let d = dist(y.free, y.anchor);
            if y.anchor != y.held {
                if t.a == y.held {
                    t.a = y.anchor;
                } else {
                    t.b = y.anchor;
                }
                t.rest = d;
            }
            // the hinge's fixed arm end: on the yarn inside the anchor
            let fixed = if y.anchor != y.held {
                Some(y.held)
            } else {
                self.bending
                    .iter()
                    .find(|b| b.dir == dir && b.c == y.held && (b.a == y.free || b.b == y.free))
                    .map(|b| if b.a == y.free { b.b } else { b.a })
                    .filter(|&p| is_held(p))
            };
            let Some(fixed) = fixed else {
                continue;
            };
            let (a, b) = if forward(dir, y.held, y.free) {
                (fixed, y.free)
            } else {
                (y.free, fixed)
            };
            hinges.push(Bending {
                a,
                c: y.anchor,
                b,
                e_plus: axis[dir as usize][0],
                e_minus: axis[dir as usize][1],
                dir,
                width,
                rest: 0.5 * d,
            });
            replaced.insert((y.held, y.free));
            if y.anchor != y.held {
                for bend in self.bending.iter_mut() {
                    if bend.dir != dir || bend.c != y.free {
                        continue;
                    }
                    let other = if bend.a == y.held {
                        bend.a = y.anchor;
                        bend.b
                    } else if bend.b == y.held {
                        bend.b = y.anchor;
                        bend.a
                    } else {
                        continue;
                    };
                    bend.rest = 0.5 * (d + dist(y.free, other));
                }
            }
        }
        self.bending
            .retain(|b| !(replaced.contains(&(b.c, b.a)) || replaced.contains(&(b.c, b.b))));
        self.bending.extend(hinges);
        let n = self.traction.len() + self.bending.len() + 2 * self.shear.len();
        self.states = vec![LawState::default(); n];
    }
}
