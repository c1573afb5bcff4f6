//! Scene files refused at load: a sheet starting inside an obstacle, virtual KES tests the
//! strip cannot do, options and tables a scene kind does not use, names and messages.

use std::path::{Path, PathBuf};

use crate::common::{
    assert_refused, assert_success, edited_scene, kestrel, repo, stderr, stdout_json, write_file,
};

/// A virtual KES scene on the cotton card with `kes_test` lines `lines`, as `name` in `dir`.
fn virtual_kes_scene(dir: &Path, name: &str, lines: &str) -> PathBuf {
    let card = repo("scenes/fabrics/cotton_shirting.params.toml");
    write_file(
        dir,
        name,
        format!(
            "name = \"v\"\n[material]\nkind = \"kes\"\nparams = {:?}\n[kes_test]\n{lines}\n",
            card.display().to_string()
        ),
    )
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

/// drape_sphere.toml with its sheet at the ball's centre height once reached 70.9 J after 10
/// steps (a 0.15 kg sheet thrown out of the ball); a small sheet inside a sphere's offset
/// shell blew up. Both are refused at load with the obstacle, the count and the depth in mm.
#[test]
fn a_sheet_that_starts_inside_an_obstacle_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let inside = edited_scene(
        dir.path(),
        "drape_sphere.toml",
        &[("origin = [-0.5, 0.35, -0.5]", "origin = [-0.5, 0.0, -0.5]")],
    );
    for command in [vec!["run", "--steps", "1"], vec!["precompute", "--out"]] {
        let mut args = command.clone();
        if command[0] == "precompute" {
            args.push("m.krd");
        }
        args.insert(1, inside.to_str().unwrap());
        let out = kestrel(&args);
        // 261 of the 31 x 31 particles lie within 0.3 m + 5 mm of the centre in the plane y = 0;
        // the deepest is the centre particle, 305 mm inside the shell
        assert_refused(
            &out,
            2,
            &[
                "drape_sphere.toml",
                "obstacle 1 (sphere)",
                "261 of 961 particles",
                "5 mm offset shell",
                "305 mm deep",
                "origin",
                "offset",
            ],
        );
    }
    assert!(!dir.path().join("m.krd").exists());
    // inside the offset only: a 10 cm sheet whose sphere's 1 m shell holds all of it
    let shell = write_file(
        dir.path(),
        "shell.toml",
        "name = \"s\"\n[grid]\nnu = 5\nnv = 5\nsize = [0.1, 0.1]\nareal_density = 0.2\n\
         [material]\nkind = \"springs\"\nstructural = 4.0\nshear = 4.0\nflexion = 1.0\n\
         [integrator]\nkind = \"explicit\"\ndt = 0.001\nsteps = 20\n\
         [[obstacles]]\nkind = \"plane\"\npoint = [0.0, -1.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n\
         [[obstacles]]\nkind = \"sphere\"\ncenter = [0.05, -0.1, 0.05]\nradius = 0.03\noffset = 1.0\n",
    );
    let out = kestrel(&["run", shell.to_str().unwrap()]);
    assert_refused(
        &out,
        2,
        &[
            "shell.toml",
            "obstacle 2 (sphere)",
            "25 of 25 particles",
            "1000 mm offset shell",
        ],
    );
}

