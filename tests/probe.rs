//! Regression tests of crafted bad inputs (a probe of the command line): each once panicked,
//! hung, lost data or gave a wrong result silently. Each must now end at once with a clear
//! error (exit 2 for bad input) naming what is wrong, and write nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{assert_refused, files_in, kes_data, repo, stderr, write_file};

/// `kestrel args…` run in `dir`, killed (and the test failed) if it runs past `limit`.
fn kestrel_in(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kestrel binary runs");
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`kestrel {}` still ran after {limit:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// Runs in `dir` with a limit of 60 s (a few ms of work; the machine may be loaded).
fn kestrel(dir: &Path, args: &[&str]) -> Output {
    kestrel_in(dir, args, Duration::from_secs(60))
}

/// Runs in `dir`, and fails the test with its stderr unless it exits 0.
fn kestrel_ok(dir: &Path, args: &[&str]) -> Output {
    let out = kestrel(dir, args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

/// `kes_data/cotton-shirting/tensile_warp.csv`, as an argument.
fn cotton_warp() -> String {
    repo("kes_data/cotton-shirting/tensile_warp.csv")
        .to_str()
        .unwrap()
        .to_owned()
}

/// `kes_data/cotton-shirting/FILE` with each data row (a line that starts with a digit or a
/// sign) rewritten by `edit(line number, cells)`, written to `dir/name`.
fn edited_curve(
    dir: &Path,
    file: &str,
    name: &str,
    edit: impl Fn(usize, &[&str]) -> String,
) -> PathBuf {
    let text = std::fs::read_to_string(kes_data().join("cotton-shirting").join(file)).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let data = line.starts_with(|c: char| c.is_ascii_digit() || c == '-');
        if data {
            let cells: Vec<&str> = line.split(',').collect();
            out.push_str(&edit(i + 1, &cells));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    write_file(dir, name, out)
}

/// A tensile curve with one force of 1e308 gf/cm (line 17), a shear curve whose angles are
/// scaled by 1e306 and a bending curve whose moments are all 1e308: finite numbers whose
/// slopes and spans overflow.
fn overflowing_curves(dir: &Path) -> [PathBuf; 3] {
    [
        edited_curve(dir, "tensile_warp.csv", "t.csv", |line, c| {
            if line == 17 {
                format!("{},1e308", c[0])
            } else {
                c.join(",")
            }
        }),
        edited_curve(dir, "shear_warp.csv", "s.csv", |_, c| {
            let angle: f64 = c[0].parse().unwrap();
            format!("{:e},{}", angle * 1e306, c[1])
        }),
        edited_curve(dir, "bending_warp.csv", "b.csv", |_, c| {
            format!("{},1e308", c[0])
        }),
    ]
}

#[test]
fn curves_whose_values_overflow_are_refused_without_a_panic_or_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let [t, s, b] = overflowing_curves(d);
    let t = t.file_name().unwrap().to_str().unwrap();
    // the fit's start overflowed (an infinite slope): a NaN bound panicked in the fit; now
    // such a force is refused when the file is read, as the workbench's fit of one built in
    // memory shows below
    assert_refused(
        &kestrel(d, &["fit", t, "-o", "o.toml"]),
        2,
        &["t.csv:17:2", "beyond any force per width", "1e6 N/m"],
    );
    let out = kestrel(d, &["report", t, "-o", "r.csv"]);
    assert_refused(&out, 2, &["t.csv:17:2"]);
    // the hysteresis plot's axes spanned more than plotters' tick search can divide: it hung
    for (curve, words) in [
        (t, "force per width"),
        ("s.csv", "shear angle"),
        ("b.csv", "bending moment per width"),
    ] {
        let out = kestrel_in(
            d,
            &["plot", curve, "--hysteresis", "-o", "h.png"],
            Duration::from_secs(60),
        );
        assert_refused(&out, 2, &[curve, words, "in magnitude"]);
    }
    assert!(!d.join("h.png").exists() && !d.join("o.toml").exists());
    assert!(s.exists() && b.exists());
}

#[cfg(feature = "tui")]
#[test]
fn the_workbench_opens_and_draws_the_fit_of_curves_whose_values_overflow() {
    use kestrel::tui::{Action, App, Event, Tab};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    let dir = tempfile::tempdir().unwrap();
    for path in overflowing_curves(dir.path()) {
        // the files are refused on reading, naming the file
        let (_, errors) = kestrel::tui::files::open(path.to_str().unwrap());
        assert!(
            errors.iter().any(|e| e.contains("in magnitude")),
            "{errors:?}"
        );
    }
    // the same curves built in memory (as the library takes them) still fit and draw
    for (path, curves) in overflowing_in_memory() {
        // building the app starts the Connector tab from the curve's estimate (it panicked)
        let mut app = App::new(curves, String::new(), true);
        app.update(Action::GoTab(Tab::Fit));
        app.update(Action::RunFit);
        let (curve_index, fit, _) = crate::tui::run_fit_job(&mut app);
        app.update(Action::Event(Event::FitDone {
            curve_index,
            fit: Box::new(fit),
        }));
        // drawing a line to a point past the canvas' arithmetic never ended
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
            t.draw(|f| f.render_widget(&app, f.area())).unwrap();
            let _ = tx.send(t.backend().to_string());
        });
        let screen = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{path}: the Fit tab did not draw"));
        assert!(screen.contains("Fit"), "{screen}");
    }
}

/// `overflowing_curves` as curves in SI, built in memory (the reader refuses their files): a
/// tensile force of 1e308 gf/cm at one sample, shear angles scaled by 1e306, bending moments
/// of 1e308 gf·cm/cm.
#[cfg(feature = "tui")]
fn overflowing_in_memory() -> Vec<(&'static str, Vec<kestrel::tui::message::LoadedCurve>)> {
    let read = |file: &str| crate::common::kes_curve(&format!("cotton-shirting/{file}")).clone();
    let mut t = read("tensile_warp.csv");
    t.y[10] = 1e308 * kestrel::kes::GF_PER_CM_N_PER_M;
    let mut s = read("shear_warp.csv");
    s.x.iter_mut().for_each(|x| *x *= 1e306);
    let mut b = read("bending_warp.csv");
    b.y.iter_mut()
        .for_each(|y| *y = 1e308 * kestrel::kes::GF_CM_PER_CM_N);
    let loaded = |curve: kestrel::kes::Curve| {
        vec![kestrel::tui::message::LoadedCurve {
            values: kestrel::tui::files::format_values(&curve),
            curve,
            fit: None,
            canonical: None,
            generation: 0,
        }]
    };
    vec![("t", loaded(t)), ("s", loaded(s)), ("b", loaded(b))]
}

#[test]
fn overflow_free_curves_still_fit() {
    // the guard above refuses only what overflows: the data as given fits
    let dir = tempfile::tempdir().unwrap();
    let t = &cotton_warp();
    kestrel_ok(dir.path(), &["fit", t, "-o", "o.toml"]);
    assert_eq!(files_in(dir.path()), ["o.toml"]);
}

/// `kes_data/cotton-shirting/FILE` with its `# fabric:` (and, if given, `# direction:`) line
/// replaced, written to `dir/name`.
fn relabelled(
    dir: &Path,
    file: &str,
    name: &str,
    fabric: &str,
    direction: Option<&str>,
) -> PathBuf {
    let text = std::fs::read_to_string(kes_data().join("cotton-shirting").join(file)).unwrap();
    let text: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("# fabric:") {
                format!("# fabric: {fabric}")
            } else if let (true, Some(d)) = (l.starts_with("# direction:"), direction) {
                format!("# direction: {d}")
            } else {
                l.to_string()
            }
        })
        .collect();
    write_file(dir, name, text.join("\n") + "\n")
}

