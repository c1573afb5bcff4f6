//! Regression tests of the third probe of the command line: a play that fails after writing
//! frames, curves and models of huge finite numbers, truncated shards and models, negative
//! counts, `--size` without `--out`, non-Latin fabric names and the merge's messages. Each
//! must end with a clear error (exit 2 for bad input) and write nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{assert_refused, files_in, kes_data, small_door_file, stderr, write_file};

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

/// The small door scene (6 × 7) as `door.toml` in `dir`, precomputed into `door.krd`.
fn small_door_model(dir: &Path) -> PathBuf {
    small_door_file(dir);
    assert_ok(&kestrel(
        dir,
        &["precompute", "door.toml", "--out", "door.krd"],
    ));
    dir.join("door.krd")
}

/// A model's bytes: (offset of the f32 arrays σ, mean, U, q, q̇; their lengths).
fn model_arrays(bytes: &[u8]) -> Vec<(usize, usize)> {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let (v, r, s, singular, json) = (u32_at(12), u32_at(16), u32_at(20), u32_at(28), u32_at(32));
    let m = 3 * v;
    let mut at = 36 + json;
    let mut out = Vec::new();
    for n in [singular, m, m * r, s * r, s * r] {
        out.push((at, n));
        at += 4 * n;
    }
    out
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
fn a_model_of_huge_finite_values_is_refused_at_reading() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let model = small_door_model(d);
    let bytes = std::fs::read(&model).unwrap();
    let arrays = model_arrays(&bytes);
    let cases = [
        (0, 1e38f32, "singular values: value 2"),
        (1, 2e6, "mean shape: value 2 is 2e6 m, beyond ±1e6 m"),
        (1, -1e38, "mean shape: value 2"),
        (2, 1e30, "basis: value 2"),
        (3, 1e38, "recorded states q: value 2"),
        (4, 3e38, "recorded velocities q̇: value 2"),
    ];
    for (array, value, words) in cases {
        let mut b = bytes.clone();
        let at = arrays[array].0 + 4;
        b[at..at + 4].copy_from_slice(&value.to_le_bytes());
        std::fs::write(d.join("bad.krd"), crate::common::resealed(b)).unwrap();
        let out = kestrel(d, &["play", "bad.krd", "--impulses", "open:0.2,stop:0.2"]);
        assert_refused(&out, 2, &["bad.krd", words, "precompute the model again"]);
    }
}

#[test]
fn a_truncated_shard_or_model_is_said_to_be_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_door_file(d);
    for k in ["1/2", "2/2"] {
        let name = format!("p{}", &k[..1]);
        assert_ok(&kestrel(
            d,
            &["precompute", "door.toml", "--shard", k, "--out", &name],
        ));
    }
    let whole = std::fs::read(d.join("p2")).unwrap();
    // cut in the states, just before the end, and within the header
    for keep in [whole.len() / 2, whole.len() - 3, 20] {
        std::fs::write(d.join("cut"), &whole[..keep]).unwrap();
        let out = kestrel(d, &["precompute", "merge", "p1", "cut", "--out", "m.krd"]);
        let holds = format!("the file holds {keep} bytes where");
        assert_refused(&out, 2, &["cut: truncated precompute shard", &holds]);
        assert!(!stderr(&out).contains("checksum"), "{}", stderr(&out));
    }
    // a changed byte is still the checksum's
    let mut flipped = whole.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    std::fs::write(d.join("cut"), &flipped).unwrap();
    let out = kestrel(d, &["precompute", "merge", "p1", "cut", "--out", "m.krd"]);
    assert_refused(
        &out,
        2,
        &["cut: not a kestrel precompute shard", "checksum"],
    );
    assert_ok(&kestrel(
        d,
        &["precompute", "merge", "p1", "p2", "--out", "m.krd"],
    ));
    let model = std::fs::read(d.join("m.krd")).unwrap();
    let expected = format!("where {} are expected", model.len());
    for keep in [model.len() / 2, model.len() - 1] {
        std::fs::write(d.join("cut.krd"), &model[..keep]).unwrap();
        let out = kestrel(d, &["play", "cut.krd", "--impulses", "open:0.2"]);
        let holds = format!("the file holds {keep} bytes {expected}");
        assert_refused(&out, 2, &["cut.krd: truncated reduced model", &holds]);
    }
}