/// A kes scene's obstacle without an `offset` takes the card's T0/2; a sheet in that shell was
/// refused for its "0.18 mm offset shell" without saying where 0.18 mm came from.
#[test]
fn an_offset_shell_from_the_card_is_named_as_the_cards() {
    let dir = tempfile::tempdir().unwrap();
    let card = repo("scenes/fabrics/cotton-shirting.fitted.params.toml");
    let floor = edited_scene(
        dir.path(),
        "fabric_hanging.toml",
        &[
            ("weft = [0.0, -1.0, 0.0]", "weft = [0.0, 0.0, 1.0]"),
            ("imperfection = 0.0003", "imperfection = 0.0"),
            (
                "params = \"fabrics/cotton-shirting.fitted.params.toml\"",
                &format!("params = {:?}", text(&card)),
            ),
            (
                "[pins]",
                "[[obstacles]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n[pins]",
            ),
        ],
    );
    let out = kestrel(&["run", &text(&floor), "--steps", "1"]);
    assert_refused(
        &out,
        2,
        &[
            "fabric_hanging.toml",
            "offset shell (the offset is the card's T0/2: the obstacle gives no `offset`)",
            "give it an `offset` below the card's",
        ],
    );
    // an offset the scene gives is its own
    let own = std::fs::read_to_string(&floor).unwrap().replace(
        "normal = [0.0, 1.0, 0.0]\n[pins]",
        "normal = [0.0, 1.0, 0.0]\noffset = 0.001\n[pins]",
    );
    let own = write_file(dir.path(), "own.toml", own);
    let out = kestrel(&["run", &text(&own), "--steps", "1"]);
    assert_refused(
        &out,
        2,
        &["own.toml", "1 mm offset shell,", "or lower its offset"],
    );
    assert!(!stderr(&out).contains("T0/2"), "{}", stderr(&out));
}

/// A pinned particle inside an obstacle (a corner hung on a small hook sphere) is not thrown
/// anywhere: the pin holds it, so the scene loads and runs as it does without the sphere (it
/// was refused); a free particle inside is still refused.
#[test]
fn a_pinned_particle_inside_an_obstacle_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read_to_string(repo("scenes/provot_sheet_17.toml")).unwrap();
    let hook = |center: &str| {
        format!("{plain}\n[[obstacles]]\nkind = \"sphere\"\ncenter = {center}\nradius = 0.01\n")
    };
    let hooked = write_file(dir.path(), "hooked.toml", hook("[0.0, 0.0, 0.0]"));
    let json = stdout_json(&kestrel(&[
        "run",
        hooked.to_str().unwrap(),
        "--steps",
        "50",
        "--json",
    ]));
    let without = write_file(dir.path(), "plain.toml", plain.clone());
    let base = stdout_json(&kestrel(&[
        "run",
        without.to_str().unwrap(),
        "--steps",
        "50",
        "--json",
    ]));
    assert_eq!(json["kinetic_j"], base["kinetic_j"]);
    // the same sphere on the free corner (16, 16) is refused
    let free = write_file(dir.path(), "free.toml", hook("[1.0, 0.0, 1.0]"));
    let out = kestrel(&["run", free.to_str().unwrap(), "--steps", "1"]);
    assert_refused(
        &out,
        2,
        &["free.toml", "obstacle 1 (sphere)", "1 of 289 particles"],
    );
}

/// A sheet laid on a plane at its offset, to within a hundredth of the offset, is in contact,
/// not inside: it loads and its first steps add no energy.
#[test]
fn a_sheet_laid_on_an_obstacle_at_its_offset_loads() {
    let dir = tempfile::tempdir().unwrap();
    for (y, loads) in [("0.005", true), ("0.00496", true), ("0.0049", false)] {
        let scene = write_file(
            dir.path(),
            "laid.toml",
            format!(
                "name = \"l\"\n[grid]\nnu = 5\nnv = 5\nsize = [0.1, 0.1]\norigin = [0.0, {y}, 0.0]\n\
                 areal_density = 0.2\n[material]\nkind = \"springs\"\nstructural = 4.0\n\
                 shear = 4.0\nflexion = 1.0\n[integrator]\nkind = \"explicit\"\ndt = 0.001\n\
                 steps = 20\n[loads]\ngravity = [0.0, -9.81, 0.0]\n[[obstacles]]\nkind = \"plane\"\n\
                 point = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\noffset = 0.005\n"
            ),
        );
        let out = kestrel(&["run", scene.to_str().unwrap(), "--json"]);
        if loads {
            let json = stdout_json(&out);
            // at rest on the plane: no energy comes out of the contact
            assert!(json["kinetic_j"].as_f64().unwrap() < 1e-9, "{y}: {json}");
        } else {
            assert_refused(&out, 2, &["laid.toml", "obstacle 1 (plane)", "0.1 mm deep"]);
        }
    }
}

