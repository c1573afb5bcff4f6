//! Friction shapes against closed forms and invariants (docs/model.md, friction).

use kestrel::friction::{FrictionShape, UnitFriction};
use proptest::prelude::*;

/// A unit friction state of a shape scaled by a level: the force is `level · z`.
struct Friction {
    shape: FrictionShape,
    level: f64,
    state: UnitFriction,
}

impl Friction {
    fn advance(&mut self, d_strain: f64) {
        self.state.advance(&self.shape, d_strain);
    }

    fn force(&self) -> f64 {
        self.level * self.state.z()
    }
}

fn dahl(f_c: f64, eps_f: f64, alpha: f64) -> Friction {
    let shape = FrictionShape::Dahl { eps_f, alpha };
    shape.validate().unwrap();
    Friction {
        shape,
        level: f_c,
        state: UnitFriction::virgin(),
    }
}

/// Bliman–Sorine second order with peak level f₁ and slow level f₂ (r = f₂/f₁).
fn bs2(f1: f64, f2: f64, eps_f: f64, eta: f64) -> Friction {
    let shape = FrictionShape::Bs2 {
        eps_f,
        eta,
        ratio: f2 / f1,
    };
    shape.validate().unwrap();
    Friction {
        shape,
        level: f1,
        state: UnitFriction::virgin(),
    }
}

/// Drives a friction state through `path` (absolute strains from 0) and returns the forces.
fn drive(op: &mut Friction, path: &[f64]) -> Vec<f64> {
    let mut x = 0.0;
    path.iter()
        .map(|&p| {
            op.advance(p - x);
            x = p;
            op.force()
        })
        .collect()
}

/// Work ∮F dx along a path sampled finely (each given segment cut in `n` sub-steps).
fn work(op: &mut Friction, path: &[f64], n: usize) -> f64 {
    let mut x = 0.0;
    let mut f = op.force();
    let mut w = 0.0;
    for &p in path {
        let dx = (p - x) / n as f64;
        for _ in 0..n {
            op.advance(dx);
            let f2 = op.force();
            w += 0.5 * (f + f2) * dx;
            f = f2;
        }
        x = p;
    }
    w
}

#[test]
fn dahl_closed_form_on_a_monotone_segment() {
    // F(s) = v F_c + (F0 − v F_c) e^(−s/ε_f), from a state F0 set by a first stroke.
    let (f_c, eps_f) = (2.5, 0.004);
    let mut op = dahl(f_c, eps_f, 1.0);
    op.advance(0.003); // F0 > 0
    let f0 = op.force();
    let v = -1.0;
    let mut s = 0.0;
    for _ in 0..500 {
        op.advance(-0.00005);
        s += 0.00005;
        let expected = v * f_c + (f0 - v * f_c) * (-s / eps_f).exp();
        assert!((op.force() - expected).abs() < 1e-12, "s={s}");
    }
}

#[test]
fn bliman_sorine_first_order_is_dahl_alpha_one() {
    // Bliman–Sorine second order without its slow state (f₂ = 0) is the first order: one
    // state relaxing over η ε_f = 0.01 to the level f₁, i.e. Dahl with α = 1.
    let mut a = dahl(1.7, 0.01, 1.0);
    let mut b = bs2(1.7, 0.0, 0.02, 0.5);
    let path: Vec<f64> = (0..400).map(|i| 0.05 * (i as f64 * 0.05).sin()).collect();
    let fa = drive(&mut a, &path);
    let fb = drive(&mut b, &path);
    for (x, y) in fa.iter().zip(&fb) {
        assert!((x - y).abs() < 1e-14);
    }
}

