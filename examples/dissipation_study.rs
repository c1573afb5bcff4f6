//! The dissipation study of docs/cloth.md: a strip of each card stretched along its warp and
//! cycled four times by its clamp between two strains (by default 95 % and 75 % of the warp
//! law's ε₁: inside its toe, away from the switch to the aligned toe at ε₁), stepped by each implicit integrator at each
//! Δt and cell size; one markdown row per run: the warp traction law's own loop W·L·∮F dε
//! (finely sampled, and the trapezoid rule on the steps' strains against it), how far the
//! connectors' work and the clamp's work over the last cycle lie from the latter, the numerical
//! dissipation, the strip's largest move across the pull, and the cost.
//! `cargo run --release --example dissipation_study -- CARD.toml… [--strain 0.01,0.02]
//! [--rate 0.1] [--cells-mm 10,5,2.5] [--dt-ms 1,2,5,10] [--tolerance 1e-8]` (one thread: `RAYON_NUM_THREADS=1`).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use kestrel::cloth::{CyclicStrip, Integrator, KesLaws, Preconditioner, StepParameters};
use kestrel::FabricParams;

const METHODS: [(Integrator, Preconditioner, &str); 5] = [
    (
        Integrator::Broyden,
        Preconditioner::Stretch,
        "broyden:stretch",
    ),
    (Integrator::Broyden, Preconditioner::Lines, "broyden:lines"),
    (
        Integrator::NewtonKrylov,
        Preconditioner::Lines,
        "newton_krylov:lines",
    ),
    (
        Integrator::NewtonTangent,
        Preconditioner::Lines,
        "newton_tangent:lines",
    ),
    (
        Integrator::NewtonDirect,
        Preconditioner::Lines,
        "newton_direct",
    ),
];

fn list(text: &str, scale: f64) -> Result<Vec<f64>, String> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .map(|v| v * scale)
                .map_err(|e| format!("`{s}`: {e}"))
        })
        .collect()
}

fn run() -> Result<(), String> {
    let mut cards = Vec::new();
    let mut strip = CyclicStrip::default();
    // the strains: 95 % and 75 % of the warp law's ε₁ (inside its toe) unless given
    let mut strains = None;
    let (mut cells, mut dts) = (vec![0.01, 0.005, 0.0025], vec![0.001, 0.002, 0.005, 0.01]);
    let mut tolerance = StepParameters::new(Integrator::NewtonTangent, 1e-3).tolerance;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--strain" => {
                let v = list(&value()?, 1.0)?;
                let [min, max] = v[..] else {
                    return Err("--strain takes MIN,MAX".into());
                };
                strains = Some((min, max));
            }
            "--rate" => strip.strain_rate_per_s = list(&value()?, 1.0)?[0],
            "--cells-mm" => cells = list(&value()?, 1e-3)?,
            "--dt-ms" => dts = list(&value()?, 1e-3)?,
            "--tolerance" => tolerance = list(&value()?, 1.0)?[0],
            _ => cards.push(a),
        }
    }
    if cards.is_empty() {
        return Err(
            "usage: dissipation_study CARD.toml… [--strain MIN,MAX] [--rate R] \
                    [--cells-mm A,B] [--dt-ms A,B]"
                .into(),
        );
    }
    println!(
        "| fabric | cells | Δt (ms) | method | evaluations/step | CG/step | halved | \
         unconverged | law loop (µJ) | on the steps' strains | connectors − law | \
         clamp − law | D_num / loop | least law force (N/m) | lateral (µm) | CPU ms/step |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for card in &cards {
        let params = FabricParams::read(Path::new(card)).map_err(|e| format!("{card}: {e}"))?;
        let laws = KesLaws::from_params(&params).map_err(|e| format!("{card}: {e}"))?;
        if let Some(rho) = params.properties.as_ref().and_then(|p| p.areal_density) {
            strip.areal_density_kg_m2 = rho;
        }
        (strip.strain_min, strip.strain_max) =
            strains.unwrap_or((0.75 * laws.traction[0].eps1, 0.95 * laws.traction[0].eps1));
        for &cell in &cells {
            for &dt in &dts {
                for (integrator, preconditioner, name) in METHODS {
                    let mut step = StepParameters::new(integrator, dt);
                    step.preconditioner = preconditioner;
                    step.tolerance = tolerance;
                    let s = CyclicStrip {
                        cell_m: cell,
                        ..strip
                    };
                    let start = Instant::now();
                    let e = s.run(&laws, &step).map_err(|e| format!("{card}: {e}"))?;
                    let ms = 1e3 * start.elapsed().as_secs_f64() / e.steps as f64;
                    let pct = |v: f64, of: f64| format!("{:+.3} %", 100.0 * (v - of) / of);
                    println!(
                        "| {} | {}×{} | {} | {name} | {:.2} | {:.1} | {} | {} | {:.3} | {} | {} | {} | {:+.3} % | {:.3} | {:.3} | {:.3} |",
                        params.fabric,
                        e.cells[0],
                        e.cells[1],
                        dt * 1e3,
                        e.evaluations_per_step,
                        e.linear_iterations_per_step,
                        e.halved_steps,
                        e.unconverged_steps,
                        e.law_loop_j * 1e6,
                        pct(e.law_loop_steps_j, e.law_loop_j),
                        pct(e.connector_work_j, e.law_loop_steps_j),
                        pct(e.clamp_work_j, e.law_loop_steps_j),
                        100.0 * e.numerical_dissipation_j() / e.law_loop_j,
                        e.law_force_min_n_per_m,
                        e.max_lateral_m * 1e6,
                        ms,
                    );
                }
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
