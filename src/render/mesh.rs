//! Triangles for one frame: the cloth with smooth per-vertex normals, pins as small balls,
//! the ground, obstacles (planes, spheres, boxes), and the camera and light matrices.

use bytemuck::{Pod, Zeroable};
use nalgebra::{Matrix4, Point3, Vector3};

use crate::cloth::record::Camera;
use crate::cloth::{Obstacle, ObstacleShape};

use super::{DoorPanel, SceneView};

type V3 = Vector3<f32>;

/// Surface kinds known to the shader.
pub(crate) const CLOTH: u32 = 0;
pub(crate) const GROUND: u32 = 1;
pub(crate) const OBSTACLE: u32 = 2;
pub(crate) const PIN: u32 = 3;
pub(crate) const CLOTH_MAPPED: u32 = 4;
/// Cloth coloured by its exit radiance, unlit by the shader (linear RGB per vertex).
pub(crate) const CLOTH_RADIANCE: u32 = 5;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct Vertex {
    pub pos: [f32; 3],
    pub normal: [f32; 3],
    pub color: [f32; 3],
    pub uv: [f32; 2],
    pub material: u32,
}

/// Vertices and 32-bit indices.
#[derive(Debug, Default, Clone)]
pub(crate) struct Mesh {
    pub vertices: Vec<Vertex>,
    pub indices: Vec<u32>,
}

impl Mesh {
    fn push(&mut self, pos: V3, normal: V3, color: [f32; 3], material: u32) -> u32 {
        let k = self.vertices.len() as u32;
        self.vertices.push(Vertex {
            pos: pos.into(),
            normal: normal.into(),
            color,
            uv: [0.0, 0.0],
            material,
        });
        k
    }

    /// A ball of `radius` about `c`, as a UV sphere.
    pub(crate) fn sphere(
        &mut self,
        c: V3,
        radius: f32,
        color: [f32; 3],
        material: u32,
        rings: u32,
    ) {
        let segs = 2 * rings;
        let base = self.vertices.len() as u32;
        for r in 0..=rings {
            let th = std::f32::consts::PI * r as f32 / rings as f32;
            for s in 0..=segs {
                let ph = 2.0 * std::f32::consts::PI * s as f32 / segs as f32;
                let n = V3::new(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin());
                self.push(c + n * radius, n, color, material);
            }
        }
        let row = segs + 1;
        for r in 0..rings {
            for s in 0..segs {
                let a = base + r * row + s;
                let b = a + row;
                self.indices
                    .extend_from_slice(&[a, b, a + 1, a + 1, b, b + 1]);
            }
        }
    }

    /// An axis-aligned box with flat faces.
    pub(crate) fn cuboid(&mut self, lo: V3, hi: V3, color: [f32; 3]) {
        let d = hi - lo;
        let edges = [V3::x() * d.x, V3::y() * d.y, V3::z() * d.z];
        self.parallelepiped(lo, edges, color);
    }

    /// A box with flat faces: a corner and its three edges (a right-handed or left-handed set).
    pub(crate) fn parallelepiped(&mut self, o: V3, e: [V3; 3], color: [f32; 3]) {
        let centre = o + (e[0] + e[1] + e[2]) * 0.5;
        for axis in 0..3 {
            let (u, v) = (e[(axis + 1) % 3], e[(axis + 2) % 3]);
            for side in [0.0f32, 1.0] {
                let base_point = o + e[axis] * side;
                let face_centre = base_point + (u + v) * 0.5;
                let mut n = u.cross(&v).try_normalize(1e-12).unwrap_or(V3::y());
                if n.dot(&(face_centre - centre)) < 0.0 {
                    n = -n;
                }
                let base = self.vertices.len() as u32;
                for (du, dv) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] {
                    self.push(base_point + u * du + v * dv, n, color, OBSTACLE);
                }
                self.indices.extend_from_slice(&[
                    base,
                    base + 1,
                    base + 2,
                    base,
                    base + 2,
                    base + 3,
                ]);
            }
        }
    }

    /// A square of half-side `half` centred on `c` in the plane with unit normal `n`.
    pub(crate) fn quad(&mut self, c: V3, n: V3, half: f32, material: u32, color: [f32; 3]) {
        let (u, v) = tangents(n);
        let base = self.vertices.len() as u32;
        for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            self.push(c + (u * a + v * b) * half, n, color, material);
        }
        self.indices
            .extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
}

