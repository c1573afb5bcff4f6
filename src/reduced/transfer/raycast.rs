//! Shadow rays: does the ray o + t·d (t > 0) hit the cloth's triangles (a median-split BVH)
//! or an obstacle (planes as half-spaces, spheres, boxes)? Positions in m.

use crate::cloth::ObstacleShape;

type P = [f32; 3];

#[inline]
fn sub(a: P, b: P) -> P {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
fn dot(a: P, b: P) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn cross(a: P, b: P) -> P {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// A BVH node: its box and either two children (`count` = 0, children at `first` and
/// `first + 1`) or `count` triangles from `first` in the ordered triangle list.
#[derive(Debug, Clone, Copy)]
struct Node {
    lo: P,
    hi: P,
    first: u32,
    count: u32,
}

/// The occluders of one state: the cloth's triangles in a BVH and the scene's obstacles.
#[derive(Debug, Clone)]
pub(crate) struct Occluders<'a> {
    x: &'a [P],
    tris: Vec<[u32; 3]>,
    nodes: Vec<Node>,
    obstacles: &'a [ObstacleShape],
}

const LEAF: usize = 4;

impl<'a> Occluders<'a> {
    /// The BVH of `tris` (vertex indices into `x`) and the obstacles.
    pub(crate) fn new(x: &'a [P], mut tris: Vec<[u32; 3]>, obstacles: &'a [ObstacleShape]) -> Self {
        let mut nodes = Vec::with_capacity(2 * tris.len() / LEAF + 1);
        nodes.push(Node {
            lo: [0.0; 3],
            hi: [0.0; 3],
            first: 0,
            count: 0,
        });
        let n = tris.len();
        build(x, &mut tris, 0, n, 0, &mut nodes);
        Self {
            x,
            tris,
            nodes,
            obstacles,
        }
    }

    /// Whether the ray from `o` along `d` meets an occluder; triangles with vertex `skip` are
    /// ignored (the ray's own vertex).
    pub(crate) fn occluded(&self, o: P, d: P, skip: u32) -> bool {
        self.obstacles.iter().any(|s| hits_obstacle(s, o, d)) || self.hits_cloth(o, d, skip)
    }

    fn hits_cloth(&self, o: P, d: P, skip: u32) -> bool {
        if self.tris.is_empty() {
            return false;
        }
        let inv = d.map(|c| 1.0 / c);
        let mut stack = [0u32; 64];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let node = self.nodes[stack[top] as usize];
            if !hits_box(node.lo, node.hi, o, inv) {
                continue;
            }
            if node.count > 0 {
                let range = node.first as usize..(node.first + node.count) as usize;
                for t in &self.tris[range] {
                    if !t.contains(&skip) && hits_triangle(self.x, *t, o, d) {
                        return true;
                    }
                }
            } else if top + 2 <= stack.len() {
                stack[top] = node.first;
                stack[top + 1] = node.first + 1;
                top += 2;
            }
        }
        false
    }
}

/// Fills node `at` with triangles `lo..hi`, splitting at the median centroid along the box's
/// longest axis.
fn build(x: &[P], tris: &mut [[u32; 3]], lo: usize, hi: usize, at: usize, nodes: &mut Vec<Node>) {
    let (mut bl, mut bh) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for t in &tris[lo..hi] {
        for &v in t {
            let p = x[v as usize];
            for k in 0..3 {
                bl[k] = bl[k].min(p[k]);
                bh[k] = bh[k].max(p[k]);
            }
        }
    }
    // depth stays below the traversal stack: median splits halve the count
    if hi - lo <= LEAF {
        nodes[at] = Node {
            lo: bl,
            hi: bh,
            first: lo as u32,
            count: (hi - lo) as u32,
        };
        return;
    }
    let ext = sub(bh, bl);
    let axis = if ext[0] >= ext[1] && ext[0] >= ext[2] {
        0
    } else if ext[1] >= ext[2] {
        1
    } else {
        2
    };
    let centroid = |t: &[u32; 3]| t.iter().map(|&v| x[v as usize][axis]).sum::<f32>();
    let mid = (lo + hi) / 2;
    tris[lo..hi].select_nth_unstable_by(mid - lo, |a, b| centroid(a).total_cmp(&centroid(b)));
    let first = nodes.len();
    let empty = Node {
        lo: [0.0; 3],
        hi: [0.0; 3],
        first: 0,
        count: 0,
    };
    nodes.push(empty);
    nodes.push(empty);
    nodes[at] = Node {
        lo: bl,
        hi: bh,
        first: first as u32,
        count: 0,
    };
    build(x, tris, lo, mid, first, nodes);
    build(x, tris, mid, hi, first + 1, nodes);
}

