//! KES values on paths other than the instrument's standard one (another F_m, smaller
//! amplitudes, rows reversed, coarse sampling): each value is the closed form of the path or
//! unavailable with its reason.

use kestrel::kes::{kes_values, parse_kes, Curve, CurveOverrides, KesReading, ReadingRules};

use crate::common::assert_a_line_has;

fn curve(text: &str) -> Curve {
    parse_kes(text, "p.csv", CurveOverrides::default()).unwrap()
}

fn read(text: &str) -> KesReading {
    kes_values(&curve(text), &ReadingRules::default())
}

fn reason(r: &KesReading, value: &str) -> String {
    r.unavailable
        .iter()
        .find(|u| u.value == value)
        .map(|u| u.reason.clone())
        .unwrap_or_else(|| panic!("{value} is available: {r:?}"))
}

/// A tensile loop with straight branches: loading F = top·ε/emt from 0 to (emt, top), unloading
/// straight to (emt/2, 0). WT = top·emt/200, LT = top/F_m, RT = 50 %. `metadata` goes before
/// the header; `reverse` writes the rows backwards.
fn tensile(metadata: &str, top: f64, emt: f64, reverse: bool) -> String {
    let n = 100;
    let mut rows: Vec<(f64, f64)> = (0..=n)
        .map(|i| {
            let e = emt * i as f64 / n as f64;
            (e, top * e / emt)
        })
        .collect();
    rows.extend((1..=n).map(|i| {
        let e = emt - 0.5 * emt * i as f64 / n as f64;
        (e, top * (1.0 - i as f64 / n as f64))
    }));
    if reverse {
        rows.reverse();
    }
    let body: String = rows.iter().map(|(e, f)| format!("{e},{f}\n")).collect();
    format!("# test: tensile\n# direction: warp\n{metadata}strain [%],force [gf/cm]\n{body}")
}

fn close(a: Option<f64>, b: f64, tol: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= tol * b.abs())
}

#[test]
fn lt_reads_at_the_files_max_force_else_the_standard_else_the_curves_own() {
    // a curve to 1000 gf/cm, the file saying so: LT = 1000/1000
    let r = read(&tensile("# max force [gf/cm]: 1000\n", 1000.0, 10.0, false));
    assert!(close(r.values.lt, 1.0, 1e-9), "{r:?}");
    assert!(close(r.values.wt, 1000.0 * 10.0 / 200.0, 1e-9), "{r:?}");
    assert!(close(r.values.rt, 50.0, 1e-9), "{r:?}");
    assert_a_line_has(&r.notes, &["F_m = 1000 gf/cm", "max force"]);
    // the same in N/m (1000 gf/cm = 980.665 N/m)
    let r = read(&tensile(
        "# max force [N/m]: 980.665\n",
        1000.0,
        10.0,
        false,
    ));
    assert!(close(r.values.lt, 1.0, 1e-9), "{r:?}");

    // no metadata, a curve to 250 gf/cm: F_m = 250, with a note
    let r = read(&tensile("", 250.0, 1.0, false));
    assert!(close(r.values.lt, 1.0, 1e-9), "{r:?}");
    assert_a_line_has(&r.notes, &["F_m = 250 gf/cm, the curve's largest force"]);

    // overshoot within 2 % of 500: the standard F_m, no note: LT = 508/500
    let r = read(&tensile("", 508.0, 6.0, false));
    assert!(close(r.values.lt, 508.0 / 500.0, 1e-9), "{r:?}");
    assert!(r.notes.is_empty(), "{:?}", r.notes);

    // a max force that is no force: LT unavailable, naming the line; the rest read
    let r = read(&tensile("# max force [gf/cm]: lots\n", 500.0, 6.0, false));
    assert_eq!(r.values.lt, None);
    assert!(
        reason(&r, "LT").contains("max force [gf/cm]: lots"),
        "{r:?}"
    );
    assert!(close(r.values.emt, 6.0, 1e-12), "{r:?}");
}

#[test]
fn tensile_rows_in_reverse_order_leave_wt_lt_rt_unavailable() {
    let r = read(&tensile("", 500.0, 6.0, true));
    // EMT is the turning point either way
    assert!(close(r.values.emt, 6.0, 1e-12), "{r:?}");
    for v in ["WT", "LT", "RT"] {
        assert_eq!(r.values.get(v), None, "{r:?}");
        assert!(reason(&r, v).contains("rows in reverse order"), "{r:?}");
    }
    // the return branch gave back 200 % of the first branch's energy
    assert!(reason(&r, "RT").contains("200 %"), "{r:?}");
}

