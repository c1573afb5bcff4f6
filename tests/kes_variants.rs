//! KES files as other tools and labs write them: header spellings, blank and second
//! channels, unit-less metadata, curves that start off zero, stiff fabrics. Each is read as
//! given (closed forms of the rows written), noted, or refused with its reason.

use kestrel::kes::{kes_values, parse_kes, Curve, CurveOverrides, KesReading, ReadingRules};

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
    for c in [&last, &middle] {
        assert_eq!((&c.x, &c.y), (&plain.x, &plain.y));
        assert_eq!(c.metadata["skipped columns"], "notes (empty)");
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
    for header in [
        "strain [%],force [gf/cm],force [gf/cm]",
        "strain [%],force [gf/cm],strain [%]",
    ] {
        let c = curve(&file(
            "tensile",
            "warp",
            header,
            &["0,0,9", "1,100,9", "0.5,0,9"],
        ));
        assert_eq!((&c.x, &c.y), (&plain.x, &plain.y), "{header}");
        let second = header.rsplit(',').next().unwrap_or_default();
        assert_eq!(c.metadata["skipped columns"], second);
    }
    // before both x and y are read, which one is meant is unclear: refused
    let e = refused(&file(
        "tensile",
        "warp",
        "force [gf/cm],force [gf/cm],strain [%]",
        &["0,0,0", "100,100,1", "0,0,0.5"],
    ));
    assert!(e.contains("appears twice"), "{e}");
}
