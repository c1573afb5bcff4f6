//! Virtual KES-FB tests on the mesh: a strip clamped at both ends and driven quasi-statically
//! (static equilibrium at every sample); force per width [N/m] or moment per width \[N\] from
//! the clamp's reaction, scored as `kestrel validate` scores the written curve against the
//! card's law of that test and direction (NRMSE), and against the law the connectors carry.

use std::collections::BTreeMap;

use crate::kes::{
    to_kes_csv, Curve, Direction, KesTest, ReadingRules, WriteCurveError, DEG_RAD,
    GF_PER_CM_N_PER_M, PER_CM_PER_M,
};
use crate::material::MaterialLaw;
use crate::params::FabricParams;

use super::connectors::{KesConnectors, KesLaws};
use super::grid::Grid;
use super::implicit::BroydenStepper;
use super::pipeline::{Integrator, StepParameters};
use super::world::{ClothWorld, Material, Pin};
use super::{ClothError, Vec3};

/// A virtual KES test: which test, which yarn along the gauge, the protocol's extent and
/// the mesh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VirtualKesSpec {
    /// `tensile`, `shear` or `bending`.
    pub test: KesTest,
    /// The yarn lying along the gauge: `warp` or `weft`.
    pub direction: Direction,
    /// Samples per quarter of the path (tensile: per branch). Default 40.
    pub points: usize,
    /// Turning point: tensile force per width [gf/cm] (default 500), shear angle \[deg\]
    /// (default 8), bending curvature [1/cm] (default 2.5).
    pub max: Option<f64>,
    /// Cells along the gauge (default: tensile 5, shear 10, bending 10).
    pub gauge_cells: Option<usize>,
    /// Cells across the width (default: tensile 20, shear 40, bending 4).
    pub width_cells: Option<usize>,
}

/// The most a bending strip's gauge cell turns at the test's turning point \[rad\]: the
/// mesh's curve leaves the connectors' law by NRMSE 0.8 % at 1 rad a cell, 1.3 % at 1.25,
/// 2.0 % at 1.5, 4.8 % at 2 (cotton shirting card, 10 points), and fails beyond 2.1.
pub const MAX_BEND_PER_CELL_RAD: f64 = 1.25;

fn default_points() -> usize {
    40
}

impl VirtualKesSpec {
    pub fn new(test: KesTest, direction: Direction) -> Self {
        Self {
            test,
            direction,
            points: default_points(),
            max: None,
            gauge_cells: None,
            width_cells: None,
        }
    }

    /// Checks the turning point against [`VirtualKesSpec::max_range`] (finite, in the test's
    /// Kawabata unit) and that the path has at least 2 points, `gauge_cells` >= 2 and
    /// `width_cells` >= 1.
    pub fn validate(&self) -> Result<(), super::SettingError> {
        if let Some(max) = self.max {
            let (lo, hi, unit, rule) = Self::max_range(self.test);
            if !(lo..=hi).contains(&max) {
                return Err(super::SettingError::range("kes_test max", max, unit, rule));
            }
        }
        // a sample's mesh has at least 2 cells along its gauge (1 was run on 2 without a word)
        if let Some(g @ (0 | 1)) = self.gauge_cells {
            return Err(super::SettingError::range(
                "kes_test gauge_cells",
                g as f64,
                "",
                "at least 2, the least a sample's mesh has along its gauge",
            ));
        }
        if self.width_cells == Some(0) {
            return Err(super::SettingError::range(
                "kes_test width_cells",
                0.0,
                "",
                "at least 1",
            ));
        }
        if let (KesTest::Bending, Some(max)) = (self.test, self.max) {
            let cells = self.cells().0;
            let largest = self.largest_curvature();
            if max > largest {
                return Err(super::SettingError::BendingCells {
                    max,
                    cells,
                    largest,
                    needed: (max * cells as f64 / largest).ceil() as usize,
                });
            }
        }
        if self.points < 2 {
            return Err(super::SettingError::range(
                "kes_test points",
                self.points as f64,
                "",
                "at least 2",
            ));
        }
        Ok(())
    }

    /// The turning points a virtual test accepts, in its Kawabata unit: from a fiftieth of
    /// the KES-FB default to ten times it (tensile 500 gf/cm, shear 8 deg, bending 2.5 1/cm),
    /// shear at most 45 deg.
    pub fn max_range(test: KesTest) -> (f64, f64, &'static str, &'static str) {
        match test {
            KesTest::Shear => (0.16, 45.0, " deg", "0.16 to 45"),
            KesTest::Bending => (0.05, 25.0, " 1/cm", "0.05 to 25"),
            _ => (10.0, 5000.0, " gf/cm", "10 to 5000"),
        }
    }

