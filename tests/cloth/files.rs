//! Virtual KES tests, records and scene files.

use std::path::{Path, PathBuf};

use kestrel::cloth::record::{Camera, RecordInfo, Recording};
use kestrel::cloth::virtual_kes::{run_virtual_kes, VirtualKesSpec};
use kestrel::cloth::{ClothPipeline, Vec3};
use kestrel::kes::{Direction, KesTest};
use kestrel::scene::Scene;

use super::kes_world;
use crate::common::{assert_success, cotton, kestrel, repo, stdout_json};

#[test]
fn virtual_kes_tests_match_the_single_law() {
    let params = cotton();
    for test in [KesTest::Tensile, KesTest::Shear, KesTest::Bending] {
        for direction in [Direction::Warp, Direction::Weft] {
            let mut spec = VirtualKesSpec::new(test, direction);
            spec.points = 20;
            let r = run_virtual_kes(&spec, &params, |_, _| {}).unwrap();
            assert!(
                r.connectors_nrmse <= 0.02,
                "{test} {direction}: nrmse {}",
                r.connectors_nrmse
            );
            // the curve really goes somewhere and comes back with hysteresis
            let top = r.mesh.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(top > 0.0);
            let csv = r.to_csv().unwrap();
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
    assert_eq!((o.friction, o.coulomb, o.offset), (Some(0.3), None, None));
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
            potential_error(&format!(
                "{sphere}strength = 2.0\nrange = 0.01\ncoulomb = 0.1"
            )),
            "potential `sphere` has no field `coulomb`",
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
    let card = cotton();
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
                let r = run_virtual_kes(&spec, &card, |_, _| {}).unwrap();
                let case = format!("{test} {direction}, {gauge} x {width} cells");
                assert!(
                    r.connectors_nrmse <= bound,
                    "{case}: nrmse {:.3e}",
                    r.connectors_nrmse
                );
                let off: Vec<f64> = r.mesh.iter().map(|m| 1.01 * m).collect();
                let off_nrmse = kestrel::params::nrmse(&off, &r.connectors_law);
                assert!(
                    off_nrmse > 2.0 * bound,
                    "{case}: 1 % off gives {off_nrmse:.3e}"
                );
            }
        }
    }
}

/// A cell carries the warp and the weft shear laws on half its area each, so the virtual shear
/// test gives their mean whichever yarn lies along the gauge. With elastic laws k_a θ and k_b θ
/// (no friction) the curve is ½(k_a + k_b)·θ and its NRMSE against the card's law of the
/// tested direction is |k_a − k_b|/(k_a + k_b) · RMS(θ)/(max θ − min θ), in both directions.
#[test]
fn virtual_kes_shear_gives_the_mean_law_and_scores_it_against_the_directions_law() {
    let mut card = cotton();
    let (ka, kb) = (40.0, 60.0);
    for (laws, k) in [(&mut card.warp, ka), (&mut card.weft, kb)] {
        let Some(shear) = laws.shear.as_mut() else {
            panic!("the cotton card has shear laws")
        };
        shear.k_s = k;
        shear.theta0 = 0.0;
        shear.friction.level = 0.0;
        shear.friction.mu = 0.0;
    }
    for direction in [Direction::Warp, Direction::Weft] {
        let mut spec = VirtualKesSpec::new(KesTest::Shear, direction);
        spec.points = 12;
        let r = run_virtual_kes(&spec, &card, |_, _| {}).unwrap();
        for (x, m) in r.x.iter().zip(&r.mesh) {
            let mean = 0.5 * (ka + kb) * x;
            assert!(
                (m - mean).abs() <= 1e-9 * 0.5 * (ka + kb),
                "{direction}: {m} vs {mean}"
            );
        }
        let (lo, hi) =
            r.x.iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                    (l.min(v), h.max(v))
                });
        let rms = (r.x.iter().map(|x| x * x).sum::<f64>() / r.x.len() as f64).sqrt();
        let expected = (ka - kb).abs() / (ka + kb) * rms / (hi - lo);
        assert!(
            (r.nrmse / expected - 1.0).abs() < 1e-8,
            "{direction}: nrmse {} vs {expected}",
            r.nrmse
        );
        assert!(
            r.connectors_nrmse < 1e-9,
            "{direction}: {}",
            r.connectors_nrmse
        );
    }
}

