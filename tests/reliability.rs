//! Regression tests of bad input that once panicked, hung, ran out of memory or succeeded
//! silently (issue 16): each must end at once with exit 2 (or 1 for work that failed) and a
//! message naming the file. Minimized inputs are in tests/data/bad/ or built here.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kestrel::cloth::record::{Camera, RecordInfo, Recording};
use kestrel::reduced::{precompute, PrecomputeOptions, ReducedModel};

use crate::common::{assert_refused, edited_scene, kestrel, repo, write_file};

fn bad(name: &str) -> String {
    format!("tests/data/bad/{name}")
}

/// A 6 × 6 door model, precomputed once (a few ms).
fn door_model() -> &'static ReducedModel {
    static MODEL: OnceLock<ReducedModel> = OnceLock::new();
    MODEL.get_or_init(|| {
        let scene = crate::common::small_door(6, 6, 3.0);
        precompute(&scene, &PrecomputeOptions::default(), &|_| {})
            .expect("door precomputes")
            .0
    })
}

/// The door model changed by `edit`, written to DIR/NAME.krd.
fn model_file(dir: &Path, name: &str, edit: impl FnOnce(&mut ReducedModel)) -> PathBuf {
    let mut model = door_model().clone();
    edit(&mut model);
    let path = dir.join(format!("{name}.krd"));
    std::fs::write(&path, model.to_bytes().expect("encodes")).expect("writes");
    path
}

fn play(model: &Path, impulses: &str) -> Output {
    let model = model.to_str().expect("utf-8 path");
    kestrel(&["play", model, "--impulses", impulses, "--json"])
}

#[test]
fn model_headers_that_once_panicked_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let empty_grid = |nu, nv| {
        move |m: &mut ReducedModel| {
            (m.info.nu, m.info.nv) = (nu, nv);
            m.vertices = 0;
            m.mean.clear();
            m.basis.clear();
        }
    };
    let mut cases: Vec<(PathBuf, &str)> = vec![
        (model_file(dir.path(), "nu0", empty_grid(0, 6)), "grid 0x6"),
        // 65536² wraps to 0 in u32
        (
            model_file(dir.path(), "wrap", empty_grid(65536, 65536)),
            "grid 65536x65536",
        ),
        (
            model_file(dir.path(), "reversed", |m| {
                m.info.door.as_mut().expect("door").range_deg = [90.0, 0.0];
            }),
            "range_deg",
        ),
        (
            model_file(dir.path(), "far", |m| {
                m.info.camera = Some(Camera {
                    eye: [1e20, 0.0, 0.0],
                    target: [0.0; 3],
                    up: [0.0, 1.0, 0.0],
                    fov_deg: 40.0,
                });
            }),
            "camera",
        ),
    ];
    // rank 2²⁰ and 2³² − 1 states announced in the binary header
    let mut bytes = door_model().to_bytes().unwrap();
    bytes[16..20].copy_from_slice(&(1u32 << 20).to_le_bytes());
    bytes[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    let sizes = write_file(dir.path(), "sizes.krd", crate::common::resealed(bytes));
    cases.push((sizes, "bytes after the header"));
    for (path, words) in cases {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        assert_refused(&play(&path, "stop:1"), 2, &[&name, words]);
    }
}

#[test]
fn time_like_inputs_that_once_hung_are_refused_with_their_bound() {
    let dir = tempfile::tempdir().unwrap();
    let still = model_file(dir.path(), "still", |m| m.info.frame_dt = 0.0);
    assert_refused(&play(&still, "stop:1"), 2, &["still.krd", "frame_dt = 0 s"]);
    let model = model_file(dir.path(), "door", |_| {});
    let t = Instant::now();
    assert_refused(&play(&model, "stop:1e300"), 2, &["1000000 frames"]);
    assert!(t.elapsed() < Duration::from_secs(5));
    let out = kestrel(&["run", &bad("passes_u32_max.toml")]);
    assert_refused(&out, 2, &["passes_u32_max.toml", "passes", "at most 100"]);
    let out = kestrel(&["run", &bad("steps_huge.toml")]);
    assert_refused(&out, 2, &["steps_huge.toml", "at most 1e8 steps"]);
    let out = kestrel(&[
        "run",
        "scenes/provot_sheet_17.toml",
        "--steps",
        "1000000000",
    ]);
    assert_refused(&out, 2, &["--steps", "at most 1e8"]);
}

