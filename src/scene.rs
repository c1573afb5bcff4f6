//! Scene files (TOML) → a cloth world and its step parameters, or a virtual KES test. Lengths
//! in m, times in s, densities in kg/m², stiffnesses in N/m (format in docs/cloth.md).

use std::path::{Path, PathBuf};

use nalgebra::Vector3;
use serde::Deserialize;
use thiserror::Error;

use crate::cloth::record::Camera;
use crate::cloth::virtual_kes::VirtualKesSpec;
use crate::cloth::{
    Anchor, ClothError, ClothWorld, CollisionPotential, Grid, Integrator, KesConnectors, KesLaws,
    Loads, Material, Obstacle, Preconditioner, ProvotConstraints, SpringNetwork, SpringStiffness,
    StepParameters, TerzopoulosParams, TerzopoulosSurface, Vec3,
};
use crate::kes::{Direction, KesTest};
use crate::params::{FabricParams, ParamsError};

#[derive(Debug, Error)]
pub enum SceneError {
    #[error("cannot read scene {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error(transparent)]
    Params(#[from] ParamsError),
    #[error("{path}: {source}")]
    Cloth {
        path: PathBuf,
        #[source]
        source: ClothError,
    },
}

/// `[grid]`: a flat rectangular sheet.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// Particles along the warp and along the weft.
    pub nu: usize,
    pub nv: usize,
    /// Extent along the warp and the weft [m].
    pub size: [f64; 2],
    /// Position of p(0, 0) [m]. Default the origin.
    #[serde(default)]
    pub origin: [f64; 3],
    /// Warp direction. Default +X.
    #[serde(default = "x_axis")]
    pub warp: [f64; 3],
    /// Weft direction. Default +Z.
    #[serde(default = "z_axis")]
    pub weft: [f64; 3],
    /// Areal density ρ_A [kg/m²].
    pub areal_density: f64,
}

fn x_axis() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}

fn z_axis() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

/// `[material]`: Provot's springs or KES connectors from a fabric parameter file.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaterialSpec {
    /// Stiffness of each family [N/m].
    Springs {
        structural: f64,
        shear: f64,
        flexion: f64,
    },
    /// A fabric parameter file, relative to the scene file.
    Kes { params: PathBuf },
    /// Terzopoulos et al.'s elastic surface: η₁₁, η₂₂, η₁₂ [N/m], ξ₁₁, ξ₂₂, ξ₁₂ [N·m],
    /// `metric` (`prescribed`, `linear`), `bending` (`curvature`, `linear`), damping density
    /// [kg/(m²·s)], `tangent` (stretch implicit in the semi-implicit step).
    Terzopoulos(TerzopoulosParams),
}

/// `[[anchors]]`: a Hookean spring from particle (i, j) to a world point (Terzopoulos eq. 10).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorSpec {
    pub particle: [usize; 2],
    /// World point [m].
    pub point: [f64; 3],
    /// Spring constant [N/m].
    pub stiffness: f64,
}

/// `[integrator]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntegratorSpec {
    /// `explicit`, `broyden`, `newton_krylov` or `semi_implicit`.
    pub kind: Integrator,
    /// Time step [s].
    pub dt: f64,
    /// Steps of a run (the command line may change it).
    pub steps: u64,
    /// Provot's constraints (`structural`, `shear` τ_c as fractions, `passes`).
    #[serde(default)]
    pub constraints: ProvotConstraints,
    /// Implicit tolerance on the scaled residual max |D_i⁻¹g_i| [m].
    pub tolerance: Option<f64>,
    pub max_iterations: Option<usize>,
    pub memory: Option<usize>,
    /// Broyden's H₀: `stretch` (default) or `block`.
    pub preconditioner: Option<Preconditioner>,
    pub krylov_dim: Option<usize>,
    pub forcing: Option<f64>,
}

/// `[pins]`: particles held where they start.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinSpec {
    /// Particles (i, j).
    #[serde(default)]
    pub particles: Vec<[usize; 2]>,
    /// Whole borders: `i_min`, `i_max`, `j_min`, `j_max`.
    #[serde(default)]
    pub edges: Vec<String>,
}

