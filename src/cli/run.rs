//! `kestrel run SCENE`: steps a scene (or runs a virtual KES test) with a progress bar on
//! stderr, then prints a summary (or one JSON object with `--json`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use kestrel::atomic::write_atomic;
use kestrel::cloth::record::{RecordInfo, Recording};
use kestrel::cloth::virtual_kes::run_virtual_kes;
use kestrel::cloth::{check_steps, ClothPipeline, Integrator, Preconditioner, ProvotConstraints};
use kestrel::input::{bytes_label, BINARY_FILE_LIMIT};
use kestrel::scene::{DynamicScene, Scene, SceneNumbers, VirtualKesScene};

use super::CliError;

mod options;
use options::{refuse_dynamic_options, refuse_idle_options};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scene file (TOML), e.g. scenes/provot_sheet_17.toml.
    pub scene: PathBuf,
    /// Number of steps (default: the scene's).
    #[arg(long, value_parser = super::whole::<u64>("from 0 to 100000000 (1e8) steps"))]
    pub steps: Option<u64>,
    /// Integrator instead of the scene's: explicit, broyden, newton-krylov, newton-tangent,
    /// newton-direct or semi-implicit.
    #[arg(long)]
    pub integrator: Option<Integrator>,
    /// Time step [s] instead of the scene's.
    #[arg(long)]
    pub dt: Option<f64>,
    /// Preconditioner of the implicit steps instead of the scene's: block, stretch or lines.
    #[arg(long)]
    pub preconditioner: Option<Preconditioner>,
    /// Switch Provot's deformation-rate constraints off.
    #[arg(long)]
    pub no_constraints: bool,
    /// Constrain the structural pairs to this rate (fraction: 0.1 = 10 %).
    #[arg(long, value_name = "TAU")]
    pub tau_structural: Option<f64>,
    /// Constrain the cell diagonals (shear springs) to this rate (fraction).
    #[arg(long, value_name = "TAU")]
    pub tau_shear: Option<f64>,
    /// Passes of the constraint procedure per step.
    #[arg(long, value_name = "N", value_parser = super::whole::<u32>("from 0 (off) to 100 passes a step"))]
    pub passes: Option<u32>,
    /// Write the positions of every n-th step to FILE (binary record, docs/cloth.md).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Steps between recorded frames (default 10).
    #[arg(long, value_name = "N", value_parser = super::whole::<u32>("of steps from 1 to 4294967295"))]
    pub every: Option<u32>,
    /// Virtual KES scenes: write the curve to this KES CSV (default: the scene's `output`).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

/// The summary of a dynamic run; `--json` prints it as is.
#[derive(Debug, Serialize)]
struct RunSummary {
    scene: String,
    name: String,
    integrator: String,
    /// Preconditioner of the implicit steps: block, stretch or lines (Broyden, Newton–Krylov),
    /// tangent_lines (newton_tangent), tangent_cholesky (newton_direct), none (explicit,
    /// semi-implicit).
    preconditioner: String,
    material: String,
    constraints: String,
    particles: usize,
    connectors: usize,
    steps: u64,
    dt: f64,
    sim_time_s: f64,
    /// Time spent stepping [ms] (not loading, recording or reporting).
    wall_ms: f64,
    ms_per_step: f64,
    /// At the end of the run, fractions (0.1 = 10 %).
    max_rate_structural: f64,
    max_rate_shear: f64,
    /// Largest over the run.
    peak_rate_structural: f64,
    peak_rate_shear: f64,
    kinetic_j: f64,
    elastic_j: f64,
    gravity_j: f64,
    iterations_per_step: f64,
    evaluations_per_step: f64,
    /// Conjugate-gradient iterations per step (`newton_tangent`, `newton_direct`; 0 for the
    /// others).
    linear_iterations_per_step: f64,
    unconverged_steps: u64,
    /// Implicit steps (or half steps) taken again as two halves because they did not converge.
    halved_steps: u64,
    /// Every implicit step converged; when false the command exits 1 and writes no record.
    converged: bool,
    record: Option<String>,
    frames: usize,
    /// `card`, `areal_density` with `areal_density_source`, `obstacles` (each with its
    /// friction law, friction, offset and their sources).
    #[serde(flatten)]
    numbers: SceneNumbers,
}

