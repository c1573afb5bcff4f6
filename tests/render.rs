//! Offline frames on whatever adapter wgpu finds (lavapipe in CI): image size, the cloth's
//! share of the frame, identical bytes for identical states, the shadow on the ground, the
//! colour map, records.

use std::ops::ControlFlow;

use kestrel::cloth::record::{RecordInfo, Recording};
use kestrel::render::{
    encode_png, frame_path, render_recording, strain, ColorBy, Field, Renderer, SceneView,
};

use crate::common::{gpu_or_skip, view_over_a_ball};

const W: u32 = 160;
const H: u32 = 120;

/// A 9 × 9 sheet, 0.8 m wide, sagging in the middle.
fn sheet() -> (SceneView, Vec<[f32; 3]>) {
    let n = 9;
    let h = 0.1;
    let x = (0..n * n)
        .map(|k| {
            let (i, j) = ((k % n) as f32, (k / n) as f32);
            let (u, v) = (i / 8.0 - 0.5, j / 8.0 - 0.5);
            [
                i * h - 0.4,
                0.5 - 0.3 * (1.0 - 4.0 * u * u) * (1.0 - 4.0 * v * v),
                j * h - 0.4,
            ]
        })
        .collect();
    let view = view_over_a_ball(
        n,
        h as f64,
        ([0.0, -0.1, 0.0], 0.15),
        ([0.0, 1.2, 1.5], [0.0, 0.2, 0.0]),
    );
    (view, x)
}

/// A W × H renderer with the sheet's scene set, or `None` where wgpu finds no adapter.
fn staged() -> Option<(Renderer, SceneView, Vec<[f32; 3]>)> {
    let mut r = gpu_or_skip(W, H)?;
    let (view, x) = sheet();
    r.set_scene(&view, &x).unwrap();
    Some((r, view, x))
}

/// Pixels of the cloth's front (terracotta) or back (blue) colour.
fn cloth_share(rgba: &[u8]) -> f64 {
    let n = rgba.len() / 4;
    let cloth = rgba
        .chunks_exact(4)
        .filter(|p| {
            let (r, g, b) = (p[0] as f32, p[1] as f32, p[2] as f32);
            // saturated blue (the sky is paler) or saturated orange
            let blue = b > g && g > r && (b - r) > 0.38 * b;
            let orange = r > g && g > b && (r - b) > 0.4 * r && (g - b) < 0.6 * (r - b);
            blue || orange
        })
        .count();
    cloth as f64 / n as f64
}

pub(crate) fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let rgba = buf
        .chunks_exact(3)
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect();
    (info.width, info.height, rgba)
}

#[test]
fn a_small_sheet_renders_to_a_png_of_the_right_size_with_the_cloth_in_view() {
    let Some((mut r, _, x)) = staged() else {
        return;
    };
    eprintln!("adapter: {}", r.adapter());
    let (png_bytes, t) = r.render_png(&x, None).unwrap();
    assert!(t.encode > std::time::Duration::ZERO);
    if let Some(p) = std::env::var_os("KESTREL_RENDER_DUMP") {
        std::fs::write(p, &png_bytes).unwrap();
    }
    let (w, h, rgba) = decode(&png_bytes);
    assert_eq!((w, h), (W, H));
    let share = cloth_share(&rgba);
    assert!(
        (0.08..0.8).contains(&share),
        "cloth covers {:.1} % of the frame",
        100.0 * share
    );
    // the sky at the top, the ground at the bottom: not one flat colour
    let top = &rgba[..4];
    let bottom = &rgba[rgba.len() - 4..];
    assert_ne!(top, bottom);
}

#[test]
fn the_same_state_renders_to_the_same_bytes() {
    let Some((mut r, _, x)) = staged() else {
        return;
    };
    let (a, _) = r.render_png(&x, None).unwrap();
    let (b, _) = r.render_png(&x, None).unwrap();
    assert!(a == b, "two renders of one state differ");
    // a moved sheet does not
    let moved: Vec<[f32; 3]> = x.iter().map(|p| [p[0], p[1] + 0.05, p[2]]).collect();
    let (c, _) = r.render_png(&moved, None).unwrap();
    assert!(a != c);
}

