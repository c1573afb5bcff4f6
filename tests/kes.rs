//! KES curves: import, errors, characteristic values against the synthetic oracle, protocols.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{
    assert_a_line_has, assert_success, kes_curve, kestrel, kestrel_on, oracle, repo, stdout_json,
    write_file,
};
use kestrel::kes::{kes_values, read_kes, CurveOverrides, ReadingRules};

#[test]
fn values_reproduce_the_oracle_within_3_percent() {
    let oracle = oracle();
    let tol = oracle["tolerance_rel"].as_f64().unwrap();
    let rules = ReadingRules::default();
    let mut worst: BTreeMap<String, (f64, String)> = BTreeMap::new();
    let mut failures = Vec::new();
    let curves = oracle["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 24);
    for c in curves {
        let file = c["file"].as_str().unwrap();
        let reading = kes_values(kes_curve(file), &rules);
        for (name, expected) in c["values"].as_object().unwrap() {
            let expected = expected.as_f64().unwrap();
            let Some(got) = reading.values.get(name) else {
                failures.push(format!(
                    "{file}: {name} missing ({:?})",
                    reading.unavailable
                ));
                continue;
            };
            let dev = (got / expected - 1.0).abs();
            let w = worst.entry(name.clone()).or_insert((0.0, String::new()));
            if dev >= w.0 {
                *w = (dev, file.to_string());
            }
            if dev > tol {
                failures.push(format!(
                    "{file}: {name} = {got}, oracle {expected} ({:+.3} %)",
                    100.0 * (got / expected - 1.0)
                ));
            }
        }
    }
    println!("worst deviation from the oracle per value:");
    for (name, (dev, file)) in &worst {
        println!("  {name:5} {:.4} %  ({file})", 100.0 * dev);
    }
    assert_eq!(worst.len(), 9, "every value kind checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- import: formats and units -------------------------------------------------------

use kestrel::friction::FrictionShape;
use kestrel::kes::protocol::read_law;
use kestrel::kes::{
    loop_values, parse_kes, parse_loop, read_kes_files, read_loop, simulate, to_kes_csv,
    write_kes_csv, ColumnRef, Curve, Direction, KesTest, LoopColumn, LoopSpec, Protocol, RowFilter,
    DEG_RAD, GF_CM_PER_CM_N, GF_PER_CM_N_PER_M,
};
use kestrel::material::{BendingLaw, ConnectorLaw, FrictionLaw, ShearLaw, TractionLaw};

const TENSILE: &str = "# test: tensile\n# direction: warp\n# fabric: F\n";

fn parse(text: &str) -> Result<Curve, String> {
    parse_kes(text, "t.csv", CurveOverrides::default()).map_err(|e| e.to_string())
}

fn error(text: &str) -> String {
    match parse(text) {
        Ok(c) => panic!("expected an error, read {} samples", c.len()),
        Err(e) => e,
    }
}

#[test]
fn kes_units_are_converted_to_si_and_rows_kept_in_order() {
    let c = parse(&format!(
        "{TENSILE}strain [%],force [gf/cm]\n0,0\n2,100\n1,50\n"
    ))
    .unwrap();
    assert_eq!(c.x, vec![0.0, 0.02, 0.01]);
    assert!((c.y[1] - 100.0 * GF_PER_CM_N_PER_M).abs() < 1e-12);
    assert_eq!(
        (c.test, c.direction, c.fabric.as_str()),
        (KesTest::Tensile, Direction::Warp, "F")
    );

    // BOM, semicolons, a time column, SI units, CRLF, metadata kept
    let c = parse(
        "\u{feff}# test: shear\r\n# direction: weft\r\n# tension [gf/cm]: 10\r\ntime [s];angle [rad];force [N/m]\r\n0;0;0\r\n1;0.1;2\r\n2;0.2;3\r\n",
    )
    .unwrap();
    assert_eq!(c.x, vec![0.0, 0.1, 0.2]);
    assert_eq!(c.y, vec![0.0, 2.0, 3.0]);
    assert_eq!(c.metadata["tension [gf/cm]"], "10");

    // tabs, degrees, bending units
    let c = parse("# test: bending\n# direction: warp\ncurvature [1/cm]\tmoment [gf*cm/cm]\n0\t0\n1\t0.1\n2\t0.2\n").unwrap();
    assert_eq!(c.x[1], 100.0);
    assert!((c.y[2] - 0.2 * GF_CM_PER_CM_N).abs() < 1e-15);
    let c = parse("# test: shear\n# direction: warp\nangle [deg],force [gf/cm]\n0,0\n8,1\n-8,-1\n")
        .unwrap();
    assert!((c.x[1] - 8.0 * DEG_RAD).abs() < 1e-15);
}

#[test]
fn test_and_direction_come_from_the_caller_when_the_file_lacks_them() {
    let text = "strain [%],force [gf/cm]\n0,0\n1,1\n2,2\n";
    let e = error(text);
    assert!(
        e.contains(
            "t.csv: no `test` metadata — expected a line \
             `# test: tensile|shear|bending|compression|friction|roughness` or --test"
        ),
        "{e}"
    );
    let given = CurveOverrides {
        test: Some(KesTest::Tensile),
        direction: Some(Direction::Weft),
        gauge_length: None,
    };
    let c = parse_kes(text, "t.csv", given).unwrap();
    assert_eq!((c.test, c.direction), (KesTest::Tensile, Direction::Weft));
    let e = parse_kes(&format!("{TENSILE}{text}"), "t.csv", given)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.csv:2: the file says direction `warp` but `weft` was asked for"
    );
}

// ---- every bad-input class, with its message ------------------------------------------

#[test]
fn empty_file() {
    assert_eq!(
        error(""),
        "t.csv: empty file — expected `# key: value` metadata, a header such as \
         `strain [%],force [gf/cm]` and rows of numbers"
    );
    assert!(error("\u{feff}\n \n").contains("empty file"));
}

#[test]
fn no_header() {
    assert_eq!(
        error(&format!("{TENSILE}0.0,1.0\n1.0,2.0\n")),
        "t.csv:4: no header: `0.0,1.0` — expected column names with units, e.g. \
         `strain [%],force [gf/cm]`"
    );
    assert!(error(TENSILE).contains("no header: `end of file`"));
}

#[test]
fn unknown_or_missing_unit() {
    assert_eq!(
        error(&format!("{TENSILE}strain [%],force [kgf]\n0,0\n1,1\n2,2\n")),
        "t.csv:4:2: unknown unit `kgf` in column 2 header `force [kgf]` — expected gf/cm, N/m, cN/cm, N/cm or kgf/m"
    );
    assert_eq!(
        error(&format!("{TENSILE}strain,force [gf/cm]\n0,0\n1,1\n2,2\n")),
        "t.csv:4:1: missing unit in column 1 header `strain` — expected `strain [unit]` with \
         unit % or -"
    );
    assert!(error(&format!("{TENSILE}stress [%],force [gf/cm]\n0,0\n"))
        .contains("t.csv:4:1: unknown column `stress [%]` for a tensile curve — expected `strain [% or -]` (or `elongation [mm]` with a gauge length) and `force [gf/cm, N/m, cN/cm, N/cm or kgf/m]`"));
    assert!(error(&format!("{TENSILE}strain [%]\n0\n"))
        .contains("t.csv:4: no `force` column for a tensile curve — the header has strain [%]"));
}

#[test]
fn unknown_test_or_direction() {
    assert_eq!(
        error("# test: torsion\n# direction: warp\nstrain [%],force [gf/cm]\n0,0\n"),
        "t.csv:1: unknown test `torsion` — expected tensile, shear, bending, compression, \
         friction or roughness"
    );
    assert_eq!(
        error("# test: shear\n# direction: diagonal\nangle [deg],force [gf/cm]\n0,0\n"),
        "t.csv:2: unknown direction `diagonal` — expected warp, weft or bias (normal for \
         compression)"
    );
    assert!(error("# test: shear\nangle [deg],force [gf/cm]\n0,0\n")
        .contains("no `direction` metadata"));
}

#[test]
fn names_read_back_with_their_aliases_and_errors_list_the_names() {
    use kestrel::cloth::Integrator;
    use kestrel::FitModel;
    for test in [
        KesTest::Tensile,
        KesTest::Shear,
        KesTest::Bending,
        KesTest::Loop,
    ] {
        assert_eq!(test.to_string().parse::<KesTest>(), Ok(test));
    }
    assert_eq!(" Traction ".parse::<KesTest>(), Ok(KesTest::Tensile));
    assert_eq!("WEFT".parse::<Direction>(), Ok(Direction::Weft));
    assert_eq!(
        "Newton-Krylov".parse::<Integrator>(),
        Ok(Integrator::NewtonKrylov)
    );
    assert_eq!(Integrator::SemiImplicit.to_string(), "semi_implicit");
    assert_eq!(
        "torsion".parse::<KesTest>(),
        Err(
            "unknown test `torsion` — expected tensile, shear, bending, compression, friction, \
             roughness or loop"
                .to_string()
        )
    );
    assert_eq!(
        "diagonal".parse::<Direction>(),
        Err("unknown direction `diagonal` — expected warp, weft, bias or normal".to_string())
    );
    // Fit models are read exactly as written.
    assert_eq!("dahl-alpha".parse::<FitModel>(), Ok(FitModel::DahlAlpha));
    assert_eq!(
        "Dahl".parse::<FitModel>(),
        Err("unknown model `Dahl` — expected dahl, dahl-alpha, bs2 or auto".to_string())
    );
}

#[test]
fn non_numeric_cell() {
    assert_eq!(
        error(&format!(
            "{TENSILE}strain [%],force [gf/cm]\n0,0\n0.1,abc\n"
        )),
        "t.csv:6:2: not a number: `abc` in column 2 (`force [gf/cm]`) — expected a decimal \
         number such as 0.125 or 0,125 (no thousands separator)"
    );
    // two decimal commas are not a number
    assert!(error(&format!(
        "{TENSILE}strain [%];force [gf/cm]\n0;0\n0,1,2;2\n"
    ))
    .contains("t.csv:6:1: not a number: `0,1,2`"));
}

#[test]
fn nan_and_infinity() {
    for bad in ["NaN", "inf", "-infinity", "1e999"] {
        let e = error(&format!(
            "{TENSILE}strain [%],force [gf/cm]\n0,0\n{bad},1\n"
        ));
        assert_eq!(
            e,
            format!("t.csv:6:1: `{bad}` in column 1 (`strain [%]`) is not finite — expected a finite number")
        );
    }
}

#[test]
fn ragged_rows() {
    assert_eq!(
        error(&format!(
            "{TENSILE}strain [%],force [gf/cm]\n0,0\n0.1,2,3\n"
        )),
        "t.csv:6: ragged row: 3 fields `0.1,2,3` — expected 2, as the header (if the \
         numbers have a decimal comma, separate the columns with `;` or a tab)"
    );
    assert!(
        error(&format!("{TENSILE}strain [%],force [gf/cm]\n0,0\n0.1\n"))
            .contains("t.csv:6:2: ragged row: 1 field(s) `0.1` — it ends before column 2")
    );
}

#[test]
fn european_export_semicolons_decimal_commas_trailing_columns_key_equals_value() {
    // `;` with decimal commas, an empty column after the last, `# key = value` metadata
    let c = parse(
        "# test = tensile\n# direction = weft\n# fabric = Serge de Nîmes\n\
         strain [%];force [gf/cm];\n0;0;\n1,5;12,25;\n3,0;40,5;\n;;\n2,0;10,0;\n",
    )
    .unwrap();
    assert_eq!((c.test, c.direction), (KesTest::Tensile, Direction::Weft));
    assert_eq!(c.fabric, "Serge de Nîmes");
    assert_eq!(c.x, vec![0.0, 0.015, 0.03, 0.02]);
    assert!((c.y[1] - 12.25 * GF_PER_CM_N_PER_M).abs() < 1e-12);
    // a value holding `:` after `=` keeps it
    let c = parse(&format!(
        "# source = lab 3, 10:42\n{TENSILE}strain [%],force [gf/cm]\n0,0\n1,1\n2,2\n"
    ))
    .unwrap();
    assert_eq!(c.metadata["source"], "lab 3, 10:42");
    // a thousands separator is refused, saying what a number looks like
    let e = error(&format!(
        "{TENSILE}strain [%];force [gf/cm]\n0;0\n1;1.250,5\n2;2\n"
    ));
    assert!(
        e.contains("t.csv:6:2: not a number: `1.250,5`") && e.contains("no thousands separator"),
        "{e}"
    );
}

#[test]
fn elongation_in_mm_needs_a_gauge_length() {
    let body = "elongation [mm],force [gf/cm]\n0,0\n10,100\n20,300\n";
    // from the metadata (decimal comma accepted there too)
    let c = parse(&format!("{TENSILE}# gauge length [mm]: 200,0\n{body}")).unwrap();
    assert_eq!(c.x, vec![0.0, 0.05, 0.1]);
    // from the caller, recorded in the metadata
    let given = CurveOverrides {
        gauge_length: Some(0.2),
        ..Default::default()
    };
    let c = parse_kes(&format!("{TENSILE}{body}"), "t.csv", given).unwrap();
    assert_eq!(c.x, vec![0.0, 0.05, 0.1]);
    assert_eq!(c.metadata["gauge length [mm]"], "200");
    // in cm
    let c = parse(&format!("{TENSILE}# gauge length [cm] = 20\n{body}")).unwrap();
    assert!((c.x[2] - 0.1).abs() < 1e-15);
    // neither: the message says both ways to give it
    let e = error(&format!("{TENSILE}{body}"));
    assert_eq!(
        e,
        "t.csv:4:1: column `elongation [mm]` is an elongation and strain = elongation / gauge \
         length needs the gauge length (the clamp distance) — add a metadata line \
         `# gauge length [mm]: 200` or pass --gauge-length 200 (mm)"
    );
    // both and different
    let e = parse_kes(
        &format!("{TENSILE}# gauge length [mm]: 100\n{body}"),
        "t.csv",
        given,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("the file says gauge length `100 mm` but `200 mm`"),
        "{e}"
    );
    // nonsense gauge lengths
    for bad in [
        "# gauge length [mm]: -5",
        "# gauge length [in]: 8",
        "# gauge length: 50",
    ] {
        let e = error(&format!("{TENSILE}{bad}\n{body}"));
        assert!(
            e.contains("t.csv:4: gauge length") && e.contains("expected a positive length"),
            "{e}"
        );
    }
    // strain and elongation both: one x column
    let e = error(&format!(
        "{TENSILE}# gauge length [mm]: 200\nstrain [%],elongation [mm],force [gf/cm]\n0,0,0\n"
    ));
    assert!(
        e.contains("column `elongation [mm]` appears twice — expected one strain column"),
        "{e}"
    );
    // an elongation is a tensile column only
    let e =
        error("# test: shear\n# direction: warp\nelongation [mm],force [gf/cm]\n0,0\n1,1\n2,2\n");
    assert!(
        e.contains("unknown column `elongation [mm]` for a shear curve"),
        "{e}"
    );
}

/// A metadata key said twice with two values is refused at the second line (the last one
/// silently won: a warp curve read as weft); said twice alike, it is read.
#[test]
fn metadata_said_twice_differently_is_refused_at_its_line() {
    let body = "strain [%],force [gf/cm]\n0,0\n5,100\n12.5,500\n8,0\n";
    let e = error(&format!("{TENSILE}# Direction: weft\n{body}"));
    assert_eq!(
        e,
        "t.csv:4: `direction` is `weft` here but `warp` at line 2 — a metadata line says its \
         key once (or the same value again)"
    );
    let c = parse(&format!("{TENSILE}# direction: warp\n{body}")).unwrap();
    assert_eq!(c.direction, Direction::Warp);
    // free text kestrel does not read may repeat
    parse(&format!(
        "{TENSILE}# note: first specimen\n# note: rig B\n{body}"
    ))
    .unwrap();
    let e = error(&format!(
        "{TENSILE}# weight [g/m2]: 120\n# weight [g/m2]: 500\n{body}"
    ));
    assert!(
        e.starts_with("t.csv:5: `weight [g/m2]` is `500` here but `120` at line 4"),
        "{e}"
    );
}

#[test]
fn percent_numbers_under_strain_fraction_are_refused() {
    let e = error(&format!(
        "{TENSILE}strain [-],force [gf/cm]\n0,0\n5,100\n12.5,500\n8,0\n"
    ));
    assert_eq!(
        e,
        "t.csv:7:1: column `strain [-]` reaches 12.5 (a strain of 1250 %), beyond any woven \
         fabric — these look like percent numbers: write the header `strain [%]`"
    );
    // the same numbers under `strain [%]` are a curve; a fraction up to 1 is too
    parse(&format!(
        "{TENSILE}strain [%],force [gf/cm]\n0,0\n5,100\n12.5,500\n8,0\n"
    ))
    .unwrap();
    parse(&format!(
        "{TENSILE}strain [-],force [gf/cm]\n0,0\n0.05,100\n0.125,500\n"
    ))
    .unwrap();
    // a knit's 300 % is a curve; 1e300 % is no textile's (once values of 300 digits)
    parse(&format!(
        "{TENSILE}strain [%],force [gf/cm]\n0,0\n150,100\n300,500\n200,0\n"
    ))
    .unwrap();
    let e = error(&format!(
        "{TENSILE}strain [%],force [gf/cm]\n0,0\n1e300,100\n12.5,500\n8,0\n"
    ));
    assert!(
        e.starts_with("t.csv:6:1: column `strain [%]` reaches 1e300 (a strain of 1e300 %)")
            && e.contains("ten times its length"),
        "{e}"
    );
    // an elongation over a gauge length given in the wrong unit
    let e = error(&format!(
        "{TENSILE}# gauge length [mm]: 2\nelongation [mm],force [gf/cm]\n0,0\n10,100\n20,300\n"
    ));
    assert!(e.contains("check the gauge length"), "{e}");
}

#[test]
fn shuffled_rows_are_refused_as_out_of_order() {
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let law = ConnectorLaw::Shear(ShearLaw {
        k_s: 30.0,
        theta0: 0.0,
        friction: FrictionLaw {
            level: 0.5,
            mu: 0.0,
            shape: FrictionShape::Dahl {
                eps_f: 0.01,
                alpha: 1.0,
            },
        },
    });
    let curve = simulate(
        &law,
        &Protocol::kes(KesTest::Shear).unwrap(),
        401,
        "F",
        Direction::Warp,
    )
    .unwrap();
    let text = to_kes_csv(&curve).unwrap();
    parse(&text).unwrap();
    let (head, rows) = text.split_at(text.find("\n0").unwrap() + 1);
    let mut rows: Vec<&str> = rows.lines().collect();
    rows.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(7));
    let e = error(&format!("{head}{}\n", rows.join("\n")));
    println!("{e}");
    assert!(
        e.starts_with("t.csv: the rows are not in measurement order: x reverses")
            && e.contains("in 401 samples")
            && e.ends_with(
                "keep the rows in the order they were measured (not sorted or shuffled)"
            ),
        "{e}"
    );
}

#[test]
fn a_tensile_path_that_starts_unloading_says_so() {
    let c = parse(&format!(
        "{TENSILE}strain [%],force [gf/cm]\n5,400\n4,200\n3,100\n2,50\n3,60\n4,150\n5,380\n"
    ))
    .unwrap();
    let r = kes_values(&c, &ReadingRules::default());
    assert_eq!(r.unavailable.len(), 4);
    assert!(
        r.unavailable[0]
            .reason
            .contains("starts by lowering the strain, where a tensile test starts by loading"),
        "{:?}",
        r.unavailable
    );
}

#[test]
fn too_few_samples() {
    assert_eq!(
        error(&format!("{TENSILE}strain [%],force [gf/cm]\n0,0\n1,1\n")),
        "t.csv: too few samples: 2 — expected at least 3 rows of numbers"
    );
}

#[test]
fn no_reversal_leaves_the_unloading_values_unavailable() {
    let rows: String = (0..=50)
        .map(|i| format!("{},{}\n", 0.1 * i as f64, 10.0 * i as f64))
        .collect();
    let c = parse(&format!("{TENSILE}strain [%],force [gf/cm]\n{rows}")).unwrap();
    let r = kes_values(&c, &ReadingRules::default());
    assert_eq!(r.values.emt, Some(5.0));
    assert!((r.values.wt.unwrap() - 0.5 * 500.0 * 0.05).abs() < 1e-9);
    assert!((r.values.lt.unwrap() - 1.0).abs() < 1e-9);
    assert_eq!(r.values.rt, None);
    assert_eq!(r.unavailable.len(), 1);
    assert_eq!(
        r.unavailable[0].to_string(),
        "RT unavailable: no reversal: the strain never returns from its maximum, and RT needs \
         the unloading branch"
    );

    // shear loaded only: G from the loading branch, the widths unavailable
    let rows: String = (0..=80)
        .map(|i| format!("{},{}\n", 0.1 * i as f64, 0.1 * i as f64 + 0.3))
        .collect();
    let c = parse(&format!(
        "# test: shear\n# direction: warp\nangle [deg],force [gf/cm]\n{rows}"
    ))
    .unwrap();
    let r = kes_values(&c, &ReadingRules::default());
    assert!((r.values.g.unwrap() - 1.0).abs() < 1e-9);
    assert_eq!((r.values.hg, r.values.hg5), (None, None));
    let msgs: Vec<String> = r.unavailable.iter().map(|u| u.to_string()).collect();
    assert_eq!(
        msgs,
        vec![
            "2HG unavailable: no reversal: the loop width at +/-0.5 needs the return branch as well as the loading one",
            "2HG5 unavailable: no reversal: the loop width at +/-5 needs the return branch as well as the loading one",
        ]
    );
    assert_a_line_has(&r.notes, &["G from 1 of 4 branch regressions"]);
}

/// Three tensile specimens of fabric F, warp, turning at `emt` % under 500 gf/cm: EMT = emt,
/// WT = 500 · emt / 100 / 2 = 2.5 emt.
fn specimens(dir: &Path, emts: &[f64]) -> Vec<PathBuf> {
    emts.iter()
        .enumerate()
        .map(|(i, emt)| {
            let file = dir.join(format!("tensile_warp_{}.csv", i + 1));
            let text = format!(
                "{TENSILE}strain [%],force [gf/cm]\n0,0\n{emt},500\n{},0\n",
                0.5 * emt
            );
            std::fs::write(&file, text).unwrap();
            file
        })
        .collect()
}

#[test]
fn replicates_are_grouped_with_mean_and_cv() {
    use kestrel::kes::{replicate_groups, replicate_summaries};
    let dir = tempfile::tempdir().unwrap();
    let mut files = specimens(dir.path(), &[4.0, 5.0, 6.0]);
    // another direction and an unnamed fabric are groups of their own
    let weft = write_file(
        dir.path(),
        "weft.csv",
        format!(
            "{}strain [%],force [gf/cm]\n0,0\n3,500\n1,0\n",
            TENSILE.replace("warp", "weft")
        ),
    );
    let anon = |name: &str| {
        write_file(
            dir.path(),
            name,
            "# test: tensile\n# direction: warp\nstrain [%],force [gf/cm]\n0,0\n3,500\n1,0\n",
        )
    };
    files.insert(1, weft);
    files.push(anon("x.csv"));
    files.push(anon("y.csv"));
    let curves = read_kes_files(&files, CurveOverrides::default()).unwrap();
    let groups = replicate_groups(&curves);
    let members: Vec<Vec<usize>> = groups.iter().map(|g| g.members.clone()).collect();
    assert_eq!(members, vec![vec![0, 2, 3], vec![1], vec![4], vec![5]]);

    let summaries = replicate_summaries(&curves, &ReadingRules::default());
    let s = &summaries[0];
    assert_eq!((s.specimens, s.files.len()), (3, 3));
    // EMT 4, 5, 6: mean 5, s = 1, CV = 0.2; WT = 2.5 EMT: mean 12.5, CV 0.2
    assert!((s.mean.emt.unwrap() - 5.0).abs() < 1e-12);
    assert!((s.cv.emt.unwrap() - 0.2).abs() < 1e-12);
    assert!((s.mean.wt.unwrap() - 12.5).abs() < 1e-12);
    assert!((s.cv.wt.unwrap() - 0.2).abs() < 1e-12);
    // one specimen: a mean, no CV
    assert!(summaries[1].mean.emt.is_some() && summaries[1].cv.emt.is_none());
}

#[test]
fn cli_values_summarises_replicates() {
    let dir = tempfile::tempdir().unwrap();
    let files = specimens(dir.path(), &[4.0, 5.0, 6.0]);
    let names: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let mut args = vec!["values", "--summary", "--json"];
    args.extend(&names);
    let out = kestrel(&args);
    let json = stdout_json(&out);
    let g = &json[0];
    assert_eq!(json.as_array().unwrap().len(), 1);
    assert_eq!(
        (
            g["fabric"].as_str(),
            g["test"].as_str(),
            g["direction"].as_str()
        ),
        (Some("F"), Some("tensile"), Some("warp"))
    );
    assert_eq!(g["specimens"], 3);
    assert_eq!(g["files"].as_array().unwrap().len(), 3);
    assert!((g["mean"]["EMT"].as_f64().unwrap() - 5.0).abs() < 1e-12);
    assert!((g["cv"]["EMT"].as_f64().unwrap() - 0.2).abs() < 1e-12);
    // the table shows each specimen, the mean and the CV
    let out = kestrel(&[&["values"][..], &names].concat());
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3 specimens"), "{text}");
    assert!(text.contains("CV 20.0 %"), "{text}");
    // kestrel fit fits the specimens jointly; a specimen that cannot be fitted (three
    // samples) refuses the group, naming that specimen
    let out = kestrel(&[&["fit"][..], &names].concat());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("specimen {}: too few samples", names[0])),
        "{err}"
    );
}

