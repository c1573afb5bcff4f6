//! What commands write: never one of the files they read (also with `--force`), and nothing
//! left behind by an interrupted run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{assert_refused, repo, write_file};

/// `write_file`, its folder made first.
fn write_in(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    if let Some(folder) = Path::new(name).parent() {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
    }
    write_file(dir, name, contents)
}

/// `kestrel args…` run in `dir`, stdin closed.
fn kestrel(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the kestrel binary runs")
}

/// A folder with `scenes/fabrics/` (both cards), the tensile virtual KES scene, the hanging
/// sheet at 5 steps, and the small door scene (6 × 7) on the cotton card (`door.toml`).
fn scene_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for card in [
        "cotton_shirting.params.toml",
        "cotton-shirting.fitted.params.toml",
    ] {
        let text = std::fs::read(repo(&format!("scenes/fabrics/{card}"))).unwrap();
        write_in(d, &format!("fabrics/{card}"), text);
    }
    let kes = std::fs::read(repo("scenes/kes_tensile_warp.toml")).unwrap();
    write_file(d, "kes_tensile_warp.toml", kes);
    let hanging = std::fs::read_to_string(repo("scenes/fabric_hanging.toml")).unwrap();
    write_file(
        d,
        "hanging.toml",
        hanging.replace("steps = 1000", "steps = 5"),
    );
    let door = std::fs::read_to_string(repo("scenes/reduced_door_cloth.toml")).unwrap();
    let springs =
        "kind = \"springs\"\nstructural = 8.0           # N/m\nshear = 4.0\nflexion = 0.5\n";
    assert!(door.contains(springs));
    let mut on_card = door.replace(
        springs,
        "kind = \"kes\"\nparams = \"fabrics/cotton_shirting.params.toml\"\n",
    );
    // small, as `small_door_file`
    for (from, to) in [
        ("nu = 55", "nu = 6"),
        ("nv = 60", "nv = 7"),
        ("duration = 40.0", "duration = 2.0"),
        ("settle = 2.0", "settle = 0.2"),
    ] {
        assert!(on_card.contains(from));
        on_card = on_card.replace(from, to);
    }
    write_file(d, "door.toml", on_card);
    dir
}

/// Every file under `dir` with its bytes, sorted by path.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for e in std::fs::read_dir(folder).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

/// The card a scene reads (and a record, a frame folder's files) is one of the command's
/// inputs: an output naming it is refused, also with `--force`, before any work, and every
/// file stays as it was.
#[test]
fn an_output_naming_the_card_the_scene_reads_is_refused_also_with_force() {
    let dir = scene_folder();
    let d = dir.path();
    let card = "fabrics/cotton_shirting.params.toml";
    let fitted = "fabrics/cotton-shirting.fitted.params.toml";
    let kes = std::fs::read_to_string(d.join("kes_tensile_warp.toml")).unwrap();
    write_file(
        d,
        "kes_onto_card.toml",
        kes.replace(
            "output = \"virtual_kes_tensile_warp.csv\"",
            &format!("output = \"{card}\""),
        ),
    );
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["run", "kes_tensile_warp.toml", "--csv", card, "--force"],
        vec![
            "run",
            "kes_tensile_warp.toml",
            "--csv",
            "fabrics/../fabrics/cotton_shirting.params.toml",
            "--force",
        ],
        vec!["run", "kes_onto_card.toml", "--force"],
        vec!["run", "hanging.toml", "--record", fitted, "--force"],
        vec!["precompute", "door.toml", "--out", card, "--force"],
        vec![
            "precompute",
            "door.toml",
            "--out",
            "m.krd",
            "--error-plot",
            card,
            "--force",
        ],
    ];
    if cfg!(feature = "render") {
        // the video is checked before ffmpeg is looked for
        cases.push(vec![
            "render",
            "hanging.toml",
            "--out",
            "f",
            "--frames",
            "1",
            "--video",
            fitted,
            "--force",
        ]);
        cases.push(vec![
            "test",
            "drape",
            "--params",
            "f/drape_top.png",
            "--out",
            "f",
            "--force",
        ]);
    }
    // a merge's scene named by its shard (no --scene): that scene's card is an input too
    let shard = kestrel(
        d,
        &["precompute", "door.toml", "--shard", "1/1", "--out", "p1"],
    );
    crate::common::assert_success(&shard);
    cases.push(vec!["precompute", "merge", "p1", "--out", card, "--force"]);
    let before = snapshot(d);
    for args in &cases {
        let out = kestrel(d, args);
        assert_refused(&out, 2, &["that is the input"]);
        assert!(out.stdout.is_empty(), "{args:?}: worked before refusing");
        assert!(snapshot(d) == before, "{args:?} changed the folder");
    }
}

