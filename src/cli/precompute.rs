//! `kestrel precompute SCENE --out MODEL`: samples a scene's impulse palette, reduces the
//! states by SVD and writes the reduced model; `--shard K/N` and `merge` split the sampling
//! over processes (docs/reduced.md).

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use kestrel::plot::reduced::{error_vs_rank_image, transfer_error_vs_rank_image};
use kestrel::plot::{write_image, ImageFormat, PlotSize};
use kestrel::reduced::transfer::TransferOptions;
use kestrel::reduced::{
    merge_reporting, precompute_reporting, precompute_shard, scene_fingerprint, PrecomputeOptions,
    PrecomputeStats, ReducedError, ReducedModel, Shard,
};

use super::CliError;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct PrecomputeArgs {
    #[command(subcommand)]
    pub merge: Option<MergeCommand>,
    /// Scene file with a [reduced] palette, e.g. scenes/reduced_door_cloth.toml.
    #[arg(required = true)]
    pub scene: Option<PathBuf>,
    /// Model file to write (.krd), or with --shard the shard file.
    #[arg(long, value_name = "MODEL", required = true)]
    pub out: Option<PathBuf>,
    /// Sample only shard K of N (1 <= K <= N <= chains) into a shard file, for `merge`.
    #[arg(long, value_name = "K/N", value_parser = parse_shard, conflicts_with = "error_plot")]
    pub shard: Option<(u32, u32)>,
    /// Independent sampling chains (default: the scene's `chains`).
    #[arg(long, value_parser = super::whole::<usize>("of chains, at least 1 (at most the frames sampled)"))]
    pub chains: Option<usize>,
    #[command(flatten)]
    pub basis: BasisArgs,
    /// Simulated time of the random palette sequence [s] (default: the scene's).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Seed of the random sequence (default: the scene's).
    #[arg(long, value_parser = super::whole::<u64>("from 0 to 18446744073709551615"))]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub transfer: TransferArgs,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

/// The basis' rank and its error plot (precompute and merge).
#[derive(Debug, Args)]
pub struct BasisArgs {
    /// ε: keep rank r with σ_r ≥ ε·σ₁ (default: the scene's rank_tolerance).
    #[arg(long)]
    pub epsilon: Option<f64>,
    /// Keep exactly this rank instead.
    #[arg(long, conflicts_with = "epsilon", value_parser = super::whole::<usize>("of basis vectors, at least 1"))]
    pub rank: Option<usize>,
    /// Also write the relative error against rank as a PNG or SVG (by the extension).
    #[arg(long, value_name = "PNG|SVG")]
    pub error_plot: Option<PathBuf>,
}

impl BasisArgs {
    /// Checks ε and the rank, `out` and the error plot's path before any work; the plot's
    /// format.
    fn check_outputs(
        &self,
        out: &Path,
        force: bool,
        inputs: &[&Path],
    ) -> Result<Option<ImageFormat>, CliError> {
        if let Some(e) = self.epsilon.filter(|e| !(*e > 0.0 && *e < 1.0)) {
            return Err(CliError::input(format!(
                "--epsilon {}: expected a number in (0, 1) (keep rank r with σ_r ≥ ε·σ₁)",
                kestrel::friction::short_number(e)
            )));
        }
        if self.rank == Some(0) {
            return Err(CliError::input("--rank 0: expected a rank of at least 1"));
        }
        for p in std::iter::once(out).chain(self.error_plot.as_deref()) {
            super::check_output_of(p, force, inputs.iter())?;
        }
        if let Some(plot) = &self.error_plot {
            super::check_distinct(&[("--out", out), ("--error-plot", plot)])?;
        }
        self.error_plot
            .as_deref()
            .map(|p| ImageFormat::of_path(p).map_err(CliError::input))
            .transpose()
    }
}

/// The reduced radiance transfer's options (precompute and merge).
#[derive(Debug, Args)]
pub struct TransferArgs {
    /// Also precompute the reduced radiance transfer (SH, 3 bands; docs/reduced.md).
    #[arg(long)]
    pub transfer: bool,
    /// Representative states N_a (k-means clusters of the reduced coordinates).
    #[arg(long, value_name = "N_A", default_value_t = 48, requires = "transfer", value_parser = super::whole::<usize>("of states from 2 to 1000"))]
    pub transfer_states: usize,
    /// Shadow rays per vertex (rounded up to a square).
    #[arg(long, value_name = "RAYS", default_value_t = 64, requires = "transfer", value_parser = super::whole::<usize>("of rays from 1 to 4096"))]
    pub transfer_samples: usize,
    /// Held-out states whose transfer is computed directly to measure the interpolation.
    #[arg(long, value_name = "N", default_value_t = 8, requires = "transfer", value_parser = super::whole::<usize>("of states from 0 to 200"))]
    pub held_out: usize,
    /// ε_a: keep transfer rank r_a with σ_r ≥ ε_a·σ₁.
    #[arg(long, value_name = "E", default_value_t = 0.1, requires = "transfer")]
    pub transfer_epsilon: f64,
    /// Keep exactly this transfer rank r_a instead.
    #[arg(long, value_name = "R_A", requires = "transfer", value_parser = super::whole::<usize>("of transfer modes, at least 1"))]
    pub transfer_rank: Option<usize>,
    /// Seed of the ray directions and of k-means.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "transfer", value_parser = super::whole::<u64>("from 0 to 18446744073709551615"))]
    pub transfer_seed: u64,
}

impl TransferArgs {
    fn options(&self) -> Result<Option<TransferOptions>, CliError> {
        if !self.transfer {
            return Ok(None);
        }
        let t = TransferOptions {
            states: self.transfer_states,
            samples: self.transfer_samples,
            held_out: self.held_out,
            epsilon: self.transfer_epsilon,
            rank: self.transfer_rank,
            seed: self.transfer_seed,
        };
        t.validate().map_err(CliError::input)?;
        Ok(Some(t))
    }
}

/// The bar of the transfer's states.
const TRANSFER_BAR: &str = "{bar:40} {percent:>3}% transfer   {elapsed_precise} (eta {eta})";

#[derive(Debug, clap::Subcommand)]
pub enum MergeCommand {
    /// Merge the shard files of one sampling into the model one process would write.
    Merge(MergeArgs),
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard files written by `kestrel precompute SCENE --shard K/N --out PART`, all N.
    #[arg(required = true, value_name = "PART")]
    pub parts: Vec<PathBuf>,
    /// Model file to write (.krd).
    #[arg(long, value_name = "MODEL")]
    pub out: PathBuf,
    /// The scene file (default: the path stored in the shards).
    #[arg(long)]
    pub scene: Option<PathBuf>,
    #[command(flatten)]
    pub basis: BasisArgs,
    #[command(flatten)]
    pub transfer: TransferArgs,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

/// `K/N` with 1 <= K <= N.
fn parse_shard(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{text}`: expected K/N with 1 <= K <= N, e.g. 2/4");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let k: u32 = k.trim().parse().map_err(|_| bad())?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    if k == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

#[derive(Debug, Serialize)]
struct ShardSummary {
    scene: String,
    out: String,
    shard: u32,
    shards: u32,
    /// Units of this shard [first, end) and of the whole sampling.
    units: Vec<u32>,
    of_units: u32,
    simulate_s: f64,
    bytes: usize,
}

#[derive(Debug, Serialize)]
struct Summary {
    scene: String,
    out: String,
    #[serde(flatten)]
    stats: PrecomputeStats,
    /// Wall time of the whole precompute: sampling, SVD, library and, with --transfer, the
    /// transfer (its own share is `transfer_s`) [s].
    precompute_s: f64,
    /// Size of the model file [bytes].
    bytes: usize,
    error_plot: Option<String>,
}

pub fn run(args: PrecomputeArgs) -> Result<(), CliError> {
    if let Some(MergeCommand::Merge(m)) = args.merge {
        return run_merge(m);
    }
    let (Some(scene_path), Some(out)) = (args.scene, args.out) else {
        return Err(CliError::input("precompute needs SCENE and --out MODEL"));
    };
    let inputs = super::scene_inputs(&scene_path);
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let plot_format = args.basis.check_outputs(&out, args.output.force, &inputs)?;
    let scene = super::load_dynamic(
        &scene_path,
        "is a virtual KES test; precompute a dynamic scene with a [reduced] palette",
    )?;
    if scene.reduced.is_none() {
        return Err(CliError::input(format!(
            "{}: {}",
            scene_path.display(),
            ReducedError::NoPalette
        )));
    }
    let opts = PrecomputeOptions {
        epsilon: args.basis.epsilon,
        rank: args.basis.rank,
        duration: args.duration,
        seed: args.seed,
        chains: args.chains,
        transfer: args.transfer.options()?,
    };
    if args.shard.is_some() && opts.transfer.is_some() {
        return Err(CliError::input(
            "--transfer is computed from all the states: give it to `precompute merge`, not to a shard",
        ));
    }
    let pb = super::progress_bar(
        1000,
        args.output.json,
        "{bar:40} {percent:>3}% simulated  {elapsed_precise} (eta {eta})",
    );
    let progress = |f: f64| pb.set_position((f * 1000.0) as u64);
    let failed = |e: ReducedError| match e {
        ReducedError::Invalid(_) | ReducedError::TransferOptions(_) => CliError::input(e),
        e => CliError::failed(e),
    };
    if let Some((k, n)) = args.shard {
        let sha = scene_fingerprint(&scene_path).map_err(CliError::input)?;
        let path = scene_path.display().to_string();
        let shard = precompute_shard(&scene, (&path, &sha), &opts, (k, n), &progress)
            .inspect_err(|_| pb.abandon())
            .map_err(failed)?;
        pb.finish_and_clear();
        let bytes = super::interrupt::Outputs::start().write(&out, || {
            shard
                .write(&out, args.output.force)
                .map_err(CliError::written)
        })?;
        let h = &shard.header;
        let s = ShardSummary {
            scene: path,
            out: out.display().to_string(),
            shard: k,
            shards: n,
            units: vec![h.first_unit, h.first_unit + h.unit_count],
            of_units: h.units,
            simulate_s: h.simulate_s,
            bytes,
        };
        return super::print_summary(&s, args.output.json, |s| {
            println!(
                "shard        {} ({}/{}, {} bytes)",
                s.out, s.shard, s.shards, s.bytes
            );
            println!(
                "units        {}..{} of {}",
                s.units[0], s.units[1], s.of_units
            );
            println!("time         {:.2} s simulating", s.simulate_s);
            println!("merge with   kestrel precompute merge PART... --out MODEL");
        });
    }
    let t0 = Instant::now();
    let tb = super::progress_bar(
        1000,
        args.output.json || opts.transfer.is_none(),
        TRANSFER_BAR,
    );
    let transfer_progress = |f: f64| {
        pb.finish_and_clear();
        tb.set_position((f * 1000.0) as u64)
    };
    let result = precompute_reporting(&scene, &opts, &progress, &transfer_progress);
    let (mut model, stats) = result
        .inspect_err(|_| {
            pb.abandon();
            tb.abandon()
        })
        .map_err(failed)?;
    // the scene's fingerprint, for `play --compare`
    model.info.scene_sha256 = Some(scene_fingerprint(&scene_path).map_err(CliError::input)?);
    pb.finish_and_clear();
    tb.finish_and_clear();
    let written = Written {
        scene: &scene.name,
        scene_arg: scene_path.display().to_string(),
        out: &out,
        error_plot: args.basis.error_plot.as_deref().zip(plot_format),
        force: args.output.force,
        json: args.output.json,
    };
    written.finish(&model, stats, t0.elapsed().as_secs_f64())
}

/// `kestrel precompute merge PART… --out MODEL`.
fn run_merge(args: MergeArgs) -> Result<(), CliError> {
    let given_scene = args.scene.iter().flat_map(|s| super::scene_inputs(s));
    let inputs: Vec<PathBuf> = args.parts.iter().cloned().chain(given_scene).collect();
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let plot_format = args
        .basis
        .check_outputs(&args.out, args.output.force, &inputs)?;
    let t0 = Instant::now();
    let mut shards = Vec::with_capacity(args.parts.len());
    for p in &args.parts {
        shards.push((p.clone(), Shard::read(p).map_err(CliError::input)?));
    }
    let scene_path = match (&args.scene, shards.first()) {
        (Some(p), _) => p.clone(),
        (None, Some((_, s))) => PathBuf::from(&s.header.scene),
        (None, None) => return Err(CliError::input("no shards to merge")),
    };
    let scene = super::load_dynamic(
        &scene_path,
        "is a virtual KES test; precompute a dynamic scene with a [reduced] palette",
    )
    .map_err(|e| {
        CliError::input(format!(
            "{e} (the scene the shards were sampled from; name it with --scene)"
        ))
    })?;
    // the scene a shard names, and its card, are inputs too
    for p in std::iter::once(&args.out).chain(&args.basis.error_plot) {
        super::check_output_of(p, args.output.force, super::scene_inputs(&scene_path))?;
    }
    let sha = scene_fingerprint(&scene_path).map_err(CliError::input)?;
    let opts = PrecomputeOptions {
        epsilon: args.basis.epsilon,
        rank: args.basis.rank,
        transfer: args.transfer.options()?,
        ..PrecomputeOptions::default()
    };
    let tb = super::progress_bar(
        1000,
        args.output.json || opts.transfer.is_none(),
        TRANSFER_BAR,
    );
    let progress = |f: f64| tb.set_position((f * 1000.0) as u64);
    let (mut model, stats) = merge_reporting(&scene, &sha, shards, &opts, &progress)
        .inspect_err(|_| tb.abandon())
        .map_err(|e| match e {
            ReducedError::Invalid(_) | ReducedError::TransferOptions(_) => CliError::input(e),
            e => CliError::failed(e),
        })?;
    // as one process records it: the same bytes
    model.info.scene_sha256 = Some(sha.clone());
    tb.finish_and_clear();
    let written = Written {
        scene: &scene.name,
        scene_arg: scene_path.display().to_string(),
        out: &args.out,
        error_plot: args.basis.error_plot.as_deref().zip(plot_format),
        force: args.output.force,
        json: args.output.json,
    };
    written.finish(&model, stats, t0.elapsed().as_secs_f64())
}

/// Where a finished model goes, and how it is reported.
struct Written<'a> {
    scene: &'a str,
    scene_arg: String,
    out: &'a std::path::Path,
    error_plot: Option<(&'a std::path::Path, ImageFormat)>,
    force: bool,
    json: bool,
}

impl Written<'_> {
    /// Writes the model and its error plot, and prints the summary.
    fn finish(
        self,
        model: &ReducedModel,
        stats: PrecomputeStats,
        precompute_s: f64,
    ) -> Result<(), CliError> {
        // an interrupt from here removes the model and plot this run made
        let mut outputs = super::interrupt::Outputs::start();
        let bytes = outputs.write(self.out, || {
            model.write(self.out, self.force).map_err(CliError::written)
        })?;
        if let Some((p, format)) = self.error_plot {
            let sigma: Vec<f64> = model.sigma.iter().map(|&s| s as f64).collect();
            let image = match (&model.transfer, &stats.transfer) {
                (Some(t), Some(ts)) => {
                    let sigma_a: Vec<f64> = t.sigma.iter().map(|&s| f64::from(s)).collect();
                    transfer_error_vs_rank_image(
                        self.scene,
                        (&sigma, model.rank),
                        (&sigma_a, t.info.rank as usize),
                        &ts.transfer_held_out_error_by_rank,
                        PlotSize::SINGLE,
                        format,
                    )
                }
                _ => error_vs_rank_image(
                    self.scene,
                    &sigma,
                    model.rank,
                    model.info.rank_tolerance,
                    PlotSize::SINGLE,
                    format,
                ),
            }
            .map_err(CliError::failed)?;
            outputs.write(p, || {
                write_image(p, &image, self.force).map_err(CliError::written)
            })?;
        }
        let s = Summary {
            scene: self.scene_arg,
            out: self.out.display().to_string(),
            stats,
            precompute_s,
            bytes,
            error_plot: self.error_plot.map(|(p, _)| p.display().to_string()),
        };
        print_table(&s, self.json)
    }
}

fn print_table(s: &Summary, json: bool) -> Result<(), CliError> {
    super::print_summary(s, json, |s| {
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
        if let Some(t) = &st.transfer {
            println!(
                "transfer     rank {} of N_a = {} states, {} rays per vertex (relative l2 error {:.4}, Frobenius {:.4})",
                t.transfer_rank,
                t.transfer_states,
                t.transfer_samples,
                t.transfer_rel_error,
                t.transfer_frobenius_error
            );
            println!(
                "held out     {} states: interpolated transfer error {:.4} (projection on U_a {:.4}), {:.2} s",
                t.transfer_held_out,
                t.transfer_held_out_error,
                t.transfer_held_out_projection_error,
                t.transfer_s
            );
        }
        if let Some(p) = &s.error_plot {
            println!("error plot   {p}");
        }
    })
}
