//! Reduced dynamics on a small door cloth (12 × 14): the snapshot SVD, the model file, the
//! playback rules, and a playback against the full simulation of a sequence not sampled.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kestrel::reduced::{
    compare, merge, parse_sequence, precompute, precompute_shard, reduce, Orbit, Player,
    PrecomputeOptions, PrecomputeStats, ReducedError, ReducedModel, Refusal, Shard,
};
use kestrel::scene::{DynamicScene, IrfEnd, Sampling, Scene, SceneFile};

fn scene_path(name: &str) -> PathBuf {
    crate::common::repo("scenes").join(name)
}

/// The door scene on a 12 × 14 grid with softer springs (same step), 12 s sampled.
fn small_door() -> DynamicScene {
    crate::common::small_door(12, 14, 12.0)
}

fn door_model() -> &'static (DynamicScene, ReducedModel, PrecomputeStats) {
    static MODEL: OnceLock<(DynamicScene, ReducedModel, PrecomputeStats)> = OnceLock::new();
    MODEL.get_or_init(|| {
        let scene = small_door();
        let (model, stats) = precompute(&scene, &PrecomputeOptions::default(), &|_| {}).unwrap();
        (scene, model, stats)
    })
}

#[test]
fn both_reduced_scenes_load_with_their_palettes() {
    for name in ["reduced_door_cloth.toml", "reduced_sheet_gusts.toml"] {
        match Scene::load(&scene_path(name)).unwrap() {
            Scene::Dynamic(s) => assert!(s.reduced.unwrap().palette.len() >= 3, "{name}"),
            _ => panic!("{name} is not dynamic"),
        }
    }
}

#[test]
fn a_transition_to_an_unknown_entry_is_refused_naming_the_entry() {
    let path = scene_path("reduced_door_cloth.toml");
    let mut file = SceneFile::read(&path).unwrap();
    file.reduced.as_mut().unwrap().palette[0].next = vec!["slam".into()];
    let e = Scene::build(&file, &path).unwrap_err().to_string();
    assert!(
        e.contains("slam") && e.contains("reduced_door_cloth.toml"),
        "{e}"
    );
}

#[test]
fn a_key_given_to_two_entries_is_refused_as_a_key() {
    let path = scene_path("reduced_door_cloth.toml");
    let mut file = SceneFile::read(&path).unwrap();
    let palette = &mut file.reduced.as_mut().unwrap().palette;
    palette[1].key = palette[0].key;
    let key = palette[0].key;
    let second = palette[1].name.clone();
    let e = Scene::build(&file, &path).unwrap_err().to_string();
    assert!(
        e.contains(&format!("`{second}`: key `{key}` used by two entries")),
        "{e}"
    );
}

#[test]
fn the_snapshot_svd_recovers_a_rank_three_field() {
    // 40 snapshots of 300 coordinates made of three modes with decaying weights.
    let (m, n) = (300, 40);
    let mut data = vec![0.0; m * n];
    for j in 0..n {
        let t = j as f64 * 0.3;
        for i in 0..m {
            let x = i as f64 / m as f64;
            data[j * m + i] = 1.0
                + 3.0 * t.sin() * (3.0 * x).sin()
                + 1.0 * (2.0 * t).cos() * (7.0 * x).cos()
                + 0.2 * (0.7 * t).sin() * (11.0 * x).sin();
        }
    }
    let red = reduce(data.clone(), m, 1e-6, 64, None);
    assert_eq!(red.rank, 3, "sigma {:?}", &red.sigma[..5]);
    assert!(red.spectral_error(3) < 1e-6);
    // mean + U q gives back every snapshot
    for j in 0..n {
        for i in 0..m {
            let x: f64 = red.mean[i]
                + (0..3)
                    .map(|k| red.basis[k * m + i] * red.coords[j * 3 + k])
                    .sum::<f64>();
            assert!((x - data[j * m + i]).abs() < 1e-9);
        }
    }
    // more snapshots than coordinates goes through A·Aᵀ and agrees
    let wide = reduce(data[..m * n].to_vec(), 20, 1e-6, 64, None);
    assert!(wide.rank <= 20 && wide.snapshots == n * m / 20);
}

