//! KES files as other tools and labs write them: header spellings, blank and second
//! channels, unit-less metadata, curves that start off zero, stiff fabrics. Each is read as
//! given (closed forms of the rows written), noted, or refused with its reason.

use kestrel::kes::{
    kes_values, parse_kes, Curve, CurveOverrides, KesReading, MaxForce, MaxForceSource,
    ReadingRules,
};

use crate::common;
use crate::common::assert_a_line_has;

fn curve(text: &str) -> Curve {
    parse_kes(text, "p.csv", CurveOverrides::default()).unwrap()
}

fn refused(text: &str) -> String {
    parse_kes(text, "p.csv", CurveOverrides::default())
        .unwrap_err()
        .to_string()
}

fn read(text: &str) -> KesReading {
    kes_values(&curve(text), &ReadingRules::default())
}

/// `# test` and `# direction` lines, the header, then the rows.
fn file(test: &str, direction: &str, header: &str, rows: &[&str]) -> String {
    format!(
        "# test: {test}\n# direction: {direction}\n{header}\n{}\n",
        rows.join("\n")
    )
}

#[test]
fn lab_spellings_of_units_are_read_in_their_unit() {
    // 1 gf·cm/cm = 9.80665e-3 N
    let bending = curve(&file(
        "bending",
        "warp",
        "curvature [1/cm],moment [gf  cm/cm]",
        &["0,0", "1,2", "2,4"],
    ));
    assert!((bending.y[1] - 2.0 * 9.80665e-3).abs() < 1e-15);
    let shear = curve(&file(
        "shear",
        "warp",
        "angle [deg.],force [gf/cm]",
        &["0,0", "8,1", "-8,-1"],
    ));
    assert!((shear.x[1] - 8f64.to_radians()).abs() < 1e-15);
    for unit in ["kpa", "KPA", "kPa"] {
        let c = curve(&file(
            "compression",
            "normal",
            &format!("thickness [mm],pressure [{unit}]"),
            &["1,0.1", "0.8,2", "0.9,1"],
        ));
        assert_eq!(c.y[1], 2000.0, "{unit}");
    }
    // units whose case changes their meaning stay refused
    for (header, unit) in [
        ("thickness [mm],pressure [PA]", "PA"),
        ("thickness [MM],pressure [Pa]", "MM"),
        ("thickness [mm],pressure [MPA]", "MPA"),
    ] {
        let e = refused(&file(
            "compression",
            "normal",
            header,
            &["1,1", "0.8,2", "0.9,1"],
        ));
        assert!(e.contains(&format!("unknown unit `{unit}`")), "{e}");
    }
    let e = refused(&file(
        "tensile",
        "warp",
        "strain [%],force [MN/m]",
        &["0,0", "1,1", "0.5,0"],
    ));
    assert!(e.contains("unknown unit `MN/m`"), "{e}");
}

/// γ = tan φ: the angle read is atan γ, so G and the widths are those of the angle file.
#[test]
fn an_engineering_shear_strain_column_is_read_as_the_angle_atan_gamma() {
    let angles = [
        0.0, 2.0, 5.0, 8.0, 4.0, 0.0, -4.0, -8.0, -4.0, 0.0, 4.0, 8.0,
    ];
    let rows = |f: &dyn Fn(f64) -> f64| -> Vec<String> {
        angles
            .iter()
            .map(|&a: &f64| format!("{},{}", f(a), 1.3 * a))
            .collect()
    };
    let by_angle = rows(&|a| a);
    let by_strain = rows(&|a: f64| a.to_radians().tan());
    let refs = |r: &[String]| r.iter().map(String::as_str).collect::<Vec<_>>().join("\n");
    let text = |header: &str, r: &[String]| {
        format!("# test: shear\n# direction: warp\n{header}\n{}\n", refs(r))
    };
    let a = curve(&text("angle [deg],force [gf/cm]", &by_angle));
    let g = curve(&text("shear strain [-],force [gf/cm]", &by_strain));
    for (x, y) in a.x.iter().zip(&g.x) {
        assert!((x - y).abs() < 1e-12, "{x} {y}");
    }
    assert!(g.metadata["shear angle"].contains("atan"));
    // a shear strain in a tensile file is no column of its
    let e = refused(&file(
        "tensile",
        "warp",
        "shear strain [-],force [gf/cm]",
        &["0,0", "1,1", "0.5,0"],
    ));
    assert!(e.contains("unknown column `shear strain [-]`"), "{e}");
}

