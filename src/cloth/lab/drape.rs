//! The Cusick drape test (BS 5058, ISO 9073-9 sizes) on the mesh: a 30 cm disc of the card held
//! between 18 cm discs drapes under gravity; drape coefficient DC = (A_s − A_d)/(A_D − A_d)
//! [%] from the shadow's area A_s, the specimen's A_D and the disc's A_d, and the folds.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;

use super::lowering::{
    gravity_fraction, lower_dynamically, lower_quasi_statically, DynamicLowering, MIN_TIME_S,
    SETTLE_WINDOW_S,
};
use super::rest::{relax_to_rest, Relaxation, REST_FORCE_RATIO};
use super::shadow::{disc_area, folds, shadow};
use super::{card_areal_density, card_laws, peirce_bending_length_cm, LabError, STANDARD_GRAVITY};
use crate::cloth::grid::Grid;
use crate::cloth::pipeline::{ClothPipeline, Integrator, StepParameters};
use crate::cloth::{ProvotConstraints, Vec3};
use crate::friction::short_number;
use crate::params::FabricParams;

pub use super::specimen::Specimen;

/// Specimen diameter \[m\] (BS 5058 / ISO 9073-9: 30 cm).
pub const SPECIMEN_DIAMETER_M: f64 = 0.30;
/// Supporting disc diameter \[m\] (18 cm).
pub const DISC_DIAMETER_M: f64 = 0.18;
/// Folds are counted when the outline's radius relative to the flat specimen's varies by more
/// than this (smoothed over ±5°) around the circle.
const MIN_FOLD_RANGE: f64 = 0.03;
/// An implicit step still unconverged at Δt/8 is kept when its residual, a displacement
/// max_i |D_i⁻¹g_i|, is below this \[m\]: 1/500 of the shadow's pixel; above, the test fails.
const ACCEPTED_RESIDUAL_M: f64 = 1e-6;
/// Shadow raster pixel \[m\].
const PIXEL_M: f64 = 0.5e-3;
/// Most load steps of the quasi-static lowering.
pub const MAX_LOAD_STEPS: u32 = 1000;
/// The default mesh spacing \[mm\] (40 cells, 41 particles across the specimen): the
/// coarsest cell whose reading moves by at most 2 points at half the spacing on every sample
/// fabric's card (docs/figures.md, the convergence table).
pub const DEFAULT_CELL_MM: f64 = 7.5;

/// How the specimen is lowered onto the disc.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lowering {
    /// Gravity raised from 0 to g in `load_steps` equal steps, the specimen brought to rest at
    /// each (the default, 40 steps): the sequence of equilibria under the rising load.
    QuasiStatic { load_steps: u32 },
    /// Lowered dynamically, then left to settle.
    Dynamic(DynamicLowering),
}

impl Lowering {
    /// The quasi-static lowering's default: 40 load steps.
    pub const DEFAULT: Self = Self::QuasiStatic { load_steps: 40 };
}

/// What to test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrapeOptions {
    /// The card's friction terms on (the default) or all levels set to zero.
    pub friction: bool,
    /// Mesh spacing \[m\] (default `DEFAULT_CELL_MM`: 41 particles across the specimen).
    pub cell: f64,
    /// Time step \[s\] of the dynamic steps and the first of each rest's static steps
    /// (default 2 ms).
    pub dt: f64,
    /// Air damping γ [1/s] (default 1): no force at rest.
    pub damping: f64,
    /// How the specimen is lowered (default: quasi-statically in 40 load steps).
    pub lowering: Lowering,
}

impl Default for DrapeOptions {
    fn default() -> Self {
        Self {
            friction: true,
            cell: DEFAULT_CELL_MM * 1e-3,
            dt: 0.002,
            damping: 1.0,
            lowering: Lowering::DEFAULT,
        }
    }
}

/// The draped specimen's mesh: the grid, positions \[m\] (disc centre at the origin, Y up)
/// and which particles belong to the specimen.
#[derive(Debug, Clone, PartialEq)]
pub struct DrapedMesh {
    pub grid: Grid,
    pub x: Vec<Vec3>,
    pub kept: Vec<bool>,
}