#[test]
fn files_that_cannot_be_read_say_so() {
    let e = read_kes(Path::new("/no/such/file.csv"), CurveOverrides::default()).unwrap_err();
    assert!(
        e.to_string().starts_with("cannot read /no/such/file.csv:"),
        "{e}"
    );
    let e = kestrel::kes::import::parse_kes(
        "# test: tensile\n# direction: warp\nstrain [%],force [gf/cm]\n0,\"1\n",
        "q.csv",
        CurveOverrides::default(),
    );
    assert!(e.is_err());
}

proptest::proptest! {
    /// Any bytes at all give a curve or an error, never a panic.
    #[test]
    fn arbitrary_text_never_panics(text in "(# (test|direction|fabric): [a-z]{0,8}\n){0,3}[-0-9a-z.,;\t\\[\\]%/ \n]{0,200}") {
        let _ = parse_kes(&text, "p.csv", CurveOverrides { test: Some(KesTest::Tensile), ..Default::default() });
        let spec = LoopSpec {
            x: LoopColumn { column: ColumnRef::Index(1), unit: Some("mm".into()), negate: false },
            y: LoopColumn { column: ColumnRef::Index(2), unit: None, negate: true },
            filter: None,
            direction: None,
        };
        let _ = parse_loop(&text, "p.csv", &spec);
        if let Ok(c) = parse_kes(&text, "p.csv", CurveOverrides { test: Some(KesTest::Shear), direction: Some(Direction::Warp), gauge_length: None }) {
            let _ = kes_values(&c, &ReadingRules::default());
            let _ = loop_values(&c, &ReadingRules::default());
        }
    }
}

