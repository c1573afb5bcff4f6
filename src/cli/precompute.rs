//! `kestrel precompute SCENE --out MODEL`: samples a scene's impulse palette, reduces the
//! states by SVD and writes the reduced model (docs/reduced.md).

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use kestrel::plot::reduced::error_vs_rank_image;
use kestrel::plot::{write_image, ImageFormat, PlotSize};
use kestrel::reduced::{precompute, PrecomputeOptions, PrecomputeStats, ReducedError};

use super::CliError;

#[derive(Debug, Args)]
pub struct PrecomputeArgs {
    /// Scene file with a [reduced] palette, e.g. scenes/reduced_door_cloth.toml.
    pub scene: PathBuf,
    /// Model file to write (.krd).
    #[arg(long, value_name = "MODEL")]
    pub out: PathBuf,
    /// ε: keep rank r with σ_r ≥ ε·σ₁ (default: the scene's rank_tolerance).
    #[arg(long)]
    pub epsilon: Option<f64>,
    /// Keep exactly this rank instead.
    #[arg(long, conflicts_with = "epsilon")]
    pub rank: Option<usize>,
    /// Simulated time of the random palette sequence [s] (default: the scene's).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Seed of the random sequence (default: the scene's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also write the relative error against rank as a PNG or SVG (by the extension).
    #[arg(long, value_name = "PNG|SVG")]
    pub error_plot: Option<PathBuf>,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

#[derive(Debug, Serialize)]
struct Summary {
    scene: String,
    out: String,
    #[serde(flatten)]
    stats: PrecomputeStats,
    /// Wall time of sampling, SVD and library [s].
    precompute_s: f64,
    /// Size of the model file [bytes].
    bytes: usize,
    error_plot: Option<String>,
}

pub fn run(args: PrecomputeArgs) -> Result<(), CliError> {
    for p in std::iter::once(&args.out).chain(args.error_plot.as_ref()) {
        super::check_output(p, args.output.force)?;
    }
    let plot_format = match &args.error_plot {
        Some(p) => Some(ImageFormat::of_path(p).map_err(CliError::input)?),
        None => None,
    };
    let scene = super::load_dynamic(
        &args.scene,
        "is a virtual KES test; precompute a dynamic scene with a [reduced] palette",
    )?;
    let opts = PrecomputeOptions {
        epsilon: args.epsilon,
        rank: args.rank,
        duration: args.duration,
        seed: args.seed,
    };
    let pb = super::progress_bar(
        1000,
        args.output.json,
        "{bar:40} {percent:>3}% simulated  {elapsed_precise} (eta {eta})",
    );
    let t0 = Instant::now();
    let result = precompute(&scene, &opts, &mut |f| pb.set_position((f * 1000.0) as u64));
    let (model, stats) = match result {
        Ok(x) => x,
        Err(e) => {
            pb.abandon();
            return Err(match e {
                ReducedError::Invalid(_) => CliError::input(e),
                e => CliError::failed(e),
            });
        }
    };
    pb.finish_and_clear();
    let precompute_s = t0.elapsed().as_secs_f64();
    let bytes = model
        .write(&args.out, args.output.force)
        .map_err(CliError::written)?;
    if let (Some(p), Some(format)) = (&args.error_plot, plot_format) {
        let sigma: Vec<f64> = model.sigma.iter().map(|&s| s as f64).collect();
        let image = error_vs_rank_image(
            &scene.name,
            &sigma,
            model.rank,
            model.info.rank_tolerance,
            PlotSize::SINGLE,
            format,
        )
        .map_err(CliError::failed)?;
        write_image(p, &image, args.output.force).map_err(CliError::written)?;
    }
    let s = Summary {
        scene: args.scene.display().to_string(),
        out: args.out.display().to_string(),
        stats,
        precompute_s,
        bytes,
        error_plot: args.error_plot.as_ref().map(|p| p.display().to_string()),
    };
    super::print_summary(&s, args.output.json, |s| {
        let st = &s.stats;
        println!("model        {} ({} bytes)", s.out, s.bytes);
        println!(
            "snapshots    {} of {} coordinates ({} vertices)",
            st.snapshots,
            st.coordinates,
            st.coordinates / 3
        );
        println!(
            "rank         {} (relative l2 error {:.4}, Frobenius {:.4})",
            st.rank, st.rel_error, st.frobenius_error
        );
        println!(
            "IRFs         {} sampled, {} kept ({} short, {} dead ends pruned)",
            st.orbits_sampled, st.orbits_kept, st.pruned_short, st.pruned_dead_end
        );
        if !st.missing.is_empty() {
            println!("not sampled  {}", st.missing.join(", "));
        }
        println!(
            "time         {:.2} s ({:.2} s simulating, {:.2} s SVD)",
            s.precompute_s, st.simulate_s, st.svd_s
        );
        if let Some(p) = &s.error_plot {
            println!("error plot   {p}");
        }
    })
}