#[test]
fn a_blank_named_column_is_skipped_wherever_it_stands_and_named() {
    let plain = curve(&file(
        "tensile",
        "warp",
        "strain [%],force [gf/cm]",
        &["0,0", "1,100", "0.5,0"],
    ));
    let last = curve(&file(
        "tensile",
        "warp",
        "strain [%],force [gf/cm],notes",
        &["0,0,", "1,100,", "0.5,0,"],
    ));
    let middle = curve(&file(
        "tensile",
        "warp",
        "strain [%],notes,force [gf/cm]",
        &["0,,0", "1,,100", "0.5,,0"],
    ));
    for (c, at) in [(&last, 3), (&middle, 2)] {
        assert_eq!((&c.x, &c.y), (&plain.x, &plain.y));
        assert_eq!(
            c.metadata["skipped columns"],
            format!("notes (column {at}: empty)")
        );
        // said in the values' notes (stderr, --json, the report and the workbench)
        let notes = kes_values(c, &ReadingRules::default()).notes;
        let said = format!("columns not read: notes (column {at}: empty)");
        assert!(notes.contains(&said), "{notes:?}");
    }
    // a notes column with text in it before y is still refused
    let e = refused(&file(
        "tensile",
        "warp",
        "strain [%],notes,force [gf/cm]",
        &["0,,0", "1,peak,100", "0.5,,0"],
    ));
    assert!(e.contains("unknown column `notes`"), "{e}");
}

#[test]
fn a_second_force_or_strain_column_after_x_and_y_is_skipped_and_named() {
    let plain = curve(&file(
        "tensile",
        "warp",
        "strain [%],force [gf/cm]",
        &["0,0", "1,100", "0.5,0"],
    ));
    for (header, why) in [
        (
            "strain [%],force [gf/cm],force [gf/cm]",
            "a second force column, column 2 is read",
        ),
        (
            "strain [%],force [gf/cm],strain [%]",
            "a second strain column, column 1 is read",
        ),
        (
            "strain [%],force [gf/cm],elongation [mm]",
            "a second strain column, column 1 is read",
        ),
    ] {
        let c = curve(&file(
            "tensile",
            "warp",
            header,
            &["0,0,9", "1,100,9", "0.5,0,9"],
        ));
        assert_eq!((&c.x, &c.y), (&plain.x, &plain.y), "{header}");
        let second = header.rsplit(',').next().unwrap_or_default();
        let skipped = format!("{second} (column 3: {why})");
        assert_eq!(c.metadata["skipped columns"], skipped);
        // a value note names it: the column read is not the only one of its quantity
        let notes = kes_values(&c, &ReadingRules::default()).notes;
        assert!(
            notes.contains(&format!("columns not read: {skipped}")),
            "{header}: {notes:?}"
        );
    }
    // force first, strain, then a second force at twice the first: the first force is read
    let c = curve(&file(
        "tensile",
        "warp",
        "force [gf/cm],strain [%],force [gf/cm]",
        &["0,0,0", "100,1,200", "0,0.5,0"],
    ));
    assert_eq!((&c.x, &c.y), (&plain.x, &plain.y));
    assert_eq!(
        c.metadata["skipped columns"],
        "force [gf/cm] (column 3: a second force column, column 1 is read)"
    );
    // before both x and y are read, which one is meant is unclear: refused
    let e = refused(&file(
        "tensile",
        "warp",
        "force [gf/cm],force [gf/cm],strain [%]",
        &["0,0,0", "100,100,1", "0,0,0.5"],
    ));
    assert!(e.contains("appears twice"), "{e}");
}

/// A tensile loop with straight branches (`rows` samples a branch): loading from (0, `f0`) to
/// (emt + `e0`, top) — `e0` and `f0` start the path off zero — then unloading straight to
/// (e0 + emt/2, 0). With e0 = f0 = 0: WT = top·emt/200, LT = top/F_m, RT = 50 %.
fn tensile(metadata: &str, header: &str, top: f64, emt: f64, e0: f64, f0: f64) -> String {
    let n = 100;
    let mut rows: Vec<(f64, f64)> = (0..=n)
        .map(|i| {
            let s = i as f64 / n as f64;
            (e0 + emt * s, f0 + (top - f0) * s)
        })
        .collect();
    rows.extend((1..=n).map(|i| {
        let s = i as f64 / n as f64;
        (e0 + emt - 0.5 * emt * s, top * (1.0 - s))
    }));
    let body: Vec<String> = rows.iter().map(|(e, f)| format!("{e},{f}")).collect();
    format!(
        "# test: tensile\n# direction: warp\n{metadata}{header}\n{}\n",
        body.join("\n")
    )
}