#[test]
fn precompute_keeps_the_rank_of_its_tolerance_and_samples_every_entry() {
    let (_, model, stats) = door_model();
    assert!(stats.rank >= 2 && stats.rank <= 64, "{stats:?}");
    assert!(stats.rel_error < 0.015, "{stats:?}");
    assert!(model.sigma[stats.rank - 1] >= 0.015 * model.sigma[0]);
    assert!(stats.missing.is_empty(), "{stats:?}");
    for e in 0..3 {
        assert!(model.orbits.iter().any(|o| o.entry == e), "entry {e}");
    }
    // the sequence respects the transitions: the door never goes open -> close directly
    let names: Vec<&str> = model
        .orbits
        .windows(2)
        .filter(|w| w[0].end == w[1].start)
        .map(|w| {
            (
                model.info.palette[w[0].entry as usize].name.as_str(),
                w[1].entry,
            )
        })
        .filter(|(a, b)| *a != "stop" && *b != 0)
        .map(|(a, _)| a)
        .collect();
    assert!(names.is_empty(), "{names:?}");
    assert!(model.info.beta > 0.0);
}

#[test]
fn the_model_file_round_trips_and_refuses_bad_bytes() {
    let (_, model, _) = door_model();
    let bytes = model.to_bytes().unwrap();
    let p = Path::new("door.krd");
    assert_eq!(&ReducedModel::from_bytes(&bytes, p).unwrap(), model);
    let e = ReducedModel::from_bytes(&bytes[..bytes.len() - 4], p).unwrap_err();
    assert!(matches!(e, ReducedError::Truncated { .. }) && e.to_string().contains("door.krd"));
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(ReducedModel::from_bytes(&bad, p)
        .unwrap_err()
        .to_string()
        .contains("magic"));
    // the last recorded velocity (before the IRF table, 12 bytes an IRF) made NaN: once
    // played, and compared with an error of 0
    assert!(model.transfer.is_none());
    let at = bytes.len() - 32 - 12 * model.orbits.len() - 4;
    let mut nan = bytes.clone();
    nan[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let nan = crate::common::resealed(nan);
    let e = ReducedModel::from_bytes(&nan, p).unwrap_err().to_string();
    assert!(e.contains("door.krd") && e.contains("not finite"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("m.krd");
    assert_eq!(model.write(&f, false).unwrap(), bytes.len());
    assert!(model
        .write(&f, false)
        .unwrap_err()
        .to_string()
        .contains("--force"));
    assert_eq!(ReducedModel::read(&f).unwrap(), *model);
}

/// Every byte after the counts is under the checksum: one flipped bit anywhere in the
/// header's JSON, the arrays or the IRF table is refused as damage, naming the file; a flip
/// in the counts is refused too (as damage, or as a file cut short when a count grows). A
/// version-1 file (no checksum) is read as before.
#[test]
fn a_model_with_one_flipped_bit_is_refused_as_damaged_and_version_1_still_reads() {
    let (_, model, _) = door_model();
    let bytes = model.to_bytes().unwrap();
    assert_eq!(
        bytes[8..12],
        kestrel::reduced::MODEL_VERSION_CHECKSUM.to_le_bytes()
    );
    let p = Path::new("flip.krd");
    let mut rng = crate::common::rng(6);
    let mut positions: Vec<usize> = (12..36).collect();
    positions
        .extend((0..300).map(|_| 36 + rand::RngExt::random_range(&mut rng, 0..bytes.len() - 36)));
    for at in positions {
        let mut b = bytes.clone();
        b[at] ^= 1 << (at % 8);
        let e = ReducedModel::from_bytes(&b, p).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("flip.krd: "), "byte {at}: {text}");
        let damaged = matches!(e, ReducedError::Damaged { .. }) && text.contains("damaged");
        let counts = at < 36 && matches!(e, ReducedError::Truncated { .. });
        assert!(damaged || counts, "byte {at}: {text}");
    }
    let v1 = crate::common::unsealed(&bytes, kestrel::reduced::MODEL_VERSION);
    assert_eq!(&ReducedModel::from_bytes(&v1, p).unwrap(), model);
    // a version-1 file with the checksum's 32 bytes still on is refused by its length
    let mut long = bytes.clone();
    long[8..12].copy_from_slice(&kestrel::reduced::MODEL_VERSION.to_le_bytes());
    assert!(ReducedModel::from_bytes(&long, p).is_err());
}

#[test]
fn playback_follows_the_door_and_refuses_what_the_palette_forbids() {
    let (_, model, _) = door_model();
    let mut p = Player::new(model);
    let (stop, open, close) = (0, 1, 2);
    assert_eq!(
        p.try_impulse(close),
        Err(Refusal::DoorAtLimit),
        "the door is closed: it cannot close further"
    );
    assert!(p.impulse(open));
    assert_eq!(
        p.try_impulse(close),
        Err(Refusal::NotAllowed {
            from: "open".into(),
            to: "close".into()
        }),
        "open -> close skips stop"
    );
    for _ in 0..100 {
        p.advance();
    }
    // 2.5 s at 1 rad/s: the door stopped itself at 90°
    assert!((p.angle() - std::f64::consts::FRAC_PI_2).abs() < 1e-9);
    assert_eq!(p.entry(), stop);
    let mut shape = vec![0f32; 3 * model.vertices];
    p.shape(&mut shape);
    assert!(shape.iter().all(|x| x.is_finite()));
    assert_eq!(p.ignored, 2);
    // the world shape: turned by 90° about +y through the hinge (0, 0, 0), (x, y, z) → (z, y, −x)
    let mut world = vec![[0f32; 3]; model.vertices];
    p.to_world(&shape, &mut world);
    for (w, x) in world.iter().zip(shape.chunks_exact(3)) {
        for (a, b) in w.iter().zip([x[2], x[1], -x[0]]) {
            assert!((a - b).abs() < 1e-6, "{w:?} against {x:?}");
        }
    }
}

#[test]
fn a_sequence_names_palette_entries_by_name_or_key() {
    let (_, model, _) = door_model();
    let pal = &model.info.palette;
    assert_eq!(
        parse_sequence(pal, "o:1.5, stop:1,c").unwrap(),
        vec![(1, 1.5), (0, 1.0), (2, 1.0)]
    );
    let e = parse_sequence(pal, "open:1,slam:2")
        .unwrap_err()
        .to_string();
    assert!(e.contains("slam") && e.contains("stop, open, close"), "{e}");
    assert!(parse_sequence(pal, "open:-1").is_err());
}

#[test]
fn a_sequence_that_plays_no_frame_is_refused() {
    use kestrel::reduced::sequence_frames;
    let dt = 0.04;
    for none in [vec![(1, 0.0)], vec![(1, 1e-300), (0, 0.4 * dt)], vec![]] {
        let e = sequence_frames(&none, dt).unwrap_err().to_string();
        assert!(e.contains("plays no frame") && e.contains("0.04 s"), "{e}");
    }
    // half a frame rounds up to one
    assert_eq!(sequence_frames(&[(1, 0.0), (0, 0.5 * dt)], dt).unwrap(), 1);
    assert_eq!(sequence_frames(&[(1, 1.0)], dt).unwrap(), 25);
}

#[test]
fn playback_of_an_unsampled_sequence_stays_near_the_full_simulation() {
    let (scene, model, _) = door_model();
    // Not the precomputation's sequence (seed 1): its own durations and order.
    let seq = parse_sequence(
        &model.info.palette,
        "open:0.7,stop:0.9,open:0.6,stop:0.5,close:1.1,stop:1.2",
    )
    .unwrap();
    let c = compare(scene, model, &seq, &mut |_| {}).unwrap();
    assert_eq!(c.frames, 200);
    assert!(c.projection_error < 0.1, "{c:?}");
    assert!(c.playback_error < 0.3, "{c:?}");
    assert!(c.playback_error >= c.projection_error * 0.5, "{c:?}");
    assert_eq!(c.warning, None);
    // The breakdown: one segment per impulse, their frames the whole; U orthonormal, so the
    // in-basis error of each mode and the projection error make up the playback error
    // (Pythagoras: ‖U(q − c)‖² + ‖d − Uc‖² = ‖mean + Uq − x‖², f32 basis).
    let names: Vec<&str> = c.segments.iter().map(|g| g.entry.as_str()).collect();
    assert_eq!(names, ["open", "stop", "open", "stop", "close", "stop"]);
    assert_eq!(c.segments.iter().map(|g| g.frames).sum::<usize>(), c.frames);
    assert!((c.segments[2].at_s - 1.6).abs() < 1e-12, "{c:?}");
    assert_eq!(c.mode_errors.len(), model.rank);
    let squares: f64 =
        c.mode_errors.iter().map(|e| e * e).sum::<f64>() + c.projection_error.powi(2);
    assert!(
        (squares.sqrt() - c.playback_error).abs() < 1e-3 * c.playback_error,
        "{} against {c:?}",
        squares.sqrt()
    );
    // the first segment's own error is at least its projection error
    let g = &c.segments[0];
    assert!(
        g.playback_error >= g.projection_error * (1.0 - 1e-3),
        "{g:?}"
    );
}

/// Played from the start, `model`'s IRF `o` (one that starts at state 0) is its recording, frame
/// for frame; `what` follows the frame in a failure.
fn assert_replays_from_rest(model: &ReducedModel, o: &Orbit, what: &str) {
    let mut player = Player::new(model);
    assert!(player.impulse(o.entry as usize));
    for j in 1..=(o.end - o.start) as usize {
        player.advance();
        assert_eq!(player.q(), model.q_of(j), "frame {j}{what}");
    }
}

#[test]
fn flow_playback_replays_a_recorded_irf_exactly_and_follows_an_unsampled_sequence() {
    use kestrel::scene::OffsetBlend;
    let (scene, model, _) = door_model();
    let flow = model.clone().with_offset(OffsetBlend::Flow);
    // The first chain's first IRF starts in the settled state (q̇ = 0): each frame's nearest
    // recorded frame is the one played (distance 0), so x′ = x_{j+1} + A_e·0 — the recording
    // itself, frame for frame, through the cached nearest frames, to the IRF's end.
    let o = flow
        .orbits
        .iter()
        .find(|o| o.start == 0 && o.entry != flow.info.start)
        .expect("the first chain starts with an impulse");
    assert_replays_from_rest(&flow, o, "");
    // the unsampled sequence of the test above: as close as the blends
    let seq = parse_sequence(
        &flow.info.palette,
        "open:0.7,stop:0.9,open:0.6,stop:0.5,close:1.1,stop:1.2",
    )
    .unwrap();
    let c = compare(scene, &flow, &seq, &mut |_| {}).unwrap();
    assert!(c.playback_error < 0.3, "{c:?}");
    assert!(c.playback_error >= c.projection_error * 0.5, "{c:?}");
    // the sampling's coverage: the recorded IRF, simulated again in full, lies in the library
    // (eq. 9 distance 0 up to the f32 states), the unsampled sequence off it
    let frames = (o.end - o.start) as usize;
    let irf = [(o.entry as usize, frames as f64 * flow.info.frame_dt)];
    let on = compare(scene, &flow, &irf, &mut |_| {}).unwrap();
    assert_eq!(on.frames, frames);
    assert!(on.library_distance < 1e-4, "{on:?}");
    assert!(
        (on.playback_error - on.projection_error).abs() < 1e-4,
        "{on:?}"
    );
    assert!(c.library_distance > 1e-3, "{c:?}");
    // every entry played has recorded frames; the whole sequence's distance is the norm-weighted
    // mean of its segments' squares, so it lies between the smallest and the largest
    assert_eq!(
        (c.library_uncovered_frames, on.library_uncovered_frames),
        (0, 0)
    );
    assert!(c.segments.iter().all(|g| g.library_uncovered_frames == 0));
    let seg = c.segments.iter().map(|g| g.library_distance);
    let (lo, hi) = seg.fold((f64::INFINITY, 0.0_f64), |(lo, hi), d| {
        (lo.min(d), hi.max(d))
    });
    assert!(
        lo >= 0.0 && lo <= c.library_distance && c.library_distance <= hi,
        "{c:?}"
    );
    // the steps of the 4 nearest frames averaged: on the recorded IRF the nearest is at
    // distance 0 and is taken alone, so the recording is still replayed exactly
    let flow4 = flow.clone().with_flow_neighbours(4);
    assert_eq!((flow.flow_neighbours(), flow4.flow_neighbours()), (1, 4));
    assert_replays_from_rest(&flow4, o, ", 4 nearest");
    let c4 = compare(scene, &flow4, &seq, &mut |_| {}).unwrap();
    assert!(c4.playback_error < 0.3, "{c4:?}");
    assert_ne!(c4.playback_error, c.playback_error, "another rule");
    // tapered weights 1/d² − 1/d²_{K+1}: still the nearest alone at distance 0 (the recording
    // replayed), another step off the library, and nothing at K = 1
    let tapered = flow4.clone().with_flow_taper(true);
    assert!(tapered.flow_tapered() && !flow4.flow_tapered());
    assert_replays_from_rest(&tapered, o, ", tapered");
    let ct = compare(scene, &tapered, &seq, &mut |_| {}).unwrap();
    assert!(ct.playback_error < 0.3, "{ct:?}");
    assert_ne!(ct.playback_error, c4.playback_error, "another rule");
    let one = flow.clone().with_flow_taper(true);
    let c1 = compare(scene, &one, &seq, &mut |_| {}).unwrap();
    assert_eq!(c1.playback_error, c.playback_error, "K = 1: no taper");
}

#[test]
fn flow_hysteresis_follows_one_irf_and_replays_it_exactly() {
    use kestrel::scene::OffsetBlend;
    let (scene, model, _) = door_model();
    let flow = model.clone().with_offset(OffsetBlend::Flow);
    let held = flow.clone().with_flow_hysteresis(2.0);
    assert_eq!((flow.flow_hysteresis(), held.flow_hysteresis()), (1.0, 2.0));
    assert_eq!(
        flow.clone().with_flow_hysteresis(0.5).flow_hysteresis(),
        1.0
    );
    // The chains all start in the settled state, so the first IRF of each chain under the
    // same entry is recorded from the same state: frames tie at distance 0 and the plain flow
    // may hop between them. With hysteresis the successor of the last match is followed
    // (its distance, 0, is within H × the nearest's): the frames followed are consecutive
    // frames of one IRF until that IRF ends, and the played states the recording, to its end.
    let o = held
        .orbits
        .iter()
        .find(|o| o.start == 0 && o.entry != held.info.start)
        .expect("the first chain starts with an impulse");
    let mut player = Player::new(&held);
    assert!(player.impulse(o.entry as usize));
    let (mut last, mut checked) = (None, 0);
    for j in 1..=(o.end - o.start) as usize {
        player.advance();
        assert_eq!(player.q(), held.q_of(j), "frame {j}");
        let now = player.followed().expect("playing");
        let inside = |f: usize| {
            held.orbits
                .iter()
                .any(|o| o.start as usize <= f && f + 1 < o.end as usize)
        };
        if let Some(p) = last.filter(|&p| inside(p + 1)) {
            assert_eq!(now, p + 1, "frame {j}: the IRF followed");
            checked += 1;
        }
        last = Some(now);
    }
    assert!(checked > 0, "no frame followed");
    // an unsampled sequence: bounded as the plain flow, and not the same playback
    let seq = parse_sequence(
        &held.info.palette,
        "open:0.7,stop:0.9,open:0.6,stop:0.5,close:1.1,stop:1.2",
    )
    .unwrap();
    let c = compare(scene, &held, &seq, &mut |_| {}).unwrap();
    let plain = compare(scene, &flow, &seq, &mut |_| {}).unwrap();
    assert!(c.playback_error < 0.3, "{c:?}");
    assert_ne!(c.playback_error, plain.playback_error, "another rule");
}

/// The door on an 8 × 9 grid, `duration` s sampled in 3 chains after 0.5 s of settling.
fn three_chain_door(duration: f64) -> DynamicScene {
    let mut scene = crate::common::small_door(8, 9, duration);
    let spec = scene.reduced.as_mut().unwrap();
    spec.chains = 3;
    spec.settle = 0.5;
    scene
}

/// The model precomputed on one thread, as bytes.
fn one_thread_bytes(scene: &DynamicScene, opts: &PrecomputeOptions) -> Vec<u8> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let (serial, _) = pool.install(|| precompute(scene, opts, &|_| {}).unwrap());
    serial.to_bytes().unwrap()
}

/// One thread, and two shards merged (given in reverse order), give the model's `bytes`.
fn one_thread_and_two_shards_give(scene: &DynamicScene, opts: &PrecomputeOptions, bytes: &[u8]) {
    assert_eq!(one_thread_bytes(scene, opts), bytes);
    let (sha, path) = ("0123abcd", "door.toml");
    let parts: Vec<(PathBuf, Shard)> = [2, 1]
        .iter()
        .map(|&k| {
            let s = precompute_shard(scene, (path, sha), opts, (k, 2), &|_| {}).unwrap();
            (PathBuf::from(format!("p{k}of2.part")), s)
        })
        .collect();
    let (merged, _) = merge(scene, sha, parts, opts).unwrap();
    assert_eq!(merged.to_bytes().unwrap(), bytes);
}

#[test]
fn shards_merge_into_the_one_process_model_byte_for_byte() {
    let scene = crate::common::small_tree_door();
    let opts = PrecomputeOptions::default();
    let (model, stats) = precompute(&scene, &opts, &|_| {}).unwrap();
    // one thread gives the same bytes as all of them
    let bytes = model.to_bytes().unwrap();
    assert_eq!(one_thread_bytes(&scene, &opts), bytes);
    // 3 chains; open and close from rest (close too: about a vertical hinge the door's range
    // is lifted), then stop from 0.3 and 0.6 s of each: 9 units, 6 tree IRFs of 24 frames
    // (some pruned as dead ends)
    assert_eq!(stats.orbits_sampled, model.info.orbits_sampled as usize);
    let tree_irfs = model
        .orbits
        .iter()
        .filter(|o| o.end - o.start == 24)
        .count();
    assert!(tree_irfs >= 4, "{:?}", model.orbits);
    let (sha, path) = ("0123abcd", "door.toml");
    let part = |k: u32, n: u32| {
        let s = precompute_shard(&scene, (path, sha), &opts, (k, n), &|_| {}).unwrap();
        let name = PathBuf::from(format!("p{k}of{n}.part"));
        // through the file format
        let back = Shard::from_bytes(&s.to_bytes().unwrap(), &name).unwrap();
        assert_eq!(back, s);
        (name, back)
    };
    let parts = vec![part(3, 3), part(1, 3), part(2, 3)];
    let (merged, _) = merge(&scene, sha, parts.clone(), &opts).unwrap();
    assert_eq!(merged.to_bytes().unwrap(), bytes);
    let err = |parts: Vec<(PathBuf, Shard)>, sha: &str| {
        merge(&scene, sha, parts, &opts).unwrap_err().to_string()
    };
    let e = err(parts[..2].to_vec(), sha);
    assert!(e.contains("incomplete") && e.contains("2/3 missing"), "{e}");
    let e = err(
        vec![parts[0].clone(), parts[0].clone(), parts[1].clone()],
        sha,
    );
    assert!(e.contains("are both shard 3/3"), "{e}");
    let e = err(parts.clone(), "ffff");
    assert!(e.contains("another version of the scene door.toml"), "{e}");
    let other = precompute_shard(
        &scene,
        (path, sha),
        &PrecomputeOptions {
            seed: Some(7),
            ..opts
        },
        (2, 3),
        &|_| {},
    )
    .unwrap();
    let e = err(
        vec![
            parts[0].clone(),
            parts[1].clone(),
            ("seed7.part".into(), other),
        ],
        sha,
    );
    assert!(
        e.contains("different samplings") && e.contains("seed7.part"),
        "{e}"
    );
    let e = precompute_shard(&scene, (path, sha), &opts, (1, 99), &|_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 <= K <= N <= 9"), "{e}");
    let mut cut = parts[0].1.to_bytes().unwrap();
    cut.truncate(cut.len() - 3);
    assert!(Shard::from_bytes(&cut, Path::new("cut.part"))
        .unwrap_err()
        .to_string()
        .contains("cut.part"));
}

#[test]
fn log_uniform_durations_give_another_sampling_that_shards_still_merge_byte_for_byte() {
    use kestrel::scene::DurationLaw;
    let mut scene = three_chain_door(3.0);
    let opts = PrecomputeOptions::default();
    let (uniform, _) = precompute(&scene, &opts, &|_| {}).unwrap();
    scene.reduced.as_mut().unwrap().durations = DurationLaw::LogUniform;
    let (model, _) = precompute(&scene, &opts, &|_| {}).unwrap();
    let bytes = model.to_bytes().unwrap();
    assert_ne!(uniform.to_bytes().unwrap(), bytes);
    // every IRF within t_max (the law's range; cut by the door's range or the chain's end)
    let spec = scene.reduced.as_ref().unwrap();
    let longest = (spec.t_max / model.info.frame_dt).floor() as u32;
    assert!(model.orbits.iter().all(|o| o.end - o.start <= longest));
    one_thread_and_two_shards_give(&scene, &opts, &bytes);
}

#[test]
fn switch_branches_start_inside_a_chain_irf_and_shards_still_merge_byte_for_byte() {
    use kestrel::scene::{palette_allows, DurationLaw};
    let mut scene = three_chain_door(12.0);
    scene.reduced.as_mut().unwrap().durations = DurationLaw::LogUniform;
    let opts = PrecomputeOptions::default();
    let (plain, _) = precompute(&scene, &opts, &|_| {}).unwrap();
    scene.reduced.as_mut().unwrap().switch_branches = 1;
    let (model, _) = precompute(&scene, &opts, &|_| {}).unwrap();
    // the same sampled time: no more states than the chains alone
    assert!(model.q.len() <= plain.q.len());
    // a branch's x⁰ is a state strictly inside a chain IRF of another entry, the same bits
    // (q and q̇: its lead state is that state's predecessor), and its entry may follow that one
    let inside = |s: usize| {
        model
            .orbits
            .iter()
            .filter(move |p| (p.start as usize) < s && s < p.end as usize)
    };
    let mut branches = 0;
    for o in &model.orbits {
        let x0 = o.start as usize;
        let from = model.orbits.iter().find_map(|p| {
            (p.start as usize + 1..p.end as usize)
                .find(|&j| {
                    j != x0
                        && model.q_of(j) == model.q_of(x0)
                        && model.qdot_of(j) == model.qdot_of(x0)
                })
                .map(|_| p.entry as usize)
        });
        if let Some(from) = from {
            branches += 1;
            assert_ne!(from, o.entry as usize, "a branch switches entry");
            assert!(palette_allows(&model.info.palette, from, o.entry as usize));
            assert_eq!(inside(x0).count(), 0, "its states follow the chain's");
        }
    }
    assert!(
        branches >= 3,
        "{branches} branches in {} IRFs",
        model.orbits.len()
    );
    let bytes = model.to_bytes().unwrap();
    one_thread_and_two_shards_give(&scene, &opts, &bytes);
    // more than 8 branches per IRF is refused, naming the key and the file
    let path = scene_path("reduced_door_cloth.toml");
    let mut file = SceneFile::read(&path).unwrap();
    file.reduced.as_mut().unwrap().switch_branches = 9;
    let e = Scene::build(&file, &path).unwrap_err().to_string();
    assert!(e.contains("switch_branches 0 to 8"), "{e}");
}

#[test]
fn a_model_that_comes_to_rest_holds_the_last_state_of_its_irf() {
    let mut scene = crate::common::small_tree_door();
    scene.reduced.as_mut().unwrap().irf_end = IrfEnd::Rest;
    scene.reduced.as_mut().unwrap().sampling = Sampling::Random;
    let (model, _) = precompute(&scene, &PrecomputeOptions::default(), &|_| {}).unwrap();
    assert_eq!(model.info.irf_end, IrfEnd::Rest);
    let mut p = Player::new(&model);
    assert!(p.impulse(1));
    let longest = model
        .orbits
        .iter()
        .map(|o| (o.end - o.start) as usize)
        .max()
        .unwrap();
    for _ in 0..longest + 2 {
        p.advance();
    }
    let (mut a, mut b) = (
        vec![0f32; 3 * model.vertices],
        vec![0f32; 3 * model.vertices],
    );
    p.shape(&mut a);
    p.advance();
    p.shape(&mut b);
    assert_eq!(a, b, "at rest after its IRF");
    assert_eq!(p.jumps, 1, "no continuation");
}

#[test]
fn the_cli_merges_shards_into_the_bytes_of_one_process_and_refuses_an_incomplete_set() {
    use crate::common::{assert_success, kestrel, stdout_json};
    let dir = tempfile::tempdir().unwrap();
    let scene = crate::common::small_door_file(dir.path());
    let p = |name: &str| dir.path().join(name).display().to_string();
    let s = scene.display().to_string();
    assert_success(&kestrel(&[
        "precompute",
        &s,
        "--out",
        &p("one.krd"),
        "--json",
    ]));
    for k in ["1/2", "2/2"] {
        let part = p(&format!("part{}.krp", &k[..1]));
        assert_success(&kestrel(&["precompute", &s, "--shard", k, "--out", &part]));
    }
    let out = kestrel(&["precompute", "merge", &p("part1.krp"), "--out", &p("m.krd")]);
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("2/2 missing"), "{e}");
    assert!(
        !dir.path().join("m.krd").exists(),
        "no model from an incomplete set"
    );
    let merged = kestrel(&[
        "precompute",
        "merge",
        &p("part2.krp"),
        &p("part1.krp"),
        "--out",
        &p("m.krd"),
        "--json",
    ]);
    assert_success(&merged);
    assert_eq!(
        std::fs::read(p("one.krd")).unwrap(),
        std::fs::read(p("m.krd")).unwrap()
    );
    let bad = kestrel(&["precompute", &s, "--shard", "3/2", "--out", &p("x.krp")]);
    assert!(!bad.status.success() && !dir.path().join("x.krp").exists());
    // --flow-neighbours: played and reported with the flow; refused with another rule or K
    let model = p("m.krd");
    let flag = crate::common::repo("scenes/flag.toml")
        .display()
        .to_string();
    let play = |extra: &[&str]| {
        let mut args = vec!["play", &model[..], "--impulses", "open:0.5,stop:0.5"];
        args.extend_from_slice(extra);
        kestrel(&args)
    };
    let k4 = play(&["--offset", "flow", "--flow-neighbours", "4", "--json"]);
    let j = stdout_json(&k4);
    assert_eq!(
        (j["offset"].as_str(), j["flow_neighbours"].as_u64()),
        (Some("flow"), Some(4))
    );
    assert_eq!(j["flow_hysteresis"].as_f64(), Some(1.0), "off by default");
    assert_eq!(j["flow_taper"].as_bool(), Some(false));
    // --flow-hysteresis, and --frame-errors: one CSV row per compared frame, whose squared
    // errors sum to the summary's playback error; not replaced without --force
    let csv = p("frames.csv");
    let hy = [
        "--offset",
        "flow",
        "--flow-hysteresis",
        "2",
        "--json",
        "--compare",
        &s,
        "--frame-errors",
        &csv,
    ];
    let out = play(&hy);
    let j = stdout_json(&out);
    assert_eq!(j["flow_hysteresis"].as_f64(), Some(2.0));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let frames = j["compare"]["frames"].as_u64().unwrap() as usize;
    let rank = j["rank"].as_u64().unwrap() as usize;
    assert_eq!((rows.len(), head.len()), (frames, 12 + 4 * rank));
    let sum = |c: usize| {
        rows.iter()
            .map(|r| r[c].parse::<f64>().unwrap())
            .sum::<f64>()
    };
    let error = (sum(col("error_m2")) / sum(col("norm_m2"))).sqrt();
    let want = j["compare"]["playback_error"].as_f64().unwrap();
    assert!((error - want).abs() < 1e-9 * want, "{error} against {want}");
    // the flow's one-frame step exists after the first frame wherever the entry in force has
    // recorded frames (this small model holds no stop IRF: neither there)
    let (step, library) = (col("flow_step_m2"), col("library_m2"));
    assert!(rows[0][step].is_empty());
    assert!(rows[1..]
        .iter()
        .all(|r| r[step].is_empty() == r[library].is_empty()));
    assert!(rows.iter().any(|r| !r[step].is_empty()));
    let again = play(&hy);
    let e = String::from_utf8_lossy(&again.stderr);
    assert!(!again.status.success() && e.contains("--force"), "{e}");
    for (extra, says) in [
        (
            &["--offset", "linear", "--flow-neighbours", "4"][..],
            "flow rule",
        ),
        (
            &["--offset", "flow", "--flow-neighbours", "9"][..],
            "1 to 8",
        ),
        (
            &["--offset", "flow", "--flow-neighbours", "0"][..],
            "1 to 8",
        ),
        (&["--flow-hysteresis", "2"][..], "flow rule"),
        (&["--offset", "flow", "--flow-taper"][..], "K >= 2"),
        (
            &["--offset", "flow", "--flow-hysteresis", "0.5"][..],
            "1 (off) to 100",
        ),
        (&["--frame-errors", "x.csv"][..], "--compare"),
        (
            &["--offset", "flow", "--flow-hysteresis", "1e300"][..],
            "--flow-hysteresis 1.000e300: must be 1 (off)",
        ),
        // a scene without an impulse palette, named before any work (it was exit 1)
        (
            &["--compare", &flag][..],
            "flag.toml: the scene has no [reduced] section",
        ),
        // a file where the frames' folder goes (it was exit 1, "cannot create")
        // (a build without the renderer refuses --out itself)
        (
            &["--out", &s, "--size", "32x32"][..],
            if cfg!(feature = "render") {
                "exists and is not a folder"
            } else {
                "without the render feature"
            },
        ),
    ] {
        let out = play(extra);
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(2) && e.contains(says),
            "{extra:?}: {e}"
        );
    }
}

