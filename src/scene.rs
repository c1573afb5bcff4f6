//! Scene files (TOML) → a cloth world and its step parameters, or a virtual KES test. Lengths
//! in m, times in s, densities in kg/m², stiffnesses in N/m (format in docs/cloth.md).

mod card;
mod file;
mod hang;
mod overlap;
mod reduced;
mod strict;

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::cloth::record::Camera;
use crate::cloth::virtual_kes::VirtualKesSpec;
use crate::cloth::{
    check_steps, Anchor, ClothError, ClothWorld, Grid, Integrator, KesConnectors, KesLaws,
    Material, SettingError, SpringNetwork, SpringStiffness, StepParameters, TerzopoulosSurface,
    Vec3,
};
use crate::input::{bytes_label, MEMORY_BUDGET};
use crate::kes::{Direction, KesTest};
use crate::params::{FabricParams, ParamsError};

pub use card::{ObstacleContact, SceneNumbers, ValueSource};
pub use file::{
    AnchorSpec, GridSpec, IntegratorSpec, KesTestSpec, MaterialSpec, PinSpec, SceneFile,
};
pub use hang::{hanging_scene, HANGING_IMPERFECTION_M};
pub(crate) use reduced::validate_palette;
pub use reduced::{
    palette_allows, palette_index, DoorSpec, DurationLaw, IrfEnd, OffsetBlend, PaletteEntrySpec,
    ReducedSpec, ReducedSpecError, Sampling,
};

#[derive(Debug, Error)]
pub enum SceneError {
    #[error("cannot read scene {0}")]
    Read(#[from] crate::input::Unreadable),
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Setting {
        path: PathBuf,
        #[source]
        source: SettingError,
    },
    #[error("{path}: {source}")]
    Reduced {
        path: PathBuf,
        #[source]
        source: ReducedSpecError,
    },
    /// The scene's card (`params =`) could not be read: the scene is named, then the card.
    #[error("{path}: {source}")]
    Params {
        path: PathBuf,
        #[source]
        source: Box<ParamsError>,
    },
    #[error("{path}: {source}")]
    Cloth {
        path: PathBuf,
        #[source]
        source: ClothError,
    },
}

/// Most samples per unit of a virtual KES test's path, and most cells of its strip.
pub const MAX_KES_POINTS: usize = 100_000;
pub const MAX_KES_CELLS: usize = 1_000;

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
    /// The areal density and the obstacles' contact numbers, with where each comes from
    /// (the scene or its fabric card).
    pub numbers: SceneNumbers,
    /// The solver settings (of [`Integrator::SOLVER_KEYS`]) the scene's `[integrator]` gives.
    pub integrator_keys: Vec<&'static str>,
}

/// A virtual KES test ready to run.
#[derive(Debug, Clone)]
pub struct VirtualKesScene {
    pub name: String,
    pub spec: VirtualKesSpec,
    /// The fabric card (all six laws, checked on loading).
    pub card: FabricParams,
    /// The CSV the scene asks for, resolved against the scene file's folder.
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
        let text = crate::input::file_text(path, crate::input::SMALL_FILE_LIMIT).map_err(|e| {
            match crate::input::binary_kind_of(path) {
                Some(what) => SceneError::Invalid {
                    path: path.to_path_buf(),
                    message: format!("not a scene file but {what}"),
                },
                None => SceneError::Read(e),
            }
        })?;
        let file: Self = toml::from_str(&text).map_err(|e| SceneError::Parse {
            path: path.to_path_buf(),
            message: crate::input::clipped(&e.to_string()),
        })?;
        let invalid = |message: String| SceneError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        strict::check_name(&file.name).map_err(invalid)?;
        strict::check(&text, file.kes_test.is_some()).map_err(invalid)?;
        Ok(file)
    }

    /// The fabric card a kes material names, resolved against the folder of the scene file
    /// `path` (None for the other materials).
    fn card_path(&self, path: &Path) -> Option<PathBuf> {
        match &self.material {
            MaterialSpec::Kes { params } => {
                Some(path.parent().unwrap_or(Path::new(".")).join(params))
            }
            MaterialSpec::Springs { .. } | MaterialSpec::Terzopoulos(_) => None,
        }
    }
}

/// The out-of-plane offset \[m\] of particle `k` for an imperfection of amplitude `a` \[m\]:
/// a·sin(πs)·sin(πt), s and t its place along the warp and the weft in [0, 1].
pub(crate) fn imperfection_at(grid: &Grid, k: usize, a: f64) -> f64 {
    let (i, j) = grid.coords(k);
    let s = i as f64 / (grid.nu - 1).max(1) as f64;
    let t = j as f64 / (grid.nv - 1).max(1) as f64;
    a * (std::f64::consts::PI * s).sin() * (std::f64::consts::PI * t).sin()
}

impl Scene {
    /// Reads a scene file and builds what it describes; every path the file names (`params`,
    /// `output`) is relative to the scene file's folder.
    pub fn load(path: &Path) -> Result<Self, SceneError> {
        let file = SceneFile::read(path)?;
        Self::build(&file, path)
    }