/// `direction = "normal"` once ran and wrote a CSV that `values` refuses; refused at load like
/// `bias`, naming the directions allowed.
#[test]
fn a_virtual_kes_test_in_the_normal_direction_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for d in ["normal", "bias"] {
        let scene = virtual_kes_scene(
            dir.path(),
            "n.toml",
            &format!("test = \"tensile\"\ndirection = \"{d}\"\npoints = 4\noutput = \"n.csv\""),
        );
        let out = kestrel(&["run", &text(&scene)]);
        assert_refused(
            &out,
            2,
            &["n.toml", &format!("direction = \"{d}\""), "warp or weft"],
        );
        assert!(!dir.path().join("n.csv").exists());
    }
}

/// Bending at 21 1/cm on the default 10 gauge cells (documented range up to 25) once failed
/// with a message about a CSV column; the largest curvature now follows the cells (1.25 rad a
/// cell over the 1 cm gauge), and 25 1/cm on 20 cells meets the 2 % of the shipped scenes.
#[test]
fn virtual_bending_is_bounded_by_what_its_gauge_cells_bend() {
    let dir = tempfile::tempdir().unwrap();
    let bend = |max: &str, cells: &str| {
        let scene = virtual_kes_scene(
            dir.path(),
            "b.toml",
            &format!("test = \"bending\"\ndirection = \"warp\"\npoints = 10\nmax = {max}\n{cells}"),
        );
        kestrel(&["run", &text(&scene), "--json"])
    };
    let out = bend("21.0", "");
    assert_refused(
        &out,
        2,
        &[
            "b.toml",
            "kes_test max = 21 1/cm",
            "10 gauge cells bend to at most 12.5 1/cm",
            "gauge_cells = 17 or more",
        ],
    );
    assert!(!stderr(&out).contains("column"));
    let json = stdout_json(&bend("25.0", "gauge_cells = 20"));
    assert!(json["connectors_nrmse"].as_f64().unwrap() < 0.02, "{json}");
    assert!(json["note"].is_null(), "{json}");
    // a 2-cell strip is within the bound but 7.6 % off: noted on stderr and in the JSON
    let out = bend("2.5", "gauge_cells = 2");
    let json = stdout_json(&out);
    assert!(json["connectors_nrmse"].as_f64().unwrap() > 0.02, "{json}");
    let note = json["note"].as_str().unwrap();
    assert!(note.contains("above the 2 %"), "{note}");
    assert!(stderr(&out).contains("note: "), "{}", stderr(&out));
    assert!(stderr(&out).contains("b.toml"), "{}", stderr(&out));
    assert_success(&out);
}