/// A compression loop with straight branches: compression p = 100(1.2 − T) from T = 1.2 mm to
/// `turn` (0.7 mm: 50 gf/cm²), recovery straight from there to p = 0 at T = 1.0 mm; every
/// 0.005 mm.
fn compression(turn: f64, reverse: bool) -> String {
    let steps = |span: f64| (span / 0.005).round() as usize;
    let mut rows: Vec<(f64, f64)> = (0..=steps(1.2 - turn))
        .map(|i| {
            let t = 1.2 - 0.005 * i as f64;
            (t, 100.0 * (1.2 - t))
        })
        .collect();
    let top = 100.0 * (1.2 - turn);
    rows.extend((1..=steps(1.0 - turn)).map(|i| {
        let t = turn + 0.005 * i as f64;
        (t, top * (1.0 - t) / (1.0 - turn))
    }));
    if reverse {
        rows.reverse();
    }
    let body: String = rows.iter().map(|(t, p)| format!("{t},{p}\n")).collect();
    format!("# test: compression\nthickness [mm],pressure [gf/cm2]\n{body}")
}

#[test]
fn compression_that_turns_far_above_p_m_gives_no_rc() {
    // compression p = 100(1.2 − T) on to 0.4 mm (80 gf/cm²), recovery straight to 1.0 mm:
    // T0, TM (at 50 gf/cm²), WC as for the standard curve; RC would be a recovery from 80
    let r = read(&compression(0.4, false));
    let wc = 100.0 * (0.25 - 0.005 * 0.005) / 2.0 / 10.0;
    assert!(close(r.values.t0, 1.195, 1e-9), "{r:?}");
    assert!(close(r.values.tm, 0.7, 1e-9), "{r:?}");
    assert!(close(r.values.wc, wc, 1e-9), "{r:?}");
    assert_eq!(r.values.rc, None, "{r:?}");
    assert!(reason(&r, "RC").contains("turns at 80 gf/cm2"), "{r:?}");
}

#[test]
fn compression_rows_in_reverse_order_leave_rc_and_the_rest_unavailable() {
    // forward: T0 = 1.195 mm, TM = 0.7 mm, WC = 100(0.5² − 0.005²)/2/10,
    // returned = 50·0.3/2/10 = 0.75
    let r = read(&compression(0.7, false));
    let wc = 100.0 * (0.25 - 0.005 * 0.005) / 2.0 / 10.0;
    assert!(close(r.values.t0, 1.195, 1e-9), "{r:?}");
    assert!(close(r.values.tm, 0.7, 1e-9), "{r:?}");
    assert!(close(r.values.wc, wc, 1e-9), "{r:?}");
    assert!(close(r.values.rc, 100.0 * 0.75 / wc, 1e-9), "{r:?}");

    let r = read(&compression(0.7, true));
    assert!(close(r.values.tm, 0.7, 1e-9), "{r:?}");
    for v in ["T0", "WC", "LC", "RC", "EMC"] {
        assert_eq!(r.values.get(v), None, "{v}: {r:?}");
        assert!(reason(&r, v).contains("rows in reverse order"), "{r:?}");
    }
}

/// A parallelogram loop: rising branches y = k·x + h, falling y = k·x − h, from 0 to +a, to −a,
/// back to +a, `n` samples per unit of x. The slope is k and every width 2h.
fn parallelogram(test: &str, header: &str, a: f64, k: f64, h: f64, n: usize) -> String {
    let steps = (a * n as f64).round() as usize;
    let at = |i: usize| a * i as f64 / steps as f64;
    let mut rows: Vec<(f64, f64)> = (0..=steps).map(|i| (at(i), k * at(i) + h)).collect();
    rows.extend((1..=2 * steps).map(|i| {
        let x = a - at(i);
        (x, k * x - h)
    }));
    rows.extend((1..=2 * steps).map(|i| {
        let x = -a + at(i);
        (x, k * x + h)
    }));
    let body: String = rows.iter().map(|(x, y)| format!("{x},{y}\n")).collect();
    format!("# test: {test}\n# direction: warp\n{header}\n{body}")
}