    /// The files loading `path` reads: the scene, and the fabric card its material names
    /// (resolved against the scene's folder, as loading resolves it). A scene that cannot be
    /// parsed gives itself alone (loading it says why).
    pub fn files_read(path: &Path) -> Vec<PathBuf> {
        let card = SceneFile::read(path).ok().and_then(|f| f.card_path(path));
        std::iter::once(path.to_path_buf()).chain(card).collect()
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
        let setting = |source: SettingError| SceneError::Setting {
            path: path.to_path_buf(),
            source,
        };
        let base = path.parent().unwrap_or(Path::new("."));
        let card = match file.card_path(path) {
            Some(card) => {
                let fabric = FabricParams::read(&card).map_err(|source| SceneError::Params {
                    path: path.to_path_buf(),
                    source: Box::new(source),
                })?;
                Some((card, fabric))
            }
            None => None,
        };
        let fabric = card.as_ref().map(|(_, f)| f);
        if let Some(t) = &file.kes_test {
            let Some(fabric) = fabric else {
                return Err(invalid("a [kes_test] needs material kind = \"kes\"".into()));
            };
            if !matches!(t.test, KesTest::Tensile | KesTest::Shear | KesTest::Bending)
                || !matches!(t.direction, Direction::Warp | Direction::Weft)
            {
                return Err(invalid(format!(
                    "kes_test: test = \"{}\", direction = \"{}\": a virtual KES test is \
                     tensile, shear or bending, and its direction warp or weft (the strip's \
                     yarn)",
                    t.test, t.direction
                )));
            }
            let mut spec = VirtualKesSpec::new(t.test, t.direction);
            spec.points = t.points.unwrap_or(spec.points);
            let cells = [t.gauge_cells, t.width_cells].into_iter().flatten().max();
            if spec.points > MAX_KES_POINTS || cells.is_some_and(|c| c > MAX_KES_CELLS) {
                return Err(invalid(format!(
                    "kes_test: points = {} must be at most {MAX_KES_POINTS} per unit of the path, gauge_cells and width_cells at most {MAX_KES_CELLS}",
                    spec.points
                )));
            }
            spec.max = t.max;
            spec.gauge_cells = t.gauge_cells;
            spec.width_cells = t.width_cells;
            spec.validate().map_err(setting)?;
            // the CSV's name, as written in the scene (checked again with the folder joined)
            if let Some(o) = &t.output {
                let text = o.to_string_lossy();
                if text.trim().is_empty() || text.ends_with(std::path::is_separator) {
                    return Err(invalid(format!(
                        "kes_test: output = \"{}\" must name a file (the virtual curve's CSV)",
                        crate::input::printable(&text)
                    )));
                }
            }
            KesLaws::from_params(fabric).map_err(cloth)?;
            return Ok(Scene::VirtualKes(Box::new(VirtualKesScene {
                name: file.name.clone(),
                spec,
                card: fabric.clone(),
                output: t.output.as_ref().map(|o| base.join(o)),
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
        let per_particle = match file.material {
            MaterialSpec::Springs { .. } => 2 << 10,
            MaterialSpec::Kes { .. } => 8 << 10,
            MaterialSpec::Terzopoulos(_) => 16 << 10,
        };
        let need = (g.nu as u64)
            .saturating_mul(g.nv as u64)
            .saturating_mul(per_particle);
        if need > MEMORY_BUDGET {
            return Err(invalid(format!(
                "grid {} x {}: about {} MiB of memory for this material, more than the budget of {}",
                g.nu,
                g.nv,
                need >> 20,
                bytes_label(MEMORY_BUDGET)
            )));
        }
        let grid = Grid::new(
            g.nu,
            g.nv,
            g.size[0] / (g.nu - 1) as f64,
            g.size[1] / (g.nv - 1) as f64,
        )
        .map_err(cloth)?;
        let mut obstacles = file.obstacles.clone();
        let numbers = card::fill_from_card(
            path,
            card.as_ref()
                .map(|(file, f)| (file.as_path(), f.properties.as_ref())),
            g.areal_density,
            &mut obstacles,
        )?;
        let material = match (&file.material, fabric) {
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
        // the sheet's placement: finite, and within the reach obstacles and the camera are
        // held to
        let reach = crate::cloth::record::CAMERA_REACH_M;
        for (name, v) in [("origin", g.origin), ("warp", g.warp), ("weft", g.weft)] {
            if !v.iter().all(|c| c.is_finite() && c.abs() <= reach) {
                return Err(invalid(format!(
                    "grid: {name} = [{}] must be finite and within {} m of the origin on every \
                     axis",
                    v.map(crate::friction::short_number).join(", "),
                    crate::friction::short_number(reach)
                )));
            }
        }
        let (lo, hi) = crate::kes::units::AREAL_DENSITY_RANGE_KG_PER_M2;
        if !(lo..=hi).contains(&numbers.areal_density) {
            return Err(invalid(format!(
                "areal_density = {} kg/m2 is outside [{lo}, {hi}] kg/m2 (a card's range)",
                crate::friction::short_number(numbers.areal_density)
            )));
        }
        let mut world = ClothWorld::flat(
            grid,
            Vec3::from(g.origin),
            Vec3::from(g.warp),
            Vec3::from(g.weft),
            numbers.areal_density,
            material,
        )
        .map_err(cloth)?;
        if let MaterialSpec::Terzopoulos(params) = &file.material {
            params.validate().map_err(setting)?;
            world.material = Material::Terzopoulos(Box::new(
                TerzopoulosSurface::new(&grid, world.positions(), *params).map_err(cloth)?,
            ));
        }
        // after the elastic surface took the flat sheet as its natural shape, before the pins
        // hold where the particles start
        let max_imperfection = 0.1 * g.size[0].abs().min(g.size[1].abs());
        if !(g.imperfection.is_finite() && (0.0..=max_imperfection).contains(&g.imperfection)) {
            return Err(invalid(format!(
                "grid: imperfection = {} m must be finite, >= 0 and at most a tenth of the \
                 sheet's smaller side ({} m)",
                crate::friction::short_number(g.imperfection),
                crate::friction::short_number(max_imperfection)
            )));
        }
        if g.imperfection > 0.0 {
            let normal = Vec3::from(g.warp).cross(&Vec3::from(g.weft));
            let normal = normal.try_normalize(1e-12).unwrap_or_else(Vec3::zeros);
            for k in 0..grid.len() {
                let x = world.positions()[k] + normal * imperfection_at(&grid, k, g.imperfection);
                world.set_position(k, x);
            }
        }
        if integ.kind == Integrator::SemiImplicit
            && !matches!(world.material, Material::Terzopoulos(_))
        {
            return Err(invalid(
                "integrator semi_implicit needs material kind = \"terzopoulos\"".into(),
            ));
        }
        if matches!(
            integ.kind,
            Integrator::NewtonTangent | Integrator::NewtonDirect
        ) && !matches!(world.material, Material::Kes(_))
        {
            return Err(invalid(format!(
                "integrator {} needs material kind = \"kes\" (its analytic tangent is the kes connectors'); use broyden",
                integ.kind.name()
            )));
        }
        // a solver setting the scene's own integrator does not read is refused, not ignored
        let integrator_keys = integ.solver_keys();
        if let Some(key) = integrator_keys.iter().find(|k| !integ.kind.reads(k)) {
            return Err(invalid(format!(
                "integrator.{key} does not apply to the {} integrator: it sets the {key} of {} \
                 (remove it, or choose one of those)",
                integ.kind.name(),
                Integrator::readers(key)
            )));
        }
        for p in &file.potentials {
            p.validate().map_err(setting)?;
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
        file.loads.validate().map_err(setting)?;
        world.loads = file.loads;
        for o in &obstacles {
            o.validate().map_err(setting)?;
        }
        world.obstacles = obstacles;
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
        // where the free particles start (after the imperfection); a pinned one stays where
        // it is pinned, the contact never moves it
        let from_card: Vec<bool> = numbers
            .obstacles
            .iter()
            .map(|o| o.offset_source == ValueSource::Card)
            .collect();
        overlap::check_start(
            &world.obstacles,
            world.positions(),
            world.pinned(),
            &from_card,
        )
        .map_err(invalid)?;
        let mut params = StepParameters::new(integ.kind, integ.dt);
        params.constraints = integ.constraints;
        params.tolerance = integ.tolerance.unwrap_or(params.tolerance);
        params.max_iterations = integ.max_iterations.unwrap_or(params.max_iterations);
        params.memory = integ.memory.unwrap_or(params.memory);
        params.preconditioner = integ.preconditioner.unwrap_or(params.preconditioner);
        params.krylov_dim = integ.krylov_dim.unwrap_or(params.krylov_dim);
        params.forcing = integ.forcing.unwrap_or(params.forcing);
        params.validate().map_err(setting)?;
        check_steps("integrator steps", integ.steps).map_err(setting)?;
        if let Some(c) = &file.camera {
            c.validate().map_err(|e| invalid(e.to_string()))?;
        }
        if let Some(r) = &file.reduced {
            r.validate(world.loads.wind.is_some())
                .map_err(|source| SceneError::Reduced {
                    path: path.to_path_buf(),
                    source,
                })?;
            for (name, t) in [
                ("reduced.duration", r.duration),
                ("reduced.settle", r.settle),
                ("reduced.t_max", r.t_max),
            ] {
                check_steps(name, (t / integ.dt).ceil() as u64).map_err(setting)?;
            }
        }
        Ok(Scene::Dynamic(Box::new(DynamicScene {
            name: file.name.clone(),
            world,
            params,
            steps: integ.steps,
            camera: file.camera,
            reduced: file.reduced.clone(),
            numbers,
            integrator_keys,
        })))
    }
}