/// Options of a dynamic run on a virtual KES scene, `--csv` on a dynamic one and
/// `--preconditioner` with the explicit steps were accepted and ignored (exit 0, no record):
/// each is refused, exit 2, naming the option.
#[test]
fn options_that_do_not_apply_to_the_scene_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scene = virtual_kes_scene(
        dir.path(),
        "vk.toml",
        "test = \"tensile\"\ndirection = \"warp\"\npoints = 4\noutput = \"vk.csv\"",
    );
    let rec = text(&dir.path().join("x.rec"));
    for extra in [
        vec!["--record", &rec],
        vec!["--steps", "5"],
        vec!["--every", "3"],
        vec!["--integrator", "explicit"],
        vec!["--dt", "0.1"],
        vec!["--no-constraints"],
        vec!["--preconditioner", "block"],
        vec!["--passes", "2"],
    ] {
        let mut args = vec!["run", scene.to_str().unwrap()];
        args.extend(&extra);
        let out = kestrel(&args);
        assert_refused(
            &out,
            2,
            &[
                extra[0],
                "does not apply to a virtual KES test scene",
                "vk.toml",
            ],
        );
        assert!(!dir.path().join("x.rec").exists());
        assert!(!dir.path().join("vk.csv").exists());
    }
    // without them it runs and writes its curve
    assert_success(&kestrel(&["run", scene.to_str().unwrap()]));
    assert!(dir.path().join("vk.csv").exists());
    let sheet = text(&repo("scenes/provot_sheet_17.toml"));
    let csv = text(&dir.path().join("x.csv"));
    let out = kestrel(&["run", &sheet, "--steps", "1", "--csv", &csv]);
    assert_refused(
        &out,
        2,
        &[
            "--csv does not apply to a dynamic scene",
            "provot_sheet_17.toml",
        ],
    );
    assert!(!dir.path().join("x.csv").exists());
    let out = kestrel(&["run", &sheet, "--steps", "1", "--preconditioner", "lines"]);
    assert_refused(
        &out,
        2,
        &["--preconditioner does not apply to the explicit integrator"],
    );
    let json = stdout_json(&kestrel(&[
        "run",
        &sheet,
        "--steps",
        "1",
        "--integrator",
        "broyden",
        "--preconditioner",
        "lines",
        "--json",
    ]));
    assert_eq!(json["preconditioner"], "lines");
    // the scene's own preconditioner for an integrator that has none: refused at load too
    let explicit = std::fs::read_to_string(&sheet).unwrap().replace(
        "kind = \"explicit\"",
        "kind = \"explicit\"\npreconditioner = \"lines\"",
    );
    let file = dir.path().join("explicit_lines.toml");
    std::fs::write(&file, explicit).unwrap();
    let out = kestrel(&["run", file.to_str().unwrap(), "--steps", "1"]);
    assert_refused(
        &out,
        2,
        &[
            "explicit_lines.toml",
            "integrator.preconditioner does not apply to the explicit integrator",
        ],
    );
}

/// `tolerance` and `max_iterations` under an explicit scene's `[integrator]` were accepted and
/// ignored (as `preconditioner` was): each solver setting is refused at load on a scene whose
/// integrator does not read it, naming key and integrator. Which reads which (the solvers):
/// Broyden tolerance, max_iterations, memory, preconditioner; Newton–Krylov tolerance,
/// max_iterations, krylov_dim (GMRES), forcing, preconditioner; the tangent Newtons tolerance,
/// max_iterations, forcing (CG); explicit and semi-implicit none.
#[test]
fn solver_settings_the_scenes_integrator_does_not_read_are_refused() {
    use kestrel::cloth::Integrator::*;
    use kestrel::scene::SceneFile;
    let reads: [(kestrel::cloth::Integrator, &[&str]); 6] = [
        (Explicit, &[]),
        (SemiImplicit, &[]),
        (
            Broyden,
            &["tolerance", "max_iterations", "memory", "preconditioner"],
        ),
        (
            NewtonKrylov,
            &[
                "tolerance",
                "max_iterations",
                "krylov_dim",
                "forcing",
                "preconditioner",
            ],
        ),
        (NewtonTangent, &["tolerance", "max_iterations", "forcing"]),
        (NewtonDirect, &["tolerance", "max_iterations", "forcing"]),
    ];
    for (kind, keys) in reads {
        let scene = match kind {
            SemiImplicit => "terzopoulos_flag.toml",
            NewtonTangent | NewtonDirect => "fabric_hanging.toml",
            _ => "provot_sheet_17.toml",
        };
        let path = repo(&format!("scenes/{scene}"));
        for key in [
            "tolerance",
            "max_iterations",
            "memory",
            "krylov_dim",
            "forcing",
            "preconditioner",
        ] {
            let mut file = SceneFile::read(&path).unwrap();
            let integ = file.integrator.as_mut().unwrap();
            integ.kind = kind;
            (integ.tolerance, integ.max_iterations, integ.memory) = (None, None, None);
            (integ.krylov_dim, integ.forcing, integ.preconditioner) = (None, None, None);
            match key {
                "tolerance" => integ.tolerance = Some(1e-7),
                "max_iterations" => integ.max_iterations = Some(50),
                "memory" => integ.memory = Some(10),
                "krylov_dim" => integ.krylov_dim = Some(20),
                "forcing" => integ.forcing = Some(0.05),
                _ => integ.preconditioner = Some(kestrel::cloth::Preconditioner::Block),
            }
            let built = kestrel::scene::Scene::build(&file, &path);
            let case = format!("{} with {key}", kind.name());
            if keys.contains(&key) {
                assert!(built.is_ok(), "{case}: {:?}", built.err());
            } else {
                let e = built.err().map(|e| e.to_string()).unwrap_or_default();
                assert!(
                    e.contains(&format!(
                        "integrator.{key} does not apply to the {} integrator",
                        kind.name()
                    )) && e.contains(scene),
                    "{case}: {e}"
                );
            }
        }
    }
}