#[test]
fn rate_independent_coarse_fine_and_two_speeds() {
    // Same reversal points, sampled with 10 and with 1000 points per stroke, and the
    // "slow" run dwelling (repeated samples) as a slower instrument would: forces at the
    // reversal points agree to rounding.
    let reversals = [0.02, -0.015, 0.01, -0.004, 0.018];
    let sample = |per_stroke: usize, dwell: usize| {
        let mut path = Vec::new();
        let mut x0 = 0.0;
        for &r in &reversals {
            for k in 1..=per_stroke {
                let x = x0 + (r - x0) * k as f64 / per_stroke as f64;
                for _ in 0..dwell {
                    path.push(x);
                }
            }
            x0 = r;
        }
        path
    };
    let ops: Vec<Box<dyn Fn() -> Friction>> = vec![
        Box::new(|| dahl(1.0, 0.003, 1.0)),
        Box::new(|| dahl(1.0, 0.003, 2.5)),
        Box::new(|| bs2(1.0, 0.4, 0.004, 0.2)),
    ];
    for make in &ops {
        let coarse = drive(&mut make(), &sample(10, 1));
        let fine = drive(&mut make(), &sample(1000, 1));
        let slow = drive(&mut make(), &sample(10, 3));
        for (i, _) in reversals.iter().enumerate() {
            let c = coarse[(i + 1) * 10 - 1];
            let f = fine[(i + 1) * 1000 - 1];
            let s = slow[(i + 1) * 30 - 1];
            assert!((c - f).abs() < 1e-9, "reversal {i}: {c} vs {f}");
            assert!((c - s).abs() < 1e-12, "reversal {i}: {c} vs {s}");
        }
    }
}

#[test]
fn coulomb_limit_as_eps_f_goes_to_zero() {
    // Away from the reversals (distance ≥ 1e-3) the force tends to F_c·sign(dε).
    let path: Vec<f64> = (0..4000)
        .map(|i| 0.01 * (i as f64 * std::f64::consts::PI / 1000.0).sin())
        .collect();
    let mut previous = f64::INFINITY;
    for eps_f in [1e-3, 1e-4, 1e-5, 1e-6] {
        let f = drive(&mut dahl(1.0, eps_f, 1.0), &path);
        let mut worst: f64 = 0.0;
        for i in 1..path.len() {
            let dx = path[i] - path[i - 1];
            // skip samples within 1e-3 of a turning point of the sine
            if path[i].abs() > 0.0099 {
                continue;
            }
            worst = worst.max((f[i] - dx.signum()).abs());
        }
        assert!(worst < previous, "eps_f={eps_f}: {worst} !< {previous}");
        previous = worst;
    }
    assert!(previous < 1e-10, "{previous}");
}

#[test]
fn second_order_overshoots_then_settles_on_kinetic_level() {
    let mut op = bs2(1.0, 0.4, 0.01, 0.1);
    // long slide down: settle on −(f1 − f2)
    for _ in 0..1000 {
        op.advance(-0.0005);
    }
    assert!((op.force() + 0.6).abs() < 1e-9, "{}", op.force());
    // reversal: the force rises above f1 − f2 first, then comes back to it
    let mut peak = f64::NEG_INFINITY;
    for _ in 0..2000 {
        op.advance(0.0001);
        peak = peak.max(op.force());
    }
    assert!(peak > 0.6 + 0.05, "no stiction peak: {peak}");
    // |z₁| ≤ 1 and |z₂| ≤ f₂/f₁: the peak stays below f₁ + f₂
    assert!(peak <= 1.4 + 1e-12, "peak above f1 + f2: {peak}");
    for _ in 0..5000 {
        op.advance(0.0001);
    }
    assert!((op.force() - 0.6).abs() < 1e-9, "{}", op.force());
}

fn random_path() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-0.05f64..0.05, 2..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn dahl_force_is_bounded_by_coulomb_level(
        path in random_path(), f_c in 0.1f64..10.0, eps_f in 1e-4f64..0.05, alpha in 1.0f64..4.0
    ) {
        let mut op = dahl(f_c, eps_f, alpha);
        let mut x = 0.0;
        for &p in &path {
            for k in 1..=50 {
                op.advance((p - x) / 50.0);
                prop_assert!(op.force().abs() <= f_c * (1.0 + 1e-12));
                let _ = k;
            }
            x = p;
        }
    }

    #[test]
    fn closed_cycles_dissipate(
        mut path in random_path(), eps_f in 1e-4f64..0.05, alpha in 1.0f64..3.0,
        eta in 0.05f64..0.95, ratio in 0.0f64..0.9
    ) {
        // close the cycle: back to the start (0)
        path.push(0.0);
        let w = work(&mut dahl(1.0, eps_f, alpha), &path, 400);
        prop_assert!(w >= -1e-9, "Dahl work {w}");
        let w2 = work(&mut bs2(1.0, ratio, eps_f, eta), &path, 400);
        prop_assert!(w2 >= -1e-9, "BS2 work {w2}");
    }
}