/// Two unit vectors completing `n` to an orthonormal frame.
fn tangents(n: V3) -> (V3, V3) {
    let a = if n.x.abs() > 0.9 { V3::z() } else { V3::x() };
    let u = n.cross(&a).normalize();
    (u, n.cross(&u))
}

fn v3(a: [f64; 3]) -> V3 {
    V3::new(a[0] as f32, a[1] as f32, a[2] as f32)
}

const OBSTACLE_COLOR: [f32; 3] = [0.55, 0.58, 0.62];
/// A wooden door leaf.
const DOOR_COLOR: [f32; 3] = [0.55, 0.36, 0.20];
const PIN_COLOR: [f32; 3] = [0.80, 0.08, 0.06];

/// Axis-aligned bounds of points.
pub(crate) fn bounds(points: &[[f32; 3]]) -> (V3, V3) {
    let mut lo = V3::repeat(f32::INFINITY);
    let mut hi = V3::repeat(f32::NEG_INFINITY);
    for p in points {
        let p = V3::from(*p);
        lo = lo.inf(&p);
        hi = hi.sup(&p);
    }
    if points.is_empty() {
        return (V3::zeros(), V3::zeros());
    }
    (lo, hi)
}

/// The up direction of a view (the camera's, else +Y).
pub(crate) fn up_of(view: &SceneView) -> V3 {
    view.camera
        .map(|c| v3(c.up))
        .and_then(|u| u.try_normalize(1e-9))
        .unwrap_or(V3::y())
}

/// The ground plane (point, unit normal): a plane obstacle facing up, else a floor below the
/// cloth's lowest starting point and the obstacles, 1.2 cloth sizes down.
pub(crate) fn ground_of(view: &SceneView, first: &[[f32; 3]]) -> (V3, V3) {
    let up = up_of(view);
    for o in &view.obstacles {
        if let ObstacleShape::Plane { point, normal } = o.shape {
            if let Some(n) = v3(normal).try_normalize(1e-9) {
                if n.dot(&up) > 0.7 {
                    return (v3(point), n);
                }
            }
        }
    }
    let size = (view.grid.nu.saturating_sub(1) as f32 * view.grid.h_warp as f32)
        .max(view.grid.nv.saturating_sub(1) as f32 * view.grid.h_weft as f32);
    let mut low = first
        .iter()
        .map(|p| V3::from(*p).dot(&up))
        .fold(f32::INFINITY, f32::min);
    if !low.is_finite() {
        low = 0.0;
    }
    low -= 1.2 * size;
    for o in &view.obstacles {
        let bottom = match o.shape {
            ObstacleShape::Sphere { center, radius } => v3(center).dot(&up) - radius as f32,
            ObstacleShape::Box { min, max } => {
                let (a, b) = (v3(min), v3(max));
                let mut m = f32::INFINITY;
                for k in 0..8 {
                    let c = V3::new(
                        if k & 1 == 0 { a.x } else { b.x },
                        if k & 2 == 0 { a.y } else { b.y },
                        if k & 4 == 0 { a.z } else { b.z },
                    );
                    m = m.min(c.dot(&up));
                }
                m
            }
            ObstacleShape::Plane { .. } => f32::INFINITY,
        };
        low = low.min(bottom);
    }
    let (lo, hi) = bounds(first);
    let mid = (lo + hi) * 0.5;
    (mid - up * (mid.dot(&up) - low), up)
}

/// Index counts of the parts of the static mesh, which is drawn in three parts: the ground
/// (`..ground`), other planes (`ground..planes`: checkered walls) and the other obstacles
/// (`planes..`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct StaticParts {
    pub ground: u32,
    pub planes: u32,
}