/// The NRMSE `kestrel run` reports for a virtual KES test is the one `kestrel validate` gives
/// on the CSV the run wrote, with the same card (tensile, shear and bending; the cotton card's
/// warp and weft shear laws differ, so the shear curve, their mean, is ~2 % off either).
#[test]
fn a_virtual_kes_runs_nrmse_is_what_validate_gives_on_its_csv() {
    let dir = tempfile::tempdir().unwrap();
    let card = repo("scenes/fabrics/cotton_shirting.params.toml");
    let card = card.to_str().unwrap();
    for (test, direction) in [
        ("tensile", "warp"),
        ("shear", "warp"),
        ("shear", "weft"),
        ("bending", "weft"),
    ] {
        let scene = dir.path().join(format!("{test}_{direction}.toml"));
        let csv = dir.path().join(format!("{test}_{direction}.csv"));
        std::fs::write(
            &scene,
            format!(
                "name = \"v\"\n[material]\nkind = \"kes\"\nparams = {card:?}\n\
                 [kes_test]\ntest = \"{test}\"\ndirection = \"{direction}\"\npoints = 10\n"
            ),
        )
        .unwrap();
        let (scene, csv) = (scene.to_str().unwrap(), csv.to_str().unwrap());
        let run = kestrel(&["run", scene, "--json", "--csv", csv]);
        assert_success(&run);
        let run = stdout_json(&run);
        let validate = kestrel(&["validate", "--params", card, "--json", csv]);
        assert_success(&validate);
        let validate = stdout_json(&validate);
        let (ran, validated) = (
            run["nrmse"].as_f64().unwrap(),
            validate["curves"][0]["nrmse"].as_f64().unwrap(),
        );
        assert!(
            (ran - validated).abs() <= 1e-6 * validated.max(1e-3),
            "{test} {direction}: run {ran} vs validate {validated}"
        );
        let connectors = run["connectors_nrmse"].as_f64().unwrap();
        if test == "shear" {
            assert!(ran > 0.01 && connectors < 1e-9, "{ran} {connectors}");
        } else {
            assert!((ran - connectors).abs() < 1e-9, "{ran} {connectors}");
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
        let summary = crate::common::stdout_json(&out);
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

/// A kes scene in `dir` (`scene.toml`) naming `card.toml` (the hand-written cotton shirting
/// followed by `properties`), with `grid_extra` under `[grid]` and `obstacles` appended.
fn scene_with_card(dir: &Path, properties: &str, grid_extra: &str, obstacles: &str) -> PathBuf {
    let card = std::fs::read_to_string(repo("scenes/fabrics/cotton_shirting.params.toml")).unwrap()
        + properties;
    std::fs::write(dir.join("card.toml"), card).unwrap();
    let scene = dir.join("scene.toml");
    std::fs::write(
        &scene,
        format!(
            "name = \"card\"\n[grid]\nnu = 5\nnv = 5\nsize = [0.04, 0.04]\n{grid_extra}\
             [material]\nkind = \"kes\"\nparams = \"card.toml\"\n\
             [integrator]\nkind = \"broyden\"\ndt = 0.001\nsteps = 3\n{obstacles}"
        ),
    )
    .unwrap();
    scene
}

const CARD_PROPERTIES: &str =
    "\n[properties]\nareal_density = 0.15\nthickness = 0.0006\nfriction_coefficient = 0.21\n";

/// Three obstacles: one that gives nothing, one with Coulomb friction and an offset, one with
/// the older velocity-scaling friction only.
const THREE_OBSTACLES: &str = "[[obstacles]]\nkind = \"sphere\"\ncenter = [0.02, -0.1, 0.02]\n\
     radius = 0.05\n\
     [[obstacles]]\nkind = \"plane\"\npoint = [0.0, -0.2, 0.0]\nnormal = [0.0, 1.0, 0.0]\n\
     coulomb = 0.4\noffset = 0.001\n\
     [[obstacles]]\nkind = \"box\"\nmin = [1.0, 1.0, 1.0]\nmax = [2.0, 2.0, 2.0]\n\
     friction = 0.3\n";

/// A kes scene takes the areal density, the obstacles' Coulomb μ (MIU) and offset (T0/2)
/// from its card where it gives none itself, and says where each number comes from.
#[test]
fn a_scene_takes_the_numbers_it_does_not_give_from_its_fabric_card() {
    use kestrel::scene::ValueSource::{Card, Default, Scene as Given};
    let dir = tempfile::tempdir().unwrap();
    let path = scene_with_card(dir.path(), CARD_PROPERTIES, "", THREE_OBSTACLES);
    let Scene::Dynamic(s) = Scene::load(&path).unwrap() else {
        panic!("a dynamic scene")
    };
    let n = &s.numbers;
    assert_eq!(
        n.card.as_deref(),
        Some(dir.path().join("card.toml").as_path())
    );
    assert_eq!((n.areal_density, n.areal_density_source), (0.15, Card));
    let mass: f64 = s.world.masses().iter().sum();
    assert!((mass - 0.15 * 0.04 * 0.04).abs() < 1e-15, "{mass}");
    let o = &s.world.obstacles;
    assert_eq!(
        (o[0].coulomb, o[0].friction, o[0].offset),
        (Some(0.21), None, Some(0.0003))
    );
    assert_eq!((o[1].coulomb, o[1].offset), (Some(0.4), Some(0.001)));
    assert_eq!((o[2].coulomb, o[2].friction), (None, Some(0.3)));
    assert_eq!(o[2].offset, Some(0.0003));
    let sources: Vec<_> = n
        .obstacles
        .iter()
        .map(|c| (c.friction_law, c.friction_source, c.offset_source))
        .collect();
    assert_eq!(
        sources,
        [
            ("coulomb", Card, Card),
            ("coulomb", Given, Given),
            ("velocity_scaling", Given, Card)
        ]
    );
    // what `kestrel run --json` reports
    let out = crate::common::kestrel(&["run", path.to_str().unwrap(), "--json"]);
    let j = crate::common::stdout_json(&out);
    assert_eq!(j["areal_density"], 0.15);
    assert_eq!(j["areal_density_source"], "card");
    assert_eq!(j["obstacles"][0]["friction"], 0.21);
    assert_eq!(j["obstacles"][0]["friction_source"], "card");
    assert_eq!(j["obstacles"][0]["offset"], 0.0003);
    assert_eq!(j["obstacles"][2]["friction_law"], "velocity_scaling");
    // a number written in the scene wins over the card's
    let path = scene_with_card(dir.path(), CARD_PROPERTIES, "areal_density = 0.2\n", "");
    let Scene::Dynamic(s) = Scene::load(&path).unwrap() else {
        panic!("a dynamic scene")
    };
    assert_eq!(
        (s.numbers.areal_density, s.numbers.areal_density_source),
        (0.2, Given)
    );
    let mass: f64 = s.world.masses().iter().sum();
    assert!((mass - 0.2 * 0.04 * 0.04).abs() < 1e-15, "{mass}");
    // without a card: the scene's numbers, obstacles without friction or offset by default
    let springs = dir.path().join("springs.toml");
    std::fs::write(
        &springs,
        "name = \"x\"\n[grid]\nnu = 2\nnv = 2\nsize = [1.0, 1.0]\nareal_density = 0.1\n\
         [material]\nkind = \"springs\"\nstructural = 1.0\nshear = 1.0\nflexion = 1.0\n\
         [integrator]\nkind = \"explicit\"\ndt = 0.001\nsteps = 1\n\
         [[obstacles]]\nkind = \"plane\"\npoint = [0.0, -1.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n",
    )
    .unwrap();
    let Scene::Dynamic(s) = Scene::load(&springs).unwrap() else {
        panic!("a dynamic scene")
    };
    assert_eq!(s.numbers.card, None);
    assert_eq!(s.numbers.areal_density_source, Given);
    let c = &s.numbers.obstacles[0];
    assert_eq!(
        (c.friction_law, c.friction_source, c.offset_source),
        ("none", Default, Default)
    );
}

/// A number neither the scene nor its card gives is an error naming both files and what to
/// add; so is an obstacle with both friction laws.
#[test]
fn a_number_missing_from_the_scene_and_its_card_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let load = |properties: &str, grid: &str, obstacles: &str| {
        let path = scene_with_card(dir.path(), properties, grid, obstacles);
        Scene::load(&path).unwrap_err().to_string()
    };
    let card = dir.path().join("card.toml").display().to_string();
    let sphere = "[[obstacles]]\nkind = \"sphere\"\ncenter = [0.0, -1.0, 0.0]\nradius = 0.5\n";
    for (e, says) in [
        (
            load("", "", ""),
            [
                "no areal density: add `[properties] areal_density`",
                "--weight 120g/m2",
                "or `areal_density` [kg/m2] to [grid] in the scene",
            ],
        ),
        (
            load("\n[properties]\nareal_density = 0.1\n", "", sphere),
            [
                "no contact friction for obstacle 1 (sphere)",
                "`[properties] friction_coefficient`",
                "or `coulomb = MU` (or the older `friction`) to the obstacle",
            ],
        ),
        (
            load(
                "\n[properties]\nareal_density = 0.1\n",
                "",
                &format!("{sphere}coulomb = 0.2\n"),
            ),
            [
                "no contact offset for obstacle 1 (sphere)",
                "`[properties] thickness` to",
                "--thickness 0.4mm",
            ],
        ),
        (
            load(
                CARD_PROPERTIES,
                "",
                &format!("{sphere}coulomb = 0.2\nfriction = 0.5\n"),
            ),
            ["scene.toml", "not both", "`coulomb`"],
        ),
    ] {
        assert!(e.contains("scene.toml"), "{e}");
        assert!(says.iter().all(|s| e.contains(s)), "{e}");
        if !e.contains("not both") {
            assert!(e.contains(&card), "{e}");
        }
    }
    // the command exits 2 and says the same
    let path = scene_with_card(dir.path(), "", "", "");
    let out = crate::common::kestrel(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&card) && stderr.contains("areal_density"),
        "{stderr}"
    );
    // a scene without a card must give the areal density
    let springs = dir.path().join("springs.toml");
    std::fs::write(
        &springs,
        "name = \"x\"\n[grid]\nnu = 2\nnv = 2\nsize = [1.0, 1.0]\n\
         [material]\nkind = \"springs\"\nstructural = 1.0\nshear = 1.0\nflexion = 1.0\n\
         [integrator]\nkind = \"explicit\"\ndt = 0.001\nsteps = 1\n",
    )
    .unwrap();
    let e = Scene::load(&springs).unwrap_err().to_string();
    assert!(
        e.contains("springs.toml")
            && e.contains("no areal density: add `areal_density` [kg/m2] to [grid]")
            && e.contains("no fabric card"),
        "{e}"
    );
}

/// Each way a camera can be unusable is refused as its own kind, and a good camera passes.
#[test]
fn a_camera_is_refused_by_the_field_at_fault() {
    use kestrel::cloth::record::{CameraError, CAMERA_REACH_M};
    let good = Camera {
        eye: [0.0, 0.5, 2.0],
        target: [0.0, 0.0, 0.0],
        up: [0.0, 1.0, 0.0],
        fov_deg: 40.0,
    };
    assert_eq!(good.validate(), Ok(()));
    let far = Camera {
        eye: [0.0, 0.0, 2.0 * CAMERA_REACH_M],
        ..good
    };
    assert!(matches!(
        far.validate(),
        Err(CameraError::OutOfReach { .. })
    ));
    let nan = Camera {
        target: [f64::NAN, 0.0, 0.0],
        ..good
    };
    assert!(matches!(
        nan.validate(),
        Err(CameraError::OutOfReach { .. })
    ));
    let same = Camera {
        target: good.eye,
        ..good
    };
    assert_eq!(same.validate(), Err(CameraError::Coincident));
    // up along the view
    let along = Camera {
        up: [0.0, -0.5, -2.0],
        ..good
    };
    assert_eq!(along.validate(), Err(CameraError::Up(along.up)));
    for fov_deg in [0.0, 180.0, f64::NAN] {
        let wide = Camera { fov_deg, ..good };
        let e = wide.validate().unwrap_err();
        assert!(matches!(e, CameraError::FieldOfView(_)), "{e}");
        assert!(e.to_string().contains("deg"), "{e}");
    }
}

/// Out-of-plane extent of a sheet whose plane is z = 0 [m].
fn z_extent(positions: &[Vec3]) -> f64 {
    let lo = positions.iter().map(|x| x.z).fold(f64::INFINITY, f64::min);
    let hi = positions
        .iter()
        .map(|x| x.z)
        .fold(f64::NEG_INFINITY, f64::max);
    hi - lo
}

/// A sheet hanging in the vertical plane of gravity stays in it by symmetry: the hanging
/// scenes start it with a small dome a·sin(πs)·sin(πt) out of that plane, and it leaves the
/// plane by far more than the dome; without the dome (the key left out) it stays exactly flat.
#[test]
fn the_hanging_sheet_leaves_its_plane_from_its_imperfection() {
    let card = repo("scenes/fabrics/cotton-shirting.fitted.params.toml");
    let a = kestrel::scene::HANGING_IMPERFECTION_M;
    assert!(a > 0.0 && a < 1e-3, "{a}");
    let run = |scene: Scene, steps: usize| {
        let Scene::Dynamic(mut s) = scene else {
            panic!("a dynamic scene")
        };
        let mut pipeline = ClothPipeline::new();
        for _ in 0..steps {
            pipeline.step(&s.params, &mut s.world).unwrap();
        }
        s.world
    };
    // the start: the closed-form dome along warp × weft = +X × −Y = −Z, zero at the pins
    let Scene::Dynamic(s) = kestrel::scene::hanging_scene(&card).unwrap() else {
        panic!("a dynamic scene")
    };
    let g = &s.world.grid;
    for (k, x) in s.world.positions().iter().enumerate() {
        let (i, j) = g.coords(k);
        let (si, tj) = (i as f64 / 25.0, j as f64 / 25.0);
        let w = a * (std::f64::consts::PI * si).sin() * (std::f64::consts::PI * tj).sin();
        assert!((x.z + w).abs() < 1e-15, "({i},{j}): z = {}", x.z);
        assert!((x.x - 0.02 * i as f64).abs() < 1e-12 && (x.y + 0.02 * j as f64).abs() < 1e-12);
    }
    for p in s.world.pins() {
        assert_eq!(p.position.z, 0.0);
    }
    // its top lies between grid points: sin²(12π/25) of a
    let start = z_extent(s.world.positions());
    assert!(start <= a && start > 0.99 * a, "{start}");
    // after 0.5 s the sheet has buckled out of its plane: far more than the dome
    let world = run(kestrel::scene::hanging_scene(&card).unwrap(), 500);
    let extent = z_extent(world.positions());
    assert!(extent > 10.0 * a, "out-of-plane extent {extent} m");
    // the shipped scene says the same
    let world = run(
        Scene::load(&repo("scenes/fabric_hanging.toml")).unwrap(),
        500,
    );
    let shipped = z_extent(world.positions());
    assert!(shipped > 10.0 * a, "fabric_hanging.toml: {shipped} m");
    // the key left out: the same scene starts, and stays, exactly in its plane
    let text = std::fs::read_to_string(repo("scenes/fabric_hanging.toml")).unwrap();
    assert!(text.contains("\nimperfection = "));
    let flat: String = text
        .lines()
        .filter(|l| !l.starts_with("imperfection"))
        .map(|l| format!("{l}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("fabrics")).unwrap();
    std::fs::copy(
        &card,
        dir.path()
            .join("fabrics/cotton-shirting.fitted.params.toml"),
    )
    .unwrap();
    let path = dir.path().join("flat.toml");
    std::fs::write(&path, flat).unwrap();
    let world = run(Scene::load(&path).unwrap(), 100);
    assert!(world.positions().iter().all(|x| x.z == 0.0));
    // out of range
    for bad in ["-0.001", "0.06", "nan"] {
        let t = text.replace("\nimperfection = ", &format!("\nimperfection = {bad} #"));
        std::fs::write(&path, t).unwrap();
        let e = Scene::load(&path).unwrap_err().to_string();
        assert!(e.contains("imperfection"), "{bad}: {e}");
    }
}