    /// The largest curvature [1/cm] the bending strip's gauge cells bend to within 2 % of the
    /// law: [`MAX_BEND_PER_CELL_RAD`] a cell over the 1 cm gauge (12.5 1/cm at the default 10
    /// cells, 25 at 20).
    pub fn largest_curvature(&self) -> f64 {
        let (gauge_m, _) = self.sample_size();
        MAX_BEND_PER_CELL_RAD * self.cells().0 as f64 / (gauge_m * 100.0)
    }

    /// Gauge and width of the sample \[m\] (KES-FB: tensile 5 × 20 cm, shear 5 × 20 cm,
    /// bending 1 × 20 cm).
    pub(crate) fn sample_size(&self) -> (f64, f64) {
        match self.test {
            KesTest::Bending => (0.01, 0.20),
            _ => (0.05, 0.20),
        }
    }

    fn cells(&self) -> (usize, usize) {
        let (g, w) = match self.test {
            KesTest::Tensile => (5, 20),
            KesTest::Shear => (10, 40),
            _ => (10, 4),
        };
        (
            self.gauge_cells.unwrap_or(g).max(2),
            self.width_cells.unwrap_or(w).max(1),
        )
    }
}

/// The curve a virtual test produced, the card's law and the connectors' law on the same
/// path, SI.
#[derive(Debug, Clone, PartialEq)]
pub struct VirtualKesResult {
    pub spec: VirtualKesSpec,
    /// The card's `fabric` name.
    pub fabric: String,
    /// Strain [-], shear angle \[rad\] or curvature [1/m] of the sample.
    pub x: Vec<f64>,
    /// Force per width [N/m] or moment per width \[N\] from the clamp's reaction.
    pub mesh: Vec<f64>,
    /// The card's law of the test and direction along `x`, with the force offset it was
    /// fitted with (`FittedLaw::forces`): what `kestrel validate` drives on the written curve.
    pub law: Vec<f64>,
    /// RMS(law − mesh) / (max − min of mesh): `validate_curve` of the card on [`Self::curve`],
    /// the figure `kestrel validate` gives on the written CSV.
    pub nrmse: f64,
    /// The law the mesh's connectors carry along `x`, no offset: the tested yarn's law for
    /// tensile and bending; for shear the mean of the warp and weft laws (a cell carries each
    /// on half its area), whatever the direction.
    pub connectors_law: Vec<f64>,
    /// RMS(connectors_law − mesh) / (max − min of mesh): the mesh's own discretisation error.
    pub connectors_nrmse: f64,
    /// Static solves and force evaluations.
    pub solves: usize,
    pub evaluations: usize,
    /// Particles of the strip.
    pub particles: usize,
}

/// Geometry of the strip: gauge along X, width along Z, normal along Y.
struct Strip {
    grid: Grid,
    /// Gauge index and width index of each particle.
    gauge_of: Vec<usize>,
    width_of: Vec<usize>,
    n_gauge: usize,
    h_gauge: f64,
    h_width: f64,
    width: f64,
}

impl Strip {
    fn new(spec: &VirtualKesSpec) -> Result<Self, ClothError> {
        let (gauge, width) = spec.sample_size();
        let (gc, wc) = spec.cells();
        let (h_gauge, h_width) = (gauge / gc as f64, width / wc as f64);
        let (ng, nw) = (gc + 1, wc + 1);
        let grid = match spec.direction {
            Direction::Weft => Grid::new(nw, ng, h_width, h_gauge)?,
            _ => Grid::new(ng, nw, h_gauge, h_width)?,
        };
        let mut gauge_of = vec![0; grid.len()];
        let mut width_of = vec![0; grid.len()];
        for k in 0..grid.len() {
            let (i, j) = grid.coords(k);
            let (g, w) = match spec.direction {
                Direction::Weft => (j, i),
                _ => (i, j),
            };
            gauge_of[k] = g;
            width_of[k] = w;
        }
        Ok(Self {
            grid,
            gauge_of,
            width_of,
            n_gauge: ng,
            h_gauge,
            h_width,
            width,
        })
    }

    fn rest(&self, k: usize) -> (f64, f64) {
        (
            self.gauge_of[k] as f64 * self.h_gauge,
            self.width_of[k] as f64 * self.h_width,
        )
    }
}

/// Samples 0 → a → b → … along straight segments, `points` per unit of `scale`.
fn path(turns: &[f64], points: usize, scale: f64) -> Vec<f64> {
    let mut out = vec![turns[0]];
    for w in turns.windows(2) {
        let n = ((points as f64) * (w[1] - w[0]).abs() / scale)
            .round()
            .max(1.0) as usize;
        for k in 1..=n {
            out.push(w[0] + (w[1] - w[0]) * k as f64 / n as f64);
        }
    }
    out
}