/// A scene's `preconditioner` was dropped without a word under `--integrator` with none;
/// `--every` without `--record` and `--tau-*`/`--passes` with `--no-constraints` were accepted
/// and did nothing.
#[test]
fn options_that_do_nothing_are_refused_and_a_scene_setting_overridden_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = std::fs::read_to_string(repo("scenes/provot_sheet_17.toml")).unwrap();
    let broyden = write_file(
        dir.path(),
        "broyden_lines.toml",
        sheet.replace(
            "kind = \"explicit\"",
            "kind = \"broyden\"\npreconditioner = \"lines\"\nmemory = 10",
        ),
    );
    let b = text(&broyden);
    let out = kestrel(&["run", &b, "--steps", "1", "--integrator", "explicit"]);
    assert_success(&out);
    let err = stderr(&out);
    for key in ["preconditioner", "memory"] {
        assert!(
            err.contains(&format!(
                "note: {b}: the scene's integrator.{key} does not apply to the explicit \
                 integrator chosen by --integrator; not used"
            )),
            "{err}"
        );
    }
    // an integrator that reads them: no note
    let out = kestrel(&["run", &b, "--steps", "1", "--integrator", "broyden"]);
    assert_success(&out);
    assert!(!stderr(&out).contains("note:"), "{}", stderr(&out));
    let s = text(&repo("scenes/provot_sheet_17.toml"));
    let cases: [(&[&str], &str); 4] = [
        (
            &["--every", "7"],
            "--every sets the record's frame interval: give --record",
        ),
        (
            &["--no-constraints", "--tau-structural", "0.1"],
            "--tau-structural has no effect with --no-constraints",
        ),
        (
            &["--no-constraints", "--tau-shear", "0.1"],
            "--tau-shear has no effect with --no-constraints",
        ),
        (
            &["--no-constraints", "--passes", "3"],
            "--passes has no effect with --no-constraints",
        ),
    ];
    for (extra, named) in cases {
        let mut args = vec!["run", s.as_str(), "--steps", "1"];
        args.extend_from_slice(extra);
        assert_refused(&kestrel(&args), 2, &[named]);
    }
    let rec = text(&dir.path().join("r.rec"));
    let out = kestrel(&["run", &s, "--steps", "2", "--every", "2", "--record", &rec]);
    assert_success(&out);
    assert_success(&kestrel(&["run", &s, "--steps", "1", "--no-constraints"]));
}

