//! KES-FB3 compression, FB4 surface and the weight W: closed forms (piecewise-linear laws whose
//! integrals are exact, a sine's mean deviation 2a/π, a triangle wave's a/2), the closed-form
//! values of the sample models in `kes_data/expected_fb34.json`, bad inputs, and the commands.

use std::fmt::Write as _;

use crate::common::{assert_success, kes_data, kestrel, kestrel_on, repo, stdout_json, write_file};
use kestrel::kes::{
    kes_values, parse_kes, Curve, CurveOverrides, Direction, KesReading, KesTest, ReadingRules,
};

fn parse(text: &str) -> Result<Curve, String> {
    parse_kes(text, "t.csv", CurveOverrides::default()).map_err(|e| e.to_string())
}

fn read(text: &str) -> KesReading {
    kes_values(
        &parse(text).expect("a valid curve"),
        &ReadingRules::default(),
    )
}

fn close(got: Option<f64>, want: f64, rel: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what} missing"));
    assert!(
        (got - want).abs() <= rel * want.abs(),
        "{what} = {got}, expected {want} (rel {rel})"
    );
}

/// Compression on P = 100(1.5 − T) (zero above 1.5 mm) from 1.6 to 1.0 mm, recovery on
/// P = 200(1.25 − T) (zero above 1.25 mm) back to 1.6 mm, every 1 µm, in `unit` (thickness
/// factor from mm, pressure factor from gf/cm²) with `sep` and the decimal mark `dec`.
fn linear_compression(header: &str, t_factor: f64, p_factor: f64, sep: &str, dec: char) -> String {
    let mut s = format!("# test: compression\n# weight [g/m2]: 320\n{header}\n");
    let row = |s: &mut String, t: f64, p: f64| {
        let cell = |v: f64| format!("{v}").replace('.', &dec.to_string());
        let _ = writeln!(s, "{}{sep}{}", cell(t * t_factor), cell(p * p_factor));
    };
    for i in 0..=600 {
        let t = 1.6 - i as f64 * 1e-3;
        row(&mut s, t, (100.0 * (1.5 - t)).max(0.0));
    }
    for i in 1..=600 {
        let t = 1.0 + i as f64 * 1e-3;
        row(&mut s, t, (200.0 * (1.25 - t)).max(0.0));
    }
    s
}

#[test]
fn compression_values_of_a_piecewise_linear_law_are_its_closed_forms() {
    // T0: 100(1.5 − T) = 0.5 → 1.495 mm; TM: = 50 → 1.0 mm. WC = (0.5 + 50)/2 · 0.0495 cm;
    // LC = (P0 + Pm)/Pm = 1.01; returned = 50 · 0.025 cm / 2; EMC = 100 · 0.495 / 1.495.
    let wc = 0.5 * (0.5 + 50.0) * 0.0495;
    let returned = 0.5 * 50.0 * 0.025;
    let forms = [
        ("thickness [mm],pressure [gf/cm2]", 1.0, 1.0, ",", '.'),
        ("thickness [um];pressure [Pa]", 1e3, 98.0665, ";", ','),
        ("Thickness [mm]\tPressure [gf/cm²]", 1.0, 1.0, "\t", '.'),
    ];
    for (header, tf, pf, sep, dec) in forms {
        let r = read(&linear_compression(header, tf, pf, sep, dec));
        assert!(r.unavailable.is_empty(), "{header}: {:?}", r.unavailable);
        let v = r.values;
        close(v.t0, 1.495, 1e-9, "T0");
        close(v.tm, 1.0, 1e-9, "TM");
        close(v.wc, wc, 1e-9, "WC");
        close(v.lc, 1.01, 1e-9, "LC");
        close(v.rc, 100.0 * returned / wc, 1e-9, "RC");
        close(v.emc, 100.0 * 0.495 / 1.495, 1e-9, "EMC");
        close(v.w, 32.0, 1e-12, "W");
        for other in [v.emt, v.miu, v.smd, v.b] {
            assert_eq!(other, None);
        }
    }
}