/// A record or a card named as a frame in the `--out` folder is an input of the render.
#[cfg(feature = "render")]
#[test]
fn a_render_never_writes_a_frame_over_the_record_it_renders() {
    let dir = scene_folder();
    let d = dir.path();
    let run = kestrel(
        d,
        &[
            "run",
            "hanging.toml",
            "--record",
            "f/frame_00000.png",
            "--every",
            "5",
        ],
    );
    crate::common::assert_success(&run);
    let before = snapshot(d);
    let out = kestrel(
        d,
        &[
            "render",
            "--from",
            "f/frame_00000.png",
            "--out",
            "f",
            "--size",
            "64x64",
            "--force",
        ],
    );
    assert_refused(&out, 2, &["that is the input", "frame_00000.png"]);
    assert!(snapshot(d) == before);
    assert_eq!(crate::common::files_in(&d.join("f")), ["frame_00000.png"]);
}

/// `report FOLDER -o FOLDER/CURVE.csv --force`: the folder's files are the inputs, not only
/// the folder.
#[test]
fn an_output_naming_a_curve_of_a_folder_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let curve = std::fs::read(repo("kes_data/cotton-shirting/tensile_warp.csv")).unwrap();
    write_in(d, "curves/tensile_warp.csv", &curve);
    let out = kestrel(
        d,
        &[
            "report",
            "curves",
            "-o",
            "curves/tensile_warp.csv",
            "--force",
        ],
    );
    assert_refused(&out, 2, &["that is the input"]);
    assert_eq!(
        std::fs::read(d.join("curves/tensile_warp.csv")).unwrap(),
        curve
    );
}

/// Spawns `kestrel args…` in `dir`, waits for `first` to appear (the first frame written),
/// sends `signal`, and returns what the command printed and its exit code.
#[cfg(all(unix, feature = "render"))]
fn interrupted_after(dir: &Path, args: &[&str], first: &Path, signal: i32) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kestrel"));
    cmd.args(args).current_dir(dir);
    signalled_after(cmd, first, signal)
}

/// Spawns `cmd` (kestrel, set up by the caller), waits for `first` to appear, sends `signal`
/// to kestrel alone, and returns what it printed and its exit code.
#[cfg(all(unix, feature = "render"))]
fn signalled_after(mut cmd: Command, first: &Path, signal: i32) -> Output {
    use std::time::{Duration, Instant};
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kestrel binary runs");
    let start = Instant::now();
    while !first.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{cmd:?}: {} never appeared",
            first.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: a signal to the child this test spawned and has not waited for yet
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    child.wait_with_output().unwrap()
}

/// The small door scene and its model, precomputed in `dir` (`door.toml`, `door.krd`).
#[cfg(all(unix, feature = "render"))]
fn small_door_model(dir: &Path) {
    crate::common::small_door_file(dir);
    crate::common::assert_success(&kestrel(
        dir,
        &["precompute", "door.toml", "--out", "door.krd"],
    ));
}

/// Ctrl-C (SIGINT) in `render`: the frames written and the `--out` folder it made are
/// removed, exit 130 with "interrupted: N frames removed"; in a folder that was there, its
/// own files stay (a frame replaced under `--force` stays replaced); the same render again is
/// not refused.
#[cfg(all(unix, feature = "render"))]
#[test]
fn an_interrupted_render_removes_its_frames_and_the_folder_it_made() {
    if crate::common::gpu_or_skip(64, 48).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = repo("scenes/provot_sheet_17.toml");
    let scene = scene.to_str().unwrap();
    let args = |out: &'static str| {
        vec![
            "render", scene, "--out", out, "--frames", "100000", "--every", "200", "--size",
            "64x48",
        ]
    };
    let out = interrupted_after(
        d,
        &args("new/frames"),
        &d.join("new/frames/frame_00000.png"),
        libc::SIGINT,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted: ") && err.contains(" removed"),
        "{err}"
    );
    assert!(!d.join("new").exists(), "{:?}", crate::common::files_in(d));
    // a folder of its own: its file and a frame it replaced (with --force) stay
    write_in(d, "old/keep.txt", "mine");
    write_in(d, "old/frame_00000.png", "old frame");
    let mut force = args("old");
    force.push("--force");
    let out = interrupted_after(d, &force, &d.join("old/frame_00001.png"), libc::SIGTERM);
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        crate::common::files_in(&d.join("old")),
        ["frame_00000.png", "keep.txt"]
    );
    // no temporary left, and the render runs again without --force
    let again = kestrel(
        d,
        &[
            "render",
            scene,
            "--out",
            "new/frames",
            "--frames",
            "2",
            "--size",
            "64x48",
        ],
    );
    crate::common::assert_success(&again);
    assert_eq!(
        crate::common::files_in(&d.join("new/frames")),
        ["frame_00000.png", "frame_00001.png"]
    );
}

