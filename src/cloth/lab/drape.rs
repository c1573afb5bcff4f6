//! The Cusick drape test (BS 5058, ISO 9073-9 sizes) on the mesh: a 30 cm disc of the card held
//! between 18 cm discs drapes under gravity; drape coefficient DC = (A_s − A_d)/(A_D − A_d)
//! [%] from the shadow's area A_s, the specimen's A_D and the disc's A_d, and the folds.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;

use super::rest::{relax_to_rest, REST_FORCE_RATIO};
use super::shadow::{folds, shadow};
use super::{card_areal_density, card_laws, check_cancel, KineticDamping, LabError};
use crate::cloth::connectors::KesConnectors;
use crate::cloth::grid::Grid;
use crate::cloth::pipeline::{ClothPipeline, Integrator, StepParameters};
use crate::cloth::world::{ClothWorld, Material, Pin};
use crate::cloth::{ProvotConstraints, Vec3};
use crate::params::FabricParams;

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
/// The specimen counts as settled when its drape coefficient has stayed within this span
/// [points] over the last `SETTLE_WINDOW_S` (a tenth of the 2-point mesh tolerance)...
const SETTLED_DC_SPAN: f64 = 0.2;
/// ... [s], read every `READ_INTERVAL_S` [s]...
const SETTLE_WINDOW_S: f64 = 1.0;
const READ_INTERVAL_S: f64 = 0.1;
/// ... and the RMS speed of its free particles is below this [m/s]...
const SETTLED_RMS_SPEED: f64 = 5e-3;
/// ... reading from this simulated time after the end of the gravity ramp \[s\].
const MIN_TIME_S: f64 = 0.5;

/// The largest and the RMS speed [m/s] of the free particles.
#[derive(Debug, Clone, Copy)]
struct Speeds {
    max: f64,
    rms: f64,
}

impl Default for Speeds {
    fn default() -> Self {
        Self {
            max: f64::INFINITY,
            rms: f64::INFINITY,
        }
    }
}

impl Speeds {
    fn of(v: &[Vec3], free: &[bool]) -> Self {
        let (mut max, mut sum2, mut n) = (0.0f64, 0.0, 0usize);
        for (vk, _) in v.iter().zip(free).filter(|(_, f)| **f) {
            let s = vk.norm();
            max = max.max(s);
            sum2 += s * s;
            n += 1;
        }
        Self {
            max,
            rms: if n > 0 { (sum2 / n as f64).sqrt() } else { 0.0 },
        }
    }
}

/// Standard gravity [m/s²].
const STANDARD_GRAVITY: f64 = 9.806_65;

/// The fraction of g applied at time `t` \[s\] of a ramp over `ramp` \[s\]: 3τ² − 2τ³,
/// τ = t/ramp clamped to [0, 1] (1 when `ramp` is 0).
fn gravity_fraction(t: f64, ramp: f64) -> f64 {
    if ramp <= 0.0 {
        return 1.0;
    }
    let tau = (t / ramp).clamp(0.0, 1.0);
    tau * tau * (3.0 - 2.0 * tau)
}

/// What to test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrapeOptions {
    /// The card's friction terms on (the default) or all levels set to zero.
    pub friction: bool,
    /// Mesh spacing \[m\] (default 1 cm: 31 particles across the specimen).
    pub cell: f64,
    /// Time step \[s\] (default 2 ms).
    pub dt: f64,
    /// Longest simulated time \[s\] before the test gives up (default 20 s).
    pub max_time: f64,
    /// Air damping γ [1/s] (default 1): speeds the settling, no force at rest.
    pub damping: f64,
    /// Gravity is ramped from 0 to g over this time \[s\] (default 1 s; smoothstep 3τ² − 2τ³,
    /// τ = t/T): the specimen is lowered, not dropped (0: the full weight at once).
    pub ramp: f64,
    /// Kinetic damping (Barnes' dynamic relaxation, the default): every free particle is
    /// stopped whenever the free particles' kinetic energy has passed a peak, so the specimen
    /// follows its static equilibrium under the rising load instead of vibrating about it.
    pub kinetic_damping: bool,
}