#[test]
fn an_exponential_compression_law_meets_its_integral() {
    // P = 0.5 e^{k(T0 − T)} with k = ln(100)/0.4 mm⁻¹: 0.5 at T0 = 1 mm, 50 at TM = 0.6 mm;
    // ∫P dT over TM..T0 = (50 − 0.5)/k [gf/cm²·mm]. Sampled every 0.1 µm: trapezoids within
    // (k h)²/12 ≈ 1e-7 (the path turns at 0.59 mm, past P_m).
    let k = 100f64.ln() / 0.4;
    let mut s = String::from("# test: compression\nthickness [mm],pressure [gf/cm2]\n");
    let n = 5000;
    for i in 0..=n {
        let t = 1.05 - 0.46 * i as f64 / n as f64;
        let _ = writeln!(s, "{t},{}", 0.5 * (k * (1.0 - t)).exp());
    }
    let r = read(&s);
    let wc = (50.0 - 0.5) / k / 10.0;
    close(r.values.t0, 1.0, 1e-6, "T0");
    close(r.values.tm, 0.6, 1e-6, "TM");
    close(r.values.wc, wc, 1e-6, "WC");
    close(r.values.lc, wc / (50.0 * 0.04 / 2.0), 1e-6, "LC");
    // no recovery: RC is unavailable, with the reason
    assert_eq!(r.values.rc, None);
    assert!(r.unavailable[0]
        .to_string()
        .contains("RC unavailable: no reversal"));
}

/// A surface file: `strokes` (from, to) cm, each sampled `n` times, y(x, stroke); the turn is
/// written twice (a dwell), with the value of the stroke leaving it.
fn surface(
    test: &str,
    header: &str,
    strokes: &[(f64, f64)],
    n: usize,
    y: impl Fn(f64, usize) -> f64,
) -> String {
    let mut s = format!("# test: {test}\n# direction: warp\n{header}\n");
    for (k, &(a, b)) in strokes.iter().enumerate() {
        for i in 0..=n {
            let x = a + (b - a) * i as f64 / n as f64;
            let _ = writeln!(s, "{x},{}", y(x, k));
        }
    }
    s
}

#[test]
fn miu_and_mmd_of_a_sine_average_the_two_strokes() {
    // μ = m_k + a sin(2πx/λ) over whole periods: mean m_k, mean deviation 2a/π
    let (a, lambda) = (0.03, 0.1);
    let text = surface(
        "friction",
        "position [cm],mu [-]",
        &[(0.0, 2.0), (2.0, 0.0)],
        4000,
        |x, k| [0.20, 0.22][k] + a * (2.0 * std::f64::consts::PI * x / lambda).sin(),
    );
    let r = read(&text);
    assert!(r.unavailable.is_empty(), "{:?}", r.unavailable);
    close(r.values.miu, 0.21, 1e-9, "MIU");
    // piecewise-linear between 200 samples per period: within (2π/200)²/12 ≈ 8e-5
    close(r.values.mmd, 2.0 * a / std::f64::consts::PI, 2e-4, "MMD");
    // one stroke: its own mean
    let one = surface(
        "friction",
        "position [mm],μ [-]",
        &[(0.0, 20.0)],
        4000,
        |x, _| 0.3 + a * (2.0 * std::f64::consts::PI * x / (10.0 * lambda)).sin(),
    );
    close(read(&one).values.miu, 0.3, 1e-9, "MIU (one stroke, mm)");
}

#[test]
fn smd_of_a_triangle_wave_is_half_its_amplitude() {
    // a triangle wave sampled at its corners is exact under linear interpolation:
    // (1/X)∫|T − T̄| dx = h/2 for a wave between −h and +h
    let h = 6.0;
    let period = 0.05;
    let n = (2.0 / period * 4.0) as usize;
    let text = surface(
        "roughness",
        "position [cm],height [um]",
        &[(0.0, 2.0), (2.0, 0.0)],
        n,
        |x, _| {
            let phase = (x / period).rem_euclid(1.0);
            let tri = 1.0 - 4.0 * (phase - 0.5).abs(); // −1 at 0, +1 at 1/2
            10.0 + h * tri
        },
    );
    let r = read(&text);
    close(r.values.smd, h / 2.0, 1e-9, "SMD");
    // the same trace in mm: the same SMD in µm
    let text = text.replace("height [um]", "height [mm]");
    let text: String = text
        .lines()
        .map(|l| match l.split_once(',') {
            Some((x, y)) if y.parse::<f64>().is_ok() => {
                format!("{x},{}\n", y.parse::<f64>().unwrap_or(0.0) / 1e3)
            }
            _ => format!("{l}\n"),
        })
        .collect();
    close(read(&text).values.smd, h / 2.0, 1e-9, "SMD (mm)");
}

