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

#[test]
fn a_sheet_that_starts_inside_an_obstacle_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let inside = edited_scene(
        dir.path(),
        "drape_sphere.toml",
        &[("origin = [-0.5, 0.35, -0.5]", "origin = [-0.5, 0.0, -0.5]")],
    );
    for command in [
        vec!["run", "--steps", "1"],
        vec!["precompute", "--out"],
    ] {
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
        &["shell.toml", "obstacle 2 (sphere)", "25 of 25 particles", "1000 mm offset shell"],
    );
}

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