// ---- values: robustness ----------------------------------------------------------------

#[test]
fn branches_ignore_noise_and_dwell_on_x() {
    // A shear loop 0 → 8 → −8 → 0 with jitter on the angle and a dwell at each reversal:
    // y = x + h·(+1 rising, −1 falling); G = 1, 2HG = 2HG5 = 2h.
    let h = 0.4;
    // (angle, rising) along the path; the dwells repeat the reversal angle exactly
    let mut path: Vec<(f64, bool, bool)> = Vec::new();
    path.extend((0..=800).map(|i| (0.01 * i as f64, true, true)));
    path.extend((0..3).map(|_| (8.0, true, false)));
    path.extend((1..=1600).map(|i| (8.0 - 0.01 * i as f64, false, true)));
    path.extend((0..3).map(|_| (-8.0, false, false)));
    path.extend((1..=800).map(|i| (-8.0 + 0.01 * i as f64, true, true)));
    let rows: String = path
        .iter()
        .enumerate()
        .map(|(k, &(x, up, jittered))| {
            let jitter = if jittered {
                0.002 * ((k * 7919 % 13) as f64 - 6.0) / 6.0
            } else {
                0.0
            };
            format!("{},{}\n", x + jitter, x + if up { h } else { -h })
        })
        .collect();
    let c = parse(&format!(
        "# test: shear\n# direction: warp\nangle [deg],force [gf/cm]\n{rows}"
    ))
    .unwrap();
    let r = kes_values(&c, &ReadingRules::default());
    assert!(r.unavailable.is_empty() && r.notes.is_empty(), "{r:?}");
    assert!((r.values.g.unwrap() - 1.0).abs() < 1e-3, "{:?}", r.values);
    assert!(
        (r.values.hg.unwrap() - 2.0 * h).abs() < 1e-2,
        "{:?}",
        r.values
    );
    assert!(
        (r.values.hg5.unwrap() - 2.0 * h).abs() < 1e-2,
        "{:?}",
        r.values
    );
}

