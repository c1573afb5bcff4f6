//! The scene file as written: `[grid]`, `[material]`, `[integrator]`, `[pins]`, `[[anchors]]`,
//! `[kes_test]` and the sections the cloth types read themselves; SI units. Paths (`params`,
//! `output`) are relative to the scene file's folder.

use std::path::PathBuf;

use serde::Deserialize;

use super::ReducedSpec;
use crate::cloth::record::Camera;
use crate::cloth::{
    CollisionPotential, Integrator, Loads, Obstacle, Preconditioner, ProvotConstraints,
    TerzopoulosParams,
};
use crate::kes::{Direction, KesTest};

/// `[grid]`: a flat rectangular sheet.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// Particles along the warp and along the weft.
    pub nu: usize,
    pub nv: usize,
    /// Extent along the warp and the weft \[m\].
    pub size: [f64; 2],
    /// Position of p(0, 0) \[m\]. Default the origin.
    #[serde(default)]
    pub origin: [f64; 3],
    /// Warp direction. Default +X.
    #[serde(default = "x_axis")]
    pub warp: [f64; 3],
    /// Weft direction. Default +Z.
    #[serde(default = "z_axis")]
    pub weft: [f64; 3],
    /// Areal density ρ_A [kg/m²]; left out, the fabric card's (`kind = "kes"`).
    pub areal_density: Option<f64>,
    /// Out-of-plane imperfection a \[m\]: particle (i, j) starts a·sin(πs)·sin(πt) along
    /// warp × weft (s = i/(nu − 1), t = j/(nv − 1)), a dome zero on the border, so that a sheet
    /// whose plane contains every load can leave it. Default 0 (flat).
    #[serde(default)]
    pub imperfection: f64,
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
    /// World point \[m\].
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
    /// Time step \[s\].
    pub dt: f64,
    /// Steps of a run (the command line may change it).
    pub steps: u64,
    /// Provot's constraints (`structural`, `shear` τ_c as fractions, `passes`).
    #[serde(default)]
    pub constraints: ProvotConstraints,
    /// Implicit tolerance on the scaled residual max |D_i⁻¹g_i| \[m\].
    pub tolerance: Option<f64>,
    pub max_iterations: Option<usize>,
    pub memory: Option<usize>,
    /// Broyden's H₀: `stretch` (default) or `block`.
    pub preconditioner: Option<Preconditioner>,
    pub krylov_dim: Option<usize>,
    pub forcing: Option<f64>,
}

impl IntegratorSpec {
    /// The solver settings (of [`Integrator::SOLVER_KEYS`]) this table gives.
    pub(crate) fn solver_keys(&self) -> Vec<&'static str> {
        [
            ("tolerance", self.tolerance.is_some()),
            ("max_iterations", self.max_iterations.is_some()),
            ("memory", self.memory.is_some()),
            ("krylov_dim", self.krylov_dim.is_some()),
            ("forcing", self.forcing.is_some()),
            ("preconditioner", self.preconditioner.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, given)| given.then_some(key))
        .collect()
    }
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
    /// CSV written by default, relative to the scene file's folder (like `params`).
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