/// The summary of a virtual KES test.
#[derive(Debug, Serialize)]
struct KesSummary {
    scene: String,
    name: String,
    integrator: String,
    test: String,
    direction: String,
    particles: usize,
    steps: usize,
    wall_ms: f64,
    ms_per_step: f64,
    evaluations: usize,
    /// Against the card's law of the test and direction: `kestrel validate` on the CSV.
    nrmse: f64,
    /// Against the law the connectors carry (shear: the mean of the warp and weft laws).
    connectors_nrmse: f64,
    csv: Option<String>,
    /// Set when the mesh's discretisation error passes [`VIRTUAL_KES_ACCURACY`].
    note: Option<String>,
}

/// The NRMSE a virtual KES test's mesh is expected to meet against its connectors' law.
const VIRTUAL_KES_ACCURACY: f64 = 0.02;

/// A note when the mesh's curve leaves the connectors' law by more than
/// [`VIRTUAL_KES_ACCURACY`] (NRMSE `connectors_nrmse`).
fn accuracy_note(connectors_nrmse: f64) -> Option<String> {
    (connectors_nrmse > VIRTUAL_KES_ACCURACY).then(|| {
        format!(
            "the mesh's curve is {:.2} % off the law its connectors carry (NRMSE), above the \
             {} % a virtual KES test is expected to meet: use more gauge_cells or a smaller max",
            100.0 * connectors_nrmse,
            100.0 * VIRTUAL_KES_ACCURACY
        )
    })
}

pub fn run(args: RunArgs) -> Result<(), CliError> {
    let scene = Scene::load(&args.scene).map_err(CliError::input)?;
    match scene {
        Scene::Dynamic(s) => run_dynamic(&args, *s),
        Scene::VirtualKes(s) => run_kes(&args, *s),
    }
}

fn constraints_label(c: &ProvotConstraints) -> String {
    if !c.is_active() {
        return "none".into();
    }
    let mut parts = Vec::new();
    if let Some(t) = c.structural {
        parts.push(format!("structural {:.3} %", 100.0 * t));
    }
    if let Some(t) = c.shear {
        parts.push(format!("shear {:.3} %", 100.0 * t));
    }
    if let Some(t) = c.compression {
        parts.push(format!("compression {:.3} %", 100.0 * t));
    }
    format!("{}, {} pass(es)", parts.join(", "), c.passes)
}