// ---- protocols -------------------------------------------------------------------------

fn dahl(level: f64, mu: f64, eps_f: f64) -> FrictionLaw {
    FrictionLaw {
        level,
        mu,
        shape: FrictionShape::Dahl { eps_f, alpha: 1.0 },
    }
}

fn traction() -> ConnectorLaw {
    ConnectorLaw::Traction(TractionLaw {
        k_t: 15000.0,
        eps1: 0.02,
        f1: 200.0,
        eps1_aligned: None,
        friction: dahl(20.0, 0.3, 0.002),
        toe: Default::default(),
    })
}

#[test]
fn simulated_tensile_turns_at_500_gf_per_cm_and_reads_back() {
    let protocol = Protocol::kes(KesTest::Tensile).unwrap();
    let curve = simulate(&traction(), &protocol, 601, "Sim", Direction::Warp).unwrap();
    assert_eq!(curve.len(), 601);
    let (i_max, _) = curve
        .x
        .iter()
        .enumerate()
        .fold((0, f64::MIN), |m, (i, &x)| if x > m.1 { (i, x) } else { m });
    let f_turn = curve.y[i_max] / GF_PER_CM_N_PER_M;
    assert!(
        (f_turn - 500.0).abs() < 1e-6,
        "F at the turn {f_turn} gf/cm"
    );
    let last = *curve.y.last().unwrap() / GF_PER_CM_N_PER_M;
    assert!(last.abs() < 1e-6, "force back to zero: {last}");
    assert!(
        curve.y.iter().all(|&f| f >= -1e-9),
        "no compression before F = 0"
    );

    let text = to_kes_csv(&curve).unwrap();
    assert!(
        text.starts_with("# kestrel-kes: 1\n# fabric: Sim\n# test: tensile\n# direction: warp\n"),
        "{text}"
    );
    assert!(text.contains("# source: simulated by kestrel"));
    let back = parse_kes(&text, "sim.csv", CurveOverrides::default()).unwrap();
    assert_eq!(back.len(), curve.len());
    let r = kes_values(&back, &ReadingRules::default());
    assert!(r.unavailable.is_empty(), "{:?}", r.unavailable);
    let emt = r.values.emt.unwrap();
    assert!(
        (emt / (100.0 * curve.x[i_max]) - 1.0).abs() < 1e-8,
        "EMT {emt} vs turn {}",
        curve.x[i_max]
    );
    // LT from the trapezoid agrees with the law's own integral within the sampling error
    let rt = r.values.rt.unwrap();
    assert!(rt > 0.0 && rt < 100.0, "RT {rt}");
}

