//! What tests and benches share: the repository's files (from `CARGO_MANIFEST_DIR`, read
//! once), seeded noise, the sheets they step or render, and the renderer or a skip.
// benches include this file with `#[path]` and use only part of it
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kestrel::cloth::{ClothWorld, Grid, KesConnectors, KesLaws, Material};
use kestrel::cloth::{SpringNetwork, SpringStiffness, Vec3};
use kestrel::kes::{read_kes, Curve, CurveOverrides};
use kestrel::params::FabricParams;
use kestrel::scene::{DynamicScene, Sampling, Scene, SceneFile};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// A path in the repository.
pub fn repo(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Writes `contents` to the file `name` in `dir` (a test's temporary folder); its path.
pub fn write_file(dir: &Path, name: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// The scene `scenes/NAME` with its text edited (each `(from, to)` must occur), written to
/// `NAME` in `dir` (a test's temporary folder); its path.
pub fn edited_scene(dir: &Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(repo(&format!("scenes/{name}"))).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "scenes/{name} has no `{from}` to edit");
        text = text.replace(from, to);
    }
    write_file(dir, name, text)
}

/// The door scene's file at 6 × 7 particles, sampled for 2 s after 0.2 s of settling, as
/// `door.toml` in `dir` (for the CLI's precompute).
pub fn small_door_file(dir: &Path) -> PathBuf {
    let edits = [
        ("nu = 55", "nu = 6"),
        ("nv = 60", "nv = 7"),
        ("duration = 40.0", "duration = 2.0"),
        ("settle = 2.0", "settle = 0.2"),
    ];
    let edited = edited_scene(dir, "reduced_door_cloth.toml", &edits);
    let door = dir.join("door.toml");
    std::fs::rename(&edited, &door).unwrap();
    door
}

pub fn kes_data() -> PathBuf {
    repo("kes_data")
}

/// `kes_data/expected_values.json`, the synthetic oracle.
pub fn oracle() -> &'static serde_json::Value {
    static ORACLE: OnceLock<serde_json::Value> = OnceLock::new();
    ORACLE.get_or_init(|| {
        let text = std::fs::read_to_string(kes_data().join("expected_values.json"))
            .expect("kes_data/expected_values.json");
        serde_json::from_str(&text).expect("expected_values.json is JSON")
    })
}

/// Every curve of `kes_data/<fabric>/*.csv`, by `<fabric>/<file>`.
fn kes_curves() -> &'static BTreeMap<String, Curve> {
    static CURVES: OnceLock<BTreeMap<String, Curve>> = OnceLock::new();
    CURVES.get_or_init(|| {
        let mut curves = BTreeMap::new();
        for fabric in std::fs::read_dir(kes_data()).expect("kes_data/") {
            let fabric = fabric.expect("kes_data/ entry").path();
            if !fabric.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&fabric).expect("kes_data/<fabric>/") {
                let file = file.expect("kes_data/<fabric>/ entry").path();
                if file.extension().is_some_and(|e| e == "csv") {
                    let curve = read_kes(&file, CurveOverrides::default())
                        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                    let key = file
                        .strip_prefix(kes_data())
                        .expect("below kes_data/")
                        .to_string_lossy()
                        .replace('\\', "/");
                    curves.insert(key, curve);
                }
            }
        }
        curves
    })
}

/// The curve of `kes_data/<file>` (`file` as in the oracle: `wool-suiting/shear_weft.csv`).
pub fn kes_curve(file: &str) -> &'static Curve {
    kes_curves()
        .get(file)
        .unwrap_or_else(|| panic!("no curve kes_data/{file}"))
}

/// A fabric's curves of `kes_data/<slug>/` that a connector law models (tensile, shear,
/// bending: not compression or surface), in file-name order.
pub fn kes_fabric(slug: &str) -> Vec<Curve> {
    let prefix = format!("{slug}/");
    let curves: Vec<Curve> = kes_curves()
        .iter()
        .filter(|(k, c)| k.starts_with(&prefix) && c.test.has_connector_law())
        .map(|(_, c)| c.clone())
        .collect();
    assert!(!curves.is_empty(), "no curves in kes_data/{slug}");
    curves
}

