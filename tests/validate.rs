//! Prediction on paths a law was not fitted on: known shear and bending laws driven along the
//! standard protocol, half-amplitude loops and minor loops inside the major one, with seeded
//! noise; laws fitted on the standard curve, then `kestrel validate` on the others.

use std::path::{Path, PathBuf};

use crate::common::{assert_success, kestrel, kestrel_on, noise, repo, stdout_json, write_file};
use kestrel::fit::{fit_fabric, FitOptions};
use kestrel::friction::FrictionShape;
use kestrel::kes::{
    parse_kes, to_kes_csv, Curve, CurveOverrides, Direction, KesTest, ReadingRules, DEG_RAD,
};
use kestrel::material::{BendingLaw, ConnectorLaw, FrictionLaw, MaterialLaw, ShearLaw};
use kestrel::params::{CurveFitQuality, FabricParams, ParamsFormat};
use kestrel::validate::{median_and_worst, validate_curve};

/// The fabric of the fixture curves.
const FABRIC: &str = "Known twill";
/// Noise on the force, a fraction of the curve's force range: the NRMSE floor.
const NOISE: f64 = 0.005;
/// Samples per full-amplitude stroke.
const PER_STROKE: usize = 150;

/// The known laws: shear and bending in warp and weft (SI; KES-like G ≈ 0.5 gf/(cm·deg),
/// 2HG ≈ 1 gf/cm, B ≈ 0.1 gf·cm²/cm, 2HB ≈ 0.1 gf·cm/cm), the load-dependent level on two.
fn known_laws() -> Vec<(Direction, ConnectorLaw)> {
    let friction = |level: f64, mu: f64, eps_f: f64| FrictionLaw {
        level,
        mu,
        shape: FrictionShape::Dahl { eps_f, alpha: 1.0 },
    };
    vec![
        (
            Direction::Warp,
            ConnectorLaw::Shear(ShearLaw {
                k_s: 28.0,
                theta0: 0.0,
                friction: friction(0.45, 0.0, 0.6 * DEG_RAD),
            }),
        ),
        (
            Direction::Weft,
            ConnectorLaw::Shear(ShearLaw {
                k_s: 40.0,
                theta0: 0.0,
                friction: friction(0.6, 0.2, 1.0 * DEG_RAD),
            }),
        ),
        (
            Direction::Warp,
            ConnectorLaw::Bending(BendingLaw {
                k_b: 9.0e-6,
                k0: 0.0,
                friction: friction(4.0e-4, 0.0, 20.0),
            }),
        ),
        (
            Direction::Weft,
            ConnectorLaw::Bending(BendingLaw {
                k_b: 6.0e-6,
                k0: 0.0,
                friction: friction(3.0e-4, 0.1, 30.0),
            }),
        ),
    ]
}

/// The paths, as reversal points in fractions of the instrument's amplitude (±8°, ±2.5 cm⁻¹).
const PATHS: [(&str, &[f64]); 3] = [
    ("standard", &[1.0, -1.0, 0.0]),
    ("half-amplitude", &[0.5, -0.5, 0.5, -0.5, 0.0]),
    (
        "minor-loops",
        &[
            1.0, 0.4, 0.8, 0.2, 0.6, -1.0, -0.4, -0.8, -0.2, -0.6, 1.0, 0.0,
        ],
    ),
];

/// x from 0 through the reversal points, `PER_STROKE` samples per full-amplitude stroke.
fn path(amplitude: f64, reversals: &[f64]) -> Vec<f64> {
    let mut x = vec![0.0];
    let mut from = 0.0;
    for &r in reversals {
        let n = ((PER_STROKE as f64) * (r - from).abs()).ceil().max(1.0) as usize;
        x.extend((1..=n).map(|k| amplitude * (from + (r - from) * k as f64 / n as f64)));
        from = r;
    }
    x
}

