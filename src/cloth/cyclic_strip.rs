//! A strip of a fabric stretched along its warp and cycled by its clamp, stepped in time by an
//! integrator: the energy balance W_clamp = W_connectors + E_kin + D_num \[J\], against the warp
//! traction law's own work W·L·∫F dε along the same strains (F \[N/m\], the strip W × L \[m²\]).

use crate::material::{LawState, MaterialLaw};

use super::connectors::{KesConnectors, KesLaws};
use super::grid::Grid;
use super::pipeline::{ClothPipeline, StepParameters};
use super::world::{ClothWorld, Material};
use super::{ClothError, Loads, SettingError, Vec3};

/// Most particles of a strip.
const MAX_PARTICLES: usize = 1_000_000;

/// Most steps of a run.
const MAX_STEPS: u64 = 10_000_000;

/// The strip and its path: a flat `length_m` × `width_m` strip of cells of about `cell_m`, its
/// i = 0 end held and its other end pulled along the warp to `strain_max`, then down to
/// `strain_min` and up to `strain_max` again, `cycles` times, at the nominal strain rate
/// `strain_rate_per_s` (no gravity, no damping). The cycles stay in tension where the law's
/// unloading branch does: a strip unloaded to a compressive force is not homogeneous (one
/// column of cells takes up the slack, as a real strip buckles), and the single law is then
/// no reference for it (`law_force_min_n_per_m` tells).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CyclicStrip {
    /// Gauge length L along the warp \[m\].
    pub length_m: f64,
    /// Width W along the weft \[m\].
    pub width_m: f64,
    /// Cell size \[m\] (rounded so that whole cells fill L and W).
    pub cell_m: f64,
    /// Largest strain of the cycles [-] (the clamp's largest move is this × L).
    pub strain_max: f64,
    /// Smallest strain of the cycles [-], in [0, `strain_max`).
    pub strain_min: f64,
    /// Nominal strain rate \[1/s\]; the steps of the ramp and of a half cycle are rounded to
    /// whole numbers, which sets the rates actually used.
    pub strain_rate_per_s: f64,
    /// Unload–reload cycles after the first ramp (the last one is measured).
    pub cycles: usize,
    /// Areal density \[kg/m²\].
    pub areal_density_kg_m2: f64,
}

impl Default for CyclicStrip {
    /// A 5 × 2 cm strip at 5 mm cells, to 1.5 % strain and four cycles down to 0.75 % and
    /// back, at 10 %/s, 0.12 kg/m².
    fn default() -> Self {
        Self {
            length_m: 0.05,
            width_m: 0.02,
            cell_m: 0.005,
            strain_max: 0.015,
            strain_min: 0.0075,
            strain_rate_per_s: 0.1,
            cycles: 4,
            areal_density_kg_m2: 0.12,
        }
    }
}

/// The energies of one run \[J\] and what the integrator did.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct StripEnergy {
    /// W·L·∮F dε of the warp traction law alone over the last cycle of the clamp's strain
    /// path, finely sampled (100 samples per step): the loop's area, the energy a homogeneous
    /// strip dissipates per cycle once its friction states repeat (the first cycles also give
    /// back the pre-sliding energy stored in the ramp: their work is not a loop's area).
    pub law_loop_j: f64,
    /// The same integral by the trapezoid rule on the strains of the steps only (the
    /// quadrature the strip's own works use).
    pub law_loop_steps_j: f64,
    /// Work done on the connectors over the last cycle, −Σ_k Σ_n ½(F_k⁰ + F_k¹)·Δx_k over
    /// every particle and step of it: their hysteresis loops.
    pub connector_work_j: f64,
    /// Work done by the moving clamp over the last cycle (the same sum over its particles):
    /// the loop area of its reaction, ∮R·dx.
    pub clamp_work_j: f64,
    /// Smallest force per width of the law along the path after the first ramp \[N/m\]; ≤ 0:
    /// the strip is unloaded into compression, where it does not stay homogeneous.
    pub law_force_min_n_per_m: f64,
    /// Kinetic energy gained over the last cycle.
    pub kinetic_j: f64,
    /// Largest move of a particle across the pull (weft or normal) over the run \[m\]: 0
    /// while the strip stays straight and flat (a homogeneous stretch).
    pub max_lateral_m: f64,
    /// Δt \[s\] and steps taken.
    pub dt_s: f64,
    pub steps: u64,
    /// Cells along and across the strip.
    pub cells: [usize; 2],
    /// Force evaluations and linear (CG) iterations per step; halved and unconverged steps.
    pub evaluations_per_step: f64,
    pub linear_iterations_per_step: f64,
    pub halved_steps: u64,
    pub unconverged_steps: u64,
}