#[test]
fn fabrics_whose_cards_would_share_a_name_are_refused_before_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let names = ["Cotton shirting", "cotton-shirting", "Cotton/shirting"];
    for (i, n) in names.iter().enumerate() {
        relabelled(d, "tensile_warp.csv", &format!("t{i}.csv"), n, None);
    }
    for force in [true, false] {
        let mut args = vec!["fit", "t0.csv", "t1.csv", "t2.csv", "-o", "out/"];
        if force {
            args.push("--force");
        }
        let out = kestrel(d, &args);
        assert_refused(
            &out,
            2,
            &["would both be written to", "cotton-shirting.params.toml"],
        );
        assert!(!d.join("out").exists(), "the folder was made");
    }
}

#[test]
fn a_bias_curve_never_replaces_the_warp_law_silently() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    relabelled(d, "tensile_warp.csv", "warp.csv", "Cotton shirting", None);
    relabelled(
        d,
        "tensile_weft.csv",
        "bias.csv",
        "Cotton shirting",
        Some("bias"),
    );
    let out = kestrel(
        d,
        &[
            "fit", "warp.csv", "bias.csv", "--model", "dahl", "-o", "wb.toml",
        ],
    );
    assert_refused(&out, 2, &["warp.csv", "bias.csv", "stored under warp"]);
    assert!(!d.join("wb.toml").exists());
    // a bias curve alone is the warp law, as documented
    kestrel_ok(d, &["fit", "bias.csv", "--model", "dahl", "-o", "b.toml"]);
}

#[test]
fn outputs_that_are_one_file_or_under_a_file_are_refused_before_precompute() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::common::small_door_file(d);
    write_file(d, "afile", "");
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["--out", "same.png", "--error-plot", "same.png", "--force"],
            &["--out and --error-plot", "same file"],
        ),
        // through a folder still to be made: `ny/..` is this folder once `ny` exists
        (
            &[
                "--out",
                "ny/../same.png",
                "--error-plot",
                "same.png",
                "--force",
            ],
            &["same file"],
        ),
        (
            &["--out", "./same.png", "--error-plot", "same.png"],
            &["same file"],
        ),
        (
            &["--out", "y.krd", "--error-plot", "afile/e.png"],
            &["afile is not a folder"],
        ),
    ];
    for (args, words) in cases {
        let mut all = vec!["precompute", "door.toml"];
        all.extend_from_slice(args);
        assert_refused(&kestrel(d, &all), 2, words);
        assert_eq!(files_in(d), ["afile", "door.toml"], "{args:?}");
    }
}