/// Every fixture curve: each known law along each path, noise added, rounded as written.
fn fixture_curves() -> Vec<Curve> {
    let mut out = Vec::new();
    for (seed, (direction, law)) in known_laws().into_iter().enumerate() {
        let (test, amplitude) = match law {
            ConnectorLaw::Shear(_) => (KesTest::Shear, 8.0 * DEG_RAD),
            _ => (KesTest::Bending, 250.0),
        };
        for (k, (name, reversals)) in PATHS.iter().enumerate() {
            let x = path(amplitude, reversals);
            let clean = law.drive(&x);
            let (lo, hi) = clean
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                    (l.min(v), h.max(v))
                });
            let e = noise(x.len(), 100 * seed as u64 + k as u64);
            let y = clean
                .iter()
                .zip(&e)
                .map(|(f, e)| f + NOISE * (hi - lo) * e)
                .collect();
            let file = format!("{test}_{direction}_{name}.csv");
            let mut curve = Curve {
                fabric: FABRIC.into(),
                test,
                direction,
                x,
                y,
                metadata: Default::default(),
                source: None,
                sha256: None,
            };
            curve.metadata.insert("protocol".into(), name.to_string());
            curve.metadata.insert(
                "source".into(),
                "synthetic: a known law plus 0.5 % seeded noise (tests/validate.rs)".into(),
            );
            // what a reader of the written file gets
            let text = to_kes_csv(&curve).expect("a KES curve");
            let mut back = parse_kes(&text, &file, CurveOverrides::default()).expect("reads back");
            back.source = Some(PathBuf::from(file));
            out.push(back);
        }
    }
    out
}

fn fixture_dir() -> PathBuf {
    repo("tests/data/off-protocol")
}

#[test]
fn the_fixture_files_are_the_generators_output() {
    let dir = fixture_dir();
    let regenerate = std::env::var_os("KESTREL_REGENERATE_FIXTURES").is_some();
    for c in fixture_curves() {
        let name = c.source.as_ref().expect("named").clone();
        let text = to_kes_csv(&c).unwrap();
        let path = dir.join(&name);
        if regenerate {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let on_disk =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            on_disk,
            text,
            "{} differs from the generator",
            name.display()
        );
    }
}

#[test]
fn laws_fitted_on_the_standard_protocol_predict_other_paths() {
    let curves = fixture_curves();
    let standard: Vec<&Curve> = curves
        .iter()
        .filter(|c| c.metadata["protocol"] == "standard")
        .collect();
    let fit = fit_fabric(FABRIC, &standard, &FitOptions::default());
    let truth = {
        let mut p = FabricParams::new(FABRIC);
        for (d, law) in known_laws() {
            let slot = if d == Direction::Weft {
                &mut p.weft
            } else {
                &mut p.warp
            };
            match law {
                ConnectorLaw::Shear(l) => slot.shear = Some(l),
                ConnectorLaw::Bending(l) => slot.bending = Some(l),
                ConnectorLaw::Traction(l) => slot.traction = Some(l),
            }
        }
        p
    };
    let rules = ReadingRules::default();
    let (mut predicted, mut floor) = (Vec::new(), Vec::new());
    for c in curves
        .iter()
        .filter(|c| c.metadata["protocol"] != "standard")
    {
        let v = validate_curve(&fit.params, c, &rules).unwrap();
        let t = validate_curve(&truth, c, &rules).unwrap();
        println!(
            "{:40} NRMSE {:.3} %  (true law {:.3} %)",
            v.file,
            100.0 * v.nrmse,
            100.0 * t.nrmse
        );
        predicted.push(v.nrmse);
        floor.push(t.nrmse);
    }
    let (median, worst, _) = median_and_worst(&predicted).unwrap();
    let (floor_median, _, _) = median_and_worst(&floor).unwrap();
    println!(
        "fitted laws: median {:.3} %, worst {:.3} %; noise floor (true laws) median {:.3} %",
        100.0 * median,
        100.0 * worst,
        100.0 * floor_median
    );
    // the true law scores the noise: 0.5 % of the range
    assert!((floor_median - NOISE).abs() < 0.1 * NOISE, "{floor_median}");
    assert!(median <= 0.010, "median NRMSE {median}");
    assert!(worst <= 0.020, "worst NRMSE {worst}");
}