impl StripEnergy {
    /// D_num = W_clamp − W_connectors − E_kin: what the time discretisation dissipated
    /// beyond the connectors' hysteresis \[J\].
    pub fn numerical_dissipation_j(&self) -> f64 {
        self.clamp_work_j - self.connector_work_j - self.kinetic_j
    }
}

impl CyclicStrip {
    /// Checks the strip's sizes (1 mm to 10 m, at least one cell across each way, at most
    /// 10⁶ particles), the strains (0 ≤ min < max ≤ 1), the rate (positive, finite), the cycles
    /// (1 to 1000) and the density.
    pub fn validate(&self) -> Result<(), SettingError> {
        for (name, value) in [
            ("length", self.length_m),
            ("width", self.width_m),
            ("cell", self.cell_m),
        ] {
            if !(1e-3..=10.0).contains(&value) {
                return Err(SettingError::range(name, value, " m", "1 mm to 10 m"));
            }
        }
        if self.cell_m > self.length_m.min(self.width_m) {
            return Err(SettingError::range(
                "cell",
                self.cell_m,
                " m",
                "at most the strip's length and width",
            ));
        }
        let [cu, cw] = self.cells();
        if (cu + 1).saturating_mul(cw + 1) > MAX_PARTICLES {
            return Err(SettingError::range(
                "cell",
                self.cell_m,
                " m",
                "large enough for at most 10⁶ particles",
            ));
        }
        if !(self.strain_max > 0.0 && self.strain_max <= 1.0) {
            return Err(SettingError::range(
                "largest strain",
                self.strain_max,
                "",
                "in (0, 1]",
            ));
        }
        if !(self.strain_min >= 0.0 && self.strain_min < self.strain_max) {
            return Err(SettingError::range(
                "smallest strain",
                self.strain_min,
                "",
                "at least 0 and below the largest",
            ));
        }
        SettingError::positive("strain rate", self.strain_rate_per_s, " 1/s")?;
        if !(1..=1000).contains(&self.cycles) {
            return Err(SettingError::range(
                "cycles",
                self.cycles as f64,
                "",
                "1 to 1000",
            ));
        }
        SettingError::positive("areal density", self.areal_density_kg_m2, " kg/m²")
    }

    /// Cells along (L) and across (W).
    fn cells(&self) -> [usize; 2] {
        [self.length_m, self.width_m].map(|s| ((s / self.cell_m).round() as usize).max(1))
    }

    /// The clamp's path at Δt = `dt` \[s\].
    fn path(&self, dt: f64) -> StrainPath {
        let steps = |strain: f64| {
            (strain / (self.strain_rate_per_s * dt))
                .round()
                .clamp(1.0, 1e7) as u64
        };
        StrainPath {
            max: self.strain_max,
            min: self.strain_min,
            ramp: steps(self.strain_max),
            leg: steps(self.strain_max - self.strain_min),
            cycles: self.cycles as u64,
        }
    }

    /// W·L·∮F dε of `laws`' warp traction law over the last cycle of `path`, each step cut in
    /// `sub` (trapezoid rule), and the smallest force after the ramp \[J, N/m\].
    fn law_work(&self, laws: &KesLaws, path: &StrainPath, sub: u64) -> (f64, f64) {
        let law = &laws.traction[0];
        let (mut state, mut f0, mut e0) = (LawState::default(), 0.0, 0.0);
        let (mut work, mut least) = (0.0, f64::INFINITY);
        for n in 0..path.steps() {
            let (a, b) = (path.strain_at(n), path.strain_at(n + 1));
            for k in 1..=sub {
                let e1 = a + (b - a) * k as f64 / sub as f64;
                let (next, f1) = law.trial(&state, e1);
                if n >= path.last_cycle() {
                    work += 0.5 * (f0 + f1) * (e1 - e0);
                }
                if n >= path.ramp {
                    least = least.min(f1);
                }
                (state, f0, e0) = (next, f1, e1);
            }
        }
        (work * self.length_m * self.width_m, least)
    }