/// `[kes_test]`: a virtual KES test instead of a dynamic run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KesTestSpec {
    pub test: KesTest,
    pub direction: Direction,
    pub points: Option<usize>,
    pub max: Option<f64>,
    pub gauge_cells: Option<usize>,
    pub width_cells: Option<usize>,
    /// CSV written by default, relative to the working directory.
    pub output: Option<PathBuf>,
}

/// A scene file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub grid: Option<GridSpec>,
    pub material: MaterialSpec,
    pub integrator: Option<IntegratorSpec>,
    #[serde(default)]
    pub loads: Loads,
    #[serde(default)]
    pub pins: PinSpec,
    #[serde(default)]
    pub obstacles: Vec<Obstacle>,
    /// Exponential collision potentials (`[[potentials]]`).
    #[serde(default)]
    pub potentials: Vec<CollisionPotential>,
    #[serde(default)]
    pub anchors: Vec<AnchorSpec>,
    pub camera: Option<Camera>,
    pub kes_test: Option<KesTestSpec>,
    /// Impulse palette and precomputation settings of a reduced model (docs/reduced.md).
    pub reduced: Option<ReducedSpec>,
}

/// A dynamic scene ready to run.
#[derive(Debug, Clone)]
pub struct DynamicScene {
    pub name: String,
    pub world: ClothWorld,
    pub params: StepParameters,
    pub steps: u64,
    pub camera: Option<Camera>,
    /// The impulse palette, when the scene declares one (`[reduced]`).
    pub reduced: Option<ReducedSpec>,
}

/// `[reduced.door]`: the pinned particles ride on a door turning about a hinge axis.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct DoorSpec {
    /// A point on the hinge axis [m].
    pub hinge: [f64; 3],
    /// Direction of the hinge axis (positive angles turn right-handed about it). Default +Y.
    #[serde(default = "y_axis")]
    pub axis: [f64; 3],
    /// Range of the door angle [deg], starting at the lower end. Default 0..90.
    #[serde(default = "door_range")]
    pub range_deg: [f64; 2],
}

fn y_axis() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}

fn door_range() -> [f64; 2] {
    [0.0, 90.0]
}

/// `[[reduced.palette]]`: one (α^I, α^F) pair of the impulse palette (James & Fatahalian eq. 11).
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PaletteEntrySpec {
    /// Name used in impulse sequences (`open:1.5,stop:1`).
    pub name: String,
    /// Key that applies it in the TUI (one character).
    pub key: char,
    /// α^I: velocity added to every free particle on the first step [m/s]. Default zero.
    #[serde(default)]
    pub impulse: [f64; 3],
    /// α^F: door angular velocity while the entry lasts [rad/s]. Default 0.
    #[serde(default)]
    pub angular_velocity: f64,
    /// α^F: wind velocity while the entry lasts [m/s] (needs `[loads.wind]`); default the
    /// scene's wind (or none).
    pub wind: Option<[f64; 3]>,
    /// Entries that may follow this one (names); empty: any.
    #[serde(default)]
    pub next: Vec<String>,
}

/// `[reduced]`: the impulse palette and how to sample it.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReducedSpec {
    pub palette: Vec<PaletteEntrySpec>,
    /// The door carrying the pins, if any.
    pub door: Option<DoorSpec>,
    /// Entry the scene settles under before sampling and playback starts from (name). Default
    /// the first.
    pub start: Option<String>,
    /// Settling time under `start` before sampling [s]. Default 1.
    #[serde(default = "one")]
    pub settle: f64,
    /// Simulated time of the random palette sequence [s].
    pub duration: f64,
    /// Bounds of one IRF's duration [s].
    pub t_min: f64,
    pub t_max: f64,
    /// Steps between recorded states. Default 10.
    #[serde(default = "ten")]
    pub every: u32,
    /// ε: keep rank r with σ_r ≥ ε·σ₁. Default 0.015.
    #[serde(default = "eps")]
    pub rank_tolerance: f64,
    /// Most rank kept. Default 64.
    #[serde(default = "max_rank")]
    pub max_rank: usize,
    /// λ of the blend e^(−λt) (eq. 12) [1/s]. Default 4.
    #[serde(default = "blend")]
    pub blend_rate: f64,
    /// IRFs shorter than this fraction of t_min are pruned. Default 0.5.
    #[serde(default = "half")]
    pub prune_short: f64,
    /// An IRF is a dead end when its end lies farther from every IRF start than this multiple
    /// of the median such distance (metric of eq. 9). Default 4.
    #[serde(default = "four")]
    pub dead_end_factor: f64,
    /// Seed of the random sequence. Default 1.
    #[serde(default = "seed")]
    pub seed: u64,
}