#[test]
fn fit_writes_the_format_its_output_name_says_and_checks_the_path_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = &cotton_warp();
    kestrel_ok(d, &["fit", t, "--model", "dahl", "-o", "card.json"]);
    let text = std::fs::read_to_string(d.join("card.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).expect("card.json is JSON");
    kestrel::params::FabricParams::read(&d.join("card.json")).expect("reads back");
    for o in ["x.toml", "x"] {
        let out = kestrel(d, &["fit", t, "--json-out", "-o", o]);
        assert_refused(&out, 2, &["--json-out", "read back as TOML"]);
    }
    write_file(d, "afile", "");
    // links that lead nowhere: one dangling, two in a loop
    std::os::unix::fs::symlink(d.join("gone/x.toml"), d.join("dangling")).unwrap();
    std::os::unix::fs::symlink(d.join("loop_b"), d.join("loop_a")).unwrap();
    std::os::unix::fs::symlink(d.join("loop_a"), d.join("loop_b")).unwrap();
    let long = "a/".repeat(2200) + "x.toml";
    // within PATH_MAX, but not with the temporary's name beside it
    let near = "a/".repeat(2040) + "x.toml";
    let cases: [(&str, &[&str]); 9] = [
        ("afile/c.toml", &["afile is not a folder"]),
        ("newdir/", &["names a folder"]),
        ("c.toml/.", &["names a folder"]),
        ("nd/..", &["names a folder"]),
        ("..", &["names a folder"]),
        ("dangling", &["leads nowhere"]),
        ("loop_a/c.toml", &["loop_a is a link that leads nowhere"]),
        (&long, &["4406 bytes", "at most 4032"]),
        (&near, &["4086 bytes", "at most 4032"]),
    ];
    for (o, words) in cases {
        let out = kestrel(d, &["fit", t, "-o", o]);
        assert_refused(&out, 2, words);
        assert!(stderr(&out).len() < 1000, "{}", stderr(&out));
    }
    assert_eq!(
        files_in(d),
        ["afile", "card.json", "dangling", "loop_a", "loop_b"]
    );
    // a missing folder on the path is made, as for every file kestrel writes
    kestrel_ok(d, &["fit", t, "--model", "dahl", "-o", "new/sub/c.toml"]);
    assert!(d.join("new/sub/c.toml").is_file());
}

#[test]
fn a_failed_fit_of_several_fabrics_leaves_no_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    relabelled(d, "tensile_warp.csv", "a.csv", "Fabric A", None);
    let flat = edited_curve(d, "tensile_warp.csv", "flat.csv", |_, c| {
        format!("{},1.0", c[0])
    });
    let text = std::fs::read_to_string(&flat).unwrap();
    std::fs::write(
        &flat,
        text.replace("# fabric: Cotton shirting", "# fabric: Fabric B"),
    )
    .unwrap();
    let out = kestrel(d, &["fit", "a.csv", "flat.csv", "-o", "out"]);
    assert_refused(&out, 2, &["flat.csv", "flat curve"]);
    assert!(!d.join("out").exists());
}

/// The text of `kes_data/cotton-shirting/FILE`.
fn cotton_text(file: &str) -> String {
    std::fs::read_to_string(kes_data().join("cotton-shirting").join(file)).unwrap()
}

/// The KES reader's error on `text` (it must refuse it).
fn kes_error(text: &str) -> String {
    match kestrel::kes::import::parse_kes(text, "t.csv", Default::default()) {
        Ok(c) => panic!("read: {} samples", c.x.len()),
        Err(e) => e.to_string(),
    }
}

/// `text` with `extra` lines inserted after line `after` (1-based).
fn with_lines(text: &str, after: usize, extra: &[&str]) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    for (i, e) in extra.iter().enumerate() {
        lines.insert(after + i, e);
    }
    lines.join("\n") + "\n"
}

/// `text` with line `n` (1-based) replaced.
fn with_line(text: &str, n: usize, new: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines[n - 1] = new;
    lines.join("\n") + "\n"
}

#[test]
fn metadata_in_two_units_must_agree_and_comes_before_the_header() {
    let t = cotton_text("tensile_warp.csv");
    let e = kes_error(&with_lines(
        &t,
        2,
        &["# weight [g/m2]: 120", "# weight [mg/cm2]: 50"],
    ));
    assert!(
        e.contains("t.csv:4") && e.contains("weight [g/m2]: 120"),
        "{e}"
    );
    // the same weight in two units is one weight
    let same = with_lines(&t, 2, &["# weight [g/m2]: 120", "# weight [mg/cm2]: 12"]);
    let c = kestrel::kes::import::parse_kes(&same, "t.csv", Default::default()).unwrap();
    assert!((c.weight().unwrap() - 0.12).abs() < 1e-12);
    let el = t.replace("strain [%]", "elongation [mm]");
    let e = kes_error(&with_lines(
        &el,
        2,
        &["# gauge length [mm]: 200", "# gauge length [cm]: 10"],
    ));
    assert!(
        e.contains("t.csv:4") && e.contains("gauge length [mm]: 200"),
        "{e}"
    );
    // a metadata line between the rows was ignored
    let e = kes_error(&with_lines(&t, 10, &["# direction: weft"]));
    assert!(
        e.contains("t.csv:11") && e.contains("after the header"),
        "{e}"
    );
    // a key read in any case agrees with itself in another case
    let again = with_lines(&t, 4, &["# direction: Warp"]);
    kestrel::kes::import::parse_kes(&again, "t.csv", Default::default()).unwrap();
    let e = kes_error(&t.replace("# kestrel-kes: 1", "# kestrel-kes: 99"));
    assert!(e.contains("t.csv:1") && e.contains("version 1"), "{e}");
    let e = kes_error(&t.replace('\n', "\r"));
    assert!(e.contains("carriage return alone"), "{e}");
}