const GF_CM: &str = "strain [%],force [gf/cm]";

/// `# max force: 400` without a unit is read in the force column's unit, with a note; LT is
/// then top / F_m = 1 for a straight loading branch to 400 gf/cm.
#[test]
fn a_max_force_line_without_unit_is_read_in_the_force_columns_unit() {
    let r = read(&tensile("# max force: 400\n", GF_CM, 400.0, 4.0, 0.0, 0.0));
    let fm = r.max_force.expect("F_m");
    assert_eq!((fm.gf_cm, fm.from), (400.0, MaxForceSource::Metadata));
    assert!((r.values.lt.unwrap() - 1.0).abs() < 1e-12, "{r:?}");
    assert_a_line_has(
        &r.notes,
        &["`# max force: 400` gives no unit", "force column's, gf/cm"],
    );
    // in N/m: 392.266 N/m is 400 gf/cm
    let n_m = read(&tensile(
        "# max force: 392.266\n",
        "strain [%],force [N/m]",
        392.266,
        4.0,
        0.0,
        0.0,
    ));
    let fm = n_m.max_force.expect("F_m");
    assert!((fm.gf_cm - 400.0).abs() < 1e-9, "{fm:?}");
    assert_a_line_has(&n_m.notes, &["force column's, N/m"]);
    // a line the curve did not reach is not used: the curve's own largest force is F_m
    let missed = read(&tensile("# max force: 400\n", GF_CM, 300.0, 4.0, 0.0, 0.0));
    let fm = missed.max_force.expect("F_m");
    assert_eq!((fm.gf_cm, fm.from), (300.0, MaxForceSource::Curve));
    // a unit-less 500 over an N/m column is 500/0.980665 gf/cm: four digits, as every note
    let missed = read(&tensile(
        "# max force: 500\n",
        "strain [%],force [N/m]",
        50.0,
        4.0,
        0.0,
        0.0,
    ));
    assert_a_line_has(
        &missed.notes,
        &["`max force` metadata, 509.9 gf/cm, so the curve"],
    );
}

/// F_m and where it came from, as the values' reading gives it, for the nominal force, the
/// metadata line and the curve's own largest force.
#[test]
fn the_reading_keeps_f_m_and_where_it_came_from() {
    let cases = [
        ("", 500.0, 500.0, MaxForceSource::Nominal),
        (
            "# max force [gf/cm]: 250\n",
            250.0,
            250.0,
            MaxForceSource::Metadata,
        ),
        ("", 300.0, 300.0, MaxForceSource::Curve),
    ];
    for (metadata, top, fm, from) in cases {
        let c = curve(&tensile(metadata, GF_CM, top, 4.0, 0.0, 0.0));
        let r = kes_values(&c, &ReadingRules::default());
        assert_eq!(
            r.max_force,
            Some(MaxForce { gf_cm: fm, from }),
            "{metadata}"
        );
        // the workbench's KES panel shows it after the values
        let shown = kestrel::kes::values::formatted_for_workbench(&c);
        let text = shown
            .iter()
            .find(|(k, _)| k == "F_m")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        assert_eq!(text, format!("{fm} gf/cm ({from})"));
    }
    // a shear curve has none
    let shear = curve(&file(
        "shear",
        "warp",
        "angle [deg],force [gf/cm]",
        &["0,0", "8,1", "-8,-1"],
    ));
    assert_eq!(kes_values(&shear, &ReadingRules::default()).max_force, None);
    assert!(!kestrel::kes::values::formatted_for_workbench(&shear)
        .iter()
        .any(|(k, _)| k == "F_m"));
}

