//! Virtual KES tests, records and scene files.

use std::path::Path;

use kestrel::cloth::record::{Camera, RecordInfo, Recording};
use kestrel::cloth::virtual_kes::{run_virtual_kes, VirtualKesSpec};
use kestrel::cloth::{ClothPipeline, KesLaws, Vec3};
use kestrel::kes::{Direction, KesTest};
use kestrel::scene::Scene;

use super::kes_world;
use crate::common::{cotton, repo};

#[test]
fn virtual_kes_tests_match_the_single_law() {
    let params = cotton();
    let laws = KesLaws::from_params(&params).unwrap();
    for test in [KesTest::Tensile, KesTest::Shear, KesTest::Bending] {
        for direction in [Direction::Warp, Direction::Weft] {
            let mut spec = VirtualKesSpec::new(test, direction);
            spec.points = 20;
            let r = run_virtual_kes(&spec, &laws, |_, _| {}).unwrap();
            assert!(r.nrmse <= 0.02, "{test} {direction}: nrmse {}", r.nrmse);
            // the curve really goes somewhere and comes back with hysteresis
            let top = r.mesh.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(top > 0.0);
            let csv = r.to_csv(&params.fabric);
            assert!(csv.contains(&format!("# test: {test}")));
            assert_eq!(
                csv.lines().filter(|l| !l.starts_with('#')).count(),
                r.x.len() + 1
            );
        }
    }
}

#[test]
fn record_round_trips_and_rejects_truncation() {
    let mut world = kes_world(3, 2, 0.01);
    let mut rec = Recording::new(RecordInfo {
        name: "t".into(),
        nu: 3,
        nv: 2,
        h_warp: 0.01,
        h_weft: 0.01,
        dt: 1e-3,
        every: 1,
        camera: Some(Camera {
            eye: [0.0, 0.0, 1.0],
            target: [0.0; 3],
            up: [0.0, 1.0, 0.0],
            fov_deg: 30.0,
        }),
        obstacles: vec![],
    });
    rec.push(&world);
    world.set_position(4, Vec3::new(1.5, -2.0, 0.25));
    world.steps = 7;
    world.time = 0.007;
    rec.push(&world);
    let bytes = rec.to_bytes().unwrap();
    assert_eq!(&bytes[..8], b"KESTRELR");
    let back = Recording::from_bytes(&bytes).unwrap();
    assert_eq!(back, rec);
    assert_eq!(back.frames[1].positions[4], [1.5, -2.0, 0.25]);
    assert!(Recording::from_bytes(&bytes[..bytes.len() - 3]).is_err());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.rec");
    rec.write(&path, false).unwrap();
    assert!(rec.write(&path, false).is_err());
    assert_eq!(Recording::read(&path).unwrap(), rec);
}

#[test]
fn every_scene_loads_and_steps() {
    let dir = repo("scenes");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        n += 1;
        match Scene::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            Scene::Dynamic(mut s) => {
                let mut pipeline = ClothPipeline::new();
                for _ in 0..3 {
                    pipeline
                        .step(&s.params, &mut s.world)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                }
            }
            Scene::VirtualKes(s) => assert!(s.spec.points >= 2, "{}", path.display()),
        }
    }
    assert!(n >= 8, "only {n} scenes in {}", dir.display());
}

#[test]
fn scene_errors_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path: &Path = &dir.path().join("bad.toml");
    std::fs::write(
        path,
        "name = \"x\"\n[grid]\nnu = 1\nnv = 3\nsize = [1.0, 1.0]\nareal_density = 0.1\n\
         [material]\nkind = \"springs\"\nstructural = 1.0\nshear = 1.0\nflexion = 1.0\n\
         [integrator]\nkind = \"explicit\"\ndt = 0.001\nsteps = 1\n",
    )
    .unwrap();
    let e = Scene::load(path).unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("2 x 2"), "{e}");
}