/// The law driven through the instrument's protocol of `test`, `n` samples, fabric "Sim".
fn kes_protocol(law: &ConnectorLaw, test: KesTest, n: usize, direction: Direction) -> Curve {
    simulate(law, &Protocol::kes(test).unwrap(), n, "Sim", direction).unwrap()
}

#[test]
fn simulated_shear_and_bending_follow_the_instrument_path() {
    let shear = ConnectorLaw::Shear(ShearLaw {
        k_s: 30.0,
        theta0: 0.0,
        friction: dahl(0.5, 0.2, 0.005),
    });
    let c = kes_protocol(&shear, KesTest::Shear, 401, Direction::Weft);
    assert_eq!(c.len(), 401);
    let deg: Vec<f64> = c.x.iter().map(|x| x / DEG_RAD).collect();
    assert_eq!(deg[0], 0.0);
    assert!((deg.iter().cloned().fold(f64::MIN, f64::max) - 8.0).abs() < 1e-12);
    assert!((deg.iter().cloned().fold(f64::MAX, f64::min) + 8.0).abs() < 1e-12);
    assert_eq!(*deg.last().unwrap(), 0.0);
    assert_eq!(c.metadata["tension [gf/cm]"], "10");
    let back = parse_kes(&to_kes_csv(&c).unwrap(), "s.csv", CurveOverrides::default()).unwrap();
    let r = kes_values(&back, &ReadingRules::default());
    // G close to the elastic rigidity k_s plus the friction growth, in gf/(cm·deg)
    let k_s_kes = 30.0 * DEG_RAD / GF_PER_CM_N_PER_M;
    let g = r.values.g.unwrap();
    assert!(g > k_s_kes && g < 1.5 * k_s_kes, "G {g} vs k_s {k_s_kes}");
    assert!(r.values.hg.unwrap() > 0.0 && r.values.hg5.unwrap() > r.values.hg.unwrap());

    let bending = ConnectorLaw::Bending(BendingLaw {
        k_b: 1e-5,
        k0: 0.0,
        friction: dahl(2e-4, 0.0, 10.0),
    });
    let c = kes_protocol(&bending, KesTest::Bending, 501, Direction::Warp);
    let back = parse_kes(&to_kes_csv(&c).unwrap(), "b.csv", CurveOverrides::default()).unwrap();
    let r = kes_values(&back, &ReadingRules::default());
    // B = k_b in gf·cm²/cm; 2HB → 2·level at ±1 cm⁻¹ (100 m⁻¹ ≫ ε_f = 10 m⁻¹), in gf·cm/cm
    let b_kes = 1e-5 / kestrel::kes::GF_CM2_PER_CM_N_M;
    assert!(
        (r.values.b.unwrap() / b_kes - 1.0).abs() < 0.02,
        "{:?} vs {b_kes}",
        r.values
    );
    let hb = 2.0 * 2e-4 / GF_CM_PER_CM_N;
    assert!(
        (r.values.hb.unwrap() / hb - 1.0).abs() < 0.01,
        "{:?} vs {hb}",
        r.values
    );
}