#[test]
fn the_surface_values_read_the_first_x_of_a_longer_stroke() {
    // μ = 0.1 over the first 2 cm, 0.5 beyond: a 3 cm stroke reads 0.1 only
    let text = surface(
        "friction",
        "position [cm],mu [-]",
        &[(0.0, 3.0)],
        300,
        |x, _| {
            if x <= 2.0 {
                0.1
            } else {
                0.5
            }
        },
    );
    let r = read(&text);
    close(r.values.miu, 0.1, 1e-12, "MIU");
    assert!(
        r.values.mmd.is_some_and(|m| m.abs() < 1e-12),
        "{:?}",
        r.values.mmd
    );
    // a stroke shorter than X is no trace: the reason names X
    let short = surface(
        "friction",
        "position [cm],mu [-]",
        &[(0.0, 1.5), (1.5, 0.0)],
        150,
        |_, _| 0.2,
    );
    let r = read(&short);
    assert_eq!(r.values.miu, None);
    assert_eq!(
        r.unavailable[0].to_string(),
        "MIU unavailable: no stroke of the trace covers X = 2 cm (the longest covers 1.5 cm)"
    );
}

#[test]
fn compression_that_never_reaches_p_m_names_tm_and_p_m() {
    let mut s = String::from("# test: compression\nthickness [mm],pressure [gf/cm2]\n");
    for i in 0..=100 {
        let t = 1.5 - 0.005 * i as f64;
        let _ = writeln!(s, "{t},{}", 60.0 * (1.5 - t));
    }
    let r = read(&s);
    close(r.values.t0, 1.5 - 0.5 / 60.0, 1e-9, "T0");
    assert_eq!(r.values.tm, None);
    let reasons: Vec<String> = r.unavailable.iter().map(|u| u.to_string()).collect();
    assert_eq!(
        reasons[0],
        "TM unavailable: the pressure never reaches P_m = 50 gf/cm2 on compression (its \
         maximum is 30 gf/cm2): TM is the thickness at P_m"
    );
    assert!(
        reasons[1..]
            .iter()
            .all(|r| r.contains("it needs both T0 and TM")),
        "{reasons:?}"
    );
    // the command says it on stderr and leaves the values out of --json
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(dir.path(), "soft.csv", &s);
    let out = kestrel(&["values", "--json", file.to_str().unwrap()]);
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("soft.csv: TM unavailable: the pressure never reaches P_m = 50 gf/cm2"),
        "{err}"
    );
    let json = stdout_json(&out);
    assert!(json[0]["values"].get("TM").is_none());
    assert!(json[0]["values"].get("T0").is_some());
}

#[test]
fn compression_out_of_order_or_already_loaded_is_read_with_reasons() {
    // opening first (rows reversed)
    let mut s = String::from("# test: compression\nthickness [mm],pressure [gf/cm2]\n");
    for i in 0..=100 {
        let t = 1.0 + 0.005 * i as f64;
        let _ = writeln!(s, "{t},{}", (100.0 * (1.5 - t)).max(0.0));
    }
    let r = read(&s);
    assert_eq!(r.values.t0, None);
    assert!(r.unavailable[0]
        .reason
        .contains("the path starts by opening the plates"));
    // the first sample already pressed beyond 0.5 gf/cm²
    let mut s = String::from("# test: compression\nthickness [mm],pressure [gf/cm2]\n");
    for i in 0..=100 {
        let t = 1.4 - 0.004 * i as f64;
        let _ = writeln!(s, "{t},{}", 100.0 * (1.5 - t));
    }
    let r = read(&s);
    assert_eq!(r.values.t0, None);
    assert!(
        r.unavailable[0].reason.contains("already at 10"),
        "{:?}",
        r.unavailable
    );
    close(r.values.tm, 1.0, 1e-9, "TM");
}