#[test]
fn a_colour_map_paints_the_cloth_and_draws_a_legend() {
    let Some((mut r, view, x)) = staged() else {
        return;
    };
    let values = strain(
        view.grid.nu,
        view.grid.nv,
        view.grid.h_warp,
        view.grid.h_weft,
        &x,
    );
    assert!(values.iter().all(|v| v.is_finite()));
    assert!(
        values.iter().any(|&v| v > 0.01),
        "the sag stretches the sheet"
    );
    let field = Field::auto(values, "STRAIN %", 100.0);
    let (image, _) = r.render(&x, Some(&field)).unwrap();
    if let Some(p) = std::env::var_os("KESTREL_RENDER_DUMP_MAP") {
        std::fs::write(p, encode_png(&image).unwrap()).unwrap();
    }
    assert_eq!(image.rgba.len(), (4 * W * H) as usize);
    // the default cloth colours are gone
    let (plain, _) = r.render(&x, None).unwrap();
    // the cloth's pixels change colour
    let changed = plain
        .rgba
        .chunks_exact(4)
        .zip(image.rgba.chunks_exact(4))
        .filter(|(p, q)| (0..3).any(|c| (p[c] as i32 - q[c] as i32).abs() > 40))
        .count() as f64
        / (W * H) as f64;
    let cloth = cloth_share(&plain.rgba);
    assert!(
        changed > 0.7 * cloth,
        "{:.1} % of the frame changed, the cloth covers {:.1} %",
        100.0 * changed,
        100.0 * cloth
    );
    // the legend's light panel sits in the top-right corner
    let k = 4 * (12 * W as usize + W as usize - 12);
    assert!(
        image.rgba[k..k + 3].iter().all(|&c| c > 150),
        "{:?}",
        &image.rgba[k..k + 3]
    );
    assert!(encode_png(&image).is_ok());
    // wrong sizes are errors, not panics
    assert!(r.render(&x[1..], None).is_err());
    let mut bad = x.clone();
    bad[3][1] = f32::NAN;
    assert!(r.render(&bad, None).is_err());
}

