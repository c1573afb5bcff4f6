//! The cloth world: particle positions x [m], velocities v [m/s], masses m = ρ_A·A [kg] from the
//! areal density, the material with its committed friction states, loads, pins and obstacles.

use crate::material::LawState;

use super::connectors::{KesConnectors, KesTangent};
use super::constraints::ProvotConstraints;
use super::grid::{EdgeFamily, Grid, GridEdge};
use super::loads::{Anchor, Loads};
use super::obstacle::{CollisionPotential, Obstacle};
use super::springs::SpringNetwork;
use super::terzopoulos::TerzopoulosSurface;
use super::{ClothError, Vec3};

mod snapshot;

use snapshot::KeptStates;
pub use snapshot::WorldSnapshot;

/// The internal forces of the cloth.
#[derive(Debug, Clone, PartialEq)]
pub enum Material {
    /// Provot's linear springs.
    Springs(SpringNetwork),
    /// KES connectors from a fabric parameter file.
    Kes(Box<KesConnectors>),
    /// Terzopoulos et al.'s elastic surface (metric and curvature tensors).
    Terzopoulos(Box<TerzopoulosSurface>),
}

impl Material {
    pub fn name(&self) -> &'static str {
        match self {
            Material::Springs(_) => "springs",
            Material::Kes(_) => "kes",
            Material::Terzopoulos(_) => "terzopoulos",
        }
    }

    /// Number of connectors (springs, traction + bending + shear connectors, or difference
    /// terms of the elastic surface).
    pub fn connector_count(&self) -> usize {
        match self {
            Material::Springs(s) => s.len(),
            Material::Kes(k) => k.len(),
            Material::Terzopoulos(t) => t.len(),
        }
    }
}

/// A particle held by a dynamic inverse: its position is re-set to `position` after every
/// step, which then moves with `velocity`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pin {
    pub particle: usize,
    /// Position at the world's current time \[m\].
    pub position: Vec3,
    /// Velocity of the pin [m/s].
    pub velocity: Vec3,
}

/// The largest deformation rates τ = (l − l₀)/l₀ of the structural pairs and of the cell
/// diagonals (Provot's shear springs), as fractions (0.1 = 10 %).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DeformationRates {
    pub structural: f64,
    pub shear: f64,
}

/// Everything that evolves: the state of a simulation.
#[derive(Debug, Clone)]
pub struct ClothWorld {
    pub grid: Grid,
    /// Positions [m].
    pub(super) x: Vec<Vec3>,
    /// Velocities [m/s].
    pub(super) v: Vec<Vec3>,
    /// Masses [kg].
    pub(super) mass: Vec<f64>,
    /// Tributary areas \[m²\].
    pub area: Vec<f64>,
    pub material: Material,
    pub loads: Loads,
    pub obstacles: Vec<Obstacle>,
    /// Exponential collision potentials (Terzopoulos eq. 13).
    pub potentials: Vec<CollisionPotential>,
    /// Hookean springs to world points (Terzopoulos eq. 10).
    pub anchors: Vec<Anchor>,
    pins: Vec<Pin>,
    pinned: Vec<bool>,
    /// Structural pairs and cell diagonals, for rates and Provot's constraints.
    rate_edges: Vec<GridEdge>,
    /// Simulated time \[s\].
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    /// The law states before the last step, kept to take it back.
    kept: KeptStates,
}

impl ClothWorld {
    /// A flat sheet: p(i, j) = origin + i·h_warp·û + j·h_weft·ŵ with unit warp û and weft ŵ
    /// directions (made orthonormal), at rest, with areal density ρ_A [kg/m²].
    pub fn flat(
        grid: Grid,
        origin: Vec3,
        warp: Vec3,
        weft: Vec3,
        areal_density: f64,
        material: Material,
    ) -> Result<Self, ClothError> {
        if !(areal_density.is_finite() && areal_density > 0.0) {
            return Err(ClothError::Invalid(format!(
                "areal density = {areal_density} kg/m^2: must be finite and > 0"
            )));
        }
        let u = warp
            .try_normalize(1e-12)
            .ok_or_else(|| ClothError::Invalid("warp direction is zero".into()))?;
        let w0 = weft - u * weft.dot(&u);
        let w = w0.try_normalize(1e-12).ok_or_else(|| {
            ClothError::Invalid("weft direction is zero or parallel to the warp".into())
        })?;
        let x: Vec<Vec3> = (0..grid.len())
            .map(|k| {
                let (i, j) = grid.coords(k);
                origin + u * (i as f64 * grid.h_warp) + w * (j as f64 * grid.h_weft)
            })
            .collect();
        Self::with_positions(grid, x, areal_density, material)
    }