#[test]
fn the_merge_says_what_is_wrong_with_which_file_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_door_file(d);
    let shard = |k: &str, name: &str, extra: &[&str]| {
        let mut args = vec!["precompute", "door.toml", "--shard", k, "--out", name];
        args.extend(extra);
        assert_ok(&kestrel(d, &args));
    };
    shard("1/2", "p1", &[]);
    shard("2/2", "p2", &[]);
    shard("2/2", "q2", &["--seed", "7"]);
    let merge = |parts: &[&str], extra: &[&str]| {
        let mut args = vec!["precompute", "merge"];
        args.extend(parts);
        args.extend(["--out", "m.krd"]);
        args.extend(extra);
        kestrel(d, &args)
    };
    let out = merge(&["p1"], &[]);
    assert_refused(&out, 2, &["shard 2/2 missing", "--shard K/2", "door.toml"]);
    let out = merge(&["p1", "p1"], &[]);
    assert_refused(
        &out,
        2,
        &["p1 and p1 are both shard 1/2", "give each shard once"],
    );
    let out = merge(&["p1", "q2"], &[]);
    assert_refused(
        &out,
        2,
        &["p1 and q2", "seed 1 and 7", "merge only the shards of"],
    );
    let edited = std::fs::read_to_string(d.join("door.toml")).unwrap() + "\n# edited\n";
    write_file(d, "door2.toml", edited);
    let out = merge(&["p1", "p2"], &["--scene", "door2.toml"]);
    assert_refused(
        &out,
        2,
        &["p1 was sampled from another version", "--scene FILE"],
    );
    assert!(!d.join("m.krd").exists());
}

#[test]
fn negative_counts_reach_their_range_and_size_needs_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = crate::common::repo("scenes/provot_sheet_17.toml");
    let scene = scene.to_str().unwrap();
    let out = kestrel(d, &["run", scene, "--steps", "-5"]);
    assert_refused(&out, 2, &["--steps", "from 0 to 100000000"]);
    assert!(!stderr(&out).contains("invalid digit"), "{}", stderr(&out));
    for (args, words) in [
        (&["run", scene, "--every", "-1"][..], "from 1 to"),
        (&["run", scene, "--passes", "-2"], "from 0 (off) to 100"),
        (
            &["precompute", scene, "--out", "m.krd", "--rank", "-3"],
            "at least 1",
        ),
        (
            &["precompute", scene, "--out", "m.krd", "--seed", "-1"],
            "from 0 to",
        ),
        (
            &["test", "cantilever", "--params", "x.toml", "--cells", "-4"],
            "from 2 to 2000",
        ),
    ] {
        let out = kestrel(d, args);
        assert_refused(&out, 2, &[words]);
        assert!(!stderr(&out).contains("invalid digit"), "{}", stderr(&out));
    }
    let model = small_door_model(d);
    let model = model.to_str().unwrap();
    let play = |extra: &[&str]| {
        let mut args = vec!["play", model, "--impulses", "open:0.2"];
        args.extend(extra);
        kestrel(d, &args)
    };
    for size in ["5x5", "abc", "-5x10", "960x720"] {
        assert_refused(&play(&["--size", size]), 2, &["--out"]);
    }
    assert_refused(&play(&["--every", "-2"]), 2, &["--every", "at least 1"]);
    assert_refused(&play(&["--flow-neighbours", "-1"]), 2, &["from 1 to 8"]);
    let card = crate::common::repo("scenes/fabrics/cotton-shirting.fitted.params.toml");
    let out = kestrel(
        d,
        &[
            "test",
            "drape",
            "--params",
            card.to_str().unwrap(),
            "--size",
            "1x1",
        ],
    );
    assert_refused(&out, 2, &["--out"]);
    let mut left = files_in(d);
    left.retain(|f| !f.starts_with("door"));
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

/// Rewrites a model's header without its scene's SHA-256 (as the library alone writes it), so
/// `play --compare` reaches the comparison with another scene.
#[cfg(feature = "render")]
fn without_scene_sha(bytes: &[u8]) -> Vec<u8> {
    let json_len = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[36..36 + json_len]).unwrap();
    header.as_object_mut().unwrap().remove("scene_sha256");
    let json = serde_json::to_vec(&header).unwrap();
    let mut out = bytes[..32].to_vec();
    out.extend((json.len() as u32).to_le_bytes());
    out.extend(json);
    out.extend(&bytes[36 + json_len..]);
    crate::common::resealed(out)
}