    /// Runs the cycle with `laws` and `params` (integrator, Δt, tolerance, preconditioner).
    pub fn run(&self, laws: &KesLaws, params: &StepParameters) -> Result<StripEnergy, ClothError> {
        self.validate()?;
        params.validate()?;
        let [cu, cw] = self.cells();
        let (nu, nv) = (cu + 1, cw + 1);
        let (h_warp, h_weft) = (self.length_m / cu as f64, self.width_m / cw as f64);
        let grid = Grid::new(nu, nv, h_warp, h_weft)?;
        let kes = KesConnectors::new(&grid, *laws);
        let mut world = ClothWorld::flat(
            grid,
            Vec3::zeros(),
            Vec3::x(),
            Vec3::y(),
            self.areal_density_kg_m2,
            Material::Kes(Box::new(kes)),
        )?;
        world.loads = Loads::none();
        for j in 0..nv {
            world.pin(0, j)?;
            world.pin(nu - 1, j)?;
        }
        let rest = world.x.clone();
        let clamp: Vec<usize> = (0..nv).map(|j| grid.index(nu - 1, j)).collect();
        let dt = params.dt;
        let path = self.path(dt);
        let steps = path.steps();
        if steps > MAX_STEPS {
            return Err(SettingError::range(
                "strain rate",
                self.strain_rate_per_s,
                " 1/s",
                "high enough for at most 10⁷ steps at this Δt",
            )
            .into());
        }
        let mut pipeline = ClothPipeline::new();
        let mut trial = vec![LawState::default(); world.state_len()];
        let mut internal = |w: &ClothWorld| {
            let mut f = vec![Vec3::zeros(); w.len()];
            w.add_internal_forces(&w.x, &mut trial, &mut f);
            f
        };
        let (law_loop_j, law_force_min_n_per_m) = self.law_work(laws, &path, 100);
        let mut out = StripEnergy {
            law_loop_j,
            law_loop_steps_j: self.law_work(laws, &path, 1).0,
            law_force_min_n_per_m,
            dt_s: dt,
            steps,
            cells: [cu, cw],
            ..StripEnergy::default()
        };
        let (mut evaluations, mut linear) = (0, 0);
        let mut f0 = internal(&world);
        for n in 0..steps {
            let v = (path.strain_at(n + 1) - path.strain_at(n)) * self.length_m / dt;
            for &k in &clamp {
                world.set_pin_velocity(k, Vec3::new(v, 0.0, 0.0));
            }
            let x0 = world.x.clone();
            let report = pipeline.step(params, &mut world)?;
            evaluations += report.solve.evaluations;
            linear += report.solve.linear_iterations;
            out.halved_steps += report.halvings as u64;
            out.unconverged_steps += u64::from(!report.solve.converged);
            let f1 = internal(&world);
            if n >= path.last_cycle() {
                let moves = world.x.iter().zip(&x0);
                for (k, ((a, b), (p1, p0))) in f0.iter().zip(&f1).zip(moves).enumerate() {
                    let dw = -0.5 * (a + b).dot(&(p1 - p0));
                    out.connector_work_j += dw;
                    // the clamp is the i = nu − 1 column
                    if grid.coords(k).0 == nu - 1 {
                        out.clamp_work_j += dw;
                    }
                }
            }
            f0 = f1;
            if n + 1 == path.last_cycle() {
                out.kinetic_j = -world.kinetic_energy();
            }
            for (p, q) in world.x.iter().zip(&rest) {
                out.max_lateral_m = out.max_lateral_m.max((p.y - q.y).hypot(p.z - q.z));
            }
        }
        out.kinetic_j += world.kinetic_energy();
        out.evaluations_per_step = evaluations as f64 / steps as f64;
        out.linear_iterations_per_step = linear as f64 / steps as f64;
        Ok(out)
    }
}

/// The clamp's strain path in steps: a ramp of `ramp` steps from 0 to `max`, then `cycles`
/// times down to `min` and up to `max` again in `leg` steps each way.
#[derive(Debug, Clone, Copy)]
struct StrainPath {
    max: f64,
    min: f64,
    ramp: u64,
    leg: u64,
    cycles: u64,
}

