//! The block-scaled residuals G_i = D_i⁻¹g_i [m] the solvers drive to zero: a backward-Euler
//! step, g = M(x₁ − x₀ − Δt·v₀)/Δt² − F, or a static equilibrium, g = −F_internal; and D_i.

use crate::cloth::line_precond::LinePreconditioner;
use crate::cloth::precond::StretchPreconditioner;
use crate::cloth::world::ClothWorld;
use crate::cloth::{Mat3, Vec3};
use crate::material::LawState;

/// Scratch shared by the residuals: forces, velocities, normals and trial law states.
#[derive(Debug, Default, Clone)]
pub(crate) struct Workspace {
    pub force: Vec<Vec3>,
    pub vel: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub trial: Vec<LawState>,
    /// Right-hand side of the preconditioner solve, 3 entries per particle.
    pub rhs: Vec<f64>,
}

impl Workspace {
    pub(crate) fn resize(&mut self, world: &ClothWorld) {
        let n = world.len();
        self.force.resize(n, Vec3::zeros());
        self.vel.resize(n, Vec3::zeros());
        self.normals.resize(n, Vec3::zeros());
        self.trial.resize(world.state_len(), LawState::default());
        self.rhs.resize(3 * n, 0.0);
    }
}

/// A scaled residual G(x) over the particles (zero on pinned ones).
pub(crate) trait Residual {
    /// Writes G(x) into `g` and returns max_i |G_i| [m].
    fn eval(&mut self, x: &[Vec3], g: &mut [Vec3]) -> f64;
}

/// An approximate inverse of the step's Jacobian applied to the residual.
pub(crate) enum ActivePreconditioner<'a> {
    /// The stretch matrix P by its sparse Cholesky factor.
    Stretch(&'a StretchPreconditioner),
    /// P by three sweeps of line solves.
    Lines(&'a mut LinePreconditioner),
}

impl ActivePreconditioner<'_> {
    /// rhs ← P⁻¹·rhs (3 entries per particle).
    fn solve_in_place(&mut self, rhs: &mut [f64]) {
        match self {
            Self::Stretch(p) => p.solve_in_place(rhs),
            Self::Lines(p) => p.solve_in_place(rhs),
        }
    }
}

/// The backward-Euler residual of one step.
pub(crate) struct BackwardEuler<'a> {
    pub world: &'a ClothWorld,
    pub x0: &'a [Vec3],
    pub v0: &'a [Vec3],
    pub dt: f64,
    pub d_inv: &'a [Mat3],
    /// When given, G = P⁻¹g instead of D⁻¹g (the norm stays max_i |D_i⁻¹g_i|): Broyden on
    /// P⁻¹g from H₀ = I is Broyden on D⁻¹g from H₀ = P⁻¹D, the same iterates.
    pub precond: Option<ActivePreconditioner<'a>>,
    pub ws: &'a mut Workspace,
}

impl Residual for BackwardEuler<'_> {
    fn eval(&mut self, x: &[Vec3], g: &mut [Vec3]) -> f64 {
        let inv_dt = 1.0 / self.dt;
        let ws = &mut *self.ws;
        for ((v, x1), x0) in ws.vel.iter_mut().zip(x).zip(self.x0) {
            *v = (x1 - x0) * inv_dt;
        }
        self.world
            .forces(x, &ws.vel, &mut ws.trial, &mut ws.normals, &mut ws.force);
        let pinned = self.world.pinned();
        let mut norm: f64 = 0.0;
        for k in 0..x.len() {
            // pinned rows: zero residual (and right-hand side of the preconditioner solve)
            let r = if pinned[k] {
                g[k] = Vec3::zeros();
                Vec3::zeros()
            } else {
                let m = self.world.mass[k];
                let r = (x[k] - self.x0[k] - self.v0[k] * self.dt) * (m * inv_dt * inv_dt)
                    - ws.force[k];
                g[k] = self.d_inv[k] * r;
                norm = norm.max(g[k].norm());
                r
            };
            if self.precond.is_some() {
                ws.rhs[3 * k..3 * k + 3].copy_from_slice(r.as_slice());
            }
        }
        if let Some(p) = &mut self.precond {
            p.solve_in_place(&mut ws.rhs);
            for (k, gk) in g.iter_mut().enumerate() {
                *gk = if pinned[k] {
                    Vec3::zeros()
                } else {
                    Vec3::new(ws.rhs[3 * k], ws.rhs[3 * k + 1], ws.rhs[3 * k + 2])
                };
            }
        }
        if norm.is_nan() {
            f64::INFINITY
        } else {
            norm
        }
    }
}

/// The static residual −F_internal(x) of a quasi-static solve (no inertia, no loads).
pub(crate) struct StaticEquilibrium<'a> {
    pub world: &'a ClothWorld,
    pub d_inv: &'a [Mat3],
    pub ws: &'a mut Workspace,
}

impl Residual for StaticEquilibrium<'_> {
    fn eval(&mut self, x: &[Vec3], g: &mut [Vec3]) -> f64 {
        let ws = &mut *self.ws;
        ws.force.fill(Vec3::zeros());
        self.world
            .add_internal_forces(x, &mut ws.trial, &mut ws.force);
        let pinned = self.world.pinned();
        let mut norm: f64 = 0.0;
        for k in 0..x.len() {
            g[k] = if pinned[k] {
                Vec3::zeros()
            } else {
                -(self.d_inv[k] * ws.force[k])
            };
            norm = norm.max(g[k].norm());
        }
        if norm.is_nan() {
            f64::INFINITY
        } else {
            norm
        }
    }
}

#[inline]
pub(super) fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p.dot(q)).sum()
}

#[inline]
pub(super) fn norm_inf(a: &[Vec3]) -> f64 {
    a.iter().map(|p| p.norm()).fold(0.0, f64::max)
}

/// D_i⁻¹ per particle at positions `x`, D_i = (m/Δt² + (γm + cA)/Δt)·I + K_i for a dynamic
/// step (`dt` given), D_i = K_i + 10⁻⁶·tr(K_i)/3·I for a static solve.
pub(crate) fn block_scaling(world: &ClothWorld, x: &[Vec3], dt: Option<f64>, out: &mut Vec<Mat3>) {
    block_diagonal(world, x, dt, out);
    for b in out.iter_mut() {
        *b = invert_block(b);
    }
}

pub(super) fn invert_block(full: &Mat3) -> Mat3 {
    full.try_inverse().unwrap_or_else(|| {
        Mat3::from_diagonal(&full.diagonal().map(|v| if v > 0.0 { 1.0 / v } else { 0.0 }))
    })
}

/// The blocks D_i of `block_scaling`, not inverted [N/m].
pub(crate) fn block_diagonal(world: &ClothWorld, x: &[Vec3], dt: Option<f64>, out: &mut Vec<Mat3>) {
    let n = world.len();
    out.clear();
    out.resize(n, Mat3::zeros());
    match &world.material {
        crate::cloth::Material::Springs(s) => s.stiffness_blocks(x, out),
        crate::cloth::Material::Kes(k) => k.stiffness_blocks(x, out),
        crate::cloth::Material::Terzopoulos(t) => t.stiffness_blocks(x, out),
    }
    for (k, b) in out.iter_mut().enumerate() {
        let d = match dt {
            Some(dt) => {
                world.mass[k] / (dt * dt)
                    + world.loads.damping_estimate(world.mass[k], world.area[k]) / dt
            }
            None => 1e-6 * b.trace() / 3.0,
        };
        for i in 0..3 {
            b[(i, i)] += d;
        }
    }
}