/// A record's header: `nu` × `nv` particles 1 cm apart, a frame every 1 ms step, no camera
/// and no obstacles.
fn plain_record_info(name: &str, nu: u32, nv: u32) -> RecordInfo {
    RecordInfo {
        name: name.into(),
        nu,
        nv,
        h_warp: 0.01,
        h_weft: 0.01,
        dt: 0.001,
        every: 1,
        camera: None,
        obstacles: Vec::new(),
    }
}

/// `kestrel render --from RECORD --out FRAMES extra…`.
#[cfg(feature = "render")]
fn render_from(record: &Path, frames: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "render",
        "--from",
        record.to_str().unwrap(),
        "--out",
        frames.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    kestrel(&args)
}

#[test]
fn a_record_announcing_a_huge_grid_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let info = plain_record_info("huge", 1 << 31, 1 << 31);
    let mut bytes = Recording::new(info).to_bytes().unwrap();
    // one frame announced; 12·2⁶² bytes of positions wrap to 0 in u64, leaving 16
    bytes[20..24].copy_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&[0u8; 16]);
    let path = write_file(dir.path(), "huge.rec", &bytes);
    let e = Recording::read(&path).unwrap_err().to_string();
    assert!(e.contains("huge.rec") && e.contains("2147483648"), "{e}");
    #[cfg(feature = "render")]
    {
        let out = render_from(&path, &dir.path().join("frames"), &[]);
        assert_refused(&out, 2, &["huge.rec", "not a kestrel record"]);
    }
}

#[test]
fn devices_fifos_and_oversized_files_are_refused_before_reading() {
    let out = kestrel(&["values", "/dev/zero"]);
    assert_refused(&out, 2, &["/dev/zero", "not a regular file"]);
    let dir = tempfile::tempdir().unwrap();
    // a sparse 65 MiB curve file: over the 64 MiB limit, refused by its size
    let big = dir.path().join("big.csv");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    let out = kestrel(&["values", big.to_str().unwrap()]);
    assert_refused(&out, 2, &["big.csv", "64 MiB"]);
    let fifo = dir.path().join("fifo.csv");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let t = Instant::now();
        let out = kestrel(&["values", fifo.to_str().unwrap()]);
        assert_refused(&out, 2, &["fifo.csv", "FIFO"]);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn a_curve_over_the_row_limit_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.csv");
    let rows = kestrel::kes::import::MAX_ROWS + 1;
    let mut text = String::with_capacity(8 * rows + 64);
    text.push_str("x [mm],y [N]\n");
    for _ in 0..rows {
        text.push_str("0.1,0.2\n");
    }
    std::fs::write(&path, text).unwrap();
    let out = kestrel(&["values", path.to_str().unwrap(), "--x", "1", "--y", "2"]);
    assert_refused(&out, 2, &["long.csv", "1000002", "1000000 rows"]);
}

/// A virtual KES test with a turning point that is not one (negative, vanishing, enormous) or
/// an empty mesh: once an all-zero curve with an NRMSE of 4e16 and exit 0, now refused.
#[test]
fn a_virtual_kes_test_out_of_its_ranges_is_refused_with_units() {
    let dir = tempfile::tempdir().unwrap();
    let card = crate::common::repo("scenes/fabrics/cotton_shirting.params.toml");
    for (line, named) in [
        (
            "max = -500.0",
            "kes_test max = -500 gf/cm: must be 10 to 5000",
        ),
        ("max = 1e-300", "kes_test max = 1e-300 gf/cm"),
        ("max = 1e300", "kes_test max = 1e300 gf/cm"),
        (
            "gauge_cells = 0",
            "kes_test gauge_cells = 0: must be at least 2",
        ),
        // 1 was run on 2 cells without a word
        (
            "gauge_cells = 1",
            "kes_test gauge_cells = 1: must be at least 2",
        ),
        (
            "width_cells = 0",
            "kes_test width_cells = 0: must be at least 1",
        ),
        ("points = 1", "kes_test points = 1: must be at least 2"),
    ] {
        let scene = dir.path().join("kes.toml");
        std::fs::write(
            &scene,
            format!(
                "name = \"bad\"\n[material]\nkind = \"kes\"\nparams = {:?}\n[kes_test]\ntest = \"tensile\"\ndirection = \"warp\"\n{line}\noutput = \"out.csv\"\n",
                card.display().to_string()
            ),
        )
        .unwrap();
        let out = kestrel(&["run", &scene.display().to_string()]);
        assert_refused(&out, 2, &["kes.toml", named]);
        assert!(!dir.path().join("out.csv").exists(), "{line}");
    }
}

