//! Implicit solvers: Broyden against Newton–Krylov, the stretch preconditioner, step
//! halving, blow-up reports.

use kestrel::cloth::{
    ClothError, ClothPipeline, ClothWorld, Integrator, Preconditioner, StepParameters, MAX_HALVINGS,
};

use super::{kes_world, spring_world};

#[test]
fn broyden_and_newton_krylov_agree_on_a_step() {
    let mut start = kes_world(8, 8, 0.02);
    start.pin(0, 0).unwrap();
    start.pin(7, 0).unwrap();
    let mut pipeline = ClothPipeline::new();
    let params = StepParameters::new(Integrator::Broyden, 1e-3);
    for _ in 0..10 {
        pipeline.step(&params, &mut start).unwrap();
    }
    let mut results = Vec::new();
    for integrator in [Integrator::Broyden, Integrator::NewtonKrylov] {
        let mut world = start.clone();
        let mut params = StepParameters::new(integrator, 1e-3);
        params.tolerance = 1e-12;
        params.max_iterations = 1000;
        params.forcing = 1e-3;
        params.memory = 60;
        let report = ClothPipeline::new().step(&params, &mut world).unwrap();
        assert!(report.solve.converged, "{integrator}: {:?}", report.solve);
        results.push(world.positions().to_vec());
    }
    let moved: f64 = results[0]
        .iter()
        .zip(start.positions())
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    let diff: f64 = results[0]
        .iter()
        .zip(&results[1])
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-7);
    assert!(
        diff < 1e-3 * moved,
        "differ by {diff} m for a step of {moved} m"
    );
}

/// The bench's sheet: n × n at 1 cm hanging in the xy plane by two corners, after 20 Broyden
/// steps of 1 ms (block-scaled) under its weight.
fn hanging_kes_sheet(n: usize) -> ClothWorld {
    let mut sheet = crate::common::hanging_kes_sheet(n);
    let mut params = StepParameters::new(Integrator::Broyden, 1e-3);
    params.preconditioner = Preconditioner::Block;
    let mut pipeline = ClothPipeline::new();
    for _ in 0..20 {
        pipeline.step(&params, &mut sheet).unwrap();
    }
    sheet
}

#[test]
fn stretch_preconditioned_broyden_converges_to_the_same_step_in_fewer_iterations() {
    let start = hanging_kes_sheet(16);
    let mut results = Vec::new();
    for pre in [Preconditioner::Block, Preconditioner::Stretch] {
        // the iterations at the default tolerance, x₁ at a tight one
        let mut params = StepParameters::new(Integrator::Broyden, 1e-3);
        params.preconditioner = pre;
        let mut world = start.clone();
        let report = ClothPipeline::new().step(&params, &mut world).unwrap();
        assert!(report.solve.converged, "{pre:?}: {:?}", report.solve);
        params.tolerance = 1e-13;
        params.max_iterations = 1000;
        params.memory = 60;
        let mut world = start.clone();
        let tight = ClothPipeline::new().step(&params, &mut world).unwrap();
        assert!(tight.solve.converged, "{pre:?}: {:?}", tight.solve);
        results.push((world.positions().to_vec(), report.solve.iterations));
    }
    let (block, stretch) = (&results[0], &results[1]);
    let moved: f64 = block
        .0
        .iter()
        .zip(start.positions())
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    let diff: f64 = block
        .0
        .iter()
        .zip(&stretch.0)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-6);
    // tight solves of the same equation: the roots agree far below the default 1e-8 m
    assert!(diff < 1e-9, "x₁ differ by {diff} m for a step of {moved} m");
    assert!(
        2 * stretch.1 <= block.1,
        "stretch {} iterations, block {}",
        stretch.1,
        block.1
    );
}

