//! The laws' own checks: parameter bounds and their messages.

use super::*;

fn dahl(level: f64, eps_f: f64) -> FrictionLaw {
    FrictionLaw {
        level,
        mu: 0.0,
        shape: FrictionShape::Dahl { eps_f, alpha: 1.0 },
    }
}

#[test]
fn toe_bound_is_enforced_with_its_numbers() {
    let law = TractionLaw {
        k_t: 1000.0,
        eps1: 0.02,
        f1: 5.0,
        eps1_aligned: None,
        friction: dahl(1.0, 0.001),
        toe: ToeShape::Quadratic,
    };
    let e = law.validate().unwrap_err();
    assert_eq!(e.field, "f1");
    assert!(
        e.to_string().contains("10.000000 <= f1 <= 20.000000"),
        "{e}"
    );
}

#[test]
fn mu_out_of_range_is_refused() {
    let mut f = dahl(1.0, 0.01);
    f.mu = 1.0;
    assert_eq!(f.validate().unwrap_err().field, "friction.mu");
}