#[test]
fn cells_are_checked_in_si_and_named_at_their_line_in_crlf_files_too() {
    let t = cotton_text("tensile_warp.csv");
    let bad_cell = with_line(&t, 17, "0.0750,x");
    for (text, line) in [
        (bad_cell.clone(), 17),
        (bad_cell.replace('\n', "\r\n"), 17),
        (with_lines(&bad_cell, 8, &["", ""]), 19),
        (
            with_lines(&bad_cell, 8, &["", ""]).replace('\n', "\r\n"),
            19,
        ),
    ] {
        let e = kes_error(&text);
        assert!(e.contains(&format!("t.csv:{line}:2:")), "{e}");
    }
    // a curvature of 1e307 1/cm is 1e309 1/m: infinite in SI
    let b = cotton_text("bending_warp.csv");
    let line = b.lines().position(|l| l.starts_with("0.")).unwrap() + 2;
    let e = kes_error(&with_line(&b, line, "1e307,0.01"));
    assert!(
        e.contains(&format!("t.csv:{line}:1")) && e.contains("overflows in SI"),
        "{e}"
    );
    // the strain error points at the row of the largest strain
    let e = kes_error(&with_line(&t, 17, "5000,1.0"));
    assert!(e.contains("t.csv:17:1"), "{e}");
}

#[test]
fn time_goes_forward_and_gauge_lengths_are_bounded() {
    let t = cotton_text("tensile_warp.csv");
    let mut n = 0;
    let timed: Vec<String> = t
        .lines()
        .map(|l| {
            if l.starts_with("strain") {
                format!("time [s],{l}")
            } else if l.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
                n += 1;
                format!("{},{l}", if n == 20 { 3 } else { n })
            } else {
                l.to_string()
            }
        })
        .collect();
    let e = kes_error(&(timed.join("\n") + "\n"));
    assert!(
        e.contains("t.csv:26:1") && e.contains("time goes back"),
        "{e}"
    );
    let el = t.replace("strain [%]", "elongation [mm]");
    let e = kes_error(&with_lines(&el, 2, &["# gauge length [m]: 1e308"]));
    assert!(e.contains("1 mm to 10 m"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "el.csv", &el);
    let out = kestrel(dir.path(), &["values", "el.csv", "--gauge-length", "1e308"]);
    assert_refused(&out, 2, &["--gauge-length 1e308", "1 to 10000"]);
}

#[test]
fn simulate_writes_only_what_reads_back_and_checks_a_cards_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = &cotton_warp();
    kestrel_ok(d, &["fit", t, "--model", "dahl", "-o", "c.toml"]);
    let sim = |card: &str, extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "--params",
            card,
            "--test",
            "tensile",
            "--direction",
            "warp",
            "-o",
            "s.csv",
        ];
        args.extend_from_slice(extra);
        kestrel(d, &args)
    };
    let out = sim("c.toml", &["--samples", "2000000"]);
    assert_refused(&out, 2, &["2000000 samples", "1000000"]);
    let mut args = vec!["simulate", "--params", "c.toml", "--test", "shear"];
    args.extend(["--direction", "normal", "-o", "s.csv"]);
    assert_refused(&kestrel(d, &args), 2, &["--direction normal"]);
    assert!(!d.join("s.csv").exists());
    // the most samples written read back
    let out = sim("c.toml", &["--samples", "1000000"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    kestrel_ok(d, &["values", "s.csv"]);
    std::fs::remove_file(d.join("s.csv")).unwrap();
    let card = std::fs::read_to_string(d.join("c.toml")).unwrap();
    for bad in ["1e308", "nan", "inf"] {
        let text = card.replacen("[[fits]]\n", &format!("[[fits]]\noffset = {bad}\n"), 1);
        write_file(d, "bad.toml", text);
        let out = sim("bad.toml", &[]);
        assert_refused(&out, 2, &["bad.toml", "offset = "]);
        assert!(!d.join("s.csv").exists());
    }
}

#[test]
fn fit_options_out_of_range_and_negative_numbers_get_their_own_message() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = &cotton_warp();
    for w in ["1e308", "-1", "nan"] {
        let out = kestrel(d, &["fit", t, "--weight-values", w]);
        assert_refused(&out, 2, &["is not a weight", "to 1e6"]);
    }
    let out = kestrel(d, &["fit", t, "--friction-coefficient", "-0.1"]);
    assert_refused(&out, 2, &["friction coefficient `-0.1`"]);
    let out = kestrel(d, &["plot", t, "--size", "-5x10", "-o", "p.png"]);
    assert_refused(&out, 2, &["bad plot size `-5x10`"]);
    let scene = repo("scenes/provot_sheet_17.toml");
    let out = kestrel(d, &["run", scene.to_str().unwrap(), "--dt", "-1"]);
    assert_refused(&out, 2, &["dt = -1 s"]);
    assert!(files_in(d).is_empty());
}

