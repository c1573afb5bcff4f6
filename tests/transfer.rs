//! Reduced radiance transfer: SH projection against closed forms, the rotation of an SH
//! light, shadow rays against known occluders, the transfer SVD, the model file (version 2)
//! and the merge of shards with the transfer, the CLI's `--transfer` keys.

use std::f64::consts::PI;
use std::path::PathBuf;

use kestrel::cloth::ObstacleShape;
use kestrel::reduced::transfer::{
    axis_rotation, clamped_cosine, sh_basis, ShLight, TransferOptions, TransferSetup, SH_COEFFS,
};
use kestrel::reduced::{
    merge, precompute, precompute_shard, PrecomputeOptions, ReducedModel, Shard, MODEL_VERSION,
    MODEL_VERSION_CHECKSUM, MODEL_VERSION_TRANSFER,
};

/// A flat n × n grid of spacing h in the plane z = 0; warp +x, weft +y: normals +z.
fn flat_grid(n: usize, h: f32) -> Vec<[f32; 3]> {
    (0..n * n)
        .map(|k| [(k % n) as f32 * h, (k / n) as f32 * h, 0.0])
        .collect()
}

fn setup(obstacles: &[ObstacleShape], samples: usize) -> TransferSetup<'_> {
    TransferSetup {
        nu: 3,
        nv: 3,
        spacing: 0.01,
        side: 1.0,
        obstacles,
        samples,
        seed: 7,
    }
}

#[test]
fn the_clamped_cosine_lobe_has_its_funk_hecke_coefficients() {
    // closed form: T_00 = (1/π)·∫_{n·s>0} (n·s)·Y00 ds = Y00 = 1/(2√π); bands 1 and 2 are
    // (A_l/π)·Y_lm(n) with A_1 = 2π/3, A_2 = π/4
    let n = [0.36, -0.48, 0.8];
    let t = clamped_cosine(n);
    assert!((t[0] - 0.5 / PI.sqrt()).abs() < 1e-12);
    let y = sh_basis(n);
    assert!((t[2] - 2.0 / 3.0 * y[2]).abs() < 1e-12);
    assert!((t[6] - 0.25 * y[6]).abs() < 1e-12);
    // against a quadrature of max(0, n·s)/π on a fine latitude-longitude grid
    let q = ShLight::project(400, |s| {
        let c = (s[0] * n[0] + s[1] * n[1] + s[2] * n[2]).max(0.0) / PI;
        [c, c, c]
    });
    for (i, &ti) in t.iter().enumerate() {
        assert!(
            (f64::from(q.rgb[0][i]) - ti).abs() < 2e-4,
            "coefficient {i}: quadrature {} against {ti}",
            q.rgb[0][i]
        );
    }
    // a white environment of 1 gives exit radiance = albedo (the white furnace)
    let white = ShLight::project(64, |_| [1.0; 3]);
    let tf: Vec<f32> = t.iter().map(|&x| x as f32).collect();
    let l = white.radiance([0.5, 1.0, 0.25], &tf);
    assert!(
        (l[0] - 0.5).abs() < 1e-4 && (l[1] - 1.0).abs() < 1e-4 && (l[2] - 0.25).abs() < 1e-4,
        "{l:?}"
    );
}

#[test]
fn an_unoccluded_vertex_ray_traces_to_the_clamped_cosine_lobe() {
    let x = flat_grid(3, 0.01);
    let t = setup(&[], 4096).transfer_at(&x);
    let exact = clamped_cosine([0.0, 0.0, 1.0]);
    for p in 0..9 {
        for i in 0..SH_COEFFS {
            let got = f64::from(t[p * SH_COEFFS + i]);
            assert!(
                (got - exact[i]).abs() < 4e-3,
                "vertex {p}, coefficient {i}: {got} against {}",
                exact[i]
            );
        }
    }
}