#[test]
fn bad_compression_and_surface_files_name_line_column_and_units() {
    let e = parse("# test: compression\nthickness [mm],pressure [psi]\n1,0\n0.9,1\n0.8,2\n")
        .unwrap_err();
    assert_eq!(
        e,
        "t.csv:2:2: unknown unit `psi` in column 2 header `pressure [psi]` — expected gf/cm2, \
         Pa, kPa, N/m2 or cN/cm2"
    );
    let e = parse("# test: friction\n# direction: weft\nposition [cm],force [gf/cm]\n0,0\n")
        .unwrap_err();
    assert!(
        e.starts_with("t.csv:3:2: unknown column `force [gf/cm]` for a friction curve — expected `position [cm, mm or m]` and `mu [-]`"),
        "{e}"
    );
    let e =
        parse("# test: roughness\n# direction: warp\nposition [cm],height [um]\n0,1\n0.5,abc\n")
            .unwrap_err();
    assert_eq!(
        e,
        "t.csv:5:2: not a number: `abc` in column 2 (`height [um]`) — expected a decimal number \
         such as 0.125 or 0,125 (no thousands separator)"
    );
    let e =
        parse("# test: compression\n# direction: warp\nthickness [mm],pressure [gf/cm2]\n1,0\n")
            .unwrap_err();
    assert_eq!(
        e,
        "t.csv:2: direction `warp` for a compression curve — a compression curve is through the \
         thickness: `# direction: normal` or no direction line"
    );
    let e =
        parse("# test: tensile\n# direction: normal\nstrain [%],force [gf/cm]\n0,0\n").unwrap_err();
    assert!(e.contains("direction `normal` for a tensile curve"), "{e}");
    let e = parse("# test: friction\nposition [cm],mu [-]\n0,0.1\n").unwrap_err();
    assert!(e.contains("no `direction` metadata"), "{e}");
}

#[test]
fn the_weight_is_read_in_either_unit_and_refused_without_one() {
    let body = "# test: compression\nthickness [mm],pressure [gf/cm2]\n1,0\n0.9,10\n0.8,60\n";
    for (line, w) in [
        ("# weight [g/m2]: 320", 32.0),
        ("# weight [mg/cm2] = 32", 32.0),
        ("# Weight [g/m²]: 250,5", 25.05),
        ("# weight [kg/m2]: 0.1", 10.0),
        // 1 oz = 28.349523125 g, 1 yd² = 0.9144² m²: 8 oz/yd² = 271.246 g/m²
        (
            "# weight [oz/yd2]: 8",
            8.0 * 28.349523125 / (0.9144 * 0.9144) / 10.0,
        ),
    ] {
        let c = parse(&format!("{line}\n{body}")).unwrap();
        close(c.weight().map(|kg| kg * 1e2), w, 1e-12, line);
        close(
            kes_values(&c, &ReadingRules::default()).values.w,
            w,
            1e-12,
            line,
        );
    }
    for line in [
        "# weight: 320",
        "# weight [lb]: 8",
        "# weight [g/m2]: -3",
        "# weight [g/m2]: heavy",
        // beyond 5 kg/m²: no fabric, a unit mistake (it once reached a card of 300 digits)
        "# weight [g/m2]: 1e308",
        "# weight [kg/m2]: 6",
    ] {
        let e = parse(&format!("# direction: normal\n{line}\n{body}")).unwrap_err();
        assert!(
            e.starts_with("t.csv:2: weight `") && e.contains("(mg/cm2, g/m2, kg/m2 or oz/yd2)"),
            "{line}: {e}"
        );
    }
}

#[test]
fn the_sample_fabrics_meet_their_closed_form_values() {
    // noise (0.005 gf/cm², 0.0005 in μ, 0.05 µm) and sampling (≥ 25 samples per weave period,
    // 1 µm in thickness) keep every value within 1 % of the noise-free model's closed form
    let text = std::fs::read_to_string(kes_data().join("expected_fb34.json")).unwrap();
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let files = expected["files"].as_object().unwrap();
    assert_eq!(files.len(), 4 * 5);
    let mut worst: (f64, String) = (0.0, String::new());
    for (file, values) in files {
        let curve =
            kestrel::kes::read_kes(&kes_data().join(file), CurveOverrides::default()).unwrap();
        let r = kes_values(&curve, &ReadingRules::default());
        assert!(r.unavailable.is_empty(), "{file}: {:?}", r.unavailable);
        for (name, want) in values.as_object().unwrap() {
            let want = want.as_f64().unwrap();
            let got = r
                .values
                .get(name)
                .unwrap_or_else(|| panic!("{file}: no {name}"));
            let dev = (got / want - 1.0).abs();
            if dev > worst.0 {
                worst = (dev, format!("{file} {name}: {got} vs {want}"));
            }
        }
    }
    println!("worst deviation: {:.3} % ({})", 100.0 * worst.0, worst.1);
    assert!(worst.0 < 0.01, "{}", worst.1);
}