#[test]
fn a_generic_loop_law_is_never_written_to_a_card_that_cannot_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = repo("tests/data/friction-loops/FrictionModels_test_data_2.txt");
    let mut args = vec!["fit", data.to_str().unwrap(), "--x", "Position [mm]"];
    args.extend([
        "--y",
        "Friction [uN]",
        "--flip-y",
        "--where",
        "Normal [uN] > 1e6",
    ]);
    args.extend([
        "--model",
        "dahl",
        "--mu",
        "zero",
        "--offset",
        "fit",
        "-o",
        "loop.toml",
    ]);
    assert_refused(&kestrel(d, &args), 2, &["generic loop", "no place"]);
    assert!(files_in(d).is_empty());
}

#[test]
fn a_scene_grid_is_placed_within_bounds_with_a_cards_density() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (
            "origin = [0.0, 0.0, 0.0]",
            "origin = [1e300, 0.0, 0.0]",
            "origin = [1e300, 0, 0]",
        ),
        (
            "origin = [0.0, 0.0, 0.0]",
            "origin = [nan, 0.0, 0.0]",
            "origin = [NaN, 0, 0]",
        ),
        (
            "areal_density = 0.2",
            "areal_density = 5.1",
            "areal_density = 5.1 kg/m2",
        ),
        (
            "areal_density = 0.2",
            "areal_density = 1e308",
            "areal_density = 1e308 kg/m2",
        ),
    ];
    for (from, to, words) in cases {
        let scene = crate::common::edited_scene(d, "provot_sheet_17.toml", &[(from, to)]);
        let out = kestrel(d, &["run", scene.to_str().unwrap(), "--steps", "2"]);
        assert_refused(&out, 2, &["provot_sheet_17.toml", words]);
    }
}

#[cfg(feature = "render")]
#[test]
fn render_refuses_up_front_what_it_cannot_make() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = repo("scenes/provot_sheet_17.toml");
    let scene = scene.to_str().unwrap();
    // no ffmpeg on PATH: no frames rendered for a video that cannot be made
    let out = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args([
            "render", scene, "--frames", "2", "--out", "fr", "--video", "v.mp4",
        ])
        .current_dir(d)
        .env("PATH", d)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_refused(
        &out,
        2,
        &[
            "--video v.mp4",
            "ffmpeg is not on PATH",
            "ffmpeg -framerate",
        ],
    );
    std::fs::create_dir(d.join("vd")).unwrap();
    let mut args = vec!["render", scene, "--frames", "2", "--out", "fr"];
    args.extend(["--video", "vd", "--force"]);
    assert_refused(&kestrel(d, &args), 2, &["vd is a folder"]);
    kestrel_ok(d, &["run", scene, "--steps", "2", "--record", "r.rec"]);
    let mut args = vec!["render", "--from", "r.rec", "--color-by", "energy"];
    args.extend(["--out", "fr"]);
    assert_refused(&kestrel(d, &args), 2, &["r.rec", "positions only"]);
    assert_eq!(files_in(d), ["r.rec", "vd"]);
}

#[test]
fn an_integrator_the_material_cannot_take_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let scene = repo("scenes/provot_sheet_17.toml");
    let mut args = vec!["run", scene.to_str().unwrap(), "--steps", "2"];
    args.extend(["--integrator", "semi-implicit"]);
    assert_refused(
        &kestrel(dir.path(), &args),
        2,
        &["semi-implicit", "terzopoulos"],
    );
}

#[test]
fn control_characters_from_a_file_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    relabelled(
        d,
        "tensile_warp.csv",
        "evil.csv",
        "\u{1b}[2J\u{1b}[31mEVIL\u{7}",
        None,
    );
    edited_curve(d, "tensile_warp.csv", "nul.csv", |line, c| {
        if line == 17 {
            format!("{},1\u{0}2", c[0])
        } else {
            c.join(",")
        }
    });
    for (file, words) in [
        (
            "evil.csv",
            ["evil.csv:2", "\\u{1b}[2J\\u{1b}[31mEVIL\\u{7}"],
        ),
        ("nul.csv", ["nul.csv:17:2", "1\\u{0}2"]),
    ] {
        let out = kestrel(d, &["values", file]);
        assert_refused(&out, 2, &words);
        let raw = out.stderr.iter().any(|&b| b < 0x20 && b != b'\n');
        assert!(!raw, "{}", stderr(&out));
    }
}