#[test]
fn occluders_remove_their_share_of_the_lobe() {
    let x = flat_grid(3, 0.01);
    // a ceiling: everything above z = 0.1 is solid, nothing reaches the upper side
    let ceiling = [ObstacleShape::Plane {
        point: [0.0, 0.0, 0.1],
        normal: [0.0, 0.0, -1.0],
    }];
    let t = setup(&ceiling, 256).transfer_at(&x);
    assert!(t.iter().all(|&v| v == 0.0));
    // a wall just past the grid (x > 0.0201 solid): half the hemisphere is left, by symmetry
    // half of T_00 and of T_10 (the z lobe)
    let wall = [ObstacleShape::Plane {
        point: [0.0201, 0.0, 0.0],
        normal: [-1.0, 0.0, 0.0],
    }];
    let t = setup(&wall, 4096).transfer_at(&x);
    let exact = clamped_cosine([0.0, 0.0, 1.0]);
    let p = 8; // the corner next to the wall
    assert!(
        (f64::from(t[p * SH_COEFFS]) - 0.5 * exact[0]).abs() < 3e-3,
        "{}",
        t[p * SH_COEFFS]
    );
    assert!((f64::from(t[p * SH_COEFFS + 2]) - 0.5 * exact[2]).abs() < 3e-3);
    // a ball right above the centre vertex shadows it, not as much the corners
    let ball = [ObstacleShape::Sphere {
        center: [0.01, 0.01, 0.02],
        radius: 0.01,
    }];
    let t = setup(&ball, 1024).transfer_at(&x);
    assert!(t[4 * SH_COEFFS] < t[0]);
}

#[test]
fn a_rotated_sh_light_is_the_light_at_the_rotated_direction() {
    let sky = ShLight::sky();
    let r = axis_rotation([0.3, 1.0, -0.4], 1.1);
    let turned = sky.rotated(&r);
    let eval = |l: &ShLight, s: [f64; 3]| -> f64 {
        sh_basis(s)
            .iter()
            .zip(&l.rgb[0])
            .map(|(y, c)| y * f64::from(*c))
            .sum()
    };
    for s in [[0.0, 1.0, 0.0], [0.6, 0.0, 0.8], [-0.48, 0.6, -0.64]] {
        let rs: [f64; 3] = (r * nalgebra::Vector3::from(s)).into();
        // L'(R s) = L(s)
        let (a, b) = (eval(&turned, rs), eval(&sky, s));
        assert!((a - b).abs() < 1e-5, "{s:?}: {a} against {b}");
    }
    // irradiance is invariant when light and normal turn together
    let n = [0.0, 0.6, 0.8];
    let rn: [f64; 3] = (r * nalgebra::Vector3::from(n)).into();
    let lobe = |n: [f64; 3]| -> Vec<f32> { clamped_cosine(n).iter().map(|&x| x as f32).collect() };
    let a = sky.radiance([1.0; 3], &lobe(n));
    let b = turned.radiance([1.0; 3], &lobe(rn));
    for c in 0..3 {
        assert!((a[c] - b[c]).abs() < 1e-5, "{a:?} against {b:?}");
    }
    // and turning back restores the coefficients
    let back = turned.rotated(&r.inverse());
    for c in 0..3 {
        for i in 0..SH_COEFFS {
            assert!((back.rgb[c][i] - sky.rgb[c][i]).abs() < 1e-5);
        }
    }
}

pub(crate) fn transfer_options() -> PrecomputeOptions {
    PrecomputeOptions {
        transfer: Some(TransferOptions {
            states: 8,
            samples: 16,
            held_out: 3,
            ..TransferOptions::default()
        }),
        ..PrecomputeOptions::default()
    }
}