/// The values of a shear parallelogram to ±`a` degrees: G = 0.7 gf/cm/deg, every width
/// 0.6 gf/cm, `n` samples a degree.
fn shear_loop(a: f64, n: usize) -> KesReading {
    read(&parallelogram(
        "shear",
        "angle [deg],force [gf/cm]",
        a,
        0.7,
        0.3,
        n,
    ))
}

/// The values of a bending parallelogram to ±`a` cm⁻¹: B = 0.1 gf·cm²/cm, every width 2`h`,
/// `n` samples per cm⁻¹.
fn bending_loop(a: f64, h: f64, n: usize) -> KesReading {
    read(&parallelogram(
        "bending",
        "curvature [1/cm],moment [gf*cm/cm]",
        a,
        0.1,
        h,
        n,
    ))
}

#[test]
fn shear_and_bending_windows_keep_clear_of_the_turning_point() {
    let shear = |a: f64| shear_loop(a, 100);
    // the standard ±8°: G = k, 2HG = 2HG5 = 2h
    let r = shear(8.0);
    assert!(close(r.values.g, 0.7, 1e-9), "{r:?}");
    assert!(close(r.values.hg, 0.6, 1e-9), "{r:?}");
    assert!(close(r.values.hg5, 0.6, 1e-9), "{r:?}");
    assert!(r.unavailable.is_empty() && r.notes.is_empty(), "{r:?}");
    // ±5°: 5 ± 0.25 and 0.5..5 reach the turn; 2HG still read
    let r = shear(5.0);
    assert!(close(r.values.hg, 0.6, 1e-9), "{r:?}");
    for v in ["G", "2HG5"] {
        assert_eq!(r.values.get(v), None, "{r:?}");
        assert!(reason(&r, v).contains("turns at +5/-5 deg"), "{r:?}");
    }
    assert!(reason(&r, "G").contains("at least 5.556 deg"), "{r:?}");
    // ±3°: G is not read over a shortened 0.5..3
    let r = shear(3.0);
    assert_eq!(r.values.g, None, "{r:?}");
    assert!(reason(&r, "G").contains("turns at +3/-3 deg"), "{r:?}");

    let bending = |a: f64| bending_loop(a, 0.02, 1000);
    let r = bending(2.5);
    assert!(close(r.values.b, 0.1, 1e-9), "{r:?}");
    assert!(close(r.values.hb, 0.04, 1e-9), "{r:?}");
    let r = bending(1.5);
    assert_eq!(r.values.b, None, "{r:?}");
    assert!(reason(&r, "B").contains("turns at +1.5/-1.5 1/cm"), "{r:?}");
    assert!(close(r.values.hb, 0.04, 1e-9), "{r:?}");
}

#[test]
fn a_width_with_too_few_samples_in_its_window_says_so() {
    // one sample per degree: none in 0.25..0.75°, yet both branches reach ±0.5°
    let r = shear_loop(8.0, 1);
    let why = reason(&r, "2HG");
    assert!(
        why.contains("0 sample(s)") && why.contains("0.5+/-0.25 deg"),
        "{why}"
    );
    assert!(!why.contains("no loading and return branch"), "{why}");
}