#[test]
fn protocols_refuse_what_they_cannot_run() {
    let tensile = Protocol::kes(KesTest::Tensile).unwrap();
    let e = simulate(&traction(), &tensile, 5, "S", Direction::Warp).unwrap_err();
    assert_eq!(
        e.to_string(),
        "5 samples are too few for the tensile protocol — expected at least 8"
    );
    let shear = Protocol::kes(KesTest::Shear).unwrap();
    let e = simulate(&traction(), &shear, 100, "S", Direction::Warp).unwrap_err();
    assert_eq!(
        e.to_string(),
        "a traction law cannot run the shear protocol — expected a shear law"
    );
    assert!(Protocol::kes(KesTest::Loop).is_err());
    let weak = Protocol::Tensile { max_force: 1e9 };
    let e = simulate(&traction(), &weak, 100, "S", Direction::Warp).unwrap_err();
    assert!(
        e.to_string().starts_with("the law never reaches F_m"),
        "{e}"
    );
}

#[test]
fn kes_csv_is_written_atomically_and_not_over_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    let tensile = Protocol::kes(KesTest::Tensile).unwrap();
    let curve = simulate(&traction(), &tensile, 50, "S", Direction::Weft).unwrap();
    write_kes_csv(&curve, &path, false).unwrap();
    let e = write_kes_csv(&curve, &path, false).unwrap_err();
    assert!(e.to_string().contains("exists; pass --force"), "{e}");
    write_kes_csv(&curve, &path, true).unwrap();
    let back = read_kes(&path, CurveOverrides::default()).unwrap();
    assert_eq!(
        (back.test, back.direction, back.len()),
        (KesTest::Tensile, Direction::Weft, 50)
    );
    for (a, b) in back.x.iter().zip(&curve.x) {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-9));
    }
}