#[test]
fn impossible_thickness_reversed_loops_and_a_zero_door_normal_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    edited_curve(d, "compression.csv", "neg.csv", |_, c| {
        format!("-{},{}", c[0], c[1])
    });
    let out = kestrel(d, &["values", "neg.csv"]);
    assert_refused(&out, 2, &["neg.csv:", ":1:", "a thickness is positive"]);
    // a shear loop with its rows reversed: 2HG < 0, said
    let text = cotton_text("shear_warp.csv");
    let (head, rows): (Vec<&str>, Vec<&str>) = text
        .lines()
        .partition(|l| !l.starts_with(|c: char| c.is_ascii_digit() || c == '-'));
    let reversed: Vec<&str> = head.into_iter().chain(rows.into_iter().rev()).collect();
    write_file(d, "rev.csv", reversed.join("\n") + "\n");
    let out = kestrel_ok(d, &["values", "rev.csv"]);
    assert!(stderr(&out).contains("2HG is negative"), "{}", stderr(&out));
    // a reduced model whose door plane has no normal
    let scene = crate::common::small_door(6, 6, 3.0);
    let opts = kestrel::reduced::PrecomputeOptions::default();
    let (mut model, _) = kestrel::reduced::precompute(&scene, &opts, &|_| {}).unwrap();
    model.info.door_plane = Some([[0.0; 3], [0.0; 3]]);
    write_file(d, "m.krd", model.to_bytes().unwrap());
    let out = kestrel(d, &["play", "m.krd", "--impulses", "stop:1", "--json"]);
    assert_refused(&out, 2, &["m.krd", "door_plane normal"]);
}

#[test]
fn huge_numbers_in_messages_are_short_and_each_message_blames_its_own_cause() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    edited_curve(d, "tensile_warp.csv", "negf.csv", |_, c| {
        format!("{},-1e300", c[0])
    });
    let out = kestrel(d, &["values", "negf.csv"]);
    let err = stderr(&out);
    assert!(
        err.contains("beyond any force per width") && err.len() < 2000,
        "{err}"
    );
    assert!(!err.contains("0000000000"), "{err}");
    crate::common::small_door_file(d);
    let cases: [(&[&str], &str); 4] = [
        (
            &["--epsilon", "nan"],
            "--epsilon NaN: expected a number in (0, 1)",
        ),
        (
            &["--epsilon", "2"],
            "--epsilon 2: expected a number in (0, 1)",
        ),
        (&["--rank", "0"], "--rank 0: expected a rank of at least 1"),
        (&["--duration", "1e300"], "1.84e19 steps"),
    ];
    for (extra, words) in cases {
        let mut args = vec!["precompute", "door.toml", "--out", "m.krd"];
        args.extend_from_slice(extra);
        assert_refused(&kestrel(d, &args), 2, &[words]);
    }
    let t = &cotton_warp();
    std::fs::create_dir(d.join("DIR")).unwrap();
    for force in [false, true] {
        let mut args = vec!["report", t, "-o", "DIR"];
        if force {
            args.push("--force");
        }
        assert_refused(&kestrel(d, &args), 2, &["DIR is a folder"]);
    }
    let door = std::fs::read_to_string(d.join("door.toml")).unwrap();
    let axis = door
        .lines()
        .find(|l| l.trim_start().starts_with("axis"))
        .expect("the door scene has an axis");
    write_file(d, "nan.toml", door.replace(axis, "axis = [nan, 1.0, 0.0]"));
    let out = kestrel(d, &["precompute", "nan.toml", "--out", "m.krd"]);
    assert_refused(&out, 2, &["axis must be a finite, non-zero vector"]);
    let every = door
        .lines()
        .find(|l| l.starts_with("every"))
        .expect("the door scene records every few steps");
    write_file(d, "every.toml", door.replace(every, "every = 1000000"));
    let out = kestrel(d, &["precompute", "every.toml", "--out", "m.krd"]);
    assert_refused(
        &out,
        2,
        &["chains = 4", "every = 1000000 steps", "lower every"],
    );
    assert!(!d.join("m.krd").exists());
}

#[test]
fn a_changed_shard_is_refused_by_its_checksum_and_a_bad_irf_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::common::small_door_file(d);
    kestrel_ok(
        d,
        &["precompute", "door.toml", "--shard", "1/1", "--out", "p1"],
    );
    let mut bytes = std::fs::read(d.join("p1")).unwrap();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    // magic, version, header length and header; then the first unit: states, rests, IRFs
    let unit = 16 + u32_at(&bytes, 12) as usize;
    let rests = u32_at(&bytes, unit + 4) as usize;
    let irfs = unit + 8 + 4 * rests;
    assert!(u32_at(&bytes, irfs) > 0, "the first unit has an IRF");
    let end = u32_at(&bytes, irfs + 12);
    // a flipped byte in the states: the header's checksum refuses it
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    std::fs::write(d.join("p1"), &flipped).unwrap();
    let out = kestrel(d, &["precompute", "merge", "p1", "--out", "m.krd"]);
    assert_refused(&out, 2, &["p1: not a kestrel precompute shard", "checksum"]);
    // an IRF starting after its end, written with a checksum that matches
    bytes[irfs + 8..irfs + 12].copy_from_slice(&(end + 1).to_le_bytes());
    let sum: String = {
        use sha2::Digest;
        sha2::Sha256::digest(&bytes[unit..])
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let header = String::from_utf8(bytes[16..unit].to_vec()).unwrap();
    let at = header.find("\"body_sha256\":\"").expect("a checksum") + 15;
    bytes[16 + at..16 + at + 64].copy_from_slice(sum.as_bytes());
    std::fs::write(d.join("p1"), bytes).unwrap();
    let out = kestrel(d, &["precompute", "merge", "p1", "--out", "m.krd"]);
    assert_refused(
        &out,
        2,
        &["p1: not a kestrel precompute shard", "runs from state"],
    );
    assert!(!stderr(&out).contains("Orbit {"), "{}", stderr(&out));
    assert!(!d.join("m.krd").exists());
}

