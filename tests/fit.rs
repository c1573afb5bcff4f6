//! Identification: known parameters → noiseless (and noisy) protocol curves → fit from the
//! automatic initial estimate → parameters back.

use crate::common::{kes_fabric, noise, repo, stdout_json};
use kestrel::fit::{fit_curve, FitModel, FitOptions, MuMode, Param, ToeChoice};
use kestrel::friction::FrictionShape;
use kestrel::kes::{Curve, Direction, KesTest};
use kestrel::material::{
    BendingLaw, ConnectorLaw, FrictionLaw, MaterialLaw, ShearLaw, ToeShape, TractionLaw,
};

/// A tensile path of `n` samples: up until the force reaches `f_max` [N/m], then down until it
/// is ≤ 0.
fn tensile_path(law: &ConnectorLaw, f_max: f64, n: usize) -> Vec<f64> {
    let mut x = Vec::new();
    let mut s = kestrel::material::LawState::default();
    let de = 1e-5;
    let mut e = 0.0;
    loop {
        e += de;
        let (ns, f) = law.trial(&s, e);
        s = ns;
        if f >= f_max || e > 1.0 {
            break;
        }
    }
    let top = e;
    for i in 0..=n / 2 {
        x.push(top * i as f64 / (n / 2) as f64);
    }
    // unloading: find where the force returns to zero
    let mut s2 = kestrel::material::LawState::default();
    for &xi in &x {
        s2 = law.trial(&s2, xi).0;
    }
    let mut e = top;
    let mut bottom: f64 = 0.0;
    loop {
        e -= de;
        let (ns, f) = law.trial(&s2, e);
        s2 = ns;
        if f <= 0.0 || e <= 0.0 {
            bottom = bottom.max(e);
            break;
        }
    }
    for i in 1..=n / 2 {
        x.push(top - (top - bottom) * i as f64 / (n / 2) as f64);
    }
    x
}

/// A KES-like path for the law: tensile 0 → F_m (490 N/m, 500 gf/cm) → F = 0; shear and
/// bending ± cycles.
pub fn protocol_path(law: &ConnectorLaw, test: KesTest, n: usize) -> Vec<f64> {
    match test {
        KesTest::Tensile => tensile_path(law, 490.0, n),
        _ => {
            let amp = if test == KesTest::Shear {
                8f64.to_radians()
            } else {
                250.0
            };
            let q = n / 4;
            let mut x = Vec::new();
            for i in 0..=q {
                x.push(amp * i as f64 / q as f64);
            }
            for i in 1..=2 * q {
                x.push(amp - 2.0 * amp * i as f64 / (2 * q) as f64);
            }
            for i in 1..=q {
                x.push(-amp + amp * i as f64 / q as f64);
            }
            x
        }
    }
}

pub fn curve_of(law: &ConnectorLaw, test: KesTest, n: usize) -> Curve {
    let x = protocol_path(law, test, n);
    let y = law.drive(&x);
    Curve {
        fabric: "known".into(),
        test,
        direction: Direction::Warp,
        x,
        y,
        metadata: Default::default(),
        source: None,
        sha256: None,
    }
}

fn friction(level: f64, mu: f64, bs2: bool, eps_f: f64) -> FrictionLaw {
    FrictionLaw {
        level,
        mu,
        shape: if bs2 {
            FrictionShape::Bs2 {
                eps_f,
                eta: 0.25,
                ratio: 0.35,
            }
        } else {
            FrictionShape::Dahl { eps_f, alpha: 1.0 }
        },
    }
}

pub fn known_laws(bs2: bool, mu: f64) -> Vec<(ConnectorLaw, KesTest)> {
    vec![
        (
            ConnectorLaw::Traction(TractionLaw {
                k_t: 12000.0,
                eps1: 0.025,
                f1: 200.0,
                eps1_aligned: Some(0.02),
                toe: Default::default(),
                friction: friction(8.0, mu, bs2, 0.002),
            }),
            KesTest::Tensile,
        ),
        (
            ConnectorLaw::Shear(ShearLaw {
                k_s: 60.0,
                theta0: 0.0,
                friction: friction(0.8, mu, bs2, 0.01),
            }),
            KesTest::Shear,
        ),
        (
            ConnectorLaw::Bending(BendingLaw {
                k_b: 1.0e-5,
                k0: 0.0,
                friction: friction(3.0e-4, mu, bs2, 15.0),
            }),
            KesTest::Bending,
        ),
    ]
}

/// Relative error of every fitted parameter against the true law.
fn check_recovered(fit: &kestrel::fit::CurveFit, law: &ConnectorLaw, tol: f64) {
    let f = match law {
        ConnectorLaw::Traction(l) => l.friction,
        ConnectorLaw::Bending(l) => l.friction,
        ConnectorLaw::Shear(l) => l.friction,
    };
    let mut expect: Vec<(Param, f64)> = match law {
        ConnectorLaw::Traction(l) => vec![
            (Param::K, l.k_t),
            (Param::Eps1, l.eps1),
            (Param::F1, l.f1),
            (Param::Eps1Aligned, l.eps1_aligned()),
        ],
        ConnectorLaw::Shear(l) => vec![(Param::K, l.k_s)],
        ConnectorLaw::Bending(l) => vec![(Param::K, l.k_b)],
    };
    expect.push((Param::Level, f.level));
    expect.push((Param::Mu, f.mu));
    match f.shape {
        FrictionShape::Dahl { eps_f, .. } => expect.push((Param::EpsF, eps_f)),
        FrictionShape::Bs2 { eps_f, eta, ratio } => expect.extend([
            (Param::EpsF, eps_f),
            (Param::Eta, eta),
            (Param::Ratio, ratio),
        ]),
    }
    for (param, truth) in expect {
        let name = param.name(fit.test);
        let got = fit.value(param).unwrap_or(f64::NAN);
        let err = if truth == 0.0 {
            got.abs()
        } else {
            (got / truth - 1.0).abs()
        };
        assert!(
            err <= tol,
            "{} {}: {name} = {got} vs {truth} ({:.3} %)",
            fit.test,
            fit.model,
            err * 100.0
        );
    }
}

#[test]
fn known_parameters_come_back_from_noiseless_curves() {
    for bs2 in [false, true] {
        for mu in [0.0, 0.25] {
            for (law, test) in known_laws(bs2, mu) {
                let curve = curve_of(&law, test, 1000);
                let options = FitOptions {
                    model: if bs2 { FitModel::Bs2 } else { FitModel::Dahl },
                    mu: if mu > 0.0 { MuMode::Free } else { MuMode::Zero },
                    ..FitOptions::default()
                };
                let fit = fit_curve(&curve, &options);
                assert!(fit.is_fitted(), "{:?}", fit.status);
                assert!(
                    fit.nrmse < 1e-3,
                    "{test} {}: NRMSE {}",
                    fit.model,
                    fit.nrmse
                );
                check_recovered(&fit, &law, 0.005);
            }
        }
    }
}

#[test]
fn one_percent_noise_gives_nrmse_at_the_noise_level() {
    for bs2 in [false, true] {
        for (law, test) in known_laws(bs2, 0.25) {
            let mut curve = curve_of(&law, test, 1000);
            let range = curve.y.iter().cloned().fold(f64::MIN, f64::max)
                - curve.y.iter().cloned().fold(f64::MAX, f64::min);
            for (y, e) in curve
                .y
                .iter_mut()
                .zip(noise(curve.x.len(), 0x9e3779b97f4a7c15))
            {
                *y += 0.01 * range * e;
            }
            let options = FitOptions {
                model: if bs2 { FitModel::Bs2 } else { FitModel::Dahl },
                mu: MuMode::Free,
                ..FitOptions::default()
            };
            let fit = fit_curve(&curve, &options);
            assert!(fit.is_fitted());
            // the residual cannot beat the noise and should not be far above it
            assert!(
                fit.nrmse > 0.0085 && fit.nrmse < 0.0115,
                "{test} {}: {}",
                fit.model,
                fit.nrmse
            );
            // the main rigidity stays close and every parameter has a standard error or a pin
            let k = fit.value(Param::K).unwrap_or(f64::NAN);
            let k_true = match law {
                ConnectorLaw::Traction(l) => l.k_t,
                ConnectorLaw::Shear(l) => l.k_s,
                ConnectorLaw::Bending(l) => l.k_b,
            };
            assert!((k / k_true - 1.0).abs() < 0.05, "{test}: k {k} vs {k_true}");
            for p in &fit.params {
                assert!(
                    p.std_error.is_some() || p.pinned.is_some(),
                    "{}: {} has neither",
                    fit.model,
                    p.name
                );
            }
        }
    }
}

#[test]
fn auto_picks_the_generating_model_and_says_why() {
    let (law, test) = known_laws(true, 0.25).remove(1);
    let curve = curve_of(&law, test, 800);
    let fit = fit_curve(&curve, &FitOptions::default());
    assert_eq!(fit.model, "bs2+mu");
    let why = fit.selection.unwrap();
    assert!(why.contains("AIC") && why.contains("dahl+mu"), "{why}");
}

fn plain_curve(x: Vec<f64>, y: Vec<f64>) -> Curve {
    Curve {
        fabric: "degenerate".into(),
        test: KesTest::Shear,
        direction: Direction::Warp,
        x,
        y,
        metadata: Default::default(),
        source: None,
        sha256: None,
    }
}