#[test]
fn a_law_alone_or_a_fabric_parameter_file_gives_the_law() {
    let dir = tempfile::tempdir().unwrap();
    let lone = write_file(
        dir.path(),
        "shear.toml",
        "k_s = 30.0\n[friction]\nlevel = 0.5\n[friction.shape]\nmodel = \"dahl\"\neps_f = 0.005\n",
    );
    let (law, fabric) = read_law(&lone, KesTest::Shear, Direction::Warp).unwrap();
    assert!(matches!(law, ConnectorLaw::Shear(_)) && fabric.is_none());
    let e = read_law(&lone, KesTest::Tensile, Direction::Warp).unwrap_err();
    assert!(e.to_string().contains("not a traction law"), "{e}");

    let mut params = kestrel::params::FabricParams::new("Twill");
    if let ConnectorLaw::Traction(t) = traction() {
        params.weft.traction = Some(t);
    }
    let file = dir.path().join("twill.json");
    params
        .write(&file, kestrel::params::ParamsFormat::Json, false)
        .unwrap();
    let (law, fabric) = read_law(&file, KesTest::Tensile, Direction::Weft).unwrap();
    assert_eq!((law, fabric.as_deref()), (traction(), Some("Twill")));
    let e = read_law(&file, KesTest::Tensile, Direction::Warp).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: fabric `Twill` has no traction law for warp",
            file.display()
        )
    );
}

// ---- generic loops -----------------------------------------------------------------------

fn friction_record() -> PathBuf {
    repo("tests/data/friction-loops/FrictionModels_test_data_2.txt")
}

fn friction_spec(flip: bool) -> LoopSpec {
    LoopSpec {
        x: LoopColumn {
            column: "Position [mm]".parse().unwrap(),
            unit: Some("mm".into()),
            negate: false,
        },
        y: LoopColumn {
            column: "Friction [uN]".parse().unwrap(),
            unit: Some("uN".into()),
            negate: flip,
        },
        filter: Some("Normal [uN] > 1e6".parse::<RowFilter>().unwrap()),
        direction: None,
    }
}

#[test]
fn friction_record_reads_as_a_generic_loop() {
    let text = std::fs::read_to_string(friction_record()).unwrap();
    // the loaded rows, counted independently
    let loaded: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| {
            l.split('\t')
                .map(|c| c.parse().unwrap())
                .collect::<Vec<f64>>()
        })
        .filter(|r| r[1] > 1e6)
        .collect();
    assert_eq!(text.lines().count(), 42_580);
    let c = read_loop(&friction_record(), &friction_spec(false)).unwrap();
    assert_eq!(c.test, KesTest::Loop);
    assert_eq!(c.len(), loaded.len());
    assert!(c.len() > 30_000 && c.len() < 42_579, "{}", c.len());
    assert!((c.x[0] - loaded[0][2] * 1e-3).abs() < 1e-15);
    assert!((c.y[0] - loaded[0][3] * 1e-6).abs() < 1e-15);
    assert_eq!(c.fabric, "FrictionModels_test_data_2");
    assert_eq!(c.metadata["rows"], "where column `Normal [uN]` > 1000000");

    let flipped = read_loop(&friction_record(), &friction_spec(true)).unwrap();
    assert!(flipped.y.iter().zip(&c.y).all(|(a, b)| *a == -b));

    // columns by index and units from the header give the same curve; unfiltered has every row
    let by_index = LoopSpec {
        x: LoopColumn {
            column: ColumnRef::Index(3),
            unit: None,
            negate: false,
        },
        y: LoopColumn {
            column: ColumnRef::Index(4),
            unit: None,
            negate: false,
        },
        filter: None,
        direction: None,
    };
    let all = read_loop(&friction_record(), &by_index).unwrap();
    assert_eq!(all.len(), 42_579);

    // The rig logs the friction on the sample, against the motion: flipped, the loop runs
    // clockwise, ≈ ±2.4 N wide, and dissipates energy.
    let v = loop_values(&flipped, &ReadingRules::default());
    assert!(v.reversals >= 90 && v.reversals <= 120, "{v:?}");
    assert!((v.x_max - v.x_min - 0.2397e-3).abs() < 1e-6, "{v:?}");
    let w = v.width.unwrap();
    assert!(w > 3.5 && w < 5.5, "width {w} N");
    assert!(v.work > 0.0, "{v:?}");
    let unflipped = loop_values(&c, &ReadingRules::default());
    assert!((unflipped.width.unwrap() + w).abs() < 1e-9 && unflipped.work < 0.0);
}

#[test]
fn generic_loop_errors_name_the_column() {
    let file = friction_record();
    let mut spec = friction_spec(false);
    spec.x.column = ColumnRef::Name("Pos [in]".into());
    let e = read_loop(&file, &spec).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{}:1: no column `Pos [in]` — the header has Time [s], Normal [uN], Position [mm], Friction [uN]", file.display())
    );
    let mut spec = friction_spec(false);
    spec.y.unit = Some("lbf".into());
    let e = read_loop(&file, &spec).unwrap_err().to_string();
    assert!(e.contains(":1:4: unknown unit `lbf` in column 4 header `Friction [uN]` — expected one of m, cm, mm, um"), "{e}");
    assert_eq!(
        "Normal [uN] >= x".parse::<RowFilter>().unwrap_err().to_string(),
        "bad row filter `Normal [uN] >= x` — expected `COLUMN > VALUE` or `COLUMN < VALUE`, e.g. `Normal [uN] > 1e6`"
    );
    let spec = LoopSpec {
        filter: Some("Normal [uN] > 1e12".parse().unwrap()),
        ..friction_spec(false)
    };
    let e = read_loop(&file, &spec).unwrap_err().to_string();
    assert!(
        e.ends_with("too few samples: 0 — expected at least 3 rows of numbers"),
        "{e}"
    );
}

// ---- the command line ----------------------------------------------------------------------

