//! Tests of the least-squares problem: the analytic Jacobian and ∂p/∂q against central
//! differences, and a coordinate the curve does not determine.

use super::*;
use crate::fit::coords::{law_kind, Param};
use crate::fit::estimate::CurveRanges;
use crate::fit::path_model::ShapeKind;
use crate::kes::KesTest;

/// Central differences of the residual vector, one column per coordinate θ_j (two residual
/// evaluations a column; truncation O(h²) ≈ 1e-10 of the scale at h = 1e-5).
fn central_differences(problem: &mut PathProblem) -> DMatrix<f64> {
    let theta = problem.params();
    let m = problem.residuals().unwrap().len();
    let mut jacobian = DMatrix::zeros(m, theta.len());
    for j in 0..theta.len() {
        let h = 1e-5 * theta[j].abs().max(1.0);
        let mut at = |t: f64| {
            let mut moved = theta.clone();
            moved[j] = t;
            problem.set_params(&moved);
            problem.residuals().unwrap()
        };
        let column = (at(theta[j] + h) - at(theta[j] - h)) / (2.0 * h);
        jacobian.set_column(j, &column);
    }
    problem.set_params(&theta);
    jacobian
}

/// A tensile Dahl law with a toe: the parameters both tests start from.
fn tensile_params() -> P {
    let mut p: P = [0.0; idx::N];
    for (k, v) in [
        (Param::K, 1000.0),
        (Param::Eps1, 0.03),
        (Param::F1, 22.0),
        (Param::Eps1Aligned, 0.024),
        (Param::Level, 1.5),
        (Param::EpsF, 0.004),
        (Param::Alpha, 1.0),
    ] {
        p[k] = v;
    }
    p
}

#[test]
fn analytic_jacobian_matches_central_differences_of_the_residuals() {
    // a tensile-like path with a return below ε₁ and a second loading
    let mut x: Vec<f64> = (0..=120).map(|i| 0.06 * i as f64 / 120.0).collect();
    x.extend((1..=80).map(|i| 0.06 - 0.05 * i as f64 / 80.0));
    x.extend((1..=60).map(|i| 0.01 + 0.03 * i as f64 / 60.0));
    for (elastic_test, shape, alpha_free, power) in [
        (KesTest::Tensile, ShapeKind::Dahl, false, false),
        (KesTest::Tensile, ShapeKind::Bs2, false, false),
        (KesTest::Tensile, ShapeKind::Dahl, false, true),
        (KesTest::Tensile, ShapeKind::Bs2, false, true),
        (KesTest::Tensile, ShapeKind::Dahl, true, true),
        (KesTest::Shear, ShapeKind::Dahl, true, false),
        (KesTest::Bending, ShapeKind::Bs2, false, false),
    ] {
        let kind = law_kind(elastic_test, shape, power);
        let mut p = tensile_params();
        p[Param::Mu] = 0.2;
        p[Param::Alpha] = if alpha_free { 1.6 } else { 1.0 };
        p[Param::Eta] = 0.3;
        p[Param::Ratio] = 0.4;
        p[Param::Offset] = 0.1;
        let mut y = vec![0.0; x.len()];
        simulate(kind, &p, &x, &mut y);
        let ranges = CurveRanges::of(&x, &y);
        // perturb the start so the Jacobian is not taken at the optimum
        let mut p0 = p;
        p0[Param::K] *= 1.1;
        p0[Param::Level] *= 0.8;
        p0[Param::EpsF] *= 1.3;
        let coords = Coordinates::new(kind, elastic_test, &p0, &ranges, alpha_free, true, true);
        if power {
            // every toe coordinate is free, so ∂p/∂(φ, ψ) of the power toe is exercised
            assert!(coords.free.contains(&Param::F1));
            assert!(coords.free.contains(&Param::Eps1Aligned));
        }
        let mut problem = PathProblem::new(coords, &x, &y, ranges.y_range());
        let analytic = problem.jacobian().unwrap();
        let numeric = central_differences(&mut problem);
        let scale = analytic.amax().max(1.0);
        let diff = (&analytic - &numeric).amax();
        assert!(
            diff < 1e-5 * scale,
            "{elastic_test} {shape:?} power toe {power}: max difference {diff} (scale {scale})"
        );
    }
}