#[inline]
fn hits_box(lo: P, hi: P, o: P, inv: P) -> bool {
    let (mut t0, mut t1) = (0.0f32, f32::INFINITY);
    for k in 0..3 {
        let a = (lo[k] - o[k]) * inv[k];
        let b = (hi[k] - o[k]) * inv[k];
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        // NaN (0·∞ for a ray in the slab's plane) keeps the interval as it is
        if a > t0 {
            t0 = a;
        }
        if b < t1 {
            t1 = b;
        }
        if t0 > t1 {
            return false;
        }
    }
    true
}

/// Möller–Trumbore, hits at t > 0.
#[inline]
fn hits_triangle(x: &[P], t: [u32; 3], o: P, d: P) -> bool {
    let (a, b, c) = (x[t[0] as usize], x[t[1] as usize], x[t[2] as usize]);
    let (e1, e2) = (sub(b, a), sub(c, a));
    let p = cross(d, e2);
    let det = dot(e1, p);
    if det.abs() < 1e-12 {
        return false;
    }
    let inv = 1.0 / det;
    let s = sub(o, a);
    let u = dot(s, p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return false;
    }
    let q = cross(s, e1);
    let v = dot(d, q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return false;
    }
    dot(e2, q) * inv > 0.0
}

/// A ray against an obstacle: a plane is the solid half-space below it (a ray starting
/// inside is occluded), a sphere a ball, a box a solid box.
fn hits_obstacle(s: &ObstacleShape, o: P, d: P) -> bool {
    let f = |v: [f64; 3]| v.map(|c| c as f32);
    match *s {
        ObstacleShape::Plane { point, normal } => {
            let (p, n) = (f(point), f(normal));
            let h = dot(sub(o, p), n);
            h <= 0.0 || dot(d, n) < 0.0
        }
        ObstacleShape::Sphere { center, radius } => {
            let oc = sub(o, f(center));
            let r = radius as f32;
            let c = dot(oc, oc) - r * r;
            if c <= 0.0 {
                return true;
            }
            let b = dot(oc, d);
            b < 0.0 && b * b - dot(d, d) * c >= 0.0
        }
        ObstacleShape::Box { min, max } => hits_box(f(min), f(max), o, d.map(|c| 1.0 / c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ray_meets_the_triangle_in_its_path_and_misses_the_one_beside() {
        let x = [
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0],
            [5.0, 5.0, 1.0],
        ];
        let occ = Occluders::new(&x, vec![[0, 1, 2]], &[]);
        assert!(occ.occluded([0.2, 0.2, 0.0], [0.0, 0.0, 1.0], 99));
        assert!(!occ.occluded([0.2, 0.2, 0.0], [0.0, 0.0, -1.0], 99));
        assert!(!occ.occluded([0.8, 0.8, 0.0], [0.0, 0.0, 1.0], 99));
        // its own vertex's triangles are skipped
        assert!(!occ.occluded([0.2, 0.2, 0.0], [0.0, 0.0, 1.0], 0));
        let ground = [ObstacleShape::Plane {
            point: [0.0; 3],
            normal: [0.0, 0.0, 1.0],
        }];
        let occ = Occluders::new(&x, Vec::new(), &ground);
        assert!(occ.occluded([0.0, 0.0, 0.5], [0.3, 0.0, -0.1], 0));
        assert!(!occ.occluded([0.0, 0.0, 0.5], [0.3, 0.0, 0.1], 0));
        let ball = [ObstacleShape::Sphere {
            center: [0.0, 0.0, 3.0],
            radius: 1.0,
        }];
        let occ = Occluders::new(&x, Vec::new(), &ball);
        assert!(occ.occluded([0.0, 0.0, 0.0], [0.1, 0.0, 1.0], 0));
        assert!(!occ.occluded([0.0, 0.0, 0.0], [1.0, 0.0, 1.0], 0));
    }
}
