//! `kestrel test cantilever|drape`: the lab's tests of a fabric card on the mesh (docs/cloth.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use kestrel::cloth::lab::{
    run_cantilever, run_drape, CantileverOptions, CantileverResult, DrapeOptions, DrapeResult,
    DynamicLowering, LabError, Lowering, DEFAULT_CELL_MM,
};
use kestrel::kes::Direction;
use kestrel::FabricParams;

use super::CliError;

#[derive(Debug, clap::Args)]
pub struct TestArgs {
    #[command(subcommand)]
    test: LabTest,
}

#[derive(Debug, clap::Subcommand)]
enum LabTest {
    /// Cantilever bending test (ASTM D1388): overhang at 41.5°, bending length vs Peirce.
    Cantilever(CantileverArgs),
    /// Cusick drape test (30 cm specimen on an 18 cm disc): drape coefficient, folds, renders.
    Drape(DrapeArgs),
}

#[derive(Debug, clap::Args)]
struct CantileverArgs {
    /// The fabric card (parameter file with all six laws and `[properties] areal_density`).
    #[arg(long)]
    params: PathBuf,
    /// The yarn along the strip: warp or weft.
    #[arg(long, default_value = "warp")]
    direction: Direction,
    /// Set every friction level of the card to zero (the mesh then meets Peirce's closed form).
    #[arg(long)]
    no_friction: bool,
    /// Cells along the overhang.
    #[arg(long, default_value_t = 20, value_parser = super::whole::<usize>("of cells from 2 to 2000"))]
    cells: usize,
    /// With friction: gravity released in N equal load steps (1 to 1000), each to
    /// equilibrium (the strip loads monotonically from flat, so N does not change the result).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = super::whole::<u32>("of load steps from 1 to 1000"))]
    load_steps: u32,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct DrapeArgs {
    /// The fabric card (parameter file with all six laws and `[properties] areal_density`).
    #[arg(long)]
    params: PathBuf,
    /// Set every friction level of the card to zero.
    #[arg(long)]
    no_friction: bool,
    /// Mesh spacing [mm], 1 to 30 (41 particles across the 30 cm specimen at 7.5 mm).
    #[arg(long, default_value_t = DEFAULT_CELL_MM, value_name = "MM")]
    cell: f64,
    /// Time step [s] of the implicit (Broyden) steps.
    #[arg(long, default_value_t = 0.002, value_name = "S")]
    dt: f64,
    /// Air damping [1/s] (force −γ·m·v): no force at rest.
    #[arg(long, default_value_t = 1.0, value_name = "PER_S")]
    damping: f64,
    /// Load steps of the quasi-static lowering (1 to 1000): gravity raised from 0 to g in N
    /// equal steps, the specimen brought to rest at each.
    #[arg(
        long,
        default_value_t = 40,
        value_name = "N",
        value_parser = super::whole::<u32>("of load steps from 1 to 1000"),
        conflicts_with = "dynamic"
    )]
    load_steps: u32,
    /// Lower the specimen dynamically instead (gravity ramped over --ramp, backward-Euler
    /// steps until the coefficient settles; the test until 2026-11-27).
    #[arg(long)]
    dynamic: bool,
    /// With --dynamic: gravity ramped from 0 to g over this time [s].
    #[arg(long, default_value_t = 1.0, value_name = "S", requires = "dynamic")]
    ramp: f64,
    /// With --dynamic: no kinetic damping: let the specimen vibrate freely (air damping only)
    /// instead of stopping it at every peak of its kinetic energy.
    #[arg(long, requires = "dynamic")]
    free_vibration: bool,
    /// With --dynamic: longest simulated time [s] before the test gives up unsettled.
    #[arg(long, default_value_t = 20.0, value_name = "S", requires = "dynamic")]
    max_time: f64,
    /// Folder for the renders `drape_top.png` and `drape_side.png` (feature `render`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Render size in pixels, WxH (with --out).
    #[arg(long, default_value = "800x800", requires = "out")]
    size: String,
    /// Replace existing renders.
    #[arg(long)]
    force: bool,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: TestArgs) -> Result<(), CliError> {
    match args.test {
        LabTest::Cantilever(a) => cantilever(a),
        LabTest::Drape(a) => drape(a),
    }
}

