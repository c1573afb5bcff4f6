//! Playback error against precompute time (docs/reduced.md, issue 18): reads the CSV written by
//! `scripts/playback_error_matrix.sh` (model, precompute_s, rule, sequence, rank,
//! playback_error, projection_error) and plots each (model, rule)'s mean error over its
//! sequences against the model's precompute time, with the 5 % target; with `--sequences`,
//! the mean over those sequences only, of the (model, rule)s that played all of them; with
//! `--family PREFIX:LABEL` (repeatable), the models whose name starts with PREFIX are a series
//! of their own per rule, labelled `offset = RULE, LABEL`.
//! `cargo run --release --example playback_error_plot -- MATRIX.csv OUT.png [--force]
//! [--sequences H1,H2,H3] [--family PREFIX:LABEL]…` (default H1,H2,H3, no families)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use kestrel::plot::reduced::{playback_error_vs_precompute_image, PlaybackErrorPoint};
use kestrel::plot::{write_image, ImageFormat, PlotSize};

/// Playback error against precompute time, from `scripts/playback_error_matrix.sh`'s CSV.
#[derive(Parser)]
struct Args {
    /// The matrix CSV.
    csv: PathBuf,
    /// The image to write (PNG or SVG).
    out: PathBuf,
    /// Replace an existing image.
    #[arg(long)]
    force: bool,
    /// The sequences to average over.
    #[arg(long, value_delimiter = ',', default_value = "H1,H2,H3")]
    sequences: Vec<String>,
    /// Models whose name starts with PREFIX make a series of their own, labelled LABEL.
    #[arg(long, value_name = "PREFIX:LABEL", value_parser = family)]
    family: Vec<(String, String)>,
}

fn family(text: &str) -> Result<(String, String), String> {
    text.split_once(':')
        .map(|(prefix, label)| (prefix.to_string(), label.to_string()))
        .ok_or_else(|| format!("`{text}`: expected PREFIX:LABEL"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(
        &args.csv,
        &args.out,
        args.force,
        &args.sequences,
        &args.family,
    ) {
        Ok(n) => {
            println!("{n} points written to {}", args.out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(
    csv: &Path,
    out: &Path,
    force: bool,
    sequences: &[String],
    families: &[(String, String)],
) -> Result<usize, String> {
    let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    // (model, rule) → (precompute s, errors by sequence); rules in order of first appearance
    let mut groups: BTreeMap<(String, String), (f64, BTreeMap<String, f64>)> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || {
            format!(
                "{} line {}: expected 7 fields, numbers in 2, 6",
                csv.display(),
                n + 1
            )
        };
        if f.len() != 7 {
            return Err(bad());
        }
        let t: f64 = f[1].parse().map_err(|_| bad())?;
        let e: f64 = f[5].parse().map_err(|_| bad())?;
        if !sequences.iter().any(|s| s == f[3]) {
            continue;
        }
        if !order.iter().any(|r| r == f[2]) {
            order.push(f[2].to_string());
        }
        let g = groups
            .entry((f[0].to_string(), f[2].to_string()))
            .or_insert((t, BTreeMap::new()));
        g.1.insert(f[3].to_string(), e);
    }
    let mut points = Vec::new();
    for rule in &order {
        for ((model, r), (t, errors)) in &groups {
            if r == rule && errors.len() == sequences.len() {
                let family = families
                    .iter()
                    .find(|(prefix, _)| model.starts_with(prefix.as_str()))
                    .map_or(String::new(), |(_, label)| format!(", {label}"));
                points.push(PlaybackErrorPoint {
                    rule: format!("offset = {rule}{family}"),
                    precompute_s: *t,
                    error: errors.values().sum::<f64>() / errors.len() as f64,
                });
            }
        }
    }
    let format = ImageFormat::of_path(out).map_err(|e| e.to_string())?;
    let png = playback_error_vs_precompute_image(
        &format!("door cloth, mean over {}", sequences.join(", ")),
        &points,
        0.05,
        PlotSize::new(1000, 650).map_err(|e| e.to_string())?,
        format,
    )
    .map_err(|e| e.to_string())?;
    write_image(out, &png, force).map_err(|e| e.to_string())?;
    Ok(points.len())
}