impl StrainPath {
    fn steps(&self) -> u64 {
        self.ramp + 2 * self.leg * self.cycles
    }

    /// The step the last cycle starts at (at the top, `max`).
    fn last_cycle(&self) -> u64 {
        self.steps() - 2 * self.leg
    }

    /// The strain after step `n`.
    fn strain_at(&self, n: u64) -> f64 {
        if n <= self.ramp {
            return self.max * n as f64 / self.ramp as f64;
        }
        let m = n - self.ramp;
        let along = (m % self.leg) as f64 / self.leg as f64;
        let span = self.max - self.min;
        if (m / self.leg) % 2 == 0 {
            self.max - span * along
        } else {
            self.min + span * along
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::connectors::tangent_test_laws as laws;
    use crate::cloth::{Integrator, Preconditioner};

    /// Every implicit integrator, at Δt = 1, 2, 5 and 10 ms, on a 5 × 2 cm strip at 1 cm
    /// cells cycled four times between 0.75 and 1.5 % strain, solved to 1e-11 m: the
    /// connectors' work over the last cycle is the single law's loop on the same strains (the
    /// strip stays homogeneous) to 0.01 %; the clamp's work is positive and equals the
    /// connectors' work and the kinetic energy gained plus a numerical dissipation that is ≥ 0
    /// (to 1e-4 of the loop, round-off) and ≤ 0.5 % of the loop; and the law's loop on the
    /// steps' strains tends to the finely sampled one as Δt → 0.
    #[test]
    fn every_integrator_dissipates_the_laws_loop() {
        let strip = CyclicStrip {
            cell_m: 0.01,
            ..CyclicStrip::default()
        };
        let methods = [
            (Integrator::Broyden, Preconditioner::Stretch),
            (Integrator::Broyden, Preconditioner::Lines),
            (Integrator::NewtonKrylov, Preconditioner::Lines),
            (Integrator::NewtonTangent, Preconditioner::Lines),
            (Integrator::NewtonDirect, Preconditioner::Lines),
        ];
        for (integrator, preconditioner) in methods {
            let mut quadrature = f64::INFINITY;
            for dt in [0.01, 0.005, 0.002, 0.001] {
                let mut params = StepParameters::new(integrator, dt);
                params.preconditioner = preconditioner;
                params.tolerance = 1e-11;
                let e = strip.run(&laws(), &params).unwrap();
                let what = format!("{integrator:?}/{preconditioner:?} at {dt} s: {e:?}");
                let loop_j = e.law_loop_steps_j;
                assert_eq!(e.unconverged_steps, 0, "{what}");
                assert!(loop_j > 0.0 && e.clamp_work_j > 0.0, "{what}");
                assert!(
                    (e.connector_work_j - loop_j).abs() <= 1e-4 * loop_j,
                    "{what}"
                );
                let d = e.numerical_dissipation_j();
                assert!((-1e-4 * loop_j..=5e-3 * loop_j).contains(&d), "{what}");
                let q = (loop_j - e.law_loop_j).abs();
                assert!(q <= quadrature, "{what}");
                quadrature = q;
            }
        }
    }

    /// Bad settings are refused before any step.
    #[test]
    fn bad_settings_are_refused() {
        let params = StepParameters::new(Integrator::NewtonTangent, 0.001);
        for strip in [
            CyclicStrip {
                cell_m: 0.1,
                ..CyclicStrip::default()
            },
            CyclicStrip {
                strain_max: 0.0,
                ..CyclicStrip::default()
            },
            CyclicStrip {
                strain_rate_per_s: f64::NAN,
                ..CyclicStrip::default()
            },
            CyclicStrip {
                cycles: 0,
                ..CyclicStrip::default()
            },
            CyclicStrip {
                length_m: 10.0,
                width_m: 10.0,
                cell_m: 0.001,
                ..CyclicStrip::default()
            },
            CyclicStrip {
                strain_rate_per_s: 1e-9,
                ..CyclicStrip::default()
            },
        ] {
            assert!(strip.run(&laws(), &params).is_err(), "{strip:?}");
        }
    }
}