/// SIGTERM in `play --out`: its frames and folder removed, exit 143.
#[cfg(all(unix, feature = "render"))]
#[test]
fn an_interrupted_play_removes_its_frames() {
    if crate::common::gpu_or_skip(64, 48).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_door_model(d);
    let args = [
        "play",
        "door.krd",
        "--impulses",
        "open:1000",
        "--out",
        "p",
        "--size",
        "64x48",
    ];
    let out = interrupted_after(d, &args, &d.join("p/frame_00000.png"), libc::SIGTERM);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(
        err.contains("interrupted: ") && err.contains(" removed"),
        "{err}"
    );
    assert_eq!(crate::common::files_in(d), ["door.krd", "door.toml"]);
}

/// SIGTERM in `play --out` before its first frame (its timing loop: one pass of 10⁶ frames)
/// left the empty `--out` folder (the watch started with the frames): removed now, exit 143.
/// No GPU needed: the signal comes before the renderer starts.
#[cfg(all(unix, feature = "render"))]
#[test]
fn a_play_interrupted_before_its_first_frame_removes_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_door_model(d);
    let args = [
        "play",
        "door.krd",
        "--impulses",
        "open:25000",
        "--out",
        "p",
        "--every",
        "100000",
        "--size",
        "64x48",
    ];
    let out = interrupted_after(d, &args, &d.join("p"), libc::SIGTERM);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted: 0 frames removed"), "{err}");
    assert_eq!(crate::common::files_in(d), ["door.krd", "door.toml"]);
}

/// SIGTERM to kestrel alone while its ffmpeg runs (ffmpeg, in another process group, is not
/// told and succeeds): the run still ends as interrupted, 143, and removes the frames and the
/// video it made (it once exited 0 and kept them).
#[cfg(all(unix, feature = "render"))]
#[test]
fn a_render_interrupted_while_its_ffmpeg_runs_removes_the_frames_and_the_video() {
    use std::os::unix::fs::PermissionsExt;
    if crate::common::gpu_or_skip(64, 48).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let script = write_in(
        d,
        "bin/ffmpeg",
        "#!/bin/sh\nfor last; do :; done\ntouch started\nsleep 2\necho video > \"$last\"\n",
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        d.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let scene = repo("scenes/provot_sheet_17.toml");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kestrel"));
    cmd.args(["render", scene.to_str().unwrap(), "--frames", "2"])
        .args(["--size", "64x48", "--out", "frames", "--video", "v.mp4"])
        .current_dir(d)
        .env("PATH", path);
    let out = signalled_after(cmd, &d.join("started"), libc::SIGTERM);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted: 2 frames removed"), "{err}");
    let mut left = crate::common::files_in(d);
    left.retain(|f| f != "bin" && f != "started");
    assert!(left.is_empty(), "{left:?}");
}

/// A render started with SIGINT ignored (`cmd &` in a script, `trap '' INT`) keeps ignoring
/// it: the watch does not put a handler over the inherited disposition (it once exited 130
/// and removed its frames).
#[cfg(all(unix, feature = "render"))]
#[test]
fn a_render_started_ignoring_sigint_goes_on_after_one() {
    use std::os::unix::process::CommandExt;
    if crate::common::gpu_or_skip(64, 48).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = repo("scenes/provot_sheet_17.toml");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kestrel"));
    cmd.args([
        "render",
        scene.to_str().unwrap(),
        "--frames",
        "80",
        "--every",
        "400",
    ])
    .args(["--size", "64x48", "--out", "frames"])
    .current_dir(d);
    // SAFETY: only async-signal-safe calls between fork and exec
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = signalled_after(cmd, &d.join("frames/frame_00000.png"), libc::SIGINT);
    crate::common::assert_success(&out);
    assert_eq!(crate::common::files_in(&d.join("frames")).len(), 80);
}