/// Ground, obstacles: what does not move, in the order of [`StaticParts`].
pub(crate) fn static_mesh(view: &SceneView, ground: (V3, V3), extent: f32) -> (Mesh, StaticParts) {
    let mut m = Mesh::default();
    m.quad(ground.0, ground.1, 60.0 * extent, GROUND, [0.6, 0.6, 0.6]);
    let ground_end = m.indices.len() as u32;
    let is_plane = |o: &&Obstacle| matches!(o.shape, ObstacleShape::Plane { .. });
    for o in view.obstacles.iter().filter(is_plane) {
        add_obstacle(&mut m, o, ground, extent);
    }
    let planes_end = m.indices.len() as u32;
    for o in view.obstacles.iter().filter(|o| !is_plane(o)) {
        add_obstacle(&mut m, o, ground, extent);
    }
    (
        m,
        StaticParts {
            ground: ground_end,
            planes: planes_end,
        },
    )
}

fn add_obstacle(m: &mut Mesh, o: &Obstacle, ground: (V3, V3), extent: f32) {
    match o.shape {
        ObstacleShape::Plane { point, normal } => {
            let (p, n) = (v3(point), v3(normal));
            let Some(n) = n.try_normalize(1e-9) else {
                return;
            };
            // The ground itself is drawn already.
            if (p - ground.0).dot(&ground.1).abs() < 1e-6 && n.dot(&ground.1) > 0.999 {
                return;
            }
            m.quad(p, n, 2.0 * extent, GROUND, OBSTACLE_COLOR);
        }
        ObstacleShape::Sphere { center, radius } => {
            m.sphere(v3(center), radius as f32, OBSTACLE_COLOR, OBSTACLE, 32);
        }
        ObstacleShape::Box { min, max } => m.cuboid(v3(min), v3(max), OBSTACLE_COLOR),
    }
}

/// The cloth (two triangles per cell, smooth normals, per-vertex colours when mapped) and
/// its pins.
pub(crate) fn cloth_mesh(
    view: &SceneView,
    x: &[[f32; 3]],
    colors: Option<(&[[f32; 3]], u32)>,
    out: &mut Mesh,
) {
    let (nu, nv) = (view.grid.nu, view.grid.nv);
    out.vertices.clear();
    out.indices.clear();
    let p = |i: usize, j: usize| V3::from(x[j * nu + i]);
    for j in 0..nv {
        for i in 0..nu {
            // Area-weighted normal of the four (or fewer) triangles about the particle.
            let c = p(i, j);
            let mut n = V3::zeros();
            let nb = [
                (i + 1 < nu).then(|| p(i + 1, j)),
                (j + 1 < nv).then(|| p(i, j + 1)),
                (i > 0).then(|| p(i - 1, j)),
                (j > 0).then(|| p(i, j - 1)),
            ];
            for k in 0..4 {
                if let (Some(a), Some(b)) = (nb[k], nb[(k + 1) % 4]) {
                    n += (a - c).cross(&(b - c));
                }
            }
            let n = n.try_normalize(1e-20).unwrap_or(V3::y());
            let (color, material) = match colors {
                Some((cs, material)) => (cs[j * nu + i], material),
                None => ([1.0; 3], CLOTH),
            };
            out.vertices.push(Vertex {
                pos: c.into(),
                normal: n.into(),
                color,
                uv: [
                    i as f32 / (nu - 1).max(1) as f32,
                    j as f32 / (nv - 1).max(1) as f32,
                ],
                material,
            });
        }
    }
    for j in 0..nv.saturating_sub(1) {
        for i in 0..nu.saturating_sub(1) {
            let a = (j * nu + i) as u32;
            let b = a + 1;
            let c = a + nu as u32;
            let d = c + 1;
            // Split along the shorter diagonal for a smoother fold.
            let (pa, pb, pc, pd) = (p(i, j), p(i + 1, j), p(i, j + 1), p(i + 1, j + 1));
            if (pd - pa).norm_squared() <= (pc - pb).norm_squared() {
                out.indices.extend_from_slice(&[a, b, d, a, d, c]);
            } else {
                out.indices.extend_from_slice(&[a, b, c, b, d, c]);
            }
        }
    }
    let r = 0.35 * (view.grid.h_warp.min(view.grid.h_weft) as f32);
    for &k in &view.pins {
        if let Some(&q) = x.get(k) {
            out.sphere(V3::from(q), r, PIN_COLOR, PIN, 8);
        }
    }
}