    /// A sheet at given positions (at rest), with areal density ρ_A [kg/m²].
    pub(crate) fn with_positions(
        grid: Grid,
        x: Vec<Vec3>,
        areal_density: f64,
        material: Material,
    ) -> Result<Self, ClothError> {
        grid.check_len(x.len(), "positions")?;
        let area: Vec<f64> = (0..grid.len()).map(|k| grid.tributary_area(k)).collect();
        let mass = area.iter().map(|a| a * areal_density).collect();
        let rate_edges = grid.edges(&[
            EdgeFamily::StructuralWarp,
            EdgeFamily::StructuralWeft,
            EdgeFamily::Shear,
        ]);
        Ok(Self {
            grid,
            v: vec![Vec3::zeros(); x.len()],
            x,
            mass,
            area,
            material,
            loads: Loads::default(),
            obstacles: Vec::new(),
            potentials: Vec::new(),
            anchors: Vec::new(),
            pins: Vec::new(),
            pinned: vec![false; grid.len()],
            rate_edges,
            time: 0.0,
            steps: 0,
            kept: KeptStates::default(),
        })
    }

    pub fn len(&self) -> usize {
        self.x.len()
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Positions \[m\].
    pub fn positions(&self) -> &[Vec3] {
        &self.x
    }

    /// Velocities [m/s].
    pub fn velocities(&self) -> &[Vec3] {
        &self.v
    }

    /// Masses \[kg\].
    pub fn masses(&self) -> &[f64] {
        &self.mass
    }

    /// Moves particle `k` to `position` \[m\]; a pinned particle takes its pin along.
    pub fn set_position(&mut self, k: usize, position: Vec3) {
        self.x[k] = position;
        if let Some(p) = self.pins.iter_mut().find(|p| p.particle == k) {
            p.position = position;
        }
    }

    /// Sets the velocity of particle `k` [m/s]; a pinned particle's pin moves with it.
    pub fn set_velocity(&mut self, k: usize, velocity: Vec3) {
        self.v[k] = velocity;
        if let Some(p) = self.pins.iter_mut().find(|p| p.particle == k) {
            p.velocity = velocity;
        }
    }

    /// Maps every position x ← f(x) \[m\], the pins' with them.
    pub fn map_positions(&mut self, mut f: impl FnMut(Vec3) -> Vec3) {
        for x in &mut self.x {
            *x = f(*x);
        }
        for p in &mut self.pins {
            p.position = self.x[p.particle];
        }
    }

    /// Adds Δv to the velocity of every free particle [m/s] (an impulse per unit mass).
    pub(crate) fn kick(&mut self, dv: Vec3) {
        for (v, &pinned) in self.v.iter_mut().zip(&self.pinned) {
            if !pinned {
                *v += dv;
            }
        }
    }

    /// Holds particle (i, j) where it is now.
    pub fn pin(&mut self, i: usize, j: usize) -> Result<(), ClothError> {
        if i >= self.grid.nu || j >= self.grid.nv {
            return Err(ClothError::Invalid(format!(
                "pin ({i},{j}) outside the {} x {} grid",
                self.grid.nu, self.grid.nv
            )));
        }
        let k = self.grid.index(i, j);
        self.add_pin(Pin {
            particle: k,
            position: self.x[k],
            velocity: Vec3::zeros(),
        });
        Ok(())
    }

    /// Adds (or replaces) a pin.
    pub(crate) fn add_pin(&mut self, pin: Pin) {
        let k = pin.particle;
        if let Some(p) = self.pins.iter_mut().find(|p| p.particle == k) {
            *p = pin;
        } else {
            self.pins.push(pin);
        }
        self.pinned[k] = true;
        self.x[k] = pin.position;
        self.v[k] = pin.velocity;
    }

    /// Releases particle `k` (no effect when it is free).
    pub fn unpin(&mut self, k: usize) {
        self.pins.retain(|p| p.particle != k);
        self.pinned[k] = false;
    }

    /// Sets the velocity of the pin holding particle `k` [m/s]; the particle follows from the
    /// next step on. Returns whether `k` is pinned.
    pub(crate) fn set_pin_velocity(&mut self, k: usize, velocity: Vec3) -> bool {
        match self.pins.iter_mut().find(|p| p.particle == k) {
            Some(p) => {
                p.velocity = velocity;
                true
            }
            None => false,
        }
    }

    pub fn pins(&self) -> &[Pin] {
        &self.pins
    }

    #[inline]
    pub fn is_pinned(&self, k: usize) -> bool {
        self.pinned[k]
    }

    pub(crate) fn pinned(&self) -> &[bool] {
        &self.pinned
    }

    /// Number of law states the material carries (0 for springs).
    pub fn state_len(&self) -> usize {
        match &self.material {
            Material::Springs(_) | Material::Terzopoulos(_) => 0,
            Material::Kes(k) => k.state_len(),
        }
    }

    /// Adds the internal forces at `x` to `f`; friction states move from the committed ones
    /// to `x` and are written to `trial`.
    #[inline]
    pub(crate) fn add_internal_forces(&self, x: &[Vec3], trial: &mut [LawState], f: &mut [Vec3]) {
        match &self.material {
            Material::Springs(s) => s.add_forces(x, f),
            Material::Kes(k) => k.add_forces(x, trial, f),
            Material::Terzopoulos(t) => t.add_forces(x, f),
        }
    }

    /// Total force at (x, v) into `f` (internal plus loads); `normals` is scratch.
    pub fn forces(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        trial: &mut [LawState],
        normals: &mut [Vec3],
        f: &mut [Vec3],
    ) {
        self.forces_and_tangent(x, v, trial, normals, f, None);
    }

    /// `forces`, and the kes material's tangent factors at `x` into `tangent` from the same
    /// connector pass when given; true when they were written (a kes material).
    pub(crate) fn forces_and_tangent(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        trial: &mut [LawState],
        normals: &mut [Vec3],
        f: &mut [Vec3],
        tangent: Option<&mut KesTangent>,
    ) -> bool {
        f.fill(Vec3::zeros());
        let written = match (&self.material, tangent) {
            (Material::Kes(k), Some(t)) => {
                k.add_forces_and_tangent(x, trial, f, t);
                true
            }
            _ => {
                self.add_internal_forces(x, trial, f);
                false
            }
        };
        if let Material::Terzopoulos(t) = &self.material {
            let gamma = t.params.damping_density;
            for ((fi, vi), a) in f.iter_mut().zip(v).zip(&self.area) {
                *fi -= vi * (gamma * a);
            }
        }
        self.add_external_forces(x, v, normals, f, true);
        written
    }

    /// Adds the loads, the collision potentials and (if `anchors`) the anchor springs at
    /// (x, v) to `f` \[N\]; `normals` is scratch of the world's size.
    pub(crate) fn add_external_forces(
        &self,
        x: &[Vec3],
        v: &[Vec3],
        normals: &mut [Vec3],
        f: &mut [Vec3],
        anchors: bool,
    ) {
        self.loads
            .add_forces(&self.grid, x, v, &self.mass, &self.area, normals, f);
        if !self.potentials.is_empty() {
            self.grid.normals(x, normals);
            for c in &self.potentials {
                for (k, fk) in f.iter_mut().enumerate() {
                    *fk += c.force(&x[k], &normals[k], self.area[k]);
                }
            }
        }
        if anchors {
            for a in &self.anchors {
                f[a.particle] += a.force(&x[a.particle]);
            }
        }
    }

    /// Moves the pins to time t + dt and re-sets their particles (dynamic inverse).
    pub(crate) fn advance_pins(&mut self, dt: f64) {
        for p in &mut self.pins {
            p.position += p.velocity * dt;
            self.x[p.particle] = p.position;
            self.v[p.particle] = p.velocity;
        }
    }

    /// Pin positions at t + dt, without moving them.
    pub(crate) fn pin_targets(&self, dt: f64) -> impl Iterator<Item = (usize, Vec3)> + '_ {
        self.pins
            .iter()
            .map(move |p| (p.particle, p.position + p.velocity * dt))
    }

