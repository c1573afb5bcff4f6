//! The command line's forms: what `kestrel` accepts before any command runs.

use crate::common::{assert_success, kestrel, stdout_json, write_file};

#[cfg(feature = "tui")]
#[test]
fn files_without_a_command_open_the_workbench() {
    // `kestrel FILE…` is `kestrel tui FILE…`: without a terminal both refuse the same way
    // (not "unrecognized subcommand").
    for args in [
        &["kes_data/wool-suiting/tensile_warp.csv"][..],
        &["tui", "kes_data/wool-suiting/tensile_warp.csv"][..],
    ] {
        assert_usage_error(args, "the workbench needs a terminal");
    }
}

#[test]
fn a_command_name_still_runs_the_command() {
    let out = kestrel(&["values", "kes_data/wool-suiting/tensile_warp.csv"]);
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("EMT"));
}

#[cfg(not(feature = "tui"))]
#[test]
fn without_the_tui_feature_no_command_is_a_usage_error() {
    for args in [&[][..], &["kes_data/wool-suiting/tensile_warp.csv"][..]] {
        assert_usage_error(args, "built without the tui feature");
    }
}

/// `kestrel ARGS` exits with 2 (bad input) and says `message` on stderr.
fn assert_usage_error(args: &[&str], message: &str) {
    let out = kestrel(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(message), "{args:?}: {err}");
}

#[test]
fn test_cantilever_prints_the_bending_length_beside_peirce_and_refuses_a_card_without_weight() {
    let card = "scenes/fabrics/cotton-shirting.fitted.params.toml";
    let out = kestrel(&[
        "test",
        "cantilever",
        "--params",
        card,
        "--direction",
        "weft",
        "--no-friction",
        "--json",
    ]);
    let v = stdout_json(&out);
    let num = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("no {k}: {v}"));
    let (c, peirce, b, w) = (
        num("bending_length_cm"),
        num("peirce_cm"),
        num("B"),
        num("W_gf_per_cm2"),
    );
    // Peirce's c = (B/W)^(1/3) from the printed B and W, and the mesh within 3 % of it
    assert!(((b / w).cbrt() / peirce - 1.0).abs() < 1e-9, "{v}");
    assert!((c / peirce - 1.0).abs() < 0.03, "{v}");

    // a card without areal density: bad input, exit 2, saying what to add
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(card).unwrap();
    let start = text
        .find("[properties]")
        .expect("the card has [properties]");
    let end = text[start + 1..]
        .find("\n[")
        .map_or(text.len(), |e| start + 1 + e);
    let bare = write_file(
        dir.path(),
        "bare.params.toml",
        format!("{}{}", &text[..start], &text[end..]),
    );
    assert_usage_error(
        &[
            "test",
            "cantilever",
            "--params",
            bare.to_str().unwrap(),
            "--json",
        ],
        "areal density",
    );
}

#[test]
fn drape_lowering_options_go_with_their_lowering() {
    // refused by the command line before the card is read: --load-steps is the quasi-static
    // lowering's, --ramp / --max-time / --free-vibration the dynamic one's
    let card = "scenes/fabrics/cotton-shirting.fitted.params.toml";
    let base = ["test", "drape", "--params", card];
    for extra in [
        &["--dynamic", "--load-steps", "20"][..],
        &["--ramp", "2"][..],
        &["--max-time", "5"][..],
        &["--free-vibration"][..],
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let out = kestrel(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains("--"), "{extra:?}: {err}");
    }
}

/// What a card lacks for a lab test is bad input naming the card: here a card cut to its warp
/// laws, for the drape (which needs the weft's too) and for a weft cantilever.
#[test]
fn a_lab_test_names_the_card_that_lacks_a_law() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(crate::common::repo(
        "scenes/fabrics/cotton-shirting.fitted.params.toml",
    ))
    .unwrap();
    let mut params: kestrel::params::FabricParams = toml::from_str(&text).unwrap();
    params.weft = Default::default();
    let card = dir.path().join("warp_only.toml");
    std::fs::write(&card, toml::to_string(&params).unwrap()).unwrap();
    let card = card.display().to_string();
    for args in [
        &["test", "drape", "--params", &card, "--cell", "30", "--json"][..],
        &[
            "test",
            "cantilever",
            "--params",
            &card,
            "--direction",
            "weft",
        ][..],
    ] {
        let out = kestrel(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("warp_only.toml: ") && err.contains("weft"),
            "{args:?}: {err}"
        );
    }
}

