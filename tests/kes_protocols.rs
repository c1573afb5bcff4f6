//! KES values on paths other than the instrument's standard one (another F_m, smaller
//! amplitudes, rows reversed, coarse sampling): each value is the closed form of the path or
//! unavailable with its reason.

use kestrel::kes::{kes_values, parse_kes, Curve, CurveOverrides, KesReading, ReadingRules};

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
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("F_m = 1000 gf/cm") && n.contains("max force")),
        "{:?}",
        r.notes
    );
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
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("F_m = 250 gf/cm, the curve's largest force")),
        "{:?}",
        r.notes
    );

    // overshoot within 5 % of 500: the standard F_m, no note: LT = 510/500
    let r = read(&tensile("", 510.0, 6.0, false));
    assert!(close(r.values.lt, 510.0 / 500.0, 1e-9), "{r:?}");
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

/// A compression loop with straight branches: compression p = 100(1.2 − T) from T = 1.2 to
/// 0.7 mm (50 gf/cm²), recovery p = 50(1 − T)/0.3 from 0.7 to 1.0 mm; every 0.005 mm.
fn compression(reverse: bool) -> String {
    let mut rows: Vec<(f64, f64)> = (0..=100)
        .map(|i| {
            let t = 1.2 - 0.005 * i as f64;
            (t, 100.0 * (1.2 - t))
        })
        .collect();
    rows.extend((1..=60).map(|i| {
        let t = 0.7 + 0.005 * i as f64;
        (t, 50.0 * (1.0 - t) / 0.3)
    }));
    if reverse {
        rows.reverse();
    }
    let body: String = rows.iter().map(|(t, p)| format!("{t},{p}\n")).collect();
    format!("# test: compression\nthickness [mm],pressure [gf/cm2]\n{body}")
}

#[test]
fn compression_rows_in_reverse_order_leave_rc_and_the_rest_unavailable() {
    // forward: T0 = 1.195 mm, TM = 0.7 mm, WC = 100(0.5² − 0.005²)/2/10,
    // returned = 50·0.3/2/10 = 0.75
    let r = read(&compression(false));
    let wc = 100.0 * (0.25 - 0.005 * 0.005) / 2.0 / 10.0;
    assert!(close(r.values.t0, 1.195, 1e-9), "{r:?}");
    assert!(close(r.values.tm, 0.7, 1e-9), "{r:?}");
    assert!(close(r.values.wc, wc, 1e-9), "{r:?}");
    assert!(close(r.values.rc, 100.0 * 0.75 / wc, 1e-9), "{r:?}");

    let r = read(&compression(true));
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

#[test]
fn shear_and_bending_windows_keep_clear_of_the_turning_point() {
    let shear = |a: f64| {
        read(&parallelogram(
            "shear",
            "angle [deg],force [gf/cm]",
            a,
            0.7,
            0.3,
            100,
        ))
    };
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

    let bending = |a: f64| {
        read(&parallelogram(
            "bending",
            "curvature [1/cm],moment [gf*cm/cm]",
            a,
            0.1,
            0.02,
            1000,
        ))
    };
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
    let r = read(&parallelogram(
        "shear",
        "angle [deg],force [gf/cm]",
        8.0,
        0.7,
        0.3,
        1,
    ));
    let why = reason(&r, "2HG");
    assert!(
        why.contains("0 sample(s)") && why.contains("0.5+/-0.25 deg"),
        "{why}"
    );
    assert!(!why.contains("no loading and return branch"), "{why}");
}