#[test]
fn the_commands_take_a_whole_fabric_folder() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = std::fs::read_dir(kes_data().join("cotton-shirting"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".csv"))
        .collect();
    assert_eq!(files.len(), 11);
    let card = dir.path().join("cotton.toml");
    let out = kestrel_on(&["fit", "-o", card.to_str().unwrap()], &files);
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("compression.csv: a compression curve has no connector law: not fitted"),
        "{err}"
    );
    assert!(card.exists());
    assert_success(&kestrel_on(
        &["validate", "--params", card.to_str().unwrap()],
        &files,
    ));
    let table = dir.path().join("library.csv");
    assert_success(&kestrel_on(
        &["report", "-o", table.to_str().unwrap()],
        &files,
    ));
    let text = std::fs::read_to_string(&table).unwrap();
    let header = text.lines().next().unwrap();
    for col in [
        "T0 [mm]",
        "TM [mm]",
        "LC [-]",
        "WC [gf*cm/cm^2]",
        "RC [%]",
        "EMC [%]",
        "MIU [-]",
        "MMD [-]",
        "SMD [um]",
        "W [mg/cm^2]",
    ] {
        assert!(header.contains(col), "{col} missing from {header}");
    }
    // one row per in-plane direction, each with the fabric's compression values
    assert_eq!(text.lines().count(), 3);
    // a compression curve alone is nothing to fit: exit 2, no file
    let lone = dir.path().join("lone.toml");
    let out = kestrel(&[
        "fit",
        "-o",
        lone.to_str().unwrap(),
        &repo("kes_data/cotton-shirting/compression.csv")
            .display()
            .to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!lone.exists());
}

#[test]
fn fit_and_validate_refuse_a_compression_curve_by_name() {
    let c = kestrel::kes::read_kes(
        &kes_data().join("wool-suiting/compression.csv"),
        CurveOverrides::default(),
    )
    .unwrap();
    assert_eq!(
        (c.test, c.direction),
        (KesTest::Compression, Direction::Normal)
    );
    let fit = kestrel::fit::fit_curve(&c, &kestrel::fit::FitOptions::default());
    assert!(!fit.is_fitted());
    assert!(format!("{:?}", fit.status).contains("a compression curve has no connector law to fit"));
    let params = kestrel::params::FabricParams::new("Wool suiting");
    let e = kestrel::validate::validate_curve(&params, &c, &ReadingRules::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("a compression curve has no connector law to validate"),
        "{e}"
    );
}