/// Runs a virtual KES test on a strip of the fabric `card` (all six laws); `progress(done,
/// total)` is called after every sample. Fails when the card lacks a law, or when
/// `kestrel validate` would refuse the curve (a flat or non-finite one).
pub fn run_virtual_kes(
    spec: &VirtualKesSpec,
    card: &FabricParams,
    mut progress: impl FnMut(usize, usize),
) -> Result<VirtualKesResult, ClothError> {
    let laws = &KesLaws::from_params(card)?;
    let strip = Strip::new(spec)?;
    let dir = match spec.direction {
        Direction::Weft => 1,
        _ => 0,
    };
    let mesh_connectors = KesConnectors::new(&strip.grid, *laws);
    let x0: Vec<Vec3> = (0..strip.grid.len())
        .map(|k| {
            let (g, w) = strip.rest(k);
            Vec3::new(g, 0.0, w)
        })
        .collect();
    let mut world = ClothWorld::with_positions(
        strip.grid,
        x0.clone(),
        1.0,
        Material::Kes(Box::new(mesh_connectors)),
    )?;
    // the path and its clamps
    let (xs, clamp_rows): (Vec<f64>, usize) = match spec.test {
        KesTest::Tensile => {
            let law = &laws.traction[dir];
            let f_max = spec.max.unwrap_or(500.0) * GF_PER_CM_N_PER_M;
            let eps_max = strain_at_force(law, f_max);
            (path(&[0.0, eps_max, 0.0], spec.points, eps_max), 1)
        }
        KesTest::Shear => {
            let t = spec.max.unwrap_or(8.0) * DEG_RAD;
            (path(&[0.0, t, -t, 0.0], spec.points, t), 1)
        }
        _ => {
            let k = spec.max.unwrap_or(2.5) * PER_CM_PER_M;
            (path(&[0.0, k, -k, 0.0], spec.points, k), 2)
        }
    };
    let ng = strip.n_gauge;
    let gauge = (ng - 1) as f64 * strip.h_gauge;
    let is_fixed = |g: usize| g < clamp_rows;
    let is_moving = |g: usize| g + clamp_rows >= ng;
    // Shear: the free sides of a strip whose yarns take no compression cannot carry the
    // complementary shear, so they are guided on the homogeneous path (a picture frame).
    let nw = strip.grid.len() / ng;
    let guided = |k: usize| {
        spec.test == KesTest::Shear && (strip.width_of[k] == 0 || strip.width_of[k] + 1 == nw)
    };
    for (k, &p) in x0.iter().enumerate() {
        let g = strip.gauge_of[k];
        if is_fixed(g) || is_moving(g) || guided(k) {
            world.add_pin(Pin {
                particle: k,
                position: p,
                velocity: Vec3::zeros(),
            });
        }
    }
    let mut params = StepParameters::new(Integrator::Broyden, 1.0);
    let tolerance = 1e-10 * strip.h_gauge;
    params.max_iterations = 400;
    params.memory = 30;
    let mut solver = BroydenStepper::new();
    let mut result = VirtualKesResult {
        spec: *spec,
        fabric: card.fabric.clone(),
        x: Vec::with_capacity(xs.len()),
        mesh: Vec::with_capacity(xs.len()),
        law: Vec::new(),
        nrmse: 0.0,
        connectors_law: Vec::new(),
        connectors_nrmse: 0.0,
        solves: 0,
        evaluations: 0,
        particles: world.len(),
    };
    let mut force = vec![Vec3::zeros(); world.len()];
    let mut trial = vec![crate::material::LawState::default(); world.state_len()];
    for (n, &s) in xs.iter().enumerate() {
        // the homogeneous placement of the sample at s
        let place = |k: usize| -> Vec3 {
            let (g, w) = strip.rest(k);
            match spec.test {
                KesTest::Tensile => Vec3::new(g * (1.0 + s), 0.0, w),
                KesTest::Shear => Vec3::new(g * s.cos(), 0.0, w + g * s.sin()),
                _ => {
                    if s == 0.0 {
                        Vec3::new(g, 0.0, w)
                    } else {
                        // chain of chords h on a circle of radius 1/|s| tangent to X at 0
                        let r = 1.0 / s;
                        let phi = 2.0 * (strip.h_gauge * s.abs() / 2.0).asin() * s.signum();
                        let a = phi * (g / strip.h_gauge);
                        Vec3::new(r * a.sin(), r * (1.0 - a.cos()), w)
                    }
                }
            }
        };
        // every particle at the homogeneous placement (the equilibrium of a uniform strip,
        // which the static solve then checks and corrects)
        for k in 0..world.len() {
            world.x[k] = place(k);
        }
        let held: Vec<usize> = world.pins().iter().map(|p| p.particle).collect();
        for k in held {
            world.add_pin(Pin {
                particle: k,
                position: place(k),
                velocity: Vec3::zeros(),
            });
        }
        let out = solver.solve_static(&params, tolerance, &mut world);
        result.solves += 1;
        result.evaluations += out.evaluations;
        // reaction on the moving clamp, with the committed states of the equilibrium
        force.fill(Vec3::zeros());
        world.add_internal_forces(&world.x, &mut trial, &mut force);
        let moving: Vec<usize> = (0..world.len())
            .filter(|&k| is_moving(strip.gauge_of[k]))
            .collect();
        let measured = match spec.test {
            KesTest::Tensile => -moving.iter().map(|&k| force[k].x).sum::<f64>() / strip.width,
            KesTest::Shear => {
                // virtual work: F_s·A·dθ = −Σ f_k·(∂x_k/∂θ)·dθ over the held particles
                let t = Vec3::new(-s.sin(), 0.0, s.cos());
                let work: f64 = (0..world.len())
                    .filter(|&k| world.is_pinned(k))
                    .map(|k| force[k].dot(&t) * strip.rest(k).0)
                    .sum();
                -work / (gauge * strip.width)
            }
            _ => {
                let c: Vec3 =
                    moving.iter().map(|&k| world.x[k]).sum::<Vec3>() / moving.len() as f64;
                let m: Vec3 = moving
                    .iter()
                    .map(|&k| (world.x[k] - c).cross(&force[k]))
                    .sum();
                // the clamp resists the bending: the moment the sample needs is −(torque on
                // the clamp) about the width axis Z
                -m.z / strip.width
            }
        };
        result.x.push(s);
        result.mesh.push(measured);
        progress(n + 1, xs.len());
    }
    result.connectors_law = match spec.test {
        KesTest::Tensile => laws.traction[dir].drive(&result.x),
        KesTest::Shear => {
            let a = laws.shear[0].drive(&result.x);
            let b = laws.shear[1].drive(&result.x);
            a.iter().zip(&b).map(|(p, q)| 0.5 * (p + q)).collect()
        }
        _ => laws.bending[dir].drive(&result.x),
    };
    result.connectors_nrmse = crate::params::nrmse(&result.mesh, &result.connectors_law);
    // the card's law scored exactly as `kestrel validate` scores the curve written
    let validation =
        crate::validate::validate_curve(card, &result.curve(), &ReadingRules::default()).map_err(
            |_| {
                let (lo, hi) = result
                    .mesh
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                        (a.min(v), b.max(v))
                    });
                ClothError::Invalid(format!(
                    "virtual KES {} {} test: the mesh's curve (from {} to {} N/m or N) cannot \
                     be scored against the card's law: the strip was driven further than its \
                     cells follow; lower max or use more gauge cells",
                    spec.test,
                    spec.direction,
                    crate::friction::short_number(lo),
                    crate::friction::short_number(hi)
                ))
            },
        )?;
    result.law = validation.predicted;
    result.nrmse = validation.nrmse;
    Ok(result)
}