/// The door leaf turned by `angle` [rad] about its hinge.
pub(crate) fn door_panel(d: &DoorPanel, angle: f64, out: &mut Mesh) {
    let Some(axis) = nalgebra::Unit::try_new(Vector3::from(d.axis), 1e-12) else {
        return;
    };
    let r = nalgebra::Rotation3::from_axis_angle(&axis, angle);
    let h = Vector3::from(d.hinge);
    let f = |v: Vector3<f64>| v.cast::<f32>();
    let corner = f(h + r * (Vector3::from(d.corner) - h));
    let e = d.edges.map(|e| f(r * Vector3::from(e)));
    out.parallelepiped(corner, e, DOOR_COLOR);
}

/// A camera looking at the cloth from the front and above when the scene names none.
pub(crate) fn default_camera(x: &[[f32; 3]]) -> Camera {
    let (lo, hi) = bounds(x);
    let c = (lo + hi) * 0.5;
    let r = ((hi - lo).norm() * 0.5).max(0.1);
    let eye = c + V3::new(0.9, 0.8, 1.6).normalize() * (r * 3.2);
    Camera {
        eye: [eye.x as f64, eye.y as f64, eye.z as f64],
        target: [c.x as f64, c.y as f64, c.z as f64],
        up: [0.0, 1.0, 0.0],
        fov_deg: 40.0,
    }
}

/// OpenGL clip depth (−1…1) to WebGPU's (0…1).
fn depth_to_unit() -> Matrix4<f32> {
    Matrix4::new(
        1.0, 0.0, 0.0, 0.0, //
        0.0, 1.0, 0.0, 0.0, //
        0.0, 0.0, 0.5, 0.5, //
        0.0, 0.0, 0.0, 1.0,
    )
}

/// Perspective view-projection of `cam` for an image of aspect `aspect`, with near and far
/// planes fitted to a scene of radius `radius`.
pub(crate) fn view_proj(cam: &Camera, aspect: f32, radius: f32) -> Matrix4<f32> {
    let eye = Point3::from(v3(cam.eye));
    let target = Point3::from(v3(cam.target));
    let up = v3(cam.up);
    let view = Matrix4::look_at_rh(&eye, &target, &up);
    let dist = (target - eye).norm().max(1e-3);
    // the caps keep the planes apart in f32 for a scene or camera at any distance, NaN
    // included (a record of positions near f32::MAX renders a blank frame, no panic)
    let near = within((0.02 * dist).min(0.05 * radius), 1e-3, 1e6);
    let far = within(80.0 * (dist + radius), 2.0 * near, 1e12);
    let fov = (cam.fov_deg as f32).to_radians().clamp(0.01, 3.0);
    let proj = Matrix4::new_perspective(aspect, fov, near, far);
    depth_to_unit() * proj * view
}

/// `v` within [lo, hi], a NaN taken as `lo`.
fn within(v: f32, lo: f32, hi: f32) -> f32 {
    if v.is_nan() {
        lo
    } else {
        v.clamp(lo, hi)
    }
}

/// Orthographic view-projection from the light direction `l` over a ball (`c`, `r`).
pub(crate) fn light_proj(l: V3, c: V3, r: f32) -> Matrix4<f32> {
    // a ball of zero, infinite or NaN radius would make the box degenerate (a panic)
    let r = within(r, 1e-3, 1e12);
    let (u, _) = tangents(l);
    let eye = Point3::from(c + l * (2.0 * r));
    let view = Matrix4::look_at_rh(&eye, &Point3::from(c), &u);
    let proj = Matrix4::new_orthographic(-r, r, -r, r, 0.0, 4.0 * r);
    depth_to_unit() * proj * view
}