/// `scenes/fabrics/cotton_shirting.params.toml`.
pub fn cotton() -> FabricParams {
    static COTTON: OnceLock<FabricParams> = OnceLock::new();
    COTTON
        .get_or_init(|| {
            FabricParams::read(&repo("scenes/fabrics/cotton_shirting.params.toml"))
                .expect("cotton shirting parameters")
        })
        .clone()
}

/// The seeded generator of every test and bench.
pub fn rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// Uniform in [-1, 1).
pub fn symmetric(rng: &mut Xoshiro256PlusPlus) -> f64 {
    2.0 * rng.random::<f64>() - 1.0
}

/// `n` standard normal samples (Box–Muller).
pub fn noise(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = rng(seed);
    (0..n)
        .map(|_| {
            let (u1, u2) = (rng.random::<f64>().max(1e-300), rng.random::<f64>());
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        })
        .collect()
}

/// The door scene on an `nu` × `nv` grid with softer springs (same step), `duration` s
/// sampled.
pub fn small_door(nu: usize, nv: usize, duration: f64) -> DynamicScene {
    let path = repo("scenes/reduced_door_cloth.toml");
    let mut file = SceneFile::read(&path).expect("door scene");
    let g = file.grid.as_mut().expect("door grid");
    g.nu = nu;
    g.nv = nv;
    file.material =
        toml::from_str("kind = \"springs\"\nstructural = 2.0\nshear = 1.0\nflexion = 0.2")
            .expect("spring material");
    file.reduced.as_mut().expect("door palette").duration = duration;
    match Scene::build(&file, &path).expect("door scene builds") {
        Scene::Dynamic(s) => *s,
        _ => unreachable!(),
    }
}

/// The small door (8 × 9, 3 s) sampled as 3 random chains and a two-level tree of 0.6 s
/// IRFs branching every 0.3 s.
pub fn small_tree_door() -> DynamicScene {
    let mut scene = small_door(8, 9, 3.0);
    let spec = scene.reduced.as_mut().expect("door palette");
    spec.chains = 3;
    spec.sampling = Sampling::Tree;
    spec.branch_every = vec![0.3];
    spec.t_max = 0.61;
    spec.settle = 0.5;
    scene
}

/// An n × n sheet at 1 cm of cotton shirting (0.12 kg/m²) hanging in the xy plane by two
/// corners, damping 0.2.
pub fn hanging_kes_sheet(n: usize) -> ClothWorld {
    let grid = Grid::new(n, n, 0.01, 0.01).expect("grid");
    let kes = KesConnectors::new(&grid, KesLaws::from_params(&cotton()).expect("laws"));
    hanging(grid, 0.12, 0.2, Material::Kes(Box::new(kes)))
}

/// An n × n sheet at 1 cm of Provot's springs (k, k, 0.2 k; 0.2 kg/m²) hanging in the xy plane
/// by two corners, damping 0.5.
pub fn hanging_spring_sheet(n: usize, k: f64) -> ClothWorld {
    let grid = Grid::new(n, n, 0.01, 0.01).expect("grid");
    hanging(grid, 0.2, 0.5, Material::Springs(springs(&grid, k)))
}

/// Provot's springs: structural and shear `k`, flexion 0.2 k.
pub fn springs(grid: &Grid, k: f64) -> SpringNetwork {
    SpringNetwork::new(
        grid,
        SpringStiffness {
            structural: k,
            shear: k,
            flexion: 0.2 * k,
        },
    )
    .expect("springs")
}