/// A scene whose card is missing names the scene, then the card.
#[test]
fn a_scene_whose_card_is_missing_names_both() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(crate::common::repo("scenes/fabric_hanging.toml"))
        .unwrap()
        .lines()
        .map(|l| {
            if l.starts_with("params =") {
                "params = \"fabrics/nope.toml\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let scene = dir.path().join("hang.toml");
    std::fs::write(&scene, text).unwrap();
    let out = kestrel(&["run", &scene.display().to_string(), "--steps", "1"]);
    assert_refused(&out, 2, &["hang.toml: cannot read", "fabrics/nope.toml"]);
}

/// A run whose energies overflow (positions finite) is no result: exit 1, said in the table.
#[test]
fn a_run_whose_energies_overflow_exits_one() {
    let out = kestrel(&["run", &bad("wind_1e200.toml")]);
    assert_refused(
        &out,
        1,
        &["wind_1e200.toml", "the energies at the end are not finite"],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("NOT FINITE"));
}

#[test]
fn a_scene_over_the_memory_budget_is_refused_up_front() {
    let out = kestrel(&["run", &bad("grid_5000.toml")]);
    assert_refused(
        &out,
        2,
        &["grid_5000.toml", "5000 x 5000", "budget of 2 GiB"],
    );
    let out = kestrel(&["run", &bad("camera_far.toml")]);
    assert_refused(&out, 2, &["camera_far.toml", "camera"]);
    let out = kestrel(&["run", &bad("sphere_1e300.toml")]);
    assert_refused(&out, 2, &["sphere_1e300.toml", "radius = 1e300 m", "1e6"]);
    let out = kestrel(&["run", &bad("size_1e300.toml")]);
    assert_refused(
        &out,
        2,
        &[
            "size_1e300.toml",
            "h_warp",
            "1.1111111111111112e299 m",
            "1e-6 to 100 m",
        ],
    );
}

#[test]
fn parameters_outside_their_physical_range_are_refused_with_units() {
    let out = kestrel(&[
        "simulate",
        "--params",
        &bad("eps_f_1e-300.params.toml"),
        "--test",
        "tensile",
        "--direction",
        "warp",
        "-o",
        "/nonexistent/out.csv",
    ]);
    assert_refused(
        &out,
        2,
        &[
            "eps_f_1e-300.params.toml",
            "eps_f",
            "1e-300",
            "physical range",
        ],
    );
}

#[test]
fn an_unconverged_implicit_run_exits_1_and_writes_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("r.rec");
    let out = kestrel(&[
        "run",
        "scenes/provot_sheet_17.toml",
        "--integrator",
        "broyden",
        "--dt",
        "1",
        "--steps",
        "2",
        "--json",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_refused(&out, 1, &["did not converge", "record was not written"]);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(summary["converged"], false);
    assert!(summary["unconverged_steps"].as_u64() > Some(0));
    assert!(!rec.exists());
}

#[test]
fn an_existing_output_is_exit_2_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let taken = write_file(dir.path(), "taken", b"keep");
    let t = taken.to_str().unwrap();
    // plot reads the image type from the extension before it looks at the file
    let taken_png = write_file(dir.path(), "taken.png", b"keep");
    let t_png = taken_png.to_str().unwrap();
    let cotton = "scenes/fabrics/cotton_shirting.params.toml";
    let curve = repo("kes_data/cotton-shirting/tensile_warp.csv");
    let curve = curve.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "simulate",
            "--params",
            cotton,
            "--test",
            "tensile",
            "--direction",
            "warp",
            "-o",
            t,
        ],
        vec!["plot", curve, "-o", t_png],
        vec![
            "run",
            "scenes/provot_sheet_17.toml",
            "--steps",
            "2",
            "--record",
            t,
        ],
        vec!["precompute", "scenes/reduced_door_cloth.toml", "--out", t],
    ];
    for args in commands {
        let out = kestrel(&args);
        assert_refused(&out, 2, &["taken", "--force"]);
    }
    assert_eq!(std::fs::read(&taken).unwrap(), b"keep");
    assert_eq!(std::fs::read(&taken_png).unwrap(), b"keep");
}