#[cfg(feature = "render")]
#[test]
fn a_play_that_fails_after_its_frames_leaves_nothing() {
    if crate::common::gpu_or_skip(64, 48).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let model = small_door_model(d);
    std::fs::write(&model, without_scene_sha(&std::fs::read(&model).unwrap())).unwrap();
    // a scene of another grid: the comparison fails after every frame was rendered
    let door = std::fs::read_to_string(d.join("door.toml")).unwrap();
    write_file(d, "other.toml", door.replace("nu = 6", "nu = 5"));
    let play = |out: &str, extra: &[&str]| {
        let mut args = vec!["play", "door.krd", "--impulses", "open:0.2", "--out", out];
        args.extend(["--size", "64x48"]);
        args.extend(extra);
        kestrel(d, &args)
    };
    let out = play("new/frames", &["--compare", "other.toml"]);
    assert_refused(&out, 2, &["was not made from this scene"]);
    assert!(!d.join("new").exists(), "{:?}", files_in(d));
    // into a folder that was there: its own file stays, no frame is left
    std::fs::create_dir(d.join("old")).unwrap();
    write_file(&d.join("old"), "keep.txt", "mine");
    let out = play("old", &["--compare", "other.toml"]);
    assert_refused(&out, 2, &["was not made from this scene"]);
    assert_eq!(files_in(&d.join("old")), ["keep.txt"]);
    // the same play without the failing comparison writes its frames
    assert_ok(&play("old", &[]));
    assert!(d.join("old/frame_00000.png").is_file());
}

/// A `render --video` whose ffmpeg fails (after writing part of the video) leaves neither the
/// frames nor the video; one whose ffmpeg succeeds puts the video in place.
#[cfg(feature = "render")]
#[test]
fn a_render_whose_video_fails_leaves_no_frames_and_no_video() {
    if crate::common::gpu_or_skip(64, 48).is_none() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = crate::common::repo("scenes/provot_sheet_17.toml");
    let render = |ffmpeg: &str| {
        let bin = d.join(format!("bin-{}", ffmpeg.len()));
        std::fs::create_dir_all(&bin).unwrap();
        let script = write_file(&bin, "ffmpeg", ffmpeg);
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new(env!("CARGO_BIN_EXE_kestrel"))
            .args([
                "render",
                scene.to_str().unwrap(),
                "--frames",
                "2",
                "--size",
                "64x48",
            ])
            .args(["--out", "frames", "--video", "v.mp4"])
            .current_dir(d)
            .env("PATH", path)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = render("#!/bin/sh\nfor last; do :; done\necho partial > \"$last\"\nexit 1\n");
    assert_refused(&out, 1, &["ffmpeg failed", "v.mp4"]);
    let mut left = files_in(d);
    left.retain(|f| !f.starts_with("bin-"));
    assert!(left.is_empty(), "{left:?}");
    let out = render("#!/bin/sh\nfor last; do :; done\necho video > \"$last\"\n");
    assert_ok(&out);
    assert_eq!(std::fs::read_to_string(d.join("v.mp4")).unwrap(), "video\n");
    assert!(d.join("frames/frame_00001.png").is_file());
    let mut left = files_in(d);
    left.retain(|f| !f.starts_with("bin-"));
    assert_eq!(left, ["frames", "v.mp4"]);
}

/// A reader that closes kestrel's stdout before it prints (`kestrel values … | head`) ends it
/// as it ends `cat` (SIGPIPE), not with a panic.
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_command_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let curve = kes_data().join("wool-suiting/tensile_warp.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["values", &curve.to_string_lossy()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kestrel binary runs");
    // the read end closed before the first line is written
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("kestrel ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        out.status.success() || out.status.signal() == Some(13),
        "{:?}: {err}",
        out.status
    );
}

/// A curve whose rows are in reverse order (its loop run the wrong way: it gives back more work
/// than it takes) is not fitted — no law with friction follows it — and no card is written;
/// `values` calls it reversed too.
#[test]
fn a_curve_with_its_rows_reversed_is_not_fitted() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["tensile_warp.csv", "shear_warp.csv"] {
        let text = std::fs::read_to_string(kes_data().join("wool-suiting").join(file)).unwrap();
        let (head, rows): (Vec<&str>, Vec<&str>) = text
            .lines()
            .partition(|l| l.starts_with('#') || l.contains('['));
        let reversed: Vec<&str> = head.into_iter().chain(rows.into_iter().rev()).collect();
        let path = write_file(dir.path(), file, reversed.join("\n") + "\n");
        let out = kestrel(
            dir.path(),
            &["fit", &path.to_string_lossy(), "-o", "card.toml"],
        );
        assert_refused(
            &out,
            2,
            &["gives back more work than it takes", "reverse order"],
        );
        assert!(!dir.path().join("card.toml").exists());
    }
}
