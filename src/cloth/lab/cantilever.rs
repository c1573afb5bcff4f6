//! The cantilever test (ASTM D1388, Peirce 1930) on the mesh: a strip of the card overhangs a
//! ramp edge by l \[m\] until its tip chord lies 41.5° below the horizontal; bending length
//! c = l/2, compared with Peirce's c = (B/W)^(1/3) \[cm\] (B in gf·cm²/cm, W in gf/cm²).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;

use super::{
    card_areal_density, card_laws, check_cancel, peirce_bending_length_cm, rigidity_gf_cm2_per_cm,
    weight_gf_per_cm2, KineticDamping, LabError, STANDARD_GRAVITY,
};
use crate::cloth::connectors::{KesConnectors, KesLaws};
use crate::cloth::grid::Grid;
use crate::cloth::world::{ClothWorld, Material};
use crate::cloth::{Mat3, Vec3};
use crate::kes::Direction;
use crate::material::LawState;
use crate::params::FabricParams;

/// The angle of the instrument's line below the horizontal \[deg\] (ASTM D1388).
pub const ASTM_ANGLE_DEG: f64 = 41.5;
/// The strip's width \[m\] (ASTM D1388: 25 mm).
pub const STRIP_WIDTH_M: f64 = 0.025;
/// Most relaxations of the overhang search.
const MAX_RELAXATIONS: usize = 40;
/// Most iterations of one relaxation (of each of its load steps).
const MAX_ITERATIONS: usize = 2_000_000;
/// Equilibrium: every free particle's net force below this fraction of its weight.
const FORCE_TOLERANCE: f64 = 1e-7;
/// Iterations without a halving of the residual after which the fictitious masses double.
const STALL_ITERATIONS: usize = 50_000;
/// The search stops when the tip chord is this close to 41.5° \[deg\], or when the overhang
/// is bracketed to this fraction.
const ANGLE_TOLERANCE_DEG: f64 = 1e-3;
const OVERHANG_TOLERANCE: f64 = 1e-4;

/// What to test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CantileverOptions {
    /// The yarn along the strip: warp or weft.
    pub direction: Direction,
    /// The card's friction terms on (the default) or all levels set to zero.
    pub friction: bool,
    /// Cells along the overhang (default 20): the spacing is the overhang / cells.
    pub cells: usize,
    /// Cells across the 25 mm width (default 2).
    pub width_cells: usize,
    /// Load steps of each relaxation with friction (default 1, 1 to 1000): gravity released
    /// in equal steps, each to equilibrium with the friction states of the previous one.
    pub load_steps: u32,
}

impl CantileverOptions {
    pub fn new(direction: Direction) -> Self {
        Self {
            direction,
            friction: true,
            cells: 20,
            width_cells: 2,
            load_steps: 1,
        }
    }

    /// The load steps a relaxation takes: `load_steps` with friction, one without (the
    /// elastic strip's equilibrium does not depend on the path).
    fn load_steps_applied(&self) -> u32 {
        if self.friction {
            self.load_steps
        } else {
            1
        }
    }
}

/// The cantilever's result; lengths in cm, B in gf·cm²/cm, W in gf/cm² (Kawabata's units).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CantileverResult {
    pub fabric: String,
    pub direction: Direction,
    pub friction: bool,
    /// c = l/2 on the mesh \[cm\] (Peirce's rule at 41.5°).
    pub bending_length_cm: f64,
    /// (B/W)^(1/3) \[cm\] from the card's elastic bending rigidity and weight.
    pub peirce_cm: f64,
    /// bending_length / peirce − 1.
    pub relative_gap: f64,
    /// The card's elastic bending rigidity k_b of the strip's yarn [gf·cm²/cm].
    #[serde(rename = "B")]
    pub rigidity_gf_cm2_per_cm: f64,
    /// The weight per area [gf/cm²].
    #[serde(rename = "W_gf_per_cm2")]
    pub weight_gf_per_cm2: f64,
    /// Overhang l at 41.5° \[cm\].
    pub overhang_cm: f64,
    /// The tip chord's angle below the horizontal at that overhang \[deg\].
    pub tip_angle_deg: f64,
    pub cells: usize,
    pub width_cells: usize,
    /// Load steps of each relaxation (1 without friction, where the path does not matter).
    pub load_steps: u32,
    /// Relaxations of the overhang search and their iterations in total.
    pub relaxations: usize,
    pub iterations: usize,
    pub wall_s: f64,
}