#[test]
fn obstacle_and_potential_tables_refuse_fields_they_do_not_have() {
    use kestrel::cloth::{CollisionPotential, Obstacle, ObstacleShape, ProvotConstraints};
    let obstacle = |text: &str| toml::from_str::<Obstacle>(text).map_err(|e| e.to_string());
    let potential =
        |text: &str| toml::from_str::<CollisionPotential>(text).map_err(|e| e.to_string());
    let sphere = "kind = \"sphere\"\ncenter = [0.0, 0.0, 0.0]\nradius = 0.5\n";
    let o = obstacle(&format!("{sphere}friction = 0.3")).unwrap();
    assert_eq!(
        o.shape,
        ObstacleShape::Sphere {
            center: [0.0; 3],
            radius: 0.5
        }
    );
    assert_eq!((o.friction, o.offset), (0.3, 0.0));
    let p = potential(&format!("{sphere}strength = 2.0\nrange = 0.01")).unwrap();
    assert_eq!((p.strength, p.range), (2.0, 0.01));
    let obstacle_error = |text: &str| obstacle(text).unwrap_err();
    let potential_error = |text: &str| potential(text).unwrap_err();
    for (e, says) in [
        (
            obstacle_error(&format!("{sphere}radus = 1.0")),
            "unknown field `radus`",
        ),
        (
            obstacle_error(&format!("{sphere}min = [0.0, 0.0, 0.0]")),
            "obstacle `sphere` has no field `min`",
        ),
        (
            obstacle_error(&format!("{sphere}strength = 2.0")),
            "obstacle `sphere` has no field `strength`",
        ),
        (
            obstacle_error("kind = \"plane\"\npoint = [0.0, 0.0, 0.0]"),
            "obstacle `plane` needs `normal`",
        ),
        (
            obstacle_error("kind = \"cone\""),
            "unknown obstacle kind `cone` — expected plane, sphere or box",
        ),
        (
            potential_error(&format!(
                "{sphere}strength = 2.0\nrange = 0.01\nfriction = 0.1"
            )),
            "potential `sphere` has no field `friction`",
        ),
        (
            potential_error(&format!("{sphere}range = 0.01")),
            "potential `sphere` needs `strength`",
        ),
        (
            potential_error(&format!("{sphere}strength = 2.0\nrange = 0.01\nspeed = 1")),
            "unknown field `speed`",
        ),
    ] {
        assert!(e.contains(says), "{says}: {e}");
    }
    // Constraints: a field left out is the unconstrained default (one pass).
    let c: ProvotConstraints = toml::from_str("structural = 0.1").unwrap();
    assert_eq!(
        c,
        ProvotConstraints {
            structural: Some(0.1),
            ..ProvotConstraints::none()
        }
    );
    assert!(toml::from_str::<ProvotConstraints>("structral = 0.1").is_err());
}

/// The virtual KES tests are strict enough to see a scaling error of 1 % per width or per area:
/// on strips with free edges (half-width border connectors) and cells far from square (both
/// ways), tensile and shear give the single law back to round-off (the homogeneous placement
/// is the equilibrium), and bending to its chord discretisation (≤ 1e-3 at 9 or more cells
/// along the gauge); 1.01 × the mesh curve must fail each bound.
#[test]
fn virtual_kes_tests_see_a_one_percent_scaling_error() {
    let laws = KesLaws::from_params(&cotton()).unwrap();
    for test in [KesTest::Tensile, KesTest::Shear, KesTest::Bending] {
        let (bound, layouts): (f64, &[(usize, usize)]) = match test {
            KesTest::Bending => (1e-3, &[(9, 3), (12, 7)]),
            _ => (1e-9, &[(4, 7), (9, 3)]),
        };
        for direction in [Direction::Warp, Direction::Weft] {
            for &(gauge, width) in layouts {
                let mut spec = VirtualKesSpec::new(test, direction);
                spec.points = 12;
                spec.gauge_cells = Some(gauge);
                spec.width_cells = Some(width);
                let r = run_virtual_kes(&spec, &laws, |_, _| {}).unwrap();
                let case = format!("{test} {direction}, {gauge} x {width} cells");
                assert!(r.nrmse <= bound, "{case}: nrmse {:.3e}", r.nrmse);
                let off: Vec<f64> = r.mesh.iter().map(|m| 1.01 * m).collect();
                let off_nrmse = kestrel::params::nrmse(&r.law, &off);
                assert!(
                    off_nrmse > 2.0 * bound,
                    "{case}: 1 % off gives {off_nrmse:.3e}"
                );
            }
        }
    }
}

/// Paths inside a scene file are relative to the scene's folder (`params` and `output` alike);
/// `--csv` is relative to the folder kestrel runs in; the summary names the file written.
#[test]
fn a_virtual_kes_scene_writes_its_output_beside_the_scene_and_csv_where_kestrel_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenes = dir.path().join("lab/scenes");
    let cwd = dir.path().join("elsewhere");
    std::fs::create_dir_all(scenes.join("fabrics")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::copy(
        repo("scenes/fabrics/cotton_shirting.params.toml"),
        scenes.join("fabrics/cotton.params.toml"),
    )
    .unwrap();
    std::fs::write(
        scenes.join("kes.toml"),
        "name = \"v\"\n[material]\nkind = \"kes\"\nparams = \"fabrics/cotton.params.toml\"\n\
         [kes_test]\ntest = \"shear\"\ndirection = \"weft\"\npoints = 6\n\
         output = \"out/shear_weft.csv\"\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"))
            .args(["run", "../lab/scenes/kes.toml", "--json"])
            .args(extra)
            .current_dir(&cwd)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        crate::common::assert_success(&out);
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        summary["csv"].as_str().unwrap().to_string()
    };
    let written = run(&[]);
    assert_eq!(written, "../lab/scenes/out/shear_weft.csv");
    let csv = std::fs::read_to_string(scenes.join("out/shear_weft.csv")).unwrap();
    assert!(csv.contains("# test: shear"), "{csv}");
    assert!(
        !cwd.join("out").exists(),
        "nothing written where kestrel runs"
    );
    // --csv: relative to the working directory
    assert_eq!(run(&["--csv", "mine.csv"]), "mine.csv");
    assert!(cwd.join("mine.csv").is_file());
    // the same file again is refused without --force
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["run", "../lab/scenes/kes.toml"])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
}
