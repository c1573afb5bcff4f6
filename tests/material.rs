//! Connector laws per unit width: toe closed forms, continuity, bounds, dissipation (docs/model.md, connector laws).

use kestrel::friction::FrictionShape;
use kestrel::material::{
    friction_part, law_friction, BendingLaw, FrictionLaw, LawState, MaterialLaw, ShearLaw,
    TractionLaw,
};
use proptest::prelude::*;

use crate::fit::{curve_of, known_laws};

fn traction(mu: f64, eps1_aligned: Option<f64>) -> TractionLaw {
    let law = TractionLaw {
        k_t: 2000.0,
        eps1: 0.03,
        f1: 40.0, // between k_t ε₁/2 = 30 and k_t ε₁ = 60
        eps1_aligned,
        toe: Default::default(),
        friction: FrictionLaw {
            level: 2.0,
            mu,
            shape: FrictionShape::Dahl {
                eps_f: 0.002,
                alpha: 1.0,
            },
        },
    };
    law.validate().unwrap();
    law
}

#[test]
fn toe_meets_the_line_at_eps_c_with_force_f1_and_slope_k_t() {
    let law = traction(0.0, None);
    let s = LawState::default();
    let e = law.eps1;
    assert!((law.elastic(&s, e) - law.f1).abs() < 1e-12);
    let h = 1e-7;
    let left = (law.elastic(&s, e) - law.elastic(&s, e - h)) / h;
    let right = (law.elastic(&s, e + h) - law.elastic(&s, e)) / h;
    assert!((left - law.k_t).abs() < 1e-3 * law.k_t, "{left}");
    assert!((right - law.k_t).abs() < 1e-6 * law.k_t, "{right}");
    // slope at the origin 2F₁/ε₁ − k_t ≥ 0, and no compression
    let slope0 = (law.elastic(&s, h) - law.elastic(&s, 0.0)) / h;
    assert!((slope0 - (2.0 * law.f1 / law.eps1 - law.k_t)).abs() < 1e-4 * law.k_t);
    assert_eq!(law.elastic(&s, -0.01), 0.0);
}

#[test]
fn aligned_toe_keeps_the_line_and_meets_it_at_eps1_aligned() {
    let law = traction(0.0, Some(0.02));
    let aligned = LawState {
        aligned: true,
        ..LawState::default()
    };
    let virgin = LawState::default();
    // same line beyond ε₁
    for e in [0.03, 0.05, 0.1] {
        assert!((law.elastic(&aligned, e) - law.elastic(&virgin, e)).abs() < 1e-9);
    }
    // F₁' = F₁ − k_t(ε₁ − ε₁') at ε₁'
    let f1a = 40.0 - 2000.0 * 0.01;
    assert!((law.elastic(&aligned, 0.02) - f1a).abs() < 1e-12);
    // out-of-bound aligned toe refused
    let mut bad = law;
    bad.eps1_aligned = Some(0.005);
    assert_eq!(bad.validate().unwrap_err().field, "eps1_aligned");
}

#[test]
fn load_dependent_level_widens_the_loop_with_load() {
    // With μ > 0 the loop half-width at high load exceeds F_c0.
    let law = traction(0.3, Some(0.025));
    let up: Vec<f64> = (0..=400).map(|i| 0.08 * i as f64 / 400.0).collect();
    let down: Vec<f64> = (0..=400).map(|i| 0.08 - 0.04 * i as f64 / 400.0).collect();
    let path: Vec<f64> = up.iter().chain(down.iter().skip(1)).copied().collect();
    let f = law.drive(&path);
    // at ε = 0.06: loading index 300, unloading index 400 + 200
    let width = f[300] - f[600];
    let f_el = 2000.0 * (0.06 - 0.03) + 40.0;
    let expected = 2.0 * (2.0 + 0.3 * f_el);
    assert!(
        (width - expected).abs() < 0.01 * expected,
        "{width} vs {expected}"
    );
}

/// The path from 0 through each reversal point in `per_leg` equal steps a leg.
fn refined(path: &[f64], per_leg: usize) -> Vec<f64> {
    let mut x = 0.0;
    let mut out = Vec::with_capacity(path.len() * per_leg);
    for &p in path {
        out.extend((1..=per_leg).map(|k| x + (p - x) * k as f64 / per_leg as f64));
        x = p;
    }
    out
}