#[test]
fn a_record_renders_to_numbered_frames_and_keeps_them_without_force() {
    let Some(mut r) = gpu_or_skip(W, H) else {
        return;
    };
    let (view, x) = sheet();
    let mut rec = Recording::new(RecordInfo {
        name: "sheet".into(),
        nu: view.grid.nu as u32,
        nv: view.grid.nv as u32,
        h_warp: view.grid.h_warp,
        h_weft: view.grid.h_weft,
        dt: 0.01,
        every: 1,
        camera: view.camera,
        obstacles: view.obstacles.clone(),
    });
    for s in 0..3u64 {
        let positions = x
            .iter()
            .enumerate()
            .map(|(k, p)| {
                if k == 0 {
                    *p
                } else {
                    [p[0], p[1] - 0.02 * s as f32, p[2]]
                }
            })
            .collect();
        rec.frames.push(kestrel::cloth::record::Frame {
            step: s,
            time: 0.01 * s as f64,
            positions,
        });
    }
    assert_eq!(SceneView::of_recording(&rec).pins, vec![0]);
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    let t = render_recording(
        &mut r,
        &rec,
        Some(ColorBy::Strain),
        None,
        dir.path(),
        false,
        |p| {
            seen.push(p.done);
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(seen, vec![1, 2, 3]);
    // a progress that breaks (an interrupt) stops after that frame
    let stopped = tempfile::tempdir().unwrap();
    let stop = |p: kestrel::render::FrameProgress| match p.done {
        2 => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    };
    let t2 = render_recording(&mut r, &rec, None, None, stopped.path(), false, stop).unwrap();
    assert_eq!(t2.len(), 2);
    assert_eq!(
        crate::common::files_in(stopped.path()),
        ["frame_00000.png", "frame_00001.png"]
    );
    for n in 0..3 {
        let bytes = std::fs::read(frame_path(dir.path(), n)).unwrap();
        assert_eq!(decode(&bytes).0, W);
    }
    let mut again = |color: Option<ColorBy>, force: bool| {
        render_recording(&mut r, &rec, color, None, dir.path(), force, |_| {
            ControlFlow::Continue(())
        })
    };
    let e = again(None, false).unwrap_err();
    assert!(e.to_string().contains("--force"), "{e}");
    assert!(again(None, true).is_ok());
    let e = again(Some(ColorBy::Energy), true).unwrap_err();
    assert!(e.to_string().contains("simulation"), "{e}");
}

#[test]
fn the_cloth_throws_a_soft_shadow_on_the_ground() {
    // The same frame with the sheet where it is and sunk far under the ground (hidden, no
    // shadow above): the ground darkens where the sheet's shadow falls, with a penumbra.
    let (w, h) = (320u32, 240u32);
    let Some(mut r) = gpu_or_skip(w, h) else {
        return;
    };
    let (view, x) = sheet();
    r.set_scene(&view, &x).unwrap();
    let (lit, _) = r.render(&x, None).unwrap();
    let sunk: Vec<[f32; 3]> = x.iter().map(|p| [p[0], p[1] - 50.0, p[2]]).collect();
    let (bare, _) = r.render(&sunk, None).unwrap();
    if let Some(p) = std::env::var_os("KESTREL_RENDER_DUMP_SHADOW") {
        std::fs::write(p, encode_png(&lit).unwrap()).unwrap();
    }
    let luma = |p: &[u8]| 0.3 * p[0] as f32 + 0.59 * p[1] as f32 + 0.11 * p[2] as f32;
    let grey = |p: &[u8]| {
        let (lo, hi) = (p[..3].iter().min().unwrap(), p[..3].iter().max().unwrap());
        hi - lo < 12
    };
    let (mut umbra, mut penumbra) = (0usize, 0usize);
    // The lower half of the frame: ground, ball and cloth.
    let half = 4 * (w * h / 2) as usize;
    for (a, b) in lit.rgba[half..]
        .chunks_exact(4)
        .zip(bare.rgba[half..].chunks_exact(4))
    {
        if !(grey(a) && grey(b)) {
            continue;
        }
        let ratio = luma(a) / luma(b).max(1.0);
        if ratio < 0.75 {
            umbra += 1;
        } else if ratio < 0.95 {
            penumbra += 1;
        }
    }
    let n = (w * h / 2) as f64;
    eprintln!(
        "umbra {:.2} %, penumbra {:.2} % of the lower half",
        100.0 * umbra as f64 / n,
        100.0 * penumbra as f64 / n
    );
    assert!(umbra as f64 > 0.08 * n, "no shadow under the sheet");
    assert!(penumbra as f64 > 0.005 * n, "the shadow has no penumbra");
    assert!(penumbra < umbra, "a penumbra wider than the shadow");
}

#[test]
fn mesa_says_nothing_about_xdg_runtime_dir_when_it_is_unset_or_invalid() {
    use kestrel::render::runtime_dir_is_valid;
    let dir = tempfile::tempdir().unwrap();
    assert!(runtime_dir_is_valid(Some(dir.path().as_os_str())));
    assert!(!runtime_dir_is_valid(None));
    assert!(!runtime_dir_is_valid(Some("relative/dir".as_ref())));
    assert!(!runtime_dir_is_valid(Some(
        dir.path().join("missing").as_os_str()
    )));
    let out_dir = dir.path().join("frames");
    for value in [None, Some("not/absolute")] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"));
        cmd.args(["render", "scenes/provot_sheet_17.toml", "--frames", "1"])
            .args(["--size", "200x200", "--force", "--out"])
            .arg(&out_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        match value {
            Some(v) => cmd.env("XDG_RUNTIME_DIR", v),
            None => cmd.env_remove("XDG_RUNTIME_DIR"),
        };
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("no graphics adapter") {
            eprintln!("skipped: no wgpu adapter");
            return;
        }
        assert!(out.status.success(), "{err}");
        assert!(!err.contains("XDG_RUNTIME_DIR"), "{err}");
    }
}

/// The runtime folder kestrel gives itself is one kept private folder per user: runs that end
/// by `exit` (`--help`, a usage error) or by a signal leave nothing new in the temporary
/// folder (each run once left a `kestrel-runtime-XXXXXX` folder behind).
#[cfg(unix)]
#[test]
fn the_runtime_folder_is_kept_private_and_not_left_behind_per_run() {
    use kestrel::render::kept_runtime_dir;
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let made = kept_runtime_dir(tmp.path()).expect("a private folder");
    let mode = std::fs::metadata(&made).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    assert_eq!(kept_runtime_dir(tmp.path()), Some(made.clone()), "reused");
    // a folder open to others, or a link planted under the name, is not used
    std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(kept_runtime_dir(tmp.path()), None);
    std::fs::remove_dir(&made).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &made).unwrap();
    assert_eq!(kept_runtime_dir(tmp.path()), None);

    let runs = tempfile::tempdir().unwrap();
    for args in [
        &["--help"][..],
        &["values", "--no-such-flag"],
        &["values", "missing.csv"],
    ] {
        for _ in 0..2 {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_kestrel"))
                .args(args)
                .env_remove("XDG_RUNTIME_DIR")
                .env("TMPDIR", runs.path())
                .output()
                .unwrap();
            assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
        }
    }
    let left: Vec<String> = std::fs::read_dir(runs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.len() <= 1, "{left:?}");
    assert!(
        left.iter().all(|n| n.starts_with("kestrel-runtime-")),
        "{left:?}"
    );
}

/// A render whose simulation blows up at its second frame exits 1 and leaves no frame and no
/// folder it made (it once left frame_00000.png behind). Without an adapter the renderer
/// fails first: the same holds.
#[test]
fn a_failed_render_leaves_no_new_frame_behind() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("blow.toml");
    std::fs::write(
        &scene,
        "name = \"blow\"\n[grid]\nnu = 5\nnv = 5\nsize = [0.4, 0.4]\norigin = [0.0, 1.0, 0.0]\n\
         warp = [1.0, 0.0, 0.0]\nweft = [0.0, -1.0, 0.0]\nareal_density = 0.15\n[material]\n\
         kind = \"springs\"\nstructural = 60.0\nshear = 20.0\nflexion = 2.0\n[integrator]\n\
         kind = \"explicit\"\ndt = 0.001\nsteps = 30\n[loads]\ngravity = [0.0, -1e300, 0.0]\n",
    )
    .unwrap();
    let render = |frames: &std::path::Path, force: bool| {
        let mut args = vec![
            "render".to_string(),
            scene.display().to_string(),
            "--frames".into(),
            "3".into(),
            "--every".into(),
            "5".into(),
            "--size".into(),
            "16x16".into(),
            "--out".into(),
            frames.display().to_string(),
        ];
        if force {
            args.push("--force".into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::common::kestrel(&args)
    };
    // folders it made, nested: none is left
    let frames = dir.path().join("new/frames");
    let out = render(&frames, false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    if gpu_or_skip(16, 16).is_some() {
        assert!(err.contains("blow-up") || err.contains("blew up"), "{err}");
    }
    assert!(!dir.path().join("new").exists(), "{err}");
    // a folder that was there keeps what was in it, an old frame included (under --force
    // the run replaces it: frame 0 is written before the blow-up)
    let kept = dir.path().join("kept");
    std::fs::create_dir(&kept).unwrap();
    std::fs::write(kept.join("notes.txt"), b"mine").unwrap();
    std::fs::write(kestrel::render::frame_path(&kept, 2), b"old").unwrap();
    let out = render(&kept, true);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(kept.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(
        std::fs::read(kestrel::render::frame_path(&kept, 2)).unwrap(),
        b"old"
    );
    assert!(!kestrel::render::frame_path(&kept, 0).exists());
}