#[test]
fn degenerate_curves_give_a_reason_not_a_panic() {
    let cycle: Vec<f64> = (0..200).map(|i| (i as f64 * 0.05).sin() * 0.1).collect();
    let cases = [
        (plain_curve(cycle.clone(), vec![1.0; 200]), "flat curve"),
        (
            plain_curve(vec![0.0, 0.1, 0.0], vec![0.0, 1.0, 0.5]),
            "too few samples",
        ),
        (
            plain_curve(
                (0..100).map(|i| i as f64).collect(),
                (0..100).map(|i| i as f64).collect(),
            ),
            "no loop",
        ),
        (
            plain_curve(
                cycle.clone(),
                cycle
                    .iter()
                    .map(|v| if *v > 0.05 { f64::NAN } else { *v })
                    .collect(),
            ),
            "NaN",
        ),
        (
            plain_curve(vec![0.3; 50], (0..50).map(|i| i as f64).collect()),
            "does not move",
        ),
    ];
    for (curve, expected) in cases {
        let fit = fit_curve(&curve, &FitOptions::default());
        match fit.status {
            kestrel::fit::FitStatus::Failed(reason) => {
                assert!(reason.contains(expected), "{reason}")
            }
            s => panic!("expected failure `{expected}`, got {s:?}"),
        }
    }
}

#[test]
fn fabric_parameter_file_round_trips_byte_identical() {
    use kestrel::params::{FabricParams, ParamsFormat};
    let curves: Vec<Curve> = known_laws(false, 0.2)
        .into_iter()
        .chain(known_laws(true, 0.0))
        .enumerate()
        .map(|(i, (law, test))| {
            let mut c = curve_of(&law, test, 400);
            c.direction = if i < 3 {
                Direction::Warp
            } else {
                Direction::Weft
            };
            c
        })
        .collect();
    let refs: Vec<&Curve> = curves.iter().collect();
    let fit = kestrel::fit::fit_fabric("Known fabric", &refs, &FitOptions::default());
    assert_eq!(fit.params.fits.len(), 6);
    assert!(fit.params.warp.traction.is_some() && fit.params.weft.shear.is_some());
    let dir = tempfile::tempdir().unwrap();
    for (format, name) in [
        (ParamsFormat::Toml, "p.toml"),
        (ParamsFormat::Json, "p.json"),
    ] {
        let path = dir.path().join(name);
        fit.params.write(&path, format, false).unwrap();
        let first = std::fs::read(&path).unwrap();
        let back = FabricParams::read(&path).unwrap();
        assert_eq!(back, fit.params);
        let path2 = dir.path().join(format!("again-{name}"));
        back.write(&path2, format, false).unwrap();
        assert_eq!(
            std::fs::read(&path2).unwrap(),
            first,
            "{name} not byte-identical"
        );
        // refused without force
        assert!(back.write(&path, format, false).is_err());
    }
    // the fitted laws drive the same curves back
    let warp_traction = fit.params.warp.traction.unwrap();
    let again = ConnectorLaw::Traction(warp_traction).drive(&curves[0].x);
    let range = 490.0;
    let worst = again
        .iter()
        .zip(&curves[0].y)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-3 * range, "{worst}");
}

const FABRICS: [&str; 4] = [
    "cotton-shirting",
    "polyester-georgette",
    "silk-crepe",
    "wool-suiting",
];

#[test]
fn every_kes_data_curve_fits_within_two_percent_with_mu_free() {
    // independent data (not our model): the paper reports about 2 %; the noise is 0.35–0.8 %
    let options = FitOptions {
        model: FitModel::Dahl,
        mu: MuMode::Free,
        toe: kestrel::fit::ToeChoice::Power,
        ..FitOptions::default()
    };
    let mut worst: f64 = 0.0;
    for slug in FABRICS {
        for c in kes_fabric(slug) {
            let fit = fit_curve(&c, &options);
            assert!(
                fit.is_fitted(),
                "{slug} {} {}: {:?}",
                c.test,
                c.direction,
                fit.status
            );
            assert!(
                fit.nrmse <= 0.02,
                "{slug} {} {}: NRMSE {:.3} %",
                c.test,
                c.direction,
                100.0 * fit.nrmse
            );
            worst = worst.max(fit.nrmse);
        }
    }
    // no force zero offset is fitted (the default): the law alone, as exported
    assert!(worst < 0.0125, "worst NRMSE {:.3} %", 100.0 * worst);
}

#[test]
fn the_papers_additive_law_cannot_follow_tensile_loops() {
    // μ = 0 with the quadratic toe (the paper's law) against μ free
    let c = kes_fabric("polyester-georgette")
        .into_iter()
        .find(|c| c.test == KesTest::Tensile)
        .unwrap();
    let paper = fit_curve(
        &c,
        &FitOptions {
            model: FitModel::Dahl,
            mu: MuMode::Zero,
            toe: kestrel::fit::ToeChoice::Quadratic,
            ..FitOptions::default()
        },
    );
    let ours = fit_curve(
        &c,
        &FitOptions {
            model: FitModel::Dahl,
            mu: MuMode::Free,
            toe: kestrel::fit::ToeChoice::Power,
            ..FitOptions::default()
        },
    );
    assert!(
        paper.nrmse > 0.03,
        "paper's law {:.3} %",
        100.0 * paper.nrmse
    );
    assert!(
        ours.nrmse < paper.nrmse / 4.0,
        "{} vs {}",
        ours.nrmse,
        paper.nrmse
    );
}

#[test]
fn the_measured_friction_record_fits_near_five_percent() {
    use kestrel::kes::import::{read_loop, ColumnRef, LoopColumn, LoopSpec};
    let path = repo("tests/data/friction-loops/FrictionModels_test_data_2.txt");
    let spec = LoopSpec {
        x: LoopColumn {
            column: ColumnRef::Name("Position [mm]".into()),
            unit: None,
            negate: false,
        },
        y: LoopColumn {
            column: ColumnRef::Name("Friction [uN]".into()),
            unit: None,
            negate: true,
        },
        filter: Some("Normal [uN] > 1e6".parse().unwrap()),
        direction: None,
    };
    let c = read_loop(&path, &spec).unwrap();
    let fit = fit_curve(
        &c,
        &FitOptions {
            model: FitModel::Dahl,
            mu: MuMode::Zero,
            // a friction rig's force zero is its own: fitted with the loop
            offset: kestrel::fit::OffsetMode::Fit,
            ..FitOptions::default()
        },
    );
    assert!(fit.is_fitted());
    // a reference fit found about 5 % with α = 1
    assert!(fit.nrmse < 0.065, "{:.3} %", 100.0 * fit.nrmse);
}

#[test]
fn fit_from_published_values_reproduces_them() {
    use kestrel::fit::values::{fit_fabric_values, FabricValues};
    let spec: FabricValues = toml::from_str(
        "fabric = \"published\"\n[warp]\nEMT = 3.2\nLT = 0.72\nRT = 52\nG = 1.3\n2HG = 2.4\n2HG5 = 4.1\nB = 0.12\n2HB = 0.09\n[weft]\nEMT = 8\nLT = 0.58\nRT = 63\nG = 0.5\n2HG = 0.55\n2HG5 = 1.2\nB = 0.08\n2HB = 0.04\n",
    )
    .unwrap();
    let (params, fits) = fit_fabric_values(&spec);
    assert_eq!(fits.len(), 6);
    for f in &fits {
        assert!(f.law.is_some(), "{} {}", f.test, f.direction);
        for m in &f.matches {
            let e = m.rel_error.unwrap_or(f64::INFINITY).abs();
            assert!(e < 0.01, "{} {} {}: {:?}", f.test, f.direction, m.name, m);
        }
    }
    assert!(params.warp.traction.is_some() && params.weft.bending.is_some());
}

#[test]
fn a_fitted_file_drives_simulate_to_the_measured_values() {
    use kestrel::kes::protocol::{simulate, Protocol};
    use kestrel::kes::values::{kes_values, ReadingRules};
    use kestrel::params::{FabricParams, ParamsFormat};
    let curves = kes_fabric("cotton-shirting");
    let refs: Vec<&Curve> = curves.iter().collect();
    let options = FitOptions {
        model: FitModel::Dahl,
        toe: kestrel::fit::ToeChoice::Power,
        ..FitOptions::default()
    };
    let fabric = kestrel::fit::fit_fabric("Cotton shirting", &refs, &options);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.params.toml");
    fabric
        .params
        .write(&path, ParamsFormat::Toml, false)
        .unwrap();
    let params = FabricParams::read(&path).unwrap();
    let rules = ReadingRules::default();
    for c in &curves {
        let laws = params.direction(c.direction);
        let law = match c.test {
            KesTest::Tensile => ConnectorLaw::Traction(laws.traction.unwrap()),
            KesTest::Shear => ConnectorLaw::Shear(laws.shear.unwrap()),
            _ => ConnectorLaw::Bending(laws.bending.unwrap()),
        };
        let sim = simulate(
            &law,
            &Protocol::kes(c.test).unwrap(),
            1001,
            "sim",
            c.direction,
        )
        .unwrap();
        let (a, b) = (
            kes_values(&sim, &rules).values,
            kes_values(c, &rules).values,
        );
        for (name, measured) in b.iter() {
            let got = a.get(name).unwrap();
            // widths read at one point carry the data's noise (its README: up to 24 %)
            let tol = match name {
                "2HG" | "2HB" => 0.10,
                "G" | "2HG5" | "B" => 0.06,
                _ => 0.02,
            };
            assert!(
                (got / measured - 1.0).abs() < tol,
                "{} {} {name}: {got} vs {measured}",
                c.test,
                c.direction
            );
        }
    }
}

#[test]
fn a_thinned_path_gives_the_full_paths_forces_at_the_samples_kept() {
    use kestrel::fit::thinned_samples;
    // every law, both friction orders, μ > 0; a noisy path with small back-steps and dwell
    for bs2 in [false, true] {
        for (law, test) in known_laws(bs2, 0.25) {
            let base = protocol_path(&law, test, 1500);
            let span = base.iter().cloned().fold(0.0_f64, |m, v| m.max(v.abs()));
            let jitter = noise(base.len(), 7);
            let x: Vec<f64> = base
                .iter()
                .zip(&jitter)
                .enumerate()
                .map(|(i, (b, n))| {
                    if i % 97 < 5 {
                        base[i - i % 97]
                    } else {
                        b + 5e-4 * span * n
                    }
                })
                .collect();
            let full = law.drive(&x);
            let kept = thinned_samples(&x, 200);
            assert!(kept.len() < x.len() / 2, "{} of {}", kept.len(), x.len());
            let xs: Vec<f64> = kept.iter().map(|&i| x[i]).collect();
            let thin = law.drive(&xs);
            let scale = full.iter().cloned().fold(0.0_f64, |m, v| m.max(v.abs()));
            for (k, &i) in kept.iter().enumerate() {
                assert!(
                    (thin[k] - full[i]).abs() <= 1e-9 * scale,
                    "{} {test:?} sample {i}: {} vs {}",
                    law.name(),
                    thin[k],
                    full[i]
                );
            }
        }
    }
}