/// `kestrel report` shows F_m and its source beside the tensile values (CSV and JSON).
#[test]
fn the_report_shows_f_m_beside_the_tensile_values() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.csv");
    let files = common::kes_data().join("cotton-shirting");
    let warp = files.join("tensile_warp.csv");
    let run = common::kestrel(&[
        "report",
        warp.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    common::assert_success(&run);
    let json = common::stdout_json(&run);
    assert_eq!(json[0]["max_force"]["gf_cm"], 500.0);
    assert_eq!(json[0]["max_force"]["from"], "nominal");
    let table = std::fs::read_to_string(&out).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "F_m [gf/cm]").unwrap();
    assert_eq!(header[at - 1], "RT CV [-]");
    assert_eq!(
        (row[at], header[at + 1], row[at + 1]),
        ("500", "F_m from", "nominal")
    );
    // the values' notes go to the report's stderr, as to `kestrel values`'
    let off = common::write_file(
        dir.path(),
        "off.csv",
        tensile("# fabric: Off\n", GF_CM, 500.0, 4.0, 0.5, 0.0),
    );
    let run = common::kestrel(&[
        "report",
        off.to_str().unwrap(),
        "-o",
        dir.path().join("off-table.csv").to_str().unwrap(),
    ]);
    common::assert_success(&run);
    let err = common::stderr(&run);
    assert!(
        err.contains("off.csv: the strain path starts off zero"),
        "{err}"
    );
}

fn noted(r: &KesReading, words: &str) -> Option<String> {
    r.notes.iter().find(|n| n.contains(words)).cloned()
}

/// Curves that start off zero are read as given (EMT is the strain at the turn, not from the
/// start) and noted with the offset and its unit.
#[test]
fn curves_that_start_off_zero_are_read_as_given_and_noted() {
    // a force offset of +3 gf/cm (0.6 % of F_m): loading from (0, 3) to (4, 500)
    let r = read(&tensile("", GF_CM, 500.0, 4.0, 0.0, 3.0));
    let n = noted(&r, "the force starts off zero").expect("a note");
    assert!(n.contains("at 3 gf/cm"), "{n}");
    assert_eq!(r.values.emt, Some(4.0));
    // WT of the trapezoid from 3 to 500 gf/cm over 4 %: (3 + 500)/2 · 0.04
    assert!((r.values.wt.unwrap() - 503.0 / 2.0 * 0.04).abs() < 1e-9);
    // a strain path from 0.5 %: EMT at the turn is 0.5 + 4
    let r = read(&tensile("", GF_CM, 500.0, 4.0, 0.5, 0.0));
    let n = noted(&r, "the strain path starts off zero").expect("a note");
    assert!(n.contains("at 0.5 %"), "{n}");
    assert_eq!(r.values.emt, Some(4.5));
    // a shear path from +0.3 deg (more than 2 % of 8 deg)
    let mut rows = vec!["0.3,0.39".to_string()];
    rows.extend(
        [8.0, 0.0, -8.0, 0.0, 8.0]
            .iter()
            .map(|a: &f64| format!("{a},{}", 1.3 * a)),
    );
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let r = read(&file("shear", "warp", "angle [deg],force [gf/cm]", &rows));
    let n = noted(&r, "the shear angle starts off zero").expect("a note");
    assert!(n.contains("at 0.3 deg"), "{n}");
    // the workbench's KES panel shows the notes after the values
    let c = curve(&file("shear", "warp", "angle [deg],force [gf/cm]", &rows));
    let shown = kestrel::kes::values::formatted_for_workbench(&c);
    assert!(shown
        .iter()
        .any(|(k, v)| k == "note" && v.contains("starts off zero")));
    // under the shares, no note: 2 gf/cm (0.4 % of F_m), 0.05 % of strain, 0.1 deg
    for text in [
        tensile("", GF_CM, 500.0, 4.0, 0.0, 2.0),
        tensile("", GF_CM, 500.0, 4.0, 0.05, 0.0),
        file(
            "shear",
            "warp",
            "angle [deg],force [gf/cm]",
            &["0.1,0.13", "8,10.4", "-8,-10.4", "8,10.4"],
        ),
    ] {
        let r = read(&text);
        assert_eq!(noted(&r, "starts off zero"), None, "{:?}", r.notes);
    }
}

/// The sample curves start at zero within their noise: no offset note, and no strain unit
/// note, on any of them.
#[test]
fn the_sample_curves_get_no_start_or_unit_note() {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(common::kes_data())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .flat_map(|d| {
            std::fs::read_dir(d)
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
        })
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 44);
    for f in &files {
        let c = kestrel::kes::read_kes(f, CurveOverrides::default()).unwrap();
        let r = kes_values(&c, &ReadingRules::default());
        assert!(r.notes.is_empty(), "{}: {:?}", f.display(), r.notes);
    }
}