#[test]
fn analytic_dp_dq_matches_central_differences() {
    let ranges = CurveRanges {
        x_min: 0.0,
        x_max: 0.06,
        y_min: 0.0,
        y_max: 60.0,
    };
    let p = tensile_params();
    for power in [false, true] {
        let kind = law_kind(KesTest::Tensile, ShapeKind::Dahl, power);
        let coords = Coordinates::new(kind, KesTest::Tensile, &p, &ranges, false, true, true);
        for (g, &j) in coords.dp_dq().iter().zip(&coords.free) {
            let h = 1e-7 * (coords.hi[j] - coords.lo[j]);
            let (mut qp, mut qm) = (coords.q, coords.q);
            qp[j] += h;
            qm[j] -= h;
            let (pp, pm) = (coords.physical(&qp), coords.physical(&qm));
            for i in Param::ALL {
                let numeric = (pp[i] - pm[i]) / (2.0 * h);
                assert!(
                    (numeric - g[i]).abs() <= 1e-6 * (1.0 + g[i].abs()),
                    "power toe {power}: ∂{i:?}/∂{j:?} = {} vs {numeric}",
                    g[i]
                );
            }
        }
    }
}

/// Coordinates at `p` for a shear Dahl law along `x`: the forces of the law plus a
/// wobble (residuals, so s² > 0), every coordinate of `free` free.
fn shear_report(p: &P, x: &[f64], alpha_free: bool, offset: bool) -> crate::fit::CurveFit {
    let kind = law_kind(KesTest::Shear, ShapeKind::Dahl, false);
    let mut y = vec![0.0; x.len()];
    simulate(kind, p, x, &mut y);
    y.iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v += 1e-3 * (i as f64 * 1.7).sin());
    let ranges = CurveRanges::of(x, &y);
    let mut coords = Coordinates::new(kind, KesTest::Shear, p, &ranges, alpha_free, false, offset);
    coords.q = *p;
    let curve = crate::kes::Curve {
        fabric: "f".into(),
        test: KesTest::Shear,
        direction: crate::kes::Direction::Warp,
        x: x.to_vec(),
        y,
        metadata: Default::default(),
        source: None,
        sha256: None,
    };
    let problem = PathProblem::new(coords, x, &curve.y, ranges.y_range());
    let solution = problem.solution(Termination::NotRun, 0, 0);
    crate::fit::report::build(
        &[&curve],
        &solution,
        "t".into(),
        &[],
        std::time::Duration::ZERO,
        None,
    )
}

#[test]
fn a_coordinate_the_curve_does_not_determine_is_not_identified_not_a_number() {
    let mut p: P = [0.0; idx::N];
    p[Param::K] = 60.0;
    p[Param::Level] = 0.8;
    p[Param::EpsF] = 0.01;
    p[Param::Alpha] = 1.0;
    // a loop: every coordinate identified, a standard error for each
    let x: Vec<f64> = (0..=200)
        .map(|i| 0.14 * (i as f64 * std::f64::consts::PI / 50.0).sin())
        .collect();
    let fit = shear_report(&p, &x, false, true);
    for e in &fit.params {
        let fixed = e.pinned.is_some();
        assert!(!e.not_identified, "{}", e.name);
        assert!(fixed || e.std_error.is_some_and(|s| s > 0.0), "{}", e.name);
    }
    // a path that only rises, the friction saturated within the first step: the level
    // and a zero offset change the curve in the same way (correlation ±1)
    p[Param::EpsF] = 1e-9;
    p[Param::Offset] = 0.0;
    let x: Vec<f64> = (1..=200).map(|i| 1e-3 * i as f64).collect();
    let fit = shear_report(&p, &x, false, true);
    let get = |name: &str| fit.params.iter().find(|e| e.name == name).unwrap().clone();
    for name in ["level", "offset"] {
        let e = get(name);
        assert!(e.not_identified && e.std_error.is_none(), "{name}: {e:?}");
    }
    assert!(get("k_s")
        .std_error
        .is_some_and(|s| s > 0.0 && s.is_finite()));
    assert!(!fit
        .correlations
        .iter()
        .any(|(a, b, _)| a == "level" || b == "level"));
    let c = fit.correlation.as_ref().unwrap();
    assert!(c.names.iter().all(|n| n != "level" && n != "offset"));
}