fn random_path() -> impl Strategy<Value = Vec<f64>> {
    // reversal points crossing the toe, the switch at ε₁ and compression
    prop::collection::vec(-0.01f64..0.08, 2..10)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn traction_force_is_continuous_along_random_paths(
        path in random_path(), mu in 0.0f64..0.6, ea in 0.021f64..0.03, power in any::<bool>()
    ) {
        // |ΔF| ≤ L|Δε| with L = k_t(1+μ) + 2·(F_c0 + μ F_el,max)/ε_f (|dz/ds| ≤ 2/ε_f)
        let mut law = traction(mu, Some(ea));
        if power {
            law.toe = kestrel::material::ToeShape::Power;
            law.validate().unwrap();
        }
        let f_el_max = law.k_t * 0.08;
        let lip = law.k_t * (1.0 + mu) + 2.0 * (2.0 + mu * f_el_max) / 0.002;
        let mut state = LawState::default();
        let mut f = 0.0;
        for xn in refined(&path, 300) {
            let (next, fnew) = law.trial(&state, xn);
            let dx = (xn - state.strain).abs();
            prop_assert!((fnew - f).abs() <= lip * dx * (1.0 + 1e-9) + 1e-12,
                "jump {} over dx {} at x {}", fnew - f, dx, xn);
            state = next;
            f = fnew;
        }
    }

    #[test]
    fn traction_path_is_sampling_independent(path in random_path(), mu in 0.0f64..0.6) {
        // the force at each reversal point does not depend on how finely the path is cut,
        // including across the alignment switch
        let law = traction(mu, Some(0.024));
        let mut coarse = LawState::default();
        let mut fine = LawState::default();
        let mut x = 0.0;
        for &p in &path {
            let (c, fc) = law.trial(&coarse, p);
            coarse = c;
            let mut ff = 0.0;
            for k in 1..=200 {
                let (n, f) = law.trial(&fine, x + (p - x) * k as f64 / 200.0);
                fine = n;
                ff = f;
            }
            prop_assert!((fc - ff).abs() < 1e-8 * (1.0 + fc.abs()), "{fc} vs {ff}");
            x = p;
        }
    }

    #[test]
    fn bending_and_shear_cycles_dissipate(
        mut path in prop::collection::vec(-0.2f64..0.2, 2..10), mu in 0.0f64..0.9,
        eta in 0.05f64..0.95, ratio in 0.0f64..0.9
    ) {
        path.push(0.0);
        let friction = FrictionLaw {
            level: 0.5, mu, shape: FrictionShape::Bs2 { eps_f: 0.01, eta, ratio },
        };
        let bending = BendingLaw { k_b: 3.0, k0: 0.0, friction };
        let shear = ShearLaw {
            k_s: 10.0, theta0: 0.0,
            friction: FrictionLaw { shape: FrictionShape::Dahl { eps_f: 0.01, alpha: 1.5 }, ..friction },
        };
        for law in [&bending as &dyn MaterialLaw, &shear as &dyn MaterialLaw] {
            let mut state = LawState::default();
            let mut f = 0.0;
            let mut w = 0.0;
            for xn in refined(&path, 400) {
                let (n, fnew) = law.trial(&state, xn);
                w += 0.5 * (f + fnew) * (xn - state.strain);
                state = n;
                f = fnew;
            }
            prop_assert!(w >= -1e-9, "work {w}");
        }
    }
}

#[test]
fn power_toe_meets_the_line_and_matches_the_quadratic_at_the_bounds() {
    use kestrel::material::ToeShape;
    let s = LawState::default();
    let mut law = traction(0.0, None);
    law.toe = ToeShape::Power;
    law.f1 = 20.0; // n = k_t ε₁ / F₁ = 3: a J-shaped toe the quadratic cannot make
    law.validate().unwrap();
    let e = law.eps1;
    assert!((law.elastic(&s, e) - law.f1).abs() < 1e-12);
    let h = 1e-7;
    let left = (law.elastic(&s, e) - law.elastic(&s, e - h)) / h;
    assert!((left - law.k_t).abs() < 1e-3 * law.k_t, "{left}");
    // closed form F₁ (ε/ε₁)^3
    assert!((law.elastic(&s, 0.015) - 20.0 * 0.125).abs() < 1e-12);
    // at F₁ = k_t ε₁/2 both toes are F₁(ε/ε₁)²
    let mut quad = traction(0.0, None);
    quad.f1 = 30.0;
    let mut pow = quad;
    pow.toe = ToeShape::Power;
    for eps in [0.003, 0.01, 0.02, 0.029] {
        assert!((quad.elastic(&s, eps) - pow.elastic(&s, eps)).abs() < 1e-9);
    }
    // F₁ above k_t ε₁ is refused for both
    pow.f1 = 61.0;
    assert_eq!(pow.validate().unwrap_err().field, "f1");
}

/// The slope the cloth's tangent takes with the force, n·F_el/ε on the power toe, against the
/// closed form of F₁(ε/ε₁)³ (n = 3): dF/dε = 3F₁ε²/ε₁³; k_t on the line, 0 in compression.
/// The tangent's force is the trial's.
#[test]
fn power_toe_slope_from_the_force_is_the_closed_form() {
    use kestrel::material::ToeShape;
    let s = LawState::default();
    let mut law = traction(0.3, None);
    law.toe = ToeShape::Power;
    law.f1 = 20.0;
    law.validate().unwrap();
    let e1 = law.eps1;
    for eps in [1e-6, 0.003, 0.015, 0.0299] {
        let (f, slope) = law.elastic_and_slope(&s, eps);
        let (f_exact, slope_exact) = (20.0 * (eps / e1).powi(3), 60.0 * eps * eps / e1.powi(3));
        assert!((f - f_exact).abs() <= 1e-13 * f_exact, "{eps}: {f}");
        assert!(
            (slope - slope_exact).abs() <= 1e-13 * slope_exact,
            "{eps}: {slope}"
        );
    }
    assert_eq!(
        law.elastic_and_slope(&s, 0.04),
        (20.0 + 2000.0 * 0.01, 2000.0)
    );
    assert_eq!(law.elastic_and_slope(&s, -0.01), (0.0, 0.0));
    let (next, force) = law.trial(&s, 0.02);
    let (tau, f) = law.tangent(&s, &next, 0.02);
    assert_eq!(f, force);
    assert!(tau > 0.0, "{tau}");
}

#[test]
fn friction_part_of_a_laws_own_curve_is_its_friction_force() {
    for (law, test) in known_laws(true, 0.2) {
        let x = curve_of(&law, test, 600).x;
        let total: Vec<f64> = law.drive(&x).iter().map(|f| f + 0.3).collect();
        let part = friction_part(&law, &x, &total, 0.3);
        let own = law_friction(&law, &x);
        for (a, b) in part.iter().zip(&own) {
            assert!((a - b).abs() < 1e-9 * (1.0 + b.abs()), "{test}: {a} vs {b}");
        }
    }
}