#[test]
fn the_shape_is_the_same_bits_as_one_axpy_per_basis_vector() {
    // mean + U·q is summed several basis vectors at a time; each value must still be
    // mean + q₁u₁ + q₂u₂ + … in that order. Ranks 1–21 cover every grouping (8, 4, 1).
    let (_, door, _) = door_model();
    let m = door.mean.len();
    let n = 24;
    // full-rank values in [−0.5, 0.5) from a linear congruential sequence
    let mut state = 1u64;
    let data: Vec<f64> = (0..m * n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 40) as f64 / (1u64 << 24) as f64 - 0.5
        })
        .collect();
    for rank in 1..=21 {
        let red = reduce(data.clone(), m, 0.0, rank, Some(rank));
        let q: Vec<f32> = red.coords.iter().map(|&x| x as f32).collect();
        let qdot = vec![0.0; q.len()];
        let orbits = vec![kestrel::reduced::Orbit {
            entry: 1,
            start: 0,
            end: (n - 1) as u32,
        }];
        let model = ReducedModel::from_reduction(door.info.clone(), &red, q, qdot, orbits);
        assert_eq!(model.rank, rank);
        for j in [0, 5, n - 1] {
            let qj = model.q_of(j);
            let mut axpy = model.mean.clone();
            for (col, &qk) in model.basis.chunks_exact(m).zip(qj) {
                for (o, u) in axpy.iter_mut().zip(col) {
                    *o += qk * u;
                }
            }
            let mut shape = vec![0f32; m];
            model.reconstruct(qj, &mut shape);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&shape), bits(&axpy), "rank {rank}, state {j}");
            assert!(axpy.iter().zip(&model.mean).any(|(a, b)| a != b));
        }
    }
}