#[test]
fn the_exported_file_redrives_to_the_reported_nrmse_exactly() {
    use kestrel::fit::OffsetMode;
    use kestrel::params::{nrmse, FabricParams, ParamsFormat};
    let curves = kes_fabric("wool-suiting");
    let refs: Vec<&Curve> = curves.iter().collect();
    let dir = tempfile::tempdir().unwrap();
    for offset in [OffsetMode::Zero, OffsetMode::Fit] {
        let options = FitOptions {
            model: FitModel::Dahl,
            toe: kestrel::fit::ToeChoice::Power,
            offset,
            ..FitOptions::default()
        };
        let fabric = kestrel::fit::fit_fabric("Wool suiting", &refs, &options);
        let path = dir.path().join(format!("{offset:?}.params.toml"));
        fabric
            .params
            .write(&path, ParamsFormat::Toml, false)
            .unwrap();
        let params = FabricParams::read(&path).unwrap();
        for (c, fit) in curves.iter().zip(&fabric.fits) {
            let quality = params.fits.iter().find(|q| q.file == fit.file).unwrap();
            // the offset is in the file exactly when it was fitted
            assert_eq!(quality.offset.is_some(), offset == OffsetMode::Fit);
            let law = params.fitted_law(c.test, c.direction).unwrap();
            assert_eq!(Some(law.offset), quality.offset.or(Some(0.0)));
            let again = nrmse(&c.y, &law.forces(&c.x));
            // one number: the report, the file and the law read back from the file
            assert_eq!(quality.nrmse, Some(fit.nrmse), "{}", fit.file);
            assert_eq!(again, fit.nrmse, "{} {offset:?}", fit.file);
            // the offset is a fitted parameter of the report exactly when it was fitted
            assert_eq!(fit.offset().is_some(), offset == OffsetMode::Fit);
            // 95 % Wald intervals: value ∓ 1.96 s.e., the same in the report and the file
            for p in &fit.params {
                if let (Some(se), Some([lo, hi])) = (p.std_error, p.interval95) {
                    assert!((hi - p.value - 1.96 * se).abs() <= 1e-3 * se + 1e-300);
                    assert!((p.value - lo - 1.96 * se).abs() <= 1e-3 * se + 1e-300);
                    assert_eq!(quality.intervals95.get(p.name), Some(&[lo, hi]));
                }
            }
            // the correlation matrix: symmetric, unit diagonal, entries in [-1, 1]
            let c = quality.correlation.as_ref().expect("a correlation matrix");
            assert_eq!(Some(c), fit.correlation.as_ref());
            for (i, row) in c.matrix.iter().enumerate() {
                assert!((row[i] - 1.0).abs() < 1e-9);
                for (j, r) in row.iter().enumerate() {
                    assert!(r.abs() <= 1.0 + 1e-9 && (r - c.matrix[j][i]).abs() < 1e-9);
                }
            }
        }
    }
}

/// A copy of a `kes_data/` curve under another fabric name, with its rows passed through
/// `row` (angle, force) → line.
fn crafted(dir: &std::path::Path, name: &str, from: &str, row: impl Fn(&str) -> String) -> String {
    let text = std::fs::read_to_string(repo(&format!("kes_data/{from}"))).unwrap();
    let mut out = String::new();
    let mut header_done = false;
    for line in text.lines() {
        if line.starts_with('#') {
            out += &line.replace("Wool suiting", "Crafted fabric");
        } else if !header_done {
            header_done = true;
            out += line;
        } else {
            out += &row(line);
        }
        out.push('\n');
    }
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    path.display().to_string()
}