fn one() -> f64 {
    1.0
}
fn ten() -> u32 {
    10
}
fn eps() -> f64 {
    0.015
}
fn max_rank() -> usize {
    64
}
fn blend() -> f64 {
    4.0
}
fn half() -> f64 {
    0.5
}
fn four() -> f64 {
    4.0
}
fn seed() -> u64 {
    1
}

/// Index of a palette entry by name, or by key when `name` is one character.
pub fn palette_index(palette: &[PaletteEntrySpec], name: &str) -> Option<usize> {
    palette.iter().position(|e| e.name == name).or_else(|| {
        let mut c = name.chars();
        match (c.next(), c.next()) {
            (Some(k), None) => palette.iter().position(|e| e.key == k),
            _ => None,
        }
    })
}

/// Whether palette entry `to` may follow entry `from` (an empty `next` allows any).
pub fn palette_allows(palette: &[PaletteEntrySpec], from: usize, to: usize) -> bool {
    let next = &palette[from].next;
    next.is_empty() || next.iter().any(|n| palette[to].name == *n)
}

impl ReducedSpec {
    /// Index of an entry by name or key.
    pub fn find(&self, name: &str) -> Option<usize> {
        palette_index(&self.palette, name)
    }

    /// Index of the start entry.
    pub fn start_index(&self) -> usize {
        self.start
            .as_deref()
            .and_then(|s| self.find(s))
            .unwrap_or(0)
    }

    /// Whether entry `to` may follow entry `from`.
    pub fn allows(&self, from: usize, to: usize) -> bool {
        palette_allows(&self.palette, from, to)
    }

    /// Checks the palette, durations and tolerances; `wind` says whether the scene has wind.
    pub fn validate(&self, wind: bool) -> Result<(), String> {
        if self.palette.is_empty() {
            return Err("reduced.palette: needs at least one entry".into());
        }
        for (i, e) in self.palette.iter().enumerate() {
            if self.palette[..i]
                .iter()
                .any(|o| o.name == e.name || o.key == e.key)
            {
                return Err(format!(
                    "reduced.palette `{}`: name or key `{}` used twice",
                    e.name, e.key
                ));
            }
            for n in &e.next {
                if !self.palette.iter().any(|o| o.name == *n) {
                    return Err(format!(
                        "reduced.palette `{}`: next names `{n}`, not an entry",
                        e.name
                    ));
                }
            }
            if e.wind.is_some() && !wind {
                return Err(format!(
                    "reduced.palette `{}`: wind needs [loads.wind] for its coefficient",
                    e.name
                ));
            }
            if e.angular_velocity != 0.0 && self.door.is_none() {
                return Err(format!(
                    "reduced.palette `{}`: angular_velocity needs [reduced.door]",
                    e.name
                ));
            }
            let finite = e
                .impulse
                .iter()
                .chain(e.wind.iter().flatten())
                .all(|v| v.is_finite())
                && e.angular_velocity.is_finite();
            if !finite {
                return Err(format!(
                    "reduced.palette `{}`: values must be finite",
                    e.name
                ));
            }
        }
        if let Some(s) = &self.start {
            if self.find(s).is_none() {
                return Err(format!("reduced.start `{s}`: not a palette entry"));
            }
        }
        if let Some(d) = &self.door {
            if d.range_deg[0] >= d.range_deg[1]
                || d.range_deg.iter().any(|v| !v.is_finite())
                || !d.hinge.iter().all(|v| v.is_finite())
            {
                return Err("reduced.door: range_deg must be [lo, hi] with lo < hi".into());
            }
            if Vector3::from(d.axis).norm() < 1e-12 {
                return Err("reduced.door: axis is zero".into());
            }
        }
        let pos = |v: f64| v.is_finite() && v > 0.0;
        if !(pos(self.t_min) && self.t_max >= self.t_min && pos(self.duration)) {
            return Err("reduced: need 0 < t_min <= t_max and duration > 0 [s]".into());
        }
        if !(self.settle.is_finite() && self.settle >= 0.0) || self.every == 0 {
            return Err("reduced: settle must be >= 0 s and every >= 1".into());
        }
        if !(self.rank_tolerance > 0.0 && self.rank_tolerance < 1.0) || self.max_rank == 0 {
            return Err("reduced: rank_tolerance must be in (0, 1), max_rank >= 1".into());
        }
        if !(pos(self.blend_rate) && self.prune_short >= 0.0 && pos(self.dead_end_factor)) {
            return Err("reduced: blend_rate, dead_end_factor > 0, prune_short >= 0".into());
        }
        Ok(())
    }
}