impl DrapedMesh {
    /// Positions to draw: a particle outside the specimen sits on the nearest specimen particle
    /// (at rest), so the cells around the specimen collapse to nothing.
    pub fn render_positions(&self) -> Vec<[f32; 3]> {
        let (nu, nv) = (self.grid.nu as i64, self.grid.nv as i64);
        (0..self.x.len())
            .map(|k| {
                let src = if self.kept[k] {
                    k
                } else {
                    let (i, j) = self.grid.coords(k);
                    let (ci, cj) = ((nu - 1) as f64 / 2.0, (nv - 1) as f64 / 2.0);
                    // walk towards the centre until inside the specimen
                    let (mut fi, mut fj) = (i as f64, j as f64);
                    let mut found = k;
                    for _ in 0..(nu + nv) {
                        let (di, dj) = (ci - fi, cj - fj);
                        let len = (di * di + dj * dj).sqrt();
                        if len < 1.0 {
                            break;
                        }
                        fi += di / len;
                        fj += dj / len;
                        let q = self.grid.index(
                            fi.round().clamp(0.0, (nu - 1) as f64) as usize,
                            fj.round().clamp(0.0, (nv - 1) as f64) as usize,
                        );
                        if self.kept[q] {
                            found = q;
                            break;
                        }
                    }
                    found
                };
                let p = self.x[src];
                [p.x as f32, p.y as f32, p.z as f32]
            })
            .collect()
    }
}

/// The drape test's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrapeResult {
    pub fabric: String,
    pub friction: bool,
    /// DC = (A_s − A_d)/(A_D − A_d) [%]: 100 flat, 0 hanging straight down.
    pub drape_coefficient: f64,
    /// Folds (nodes) of the shadow's outline.
    pub folds: usize,
    /// A_s: the draped specimen's shadow \[cm²\].
    pub shadow_area_cm2: f64,
    /// A_D: the flat specimen's shadow on the same raster \[cm²\].
    pub specimen_area_cm2: f64,
    /// A_d: the disc's area on the same raster (the pixels within 9 cm) \[cm²\].
    pub disc_area_cm2: f64,
    pub specimen_diameter_cm: f64,
    pub disc_diameter_cm: f64,
    /// Mesh spacing \[mm\] and particles of the specimen.
    pub cell_mm: f64,
    pub particles: usize,
    /// `quasi_static` or `dynamic`.
    pub lowering: &'static str,
    /// The quasi-static lowering's load steps (none when dynamic).
    pub load_steps: Option<u32>,
    /// Static steps of the quasi-static lowering, and those left unconverged at Δt/8 (0 when
    /// dynamic).
    pub lowering_static_steps: u64,
    pub lowering_unconverged_static_steps: u64,
    /// Dynamic steps (0 when quasi-static).
    pub steps: u64,
    /// Implicit steps left unconverged (after halving down to Δt/8) with a residual below
    /// the accepted 1 µm.
    pub unconverged_steps: u64,
    /// Kinetic damping on, and how often it stopped the specimen (kinetic energy peaks).
    pub kinetic_damping: bool,
    /// Kinetic-energy peaks at which every velocity was set to zero.
    pub kinetic_stops: u64,
    pub dt_s: f64,
    /// Simulated time when the settling rule was met \[s\] (0 when quasi-static).
    pub sim_time_s: f64,
    /// Fastest free particle at the last reading of the settling [m/s] (0 when quasi-static:
    /// the specimen is at rest).
    pub final_speed: f64,
    /// RMS speed of the free particles at the last reading of the settling [m/s] (all have
    /// the same mass: √(2K/M)).
    pub rms_speed: f64,
    /// The drape coefficient at the end of the lowering (when the settling rule was met, or at
    /// the last load step), before the static relaxation [%].
    pub settled_drape_coefficient: f64,
    /// Static relaxation: pseudo steps (backward Euler from rest, Δt doubled up to 1 s), those
    /// left unconverged at Δt/8, and the reading's largest unbalanced force over a full
    /// particle's weight, |F_i|/(ρ·h²·g) (at rest: ≤ `rest_force_limit`, 10⁻³).
    pub rest_steps: u64,
    pub rest_unconverged_steps: u64,
    pub rest_force_ratio: f64,
    pub rest_force_limit: f64,
    pub wall_s: f64,
    /// Peirce's bending length (B/W)^(1/3) of the card, the shorter of warp and weft \[cm\]
    /// (the cantilever's `peirce_cm`).
    pub peirce_cm: f64,
    /// The same number under its older key, which docs/cloth.md promised; in `test
    /// cantilever` `bending_length_cm` is the mesh's c = l/2, so new scripts read `peirce_cm`.
    pub bending_length_cm: f64,
    /// Said when the cell is coarser than that bending length: folds narrower than a few
    /// cells are not resolved, and the fold count may be too low.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The draped mesh, for rendering.
    #[serde(skip)]
    pub mesh: DrapedMesh,
}

/// The warning of a cell of `cell_mm` coarser than the bending length `bending_mm` \[mm\].
fn coarse_cell_warning(cell_mm: f64, bending_mm: f64) -> Option<String> {
    (bending_mm.is_finite() && cell_mm > bending_mm).then(|| {
        format!(
            "the {} mm cell is coarser than the card's bending length ({bending_mm:.1} mm, \
             Peirce): folds narrower than a few cells are not resolved and the fold count may \
             be too low; try --cell {} or finer",
            short_number(cell_mm),
            short_number((2.0 * bending_mm).floor().max(2.0) / 2.0)
        )
    })
}