#[test]
fn fit_writes_the_fabric_properties_from_the_curves_or_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let folder = kes_data().join("wool-suiting");
    let mut files: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".csv"))
        .collect();
    files.sort();
    let card = dir.path().join("wool.toml");
    assert_success(&kestrel_on(&["fit", "-o", card.to_str().unwrap()], &files));
    let params = kestrel::params::FabricParams::read(&card).unwrap();
    let p = params.properties.clone().expect("a [properties] table");
    // the same numbers `kestrel values` reads: W 26 mg/cm² = 0.26 kg/m², T0 in m, MIU mean
    let rules = ReadingRules::default();
    let value = |file: &str, name: &str| {
        let c = kestrel::kes::read_kes(&folder.join(file), CurveOverrides::default()).unwrap();
        kes_values(&c, &rules).values.get(name).unwrap()
    };
    close(
        p.areal_density,
        value("compression.csv", "W") * 1e-2,
        1e-12,
        "areal density",
    );
    close(
        p.thickness,
        value("compression.csv", "T0") * 1e-3,
        1e-12,
        "thickness",
    );
    let miu = 0.5 * (value("friction_warp.csv", "MIU") + value("friction_weft.csv", "MIU"));
    close(p.friction_coefficient, miu, 1e-12, "friction coefficient");
    assert!(p.sources["thickness"].ends_with("compression.csv (T0)"));
    // the files read for them are in the provenance
    assert!(params
        .provenance
        .sources
        .iter()
        .any(|s| s.file.ends_with("friction_weft.csv")));
    // written back, the same bytes
    let text = std::fs::read_to_string(&card).unwrap();
    let again = dir.path().join("again.toml");
    params
        .write(&again, kestrel::params::ParamsFormat::Toml, false)
        .unwrap();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);

    // explicit options replace the curves' values, and say so
    let card2 = dir.path().join("given.toml");
    assert_success(&kestrel_on(
        &[
            "fit",
            "--weight",
            "32mg/cm2",
            "--friction-coefficient",
            "0.3",
            "-o",
            card2.to_str().unwrap(),
        ],
        &files,
    ));
    let p2 = kestrel::params::FabricParams::read(&card2)
        .unwrap()
        .properties
        .unwrap();
    close(p2.areal_density, 0.32, 1e-12, "given weight");
    close(p2.friction_coefficient, 0.3, 1e-12, "given friction");
    close(
        p2.thickness,
        p.thickness.unwrap(),
        1e-12,
        "thickness from the curve",
    );
    assert_eq!(p2.sources["areal_density"], "command line");
    // a weight without its unit is refused before any fit
    let out = kestrel(&["fit", "--weight", "320", &files[0]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("expected an areal density of 1 g/m2 to 5 kg/m2 with its unit"));
}

#[test]
fn a_card_with_properties_out_of_range_is_refused_by_name() {
    let text = "kestrel_params = 1\nfabric = \"F\"\n\n[properties]\nthickness = 0.4\n";
    let e = kestrel::params::FabricParams::parse(
        text,
        kestrel::params::ParamsFormat::Toml,
        std::path::Path::new("f.toml"),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "f.toml: properties.thickness = 0.4 is outside [0.000001, 0.05] m"
    );
    let ok = "kestrel_params = 1\nfabric = \"F\"\n\n[properties]\nthickness = 0.0004\n";
    let p = kestrel::params::FabricParams::parse(
        ok,
        kestrel::params::ParamsFormat::Toml,
        std::path::Path::new("f.toml"),
    )
    .unwrap();
    assert_eq!(p.properties.unwrap().thickness, Some(0.0004));
}

/// A card whose values its reader would refuse (here the MIU of friction curves read with the
/// wrong sign) is not written, nor is any other card of the same run.
#[test]
fn fit_writes_no_card_it_could_not_read_back() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["tensile_warp.csv", "friction_warp.csv", "friction_weft.csv"] {
        let text = std::fs::read_to_string(kes_data().join("cotton-shirting").join(name))
            .unwrap()
            .lines()
            .map(|l| match l.split_once(',') {
                Some((x, mu)) if name.starts_with("friction") && !l.starts_with("position") => {
                    format!("{x},-{mu}")
                }
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let card = dir.path().join("card.toml");
    let file = |n: &str| dir.path().join(n).display().to_string();
    let (t, fw, ff) = (
        file("tensile_warp.csv"),
        file("friction_warp.csv"),
        file("friction_weft.csv"),
    );
    let out = kestrel(&["fit", &t, &fw, &ff, "-o", &card.display().to_string()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("properties.friction_coefficient = -0.1")
            && err.contains("no parameter file written"),
        "{err}"
    );
    assert!(!card.exists());
}

#[test]
fn fit_from_published_values_takes_the_properties_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let values = write_file(
        dir.path(),
        "v.toml",
        "fabric = \"Published\"\n[warp]\nB = 0.12\n2HB = 0.09\n",
    );
    let card = dir.path().join("p.toml");
    let out = kestrel(&[
        "fit",
        "--values",
        values.to_str().unwrap(),
        "--weight",
        "120g/m2",
        "--thickness",
        "360um",
        "-o",
        card.to_str().unwrap(),
    ]);
    assert_success(&out);
    let p = kestrel::params::FabricParams::read(&card)
        .unwrap()
        .properties
        .unwrap();
    close(p.areal_density, 0.12, 1e-12, "weight");
    close(p.thickness, 3.6e-4, 1e-12, "thickness");
    assert_eq!(p.friction_coefficient, None);
}
