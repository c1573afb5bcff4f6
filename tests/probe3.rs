//! Regression tests of the third probe of the command line: curves of huge finite numbers and
//! non-Latin fabric names. Each must end with a clear error (exit 2 for bad input) and write
//! nothing, or give distinct files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{assert_refused, kes_data, stderr, write_file};

/// `kestrel args…` run in `dir`, stdin closed.
fn kestrel(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the kestrel binary runs")
}

/// The command succeeded (its stderr shown otherwise).
fn assert_ok(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
}

/// The names of the entries of `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `kes_data/cotton-shirting/FILE` with every data row's second cell multiplied by
/// 10^`exponent` (as text: `-2.904e299`), written to `dir/name`; its path and the line of its
/// first data row.
fn scaled_curve(dir: &Path, file: &str, name: &str, exponent: &str) -> (PathBuf, usize) {
    let text = std::fs::read_to_string(kes_data().join("cotton-shirting").join(file)).unwrap();
    let mut out = String::new();
    let mut first = 0;
    for (i, line) in text.lines().enumerate() {
        let data = line.starts_with(|c: char| c.is_ascii_digit() || c == '-');
        match line.split_once(',') {
            Some((x, y)) if data => {
                first = if first == 0 { i + 1 } else { first };
                out.push_str(&format!("{x},{y}e{exponent}\n"))
            }
            _ => out.push_str(&format!("{line}\n")),
        }
    }
    (write_file(dir, name, out), first)
}

#[test]
fn huge_finite_forces_and_moments_are_refused_at_reading_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 1e299 times a few gf/cm: finite, but WT, LT, MMD, SMD overflowed to inf
    let cases = [
        ("tensile_warp.csv", "t.csv", "gf/cm = 1e6 N/m"),
        ("shear_warp.csv", "s.csv", "gf/cm = 1e6 N/m"),
        ("bending_warp.csv", "b.csv", "gf*cm/cm = 100 N*m/m"),
        ("compression.csv", "c.csv", "gf/cm2 = 1e8 Pa"),
        ("friction_warp.csv", "f.csv", "100 (no unit)"),
        ("roughness_warp.csv", "h.csv", "100000 um = 0.1 m"),
    ];
    for (file, name, bound) in cases {
        let (_, line) = scaled_curve(d, file, name, "299");
        for args in [
            &["values", name][..],
            &["values", name, "--json"],
            &["report", name, "-o", "rep.csv"],
            &["fit", name, "-o", "o.toml"],
            &["plot", name, "-o", "p.png"],
        ] {
            let out = kestrel(d, args);
            let at = format!("{name}:{line}:2");
            assert_refused(&out, 2, &[&at, "in magnitude", bound]);
            assert!(!String::from_utf8_lossy(&out.stdout).contains("inf"));
        }
    }
    // a tensile force of 1.1e6 gf/cm (1.08e6 N/m) is past the bound; the data as shipped reads
    let (t, _) = scaled_curve(d, "tensile_warp.csv", "big.csv", "0");
    assert_ok(&kestrel(d, &["values", t.to_str().unwrap()]));
    let text = std::fs::read_to_string(&t).unwrap();
    write_file(d, "big.csv", text.replacen(",-2.904e0\n", ",1.1e6\n", 1));
    let out = kestrel(d, &["values", "big.csv"]);
    assert_refused(&out, 2, &["big.csv:7:2", "`1.1e6`", "force per width"]);
    // a generic loop record: its force column in µN times 1e299
    let data = crate::common::repo("tests/data/friction-loops/FrictionModels_test_data_2.txt");
    let mut text = String::new();
    for (i, line) in std::fs::read_to_string(data).unwrap().lines().enumerate() {
        text.push_str(line);
        text.push_str(if i == 0 { "\n" } else { "e299\n" });
    }
    write_file(d, "loop.csv", text);
    let columns = ["--x", "Position [mm]", "--y", "Friction [uN]"];
    for command in ["values", "fit"] {
        let mut args = vec![command, "loop.csv", "-o", "l.out"];
        if command == "values" {
            args.truncate(2);
        }
        args.extend(columns);
        let out = kestrel(d, &args);
        assert_refused(&out, 2, &["loop.csv:2:4", "force", "1e6 N in magnitude"]);
    }
    let mut left = files_in(d);
    left.retain(|f| !f.ends_with(".csv"));
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn non_latin_fabric_names_get_distinct_card_files_and_latin_ones_keep_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text =
        std::fs::read_to_string(kes_data().join("cotton-shirting/tensile_warp.csv")).unwrap();
    for (name, fabric) in [
        ("a.csv", "絹クレープ"),
        ("b.csv", "綿ブロード"),
        ("c.csv", "Crêpe de Chine"),
    ] {
        let t = text.replace("# fabric: Cotton shirting", &format!("# fabric: {fabric}"));
        write_file(d, name, t);
    }
    let out = kestrel(d, &["fit", "a.csv", "b.csv", "c.csv", "-o", "cards"]);
    assert_ok(&out);
    assert_eq!(
        files_in(&d.join("cards")),
        [
            "cr-pe-de-chine.params.toml",
            "絹クレープ.params.toml",
            "綿ブロード.params.toml"
        ]
    );
    let t = kes_data().join("cotton-shirting/tensile_warp.csv");
    let out = kestrel(d, &["fit", t.to_str().unwrap()]);
    assert_ok(&out);
    assert!(d.join("cotton-shirting.params.toml").is_file());
}