#[cfg(feature = "render")]
#[test]
fn render_and_play_check_sizes_and_every_frame_before_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("frames");
    let o = out_dir.to_str().unwrap();
    let out = kestrel(&[
        "render",
        "scenes/provot_sheet_17.toml",
        "--out",
        o,
        "--size",
        "0x0",
    ]);
    assert_refused(&out, 2, &["--size 0x0", "8192"]);
    // frame 1 is taken, frame 0 is not: refused before any frame is rendered
    std::fs::create_dir_all(&out_dir).unwrap();
    let taken = kestrel::render::frame_path(&out_dir, 1);
    std::fs::write(&taken, b"keep").unwrap();
    let model = model_file(dir.path(), "door", |_| {});
    let out = kestrel(&[
        "play",
        model.to_str().unwrap(),
        "--impulses",
        "stop:0.5",
        "--out",
        o,
    ]);
    assert_refused(&out, 2, &["frame_00001.png", "--force"]);
    assert!(!kestrel::render::frame_path(&out_dir, 0).exists());
    let out = kestrel(&[
        "render",
        "scenes/provot_sheet_17.toml",
        "--out",
        o,
        "--frames",
        "3",
    ]);
    assert_refused(&out, 2, &["frame_00001.png", "--force"]);
    assert_eq!(std::fs::read(&taken).unwrap(), b"keep");
}

/// Starts `kestrel args…` `kills` times and SIGKILLs it after a pseudo-random delay of up to
/// `max_ms`; after each kill the output is absent or whole (`whole` says so). Then one run to
/// the end: it succeeds, its output is whole, and no temporary of the killed runs is left.
fn killed_at_random_moments(
    args: &[&str],
    dir: &Path,
    outputs: &[PathBuf],
    max_ms: u64,
    whole: impl Fn(&Path) -> bool,
) {
    use rand::RngExt;
    let mut rng = crate::common::rng(16);
    let kills = 4;
    for _ in 0..kills {
        for o in outputs {
            let _ = std::fs::remove_file(o);
        }
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("kestrel starts");
        std::thread::sleep(Duration::from_millis(rng.random_range(0..max_ms)));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        for o in outputs.iter().filter(|o| o.exists()) {
            assert!(
                whole(o),
                "a partial file under the final name {}",
                o.display()
            );
        }
    }
    for o in outputs {
        let _ = std::fs::remove_file(o);
    }
    let out = kestrel(args);
    crate::common::assert_success(&out);
    for o in outputs {
        assert!(whole(o), "{} is not whole", o.display());
    }
    let temporaries: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    if Path::new("/proc/self").exists() {
        // a killed run's temporary is removed by the next write of the same name
        assert!(temporaries.is_empty(), "{temporaries:?}");
    }
}