/// What the drapemeter reads off a specimen's shadow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrapeReading {
    /// DC = (A_s − A_d)/(A_D − A_d) [%].
    pub drape_coefficient: f64,
    /// A_s, A_D and A_d \[m²\]: the shadow, the flat specimen's and the disc's (the pixels
    /// within its radius), all on the same raster.
    pub shadow_area: f64,
    pub specimen_area: f64,
    pub disc_area: f64,
    pub folds: usize,
}

/// The drapemeter's reading of `specimen` at positions `x` (disc centred on the Y axis).
pub fn drape_reading(specimen: &Specimen, x: &[Vec3]) -> DrapeReading {
    let half = 0.5 * SPECIMEN_DIAMETER_M + 2.0 * specimen.grid.h_warp;
    let s = shadow(&specimen.grid, x, &specimen.kept, half, PIXEL_M);
    let s0 = shadow(
        &specimen.grid,
        &specimen.flat,
        &specimen.kept,
        half,
        PIXEL_M,
    );
    // A_d on the same raster: the disc's, whose rim holds the yarns
    let disc = disc_area(0.5 * DISC_DIAMETER_M, half, PIXEL_M);
    // the outline relative to the flat specimen's, so that the lattice's stair-stepped edge
    // does not count as folds
    let relative: Vec<f64> = s
        .outline
        .iter()
        .zip(&s0.outline)
        .map(|(r, r0)| if *r0 > 0.0 { r / r0 } else { 0.0 })
        .collect();
    DrapeReading {
        // the ratio first: a flat specimen's y/y is exactly 1
        drape_coefficient: 100.0 * ((s.area - disc) / (s0.area - disc)),
        shadow_area: s.area,
        specimen_area: s0.area,
        disc_area: disc,
        folds: folds(&relative, 5, MIN_FOLD_RANGE),
    }
}

/// Runs the drape test on `card`; `progress` gets 0..1 (the load or the simulated time over
/// the longest), `cancel` stops it.
pub fn run_drape(
    card: &FabricParams,
    opts: &DrapeOptions,
    progress: &mut dyn FnMut(f64),
    cancel: Option<&AtomicBool>,
) -> Result<DrapeResult, LabError> {
    let start = Instant::now();
    check_options(opts)?;
    let laws = card_laws(card, opts.friction)?;
    let density = card_areal_density(card)?;
    let specimen = Specimen::new(opts.cell)?;
    let bending_length_cm = (0..2)
        .map(|dir| peirce_bending_length_cm(&laws, dir, density))
        .fold(f64::INFINITY, f64::min);
    let mut world = specimen.world(laws, density)?;
    let h = specimen.grid.h_warp;
    // a full particle (one cell's mass, lumped on its corners): the rest criterion's reference
    let particle_mass = density * h * h;
    // the load at the end of the first step (dynamic) or load step (quasi-static)
    world.loads.gravity[1] = -STANDARD_GRAVITY
        * match opts.lowering {
            Lowering::QuasiStatic { load_steps } => 1.0 / f64::from(load_steps),
            Lowering::Dynamic(how) => gravity_fraction(opts.dt, how.ramp),
        };
    world.loads.damping = opts.damping;
    let kept = &specimen.kept;
    let particles = kept.iter().filter(|&&k| k).count();
    let mut params = StepParameters::new(Integrator::Broyden, opts.dt);
    params.constraints = ProvotConstraints {
        compression: Some(0.02),
        ..ProvotConstraints::none()
    };
    let mut pipeline = ClothPipeline::new();
    let free: Vec<bool> = (0..kept.len())
        .map(|k| kept[k] && !specimen.on_disc[k])
        .collect();
    let mut lab = Relaxation {
        world: &mut world,
        pipeline: &mut pipeline,
        params: &params,
        accepted: ACCEPTED_RESIDUAL_M,
        free: &free,
        particle_mass,
        cancel,
    };
    let lowered = match opts.lowering {
        Lowering::QuasiStatic { load_steps } => {
            lower_quasi_statically(&mut lab, load_steps, progress)?
        }
        Lowering::Dynamic(how) => lower_dynamically(&mut lab, &specimen, &how, progress)?,
    };
    // the settled specimen still descends by up to the settling rule's 0.2 points per second:
    // brought to rest from there with its friction states (after a quasi-static lowering it
    // is at rest already, and this takes no step)
    let settled_time = lab.world.time;
    let settled_dc = drape_reading(&specimen, lab.world.positions()).drape_coefficient;
    let rest = relax_to_rest(&mut lab, &mut || progress(1.0))?;
    progress(1.0);
    let x = world.positions().to_vec();
    let reading = drape_reading(&specimen, &x);
    let (quasi_static, load_steps) = match opts.lowering {
        Lowering::QuasiStatic { load_steps } => (true, Some(load_steps)),
        Lowering::Dynamic(_) => (false, None),
    };
    Ok(DrapeResult {
        fabric: card.fabric.clone(),
        friction: opts.friction,
        drape_coefficient: reading.drape_coefficient,
        folds: reading.folds,
        shadow_area_cm2: reading.shadow_area * 1e4,
        specimen_area_cm2: reading.specimen_area * 1e4,
        disc_area_cm2: reading.disc_area * 1e4,
        specimen_diameter_cm: SPECIMEN_DIAMETER_M * 100.0,
        disc_diameter_cm: DISC_DIAMETER_M * 100.0,
        cell_mm: h * 1e3,
        particles,
        lowering: if quasi_static {
            "quasi_static"
        } else {
            "dynamic"
        },
        load_steps,
        lowering_static_steps: lowered.static_steps,
        lowering_unconverged_static_steps: lowered.static_unconverged,
        steps: lowered.steps,
        unconverged_steps: lowered.unconverged,
        kinetic_damping: matches!(opts.lowering, Lowering::Dynamic(how) if how.kinetic_damping),
        kinetic_stops: lowered.kinetic_stops,
        dt_s: opts.dt,
        sim_time_s: if quasi_static { 0.0 } else { settled_time },
        final_speed: lowered.speeds.max,
        rms_speed: lowered.speeds.rms,
        settled_drape_coefficient: settled_dc,
        rest_steps: rest.steps,
        rest_unconverged_steps: rest.unconverged,
        rest_force_ratio: rest.residual,
        rest_force_limit: REST_FORCE_RATIO,
        wall_s: start.elapsed().as_secs_f64(),
        peirce_cm: bending_length_cm,
        bending_length_cm,
        warning: coarse_cell_warning(h * 1e3, bending_length_cm * 10.0),
        mesh: DrapedMesh {
            grid: world.grid,
            x,
            kept: specimen.kept,
        },
    })
}