/// The strain at which the virgin loading branch of a traction law reaches `f_max` [N/m].
fn strain_at_force(law: &crate::material::TractionLaw, f_max: f64) -> f64 {
    let f = |e: f64| law.drive(&[e])[0];
    let mut hi = law.eps1.max(1e-4);
    while f(hi) < f_max && hi < 10.0 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < f_max {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

impl VirtualKesResult {
    /// The curve as a KES curve (SI), the one [`Self::to_csv`] writes; its metadata names the
    /// source and gives both NRMSE figures.
    pub fn curve(&self) -> Curve {
        let mut metadata = BTreeMap::new();
        metadata.insert(
            "source".to_string(),
            format!(
                "kestrel virtual KES test on a {}-particle mesh (quasi-static)",
                self.particles
            ),
        );
        metadata.insert(
            "nrmse vs card law".to_string(),
            format!("{:.6}", self.nrmse),
        );
        metadata.insert(
            "nrmse vs connectors law".to_string(),
            format!("{:.6}", self.connectors_nrmse),
        );
        Curve {
            fabric: self.fabric.clone(),
            test: self.spec.test,
            direction: self.spec.direction,
            x: self.x.clone(),
            y: self.mesh.clone(),
            metadata,
            source: None,
            sha256: None,
        }
    }

    /// The curve as a KES curve file (docs/kes.md): Kawabata units, ten significant digits.
    pub fn to_csv(&self) -> Result<String, WriteCurveError> {
        to_kes_csv(&self.curve())
    }
}