    /// Applies Provot's constraints to the positions; the free particles they moved get the
    /// velocity (x − x_start)/Δt of their corrected step (dynamic inverse). Returns the pairs
    /// adjusted.
    pub(crate) fn apply_constraints(
        &mut self,
        constraints: &ProvotConstraints,
        x_start: &[Vec3],
        dt: f64,
    ) -> usize {
        let n = constraints.apply(&self.rate_edges, &self.pinned, &mut self.x);
        if n > 0 {
            let inv_dt = 1.0 / dt;
            for (((v, x), x0), &pinned) in self
                .v
                .iter_mut()
                .zip(&self.x)
                .zip(x_start)
                .zip(&self.pinned)
            {
                if !pinned {
                    *v = (x - x0) * inv_dt;
                }
            }
        }
        n
    }

    /// Puts particles found inside obstacles at the end of a step of `dt` \[s\] back on their
    /// surfaces; returns the contacts.
    pub(crate) fn resolve_contacts(&mut self, dt: f64) -> usize {
        let mut n = 0;
        for o in &self.obstacles {
            for k in 0..self.x.len() {
                if !self.pinned[k] && o.resolve(&mut self.x[k], &mut self.v[k], dt) {
                    n += 1;
                }
            }
        }
        n
    }

    /// ½ Σ m v² \[J\].
    pub fn kinetic_energy(&self) -> f64 {
        self.v
            .iter()
            .zip(&self.mass)
            .map(|(v, m)| 0.5 * m * v.norm_squared())
            .sum()
    }