/// A folder given to a command that reads KES files opens as the workbench opens it: its
/// `.csv` files sorted by name, other files skipped with a note; a library folder, each
/// fabric folder's in turn; a folder with no `.csv` anywhere is refused, named.
#[test]
fn commands_that_read_kes_files_take_a_folder_as_the_workbench_does() {
    use kestrel::kes::folder::kes_files;
    let dir = tempfile::tempdir().unwrap();
    let fabric = dir.path().join("cotton");
    std::fs::create_dir(&fabric).unwrap();
    let names = ["tensile_warp.csv", "bending_weft.csv", "shear_warp.csv"];
    for n in names {
        std::fs::copy(
            crate::common::repo("kes_data/cotton-shirting").join(n),
            fabric.join(n),
        )
        .unwrap();
    }
    write_file(&fabric, "notes.txt", "not a curve");
    write_file(&fabric, ".hidden", "");
    let sorted: Vec<std::path::PathBuf> =
        ["bending_weft.csv", "shear_warp.csv", "tensile_warp.csv"]
            .iter()
            .map(|n| fabric.join(n))
            .collect();
    // the library function, for a fabric folder and for a folder of fabric folders
    let found = kes_files(std::slice::from_ref(&fabric)).unwrap();
    assert_eq!(found.files, sorted);
    assert_eq!(found.skipped, [fabric.join("notes.txt")]);
    let wool = dir.path().join("wool");
    std::fs::create_dir(&wool).unwrap();
    std::fs::copy(
        crate::common::repo("kes_data/wool-suiting/tensile_weft.csv"),
        wool.join("tensile_weft.csv"),
    )
    .unwrap();
    let found = kes_files(&[dir.path().to_path_buf()]).unwrap();
    let mut library = sorted.clone();
    library.push(wool.join("tensile_weft.csv"));
    assert_eq!(found.files, library);
    // the command line: a folder reads as its files named one by one, with a note
    let folder = fabric.to_str().unwrap();
    let files: Vec<&str> = sorted.iter().map(|p| p.to_str().unwrap()).collect();
    for command in ["values", "plot"] {
        let mut by_folder = vec![command, folder];
        let mut by_files = vec![command];
        by_files.extend(&files);
        if command == "plot" {
            let a = dir.path().join("a.png");
            let b = dir.path().join("b.png");
            by_folder.extend(["-o", a.to_str().unwrap()]);
            by_files.extend(["-o", b.to_str().unwrap()]);
            let (x, y) = (kestrel(&by_folder), kestrel(&by_files));
            assert_success(&x);
            assert_success(&y);
            assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
            continue;
        }
        by_folder.push("--json");
        by_files.push("--json");
        let x = kestrel(&by_folder);
        assert_eq!(stdout_json(&x), stdout_json(&kestrel(&by_files)));
        let note = String::from_utf8_lossy(&x.stderr);
        assert!(
            note.contains("note: skipped 1 file(s) that are not .csv")
                && note.contains("notes.txt"),
            "{note}"
        );
    }
    let out = dir.path().join("card.params.toml");
    let fit = kestrel(&["fit", folder, "-o", out.to_str().unwrap(), "--json"]);
    let j = stdout_json(&fit);
    assert_eq!(j["fabrics"][0]["curves"].as_array().map(Vec::len), Some(3));
    assert!(out.is_file());
    // nothing to read: refused, the folder named
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for command in ["values", "fit", "report", "validate"] {
        let mut args = vec![command, empty.to_str().unwrap()];
        if command == "validate" {
            args.extend([
                "--params",
                "scenes/fabrics/cotton-shirting.fitted.params.toml",
            ]);
        }
        let table = dir.path().join("table.csv");
        if command == "report" {
            args.extend(["-o", table.to_str().unwrap()]);
        }
        let r = kestrel(&args);
        assert_eq!(r.status.code(), Some(2), "{command}");
        let e = String::from_utf8_lossy(&r.stderr);
        assert!(
            e.contains("no .csv file in") && e.contains("empty"),
            "{command}: {e}"
        );
    }
}