/// `[grid]` and `[integrator]` in a virtual KES scene, `size = [1.0, 1.0, 7.0]` and a pin
/// `[0, 0, 99]` were read without a word (the tables ignored, the extra elements dropped).
#[test]
fn tables_a_virtual_kes_test_ignores_and_overlong_arrays_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scene = virtual_kes_scene(
        dir.path(),
        "vk_grid.toml",
        "test = \"tensile\"\ndirection = \"warp\"\npoints = 4\n\
         [grid]\nnu = 5\nnv = 5\nsize = [0.1, 0.1]\n[integrator]\nkind = \"explicit\"\ndt = 0.001\nsteps = 5",
    );
    let out = kestrel(&["run", &text(&scene)]);
    // the header [grid] is on line 9 of the file written
    assert_refused(
        &out,
        2,
        &[
            "vk_grid.toml",
            "line 9",
            "[grid] does not apply to a virtual KES test scene",
        ],
    );
    for (from, to, named) in [
        (
            "size = [1.0, 1.0]",
            "size = [1.0, 1.0, 7.0]",
            "grid.size = [1.0, 1.0, 7.0]: 3 elements where 2 are expected",
        ),
        (
            "particles = [[0, 0], [16, 0]]",
            "particles = [[0, 0, 99], [16, 0]]",
            "pins.particles = [0, 0, 99]: 3 elements where 2 are expected",
        ),
    ] {
        let path = edited_scene(dir.path(), "provot_sheet_17.toml", &[(from, to)]);
        let out = kestrel(&["run", &text(&path), "--steps", "1"]);
        assert_refused(&out, 2, &["provot_sheet_17.toml", named]);
    }
}

/// A blow-up named no scene and printed its rate as `+39239999999999997902848.0 %`; a `dt` of
/// 1e9 s was accepted (exit 1 at the blow-up, not 2 at load).
#[test]
fn a_blow_up_names_the_scene_and_dt_has_an_upper_bound() {
    let dir = tempfile::tempdir().unwrap();
    let scene = |dt: &str| {
        write_file(
            dir.path(),
            "fast.toml",
            format!(
                "name = \"f\"\n[grid]\nnu = 5\nnv = 5\nsize = [0.1, 0.1]\nareal_density = 0.2\n\
                 [material]\nkind = \"springs\"\nstructural = 4.0\nshear = 4.0\nflexion = 1.0\n\
                 [integrator]\nkind = \"explicit\"\ndt = {dt}\nsteps = 200\n\
                 [loads]\ngravity = [0.0, -9.81, 0.0]\n[pins]\nparticles = [[0, 0]]\n"
            ),
        )
    };
    let out = kestrel(&["run", &text(&scene("1e9"))]);
    assert_refused(&out, 2, &["fast.toml", "dt = 1e9 s", "at most 1 s"]);
    // half a second a step: within the bound, and the explicit step blows up
    let out = kestrel(&["run", &text(&scene("0.5"))]);
    assert_refused(&out, 1, &["fast.toml", "blow-up at step", "(> +1000 %)"]);
    let err = stderr(&out);
    assert!(!err.contains("99999"), "{err}");
}

/// `precompute` on a scene without `[reduced]` exited 1 (the work failed) for bad input;
/// `run` and `render` on a `.krd` said "not UTF-8 text".
#[test]
fn a_scene_without_a_palette_or_a_model_given_as_a_scene_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out_model = text(&dir.path().join("k.krd"));
    let sheet = text(&repo("scenes/provot_sheet_17.toml"));
    let out = kestrel(&["precompute", &sheet, "--out", &out_model]);
    assert_refused(&out, 2, &["provot_sheet_17.toml", "no [reduced] section"]);
    let mut bytes = b"KESTRELD".to_vec();
    bytes.extend([0xff, 0xfe, 0x00, 0x80]);
    let model = write_file(dir.path(), "m.krd", bytes);
    let mut commands = vec![vec!["run"]];
    if cfg!(feature = "render") {
        commands.push(vec!["render", "--out", "never"]);
    }
    for c in commands {
        let mut args = c.clone();
        args.insert(1, model.to_str().unwrap());
        let out = kestrel(&args);
        assert_refused(
            &out,
            2,
            &["m.krd", "a reduced model (.krd)", "kestrel play"],
        );
        assert!(!stderr(&out).contains("UTF-8"));
    }
    assert!(!repo("never").exists());
}