#[test]
fn valid_units_and_case_variants_are_read_as_their_si_values() {
    // (header, x, y) → (x, y) in SI: each unit's definition
    let cases: &[(&str, &str, f64, f64)] = &[
        ("tensile", "strain [percent],force [cN/cm]", 0.01, 1.0),
        ("tensile", "STRAIN [%],FORCE [GF/CM]", 0.01, 0.980665),
        ("tensile", "strain [%],force [N/cm]", 0.01, 100.0),
        ("tensile", "strain [%],force [kgf/m]", 0.01, 9.80665),
        (
            "shear",
            "angle [DEG],force [gf/cm]",
            std::f64::consts::PI / 180.0,
            0.980665,
        ),
        (
            "bending",
            "curvature [1/CM],moment [gf.cm/cm]",
            100.0,
            9.80665e-3,
        ),
        (
            "bending",
            "curvature [1/mm],moment [gf cm/cm]",
            1000.0,
            9.80665e-3,
        ),
        ("bending", "curvature [1/cm],moment [cN*cm/cm]", 100.0, 0.01),
        ("bending", "curvature [1/cm],moment [cN·cm/cm]", 100.0, 0.01),
        (
            "compression",
            "thickness [micron],pressure [cN/cm2]",
            1e-6,
            100.0,
        ),
        ("roughness", "position [cm],height [µm]", 0.01, 1e-6),
        ("roughness", "position [cm],height [micron]", 0.01, 1e-6),
    ];
    for &(test, header, fx, fy) in cases {
        let direction = if test == "compression" {
            ""
        } else {
            "# direction: warp\n"
        };
        let c = curve(&format!(
            "# test: {test}\n{direction}# weight [gsm]: 200\n{header}\n3,1\n2,2\n1,3\n"
        ));
        for (i, (x, y)) in [(3.0, 1.0), (2.0, 2.0), (1.0, 3.0)].into_iter().enumerate() {
            assert!(
                (c.x[i] - x * fx).abs() <= 1e-12 * (x * fx),
                "{header}: {:?}",
                c.x
            );
            assert!(
                (c.y[i] - y * fy).abs() <= 1e-12 * (y * fy),
                "{header}: {:?}",
                c.y
            );
        }
        assert!((c.weight().unwrap() - 0.2).abs() < 1e-12, "{header}");
    }
    // case that changes the meaning is refused: MN (meganewton), MM (megametre)
    for header in [
        "strain [%],force [MN/m]",
        "thickness [MM],pressure [gf/cm2]",
    ] {
        let test = if header.starts_with("strain") {
            "tensile\n# direction: warp"
        } else {
            "compression"
        };
        let text = format!("# test: {test}\n{header}\n3,1\n2,2\n1,3\n");
        let e = parse_kes(&text, "p.csv", CurveOverrides::default()).unwrap_err();
        assert!(e.to_string().contains("unknown unit"), "{e}");
    }
}