#[test]
fn cli_values_json_has_only_the_values_of_each_test() {
    let out = kestrel(&[
        "values",
        "--json",
        "kes_data/wool-suiting/tensile_warp.csv",
        "kes_data/wool-suiting/shear_weft.csv",
        "kes_data/wool-suiting/bending_warp.csv",
    ]);
    let json = stdout_json(&out);
    let entries = json.as_array().unwrap();
    let keys = |i: usize| -> Vec<String> {
        entries[i]["values"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let mut k0 = keys(0);
    k0.sort();
    assert_eq!(k0, ["EMT", "LT", "RT", "WT"]);
    let mut k1 = keys(1);
    k1.sort();
    assert_eq!(k1, ["2HG", "2HG5", "G"]);
    assert_eq!(entries[2]["fabric"], "Wool suiting");
    assert_eq!(entries[2]["test"], "bending");
    assert_eq!(entries[2]["direction"], "warp");
    assert_eq!(entries[2]["file"], "kes_data/wool-suiting/bending_warp.csv");
    assert!((entries[0]["values"]["EMT"].as_f64().unwrap() - 6.5).abs() < 1e-9);
    let mut fields: Vec<&String> = entries[0].as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["direction", "fabric", "file", "test", "values"]);
}

#[test]
fn cli_values_table_groups_by_fabric_and_prints_the_rules() {
    let out = kestrel(&[
        "values",
        "kes_data/silk-crepe/tensile_warp.csv",
        "kes_data/silk-crepe/tensile_weft.csv",
        "kes_data/wool-suiting/bending_weft.csv",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let silk = text.find("Silk crepe\n").unwrap();
    let wool = text.find("Wool suiting\n").unwrap();
    assert!(silk < wool, "{text}");
    assert!(
        text.contains("  EMT   %                  4.8000       7.5000\n"),
        "{text}"
    );
    assert!(
        text.contains("Reading rules:\n  tensile: F_m = 500 gf/cm (nominal)"),
        "{text}"
    );
    assert!(text.contains("2HG at +/-0.5 deg, 2HG5 at +/-5 deg, local line +/-0.25 deg"));
}

#[test]
fn cli_reports_bad_input_with_exit_code_2_and_unavailable_values_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write_file(
        dir.path(),
        "bad.csv",
        format!("{TENSILE}strain [%],force [kgf]\n0,0\n"),
    );
    let out = kestrel(&["values", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error: ") && err.contains(":4:2: unknown unit `kgf`"),
        "{err}"
    );

    let half = write_file(
        dir.path(),
        "half.csv",
        format!("{TENSILE}strain [%],force [gf/cm]\n0,0\n1,100\n2,300\n"),
    );
    let out = kestrel(&["values", "--json", half.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("half.csv: RT unavailable: no reversal"),
        "{err}"
    );
    let json = stdout_json(&out);
    assert!(json[0]["values"].get("RT").is_none() && json[0]["values"].get("EMT").is_some());
}

#[test]
fn cli_simulate_writes_a_curve_that_values_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let law = write_file(dir.path(), "traction.toml", "k_t = 15000.0\neps1 = 0.02\nf1 = 200.0\n[friction]\nlevel = 20.0\nmu = 0.3\n[friction.shape]\nmodel = \"dahl\"\neps_f = 0.002\n");
    let out_csv = dir.path().join("out.csv");
    let (l, o) = (law.to_str().unwrap(), out_csv.to_str().unwrap());
    let args = [
        "simulate",
        "--params",
        l,
        "--test",
        "tensile",
        "--direction",
        "warp",
        "-o",
        o,
        "--samples",
        "301",
    ];
    let out = kestrel(&args);
    assert_success(&out);
    let out = kestrel(&["values", "--json", o]);
    let json = stdout_json(&out);
    assert_eq!(json[0]["fabric"], "traction");
    assert_eq!(json[0]["test"], "tensile");
    assert!(json[0]["values"]["RT"].as_f64().unwrap() > 0.0);
    // no overwrite without --force
    let again = kestrel(&args);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists; pass --force"));
    let mut forced = args.to_vec();
    forced.push("--force");
    assert!(kestrel(&forced).status.success());
}

#[test]
fn cli_values_reads_a_generic_loop() {
    let file = friction_record();
    let out = kestrel(&[
        "values",
        "--json",
        "--x",
        "Position [mm]",
        "--x-unit",
        "mm",
        "--y",
        "Friction [uN]",
        "--y-unit",
        "uN",
        "--where",
        "Normal [uN] > 1e6",
        file.to_str().unwrap(),
    ]);
    let json = stdout_json(&out);
    assert_eq!(json[0]["test"], "loop");
    assert!(json[0]["values"]["reversals"].as_u64().unwrap() >= 90);
}

#[test]
fn cli_values_json_reproduces_the_oracle() {
    let oracle = oracle();
    let curves = oracle["curves"].as_array().unwrap();
    let files: Vec<String> = curves
        .iter()
        .map(|c| format!("kes_data/{}", c["file"].as_str().unwrap()))
        .collect();
    let out = kestrel_on(&["values", "--json"], &files);
    assert_success(&out);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = stdout_json(&out);
    let entries = json.as_array().unwrap();
    assert_eq!(entries.len(), curves.len());
    for (entry, c) in entries.iter().zip(curves) {
        assert_eq!(entry["fabric"], c["fabric"]);
        assert_eq!(entry["test"], c["test"]);
        assert_eq!(entry["direction"], c["direction"]);
        let (got, want) = (
            entry["values"].as_object().unwrap(),
            c["values"].as_object().unwrap(),
        );
        assert_eq!(got.len(), want.len(), "{}", c["file"]);
        for (name, w) in want {
            let (g, w) = (got[name].as_f64().unwrap(), w.as_f64().unwrap());
            assert!(
                (g / w - 1.0).abs() <= 0.03,
                "{} {name}: {g} vs {w}",
                c["file"]
            );
        }
    }
}

#[test]
fn cli_values_reads_a_european_export_with_elongation_and_gauge_length() {
    let dir = tempfile::tempdir().unwrap();
    // 0 → 10 mm → 0 over 200 mm: 5 % strain; decimal commas, `;`, an empty last column
    let file = write_file(
        dir.path(),
        "eu.csv",
        "# test = tensile\n# direction = warp\nelongation [mm];force [gf/cm];\n\
         0;0;\n5,0;100,0;\n10,0;500,0;\n5,0;150,0;\n2,0;0,0;\n",
    );
    let f = file.to_str().unwrap();
    let out = kestrel(&["values", f]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--gauge-length 200"));
    let out = kestrel(&["values", "--json", "--gauge-length", "200", f]);
    let json = stdout_json(&out);
    assert!((json[0]["values"]["EMT"].as_f64().unwrap() - 5.0).abs() < 1e-12);
    let out = kestrel(&["values", "--gauge-length=-3", f]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected a positive length in mm"));
    // a length in the file and another given: both named in mm as people write them
    let text = std::fs::read_to_string(&file).unwrap();
    let with = write_file(
        dir.path(),
        "cm.csv",
        format!("# gauge length [cm]: 12.3\n{text}"),
    );
    let out = kestrel(&["values", "--gauge-length", "200.7", with.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("123 mm") && err.contains("200.7 mm"), "{err}");
    assert!(!err.contains("0000"), "{err}");
}