/// Two palette entries named `open` were reported as `next names 'close', not an entry`; a
/// door turning 1000° and a sequence with an empty item were accepted.
#[test]
fn palette_names_door_ranges_and_sequences_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let door = crate::common::small_door_file(dir.path());
    let original = std::fs::read_to_string(&door).unwrap();
    for (from, to, named) in [
        (
            "name = \"close\"",
            "name = \"open\"",
            "the name `open` is given to entries 2 and 3",
        ),
        (
            "range_deg = [0.0, 90.0]",
            "range_deg = [0.0, 1000.0]",
            "-180 <= lo < hi <= 180 deg",
        ),
    ] {
        assert!(original.contains(from));
        let path = write_file(dir.path(), "door_bad.toml", original.replace(from, to));
        let out = kestrel(&["run", &text(&path), "--steps", "1"]);
        assert_refused(&out, 2, &["door_bad.toml", named]);
    }
    let kestrel::scene::Scene::Dynamic(scene) = kestrel::scene::Scene::load(&door).unwrap() else {
        panic!("the door scene is dynamic");
    };
    let palette = &scene.reduced.as_ref().unwrap().palette;
    let seq = kestrel::reduced::parse_sequence;
    assert_eq!(seq(palette, "open:1, stop:1").unwrap().len(), 2);
    for bad in ["open:1,,stop:1", "open:1,", ",open:1"] {
        let e = seq(palette, bad).unwrap_err().to_string();
        assert!(e.contains("is empty"), "{bad}: {e}");
    }
}

/// `render --from` a record with a position that is not finite, or with no frames, named no
/// file.
#[cfg(feature = "render")]
#[test]
fn render_from_a_record_names_the_record() {
    use kestrel::cloth::record::{RecordInfo, Recording};
    use kestrel::cloth::Vec3;
    let dir = tempfile::tempdir().unwrap();
    let mut world = super::kes_world(3, 3, 0.01);
    let info = RecordInfo {
        name: "r".into(),
        nu: 3,
        nv: 3,
        h_warp: 0.01,
        h_weft: 0.01,
        dt: 1e-3,
        every: 1,
        camera: None,
        obstacles: vec![],
    };
    let mut rec = Recording::new(info.clone());
    rec.push(&world);
    world.set_position(4, Vec3::new(f64::NAN, 0.0, 0.0));
    rec.push(&world);
    let nan = dir.path().join("nan.rec");
    rec.write(&nan, false).unwrap();
    let empty = dir.path().join("empty.rec");
    Recording::new(info).write(&empty, false).unwrap();
    let out_dir = text(&dir.path().join("frames"));
    for (file, named) in [
        (
            &nan,
            "frame 1 (step 0), particle 4: a position is not finite",
        ),
        (&empty, "the record has no frames"),
    ] {
        let out = kestrel(&[
            "render",
            "--from",
            &text(file),
            "--out",
            &out_dir,
            "--size",
            "32x32",
        ]);
        assert_refused(
            &out,
            2,
            &[file.file_name().unwrap().to_str().unwrap(), named],
        );
    }
    assert!(!dir.path().join("frames").exists());
}