#[test]
fn a_time_column_or_second_channel_after_x_and_y_is_skipped() {
    let plain =
        curve("# test: shear\n# direction: warp\nangle [deg],force [gf/cm]\n0,0\n8,1\n-8,-1\n");
    let extra = curve(
        "# test: shear\n# direction: warp\nangle [deg],force [gf/cm],force2 [gf/cm],time [s]\n\
         0,0,5,0\n8,1,6,1\n-8,-1,7,2\n",
    );
    assert_eq!((&extra.x, &extra.y), (&plain.x, &plain.y));
    assert_eq!(
        extra.metadata["skipped columns"],
        "force2 [gf/cm] (column 3: not a shear column)"
    );
    // the time column after the skipped one is still checked
    let e = parse_kes(
        "# test: shear\n# direction: warp\nangle [deg],force [gf/cm],force2 [gf/cm],time [s]\n\
         0,0,5,2\n8,1,6,1\n-8,-1,7,3\n",
        "p.csv",
        CurveOverrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("p.csv:5:4"), "{e}");
    // an unknown column before x and y is still refused
    let e = parse_kes(
        "# test: shear\n# direction: warp\nforce2 [gf/cm],angle [deg],force [gf/cm]\n0,0,0\n1,8,1\n2,-8,-1\n",
        "p.csv",
        CurveOverrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown column `force2 [gf/cm]`"), "{e}");
}

#[test]
fn a_strain_unit_that_looks_wrong_is_noted_not_refused() {
    let note = |r: &KesReading| {
        r.notes
            .iter()
            .find(|n| n.contains("header must say"))
            .cloned()
    };
    // fractions under `[%]`: EMT 0.065 % at 500 gf/cm
    let r = read(&tensile("", 500.0, 0.065, false));
    assert!(close(r.values.emt, 0.065, 1e-12), "{r:?}");
    assert!(
        note(&r).is_some_and(|n| n.contains("`strain [-]`")),
        "{r:?}"
    );
    // percent numbers under `[-]`: 0.65 read as 65 %
    let r = read(&tensile("", 500.0, 65.0, false));
    assert!(
        note(&r).is_some_and(|n| n.contains("`strain [%]`")),
        "{r:?}"
    );
    // a woven EMT, or a small force: no note
    assert_eq!(note(&read(&tensile("", 500.0, 6.5, false))), None);
    assert_eq!(note(&read(&tensile("", 50.0, 0.065, false))), None);
}

/// F_m is the nominal force only for a curve that reached it (1 % below to 2 % above): a curve
/// that stopped 5 % short, or one that does not follow its `max force` line, is read at the
/// force it reached (LT = top/top = 1 for these straight loops), with a note.
#[test]
fn lt_reads_at_the_force_the_curve_reached_when_it_missed_the_nominal_one() {
    for (metadata, top, lt) in [
        ("", 504.0, 504.0 / 500.0),
        ("", 496.0, 496.0 / 500.0),
        ("", 475.0, 1.0),
        ("", 525.0, 1.0),
        ("# max force [gf/cm]: 1000\n", 500.0, 1.0),
        ("# max force [gf/cm]: 250\n", 500.0, 1.0),
        ("# max force [gf/cm]: 1000\n", 1015.0, 1.015),
    ] {
        let r = read(&tensile(metadata, top, 10.0, false));
        assert!(close(r.values.lt, lt, 1e-9), "{metadata} {top}: {r:?}");
        let own = r
            .notes
            .iter()
            .any(|n| n.contains("the curve's largest force"));
        assert_eq!(own, lt == 1.0, "{metadata} {top}: {:?}", r.notes);
    }
}

/// An elastic curve whose return gives back a little more than loading took (noise: RT up to
/// 102 %) keeps its values; only a loop run the wrong way is called reversed.
#[test]
fn a_return_within_two_percent_of_the_loading_energy_is_not_called_reversed() {
    // loading F = 50ε, unloading straight back along F = 50.5ε: RT = 101 %
    let up: String = (0..=100)
        .map(|i| format!("{},{}\n", 0.1 * i as f64, 5.0 * i as f64))
        .collect();
    let down: String = (0..100)
        .rev()
        .map(|i| format!("{},{}\n", 0.1 * i as f64, 5.05 * i as f64))
        .collect();
    let text = format!("# test: tensile\n# direction: warp\nstrain [%],force [gf/cm]\n{up}{down}");
    let r = read(&text);
    assert!(close(r.values.rt, 101.0, 1e-3), "{r:?}");
    assert!(r.values.wt.is_some() && r.values.lt.is_some(), "{r:?}");
}

/// A shear or bending loop of another amplitude than the instrument's ±8° / ±2.5 cm⁻¹ is noted
/// (its values compare only with the same amplitude); the standard ones are not.
#[test]
fn another_amplitude_is_noted() {
    let amplitude_note =
        |r: &KesReading| r.notes.iter().any(|n| n.contains("not the instrument's"));
    let shear = |a| shear_loop(a, 400);
    let bending = |a| bending_loop(a, 0.01, 400);
    assert!(!amplitude_note(&shear(8.0)), "{:?}", shear(8.0).notes);
    assert!(amplitude_note(&shear(6.0)), "{:?}", shear(6.0).notes);
    assert!(!amplitude_note(&bending(2.5)), "{:?}", bending(2.5).notes);
    assert!(amplitude_note(&bending(2.0)), "{:?}", bending(2.0).notes);
}

/// `text` of fabric F (replicates are the curves of one fabric, test and direction).
fn named(text: String) -> String {
    format!("# fabric: F\n{text}")
}

/// Tensile replicates taken to different forces (500, the file's 1000, 250 gf/cm) are not
/// averaged in EMT, WT, LT and RT (a note says why); replicates to one force are.
#[test]
fn replicates_taken_to_different_forces_are_not_averaged() {
    use kestrel::kes::replicate_summaries;
    let rules = ReadingRules::default();
    let mixed = [
        curve(&named(tensile("", 500.0, 6.0, false))),
        curve(&named(tensile(
            "# max force [gf/cm]: 1000\n",
            1000.0,
            10.0,
            false,
        ))),
        curve(&named(tensile("", 250.0, 4.0, false))),
    ];
    let s = &replicate_summaries(&mixed, &rules)[0];
    assert_eq!(s.specimens, 3);
    for v in ["EMT", "WT", "LT", "RT"] {
        assert_eq!(s.mean.get(v), None, "{v}: {s:?}");
    }
    assert!(
        s.notes[0].contains("different forces (F_m 500, 1000, 250 gf/cm)"),
        "{s:?}"
    );
    let same = [
        curve(&named(tensile("", 500.0, 6.0, false))),
        curve(&named(tensile("", 505.0, 8.0, false))),
    ];
    let s = &replicate_summaries(&same, &rules)[0];
    assert!(close(s.mean.get("EMT"), 7.0, 1e-12), "{s:?}");
    assert!(close(s.mean.get("RT"), 50.0, 1e-9), "{s:?}");
    assert!(s.notes.is_empty(), "{s:?}");
}