/// The strip at overhang l: gauge along X from the ramp edge (x = 0), width along Z, gravity
/// −Y. Gauge row 0 is the ghost (the mirror image of row 2 through the edge), row 1 the edge,
/// rows 2.. the overhang.
struct Strip {
    grid: Grid,
    /// Gauge row of each particle.
    row: Vec<usize>,
    /// Each ghost particle and the particle it mirrors.
    ghosts: Vec<(usize, usize)>,
    /// Particles of the tip row.
    tip: Vec<usize>,
    h: f64,
}

impl Strip {
    fn new(opts: &CantileverOptions, overhang: f64) -> Result<Self, LabError> {
        let (ng, nw) = (opts.cells + 2, opts.width_cells + 1);
        let h = overhang / opts.cells as f64;
        let hw = STRIP_WIDTH_M / opts.width_cells as f64;
        let grid = match opts.direction {
            Direction::Weft => Grid::new(nw, ng, hw, h)?,
            _ => Grid::new(ng, nw, h, hw)?,
        };
        let at = |g: usize, w: usize| match opts.direction {
            Direction::Weft => grid.index(w, g),
            _ => grid.index(g, w),
        };
        let mut row = vec![0; grid.len()];
        for g in 0..ng {
            for w in 0..nw {
                row[at(g, w)] = g;
            }
        }
        Ok(Self {
            ghosts: (0..nw).map(|w| (at(0, w), at(2, w))).collect(),
            tip: (0..nw).map(|w| at(ng - 1, w)).collect(),
            row,
            grid,
            h,
        })
    }

    /// The flat strip: row g at x = (g − 1)·h, width along Z.
    fn flat(&self, opts: &CantileverOptions) -> Vec<Vec3> {
        let hw = STRIP_WIDTH_M / opts.width_cells as f64;
        (0..self.grid.len())
            .map(|k| {
                let (i, j) = self.grid.coords(k);
                let w = if opts.direction == Direction::Weft {
                    i
                } else {
                    j
                };
                Vec3::new((self.row[k] as f64 - 1.0) * self.h, 0.0, w as f64 * hw)
            })
            .collect()
    }

    /// The tip chord's angle below the horizontal \[deg\].
    fn tip_angle_deg(&self, x: &[Vec3]) -> f64 {
        let n = self.tip.len() as f64;
        let p = self.tip.iter().map(|&k| x[k]).sum::<Vec3>() / n;
        (-p.y).atan2(p.x).to_degrees()
    }
}

/// One relaxation: the strip at overhang l in static equilibrium.
struct Relaxed {
    /// Positions with the gauge coordinates in units of the spacing h (for a warm start).
    shape: Vec<Vec3>,
    angle_deg: f64,
    iterations: usize,
}