#[test]
fn the_transfer_model_round_trips_merges_byte_for_byte_and_its_errors_fall_with_rank() {
    let scene = crate::common::small_tree_door();
    let opts = transfer_options();
    let (model, stats) = precompute(&scene, &opts, &|_| {}).unwrap();
    let t = model.transfer.as_ref().unwrap();
    let ts = stats.transfer.as_ref().unwrap();
    assert_eq!(t.centers.len(), 8);
    assert!(ts.transfer_rank >= 1 && ts.transfer_rank <= 8);
    // σ_{r+1}/σ₁ cannot grow with r, and is 1 at r = 0
    let e = &ts.transfer_error_by_rank;
    assert_eq!(e[0], 1.0);
    assert!(e.windows(2).all(|w| w[1] <= w[0]), "{e:?}");
    assert!((ts.transfer_rel_error - e[ts.transfer_rank]).abs() < 1e-12);
    assert!(ts.transfer_held_out_error.is_finite() && ts.transfer_held_out_error < 1.0);
    assert!(ts.transfer_held_out_projection_error <= ts.transfer_held_out_error + 1e-9);
    // the file: version 3 (with its checksum), read back equal, as the plain model
    let bytes = model.to_bytes().unwrap();
    assert_eq!(bytes[8..12], MODEL_VERSION_CHECKSUM.to_le_bytes());
    let back = ReducedModel::from_bytes(&bytes, &PathBuf::from("t.krd")).unwrap();
    assert_eq!(back, model);
    let cut = ReducedModel::from_bytes(&bytes[..bytes.len() - 4], &PathBuf::from("t.krd"));
    assert!(cut.unwrap_err().to_string().contains("t.krd"));
    let mut plain = model.clone();
    plain.transfer = None;
    let plain_bytes = plain.to_bytes().unwrap();
    assert_eq!(plain_bytes[8..12], MODEL_VERSION_CHECKSUM.to_le_bytes());
    assert!(ReducedModel::from_bytes(&plain_bytes, &PathBuf::from("p.krd")).is_ok());
    // the versions before the checksum still read: 2 with the transfer, 1 without
    let v2 = crate::common::unsealed(&bytes, MODEL_VERSION_TRANSFER);
    assert_eq!(
        ReducedModel::from_bytes(&v2, &PathBuf::from("v2.krd")).unwrap(),
        model
    );
    let v1 = crate::common::unsealed(&plain_bytes, MODEL_VERSION);
    assert_eq!(
        ReducedModel::from_bytes(&v1, &PathBuf::from("v1.krd")).unwrap(),
        plain
    );
    // a version-1 file with a transfer section's bytes is refused, naming the file
    let v1 = crate::common::unsealed(&bytes, MODEL_VERSION);
    let e = ReducedModel::from_bytes(&v1, &PathBuf::from("v1.krd")).unwrap_err();
    assert!(e.to_string().contains("v1.krd"), "{e}");
    // the merge computes the transfer after gathering the shards: the same bytes
    let (sha, path) = ("0123abcd", "door.toml");
    let parts: Vec<(PathBuf, Shard)> = (1..=2)
        .map(|k| {
            let s = precompute_shard(
                &scene,
                (path, sha),
                &PrecomputeOptions::default(),
                (k, 2),
                &|_| {},
            )
            .unwrap();
            (PathBuf::from(format!("p{k}.krp")), s)
        })
        .collect();
    let (merged, _) = merge(&scene, sha, parts, &opts).unwrap();
    assert_eq!(merged.to_bytes().unwrap(), bytes);
    the_first_modes_and_each_mode_alone(&model);
}