/// A stiff fabric at a low force (EMT 0.83 % at 250 gf/cm) is no unit mistake; fractions under
/// `[%]` (EMT 3.2 % written 0.032) are.
#[test]
fn the_strain_unit_note_weighs_the_force_reached() {
    let stiff = read(&tensile("", GF_CM, 250.0, 0.83, 0.0, 0.0));
    assert_eq!(stiff.values.emt, Some(0.83));
    assert_eq!(noted(&stiff, "header must say"), None, "{:?}", stiff.notes);
    let stiff500 = read(&tensile("", GF_CM, 500.0, 0.6, 0.0, 0.0));
    assert_eq!(noted(&stiff500, "header must say"), None);
    let fractions = read(&tensile("", GF_CM, 500.0, 0.032, 0.0, 0.0));
    let n = noted(&fractions, "header must say").expect("a note");
    assert!(n.contains("`strain [-]`") && n.contains("0.032 %"), "{n}");
    let fractions250 = read(&tensile("", GF_CM, 250.0, 0.055, 0.0, 0.0));
    assert!(noted(&fractions250, "`strain [-]`").is_some());
}

/// `kestrel values --json` carries a curve's notes; a curve without notes has no `notes` key.
#[test]
fn values_json_carries_the_notes() {
    let dir = tempfile::tempdir().unwrap();
    let off = common::write_file(
        dir.path(),
        "off.csv",
        tensile("", GF_CM, 500.0, 4.0, 0.5, 0.0),
    );
    let clean = common::write_file(
        dir.path(),
        "clean.csv",
        tensile("", GF_CM, 500.0, 4.0, 0.0, 0.0),
    );
    let run = common::kestrel(&[
        "values",
        "--json",
        off.to_str().unwrap(),
        clean.to_str().unwrap(),
    ]);
    common::assert_success(&run);
    let json = common::stdout_json(&run);
    assert!(
        common::stderr(&run).contains("note: "),
        "{}",
        common::stderr(&run)
    );
    let notes = json[0]["notes"].as_array().expect("notes");
    assert!(notes
        .iter()
        .any(|n| n.as_str().unwrap_or("").contains("starts off zero")));
    assert!(json[1].get("notes").is_none(), "{}", json[1]);
}

/// A `notes` column after x and y filled in some rows only: the rows that leave it empty end
/// before it (`0,0,`: the reader drops trailing empty fields) and are read; a row that ends
/// before x or y is refused at the column it lacks, quoted as written.
#[test]
fn a_partly_filled_column_after_x_and_y_is_skipped_and_rows_may_end_before_it() {
    let plain = curve(&file(
        "tensile",
        "warp",
        "strain [%],force [gf/cm]",
        &["0,0", "1,100", "0.5,0"],
    ));
    for (header, rows) in [
        (
            "strain [%],force [gf/cm],notes",
            ["0,0,", "1,100,peak", "0.5,0,"],
        ),
        (
            "strain [%];force [gf/cm];notes",
            ["0;0;", "1;100;peak", "0.5;0"],
        ),
        (
            "strain [%],force [gf/cm],notes,operator",
            ["0,0,,", "1,100,peak,", "0.5,0,,A"],
        ),
    ] {
        let c = curve(&file("tensile", "warp", header, &rows));
        assert_eq!((&c.x, &c.y), (&plain.x, &plain.y), "{header}");
        let skipped = &c.metadata["skipped columns"];
        assert!(
            skipped.starts_with("notes (column 3: not a tensile column)"),
            "{skipped}"
        );
    }
    // a row without its force is refused, at the force column, the line quoted as written
    let e = refused(&file(
        "tensile",
        "warp",
        "strain [%],force [gf/cm],notes",
        &["0,0,", "1,", "0.5,0,"],
    ));
    assert_eq!(
        e,
        "p.csv:5:2: ragged row: 1 field(s) `1,` — it ends before column 2, `force [gf/cm]`, \
         which is read"
    );
    // more fields than the header: still ragged
    let e = refused(&file(
        "tensile",
        "warp",
        "strain [%],force [gf/cm],notes",
        &["0,0,", "1,100,a,b", "0.5,0,"],
    ));
    assert!(
        e.starts_with("p.csv:5: ragged row: 4 fields `1,100,a,b` — expected 3"),
        "{e}"
    );
}