/// Runs the cantilever test on `card`; `progress` gets 0..1, `cancel` stops it.
pub fn run_cantilever(
    card: &FabricParams,
    opts: &CantileverOptions,
    progress: &mut dyn FnMut(f64),
    cancel: Option<&AtomicBool>,
) -> Result<CantileverResult, LabError> {
    let start = Instant::now();
    let dir = match opts.direction {
        Direction::Warp => 0,
        Direction::Weft => 1,
        d => {
            return Err(LabError::Option(format!(
                "direction {d}: the cantilever strip lies along the warp or the weft"
            )))
        }
    };
    if !(2..=2000).contains(&opts.cells) || !(1..=100).contains(&opts.width_cells) {
        return Err(LabError::Option(format!(
            "cells = {}, width cells = {}: must be 2 to 2000 along the overhang and 1 to 100 across",
            opts.cells, opts.width_cells
        )));
    }
    if !(1..=1000).contains(&opts.load_steps) {
        return Err(LabError::Option(format!(
            "load steps = {}: must be 1 to 1000",
            opts.load_steps
        )));
    }
    let laws = card_laws(card, opts.friction)?;
    let density = card_areal_density(card)?;
    let b = rigidity_gf_cm2_per_cm(laws.bending[dir].k_b);
    let w = weight_gf_per_cm2(density);
    let peirce_cm = peirce_bending_length_cm(&laws, dir, density);
    if !(peirce_cm.is_finite() && peirce_cm > 0.0) {
        return Err(LabError::Card(format!(
            "fabric `{}`: bending rigidity {b} gf*cm2/cm and weight {w} gf/cm2 give no bending length",
            card.fabric
        )));
    }
    // the search: l where the tip chord is at 41.5°, from Peirce's l = 2c
    let target = ASTM_ANGLE_DEG;
    let mut l = 2.0 * peirce_cm * 0.01;
    let mut warm: Option<Vec<Vec3>> = None;
    let (mut relaxations, mut iterations) = (0usize, 0usize);
    let mut relax_at = |l: f64, warm: &mut Option<Vec<Vec3>>| -> Result<f64, LabError> {
        if relaxations >= MAX_RELAXATIONS {
            return Err(LabError::NotReached(format!(
                "no overhang with the tip chord at {target} deg after {MAX_RELAXATIONS} relaxations"
            )));
        }
        if l > 10.0 {
            return Err(LabError::NotReached(format!(
                "the strip does not reach {target} deg below 10 m of overhang"
            )));
        }
        let start_shape = if opts.friction { None } else { warm.as_deref() };
        let r = relax(&laws, density, opts, l, start_shape, cancel)?;
        relaxations += 1;
        iterations += r.iterations;
        progress((relaxations as f64 / 12.0).min(0.95));
        *warm = Some(r.shape);
        Ok(r.angle_deg - target)
    };
    // bracket, then Illinois' regula falsi on the angle
    let mut fa = relax_at(l, &mut warm)?;
    let (mut a, mut bb, mut fb);
    let step = if fa < 0.0 { 1.25 } else { 0.8 };
    loop {
        let l2 = l * step;
        let f2 = relax_at(l2, &mut warm)?;
        if f2.signum() != fa.signum() || f2 == 0.0 {
            (a, bb, fb) = (l, l2, f2);
            break;
        }
        (l, fa) = (l2, f2);
    }
    let (mut best_l, mut best_f) = if fa.abs() < fb.abs() {
        (a, fa)
    } else {
        (bb, fb)
    };
    let mut side = 0i8;
    while best_f.abs() > ANGLE_TOLERANCE_DEG && (bb - a).abs() > OVERHANG_TOLERANCE * a.abs() {
        let c = (a * fb - bb * fa) / (fb - fa);
        let fc = relax_at(c, &mut warm)?;
        if fc.abs() < best_f.abs() {
            (best_l, best_f) = (c, fc);
        }
        if fc.signum() == fb.signum() {
            (bb, fb) = (c, fc);
            if side == -1 {
                fa *= 0.5;
            }
            side = -1;
        } else {
            (a, fa) = (c, fc);
            if side == 1 {
                fb *= 0.5;
            }
            side = 1;
        }
    }
    progress(1.0);
    let bending_length_cm = 0.5 * best_l * 100.0;
    Ok(CantileverResult {
        fabric: card.fabric.clone(),
        direction: opts.direction,
        friction: opts.friction,
        bending_length_cm,
        peirce_cm,
        relative_gap: bending_length_cm / peirce_cm - 1.0,
        rigidity_gf_cm2_per_cm: b,
        weight_gf_per_cm2: w,
        overhang_cm: best_l * 100.0,
        tip_angle_deg: best_f + target,
        cells: opts.cells,
        width_cells: opts.width_cells,
        load_steps: opts.load_steps_applied(),
        relaxations,
        iterations,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

/// The strip at overhang `l` [m] relaxed to static equilibrium by dynamic relaxation with
/// kinetic damping (Barnes): fictitious 3 × 3 masses from each particle's stiffness block, unit steps,
/// velocities zeroed at every peak of the kinetic energy. The ghost row follows the mirror
/// image of row 2 through the edge (a second-order clamp: the edge's turning angle is twice
/// the first cell's slope, so its moment is k_b·θ'(0)); the forces on the ghost are dropped,
/// the edge's bending connector acting on the overhang alone. `warm`: a previous
/// shape in units of its spacing, else flat; friction states start virgin. The relaxation's
/// iterations are no path of the strip: every force is the law's trial from the committed
/// states (virgin, or the previous load step's equilibrium) to the current shape, committed
/// only at equilibrium, so the overshoots of the fictitious motion reverse no friction. With
/// gravity released in one step this is the strip loaded monotonically from flat.
fn relax(
    laws: &KesLaws,
    density: f64,
    opts: &CantileverOptions,
    l: f64,
    warm: Option<&[Vec3]>,
    cancel: Option<&AtomicBool>,
) -> Result<Relaxed, LabError> {
    let strip = Strip::new(opts, l)?;
    let flat = strip.flat(opts);
    let connectors = KesConnectors::new(&strip.grid, *laws);
    let mut stiffness = vec![Mat3::zeros(); strip.grid.len()];
    connectors.stiffness_blocks(&flat, &mut stiffness);
    let mut world = ClothWorld::with_positions(
        strip.grid,
        flat.clone(),
        density,
        Material::Kes(Box::new(connectors)),
    )?;
    let h = strip.h;
    let mut x: Vec<Vec3> = match warm {
        Some(s) if s.len() == flat.len() => s
            .iter()
            .zip(&flat)
            .map(|(p, f)| Vec3::new(p.x * h, p.y * h, f.z))
            .collect(),
        _ => flat.clone(),
    };
    let free: Vec<usize> = (0..x.len()).filter(|&k| strip.row[k] >= 2).collect();
    let weight: Vec<f64> = world
        .masses()
        .iter()
        .map(|m| m * STANDARD_GRAVITY)
        .collect();
    // fictitious masses: each particle's 3 × 3 stiffness block at the current shape (stiff
    // along its yarns, soft across them), times `scale`; unit steps
    let mut scale = 1.0;
    let mut mass = vec![Mat3::zeros(); x.len()];
    let mut inverse = vec![Mat3::zeros(); x.len()];
    update_masses(&world, &x, scale, &mut stiffness, &mut mass, &mut inverse);
    let mut v = vec![Vec3::zeros(); x.len()];
    let mut f = vec![Vec3::zeros(); x.len()];
    let mut trial = vec![LawState::default(); world.state_len()];
    let mirror = |p: Vec3| Vec3::new(-p.x, p.y, p.z);
    let load_steps = opts.load_steps_applied();
    let mut iterations = 0;
    for load_step in 1..=load_steps {
        // gravity's share of this load step; every step's equilibrium is measured against the
        // full weight, so the last one meets the same tolerance as a single release
        let load = load_step as f64 / load_steps as f64;
        let mut kinetic_damping = KineticDamping::default();
        v.fill(Vec3::zeros());
        if load_step > 1 {
            update_masses(&world, &x, scale, &mut stiffness, &mut mass, &mut inverse);
        }
        let mut settled = false;
        let mut progress = Progress {
            best: f64::INFINITY,
            at: iterations,
        };
        // each load step is a relaxation of its own, with its own budget
        let budget = iterations + MAX_ITERATIONS;
        while iterations < budget {
            iterations += 1;
            if iterations % 4096 == 0 {
                check_cancel(cancel)?;
            }
            for &(g, s) in &strip.ghosts {
                x[g] = mirror(x[s]);
            }
            // the trial states from the committed ones (those of the previous load step's
            // equilibrium) to x: the relaxation's own path does not move the friction states
            f.fill(Vec3::zeros());
            world.add_internal_forces(&x, &mut trial, &mut f);
            let mut worst = 0.0f64;
            for &k in &free {
                f[k].y -= load * weight[k];
                worst = worst.max(f[k].norm() / weight[k]);
            }
            if !worst.is_finite() {
                return Err(LabError::NotReached(format!(
                    "the cantilever relaxation at overhang {:.3} cm became non-finite",
                    l * 100.0
                )));
            }
            if worst <= FORCE_TOLERANCE {
                settled = true;
                break;
            }
            // no halving of the residual in STALL_ITERATIONS: the fictitious masses are too
            // light for some stiffness they do not hold (the steep friction of a connector near
            // its virgin state on a stretched cell), which the motion circles at an amplitude
            // far below the h/4 jump test
            let halved = worst < 0.5 * progress.best;
            let stalled = !halved && iterations - progress.at >= STALL_ITERATIONS;
            if halved || stalled {
                progress = Progress {
                    best: worst,
                    at: iterations,
                };
            }
            let mut kinetic = 0.0;
            let mut jump = 0.0f64;
            for &k in &free {
                v[k] += inverse[k] * f[k];
                kinetic += v[k].dot(&(mass[k] * v[k]));
                jump = jump.max(v[k].norm());
            }
            if stalled || jump > 0.25 * h {
                // stalled or unstable: heavier fictitious masses, start again from rest here
                scale *= 2.0;
                update_masses(&world, &x, scale, &mut stiffness, &mut mass, &mut inverse);
                v.fill(Vec3::zeros());
                kinetic_damping.restart();
                continue;
            }
            if kinetic_damping.stop(kinetic) {
                // past a peak of the kinetic energy: step back half a step, stop, and take the
                // stiffness blocks of the shape reached
                for &k in &free {
                    x[k] -= v[k] * 0.5;
                }
                v.fill(Vec3::zeros());
                update_masses(&world, &x, scale, &mut stiffness, &mut mass, &mut inverse);
                continue;
            }
            for &k in &free {
                x[k] += v[k];
            }
        }
        if !settled {
            return Err(LabError::NotReached(format!(
                "the cantilever at overhang {:.3} cm did not reach equilibrium (load step {load_step} \
                 of {load_steps}) in {MAX_ITERATIONS} iterations",
                l * 100.0
            )));
        }
        // the equilibrium's friction states (`trial` holds those of the x just reached)
        world.commit(&mut trial);
    }
    Ok(Relaxed {
        angle_deg: strip.tip_angle_deg(&x),
        shape: x.iter().map(|p| Vec3::new(p.x / h, p.y / h, p.z)).collect(),
        iterations,
    })
}

/// The relaxation's best residual so far and the iteration it was reached.
struct Progress {
    best: f64,
    at: usize,
}

/// Fictitious masses `scale`·K_kk (the stiffness block of each particle at `x`) and their
/// inverses.
fn update_masses(
    world: &ClothWorld,
    x: &[Vec3],
    scale: f64,
    stiffness: &mut [Mat3],
    mass: &mut [Mat3],
    inverse: &mut [Mat3],
) {
    stiffness.iter_mut().for_each(|s| *s = Mat3::zeros());
    if let Material::Kes(c) = &world.material {
        c.stiffness_blocks(x, stiffness);
    }
    for k in 0..x.len() {
        mass[k] = stiffness[k] * scale;
        inverse[k] = mass[k].try_inverse().unwrap_or_else(|| {
            Mat3::identity() / (scale * stiffness[k].trace()).max(f64::MIN_POSITIVE)
        });
    }
}