/// `--transfer-rank`: the transfer with the first k modes is mean + Σ_{j<k} q_a,j·u_j, so its
/// components on the orthonormal U_a are q_a,j for j < k and 0 beyond (0 modes: the mean).
/// `--transfer-mode`: the colour of a mode reaches its scale's end at the vertex of largest
/// |irradiance| and nowhere passes it.
fn the_first_modes_and_each_mode_alone(model: &ReducedModel) {
    use kestrel::reduced::transfer::{frame_transfer, mode_colours, TransferSource};
    let t = model.transfer.as_ref().unwrap();
    let ra = t.info.rank as usize;
    let m = t.mean.len();
    let q = model.q_of(model.q.len() / model.rank / 2).to_vec();
    let mut qa = vec![0f32; ra];
    t.coefficients(&model.q, model.rank, &q, &mut qa);
    let mut out = Vec::new();
    for k in 0..=ra {
        let source = TransferSource::Reduced { modes: k };
        frame_transfer(model, t, source, &q, &[], &mut out);
        assert_eq!(out.len(), m);
        for (j, col) in t.basis.chunks_exact(m).enumerate() {
            let c: f64 = col
                .iter()
                .zip(out.iter().zip(&t.mean))
                .map(|(&u, (&x, &mu))| f64::from(u) * f64::from(x - mu))
                .sum();
            let want = if j < k { f64::from(qa[j]) } else { 0.0 };
            let scale = qa.iter().fold(1e-6f64, |a, &v| a.max(f64::from(v).abs()));
            assert!(
                (c - want).abs() < 1e-4 * scale,
                "k {k} j {j}: {c} vs {want}"
            );
        }
    }
    let sky = ShLight::sky();
    for k in 0..ra {
        let c = mode_colours(&sky, t, k).unwrap();
        assert_eq!(c.len(), m / SH_COEFFS);
        let reach = |end: [f32; 3]| {
            c.iter()
                .any(|v| (0..3).all(|i| (v[i] - end[i]).abs() < 1e-6))
        };
        assert!(
            reach([0.85, 0.25, 0.05]) || reach([0.05, 0.25, 0.85]),
            "mode {k}"
        );
        assert!(c
            .iter()
            .flatten()
            .all(|&v| (0.05 - 1e-6..=0.85 + 1e-6).contains(&v)));
    }
    assert!(mode_colours(&sky, t, ra).is_none());
}