#[test]
fn a_toml_error_on_a_long_line_quotes_only_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let long = format!(
        "kestrel_params = 1\nfabric = \"{}\" junk\n",
        "x".repeat(200_000)
    );
    write_file(d, "long.toml", &long);
    let mut args = vec!["simulate", "--params", "long.toml", "--test", "tensile"];
    args.extend(["--direction", "warp", "-o", "s.csv"]);
    let out = kestrel(d, &args);
    assert_refused(&out, 2, &["long.toml", "characters)"]);
    assert!(out.stderr.len() < 4000, "{} bytes", out.stderr.len());
    write_file(
        d,
        "scene.toml",
        format!("name = \"{}\" junk\n", "y".repeat(200_000)),
    );
    let out = kestrel(d, &["run", "scene.toml"]);
    assert_refused(&out, 2, &["scene.toml", "characters)"]);
    assert!(out.stderr.len() < 4000, "{} bytes", out.stderr.len());
}

#[test]
fn a_law_alone_in_its_file_is_held_to_a_cards_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let law = |level: &str| {
        format!(
            "[shear]\nk_s = 45.0\ntheta0 = 0.0\n[shear.friction]\nlevel = {level}\nmu = 0.05\n\
             [shear.friction.shape]\nmodel = \"bs2\"\neps_f = 0.01\neta = 0.3\nratio = 0.3\n"
        )
    };
    let mut args = vec!["simulate", "--params", "law.toml", "--test", "shear"];
    args.extend(["--direction", "warp", "-o", "s.csv"]);
    write_file(d, "law.toml", law("0.5"));
    kestrel_ok(d, &args);
    std::fs::remove_file(d.join("s.csv")).unwrap();
    write_file(d, "law.toml", law("1e9"));
    assert_refused(&kestrel(d, &args), 2, &["law.toml", "level", "1e9"]);
    assert!(!d.join("s.csv").exists());
}

#[test]
fn a_model_is_compared_only_with_the_scene_it_was_made_from() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::common::small_door_file(d);
    kestrel_ok(d, &["precompute", "door.toml", "--out", "m.krd"]);
    let text = std::fs::read_to_string(d.join("door.toml")).unwrap();
    // the same grid and frame time, another scene (its duration)
    write_file(
        d,
        "other.toml",
        text.replace("duration = 2.0", "duration = 2.5"),
    );
    let mut args = vec!["play", "m.krd", "--impulses", "stop:0.1", "--json"];
    args.extend(["--compare", "other.toml"]);
    assert_refused(
        &kestrel(d, &args),
        2,
        &["--compare other.toml", "not the scene"],
    );
    kestrel_ok(
        d,
        &[
            "play",
            "m.krd",
            "--impulses",
            "stop:0.1",
            "--json",
            "--compare",
            "door.toml",
        ],
    );
}

#[test]
fn a_virtual_kes_scene_names_its_output_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let card = repo("scenes/fabrics/cotton_shirting.params.toml");
    let card = card.to_str().unwrap();
    let text = std::fs::read_to_string(repo("scenes/kes_shear_warp.toml")).unwrap();
    let params = text
        .lines()
        .find(|l| l.starts_with("params"))
        .expect("the scene names its card");
    let output = text
        .lines()
        .find(|l| l.starts_with("output"))
        .expect("the scene names its output");
    for (bad, shown) in [
        ("output = \"\"", "output = \"\""),
        ("output = \"new/\"", "new/"),
    ] {
        let scene = text
            .replace(params, &format!("params = \"{card}\""))
            .replace(output, bad);
        write_file(d, "ks.toml", scene);
        let out = kestrel(d, &["run", "ks.toml"]);
        assert_refused(
            &out,
            2,
            &["ks.toml: kes_test: output", shown, "must name a file"],
        );
    }
}

#[test]
fn fit_from_values_writes_the_format_its_output_name_says() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let body = "fabric = \"crafted\"\n[warp]\nEMT = 3.2\nWT = 5.76\nRT = 52\n";
    write_file(d, "v.toml", body);
    kestrel_ok(d, &["fit", "--values", "v.toml", "-o", "card.json"]);
    kestrel::params::FabricParams::read(&d.join("card.json")).expect("reads back as JSON");
    let out = kestrel(
        d,
        &["fit", "--values", "v.toml", "--json-out", "-o", "c.toml"],
    );
    assert_refused(&out, 2, &["--json-out", "read back as TOML"]);
    assert_eq!(files_in(d), ["card.json", "v.toml"]);
}