fn hanging(grid: Grid, density: f64, damping: f64, material: Material) -> ClothWorld {
    let n = grid.nu;
    let mut w = ClothWorld::flat(
        grid,
        Vec3::zeros(),
        Vec3::x(),
        -Vec3::y(),
        density,
        material,
    )
    .expect("flat sheet");
    w.loads.damping = damping;
    w.pin(0, 0).expect("corner");
    w.pin(n - 1, 0).expect("corner");
    w
}

#[cfg(feature = "render")]
#[allow(unused_imports)] // the benches include this module and use part of it
pub use gpu::{gpu_or_skip, view_over_a_ball};

/// What only a build with the renderer has.
#[cfg(feature = "render")]
mod gpu {
    use kestrel::cloth::record::Camera;
    use kestrel::cloth::{Grid, Obstacle, ObstacleShape};
    use kestrel::render::{RenderError, Renderer, SceneView};

    /// An n × n grid of spacing `h` over a ball (`center`, `radius`), pinned at its first two
    /// corners, seen from `eye` towards `target`.
    pub fn view_over_a_ball(
        n: usize,
        h: f64,
        (center, radius): ([f64; 3], f64),
        (eye, target): ([f64; 3], [f64; 3]),
    ) -> SceneView {
        SceneView {
            grid: Grid::new(n, n, h, h).expect("grid"),
            obstacles: vec![Obstacle::frictionless(ObstacleShape::Sphere {
                center,
                radius,
            })],
            pins: vec![0, n - 1],
            camera: Some(Camera {
                eye,
                target,
                up: [0.0, 1.0, 0.0],
                fov_deg: 40.0,
            }),
            door: None,
        }
    }

    /// A renderer of `width` × `height`, or `None` (saying so on stderr) where wgpu finds no
    /// adapter; any other failure fails the test.
    pub fn gpu_or_skip(width: u32, height: u32) -> Option<Renderer> {
        match Renderer::new(width, height) {
            Ok(r) => Some(r),
            Err(e @ RenderError::NoAdapter) => {
                eprintln!("skipped: no wgpu adapter ({e})");
                None
            }
            Err(e) => panic!("cannot render: {e}"),
        }
    }
}

/// `kestrel args…` run from the repository, stdin closed.
pub fn kestrel(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the kestrel binary runs")
}

/// `kestrel args… files…` run from the repository, stdin closed.
pub fn kestrel_on(args: &[&str], files: &[String]) -> std::process::Output {
    let mut all = args.to_vec();
    all.extend(files.iter().map(String::as_str));
    kestrel(&all)
}

/// Fails the test with the command's stderr unless it succeeded.
pub fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The JSON a command printed; fails the test with its stderr unless it succeeded.
pub fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    assert_success(out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The standard error of a finished command, as text.
pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The command exits with `code`, no panic, and its error names every one of `words`.
pub fn assert_refused(out: &std::process::Output, code: i32, words: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in words {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
}

/// Fails the test unless one of `lines` (a reading's notes, the workbench's log) contains
/// every one of `words`.
pub fn assert_a_line_has(lines: &[String], words: &[&str]) {
    assert!(
        lines.iter().any(|l| words.iter().all(|w| l.contains(w))),
        "no line has all of {words:?}: {lines:?}"
    );
}

/// The names of the entries of `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A model file's bytes after an edit made on purpose: its checksum (the last 32 bytes, the
/// SHA-256 of those before) made again, so the reader reaches the edit.
pub fn resealed(mut model: Vec<u8>) -> Vec<u8> {
    use sha2::Digest;
    let body = model.len() - 32;
    let sum = sha2::Sha256::digest(&model[..body]);
    model[body..].copy_from_slice(&sum);
    model
}

/// A model file's bytes written as a version-1 or version-2 file (`version`): no checksum.
pub fn unsealed(model: &[u8], version: u32) -> Vec<u8> {
    let mut old = model[..model.len() - 32].to_vec();
    old[8..12].copy_from_slice(&version.to_le_bytes());
    old
}