/// A folder reads as `DIR/*.csv` would: hidden files (`.hidden.csv`, macOS `._name.csv`) are
/// skipped and counted, `.CSV` is read, a fabric folder's sub-folders are named as not read,
/// and a library's symlinked sub-folder is not followed (a link to the folder above would read
/// it again); the workbench opens folders with the same function.
#[test]
fn folders_skip_hidden_files_read_any_case_of_csv_and_follow_no_symlinked_folder() {
    use kestrel::kes::folder::kes_files;
    let dir = tempfile::tempdir().unwrap();
    let fabric = dir.path().join("cotton");
    let sub = fabric.join("old");
    std::fs::create_dir_all(&sub).unwrap();
    let tensile = crate::common::repo("kes_data/cotton-shirting/tensile_warp.csv");
    let shear = crate::common::repo("kes_data/cotton-shirting/shear_warp.csv");
    for (from, to) in [
        (&tensile, fabric.join("tensile_warp.csv")),
        (&tensile, fabric.join("._tensile_warp.csv")),
        (&tensile, fabric.join(".hidden.csv")),
        (&shear, fabric.join("SHEAR.CSV")),
        (&shear, sub.join("shear_warp.csv")),
    ] {
        std::fs::copy(from, to).unwrap();
    }
    let found = kes_files(std::slice::from_ref(&fabric)).unwrap();
    assert_eq!(
        found.files,
        [fabric.join("SHEAR.CSV"), fabric.join("tensile_warp.csv")]
    );
    assert_eq!(found.hidden, 2);
    assert_eq!(found.folders, [sub]);
    let note = found.skipped_note().unwrap();
    assert!(
        note.contains("skipped 2 hidden file(s)") && note.contains("old"),
        "{note}"
    );
    let out = kestrel(&["values", fabric.to_str().unwrap(), "--json"]);
    assert_eq!(stdout_json(&out).as_array().map(Vec::len), Some(2));
    let err = crate::common::stderr(&out);
    assert!(err.contains("note: ") && err.contains("2 hidden"), "{err}");
    // a library whose sub-folder links back to it: the link is not followed
    #[cfg(unix)]
    {
        let library = dir.path().join("library");
        std::fs::create_dir(&library).unwrap();
        std::os::unix::fs::symlink("..", library.join("loop")).unwrap();
        std::os::unix::fs::symlink(&fabric, library.join("cotton")).unwrap();
        let real = library.join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::copy(&tensile, real.join("tensile_warp.csv")).unwrap();
        let found = kes_files(std::slice::from_ref(&library)).unwrap();
        assert_eq!(found.files, [real.join("tensile_warp.csv")]);
        assert_eq!(
            found.folders,
            [library.join("cotton"), library.join("loop")]
        );
        std::fs::remove_dir_all(&real).unwrap();
        let err = kes_files(&[library]).unwrap_err();
        assert!(
            err.contains("symlinked sub-folders are not followed"),
            "{err}"
        );
    }
}

/// `fit -o` names a parameter file `.toml` or `.json` (any case), as the workbench's save
/// does: a plot's or a curve's name (`cli.png`, `x.csv`) or none is refused before anything
/// is fitted or written, exit 2, naming the extensions.
#[test]
fn fit_refuses_a_card_named_other_than_toml_or_json() {
    let dir = tempfile::tempdir().unwrap();
    let curve = "kes_data/cotton-shirting/tensile_warp.csv";
    for name in ["o/se/cli.png", "x.csv", "card"] {
        let out = dir.path().join(name);
        let run = kestrel(&["fit", curve, "-o", out.to_str().unwrap(), "--json"]);
        crate::common::assert_refused(&run, 2, &[".toml or .json"]);
        assert!(run.stdout.is_empty(), "{name}: fitted before refusing");
        assert!(!out.exists() && !dir.path().join("o").exists(), "{name}");
    }
    // so does fit --values
    let values = write_file(
        dir.path(),
        "v.toml",
        "fabric = \"crafted\"\n[warp]\nEMT = 3.2\nWT = 5.76\nRT = 52\n",
    );
    let out = dir.path().join("v.png");
    let run = kestrel(&[
        "fit",
        "--values",
        values.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    crate::common::assert_refused(&run, 2, &[".toml or .json"]);
    assert!(!out.exists());
    let out = dir.path().join("card.TOML");
    assert_success(&kestrel(&["fit", curve, "-o", out.to_str().unwrap()]));
    assert!(kestrel::params::FabricParams::read(&out).is_ok());
}