#[test]
fn sigkill_during_fit_and_precompute_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("cotton.params.toml");
    let mut args = vec!["fit".to_string()];
    for test in ["tensile", "shear", "bending"] {
        for direction in ["warp", "weft"] {
            let p = repo(&format!("kes_data/cotton-shirting/{test}_{direction}.csv"));
            args.push(p.to_string_lossy().into_owned());
        }
    }
    args.extend(["-o".into(), params.to_string_lossy().into_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    killed_at_random_moments(&args, dir.path(), std::slice::from_ref(&params), 600, |p| {
        kestrel::FabricParams::read(p).is_ok()
    });

    let scene_path = edited_scene(
        dir.path(),
        "reduced_door_cloth.toml",
        &[
            ("nu = 55 ", "nu = 20 "),
            ("nv = 60 ", "nv = 20 "),
            ("duration = 40.0", "duration = 6.0"),
        ],
    );
    let model = dir.path().join("door.krd");
    let (s, m) = (scene_path.to_str().unwrap(), model.to_str().unwrap());
    killed_at_random_moments(
        &["precompute", s, "--out", m],
        dir.path(),
        std::slice::from_ref(&model),
        800,
        |p| ReducedModel::read(p).is_ok(),
    );
}

#[cfg(feature = "render")]
#[test]
fn sigkill_during_render_leaves_no_partial_frame() {
    if crate::common::gpu_or_skip(64, 48).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("frames");
    let f = frames.to_str().unwrap();
    let args = [
        "render",
        "scenes/provot_sheet_17.toml",
        "--frames",
        "6",
        "--size",
        "160x120",
        "--out",
        f,
        "--force",
    ];
    let outputs: Vec<PathBuf> = (0..6)
        .map(|n| kestrel::render::frame_path(&frames, n))
        .collect();
    std::fs::create_dir_all(&frames).unwrap();
    killed_at_random_moments(&args, &frames, &outputs, 1500, |p| {
        let bytes = std::fs::read(p).unwrap_or_default();
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.ends_with(b"IEND\xae\x42\x60\x82")
    });
}

#[cfg(feature = "render")]
#[test]
fn a_record_of_extreme_positions_renders_without_a_panic() {
    use kestrel::cloth::record::Frame;
    if crate::common::gpu_or_skip(64, 48).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // no camera: the default one is fitted to the positions
    let record = |nu: u32, nv: u32, at: fn(usize) -> [f32; 3]| Recording {
        info: plain_record_info("extreme", nu, nv),
        frames: vec![Frame {
            step: 0,
            time: 0.0,
            positions: (0..(nu * nv) as usize).map(at).collect(),
        }],
    };
    let cases = [
        (
            "far.rec",
            record(3, 3, |i| {
                [3e38 * if i % 2 == 0 { 1.0 } else { -1.0 }, 0.0, 1e38]
            }),
        ),
        ("point.rec", record(2, 2, |_| [0.0; 3])),
    ];
    for (name, rec) in cases {
        let path = dir.path().join(name);
        rec.write(&path, false).unwrap();
        let frames = dir.path().join(format!("{name}.frames"));
        let out = render_from(&path, &frames, &["--size", "64x48"]);
        assert!(
            !crate::common::stderr(&out).contains("panicked"),
            "{name}: {}",
            crate::common::stderr(&out)
        );
        crate::common::assert_success(&out);
    }
    // a single particle is no cloth: refused on reading
    let path = dir.path().join("one.rec");
    record(1, 1, |_| [0.0; 3]).write(&path, false).unwrap();
    let frames = dir.path().join("one.frames");
    let out = render_from(&path, &frames, &[]);
    assert_refused(&out, 2, &["one.rec", "at least 2 x 2"]);
}

/// Header floats beyond any physical range (a spacing of 1000 km, β of 1e30 s², a blend
/// rate of 1e300 1/s, a rank tolerance of 5, a negative error) are refused on reading,
/// naming the file, the field, its unit and the range.
#[test]
fn model_header_floats_beyond_their_range_are_refused_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(PathBuf, [&str; 2])> = vec![
        (
            model_file(dir.path(), "wide", |m| m.info.h_warp = 1e6),
            ["h_warp = 1e6 m", "[1e-6, 100] m"],
        ),
        (
            model_file(dir.path(), "fine", |m| m.info.h_weft = 1e-9),
            ["h_weft = 1e-9 m", "[1e-6, 100] m"],
        ),
        (
            model_file(dir.path(), "slow", |m| m.info.beta = 1e30),
            ["beta = 1e30 s^2", "[0, 1e12] s^2"],
        ),
        (
            model_file(dir.path(), "fast", |m| m.info.blend_rate = 1e300),
            ["blend_rate = 1e300 1/s", "[0, 1e6] 1/s"],
        ),
        (
            model_file(dir.path(), "tolerance", |m| m.info.rank_tolerance = 5.0),
            ["rank_tolerance = 5 -", "[0, 1] -"],
        ),
        (
            model_file(dir.path(), "error", |m| m.info.rel_error = -0.5),
            ["rel_error = -0.5 -", "[0, 1] -"],
        ),
    ];
    for (path, [field, range]) in cases {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        assert_refused(&play(&path, "stop:1"), 2, &[&name, field, range]);
    }
    // the model as precomputed is read
    let plain = model_file(dir.path(), "plain", |_| {});
    assert!(ReducedModel::read(&plain).is_ok());
}