/// A virtual KES test ready to run.
#[derive(Debug, Clone)]
pub struct VirtualKesScene {
    pub name: String,
    pub fabric: String,
    pub spec: VirtualKesSpec,
    pub laws: KesLaws,
    pub output: Option<PathBuf>,
}

/// What a scene file describes.
#[derive(Debug, Clone)]
pub enum Scene {
    Dynamic(Box<DynamicScene>),
    VirtualKes(Box<VirtualKesScene>),
}

impl SceneFile {
    /// Reads and parses a scene file.
    pub fn read(path: &Path) -> Result<Self, SceneError> {
        let text = std::fs::read_to_string(path).map_err(|source| SceneError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        toml::from_str(&text).map_err(|e| SceneError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

impl Scene {
    /// Reads a scene file and builds what it describes; a parameter file is found relative
    /// to the scene file.
    pub fn load(path: &Path) -> Result<Self, SceneError> {
        let file = SceneFile::read(path)?;
        Self::build(&file, path)
    }

    /// Builds a scene parsed from `path`.
    pub fn build(file: &SceneFile, path: &Path) -> Result<Self, SceneError> {
        let invalid = |message: String| SceneError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let cloth = |source: ClothError| SceneError::Cloth {
            path: path.to_path_buf(),
            source,
        };
        let base = path.parent().unwrap_or(Path::new("."));
        let fabric = match &file.material {
            MaterialSpec::Kes { params } => Some(FabricParams::read(&base.join(params))?),
            MaterialSpec::Springs { .. } | MaterialSpec::Terzopoulos(_) => None,
        };
        if let Some(t) = &file.kes_test {
            let Some(fabric) = fabric else {
                return Err(invalid("a [kes_test] needs material kind = \"kes\"".into()));
            };
            if !matches!(t.test, KesTest::Tensile | KesTest::Shear | KesTest::Bending)
                || t.direction == Direction::Bias
            {
                return Err(invalid(
                    "kes_test: test must be tensile, shear or bending, direction warp or weft"
                        .into(),
                ));
            }
            let mut spec = VirtualKesSpec::new(t.test, t.direction);
            spec.points = t.points.unwrap_or(spec.points).max(2);
            spec.max = t.max;
            spec.gauge_cells = t.gauge_cells;
            spec.width_cells = t.width_cells;
            let laws = KesLaws::from_params(&fabric).map_err(cloth)?;
            return Ok(Scene::VirtualKes(Box::new(VirtualKesScene {
                name: file.name.clone(),
                fabric: fabric.fabric.clone(),
                spec,
                laws,
                output: t.output.clone(),
            })));
        }
        let g = file
            .grid
            .as_ref()
            .ok_or_else(|| invalid("missing [grid]".into()))?;
        let integ = file
            .integrator
            .as_ref()
            .ok_or_else(|| invalid("missing [integrator]".into()))?;
        if g.nu < 2 || g.nv < 2 {
            return Err(invalid(format!(
                "grid {} x {}: needs at least 2 x 2",
                g.nu, g.nv
            )));
        }
        let grid = Grid::new(
            g.nu,
            g.nv,
            g.size[0] / (g.nu - 1) as f64,
            g.size[1] / (g.nv - 1) as f64,
        )
        .map_err(cloth)?;
        let material = match (&file.material, &fabric) {
            (
                MaterialSpec::Springs {
                    structural,
                    shear,
                    flexion,
                },
                _,
            ) => Material::Springs(
                SpringNetwork::new(
                    &grid,
                    SpringStiffness {
                        structural: *structural,
                        shear: *shear,
                        flexion: *flexion,
                    },
                )
                .map_err(cloth)?,
            ),
            (MaterialSpec::Kes { .. }, Some(f)) => Material::Kes(Box::new(KesConnectors::new(
                &grid,
                KesLaws::from_params(f).map_err(cloth)?,
            ))),
            (MaterialSpec::Kes { .. }, None) => {
                return Err(invalid("kes material without parameters".into()))
            }
            // built on the flat sheet below, which is its natural shape
            (MaterialSpec::Terzopoulos(_), _) => Material::Springs(
                SpringNetwork::new(
                    &grid,
                    SpringStiffness {
                        structural: 0.0,
                        shear: 0.0,
                        flexion: 0.0,
                    },
                )
                .map_err(cloth)?,
            ),
        };
        let mut world = ClothWorld::flat(
            grid,
            Vec3::from(g.origin),
            Vec3::from(g.warp),
            Vec3::from(g.weft),
            g.areal_density,
            material,
        )
        .map_err(cloth)?;
        if let MaterialSpec::Terzopoulos(params) = &file.material {
            params.validate().map_err(invalid)?;
            world.material = Material::Terzopoulos(Box::new(
                TerzopoulosSurface::new(&grid, world.positions(), *params).map_err(cloth)?,
            ));
        }
        if integ.kind == Integrator::SemiImplicit
            && !matches!(world.material, Material::Terzopoulos(_))
        {
            return Err(invalid(
                "integrator semi_implicit needs material kind = \"terzopoulos\"".into(),
            ));
        }
        for p in &file.potentials {
            p.validate().map_err(invalid)?;
        }
        world.potentials = file.potentials.clone();
        for a in &file.anchors {
            let [i, j] = a.particle;
            if i >= g.nu || j >= g.nv {
                return Err(invalid(format!(
                    "anchors: particle ({i},{j}) outside the {} x {} grid",
                    g.nu, g.nv
                )));
            }
            if !(a.stiffness.is_finite()
                && a.stiffness >= 0.0
                && a.point.iter().all(|c| c.is_finite()))
            {
                return Err(invalid(format!(
                    "anchors: stiffness = {} N/m must be finite and >= 0, point finite",
                    a.stiffness
                )));
            }
            world.anchors.push(Anchor {
                particle: grid.index(i, j),
                point: a.point,
                stiffness: a.stiffness,
            });
        }
        file.loads.validate().map_err(invalid)?;
        world.loads = file.loads;
        for o in &file.obstacles {
            o.validate().map_err(invalid)?;
        }
        world.obstacles = file.obstacles.clone();
        for &[i, j] in &file.pins.particles {
            world.pin(i, j).map_err(cloth)?;
        }
        for e in &file.pins.edges {
            let list: Vec<(usize, usize)> = match e.as_str() {
                "i_min" => (0..g.nv).map(|j| (0, j)).collect(),
                "i_max" => (0..g.nv).map(|j| (g.nu - 1, j)).collect(),
                "j_min" => (0..g.nu).map(|i| (i, 0)).collect(),
                "j_max" => (0..g.nu).map(|i| (i, g.nv - 1)).collect(),
                other => {
                    return Err(invalid(format!(
                        "pins: unknown edge `{other}` — expected i_min, i_max, j_min or j_max"
                    )))
                }
            };
            for (i, j) in list {
                world.pin(i, j).map_err(cloth)?;
            }
        }
        let mut params = StepParameters::new(integ.kind, integ.dt);
        params.constraints = integ.constraints;
        if let Some(t) = integ.tolerance {
            params.tolerance = t;
        }
        if let Some(m) = integ.max_iterations {
            params.max_iterations = m;
        }
        if let Some(m) = integ.memory {
            params.memory = m;
        }
        if let Some(p) = integ.preconditioner {
            params.preconditioner = p;
        }
        if let Some(m) = integ.krylov_dim {
            params.krylov_dim = m;
        }
        if let Some(f) = integ.forcing {
            params.forcing = f;
        }
        params.validate().map_err(invalid)?;
        if let Some(r) = &file.reduced {
            r.validate(world.loads.wind.is_some()).map_err(invalid)?;
        }
        Ok(Scene::Dynamic(Box::new(DynamicScene {
            name: file.name.clone(),
            world,
            params,
            steps: integ.steps,
            camera: file.camera,
            reduced: file.reduced.clone(),
        })))
    }
}