/// `Err(Option)` when a time, the damping or the lowering is out of its range.
fn check_options(opts: &DrapeOptions) -> Result<(), LabError> {
    // from 10 µs the static steps' doubling reaches 1 s in 17 steps; 1000/s damps any motion
    // of the specimen within a millisecond, far past critical
    let dt_ok = (1e-5..=0.05).contains(&opts.dt);
    let damping_ok = (0.0..=1e3).contains(&opts.damping);
    if !(dt_ok && damping_ok) {
        return Err(LabError::Option(format!(
            "dt = {} s, damping = {} 1/s: need 1e-5 <= dt <= 0.05 s, 0 <= damping <= 1000 1/s",
            short_number(opts.dt),
            short_number(opts.damping)
        )));
    }
    match opts.lowering {
        Lowering::QuasiStatic { load_steps } if !(1..=MAX_LOAD_STEPS).contains(&load_steps) => {
            Err(LabError::Option(format!(
                "{load_steps} load steps: the quasi-static lowering takes 1 to {MAX_LOAD_STEPS}"
            )))
        }
        Lowering::Dynamic(DynamicLowering { ramp, max_time, .. }) => {
            let time_ok = max_time.is_finite() && max_time > 0.0 && max_time <= 600.0;
            let ramp_ok =
                ramp.is_finite() && ramp >= 0.0 && ramp + MIN_TIME_S + SETTLE_WINDOW_S <= max_time;
            if time_ok && ramp_ok {
                Ok(())
            } else {
                Err(LabError::Option(format!(
                    "max time = {} s, ramp = {} s: need 0 < max time <= 600 s, 0 <= ramp <= \
                     max time - 1.5 s (the settling is read over 1 s from 0.5 s after the ramp)",
                    short_number(max_time),
                    short_number(ramp)
                )))
            }
        }
        Lowering::QuasiStatic { .. } => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::coarse_cell_warning;

    /// The coarse-cell warning: only for a cell coarser than the bending length, with a
    /// suggested cell at or below it (0.5 mm steps, at least 1 mm).
    #[test]
    fn coarse_cell_warning_only_beyond_the_bending_length() {
        assert_eq!(coarse_cell_warning(7.5, 10.7), None);
        assert_eq!(coarse_cell_warning(7.5, f64::INFINITY), None);
        let w = coarse_cell_warning(15.0, 10.74).unwrap_or_default();
        assert!(
            w.contains("15 mm cell") && w.contains("10.7 mm") && w.contains("--cell 10.5 "),
            "{w}"
        );
        let w = coarse_cell_warning(3.0, 0.4).unwrap_or_default();
        assert!(w.contains("--cell 1 "), "{w}");
    }
}