/// A lab test's error as the command's: what the card lacks names the card (exit 2), an
/// option out of range is bad input too, the rest a failed run (exit 1).
fn lab_error(e: LabError, card: &Path) -> CliError {
    match e {
        LabError::Card(_) => CliError::input(format!("{}: {e}", card.display())),
        LabError::Option(_) => CliError::input(e),
        _ => CliError::failed(e),
    }
}

fn read_card(path: &Path) -> Result<FabricParams, CliError> {
    FabricParams::read(path).map_err(CliError::input)
}

/// Runs a lab test with a bar of 1000 positions (hidden with `--json`) fed by its 0..1
/// progress and labelled `message`; its error as the command's.
fn with_bar<T>(
    hidden: bool,
    card: &Path,
    message: &'static str,
    test: impl FnOnce(&mut dyn FnMut(f64)) -> Result<T, LabError>,
) -> Result<T, CliError> {
    let pb = super::progress_bar(
        1000,
        hidden,
        "{bar:40} {percent:>3}%  {elapsed_precise} {msg}",
    );
    pb.enable_steady_tick(Duration::from_millis(200));
    pb.set_message(message);
    let result = test(&mut |f| pb.set_position((f * 1000.0) as u64));
    pb.finish_and_clear();
    result.map_err(|e| lab_error(e, card))
}

fn cantilever(args: CantileverArgs) -> Result<(), CliError> {
    if !matches!(args.direction, Direction::Warp | Direction::Weft) {
        return Err(CliError::input(format!(
            "--direction {}: the strip lies along the warp or the weft",
            args.direction
        )));
    }
    let card = read_card(&args.params)?;
    let mut opts = CantileverOptions::new(args.direction);
    opts.friction = !args.no_friction;
    opts.cells = args.cells;
    opts.load_steps = args.load_steps;
    let result = with_bar(args.json, &args.params, "relaxing the strip", |progress| {
        run_cantilever(&card, &opts, progress, None)
    })?;
    super::print_summary(&result, args.json, print_cantilever)
}

fn print_cantilever(r: &CantileverResult) {
    println!(
        "cantilever (ASTM D1388, 41.5 deg): {} {}{}",
        r.fabric,
        r.direction,
        if r.friction { "" } else { ", no friction" }
    );
    println!("  bending length c = l/2  {:.4} cm", r.bending_length_cm);
    println!("  Peirce (B/W)^(1/3)      {:.4} cm", r.peirce_cm);
    println!("  gap                     {:+.2} %", 100.0 * r.relative_gap);
    println!(
        "  B                       {:.5} gf*cm2/cm",
        r.rigidity_gf_cm2_per_cm
    );
    println!(
        "  W                       {:.5} gf/cm2",
        r.weight_gf_per_cm2
    );
    println!(
        "  overhang                {:.4} cm (tip chord {:.3} deg)",
        r.overhang_cm, r.tip_angle_deg
    );
    println!(
        "  mesh                    {} x {} cells, {} relaxations of {} load step{}, {} iterations, {:.2} s",
        r.cells,
        r.width_cells,
        r.relaxations,
        r.load_steps,
        if r.load_steps == 1 { "" } else { "s" },
        r.iterations,
        r.wall_s
    );
}

fn drape(args: DrapeArgs) -> Result<(), CliError> {
    let renders = match &args.out {
        Some(dir) => Some(render_targets(dir, &args)?),
        None => None,
    };
    let card = read_card(&args.params)?;
    let opts = DrapeOptions {
        friction: !args.no_friction,
        cell: args.cell * 1e-3,
        dt: args.dt,
        damping: args.damping,
        lowering: if args.dynamic {
            Lowering::Dynamic(DynamicLowering {
                ramp: args.ramp,
                max_time: args.max_time,
                kinetic_damping: !args.free_vibration,
            })
        } else {
            Lowering::QuasiStatic {
                load_steps: args.load_steps,
            }
        },
    };
    let stage = if args.dynamic {
        "draping (simulated time)"
    } else {
        "draping (load steps)"
    };
    let result = with_bar(args.json, &args.params, stage, |progress| {
        run_drape(&card, &opts, progress, None)
    })?;
    if let Some(targets) = renders {
        write_renders(&result, &targets, &args)?;
    }
    super::print_summary(&result, args.json, print_drape)
}