    /// Elastic energy of the material at the current positions \[J\].
    pub fn elastic_energy(&self) -> f64 {
        match &self.material {
            Material::Springs(s) => s.energy(&self.x),
            Material::Kes(k) => k.elastic_energy(&self.x),
            Material::Terzopoulos(t) => t.energy(&self.x),
        }
    }

    /// Gravitational potential −Σ m g·x \[J\].
    pub fn gravity_energy(&self) -> f64 {
        let g = self.loads.gravity();
        -self
            .x
            .iter()
            .zip(&self.mass)
            .map(|(x, m)| m * g.dot(x))
            .sum::<f64>()
    }

    /// Σ m v [kg·m/s].
    pub fn linear_momentum(&self) -> Vec3 {
        self.v.iter().zip(&self.mass).map(|(v, m)| v * *m).sum()
    }

    /// Σ m x × v about the origin [kg·m²/s].
    pub fn angular_momentum(&self) -> Vec3 {
        self.x
            .iter()
            .zip(&self.v)
            .zip(&self.mass)
            .map(|((x, v), m)| x.cross(v) * *m)
            .sum()
    }

    /// Deformation rate of an edge at the current positions.
    #[inline]
    fn rate(&self, e: &GridEdge) -> f64 {
        (self.x[e.b as usize] - self.x[e.a as usize]).norm() / e.rest - 1.0
    }

    /// The largest rates of structural pairs and of cell diagonals now.
    pub fn deformation_rates(&self) -> DeformationRates {
        let mut r = DeformationRates {
            structural: f64::NEG_INFINITY,
            shear: f64::NEG_INFINITY,
        };
        for e in &self.rate_edges {
            let t = self.rate(e);
            if e.family.is_structural() {
                r.structural = r.structural.max(t);
            } else {
                r.shear = r.shear.max(t);
            }
        }
        r
    }

    /// Names the most deformed structural pair or diagonal (or the first non-finite one).
    pub(crate) fn worst_connector(&self) -> String {
        let mut worst: Option<(&GridEdge, f64)> = None;
        for e in &self.rate_edges {
            let t = self.rate(e);
            if !t.is_finite() {
                return format!("{} (length not finite)", self.grid.describe_edge(e));
            }
            if worst.is_none_or(|(_, w)| t.abs() > w.abs()) {
                worst = Some((e, t));
            }
        }
        match worst {
            Some((e, t)) => format!(
                "{} at rate {:+.3e} ({})",
                self.grid.describe_edge(e),
                t,
                rate_percent(t)
            ),
            None => "none".into(),
        }
    }

    /// A reference energy for blow-up detection \[J\]: M·(|g|·L + |u|² + 1 m²/s²) with L the
    /// sheet's diagonal and u the wind.
    pub(crate) fn reference_energy(&self) -> f64 {
        let m: f64 = self.mass.iter().sum();
        let (a, b) = self.grid.extent();
        let u2 = self
            .loads
            .wind
            .map(|w| Vec3::from(w.velocity).norm_squared())
            .unwrap_or(0.0);
        m * (self.loads.gravity().norm() * a.hypot(b) + u2 + 1.0)
    }
}

/// A deformation rate (fraction) in percent, to a tenth within ±1000 %, else the bound (a
/// blown-up sheet's rate has twenty digits).
fn rate_percent(t: f64) -> String {
    if t > 10.0 {
        "> +1000 %".into()
    } else if t < -10.0 {
        "< -1000 %".into()
    } else {
        format!("{:+.1} %", 100.0 * t)
    }
}