/// A parameter file with one shear law (warp) and, when given, the force zero offset of its fit.
fn shear_params(dir: &Path, offset: Option<f64>) -> PathBuf {
    let mut p = FabricParams::new(FABRIC);
    let Some((_, ConnectorLaw::Shear(law))) = known_laws().into_iter().next() else {
        unreachable!()
    };
    p.warp.shear = Some(law);
    p.fits.push(CurveFitQuality {
        file: "shear_warp.csv".into(),
        test: "shear".into(),
        direction: "warp".into(),
        model: "dahl".into(),
        nrmse: None,
        iterations: 0,
        termination: "set by the test".into(),
        offset,
        ..Default::default()
    });
    let path = dir.join(format!("p{}.toml", offset.is_some()));
    p.write(&path, ParamsFormat::Toml, true).unwrap();
    path
}

#[test]
fn cli_validate_reports_nrmse_and_values_and_applies_the_fitted_offset() {
    let dir = tempfile::tempdir().unwrap();
    // the law's own curve on the minor-loop path, shifted by a force zero offset c
    let Some((_, law)) = known_laws().into_iter().next() else {
        unreachable!()
    };
    let c = 0.05; // N/m
    let x = path(8.0 * DEG_RAD, PATHS[2].1);
    let y: Vec<f64> = law.drive(&x).iter().map(|f| f + c).collect();
    let curve = Curve {
        fabric: FABRIC.into(),
        test: KesTest::Shear,
        direction: Direction::Warp,
        x,
        y,
        metadata: [("protocol".to_string(), "minor loops".to_string())].into(),
        source: None,
        sha256: None,
    };
    let file = write_file(dir.path(), "minor.csv", to_kes_csv(&curve).unwrap());
    let f = file.to_str().unwrap();
    let run = |params: &Path| {
        let out = kestrel(&[
            "validate",
            "--params",
            params.to_str().unwrap(),
            "--json",
            f,
        ]);
        stdout_json(&out)
    };
    // with the offset in the file the law reproduces the curve (to the written digits)
    let json = run(&shear_params(dir.path(), Some(c)));
    let entry = &json["curves"][0];
    assert_eq!(entry["file"], f);
    assert_eq!(
        (entry["test"].as_str(), entry["direction"].as_str()),
        (Some("shear"), Some("warp"))
    );
    assert_eq!(entry["protocol"], "minor loops");
    assert!(entry["nrmse"].as_f64().unwrap() < 1e-8, "{entry}");
    let (m, p) = (&entry["values"]["measured"], &entry["values"]["predicted"]);
    assert!((m["G"].as_f64().unwrap() / p["G"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    // without it the constant c shows: NRMSE = c / range exactly
    let json = run(&shear_params(dir.path(), None));
    let (lo, hi) = curve
        .y
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let nrmse = json["curves"][0]["nrmse"].as_f64().unwrap();
    assert!((nrmse / (c / (hi - lo)) - 1.0).abs() < 1e-6, "{nrmse}");

    // the table names the path, the values side by side and the median
    let params = shear_params(dir.path(), Some(c));
    let out = kestrel(&["validate", "--params", params.to_str().unwrap(), f]);
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("protocol: minor loops") && text.contains("measured"),
        "{text}"
    );
    assert!(text.contains("1 curves: median NRMSE"), "{text}");

    // a curve whose law the file lacks is an error naming it, exit 2
    let bending = write_file(dir.path(), "b.csv", "# test: bending\n# direction: warp\ncurvature [1/cm],moment [gf*cm/cm]\n0,0\n1,0.1\n2,0.2\n");
    let out = kestrel(&[
        "validate",
        "--params",
        params.to_str().unwrap(),
        bending.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("b.csv: the parameter file of `Known twill` has no warp bending law"),
        "{err}"
    );
}

// ---- kestrel report: the library's summary table ------------------------------------------

#[test]
fn cli_report_tables_values_parameters_and_the_fit_nrmse() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.csv");
    let t = table.to_str().unwrap();
    let files: Vec<String> = ["tensile", "shear", "bending"]
        .iter()
        .flat_map(|test| ["warp", "weft"].map(|d| format!("kes_data/wool-suiting/{test}_{d}.csv")))
        .collect();
    let out = kestrel_on(&["report", "-o", t, "--json"], &files);
    let rows = stdout_json(&out);
    assert_eq!(rows.as_array().unwrap().len(), 2);
    let warp = &rows[0];
    assert_eq!(
        (warp["fabric"].as_str(), warp["direction"].as_str()),
        (Some("Wool suiting"), Some("warp"))
    );
    assert_eq!(warp["params_source"], "fitted");
    // the values are `kestrel values`' and the NRMSE is `kestrel fit`'s, to the last digit
    let values = kestrel(&["values", "--json", "kes_data/wool-suiting/shear_warp.csv"]);
    let values = stdout_json(&values);
    assert_eq!(warp["values"]["G"], values[0]["values"]["G"]);
    let fit_out = dir.path().join("w.toml");
    let fit = kestrel_on(&["fit", "--json", "-o", fit_out.to_str().unwrap()], &files);
    let fit = stdout_json(&fit);
    let shear_warp = fit["fabrics"][0]["curves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["test"] == "shear" && c["direction"] == "warp")
        .unwrap();
    assert_eq!(warp["nrmse"]["shear"], shear_warp["nrmse"]);
    assert!(warp["params"]["shear.k_s"].as_f64().unwrap() > 0.0);

    // the CSV: a header naming units, one row per fabric and direction
    let text = std::fs::read_to_string(&table).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    for column in [
        "fabric",
        "direction",
        "G [gf/(cm*deg)]",
        "G CV [-]",
        "shear.k_s [N/(m*rad)]",
        "shear NRMSE [-]",
    ] {
        assert!(header.iter().any(|h| h == column), "{column} in {header:?}");
    }
    assert_eq!(reader.records().count(), 2);

    // an existing table is kept without --force (exit 2), replaced with it
    let before = std::fs::read(&table).unwrap();
    let mut again = vec!["report", "-o", t];
    again.extend(files.iter().map(String::as_str));
    let out = kestrel(&again);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&table).unwrap(), before);
    again.push("--force");
    assert_success(&kestrel(&again));
}

#[test]
fn cli_report_summarises_replicates_fitted_jointly_or_with_a_parameter_file() {
    let dir = tempfile::tempdir().unwrap();
    // three shear specimens of one curve: the known law, its G scaled by 0.9, 1, 1.1
    let Some((_, ConnectorLaw::Shear(law))) = known_laws().into_iter().next() else {
        unreachable!()
    };
    let x = path(8.0 * DEG_RAD, PATHS[0].1);
    let mut files = Vec::new();
    for (i, scale) in [0.9, 1.0, 1.1].into_iter().enumerate() {
        let specimen = ShearLaw {
            k_s: law.k_s * scale,
            ..law
        };
        let curve = Curve {
            fabric: FABRIC.into(),
            test: KesTest::Shear,
            direction: Direction::Warp,
            y: ConnectorLaw::Shear(specimen).drive(&x),
            x: x.clone(),
            metadata: Default::default(),
            source: None,
            sha256: None,
        };
        let f = write_file(
            dir.path(),
            format!("shear_warp_{}.csv", i + 1),
            to_kes_csv(&curve).unwrap(),
        );
        files.push(f.to_str().unwrap().to_string());
    }
    let card = shear_params(dir.path(), None);
    let table = dir.path().join("t.csv");
    let mut args = vec!["report", "-o", table.to_str().unwrap(), "--json"];
    args.extend(files.iter().map(String::as_str));
    // without a card the three specimens are fitted jointly: one law, near the middle one
    let out = kestrel(&args);
    let rows = stdout_json(&out);
    assert_eq!(rows[0]["specimens"]["shear"], 3);
    assert_eq!(rows[0]["params_source"], "fitted");
    let k_s = rows[0]["params"]["shear.k_s"].as_f64().unwrap();
    assert!((k_s / law.k_s - 1.0).abs() < 0.05, "{k_s} vs {}", law.k_s);
    args.extend(["--params", card.to_str().unwrap(), "--force"]);
    let out = kestrel(&args);
    let rows = stdout_json(&out);
    let row = &rows[0];
    assert_eq!(row["specimens"]["shear"], 3);
    assert_eq!(row["params_source"], card.to_str().unwrap());
    // G scales with k_s: the CV of 0.9, 1, 1.1 times one G is 0.1 (the friction part of the
    // slope does not scale, so allow a little)
    let cv = row["cv"]["G"].as_f64().unwrap();
    assert!((cv - 0.1).abs() < 0.01, "{cv}");
    // the middle specimen is the card's law: its NRMSE 0, the others' not; the mean is > 0
    assert!(row["nrmse"]["shear"].as_f64().unwrap() > 0.0);
    assert!(table.exists());
}