#[test]
fn precompute_transfer_prints_its_rank_and_error() {
    use crate::common::{kestrel, stdout_json};
    let dir = tempfile::tempdir().unwrap();
    let scene = crate::common::small_door_file(dir.path());
    let out = dir.path().join("t.krd");
    let run = kestrel(&[
        "precompute",
        &scene.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--transfer",
        "--transfer-states",
        "6",
        "--transfer-samples",
        "16",
        "--held-out",
        "2",
        "--json",
    ]);
    let v = stdout_json(&run);
    let rank = v["transfer_rank"].as_u64().unwrap();
    assert!((1..=6).contains(&rank), "{v}");
    let e = v["transfer_rel_error"].as_f64().unwrap();
    assert!((0.0..1.0).contains(&e), "{v}");
    assert!(v["transfer_held_out_error"].as_f64().unwrap().is_finite());
    // modes beyond r_a, or of a model without transfer: refused before any frame, exit 2
    let frames = dir.path().join("frames");
    let model = out.display().to_string();
    let frames_arg = frames.display().to_string();
    let play = |extra: &[&str]| {
        let mut args = vec![
            "play",
            &model,
            "--impulses",
            "open:0.2",
            "--out",
            &frames_arg,
        ];
        args.extend_from_slice(extra);
        kestrel(&args)
    };
    let over = (rank + 1).to_string();
    let bad = play(&["--transfer-rank", &over]);
    assert_eq!(bad.status.code(), Some(2));
    let why = String::from_utf8_lossy(&bad.stderr).to_string();
    assert!(why.contains(&format!("r_a = {rank}")), "{why}");
    let bad = play(&["--transfer-mode", "1", "--shading", "direct"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = play(&["--transfer-rank", "1", "--shading", "shadow"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--shading transfer"));
    assert!(!frames.exists());
    // bad input: no file, exit 2, the option named
    let bad = kestrel(&[
        "precompute",
        &scene.display().to_string(),
        "--out",
        &dir.path().join("b.krd").display().to_string(),
        "--transfer",
        "--transfer-states",
        "1",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("N_a"));
    assert!(!dir.path().join("b.krd").exists());
}

/// Transfer options out of their ranges are refused by the option at fault, at its limit.
#[test]
fn transfer_options_are_refused_by_the_option_at_fault() {
    use kestrel::reduced::transfer::{TransferOptionsError as E, TRANSFER_LIMITS};
    let ok = TransferOptions::default();
    assert_eq!(ok.validate(), Ok(()));
    let (states, samples, held_out) = TRANSFER_LIMITS;
    let with = |f: fn(&mut TransferOptions)| {
        let mut o = ok;
        f(&mut o);
        o.validate()
    };
    assert_eq!(with(|o| o.states = 1), Err(E::States(1)));
    assert_eq!(with(|o| o.states = TRANSFER_LIMITS.0), Ok(()));
    assert_eq!(
        with(|o| o.states = TRANSFER_LIMITS.0 + 1),
        Err(E::States(states + 1))
    );
    assert_eq!(with(|o| o.samples = 0), Err(E::Samples(0)));
    assert_eq!(
        with(|o| o.samples = TRANSFER_LIMITS.1 + 1),
        Err(E::Samples(samples + 1))
    );
    assert_eq!(
        with(|o| o.held_out = TRANSFER_LIMITS.2 + 1),
        Err(E::HeldOut(held_out + 1))
    );
    assert_eq!(with(|o| o.epsilon = 1.0), Err(E::Epsilon(1.0)));
    assert!(matches!(with(|o| o.epsilon = f64::NAN), Err(E::Epsilon(_))));
    assert_eq!(with(|o| o.rank = Some(0)), Err(E::ZeroRank));
    assert!(E::Samples(0).to_string().contains("rays per vertex"));
}

/// A transfer coefficient is at most max |Y_lm| ≤ 0.631 in magnitude, the basis' entries at
/// most 1: a model file whose transfer arrays or ridge lie beyond is refused, naming the file
/// and the array.
#[test]
fn transfer_arrays_and_floats_beyond_their_range_are_refused() {
    let scene = crate::common::small_tree_door();
    let (model, _) = precompute(&scene, &transfer_options(), &|_| {}).unwrap();
    let t = model.transfer.as_ref().unwrap();
    // as precomputed: within the bounds
    assert!(t.mean.iter().all(|v| v.abs() <= 0.632), "{:?}", t.mean);
    let read = |edit: &dyn Fn(&mut ReducedModel)| {
        let mut m = model.clone();
        edit(&mut m);
        let bytes = m.to_bytes().unwrap();
        ReducedModel::from_bytes(&bytes, &PathBuf::from("bad.krd"))
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(read(&|_| {}), Ok(()));
    type Edit<'a> = &'a dyn Fn(&mut ReducedModel);
    let cases: [(Edit, &str); 5] = [
        (
            &|m| m.transfer.as_mut().unwrap().mean[3] = 1e20,
            "transfer mean: value 4 is 1e20, beyond ±1",
        ),
        (
            &|m| m.transfer.as_mut().unwrap().basis[0] = 7.0,
            "transfer basis: value 1 is 7",
        ),
        (
            &|m| m.transfer.as_mut().unwrap().weights[0] = 1e30,
            "transfer weights: value 1",
        ),
        (
            &|m| m.transfer.as_mut().unwrap().sigma[0] = -1.0,
            "transfer singular values: value 1 is -1, negative",
        ),
        (
            &|m| m.transfer.as_mut().unwrap().info.regularisation = 1e9,
            "regularisation 1000000000 (-): must be in [0, 1]",
        ),
    ];
    for (edit, words) in cases {
        let e = read(edit).unwrap_err();
        assert!(e.contains("bad.krd") && e.contains(words), "{e}");
    }
}
