//! The lab's tests on the mesh: the cantilever against the self-weight elastica (Peirce), the
//! drapemeter's reading against shadows of known area and outline, drape limits.

use kestrel::cloth::lab::{
    drape_reading, run_cantilever, run_drape, CantileverOptions, DrapeOptions, DynamicLowering,
    Lowering, Specimen,
};
use kestrel::cloth::Vec3;
use kestrel::kes::Direction;
use kestrel::params::FabricParams;
use kestrel::{BendingLaw, MaterialLaw};

use crate::common::repo;

fn fitted_cotton() -> FabricParams {
    FabricParams::read(&repo("scenes/fabrics/cotton-shirting.fitted.params.toml")).unwrap()
}

/// y(length) of y' = f(s, y), y(0) = y0, by classical Runge–Kutta in `steps` steps.
fn rk4(y0: [f64; 4], length: f64, steps: usize, f: impl Fn(f64, [f64; 4]) -> [f64; 4]) -> [f64; 4] {
    let ds = length / steps as f64;
    let add = |y: [f64; 4], d: [f64; 4], h: f64| std::array::from_fn(|i| y[i] + h * d[i]);
    let mut y = y0;
    for k in 0..steps {
        let s = k as f64 * ds;
        let k1 = f(s, y);
        let k2 = f(s + 0.5 * ds, add(y, k1, 0.5 * ds));
        let k3 = f(s + 0.5 * ds, add(y, k2, 0.5 * ds));
        let k4 = f(s + ds, add(y, k3, ds));
        y = std::array::from_fn(|i| y[i] + ds / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
    }
    y
}

/// The root in [lo, hi] of a monotone condition by bisection: `above(x)` is true right of it.
fn bisect(mut lo: f64, mut hi: f64, iterations: usize, above: impl Fn(f64) -> bool) -> f64 {
    for _ in 0..iterations {
        let mid = 0.5 * (lo + hi);
        if above(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The inextensible strip clamped horizontally under its own weight, in units of the bending
/// length c = (B/W)^(1/3): θ'' = −(λ − s)·cos θ, θ(0) = 0, θ'(λ) = 0, (x, y)' = (cos θ, sin θ)
/// (θ downwards). Returns the tip chord's angle below the horizontal [deg] at overhang λ.
fn elastica_tip_angle_deg(lambda: f64) -> f64 {
    let shoot = |m0: f64| {
        rk4([0.0, m0, 0.0, 0.0], lambda, 400, |s, y| {
            [y[1], -(lambda - s) * y[0].cos(), y[0].cos(), y[0].sin()]
        })
    };
    // the root curvature m0 that leaves no moment at the tip
    let y = shoot(bisect(0.0, lambda * lambda, 60, |m0| shoot(m0)[1] > 0.0));
    y[3].atan2(y[2]).to_degrees()
}

/// λ at which the elastica's tip chord is at 41.5° (Peirce's rule says 2).
fn elastica_overhang_at_41_5() -> f64 {
    bisect(1.0, 3.0, 50, |lambda| elastica_tip_angle_deg(lambda) > 41.5)
}

/// Without friction the mesh's bending length meets the elastica's (l/2 at 41.5° is
/// 1.0002 c with c = (B/W)^(1/3) from the card) within 3 % at the default resolution, warp
/// and weft, and the gap falls as h² (the ghost-node clamp is second order): 10 cells give
/// about 4× the gap of 20.
#[test]
fn cantilever_without_friction_meets_the_elastica_to_second_order() {
    let lambda = elastica_overhang_at_41_5();
    assert!((lambda - 2.0).abs() < 2e-3, "elastica overhang {lambda} c");
    let card = fitted_cotton();
    for direction in [Direction::Warp, Direction::Weft] {
        let mut gaps = Vec::new();
        for cells in [10, 20] {
            let mut opts = CantileverOptions::new(direction);
            opts.friction = false;
            opts.cells = cells;
            let r = run_cantilever(&card, &opts, &mut |_| {}, None).unwrap();
            let expected = 0.5 * lambda * r.peirce_cm;
            let gap = r.bending_length_cm / expected - 1.0;
            assert!(
                (r.tip_angle_deg - 41.5).abs() < 1e-2,
                "{direction}: tip {}",
                r.tip_angle_deg
            );
            gaps.push(gap);
        }
        assert!(
            gaps[1].abs() <= 0.03,
            "{direction}: default gap {:.4}",
            gaps[1]
        );
        let order = (gaps[0] / gaps[1]).log2();
        assert!(
            (1.7..=2.3).contains(&order),
            "{direction}: gaps {gaps:?}, order {order:.2}"
        );
    }
}

/// Peirce's c scales as (B/W)^(1/3): eight times the rigidity doubles the mesh's bending
/// length (no friction), and the result's B and W are the card's in Kawabata units.
#[test]
fn cantilever_bending_length_scales_as_the_cube_root_of_rigidity_over_weight() {
    let card = fitted_cotton();
    let mut stiff = card.clone();
    if let Some(b) = stiff.warp.bending.as_mut() {
        b.k_b *= 8.0;
    }
    let mut opts = CantileverOptions::new(Direction::Warp);
    opts.friction = false;
    opts.cells = 12;
    let a = run_cantilever(&card, &opts, &mut |_| {}, None).unwrap();
    let b = run_cantilever(&stiff, &opts, &mut |_| {}, None).unwrap();
    let k_b = card.warp.bending.unwrap().k_b;
    assert!((a.rigidity_gf_cm2_per_cm - k_b / 9.80665e-5).abs() < 1e-12 * a.rigidity_gf_cm2_per_cm);
    assert!((a.weight_gf_per_cm2 - 0.012).abs() < 1e-15);
    let ratio = b.bending_length_cm / a.bending_length_cm;
    assert!((ratio - 2.0).abs() < 2e-3, "ratio {ratio}");
}

/// The elastica of a strip whose moment per width m(K) [N] is the loading branch of `law` (a
/// virgin sample driven to curvature K), under its weight W [N/m²]: m' = −W·(l − s)·cos θ,
/// θ' = K(m), θ(0) = 0, m(l) = 0, (x, y)' = (cos θ, sin θ), θ downwards. Returns the
/// overhang l [m] whose tip chord lies 41.5° below the horizontal.
fn loading_branch_elastica_overhang_m(law: &BendingLaw, w: f64) -> f64 {
    let c = (law.k_b / w).cbrt();
    let (l_lo, l_hi) = (1.5 * c, 4.0 * c);
    // m(K) >= k_b·K on the loading branch, and the clamp moment is at most W·l²/2
    let k_max = w * l_hi * l_hi / (2.0 * law.k_b);
    let n = 20_000;
    let ks: Vec<f64> = (0..=n).map(|i| k_max * i as f64 / n as f64).collect();
    let ms: Vec<f64> = ks.iter().map(|&k| law.drive(&[k])[0]).collect();
    assert!(
        ms.windows(2).all(|p| p[1] > p[0]),
        "loading branch not increasing"
    );
    let curvature = |m: f64| -> f64 {
        if m <= 0.0 {
            return 0.0;
        }
        let i = ms.partition_point(|&v| v < m).clamp(1, n);
        let t = (m - ms[i - 1]) / (ms[i] - ms[i - 1]);
        ks[i - 1] + t * (ks[i] - ks[i - 1])
    };
    let shoot = |l: f64, m0: f64| {
        rk4([0.0, m0, 0.0, 0.0], l, 800, |s, y| {
            [
                curvature(y[1]),
                -w * (l - s) * y[0].cos(),
                y[0].cos(),
                y[0].sin(),
            ]
        })
    };
    let tip_angle_deg = |l: f64| {
        // the clamp moment that leaves no moment at the tip
        let y = shoot(
            l,
            bisect(0.0, 0.5 * w * l * l, 60, |m0| shoot(l, m0)[1] > 0.0),
        );
        y[3].atan2(y[2]).to_degrees()
    };
    assert!(tip_angle_deg(l_lo) < 41.5 && tip_angle_deg(l_hi) > 41.5);
    bisect(l_lo, l_hi, 40, |l| tip_angle_deg(l) > 41.5)
}

/// With friction the strip is loaded monotonically from flat (the relaxation's fictitious
/// motion reverses no friction state), so the mesh meets the elastica of the bending law's
/// loading branch (elastic moment plus the Dahl friction of a virgin sample driven to the
/// same curvature), warp and weft, within 1 % at the default resolution; friction makes the
/// strip longer than Peirce's (B/W)^(1/3) of the elastic k_b; and releasing gravity in three
/// load steps instead of one changes nothing (no connector unloads on the way).
#[test]
fn cantilever_with_friction_meets_the_elastica_of_the_loading_branch() {
    let card = fitted_cotton();
    let w = card.properties.as_ref().unwrap().areal_density.unwrap() * 9.80665;
    for (direction, laws) in [(Direction::Warp, &card.warp), (Direction::Weft, &card.weft)] {
        let law = laws.bending.unwrap();
        assert!(law.friction.level > 0.0);
        let expected_m = loading_branch_elastica_overhang_m(&law, w);
        let r =
            run_cantilever(&card, &CantileverOptions::new(direction), &mut |_| {}, None).unwrap();
        let gap = r.overhang_cm / (100.0 * expected_m) - 1.0;
        assert!(
            gap.abs() <= 0.01,
            "{direction}: mesh {} cm, loading-branch elastica {} cm",
            r.overhang_cm,
            100.0 * expected_m
        );
        assert!(
            (r.tip_angle_deg - 41.5).abs() < 1e-2,
            "tip {}",
            r.tip_angle_deg
        );
        assert!(
            r.relative_gap > 0.05,
            "{direction}: gap to Peirce {}",
            r.relative_gap
        );
    }
    let mut opts = CantileverOptions::new(Direction::Warp);
    opts.cells = 8;
    let once = run_cantilever(&card, &opts, &mut |_| {}, None).unwrap();
    opts.load_steps = 3;
    let stepped = run_cantilever(&card, &opts, &mut |_| {}, None).unwrap();
    assert!(
        (once.bending_length_cm / stepped.bending_length_cm - 1.0).abs() < 1e-4,
        "{} against {} cm",
        once.bending_length_cm,
        stepped.bending_length_cm
    );
    opts.load_steps = 0;
    assert!(run_cantilever(&card, &opts, &mut |_| {}, None).is_err());
}

/// Every shipped fabric's card reaches equilibrium with friction: the silk crepe's Dahl card
/// along the weft (steep shear friction on cells 8 times longer across than along the strip)
/// once left the relaxation circling below its tolerance until it gave up (exit 1).
#[test]
fn cantilever_with_friction_reaches_equilibrium_on_the_silk_crepe_weft() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("silk.toml");
    let mut args: Vec<String> = std::fs::read_dir(crate::common::kes_data().join("silk-crepe"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    args.sort();
    let mut fit = vec!["fit".to_string()];
    fit.extend(args);
    fit.extend(["--model", "dahl", "--toe", "power", "-o"].map(String::from));
    fit.push(card.to_string_lossy().into_owned());
    let fit: Vec<&str> = fit.iter().map(String::as_str).collect();
    crate::common::assert_success(&crate::common::kestrel(&fit));
    let out = crate::common::kestrel(&[
        "test",
        "cantilever",
        "--params",
        card.to_str().unwrap(),
        "--direction",
        "weft",
        "--json",
    ]);
    let r = crate::common::stdout_json(&out);
    let angle = r["tip_angle_deg"].as_f64().unwrap();
    assert!((angle - 41.5).abs() < 1e-2, "tip {angle}");
    assert!(r["relative_gap"].as_f64().unwrap() > 0.05);
}

/// The drapemeter's reading: a flat specimen reads exactly 100 % (its shadow the lattice polygon
/// inside the circle, the disc's the 9 cm circle on the same raster); a specimen shrunk by s about
/// the centre reads (s²·A_D − A_d)/(A_D − A_d) (to the raster); an outline
/// r(θ) ∝ 1 + 0.15·cos 6θ has 6 folds; a round one none.
#[test]
fn drape_reading_is_exact_on_shadows_of_known_area_and_outline() {
    let specimen = Specimen::new(0.01).unwrap();
    let flat = drape_reading(&specimen, &specimen.flat);
    assert_eq!(flat.drape_coefficient, 100.0);
    assert_eq!(flat.folds, 0);
    // the polygon of the cells centred inside the 15 cm circle: πR² to 3 % (2.4 % over at 10 mm)
    let area_of = |r: f64| std::f64::consts::PI * r * r;
    assert!(
        (flat.specimen_area / area_of(0.15) - 1.0).abs() < 0.03,
        "{}",
        flat.specimen_area
    );
    // the disc on the raster: π·(9 cm)² to a ring of 0.5 mm pixels
    let disc = flat.disc_area;
    let ring = 2.0 * std::f64::consts::PI * 0.09 * 0.5e-3;
    assert!((disc - area_of(0.09)).abs() < ring, "{disc}");
    for s in [0.9, 0.75, 0.65] {
        let x: Vec<Vec3> = specimen
            .flat
            .iter()
            .map(|p| Vec3::new(p.x * s, -0.01, p.z * s))
            .collect();
        let r = drape_reading(&specimen, &x);
        let expected = 100.0 * (s * s * flat.specimen_area - disc) / (flat.specimen_area - disc);
        assert!(
            (r.drape_coefficient - expected).abs() < 0.5,
            "s = {s}: {} vs {expected}",
            r.drape_coefficient
        );
    }
    let waved: Vec<Vec3> = specimen
        .flat
        .iter()
        .map(|p| {
            let f = 0.8 + 0.12 * (6.0 * p.z.atan2(p.x)).cos();
            Vec3::new(p.x * f, 0.0, p.z * f)
        })
        .collect();
    assert_eq!(drape_reading(&specimen, &waved).folds, 6);
}

/// The specimen is made of the cells whose centres lie within 15 cm of the centre, and of
/// their corners only, at 10 and at 5 mm; its area is π·(15 cm)² to 3 % (the lattice count of a disc). The disc's particles
/// (within 9 cm) are all kept.
#[test]
fn drape_specimen_is_the_cells_centred_inside_the_circle() {
    for cell in [0.01, 0.005] {
        let s = Specimen::new(cell).unwrap();
        let g = &s.grid;
        let radius = 0.15 * (1.0 + 1e-12);
        let mut in_a_cell = vec![false; g.len()];
        let mut cells = 0;
        for i in 0..g.nu - 1 {
            for j in 0..g.nv - 1 {
                let c = g.cell_corners(i, j);
                let m = (s.flat[c[0]] + s.flat[c[3]]) * 0.5;
                if (m.x * m.x + m.z * m.z).sqrt() <= radius {
                    c.iter().for_each(|&q| in_a_cell[q] = true);
                    cells += 1;
                }
            }
        }
        assert_eq!(s.kept, in_a_cell, "{cell} m");
        let area = cells as f64 * g.h_warp * g.h_weft;
        let disc = std::f64::consts::PI * 0.15 * 0.15;
        assert!((area / disc - 1.0).abs() < 0.03, "{cell} m: {area} m2");
        assert!(s.on_disc.iter().zip(&s.kept).all(|(d, k)| !d || *k));
    }
}

/// A stiff card (bending and shear × 20: bending length × 2.7) stays nearly flat on the disc
/// (DC ≥ 95 %); a limp one (/ 100)
/// hangs (DC ≤ 40 %); the card's own lies between them; all three are read at rest.
#[test]
fn drape_coefficient_runs_from_stiff_to_limp() {
    let card = fitted_cotton();
    let scaled = |f: f64| {
        let mut c = card.clone();
        for d in [&mut c.warp, &mut c.weft] {
            if let Some(b) = d.bending.as_mut() {
                b.k_b *= f;
                b.friction.level *= f;
            }
            if let Some(s) = d.shear.as_mut() {
                s.k_s *= f;
                s.friction.level *= f;
            }
        }
        c
    };
    // the default quasi-static lowering: at rest at every load step
    let opts = DrapeOptions {
        cell: 0.02,
        ..DrapeOptions::default()
    };
    let run = |c: &FabricParams| run_drape(c, &opts, &mut |_| {}, None).unwrap();
    let stiff = run(&scaled(20.0));
    let own = run(&card);
    let limp = run(&scaled(1e-2));
    // each is read at rest: every free particle's unbalanced force under 10⁻³ of a full
    // particle's weight
    for r in [&stiff, &own, &limp] {
        assert!(
            r.rest_force_limit == 1e-3 && r.rest_force_ratio <= r.rest_force_limit,
            "{} > {}",
            r.rest_force_ratio,
            r.rest_force_limit
        );
    }
    assert!(
        stiff.drape_coefficient >= 95.0,
        "stiff {}",
        stiff.drape_coefficient
    );
    assert!(
        limp.drape_coefficient <= 40.0,
        "limp {}",
        limp.drape_coefficient
    );
    assert!(
        limp.drape_coefficient < own.drape_coefficient
            && own.drape_coefficient < stiff.drape_coefficient,
        "{} {} {}",
        limp.drape_coefficient,
        own.drape_coefficient,
        stiff.drape_coefficient
    );
}

/// The quasi-static lowering is a sequence of equilibria: once its load steps resolve the path,
/// its reading is the same (within 0.2 points, a tenth of the 2-point mesh tolerance, and with
/// the same folds) whether gravity rises in 40 or in 80 load steps, as a rate-independent path
/// is (the friction states follow the displacements, not the time); each ends at rest, so the
/// final relaxation takes no step.
#[test]
fn drape_quasi_static_lowering_does_not_depend_on_its_load_steps() {
    let card = fitted_cotton();
    let run = |load_steps: u32| {
        let opts = DrapeOptions {
            cell: 0.02,
            lowering: Lowering::QuasiStatic { load_steps },
            ..DrapeOptions::default()
        };
        run_drape(&card, &opts, &mut |_| {}, None).unwrap()
    };
    let (coarse, fine) = (run(40), run(80));
    for r in [&coarse, &fine] {
        assert!(
            r.rest_steps == 0 && r.rest_force_ratio <= r.rest_force_limit,
            "{} static steps after the lowering, {}",
            r.rest_steps,
            r.rest_force_ratio
        );
        assert!(r.steps == 0 && r.lowering_static_steps >= 40 && r.sim_time_s == 0.0);
        assert!(r.final_speed == 0.0 && r.rms_speed == 0.0);
    }
    assert!(
        (coarse.drape_coefficient - fine.drape_coefficient).abs() < 0.2
            && coarse.folds == fine.folds,
        "{} % ({} folds) against {} % ({} folds)",
        coarse.drape_coefficient,
        coarse.folds,
        fine.drape_coefficient,
        fine.folds
    );
}

/// The drape refuses `opts` as an option out of range, its message naming `words`; `case`
/// names the options in a failure.
fn assert_drape_option_refused(card: &FabricParams, opts: &DrapeOptions, words: &str, case: &str) {
    match run_drape(card, opts, &mut |_| {}, None) {
        Err(kestrel::cloth::lab::LabError::Option(m)) => assert!(m.contains(words), "{m}"),
        other => panic!("{case}: {other:?}"),
    }
}

/// Zero load steps, or more than 1000, are an option out of range, refused before any step.
#[test]
fn drape_refuses_a_lowering_without_load_steps() {
    let card = fitted_cotton();
    for load_steps in [0, 1001] {
        let opts = DrapeOptions {
            lowering: Lowering::QuasiStatic { load_steps },
            ..DrapeOptions::default()
        };
        assert_drape_option_refused(
            &card,
            &opts,
            "load steps",
            &format!("{load_steps} load steps"),
        );
    }
}

/// A time step out of 10 µs to 50 ms, or an air damping out of 0 to 1000/s (NaN included), is
/// an option out of range, refused before any step (a step of 1e-300 s never reached rest, a
/// damping of 1e300/s blew up).
#[test]
fn drape_refuses_a_step_or_a_damping_out_of_range() {
    let card = fitted_cotton();
    for (dt, damping) in [
        (1e-300, 1.0),
        (0.1, 1.0),
        (f64::NAN, 1.0),
        (0.002, 1e300),
        (0.002, -1.0),
        (0.002, f64::NAN),
    ] {
        let opts = DrapeOptions {
            dt,
            damping,
            ..DrapeOptions::default()
        };
        assert_drape_option_refused(
            &card,
            &opts,
            "1e-5 <= dt <= 0.05 s",
            &format!("dt {dt}, damping {damping}"),
        );
    }
}

/// The gravity ramp and the settling window must fit in the longest time: a ramp of 19 s in
/// 20 s, or a negative one, is an option out of range (exit 2), refused before any step.
#[test]
fn drape_refuses_a_ramp_that_leaves_no_time_to_settle() {
    let card = fitted_cotton();
    for ramp in [19.0, -1.0, f64::NAN] {
        let opts = DrapeOptions {
            lowering: Lowering::Dynamic(DynamicLowering {
                ramp,
                max_time: 20.0,
                kinetic_damping: true,
            }),
            ..DrapeOptions::default()
        };
        assert_drape_option_refused(&card, &opts, "ramp", &format!("ramp {ramp}"));
    }
}