fn run_dynamic(args: &RunArgs, scene: DynamicScene) -> Result<(), CliError> {
    let DynamicScene {
        name,
        mut world,
        mut params,
        steps,
        camera,
        numbers,
        integrator_keys,
        ..
    } = scene;
    refuse_idle_options(args)?;
    if let Some(i) = args.integrator {
        params.integrator = i;
        // the scene's solver settings the chosen integrator does not read: said, not refused
        // (the scene is right for its own integrator)
        for key in integrator_keys.iter().filter(|k| !i.reads(k)) {
            eprintln!(
                "note: {}: the scene's integrator.{key} does not apply to the {} integrator \
                 chosen by --integrator; not used",
                args.scene.display(),
                i.name().replace('_', "-")
            );
        }
    }
    if let Some(dt) = args.dt {
        params.dt = dt;
    }
    if let Some(p) = args.preconditioner {
        params.preconditioner = p;
    }
    if let Some(t) = args.tau_structural {
        params.constraints.structural = Some(t);
    }
    if let Some(t) = args.tau_shear {
        params.constraints.shear = Some(t);
    }
    if let Some(p) = args.passes {
        params.constraints.passes = p;
    }
    if args.no_constraints {
        params.constraints = ProvotConstraints::none();
    }
    params.validate().map_err(CliError::input)?;
    if params.integrator == Integrator::SemiImplicit
        && !matches!(world.material, kestrel::cloth::Material::Terzopoulos(_))
    {
        return Err(CliError::input(
            "--integrator semi-implicit needs material kind = \"terzopoulos\" (its elastic \
             surface); use broyden",
        ));
    }
    if matches!(
        params.integrator,
        Integrator::NewtonTangent | Integrator::NewtonDirect
    ) && !matches!(world.material, kestrel::cloth::Material::Kes(_))
    {
        return Err(CliError::input(format!(
            "--integrator {} needs a kes material (its analytic tangent is the kes connectors'); use broyden",
            params.integrator.name().replace('_', "-")
        )));
    }
    if args.csv.is_some() {
        return Err(CliError::input(format!(
            "--csv does not apply to a dynamic scene: {} has no [kes_test], so there is no \
             curve to write (record the run with --record FILE)",
            args.scene.display()
        )));
    }
    if args.preconditioner.is_some()
        && !matches!(
            params.integrator,
            Integrator::Broyden | Integrator::NewtonKrylov
        )
    {
        return Err(CliError::input(format!(
            "--preconditioner does not apply to the {} integrator: it sets the preconditioner \
             of broyden and newton-krylov (newton-tangent and newton-direct solve with their \
             tangent, explicit and semi-implicit have none)",
            params.integrator.name().replace('_', "-")
        )));
    }
    let steps = args.steps.unwrap_or(steps);
    let every = args.every.unwrap_or(DEFAULT_EVERY);
    if every == 0 {
        return Err(CliError::input("--every must be >= 1"));
    }
    check_steps("--steps", steps).map_err(CliError::input)?;
    if let Some(path) = &args.record {
        super::check_output_of(path, args.output.force, super::scene_inputs(&args.scene))?;
        // the frames are held in memory until the end, and must be readable back
        let frames = steps / u64::from(every) + 1;
        let bytes = frames.saturating_mul(16 + 12 * world.len() as u64);
        if bytes > BINARY_FILE_LIMIT {
            return Err(CliError::input(format!(
                "--record: {frames} frames of {} particles take {} MiB, more than the limit of {} for a record; raise --every",
                world.len(),
                bytes >> 20,
                bytes_label(BINARY_FILE_LIMIT)
            )));
        }
    }
    let mut recording = args.record.as_ref().map(|_| {
        let mut r = Recording::new(RecordInfo {
            name: name.clone(),
            nu: world.grid.nu as u32,
            nv: world.grid.nv as u32,
            h_warp: world.grid.h_warp,
            h_weft: world.grid.h_weft,
            dt: params.dt,
            every,
            camera,
            obstacles: world.obstacles.clone(),
        });
        r.push(&world);
        r
    });
    let pb = super::progress_bar(steps, args.output.json, super::STEPS_BAR);
    let mut pipeline = ClothPipeline::new();
    let mut stepping = Duration::ZERO;
    let (mut iterations, mut evaluations, mut unconverged) = (0u64, 0u64, 0u64);
    let mut linear = 0u64;
    let mut halved = 0u64;
    let (mut peak_s, mut peak_sh) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for n in 1..=steps {
        let t0 = Instant::now();
        let report = pipeline.step(&params, &mut world);
        stepping += t0.elapsed();
        let report = match report {
            Ok(r) => r,
            Err(e) => {
                pb.abandon();
                return Err(CliError::failed(format!("{}: {e}", args.scene.display())));
            }
        };
        iterations += report.solve.iterations as u64;
        evaluations += report.solve.evaluations as u64;
        linear += report.solve.linear_iterations as u64;
        if !report.solve.converged {
            unconverged += 1;
        }
        halved += report.halvings as u64;
        let r = world.deformation_rates();
        peak_s = peak_s.max(r.structural);
        peak_sh = peak_sh.max(r.shear);
        if let Some(rec) = &mut recording {
            if n % every as u64 == 0 {
                rec.push(&world);
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let energies = [
        world.kinetic_energy(),
        world.elastic_energy(),
        world.gravity_energy(),
    ];
    // an overflowing state (positions finite but their energies not) is no result either
    let finite = energies.iter().all(|e| e.is_finite());
    let converged = unconverged == 0 && finite;
    let frames = recording.as_ref().map(|r| r.frames.len()).unwrap_or(0);
    if let (Some(rec), Some(path), true) = (&recording, &args.record, converged) {
        super::interrupt::Outputs::start().write(path, || {
            rec.write(path, args.output.force)
                .map_err(CliError::written)
        })?;
    }
    let rates = world.deformation_rates();
    let wall_ms = stepping.as_secs_f64() * 1e3;
    let per = |v: u64| {
        if steps > 0 {
            v as f64 / steps as f64
        } else {
            0.0
        }
    };
    let summary = RunSummary {
        scene: args.scene.display().to_string(),
        name,
        integrator: params.integrator.name().into(),
        preconditioner: match params.integrator {
            Integrator::Broyden | Integrator::NewtonKrylov => params.preconditioner.name().into(),
            // its own: line solves of the tangent system
            Integrator::NewtonTangent => "tangent_lines".into(),
            // none: the tangent system factored by sparse Cholesky
            Integrator::NewtonDirect => "tangent_cholesky".into(),
            Integrator::Explicit | Integrator::SemiImplicit => "none".into(),
        },
        material: world.material.name().into(),
        constraints: constraints_label(&params.constraints),
        particles: world.len(),
        connectors: world.material.connector_count(),
        steps,
        dt: params.dt,
        sim_time_s: world.time,
        wall_ms,
        ms_per_step: if steps > 0 {
            wall_ms / steps as f64
        } else {
            0.0
        },
        max_rate_structural: rates.structural,
        max_rate_shear: rates.shear,
        peak_rate_structural: if steps > 0 { peak_s } else { rates.structural },
        peak_rate_shear: if steps > 0 { peak_sh } else { rates.shear },
        kinetic_j: energies[0],
        elastic_j: energies[1],
        gravity_j: energies[2],
        iterations_per_step: per(iterations),
        evaluations_per_step: per(evaluations),
        linear_iterations_per_step: per(linear),
        unconverged_steps: unconverged,
        halved_steps: halved,
        record: args
            .record
            .as_ref()
            .filter(|_| converged)
            .map(|p| p.display().to_string()),
        frames,
        converged,
        numbers,
    };
    super::print_summary(&summary, args.output.json, print_table)?;
    if converged {
        return Ok(());
    }
    let not_written = if args.record.is_some() {
        "; the record was not written"
    } else {
        ""
    };
    if !finite {
        return Err(CliError::failed(format!(
            "{}: the energies at the end are not finite (kinetic {:e}, elastic {:e}, gravity {:e} J): the cloth left the range of the arithmetic{not_written}; check the scene's sizes, loads and obstacles",
            args.scene.display(),
            energies[0],
            energies[1],
            energies[2]
        )));
    }
    Err(CliError::failed(format!(
        "{}: {unconverged} of {steps} steps did not converge ({halved} halvings, then the best iterate was kept){not_written}; the result is not trustworthy: try a smaller --dt or more max_iterations",
        args.scene.display(),
    )))
}

fn print_table(s: &RunSummary) {
    println!("scene        {} ({})", s.scene, s.name);
    println!(
        "cloth        {} particles, {} {} connectors",
        s.particles, s.connectors, s.material
    );
    let n = &s.numbers;
    if let Some(card) = &n.card {
        println!("fabric card  {}", card.display());
    }
    println!(
        "density      {} kg/m^2 ({})",
        n.areal_density,
        n.areal_density_source.name()
    );
    for (k, o) in n.obstacles.iter().enumerate() {
        println!(
            "obstacle {:<3} {}: friction {} {:.4} ({}), offset {:.4} mm ({})",
            k + 1,
            o.kind,
            o.friction_law,
            o.friction,
            o.friction_source.name(),
            1e3 * o.offset,
            o.offset_source.name()
        );
    }
    println!(
        "integrator   {} (dt = {} s), constraints: {}",
        s.integrator, s.dt, s.constraints
    );
    println!("steps        {} (t = {:.4} s)", s.steps, s.sim_time_s);
    println!(
        "wall time    {:.1} ms stepping, {:.4} ms/step",
        s.wall_ms, s.ms_per_step
    );
    if s.integrator != Integrator::Explicit.name() {
        println!(
            "solver       {:.2} iterations/step, {:.2} force evaluations/step, {} unconverged steps",
            s.iterations_per_step, s.evaluations_per_step, s.unconverged_steps
        );
        if s.halved_steps > 0 {
            println!(
                "halved       {} steps retried as two half steps (they did not converge)",
                s.halved_steps
            );
        }
    }
    println!(
        "max rate     structural {:+.2} %, shear {:+.2} % (end); peak {:+.2} %, {:+.2} %",
        100.0 * s.max_rate_structural,
        100.0 * s.max_rate_shear,
        100.0 * s.peak_rate_structural,
        100.0 * s.peak_rate_shear
    );
    println!(
        "energy       kinetic {:.4e} J, elastic {:.4e} J, gravity {:.4e} J",
        s.kinetic_j, s.elastic_j, s.gravity_j
    );
    if let Some(r) = &s.record {
        println!("record       {r} ({} frames)", s.frames);
    }
    if s.unconverged_steps > 0 {
        println!(
            "NOT CONVERGED {} of {} steps did not converge",
            s.unconverged_steps, s.steps
        );
    }
    if ![s.kinetic_j, s.elastic_j, s.gravity_j]
        .iter()
        .all(|e| e.is_finite())
    {
        println!("NOT FINITE   the energies at the end are not finite");
    }
}

/// Steps between recorded frames when `--every` is not given.
const DEFAULT_EVERY: u32 = 10;

fn run_kes(args: &RunArgs, scene: VirtualKesScene) -> Result<(), CliError> {
    refuse_dynamic_options(args)?;
    let output = args.csv.clone().or(scene.output.clone());
    if let Some(path) = &output {
        super::check_output_of(path, args.output.force, super::scene_inputs(&args.scene))?;
    }
    let pb = super::progress_bar(0, args.output.json, super::STEPS_BAR);
    let t0 = Instant::now();
    let result = run_virtual_kes(&scene.spec, &scene.card, |done, total| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    })
    .map_err(|e| CliError::failed(format!("{}: {e}", args.scene.display())))?;
    let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
    pb.finish_and_clear();
    let note = accuracy_note(result.connectors_nrmse);
    if let Some(n) = &note {
        eprintln!("note: {}: {n}", args.scene.display());
    }
    if let Some(path) = &output {
        let csv = result.to_csv().map_err(CliError::failed)?;
        super::interrupt::Outputs::start().write(path, || {
            write_atomic(path, csv.as_bytes(), args.output.force).map_err(CliError::written)
        })?;
    }
    let summary = KesSummary {
        scene: args.scene.display().to_string(),
        name: scene.name,
        integrator: "quasi_static_broyden".into(),
        test: scene.spec.test.to_string(),
        direction: scene.spec.direction.to_string(),
        particles: result.particles,
        steps: result.solves,
        wall_ms,
        ms_per_step: wall_ms / result.solves.max(1) as f64,
        evaluations: result.evaluations,
        nrmse: result.nrmse,
        connectors_nrmse: result.connectors_nrmse,
        csv: output.as_ref().map(|p| p.display().to_string()),
        note,
    };
    super::print_summary(&summary, args.output.json, |s| {
        println!("scene        {} ({})", s.scene, s.name);
        println!(
            "virtual KES  {} {} on a {}-particle strip, {} quasi-static samples",
            s.test, s.direction, s.particles, s.steps
        );
        println!(
            "wall time    {:.1} ms, {} force evaluations",
            s.wall_ms, s.evaluations
        );
        println!(
            "nrmse        {:.4} % against the card's {} {} law (as `kestrel validate` on the curve)",
            100.0 * s.nrmse,
            s.direction,
            s.test
        );
        println!(
            "connectors   {:.4} % against the law the mesh's connectors carry{}",
            100.0 * s.connectors_nrmse,
            if s.test == "shear" {
                " (the mean of the warp and weft shear laws)"
            } else {
                ""
            }
        );
        if let Some(c) = &s.csv {
            println!("csv          {c}");
        }
    })
}