#[test]
fn a_curve_that_cannot_be_fitted_writes_no_file_and_exits_2() {
    use crate::common::kestrel;
    let dir = tempfile::tempdir().unwrap();
    let ok = crafted(dir.path(), "ok.csv", "wool-suiting/shear_weft.csv", |l| {
        l.to_string()
    });
    // all-zero force; constant strain; loading only, 10 samples
    let zero = crafted(dir.path(), "zero.csv", "wool-suiting/shear_warp.csv", |l| {
        format!("{},0", l.split(',').next().unwrap())
    });
    let constant = crafted(
        dir.path(),
        "const.csv",
        "wool-suiting/bending_warp.csv",
        |l| format!("0.5,{}", l.split(',').nth(1).unwrap()),
    );
    let text = std::fs::read_to_string(repo("kes_data/wool-suiting/tensile_weft.csv")).unwrap();
    let short: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
    let rows: Vec<&str> = text.lines().skip(short.len()).take(11).collect();
    let loading = dir.path().join("short.csv");
    std::fs::write(
        &loading,
        format!("{}\n{}\n", short.join("\n"), rows.join("\n"))
            .replace("Wool suiting", "Crafted fabric"),
    )
    .unwrap();
    let loading = loading.display().to_string();
    let out_file = dir.path().join("crafted.params.toml");
    let out_s = out_file.display().to_string();
    let args = ["fit", &ok, &zero, &constant, &loading, "-o", &out_s];
    let run = kestrel(&args);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    for (file, why) in [
        ("zero.csv", "flat curve"),
        ("const.csv", "does not move"),
        ("short.csv", "too few samples"),
    ] {
        assert!(
            err.lines().any(|l| l.contains(file) && l.contains(why)),
            "{file}: {err}"
        );
    }
    assert!(!out_file.exists(), "a file was written");
    // --allow-partial writes the law that was fitted, and says what was left out
    let mut partial = args.to_vec();
    partial.push("--allow-partial");
    let run = kestrel(&partial);
    assert_eq!(run.status.code(), Some(0));
    let written = kestrel::params::FabricParams::read(&out_file).unwrap();
    assert!(written.weft.shear.is_some() && written.warp.shear.is_none());
    // ... but with no law fitted at all it has no result: refused, nothing written
    let none_file = dir.path().join("none.params.toml");
    let none_s = none_file.display().to_string();
    let run = kestrel(&["fit", &zero, &constant, "-o", &none_s, "--allow-partial"]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(err.contains("none was"), "{err}");
    assert!(!none_file.exists(), "a file was written");
    // the output is checked before fitting: an existing file is refused at once
    let run = kestrel(&["fit", &ok, "-o", &out_s]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--force"));
    assert!(run.stdout.is_empty(), "fitted before refusing the output");
    // so is a folder given for one fabric's card, also with --force
    let run = kestrel(&[
        "fit",
        &ok,
        "-o",
        &dir.path().display().to_string(),
        "--force",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("is a folder"));
    assert!(run.stdout.is_empty(), "fitted before refusing the output");
}

/// `check_values` reports every problem of a values file, each as its own kind.
#[test]
fn check_values_lists_each_problem_by_kind() {
    use kestrel::fit::values::{check_values, FabricValues, ValueProblem};
    let values: FabricValues = toml::from_str(
        "fabric = \"crafted\"\n[warp]\nEMT = 3.2\nLT = 0.72\nWT = 9\nG = -1.3\n[weft]\nLT = 0.7\n",
    )
    .unwrap();
    let problems = check_values(&values).unwrap_err().0;
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems.iter().any(|p| matches!(
        p,
        ValueProblem::NotPhysical { direction: Direction::Warp, name: "G", value, .. } if *value == -1.3
    )));
    assert!(problems.iter().any(|p| matches!(
        p,
        // WT = LT·F_m·EMT/2 gives LT = 9 / (500 · 0.032 / 2) = 1.125
        ValueProblem::WtLtDisagree { direction: Direction::Warp, expected, .. }
            if (expected - 1.125).abs() < 1e-9
    )));
    assert!(problems.contains(&ValueProblem::TensileWithoutEmt(Direction::Weft)));
    let empty: FabricValues = toml::from_str("fabric = \"none\"\n").unwrap();
    assert_eq!(
        check_values(&empty).unwrap_err().0,
        vec![ValueProblem::NoValues("none".into())]
    );
}

#[test]
fn values_that_are_not_physical_or_not_reachable_are_refused() {
    use crate::common::kestrel;
    let dir = tempfile::tempdir().unwrap();
    // `kestrel fit --values <dir>/NAME.toml -o <dir>/NAME.params.toml --json` on `body`
    let fit_values = |name: &str, body: &str| {
        let spec = dir.path().join(format!("{name}.toml"));
        std::fs::write(&spec, format!("fabric = \"crafted\"\n{body}")).unwrap();
        let out = dir.path().join(format!("{name}.params.toml"));
        let run = kestrel(&[
            "fit",
            "--values",
            &spec.display().to_string(),
            "-o",
            &out.display().to_string(),
            "--json",
        ]);
        (run, out)
    };
    for (body, named) in [
        ("", "no KES values"),
        ("[warp]\nG = -1.3\n", "warp G = -1.3"),
        ("[weft]\nB = nan\n", "weft B = NaN"),
        ("[warp]\n2HB = inf\nB = 0.1\n", "warp 2HB = inf"),
        ("[warp]\nEMT = 3\nRT = 1e308\n", "warp RT = 1.000e308"),
        ("[warp]\nLT = 0.7\nRT = 50\n", "need EMT"),
        (
            "[warp]\nEMT = 3.2\nLT = 0.72\nRT = 99.9\n",
            "RT = 99.9 is not reached",
        ),
        ("[warp]\nEMT = 3.2\nLT = 0.72\nWT = 9\n", "disagree"),
    ] {
        let (run, out) = fit_values("v", body);
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{body}: {err}");
        assert!(err.contains(named), "{body}: {err}");
        assert!(!out.exists(), "{body}: a file was written");
    }
    // WT stands for LT: WT = LT·F_m·EMT/2 = 0.72·500·3.2 %/2 = 5.76 gf·cm/cm²
    let (run, _) = fit_values("wt", "[warp]\nEMT = 3.2\nWT = 5.76\nRT = 52\n");
    let json = stdout_json(&run);
    let lt = &json["laws"][0]["values"][1];
    assert_eq!(lt["name"], "LT");
    assert!(
        (lt["achieved"].as_f64().unwrap() - 0.72).abs() < 0.0072,
        "{lt}"
    );
}

#[test]
fn a_fit_sets_its_laws_kes_values_beside_the_measured_ones() {
    use kestrel::kes::protocol::{simulate, Protocol};
    use kestrel::kes::values::{kes_values, ReadingRules};
    for (law, test) in known_laws(false, 0.2) {
        // the curve is the law on the instrument's protocol: the fitted law's values must
        // be the generating law's, read the same way
        let truth = simulate(
            &law,
            &Protocol::kes(test).unwrap(),
            1001,
            "k",
            Direction::Warp,
        )
        .unwrap();
        let expected = kes_values(&truth, &ReadingRules::default()).values;
        let fit = fit_curve(&truth, &FitOptions::default());
        let v = fit.values.as_ref().expect("values beside a KES fit");
        assert_eq!(v.measured, expected);
        let rows = v.rows();
        assert!(rows.len() >= 2, "{test}: {rows:?}");
        for (name, m, f, gap) in rows {
            let f = f.unwrap_or_else(|| panic!("{test} {name}: no fitted value"));
            assert_eq!(gap, Some(f / m - 1.0));
            assert!(gap.unwrap().abs() < 0.01, "{test} {name}: {m} vs {f}");
        }
        let json = serde_json::to_value(&fit).unwrap();
        assert!(json["values"]["measured"].is_object() && json["values"]["fitted"].is_object());
    }
}

#[test]
fn mu_below_one_is_what_keeps_the_unloading_branch_physical() {
    // F = F_el + (F_c0 + mu |F_el|) z; unloading (dx < 0) drives z toward -1 with
    // dz/dx = (1 + z)/eps_f >= 0, so dF/dx = k (1 + mu z) + (F_c0 + mu |F_el|)(1 + z)/eps_f:
    // at saturation (z = -1) the slope is k (1 - mu), positive exactly when mu < 1
    let (k, a, eps_f) = (60.0, 0.14, 0.002);
    for mu in [0.0, 0.3, 0.9, 0.99] {
        let law = ConnectorLaw::Shear(ShearLaw {
            k_s: k,
            theta0: 0.0,
            friction: friction(0.8, mu, false, eps_f),
        });
        let n = 2000;
        let mut x: Vec<f64> = (0..=n).map(|i| a * i as f64 / n as f64).collect();
        x.extend((1..=n).map(|i| a - a * i as f64 / n as f64));
        let f = law.drive(&x);
        // every unloading step lowers the force (the branch rises with strain)
        for i in n + 1..x.len() {
            assert!(
                f[i] <= f[i - 1],
                "mu {mu}: the force rises on unloading at {}",
                x[i]
            );
        }
        // far from the reversal the slope is k (1 - mu)
        let (i1, i2) = (n + 1000, n + 1400); // x from 0.07 to 0.042, 35 eps_f after the turn
        let slope = (f[i1] - f[i2]) / (x[i1] - x[i2]);
        assert!(
            (slope - k * (1.0 - mu)).abs() < 1e-6 * k,
            "mu {mu}: slope {slope} vs k(1 - mu) = {}",
            k * (1.0 - mu)
        );
    }
    // mu = 1 (a flat branch) and beyond (force rising as the strain falls) are refused
    for mu in [0.5, 1.0, 1.2] {
        let f = friction(0.8, mu, false, eps_f);
        let law = ConnectorLaw::Shear(ShearLaw {
            k_s: k,
            theta0: 0.0,
            friction: f,
        });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("law.toml");
        std::fs::write(&path, toml::to_string(&law).unwrap()).unwrap();
        let read = kestrel::kes::protocol::read_law(&path, KesTest::Shear, Direction::Warp);
        match read {
            Ok(_) => assert!(mu < 1.0, "mu {mu} accepted"),
            Err(e) => assert!(mu >= 1.0 && e.to_string().contains("mu"), "mu {mu}: {e}"),
        }
    }
}

#[test]
fn auto_exports_no_stiction_free_second_order_law_and_explains_every_bound() {
    // f2/f1 = 0 makes the second-order law a Dahl law of length eta·eps_f: auto fits that
    // Dahl law from the same optimum, and it wins with fewer parameters
    let c = crate::common::kes_curve("cotton-shirting/tensile_warp.csv");
    let fit = fit_curve(c, &FitOptions::default());
    assert!(fit.is_fitted());
    for p in &fit.params {
        let why = p.pinned.as_deref().unwrap_or("");
        assert!(
            !(p.param == Param::Ratio && why.starts_with("at its lower")),
            "{}: {why}",
            fit.model
        );
        if why.starts_with("at its") {
            // said in the curve's terms, not "beyond the physical range"
            assert!(why.contains(" — "), "{}: {why}", p.name);
        }
    }
    assert!(fit
        .selection
        .as_deref()
        .unwrap_or("")
        .contains("fewer free parameters"));
}

/// x from 0 through the turning points `turns` (fractions of `amplitude`), `per_stroke`
/// samples per full-amplitude stroke.
fn turning_path(amplitude: f64, turns: &[f64], per_stroke: usize) -> Vec<f64> {
    let mut x = vec![0.0];
    let mut from = 0.0;
    for &r in turns {
        let n = (per_stroke as f64 * (r - from).abs()).ceil().max(1.0) as usize;
        x.extend((1..=n).map(|k| amplitude * (from + (r - from) * k as f64 / n as f64)));
        from = r;
    }
    x
}

/// Specimens of one shear curve: one law driven along three different paths (the full
/// loop, a half-amplitude double loop, a loop with a minor loop inside), each with its own
/// noise (`sigma` of its force range, its own seed).
fn shear_specimens(law: &ConnectorLaw, sigma: [f64; 3]) -> Vec<Curve> {
    let amp = 8f64.to_radians();
    let paths = [
        turning_path(amp, &[1.0, -1.0, 0.0], 250),
        turning_path(amp, &[0.5, -0.5, 0.5, -0.5, 0.0], 300),
        turning_path(amp, &[1.0, 0.3, 0.8, -1.0, -0.2, -0.7, 0.0], 200),
    ];
    paths
        .into_iter()
        .zip(sigma)
        .enumerate()
        .map(|(i, (x, s))| {
            let mut y = law.drive(&x);
            let (lo, hi) = y
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
            for (v, e) in y.iter_mut().zip(noise(x.len(), 0x5eed + i as u64)) {
                *v += s * (hi - lo) * e;
            }
            Curve {
                fabric: "Replicated".into(),
                test: KesTest::Shear,
                direction: Direction::Warp,
                x,
                y,
                metadata: Default::default(),
                source: Some(format!("shear_warp_{}.csv", i + 1).into()),
                sha256: None,
            }
        })
        .collect()
}

#[test]
fn replicates_are_fitted_jointly_to_one_law_with_each_specimens_nrmse() {
    use kestrel::fit::fit_specimens;
    use kestrel::params::nrmse;
    // noiseless specimens on different paths: the one law comes back exactly
    for bs2 in [false, true] {
        let (law, _) = known_laws(bs2, 0.25).remove(1);
        let specimens = shear_specimens(&law, [0.0; 3]);
        let refs: Vec<&Curve> = specimens.iter().collect();
        let options = FitOptions {
            model: if bs2 { FitModel::Bs2 } else { FitModel::Dahl },
            mu: MuMode::Free,
            ..FitOptions::default()
        };
        let fit = fit_specimens(&refs, &options);
        assert!(fit.is_fitted(), "{:?}", fit.status);
        check_recovered(&fit, &law, 0.005);
        assert_eq!(fit.specimens.len(), 3);
        assert!(fit.nrmse < 1e-3, "{}", fit.nrmse);
    }
    // noisy specimens (1 %, 1 %, 0.5 % of their range): each specimen's NRMSE is the law
    // driven along its own path from a virgin state, at its own noise level; the pooled
    // figure is sqrt(Σ n_s NRMSE_s² / Σ n_s)
    let (law, _) = known_laws(false, 0.25).remove(1);
    let sigma = [0.01, 0.01, 0.005];
    let specimens = shear_specimens(&law, sigma);
    let refs: Vec<&Curve> = specimens.iter().collect();
    let fit = fit_specimens(&refs, &FitOptions::default());
    assert!(fit.is_fitted(), "{:?}", fit.status);
    let fitted = fit.fitted_law().unwrap();
    let (mut sum, mut n) = (0.0, 0);
    for ((c, s), sigma) in specimens.iter().zip(&fit.specimens).zip(sigma) {
        assert_eq!(s.file, c.path_name());
        assert_eq!(s.samples, c.x.len());
        assert_eq!(s.nrmse, nrmse(&c.y, &fitted.forces(&c.x)));
        assert!(
            s.nrmse > 0.85 * sigma && s.nrmse < 1.15 * sigma,
            "{}: NRMSE {} for noise {sigma}",
            s.file,
            s.nrmse
        );
        sum += s.samples as f64 * s.nrmse * s.nrmse;
        n += s.samples;
    }
    assert!((fit.nrmse - (sum / n as f64).sqrt()).abs() < 1e-12);
    assert_eq!(fit.samples, n);
    let ConnectorLaw::Shear(truth) = law else {
        unreachable!()
    };
    let k = fit.value(Param::K).unwrap();
    assert!(
        (k / truth.k_s - 1.0).abs() < 0.02,
        "k_s {k} vs {}",
        truth.k_s
    );
    // the values beside the fitted law's are the mean of the specimens that give them: the
    // ±4° specimen gives no G (its 0.5..5° window reaches past the turn)
    let values = fit.values.as_ref().unwrap();
    let each: Vec<Option<f64>> = specimens
        .iter()
        .map(|c| {
            kestrel::kes::kes_values(c, &kestrel::kes::ReadingRules::default())
                .values
                .g
        })
        .collect();
    assert!(each[0].is_some() && each[1].is_none() && each[2].is_some());
    let mean = each.iter().flatten().sum::<f64>() / 2.0;
    assert!((values.measured.g.unwrap() - mean).abs() < 1e-12 * mean);
    assert!(values
        .note
        .as_deref()
        .unwrap()
        .contains("mean of 3 specimens"));
}

#[test]
fn cli_fit_fits_replicates_jointly_and_writes_each_specimens_nrmse() {
    use crate::common::{kestrel_on, stdout_json};
    use kestrel::params::FabricParams;
    let dir = tempfile::tempdir().unwrap();
    let (law, _) = known_laws(false, 0.25).remove(1);
    let mut files = Vec::new();
    for c in shear_specimens(&law, [0.01, 0.01, 0.005]) {
        let f = dir.path().join(c.path_name());
        std::fs::write(&f, kestrel::kes::to_kes_csv(&c).unwrap()).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let out_file = dir.path().join("r.params.toml");
    let out = kestrel_on(&["fit", "--json", "-o", out_file.to_str().unwrap()], &files);
    let json = stdout_json(&out);
    let curves = json["fabrics"][0]["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 1, "one law for the three specimens");
    let specimens = curves[0]["specimens"].as_array().unwrap();
    assert_eq!(specimens.len(), 3);
    for (s, f) in specimens.iter().zip(&files) {
        assert_eq!(s["file"].as_str(), Some(f.as_str()));
        let e = s["nrmse"].as_f64().unwrap();
        assert!(e > 0.004 && e < 0.012, "{e}");
    }
    // the file keeps each specimen's NRMSE beside the pooled one, and reads back
    let params = FabricParams::read(&out_file).unwrap();
    assert_eq!(params.fits.len(), 1);
    assert_eq!(params.fits[0].specimens.len(), 3);
    assert_eq!(params.provenance.sources.len(), 3);
    assert!(params.warp.shear.is_some());
    // the table names each specimen with its NRMSE
    let again = dir.path().join("r2.params.toml");
    let out = kestrel_on(&["fit", "-o", again.to_str().unwrap()], &files);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3 specimens fitted jointly"), "{text}");
    for f in &files {
        assert!(text.contains(f.as_str()), "{text}");
    }
}

/// RMS of the relative gaps fitted/measured − 1 of a fit's KES values.
fn rms_value_gap(fit: &kestrel::fit::CurveFit) -> f64 {
    let gaps: Vec<f64> = fit
        .values
        .as_ref()
        .unwrap()
        .rows()
        .into_iter()
        .map(|(name, _, _, gap)| gap.unwrap_or_else(|| panic!("{name}: no fitted value")))
        .collect();
    (gaps.iter().map(|g| g * g).sum::<f64>() / gaps.len() as f64).sqrt()
}

/// A shear loop of a known law whose measured 2HG is perturbed: within ±1° of zero the loop
/// is widened by `delta` N/m on each branch (the width at ±0.5° grows by 2·delta), the rest
/// of the loop is the law's, with 0.3 % noise.
fn widened_shear_loop(n: usize, delta: f64) -> Curve {
    let (law, test) = known_laws(false, 0.25).remove(1);
    let mut curve = curve_of(&law, test, n);
    let range = curve.y.iter().cloned().fold(f64::MIN, f64::max)
        - curve.y.iter().cloned().fold(f64::MAX, f64::min);
    // the noiseless path's direction at each sample (the step arriving there)
    let rising: Vec<bool> = (0..curve.x.len())
        .map(|i| curve.x[i.max(1)] > curve.x[i.max(1) - 1])
        .collect();
    for (i, e) in noise(curve.x.len(), 11).into_iter().enumerate() {
        if curve.x[i].abs() < 1f64.to_radians() {
            curve.y[i] += if rising[i] { delta } else { -delta };
        }
        curve.y[i] += 0.003 * range * e;
    }
    curve
}

#[test]
fn a_larger_value_weight_moves_the_fitted_values_toward_the_measured_ones() {
    let curve = widened_shear_loop(1000, 0.25);
    let fit_with = |w: f64| {
        let options = FitOptions {
            model: FitModel::Dahl,
            mu: MuMode::Free,
            weight_values: w,
            ..FitOptions::default()
        };
        let fit = fit_curve(&curve, &options);
        assert!(fit.is_fitted(), "{:?}", fit.status);
        (rms_value_gap(&fit), fit.nrmse)
    };
    let (g0, e0) = fit_with(0.0);
    let (g1, e1) = fit_with(1.0);
    let (g4, e4) = fit_with(4.0);
    // the values come closer as W grows, and the curve pays for it
    assert!(g0 > 0.02, "the unweighted gap {g0} should be visible");
    assert!(g1 < g0 && g4 < g1, "gaps {g0} {g1} {g4}");
    assert!(g4 < 0.5 * g0, "gaps {g0} {g4}");
    assert!(
        e0 <= e1 * (1.0 + 1e-9) && e1 <= e4 * (1.0 + 1e-9),
        "NRMSE {e0} {e1} {e4}"
    );
}

#[test]
fn cli_weight_values_is_a_joint_objective_and_refuses_a_bad_weight() {
    use crate::common::{kestrel, stdout_json};
    let dir = tempfile::tempdir().unwrap();
    let mut curve = widened_shear_loop(800, 0.25);
    curve.source = Some("stiction.csv".into());
    let file = dir.path().join("stiction.csv");
    std::fs::write(&file, kestrel::kes::to_kes_csv(&curve).unwrap()).unwrap();
    let gap = |w: &str| {
        let out_file = dir.path().join(format!("w{w}.params.toml"));
        let out = kestrel(&[
            "fit",
            "--json",
            "--model",
            "dahl",
            &format!("--weight-values={w}"),
            "-o",
            out_file.to_str().unwrap(),
            file.to_str().unwrap(),
        ]);
        let json = stdout_json(&out);
        let v = &json["fabrics"][0]["curves"][0]["values"];
        let gaps: Vec<f64> = ["G", "2HG", "2HG5"]
            .iter()
            .map(|n| v["fitted"][n].as_f64().unwrap() / v["measured"][n].as_f64().unwrap() - 1.0)
            .collect();
        (gaps.iter().map(|g| g * g).sum::<f64>() / 3.0).sqrt()
    };
    let (g0, g3) = (gap("0"), gap("3"));
    assert!(g3 < g0, "W = 3 gap {g3} vs W = 0 gap {g0}");
    for bad in ["-1", "nan", "x"] {
        let flag = format!("--weight-values={bad}");
        let out = kestrel(&["fit", &flag, file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a weight"));
    }
}

/// The reasons of the parameters a fit left on one of their bounds.
fn on_a_bound(fit: &kestrel::fit::CurveFit) -> Vec<String> {
    fit.params
        .iter()
        .filter_map(|p| {
            let why = p.pinned.as_deref()?;
            why.starts_with("at its")
                .then(|| format!("{}: {why}", p.name))
        })
        .collect()
}

#[test]
fn a_dahl_law_fitted_with_auto_choice_exports_no_stiction_ratio_and_no_bound() {
    // the curves come from first-order (Dahl) laws: f2/f1 = 0 is the truth, a named value,
    // so the second-order law must not be exported with its ratio on the bound
    for (law, test) in known_laws(false, 0.25) {
        let curve = curve_of(&law, test, 800);
        let fit = fit_curve(&curve, &FitOptions::default());
        assert!(fit.is_fitted(), "{test}: {:?}", fit.status);
        assert!(fit.model.starts_with("dahl"), "{test}: {}", fit.model);
        assert!(fit.value(Param::Ratio).is_none(), "{test}: {}", fit.model);
        assert_eq!(on_a_bound(&fit), Vec::<String>::new(), "{test}");
    }
}

#[test]
fn a_curve_entirely_in_the_toe_is_fitted_as_a_toe_only_law() {
    // ε₁ far beyond the strain at 500 gf/cm: the measured loading never leaves the toe. The
    // law chosen is the toe-only one (ε₁ fixed at the largest strain, said so), not a free
    // ε₁ on its bound
    for (eps1, f1) in [(0.2, 1500.0), (0.08, 700.0)] {
        let law = ConnectorLaw::Traction(TractionLaw {
            k_t: 12000.0,
            eps1,
            f1,
            eps1_aligned: Some(0.8 * eps1),
            toe: Default::default(),
            friction: friction(8.0, 0.25, false, 0.002),
        });
        let curve = curve_of(&law, KesTest::Tensile, 800);
        let x_max = curve.x.iter().fold(0.0f64, |m, &v| m.max(v));
        assert!(x_max < 0.9 * eps1, "the path leaves the toe: {x_max}");
        let fit = fit_curve(&curve, &FitOptions::default());
        assert!(fit.is_fitted(), "{:?}", fit.status);
        assert!(fit.model.contains("toe only"), "{}", fit.model);
        let e1 = fit.params.iter().find(|p| p.param == Param::Eps1).unwrap();
        assert!(
            (e1.value / x_max - 1.0).abs() < 1e-9,
            "{} vs {x_max}",
            e1.value
        );
        let why = e1.pinned.as_deref().unwrap_or("");
        assert!(why.starts_with("fixed by the law (toe only)"), "{why}");
        assert!(fit.nrmse < 0.01, "{}", fit.nrmse);
        assert_eq!(on_a_bound(&fit), Vec::<String>::new(), "{}", fit.model);
    }
}

/// The candidates `auto` stopped before convergence, from its selection text: (model, the
/// lowest AIC it could still reach).
fn stopped_candidates(selection: &str) -> Vec<(String, f64)> {
    let list = selection.split(" among ").nth(1).unwrap_or("");
    let mut out = Vec::new();
    let mut rest = list;
    while let Some(at) = rest.find(" stopped at ") {
        let model = rest[..at].rsplit("), ").next().unwrap_or("").to_string();
        let tail = &rest[at..];
        let floor_at = tail.find("no lower than ").expect("a floor") + "no lower than ".len();
        let floor_end = floor_at + tail[floor_at..].find(')').expect("closing parenthesis");
        let floor: f64 = tail[floor_at..floor_end].parse().expect("a number");
        out.push((model, floor));
        rest = &tail[floor_end..];
    }
    out
}

#[test]
fn a_candidate_auto_stops_early_could_not_have_won() {
    // the mu = 0 laws of a tensile loop cannot follow its unloading branch; auto stops them
    // once even their linearised optimum cannot beat the leader. Fitted to the end on their
    // own, each ends above the floor the auto fit gave it, and above the chosen law
    let curves = kes_fabric("cotton-shirting");
    for curve in curves.iter().filter(|c| c.test != KesTest::Bending) {
        let fit = fit_curve(curve, &FitOptions::default());
        assert!(fit.is_fitted(), "{:?}", fit.status);
        let selection = fit.selection.clone().unwrap_or_default();
        let stopped = stopped_candidates(&selection);
        assert!(
            !stopped.is_empty(),
            "{}: nothing stopped: {selection}",
            curve.test
        );
        for (model, floor) in stopped {
            assert!(
                !model.contains("+mu"),
                "{model}: only mu = 0 laws are stopped here"
            );
            let options = FitOptions {
                model: if model.starts_with("bs2") {
                    FitModel::Bs2
                } else {
                    FitModel::Dahl
                },
                mu: MuMode::Zero,
                toe: if model.contains("power toe") {
                    ToeChoice::Power
                } else {
                    ToeChoice::Quadratic
                },
                ..FitOptions::default()
            };
            let alone = fit_curve(curve, &options);
            assert!(alone.is_fitted(), "{model}: {:?}", alone.status);
            assert!(
                alone.aic >= floor && alone.aic > fit.aic,
                "{} {model}: AIC {} to the end, floor {floor}, chosen {}",
                curve.test,
                alone.aic,
                fit.aic
            );
        }
    }
}

/// `curve` with uniform noise of ±`amplitude` of its force range (seeded).
fn with_uniform_noise(mut curve: Curve, amplitude: f64, seed: u64) -> Curve {
    let (lo, hi) = curve
        .y
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    let mut rng = crate::common::rng(seed);
    for y in curve.y.iter_mut() {
        *y += amplitude * (hi - lo) * crate::common::symmetric(&mut rng);
    }
    curve
}

#[test]
fn a_noisy_curve_that_leaves_its_toe_is_not_fitted_as_toe_only() {
    // quadratic toe to eps1 = 3 % at F1 = 300 N/m; 490 N/m is reached near 4.2 %, so the
    // loading shows about 1 % of strain on the line. With ±0.5 % noise the least squares from
    // the curve's estimate could end in the toe-only local minimum (k_t +12 %, F1 +34 %)
    let law = ConnectorLaw::Traction(TractionLaw {
        k_t: 15000.0,
        eps1: 0.03,
        f1: 300.0,
        eps1_aligned: None,
        toe: Default::default(),
        friction: friction(15.0, 0.2, false, 0.003),
    });
    for seed in 1..=20 {
        let curve = with_uniform_noise(curve_of(&law, KesTest::Tensile, 1000), 0.005, seed);
        let fit = fit_curve(&curve, &FitOptions::default());
        assert!(fit.is_fitted(), "seed {seed}: {:?}", fit.status);
        assert!(
            !fit.model.contains("toe only"),
            "seed {seed}: {}",
            fit.model
        );
        for (param, truth, tol) in [
            (Param::K, 15000.0, 0.03),
            (Param::Eps1, 0.03, 0.05),
            (Param::F1, 300.0, 0.08),
        ] {
            let got = fit.value(param).unwrap_or(f64::NAN);
            assert!(
                (got / truth - 1.0).abs() < tol,
                "seed {seed} {}: {param:?} = {got} vs {truth}",
                fit.model
            );
        }
    }
}

/// The elastic force of a toe at `x` inside it (x < ε₁) and its slope there, in closed form
/// (docs/model.md): the quadratic toe (k_t x/ε₁)[(1 − F₁/(k_t ε₁))x + 2F₁/k_t − ε₁], the power
/// toe F₁(x/ε₁)ⁿ with n = k_t ε₁/F₁.
fn toe_force_and_slope(k_t: f64, eps1: f64, f1: f64, toe: ToeShape, x: f64) -> (f64, f64) {
    match toe {
        ToeShape::Quadratic => {
            let a = 1.0 - f1 / (k_t * eps1);
            let b = 2.0 * f1 / k_t - eps1;
            (k_t * x / eps1 * (a * x + b), k_t / eps1 * (2.0 * a * x + b))
        }
        ToeShape::Power => {
            let n = k_t * eps1 / f1;
            let f = f1 * (x / eps1).powf(n);
            (f, n * f / x)
        }
    }
}

#[test]
fn a_noisy_toe_with_no_line_behind_it_is_not_given_a_fitted_eps1() {
    // ε₁ beyond the strain at 250 gf/cm: the loading never leaves the toe. With ±0.5 % noise
    // the least squares can end with ε₁ just below the largest strain, a "line" carried by the
    // last few percent of the loading that fits the noise (k_t −9…−29 %, F₁ −24…−40 %,
    // intervals excluding the truth, reported as fitted). The split is not identified: the
    // law is the toe-only one, ε₁ fixed at the largest strain, and its k_t and F₁ are the slope
    // and force of the true toe there (closed form), within their intervals
    let laws = [
        TractionLaw {
            k_t: 40000.0,
            eps1: 0.01,
            f1: 300.0,
            eps1_aligned: None,
            toe: ToeShape::Quadratic,
            friction: friction(10.0, 0.0, false, 0.002),
        },
        TractionLaw {
            k_t: 8000.0,
            eps1: 0.12,
            f1: 300.0,
            eps1_aligned: None,
            toe: ToeShape::Power,
            friction: friction(8.0, 0.3, true, 0.01),
        },
    ];
    let f_max = 250.0 * 0.980665;
    for law in laws {
        let (k_t, eps1, f1, toe) = (law.k_t, law.eps1, law.f1, law.toe);
        let law = ConnectorLaw::Traction(law);
        let x = tensile_path(&law, f_max, 1000);
        let x_max = x.iter().fold(0.0f64, |m, &v| m.max(v));
        assert!(x_max < 0.9 * eps1, "the path leaves the toe: {x_max}");
        let (force, slope) = toe_force_and_slope(k_t, eps1, f1, toe, x_max);
        let mut covered = 0;
        let seeds = 1..=8;
        let n_seeds = seeds.clone().count();
        for seed in seeds {
            let curve = Curve {
                fabric: "known".into(),
                test: KesTest::Tensile,
                direction: Direction::Warp,
                x: x.clone(),
                y: law.drive(&x),
                metadata: Default::default(),
                source: None,
                sha256: None,
            };
            let fit = fit_curve(
                &with_uniform_noise(curve, 0.005, seed),
                &FitOptions::default(),
            );
            assert!(fit.is_fitted(), "seed {seed}: {:?}", fit.status);
            let e1 = fit.params.iter().find(|p| p.param == Param::Eps1).unwrap();
            let why = e1.pinned.as_deref().unwrap_or("");
            assert!(
                fit.model.contains("toe only") && why.starts_with("fixed by the law (toe only)"),
                "seed {seed}: eps1 = {} reported as fitted ({}): {why}",
                e1.value,
                fit.model
            );
            assert!((e1.value / x_max - 1.0).abs() < 1e-9, "{}", e1.value);
            // k_t and F₁ of the toe-only law: within 4 standard errors of the toe's slope and
            // force at the largest strain on every seed, within the 95 % interval on most
            let mut inside = true;
            for (param, truth) in [(Param::K, slope), (Param::F1, force)] {
                let p = fit.params.iter().find(|p| p.param == param).unwrap();
                if p.not_identified {
                    continue;
                }
                let se = p.std_error.unwrap_or(f64::NAN);
                assert!(
                    (p.value - truth).abs() < 4.0 * se,
                    "seed {seed} {}: {param:?} = {} ± {se} vs {truth}",
                    fit.model,
                    p.value
                );
                let [lo, hi] = p.interval95.unwrap_or([f64::NAN; 2]);
                inside &= lo <= truth && truth <= hi;
            }
            covered += usize::from(inside);
        }
        assert!(
            covered + 2 >= n_seeds,
            "{toe:?} toe: k_t and F1 both covered on {covered} of {n_seeds} seeds"
        );
    }
}

#[test]
fn the_95_percent_intervals_cover_the_true_law_at_any_number_of_samples() {
    // the standard errors belong to the estimate reported (fitted on every sample): with
    // ±0.5 % uniform noise the intervals of k and the level cover the true value about 95 %
    // of the time, and no less with more samples (with the estimate of a thinned path and the
    // standard errors of every sample: 64 % at 1 001 samples, 53 % at 4 001)
    let options = FitOptions {
        model: FitModel::Dahl,
        mu: MuMode::Zero,
        ..FitOptions::default()
    };
    for n in [241, 1001, 4001] {
        let (mut covered, mut intervals) = (0, 0);
        for (law, test) in known_laws(false, 0.0).into_iter().skip(1) {
            let f = match &law {
                ConnectorLaw::Shear(l) => (l.k_s, l.friction.level),
                ConnectorLaw::Bending(l) => (l.k_b, l.friction.level),
                ConnectorLaw::Traction(l) => (l.k_t, l.friction.level),
            };
            for seed in 1..=10 {
                let curve = with_uniform_noise(curve_of(&law, test, n - 1), 0.005, seed);
                let fit = fit_curve(&curve, &options);
                assert!(
                    fit.is_fitted(),
                    "{test} n {n} seed {seed}: {:?}",
                    fit.status
                );
                for (param, truth) in [(Param::K, f.0), (Param::Level, f.1)] {
                    let p = fit.params.iter().find(|p| p.param == param);
                    if let Some([lo, hi]) = p.and_then(|p| p.interval95) {
                        intervals += 1;
                        covered += usize::from(lo <= truth && truth <= hi);
                    }
                }
            }
        }
        assert!(intervals >= 36, "n {n}: {intervals} intervals");
        assert!(
            covered as f64 >= 0.8 * intervals as f64,
            "n {n}: {covered} of {intervals} intervals cover the truth"
        );
    }
}

#[test]
fn the_laws_values_are_read_along_the_measured_path_on_any_protocol() {
    // shear at ±5° and bending at ±1.5 cm⁻¹ instead of the instrument's ±8° and ±2.5 cm⁻¹:
    // the law driven along the file's own path gives the file's values (an exact fit gives
    // no gap), and weighting the values does not pull the law off the truth
    for (law, test) in known_laws(false, 0.2).into_iter().skip(1) {
        let amplitude = match test {
            KesTest::Shear => 5f64.to_radians(),
            _ => 150.0,
        };
        let x = turning_path(amplitude, &[1.0, -1.0, 0.0], 250);
        let mut curve = curve_of(&law, test, 8);
        curve.y = law.drive(&x);
        curve.x = x;
        for weight in [0.0, 1.0] {
            let options = FitOptions {
                weight_values: weight,
                ..FitOptions::default()
            };
            let fit = fit_curve(&curve, &options);
            assert!(fit.is_fitted(), "{test}: {:?}", fit.status);
            assert!(fit.nrmse < 1e-4, "{test} W {weight}: NRMSE {}", fit.nrmse);
            let v = fit.values.as_ref().expect("values beside a KES fit");
            for (name, m, _, gap) in v.rows() {
                let gap = gap.unwrap_or(f64::NAN);
                assert!(gap.abs() < 1e-3, "{test} W {weight} {name}: {m}, gap {gap}");
            }
            let k_true = match &law {
                ConnectorLaw::Shear(l) => l.k_s,
                ConnectorLaw::Bending(l) => l.k_b,
                ConnectorLaw::Traction(l) => l.k_t,
            };
            let k = fit.value(Param::K).unwrap_or(f64::NAN);
            assert!((k / k_true - 1.0).abs() < 1e-3, "{test} W {weight}: k {k}");
        }
    }
}

#[test]
fn auto_says_when_a_dahl_law_with_alpha_free_would_fit_better() {
    // auto fits the Dahl law with alpha = 1; on a curve of alpha = 2 it says that the law with
    // alpha free fits better, and names it; on a curve of alpha = 1 it does not
    for (alpha, better) in [(2.0, true), (1.0, false)] {
        let law = ConnectorLaw::Shear(ShearLaw {
            k_s: 20.0,
            theta0: 0.0,
            friction: FrictionLaw {
                level: 0.15,
                mu: 0.0,
                shape: FrictionShape::Dahl {
                    eps_f: 0.004,
                    alpha,
                },
            },
        });
        let curve = curve_of(&law, KesTest::Shear, 800);
        let fit = fit_curve(&curve, &FitOptions::default());
        assert!(fit.is_fitted(), "{:?}", fit.status);
        let selection = fit.selection.clone().unwrap_or_default();
        if better {
            assert!(fit.model.starts_with("dahl"), "{}", fit.model);
            assert!(
                selection.contains("alpha free fits better") && selection.contains("alpha = 2.000"),
                "{selection}"
            );
        } else {
            assert!(!selection.contains("fits better"), "{selection}");
        }
    }
}

/// A card's provenance hashes the bytes read when the curve was, not the file at the moment
/// the card is assembled or written; a file changed or deleted since is named in a warning.
#[test]
fn a_cards_source_hash_is_of_the_bytes_read_and_a_changed_file_is_warned_of() {
    use kestrel::fit::fabric::{add_properties, sources_changed_on_disk};
    use kestrel::kes::import::{read_kes, CurveOverrides};
    use kestrel::params::FabricParams;
    use sha2::{Digest, Sha256};
    let hex = |b: &[u8]| -> String {
        Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compression.csv");
    let original = std::fs::read(repo("kes_data/cotton-shirting/compression.csv")).unwrap();
    std::fs::write(&path, &original).unwrap();
    let curve = read_kes(&path, CurveOverrides::default()).unwrap();
    assert_eq!(curve.sha256.as_deref(), Some(hex(&original).as_str()));
    let card = |curve: &Curve| {
        let mut params = FabricParams::new("Cotton shirting");
        add_properties(&mut params, &[curve]);
        params
    };
    // unchanged on disk: the same hash, no warning
    let params = card(&curve);
    assert_eq!(params.provenance.sources.len(), 1);
    assert_eq!(params.provenance.sources[0].sha256, hex(&original));
    assert_eq!(sources_changed_on_disk(&params), None);
    // the file changed after it was read: the card keeps the original bytes' hash and the
    // properties read from them, and the warning names the file
    let text = String::from_utf8(original.clone()).unwrap();
    let changed = text.replace("# weight [g/m2]: 120", "# weight [g/m2]: 240");
    assert_ne!(changed, text);
    std::fs::write(&path, &changed).unwrap();
    let params = card(&curve);
    assert_eq!(params.provenance.sources[0].sha256, hex(&original));
    let density = params.properties.as_ref().and_then(|p| p.areal_density);
    assert!(
        density.is_some_and(|d| (d - 0.12).abs() < 1e-12),
        "{density:?}"
    );
    let w = sources_changed_on_disk(&params).expect("a warning");
    assert!(
        w.contains("compression.csv (changed)") && w.contains("bytes read"),
        "{w}"
    );
    // as written (JSON, as the card's .json form), the card holds the original hash
    let written = serde_json::to_string(&params).unwrap();
    assert!(written.contains(&hex(&original)) && !written.contains(&hex(changed.as_bytes())));
    // deleted: still the original hash, and the warning says so
    std::fs::remove_file(&path).unwrap();
    let params = card(&curve);
    assert_eq!(params.provenance.sources[0].sha256, hex(&original));
    let w = sources_changed_on_disk(&params).expect("a warning");
    assert!(w.contains("compression.csv (gone or unreadable)"), "{w}");
}

/// The combination a parameter's interval note says the curve measures, `name = v, 95 % [a, b]`:
/// (name, value, a, b).
fn measured_combination(note: &str) -> Option<(String, f64, f64, f64)> {
    let rest = note.split("the curve measures ").nth(1)?;
    let (name, rest) = rest.split_once(" = ")?;
    let (value, rest) = rest.split_once(", 95 % [")?;
    let (lo, rest) = rest.split_once(", ")?;
    let hi = rest.split(']').next()?;
    Some((
        name.to_string(),
        value.parse().ok()?,
        lo.parse().ok()?,
        hi.parse().ok()?,
    ))
}

fn estimate(fit: &kestrel::fit::CurveFit, param: Param) -> &kestrel::fit::ParamEstimate {
    fit.params
        .iter()
        .find(|p| p.param == param)
        .expect("the law has the parameter")
}

#[test]
fn a_friction_longer_than_the_stroke_leaves_its_level_not_identified_and_names_what_is_measured() {
    // Dahl friction with eps_f 0.5 rad on a ±8° (0.14 rad) shear loop: eps_f is pinned
    // at the whole strain range (the curve says only eps_f ≥ 0.28 rad) and the level follows
    // it. Its interval given eps_f = 0.28 missed the true level by 58–64 %; the level is now
    // not identified, and the combination the curve measures (level/eps_f^γ, γ from the
    // covariance with eps_f freed) covers the true law's. k_s absorbs the stroke-long
    // friction's stiffness: its interval is said to hold only given eps_f.
    let options = FitOptions {
        model: FitModel::Dahl,
        mu: MuMode::Zero,
        ..FitOptions::default()
    };
    let (mut combinations, mut covered) = (0, 0);
    // (at 1 rad the fit puts the level on 0, a law without friction: k_s then carries the
    // friction's stiffness, see docs/fitting.md)
    {
        let eps_f = 0.5;
        let law = ConnectorLaw::Shear(ShearLaw {
            k_s: 40.0,
            theta0: 0.0,
            friction: friction(0.5, 0.0, false, eps_f),
        });
        for seed in 1..=3 {
            let curve = with_uniform_noise(curve_of(&law, KesTest::Shear, 1000), 0.005, seed);
            let fit = fit_curve(&curve, &options);
            let tag = format!("eps_f {eps_f} seed {seed}");
            assert!(
                estimate(&fit, Param::EpsF)
                    .pinned
                    .as_deref()
                    .is_some_and(|w| w.starts_with("at its upper bound")),
                "{tag}: {:?}",
                estimate(&fit, Param::EpsF).pinned
            );
            let level = estimate(&fit, Param::Level);
            assert!(
                level.not_identified && level.interval95.is_none(),
                "{tag}: level {:?} {:?}",
                level.interval95,
                level.interval_note
            );
            let note = level.interval_note.as_deref().unwrap_or_default();
            assert!(note.contains("given eps_f"), "{tag}: {note}");
            let (name, _, lo, hi) = measured_combination(note).expect("a combination is named");
            let gamma: f64 = name
                .strip_prefix("level/eps_f")
                .map(|g| {
                    g.strip_prefix('^')
                        .unwrap_or("1")
                        .parse()
                        .unwrap_or(f64::NAN)
                })
                .expect("level over a power of eps_f");
            let truth = 0.5 / eps_f.powf(gamma);
            combinations += 1;
            covered += usize::from(lo <= truth && truth <= hi);
            let k_s = estimate(&fit, Param::K);
            assert!(
                k_s.conditional
                    && k_s
                        .interval_note
                        .as_deref()
                        .is_some_and(|n| n.contains("given eps_f")),
                "{tag}: k_s {:?} {:?}",
                k_s.interval95,
                k_s.interval_note
            );
        }
    }
    assert!(
        covered >= combinations - 1,
        "{covered} of {combinations} combinations cover the truth"
    );
}

/// A tensile law with Dahl friction (the law T6 of the study: aligned toe reached).
fn dahl_tensile_law() -> ConnectorLaw {
    ConnectorLaw::Traction(TractionLaw {
        k_t: 15_000.0,
        eps1: 0.03,
        f1: 300.0,
        eps1_aligned: Some(0.025),
        friction: friction(15.0, 0.2, false, 0.003),
        toe: ToeShape::Quadratic,
    })
}

/// The second-order law with μ free, and a first-order (Dahl) shear law for it to fit (f2/f1
/// goes to 0, where η and ε_f are measured only together).
fn dahl_shear_fitted_as_bs2() -> (FitOptions, ConnectorLaw) {
    let options = FitOptions {
        model: FitModel::Bs2,
        mu: MuMode::Free,
        ..FitOptions::default()
    };
    let shear = ConnectorLaw::Shear(ShearLaw {
        k_s: 40.0,
        theta0: 0.0,
        friction: friction(0.5, 0.0, false, 0.03),
    });
    (options, shear)
}

#[test]
fn a_parameter_that_trades_with_a_pinned_one_is_not_given_an_interval() {
    // A first-order (Dahl) law fitted with the second-order law: f2/f1 goes to 0, where the
    // law is a Dahl law of length eta·eps_f, so eta and eps_f are not measured apart. One of
    // them is pinned (at a bound, or as not identified); the other's interval, computed with
    // it held at its pinned value, was reported as measured (shear seed 1: eps_f pinned as
    // not identified, eta = 0.118 [0.115, 0.121]; on all 6 curves). Neither has an interval
    // now, and where the combination is named it is eta·eps_f, covering the true Dahl length.
    let (options, shear) = dahl_shear_fitted_as_bs2();
    let (mut named, mut covered) = (0, 0);
    for (law, test, eps_f) in [
        (shear, KesTest::Shear, 0.03),
        (dahl_tensile_law(), KesTest::Tensile, 0.003),
    ] {
        for seed in 1..=3 {
            let curve = with_uniform_noise(curve_of(&law, test, 1000), 0.005, seed);
            let fit = fit_curve(&curve, &options);
            let tag = format!("{test} seed {seed}");
            assert!(fit.is_fitted(), "{tag}: {:?}", fit.status);
            let (eta, length) = (estimate(&fit, Param::Eta), estimate(&fit, Param::EpsF));
            assert!(
                eta.interval95.is_none() || length.interval95.is_none(),
                "{tag}: eta {:?}, eps_f {:?}",
                eta.interval95,
                length.interval95
            );
            if length.pinned.is_some() {
                assert!(
                    eta.not_identified && eta.interval95.is_none(),
                    "{tag}: eps_f pinned, eta {:?}",
                    eta.interval95
                );
            }
            for p in [eta, length] {
                if let Some((name, _, lo, hi)) =
                    p.interval_note.as_deref().and_then(measured_combination)
                {
                    assert!(name == "eta*eps_f" || name == "eps_f*eta", "{tag}: {name}");
                    covered += usize::from(lo <= eps_f && eps_f <= hi);
                    named += 1;
                }
            }
        }
    }
    assert!(named >= 4, "the combination was named {named} times");
    assert!(
        covered + 1 >= named,
        "eta*eps_f covers the true length on {covered} of {named}"
    );
}

#[test]
fn an_interval_that_reaches_a_bound_is_clipped_and_says_which_law_is_within_it() {
    // a Dahl law fitted with the second-order law: where f2/f1 is not pinned at 0, its Wald
    // interval went below 0 ([−0.027, 0.110] on the tensile curve of seed 3; [−0.089, 0.172]
    // with the pinned eps_f freed) and was reported as fitted; it is now clipped at 0 and says the first-order law is within it. No interval
    // of a positive parameter goes below 0.
    let (options, shear) = dahl_shear_fitted_as_bs2();
    let mut reached = 0;
    for (law, test) in [
        (shear, KesTest::Shear),
        (dahl_tensile_law(), KesTest::Tensile),
    ] {
        for seed in 1..=3 {
            let curve = with_uniform_noise(curve_of(&law, test, 1000), 0.005, seed);
            let fit = fit_curve(&curve, &options);
            for p in &fit.params {
                if let Some([lo, hi]) = p.interval95 {
                    assert!(lo <= hi, "{test} seed {seed} {}: [{lo}, {hi}]", p.name);
                    let positive = matches!(
                        p.param,
                        Param::Level | Param::Mu | Param::Ratio | Param::K | Param::EpsF
                    );
                    assert!(
                        !positive || lo >= 0.0,
                        "{test} seed {seed} {}: [{lo}, {hi}]",
                        p.name
                    );
                }
            }
            let ratio = estimate(&fit, Param::Ratio);
            if let Some([lo, hi]) = ratio.interval95 {
                if lo == 0.0 {
                    reached += 1;
                    let note = ratio.interval_note.as_deref().unwrap_or_default();
                    assert!(
                        note.contains("reaches the lower bound ratio = 0") && note.contains("Dahl"),
                        "{test} seed {seed}: {note}"
                    );
                }
                assert!(lo <= 0.0 && 0.0 <= hi, "{test} seed {seed}: [{lo}, {hi}]");
            }
        }
    }
    assert!(
        reached >= 1,
        "f2/f1's interval reached 0 on {reached} curves"
    );
    // a measured curve whose second-order law has no pin: wool suiting's bending weft, whose
    // f2/f1 interval went to 1.5 (the law stops at 0.95) and eps_f's beyond the strain range
    let curves = kes_fabric("wool-suiting");
    let bending = curves
        .iter()
        .find(|c| c.test == KesTest::Bending && c.direction == Direction::Weft)
        .expect("wool suiting has a bending weft curve");
    let fit = fit_curve(bending, &FitOptions::default());
    let ratio = estimate(&fit, Param::Ratio);
    assert_eq!(
        ratio.interval95.map(|[_, hi]| hi),
        Some(0.95),
        "{:?}",
        ratio.interval95
    );
    assert!(
        ratio
            .interval_note
            .as_deref()
            .is_some_and(|n| n.contains("reaches the upper bound ratio = 9.5000e-1")),
        "{:?}",
        ratio.interval_note
    );
}

/// An interval that spans every value the law allows says nothing of the value: the
/// parameter is reported not identified, with the interval in its note, not "fitted" with
/// the whole range as its interval. On the sample fabrics' curves (auto laws), no reported
/// interval of μ [0, 0.99], η [0.01, 0.99] or f2/f1 [0, 0.95] runs from one bound to the
/// other; the cotton shirting shear curves' second-order shape (η, f2/f1) is such a case.
#[test]
fn an_interval_over_the_whole_range_the_law_allows_is_not_identified() {
    let range = |p: Param| match p {
        Param::Mu => Some((0.0, 0.99)),
        Param::Eta => Some((0.01, 0.99)),
        Param::Ratio => Some((0.0, 0.95)),
        _ => None,
    };
    let mut whole = 0;
    for slug in [
        "cotton-shirting",
        "polyester-georgette",
        "silk-crepe",
        "wool-suiting",
    ] {
        for curve in kes_fabric(slug) {
            let fit = fit_curve(&curve, &FitOptions::default());
            for p in &fit.params {
                let Some((lo, hi)) = range(p.param) else {
                    continue;
                };
                if let Some([a, b]) = p.interval95 {
                    assert!(
                        !(a <= lo + 1e-12 && b >= hi - 1e-12),
                        "{slug} {} {}: [{a}, {b}] is the whole range",
                        curve.test,
                        p.name
                    );
                }
                if p.interval_note
                    .as_deref()
                    .is_some_and(|n| n.contains("spans the whole range"))
                {
                    assert!(p.not_identified && p.interval95.is_none() && p.std_error.is_none());
                    whole += 1;
                }
            }
            if slug == "cotton-shirting" && curve.test == KesTest::Shear {
                for param in [Param::Eta, Param::Ratio] {
                    let p = estimate(&fit, param);
                    assert!(p.not_identified, "{} {}", curve.direction, p.name);
                    assert!(
                        p.interval_note
                            .as_deref()
                            .is_some_and(|n| n.contains("spans the whole range")),
                        "{:?}",
                        p.interval_note
                    );
                }
            }
        }
    }
    assert!(whole >= 4, "{whole}");
}

/// ε_f's upper bound in the fit is its limit (the whole strain range), not a bound of the law:
/// an interval past it is not clipped there, and says the curve does not bound ε_f from above
/// (wool suiting bending weft: the Wald interval reaches 732 1/m, the limit 500).
#[test]
fn an_eps_f_interval_past_the_fits_limit_is_not_clipped_to_it() {
    let curve = kes_fabric("wool-suiting")
        .into_iter()
        .find(|c| c.test == KesTest::Bending && c.direction == Direction::Weft)
        .expect("wool bending weft");
    let fit = fit_curve(&curve, &FitOptions::default());
    let eps_f = estimate(&fit, Param::EpsF);
    let note = eps_f.interval_note.as_deref().unwrap_or_default();
    assert!(note.contains("past the fit's limit"), "{note}");
    let limit: f64 = note
        .split("eps_f = ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("the limit in the note");
    let [_, hi] = eps_f.interval95.expect("an interval");
    assert!(hi > limit, "{hi} against the limit {limit}");
}