/// An output that is one of the command's own inputs is refused before any work, also with
/// `--force` and spelled another way (`./`, `new/../`): the input would be replaced by what
/// was made from it. The inputs are unchanged.
#[test]
fn an_output_never_replaces_the_commands_own_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let curve = std::fs::read(repo("kes_data/cotton-shirting/tensile_warp.csv")).unwrap();
    write_file(d, "t.csv", &curve);
    kestrel_ok(d, &["fit", "t.csv", "--model", "dahl", "-o", "card.toml"]);
    let card_text = std::fs::read(d.join("card.toml")).unwrap();
    crate::common::small_door_file(d);
    let door = std::fs::read(d.join("door.toml")).unwrap();
    let cases: [&[&str]; 5] = [
        &["fit", "t.csv", "--model", "dahl", "-o", "t.csv", "--force"],
        &[
            "fit", "t.csv", "--model", "dahl", "-o", "./t.csv", "--force",
        ],
        &["report", "t.csv", "-o", "new/../t.csv", "--force"],
        &["precompute", "door.toml", "--out", "door.toml", "--force"],
        &[
            "simulate",
            "--params",
            "card.toml",
            "--test",
            "tensile",
            "--direction",
            "warp",
            "-o",
            "card.toml",
            "--force",
        ],
    ];
    for args in cases {
        let out = kestrel(d, args);
        assert_refused(&out, 2, &["that is the input"]);
        assert!(out.stdout.is_empty(), "{args:?}: worked before refusing");
        assert_eq!(std::fs::read(d.join("t.csv")).unwrap(), curve, "{args:?}");
        assert_eq!(
            std::fs::read(d.join("card.toml")).unwrap(),
            card_text,
            "{args:?}"
        );
        assert_eq!(
            std::fs::read(d.join("door.toml")).unwrap(),
            door,
            "{args:?}"
        );
    }
    assert_eq!(files_in(d), ["card.toml", "door.toml", "t.csv"]);
}

/// `report` takes one card per fabric: two cards of one fabric are refused (the second was
/// ignored without a word), before any work.
#[test]
fn report_refuses_two_cards_of_one_fabric() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = &cotton_warp();
    for card in ["a.toml", "b.toml"] {
        kestrel_ok(d, &["fit", t, "--model", "dahl", "-o", card]);
    }
    let out = kestrel(
        d,
        &[
            "report", t, "-o", "r.csv", "--params", "a.toml", "--params", "b.toml",
        ],
    );
    assert_refused(&out, 2, &["a.toml and b.toml", "one card per fabric"]);
    assert_eq!(files_in(d), ["a.toml", "b.toml"]);
}

/// A card with a byte-order mark (as some editors save files) reads as the same card, in
/// JSON as in TOML.
#[test]
fn a_card_with_a_byte_order_mark_reads_in_json_and_toml() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = &cotton_warp();
    for name in ["card.json", "card.toml"] {
        kestrel_ok(d, &["fit", t, "--model", "dahl", "-o", name]);
        let plain = kestrel::params::FabricParams::read(&d.join(name)).unwrap();
        let text = std::fs::read_to_string(d.join(name)).unwrap();
        let bom = d.join(format!("bom_{name}"));
        std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
        let read = kestrel::params::FabricParams::read(&bom);
        assert_eq!(read.as_ref().ok(), Some(&plain), "{name}: {read:?}");
    }
}

/// A shard given to `play` said "bad magic", a model given as `--params` "not UTF-8 text",
/// and `open:1e400` "duration inf s must be >= 0": each now says what the file is and which
/// command reads it, or that the number is out of range.
#[test]
fn a_kestrel_file_in_the_wrong_place_says_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::common::small_door_file(d);
    kestrel_ok(
        d,
        &["precompute", "door.toml", "--shard", "1/1", "--out", "p1"],
    );
    kestrel_ok(d, &["precompute", "merge", "p1", "--out", "m.krd"]);
    let out = kestrel(d, &["play", "p1", "--impulses", "open:1"]);
    assert_refused(
        &out,
        2,
        &[
            "p1",
            "a shard of a precompute",
            "kestrel precompute merge PART… --out MODEL",
        ],
    );
    assert!(!stderr(&out).contains("magic"), "{}", stderr(&out));
    let out = kestrel(d, &["test", "drape", "--params", "m.krd"]);
    assert_refused(
        &out,
        2,
        &["m.krd", "not a fabric card but a reduced model (.krd)"],
    );
    assert!(!stderr(&out).contains("UTF-8"), "{}", stderr(&out));
    let out = kestrel(d, &["play", "m.krd", "--impulses", "open:1e400"]);
    assert_refused(
        &out,
        2,
        &["duration `1e400` s is out of range", "finite", ">= 0"],
    );
    assert!(!stderr(&out).contains("inf"), "{}", stderr(&out));
}