/// A scene `name` holding ESC and BEL was printed raw by `run` (it cleared the terminal); a
/// 300 KB name was echoed whole; a right-to-left override (U+202E) was printed raw. Refused at
/// load like a card's `fabric`.
#[test]
fn a_scene_name_with_control_characters_or_too_long_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = std::fs::read_to_string(repo("scenes/provot_sheet_17.toml")).unwrap();
    let first = sheet.lines().find(|l| l.starts_with("name = ")).unwrap();
    for (name, named) in [
        (
            "\"bad \\u001b[2J\\u0007 name\"".to_string(),
            "holds a control character".to_string(),
        ),
        (
            format!("\"{}\"", "x".repeat(201)),
            "201 characters long: at most 200".to_string(),
        ),
        // bidirectional controls reorder the line they are printed on: refused, escaped
        (
            "\"abc\\u202Egnp.exe\"".to_string(),
            "name = \"abc\\u{202e}gnp.exe\" holds a control character".to_string(),
        ),
        (
            "\"a\\u2066b\\u2069\"".to_string(),
            "holds a control character".to_string(),
        ),
    ] {
        let path = write_file(
            dir.path(),
            "named.toml",
            sheet.replacen(first, &format!("name = {name}"), 1),
        );
        let out = kestrel(&["run", &text(&path), "--steps", "1"]);
        assert_refused(&out, 2, &["named.toml", &named]);
        let err = stderr(&out);
        assert!(
            !err.contains(|c: char| c != '\n' && kestrel::input::unprintable(c)),
            "{err:?}"
        );
        assert!(err.len() < 1000, "{}", err.len());
    }
    let path = write_file(
        dir.path(),
        "named.toml",
        sheet.replacen(first, &format!("name = \"{}\"", "é".repeat(200)), 1),
    );
    assert_success(&kestrel(&["run", &text(&path), "--steps", "1"]));
}

/// Every key of `json` (an object) is named in backticks in the doc `doc`.
fn assert_documented(json: &serde_json::Value, doc: &str, what: &str) {
    let text = std::fs::read_to_string(repo(doc)).unwrap();
    for key in json.as_object().unwrap().keys() {
        assert!(
            text.contains(&format!("`{key}`")),
            "{what}: `{key}` not in {doc}"
        );
    }
}

/// `--json` keys the docs did not name (precompute `scene`, `out`, `error_plot`; play `out`;
/// a virtual KES run's `scene`, `name`, `integrator`, `particles`; test drape `fabric`,
/// `friction`), and `bending_length_cm`, the mesh's c in `test cantilever` but Peirce's in
/// `test drape`: the drape now says `peirce_cm` as the cantilever does (the old key kept, as
/// documented).
#[test]
fn json_keys_are_documented_and_peirce_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let card = "scenes/fabrics/cotton-shirting.fitted.params.toml";
    let drape = stdout_json(&kestrel(&[
        "test",
        "drape",
        "--params",
        card,
        "--cell",
        "30",
        "--load-steps",
        "2",
        "--json",
    ]));
    assert_documented(&drape, "docs/cloth.md", "test drape");
    let peirce = |direction: &str| {
        let c = stdout_json(&kestrel(&[
            "test",
            "cantilever",
            "--params",
            card,
            "--direction",
            direction,
            "--json",
        ]));
        c["peirce_cm"].as_f64().unwrap()
    };
    let shorter = peirce("warp").min(peirce("weft"));
    assert!(
        (drape["peirce_cm"].as_f64().unwrap() / shorter - 1.0).abs() < 1e-12,
        "{drape}"
    );
    assert_eq!(drape["peirce_cm"], drape["bending_length_cm"]);
    let scene = virtual_kes_scene(
        dir.path(),
        "vk.toml",
        "test = \"shear\"\ndirection = \"warp\"\npoints = 4",
    );
    let vk = stdout_json(&kestrel(&["run", &text(&scene), "--json"]));
    assert_documented(&vk, "docs/cloth.md", "virtual KES run");
    let door = crate::common::small_door_file(dir.path());
    let model = text(&dir.path().join("door.krd"));
    let plot = text(&dir.path().join("error.svg"));
    let pre = stdout_json(&kestrel(&[
        "precompute",
        &text(&door),
        "--out",
        &model,
        "--error-plot",
        &plot,
        "--json",
    ]));
    assert_documented(&pre, "docs/reduced.md", "precompute");
    let play = stdout_json(&kestrel(&[
        "play",
        &model,
        "--impulses",
        "open:0.5",
        "--json",
    ]));
    assert_documented(&play, "docs/reduced.md", "play");
}