impl Default for DrapeOptions {
    fn default() -> Self {
        Self {
            friction: true,
            cell: 0.01,
            dt: 0.002,
            max_time: 20.0,
            damping: 1.0,
            ramp: 1.0,
            kinetic_damping: true,
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
    /// A_s: the draped specimen's shadow [cm²].
    pub shadow_area_cm2: f64,
    /// A_D: the flat specimen's shadow on the same raster [cm²].
    pub specimen_area_cm2: f64,
    /// A_d: the disc's cells' shadow on the same raster (the lattice polygon inside 9 cm) [cm²].
    pub disc_area_cm2: f64,
    pub specimen_diameter_cm: f64,
    pub disc_diameter_cm: f64,
    /// Mesh spacing [mm] and particles of the specimen.
    pub cell_mm: f64,
    pub particles: usize,
    pub steps: u64,
    /// Implicit steps left unconverged (after halving down to Δt/8) with a residual below
    /// the accepted 1 µm.
    pub unconverged_steps: u64,
    /// Kinetic damping on, and how often it stopped the specimen (kinetic energy peaks).
    pub kinetic_damping: bool,
    /// Kinetic-energy peaks at which every velocity was set to zero.
    pub kinetic_stops: u64,
    pub dt_s: f64,
    /// Simulated time when the settling rule was met \[s\].
    pub sim_time_s: f64,
    /// Fastest free particle at the last reading of the settling [m/s].
    pub final_speed: f64,
    /// RMS speed of the free particles at the last reading of the settling [m/s] (all have
    /// the same mass: √(2K/M)).
    pub rms_speed: f64,
    /// The drape coefficient when the settling rule was met, before the static relaxation [%].
    pub settled_drape_coefficient: f64,
    /// Static relaxation: pseudo steps (backward Euler from rest, Δt doubled up to 1 s), those
    /// left unconverged at Δt/8, and the reading's largest unbalanced force over a free
    /// particle's weight, |F_i|/(m_i·g) (at rest: ≤ `rest_force_limit`, 10⁻³).
    pub rest_steps: u64,
    pub rest_unconverged_steps: u64,
    pub rest_force_ratio: f64,
    pub rest_force_limit: f64,
    pub wall_s: f64,
    /// The draped mesh, for rendering.
    #[serde(skip)]
    pub mesh: DrapedMesh,
}

/// What the drapemeter reads off a specimen's shadow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrapeReading {
    /// DC = (A_s − A_d)/(A_D − A_d) [%].
    pub drape_coefficient: f64,
    /// A_s, A_D and A_d \[m²\]: the shadow, the flat specimen's and the disc's (the held
    /// cells'), all on the same raster.
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
    // A_d on the same raster: the shadow of the cells held by the disc
    let disc = shadow(
        &specimen.grid,
        &specimen.flat,
        &specimen.on_disc,
        half,
        PIXEL_M,
    )
    .area;
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

/// The specimen cut from a square grid: the corners of the cells that lie wholly within the
/// specimen's radius of the centre (each particle with a cell's area, so the specimen's mass
/// is π·R²·ρ to the boundary's order), flat in the XZ plane at y = 0, centred on the origin.
/// The lattice point at each of the circle's four poles is inside but belongs to no such
/// cell: a yarn end with no shear cell, whose one warp (or weft) neighbour's bending axis it
/// would set; it is left out (docs/cloth.md, the cotton card's failing step).
#[derive(Debug, Clone, PartialEq)]
pub struct Specimen {
    pub grid: Grid,
    /// Flat positions \[m\].
    pub flat: Vec<Vec3>,
    /// Particles of the specimen.
    pub kept: Vec<bool>,
    /// Particles on the supporting disc (held).
    pub on_disc: Vec<bool>,
}

impl Specimen {
    /// The specimen at mesh spacing close to `cell` \[m\] (an even number of cells across).
    pub fn new(cell: f64) -> Result<Self, LabError> {
        if !(cell.is_finite() && (0.001..=0.05).contains(&cell)) {
            return Err(LabError::Option(format!(
                "cell = {} mm: must be 1 to 50 mm",
                cell * 1e3
            )));
        }
        let cells = (SPECIMEN_DIAMETER_M / cell).round().max(2.0) as usize;
        let cells = cells + cells % 2;
        let h = SPECIMEN_DIAMETER_M / cells as f64;
        let grid = Grid::new(cells + 1, cells + 1, h, h)?;
        let half = 0.5 * SPECIMEN_DIAMETER_M;
        let flat: Vec<Vec3> = (0..grid.len())
            .map(|k| {
                let (i, j) = grid.coords(k);
                Vec3::new(i as f64 * h - half, 0.0, j as f64 * h - half)
            })
            .collect();
        let tiny = 1e-9 * h;
        let radius = |p: &Vec3| (p.x * p.x + p.z * p.z).sqrt();
        let inside: Vec<bool> = flat.iter().map(|p| radius(p) <= half + tiny).collect();
        // the corners of the cells wholly inside: a lattice point inside with no such cell
        // (one at each of the four poles) is no piece of fabric, only a yarn end
        let mut kept = vec![false; flat.len()];
        for i in 0..cells {
            for j in 0..cells {
                let corners = [
                    grid.index(i, j),
                    grid.index(i + 1, j),
                    grid.index(i, j + 1),
                    grid.index(i + 1, j + 1),
                ];
                if corners.iter().all(|&q| inside[q]) {
                    corners.iter().for_each(|&q| kept[q] = true);
                }
            }
        }
        Ok(Self {
            kept,
            on_disc: flat
                .iter()
                .map(|p| radius(p) <= 0.5 * DISC_DIAMETER_M + tiny)
                .collect(),
            grid,
            flat,
        })
    }
}

/// Runs the drape test on `card`; `progress` gets 0..1 (simulated time over the longest),
/// `cancel` stops it.
pub fn run_drape(
    card: &FabricParams,
    opts: &DrapeOptions,
    progress: &mut dyn FnMut(f64),
    cancel: Option<&AtomicBool>,
) -> Result<DrapeResult, LabError> {
    let start = Instant::now();
    let dt_ok = opts.dt.is_finite() && opts.dt > 0.0 && opts.dt <= 0.05;
    let time_ok = opts.max_time.is_finite() && opts.max_time > 0.0 && opts.max_time <= 600.0;
    let damping_ok = opts.damping.is_finite() && opts.damping >= 0.0;
    let ramp_ok = opts.ramp.is_finite()
        && opts.ramp >= 0.0
        && opts.ramp + MIN_TIME_S + SETTLE_WINDOW_S <= opts.max_time;
    if !(dt_ok && time_ok && damping_ok && ramp_ok) {
        return Err(LabError::Option(format!(
            "dt = {} s, max time = {} s, damping = {} 1/s, ramp = {} s: need 0 < dt <= 0.05 s, \
             0 < max time <= 600 s, damping >= 0, 0 <= ramp <= max time - 1.5 s (the settling is read over 1 s from 0.5 s after the ramp)",
            opts.dt, opts.max_time, opts.damping, opts.ramp
        )));
    }
    let laws = card_laws(card, opts.friction)?;
    let density = card_areal_density(card)?;
    let specimen = Specimen::new(opts.cell)?;
    let (grid, h) = (specimen.grid, specimen.grid.h_warp);
    let mut connectors = KesConnectors::new(&grid, laws);
    connectors.retain_particles(&specimen.kept);
    let mut world = ClothWorld::with_positions(
        grid,
        specimen.flat.clone(),
        density,
        Material::Kes(Box::new(connectors)),
    )?;
    for (k, m) in world.mass.iter_mut().enumerate() {
        if specimen.kept[k] {
            *m = density * h * h;
        }
    }
    world.loads.gravity = [
        0.0,
        -STANDARD_GRAVITY * gravity_fraction(opts.dt, opts.ramp),
        0.0,
    ];
    world.loads.damping = opts.damping;
    for (k, p) in specimen.flat.iter().enumerate() {
        if !specimen.kept[k] || specimen.on_disc[k] {
            world.add_pin(Pin {
                particle: k,
                position: *p,
                velocity: Vec3::zeros(),
            });
        }
    }
    let kept = &specimen.kept;
    let particles = kept.iter().filter(|&&k| k).count();
    let mut params = StepParameters::new(Integrator::Broyden, opts.dt);
    params.constraints = ProvotConstraints {
        compression: Some(0.02),
        ..ProvotConstraints::none()
    };
    let mut pipeline = ClothPipeline::new();
    let max_steps = (opts.max_time / opts.dt).ceil() as u64;
    let read_every = ((READ_INTERVAL_S / opts.dt).round() as u64).max(1);
    let free: Vec<bool> = (0..kept.len())
        .map(|k| kept[k] && !specimen.on_disc[k])
        .collect();
    let mut speeds = Speeds::default();
    // the readings (time [s], DC [%]) of the last SETTLE_WINDOW_S
    let mut window: VecDeque<(f64, f64)> = VecDeque::new();
    let mut settled = false;
    let mut unconverged_steps = 0u64;
    let mut kinetic = KineticDamping::default();
    for step in 1..=max_steps {
        check_cancel(cancel)?;
        // backward Euler takes the forces at the end of the step
        world.loads.gravity[1] =
            -STANDARD_GRAVITY * gravity_fraction(world.time + opts.dt, opts.ramp);
        let report = pipeline.step(&params, &mut world)?;
        if !report.solve.converged {
            if report.solve.residual > ACCEPTED_RESIDUAL_M {
                return Err(LabError::NotReached(format!(
                    "the implicit step at t = {:.3} s did not converge (after {} halvings, residual \
                     {:.1e} m > {:.0e} m): the drape is not trustworthy",
                    world.time, report.halvings, report.solve.residual, ACCEPTED_RESIDUAL_M
                )));
            }
            unconverged_steps += 1;
        }
        if step % 25 == 0 {
            progress(step as f64 / max_steps as f64);
        }
        let reads = world.time >= MIN_TIME_S + opts.ramp && step % read_every == 0;
        if reads {
            // the speeds the specimen reached, before any kinetic stop below
            speeds = Speeds::of(world.velocities(), &free);
        }
        // pinned particles do not move: this is the free particles' kinetic energy
        if opts.kinetic_damping && kinetic.stop(world.kinetic_energy()) {
            world.v.iter_mut().for_each(|v| *v = Vec3::zeros());
        }
        if !reads {
            continue;
        }
        let dc = drape_reading(&specimen, world.positions()).drape_coefficient;
        window.push_back((world.time, dc));
        while window
            .front()
            .is_some_and(|(t, _)| *t < world.time - SETTLE_WINDOW_S - 1e-9)
        {
            window.pop_front();
        }
        let (lo, hi) = window
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, d)| {
                (lo.min(*d), hi.max(*d))
            });
        let spans_window = window
            .front()
            .is_some_and(|(t, _)| *t <= world.time - SETTLE_WINDOW_S + 1e-9);
        if spans_window && hi - lo <= SETTLED_DC_SPAN && speeds.rms < SETTLED_RMS_SPEED {
            settled = true;
            break;
        }
    }
    if !settled {
        return Err(LabError::NotReached(format!(
            "the specimen did not settle in {} s (RMS speed {:.4} m/s, fastest particle {:.3} m/s; \
             raise the longest time)",
            opts.max_time, speeds.rms, speeds.max
        )));
    }
    // the settled specimen still descends by up to the settling rule's 0.2 points per second:
    // brought to rest from there with its friction states
    let settled_time = world.time;
    let settled_steps = world.steps;
    let settled_dc = drape_reading(&specimen, world.positions()).drape_coefficient;
    let rest = relax_to_rest(
        &mut world,
        &mut pipeline,
        &params,
        ACCEPTED_RESIDUAL_M,
        &free,
        cancel,
    )?;
    progress(1.0);
    let x = world.positions().to_vec();
    let reading = drape_reading(&specimen, &x);
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
        steps: settled_steps,
        unconverged_steps,
        kinetic_damping: opts.kinetic_damping,
        kinetic_stops: kinetic.stops,
        dt_s: opts.dt,
        sim_time_s: settled_time,
        final_speed: speeds.max,
        rms_speed: speeds.rms,
        settled_drape_coefficient: settled_dc,
        rest_steps: rest.steps,
        rest_unconverged_steps: rest.unconverged,
        rest_force_ratio: rest.residual,
        rest_force_limit: REST_FORCE_RATIO,
        wall_s: start.elapsed().as_secs_f64(),
        mesh: DrapedMesh {
            grid: world.grid,
            x,
            kept: specimen.kept,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::KineticDamping;
    use super::gravity_fraction;

    /// An undamped oscillator x'' = −ω²x released from rest at x = A (exact: A·cos ωt, kinetic
    /// energy peaks at x = 0 after a quarter period) is stopped by kinetic damping at its
    /// equilibrium to within the travel of one step, A·ω·Δt, and stays there; without kinetic
    /// damping it keeps its energy (symplectic Euler).
    #[test]
    fn kinetic_damping_stops_a_mode_at_its_equilibrium() {
        let (omega, amplitude, dt) = (2.0 * std::f64::consts::PI, 0.01, 1e-3);
        let run = |damped: bool| {
            let (mut x, mut v) = (amplitude, 0.0f64);
            let mut kd = KineticDamping::default();
            let mut first_stop = None;
            for step in 1..=3000 {
                v -= omega * omega * x * dt;
                x += v * dt;
                if damped && kd.stop(0.5 * v * v) {
                    v = 0.0;
                    first_stop.get_or_insert(step);
                }
            }
            (x, v, kd.stops, first_stop)
        };
        let (x, v, stops, first) = run(true);
        let travel = amplitude * omega * dt;
        assert!(
            x.abs() < travel && v.abs() < omega * travel,
            "x = {x} m, v = {v} m/s"
        );
        // the first stop comes at the quarter period (250 steps), one step late at most
        assert!(first.is_some_and(|s| (250..=252).contains(&s)), "{first:?}");
        assert!(stops >= 1);
        let (x, v, stops, _) = run(false);
        let energy = 0.5 * (v * v + omega * omega * x * x) / (0.5 * (omega * amplitude).powi(2));
        assert!((energy - 1.0).abs() < 0.01 && stops == 0, "{energy}");
    }

    /// The ramp 3τ² − 2τ³ runs from 0 to 1 with zero rate at both ends (the specimen starts and
    /// ends its lowering at rest), is monotone, and is the full weight without a ramp.
    #[test]
    fn gravity_ramp_is_a_smoothstep_from_rest_to_rest() {
        let ramp = 1.5;
        assert_eq!(gravity_fraction(0.0, ramp), 0.0);
        assert!((gravity_fraction(0.75, ramp) - 0.5).abs() < 1e-15);
        assert_eq!(gravity_fraction(1.5, ramp), 1.0);
        assert_eq!(gravity_fraction(7.0, ramp), 1.0);
        assert_eq!(gravity_fraction(0.0, 0.0), 1.0);
        let h = 1e-6;
        // rate at the ends: 6τ(1 − τ)/T → 0, against 1.5/T in the middle
        assert!(gravity_fraction(h, ramp) / h < 1e-5);
        assert!((1.0 - gravity_fraction(ramp - h, ramp)) / h < 1e-5);
        let mid = (gravity_fraction(0.75 + h, ramp) - gravity_fraction(0.75 - h, ramp)) / (2.0 * h);
        assert!((mid - 1.5 / ramp).abs() < 1e-6, "{mid}");
        let samples: Vec<f64> = (0..=100)
            .map(|k| gravity_fraction(k as f64 * ramp / 100.0, ramp))
            .collect();
        assert!(samples.windows(2).all(|w| w[1] >= w[0]));
    }
}