#[test]
fn an_unconverged_implicit_step_is_taken_again_as_two_halves() {
    let start = hanging_kes_sheet(12);
    let dt = 1e-3;
    let mut params = StepParameters::new(Integrator::Broyden, dt);
    params.preconditioner = Preconditioner::Block;
    // the reference: two half steps converged tightly (the default tolerance is on the
    // scaled residual; x₁ itself is then only good to ~1e-6 m on this stiff sheet)
    params.tolerance = 1e-12;
    params.memory = 60;
    params.max_iterations = 1000;
    let half = StepParameters {
        dt: dt / 2.0,
        ..params
    };
    let mut two_halves = start.clone();
    let mut pipeline = ClothPipeline::new();
    let mut half_iterations = 0;
    for _ in 0..2 {
        let r = pipeline.step(&half, &mut two_halves).unwrap();
        assert!(r.solve.converged && r.halvings == 0, "{r:?}");
        half_iterations = half_iterations.max(r.solve.iterations);
    }
    let full = ClothPipeline::new()
        .step(&params, &mut start.clone())
        .unwrap();
    assert!(full.solve.converged && full.halvings == 0);
    assert!(
        half_iterations < full.solve.iterations,
        "a half step takes {half_iterations} iterations, a whole one {}",
        full.solve.iterations
    );
    // too few iterations for a whole step, enough for a half one (its predictor differs
    // from the reference's: the number may move a little)
    let cap = (half_iterations + full.solve.iterations) / 2;
    eprintln!(
        "iterations: half {half_iterations}, whole {}",
        full.solve.iterations
    );
    let capped = StepParameters {
        max_iterations: cap,
        ..params
    };
    let mut world = start.clone();
    let report = ClothPipeline::new().step(&capped, &mut world).unwrap();
    assert_eq!(report.halvings, 1, "{report:?}");
    assert!(report.solve.converged, "{report:?}");
    // the failed attempt's work is counted
    assert!(report.solve.iterations >= cap + 2, "{report:?}");
    assert_eq!(world.steps, start.steps + 1);
    assert!((world.time - (start.time + dt)).abs() < 1e-15);
    let diff = world
        .positions()
        .iter()
        .zip(two_halves.positions())
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(
        diff < 1e-9,
        "the halved step is {diff} m from two half steps"
    );
    // the friction states were committed once per half step, as in the reference
    assert!(world.elastic_energy() > 0.0);
    assert!((world.elastic_energy() - two_halves.elastic_energy()).abs() < 1e-9);
    // at the finest level the best iterate is accepted and reported unconverged
    let starved = StepParameters {
        max_iterations: 1,
        ..params
    };
    let mut world = start.clone();
    let report = ClothPipeline::new().step(&starved, &mut world).unwrap();
    assert!(!report.solve.converged);
    assert_eq!(report.halvings, (1 << MAX_HALVINGS) - 1, "{report:?}");
    assert!((world.time - (start.time + dt)).abs() < 1e-15);
}

#[test]
fn blow_up_is_an_error_naming_step_time_and_connector() {
    let mut world = spring_world(9, 0.2, 5000.0);
    world.pin(0, 0).unwrap();
    let params = StepParameters::new(Integrator::Explicit, 0.01);
    let mut pipeline = ClothPipeline::new();
    let mut err = None;
    for _ in 0..1000 {
        if let Err(e) = pipeline.step(&params, &mut world) {
            err = Some(e);
            break;
        }
    }
    let Some(ClothError::BlowUp {
        step,
        time,
        connector,
        ..
    }) = &err
    else {
        panic!("no blow-up reported: {err:?}");
    };
    assert!(*step >= 1 && *step < 1000);
    assert!((time - *step as f64 * 0.01).abs() < 1e-9);
    assert!(connector.contains("structural") || connector.contains("shear"));
    let text = err.as_ref().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains(&format!("step {step}")), "{text}");
}

/// Every implicit method on the same step of the hanging 16 × 16 sheet, solved tightly: the
/// line-preconditioned Broyden and Newton–Krylov and the tangent Newton land on the root of
/// the stretch-preconditioned Broyden, and the tangent Newton takes at most 5 Newton
/// iterations to 1e-13 m where Broyden takes dozens.
#[test]
fn every_implicit_method_reaches_the_same_step() {
    let start = hanging_kes_sheet(16);
    let solve = |integrator: Integrator, pre: Preconditioner| {
        let mut params = StepParameters::new(integrator, 1e-3);
        params.preconditioner = pre;
        params.tolerance = 1e-13;
        params.max_iterations = 1000;
        params.memory = 60;
        params.forcing = 1e-4;
        let mut world = start.clone();
        let report = ClothPipeline::new().step(&params, &mut world).unwrap();
        assert!(
            report.solve.converged,
            "{integrator} {pre:?}: {:?}",
            report.solve
        );
        assert_eq!(report.halvings, 0, "{integrator} {pre:?}");
        (world.positions().to_vec(), report.solve)
    };
    let (reference, broyden) = solve(Integrator::Broyden, Preconditioner::Stretch);
    let moved: f64 = reference
        .iter()
        .zip(start.positions())
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-6);
    for (integrator, pre) in [
        (Integrator::Broyden, Preconditioner::Lines),
        (Integrator::NewtonKrylov, Preconditioner::Lines),
        (Integrator::NewtonTangent, Preconditioner::Stretch),
    ] {
        let (x, outcome) = solve(integrator, pre);
        let diff: f64 = x
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        assert!(
            diff < 1e-9,
            "{integrator} {pre:?}: {diff} m off, step {moved} m"
        );
        if integrator == Integrator::NewtonTangent {
            assert!(outcome.linear_iterations > 0);
            assert!(
                outcome.iterations <= 5 && outcome.iterations * 4 < broyden.iterations,
                "Newton {outcome:?}, Broyden {broyden:?}"
            );
        }
    }
}

/// The tangent Newton has the kes connectors' tangent only: a spring sheet is an error, not a
/// slow or diverging iteration.
#[test]
fn newton_tangent_refuses_a_material_without_its_tangent() {
    for (integrator, name) in [
        (Integrator::NewtonTangent, "newton_tangent"),
        (Integrator::NewtonDirect, "newton_direct"),
    ] {
        let mut world = spring_world(5, 0.1, 4.0);
        let params = StepParameters::new(integrator, 1e-3);
        match ClothPipeline::new().step(&params, &mut world) {
            Err(ClothError::Invalid(m)) => assert!(m.contains(name), "{m}"),
            other => panic!("expected an error, got {other:?}"),
        }
    }
}