fn print_drape(r: &DrapeResult) {
    println!(
        "drape (Cusick, {} cm specimen on a {} cm disc): {}{}",
        r.specimen_diameter_cm,
        r.disc_diameter_cm,
        r.fabric,
        if r.friction { "" } else { ", no friction" }
    );
    println!("  drape coefficient  {:.2} %", r.drape_coefficient);
    println!("  folds              {}", r.folds);
    if let Some(w) = &r.warning {
        println!("  warning            {w}");
    }
    println!(
        "  shadow             {:.2} cm2 (specimen {:.2}, disc {:.2})",
        r.shadow_area_cm2, r.specimen_area_cm2, r.disc_area_cm2
    );
    match r.load_steps {
        Some(n) => println!(
            "  lowered            quasi-statically: {n} load steps, {} static steps ({} unconverged); {:.2} mm cells, {} particles",
            r.lowering_static_steps, r.lowering_unconverged_static_steps, r.cell_mm, r.particles
        ),
        None => {
            println!(
                "  lowered            dynamically: {:.2} mm cells, {} particles, {} steps of {} s ({:.2} s simulated)",
                r.cell_mm, r.particles, r.steps, r.dt_s, r.sim_time_s
            );
            println!(
                "  settled            RMS speed {:.1} mm/s, fastest particle {:.1} mm/s, {} steps unconverged (< 1 um)",
                r.rms_speed * 1e3,
                r.final_speed * 1e3,
                r.unconverged_steps
            );
            if r.kinetic_damping {
                println!(
                    "  kinetic damping    {} stops at kinetic energy peaks",
                    r.kinetic_stops
                );
            } else {
                println!("  kinetic damping    off (free vibration)");
            }
        }
    }
    println!(
        "  at rest            {:.2} % after the lowering; {} static steps ({} unconverged), largest unbalanced force {:.1e} of a particle's weight (<= {:.0e})",
        r.settled_drape_coefficient,
        r.rest_steps,
        r.rest_unconverged_steps,
        r.rest_force_ratio,
        r.rest_force_limit
    );
    println!("  wall time          {:.2} s", r.wall_s);
}

/// The two render files, refused before any work when they exist without `--force`.
#[cfg(feature = "render")]
fn render_targets(dir: &Path, args: &DrapeArgs) -> Result<[PathBuf; 2], CliError> {
    super::parse_size(&args.size, "800x800")?;
    let targets = [dir.join("drape_top.png"), dir.join("drape_side.png")];
    for t in &targets {
        super::check_output_of(t, args.force, [&args.params])?;
    }
    Ok(targets)
}

#[cfg(not(feature = "render"))]
fn render_targets(_dir: &Path, _args: &DrapeArgs) -> Result<[PathBuf; 2], CliError> {
    Err(CliError::input(
        "--out: this kestrel was built without the render feature (rebuild with default features)",
    ))
}

#[cfg(feature = "render")]
fn write_renders(
    r: &DrapeResult,
    targets: &[PathBuf; 2],
    args: &DrapeArgs,
) -> Result<(), CliError> {
    use kestrel::cloth::record::Camera;
    use kestrel::render::{Renderer, SceneView};
    let (width, height) = super::parse_size(&args.size, "800x800")?;
    let x = r.mesh.render_positions();
    let cameras = [
        Camera {
            eye: [0.0, 0.75, 0.12],
            target: [0.0, 0.0, 0.0],
            up: [0.0, 1.0, 0.0],
            fov_deg: 30.0,
        },
        Camera {
            eye: [0.0, 0.02, 0.85],
            target: [0.0, -0.05, 0.0],
            up: [0.0, 1.0, 0.0],
            fov_deg: 30.0,
        },
    ];
    let mut renderer = Renderer::new(width, height).map_err(CliError::failed)?;
    // an interrupt between the two removes the first (when it was new)
    let mut outputs = super::interrupt::Outputs::start();
    for (camera, path) in cameras.iter().zip(targets) {
        let view = SceneView {
            grid: r.mesh.grid,
            obstacles: Vec::new(),
            pins: Vec::new(),
            camera: Some(*camera),
            door: None,
        };
        renderer.set_scene(&view, &x).map_err(CliError::failed)?;
        let (png, _) = renderer.render_png(&x, None).map_err(CliError::failed)?;
        outputs.write(path, || {
            kestrel::atomic::write_atomic(path, &png, args.force).map_err(CliError::written)
        })?;
    }
    Ok(())
}

#[cfg(not(feature = "render"))]
fn write_renders(_r: &DrapeResult, _t: &[PathBuf; 2], _args: &DrapeArgs) -> Result<(), CliError> {
    Ok(())
}
