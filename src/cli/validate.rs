//! `kestrel validate`: a parameter file's laws driven along measured curves from a virgin
//! state (no refit); NRMSE and KES values per curve, as a table or JSON.

use std::path::PathBuf;

use kestrel::kes::values::VALUE_NAMES;
use kestrel::kes::{read_kes_files, ReadingRules};
use kestrel::params::FabricParams;
use kestrel::validate::{median_and_worst, validate_curve, Validation};
use serde_json::json;

use super::CliError;

/// Drive each law of a parameter file along each curve's measured path (any path: the
/// standard protocol, half-amplitude or minor loops) and report how well it predicts it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Fabric parameter file (TOML, or JSON for .json): the laws to validate.
    #[arg(long, value_name = "FILE")]
    params: PathBuf,
    /// KES curve files or folders (each folder's .csv files, or each sub-folder's) (any path; `# protocol: NAME` names it in the report).
    #[arg(required = true, value_name = "CURVES")]
    files: Vec<PathBuf>,
    /// Print JSON: {"curves":[{"file","test","direction","protocol","nrmse","values":{"measured","predicted"}}]}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    curve: super::CurveArgs,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let params = FabricParams::read(&args.params).map_err(CliError::input)?;
    let curves = read_kes_files(&super::kes_paths(&args.files)?, args.curve.overrides()?)
        .map_err(CliError::input)?;
    let notes = kestrel::kes::no_law_notes(&curves, "validated").map_err(CliError::input)?;
    notes.iter().for_each(|n| eprintln!("{n}"));
    let curves: Vec<_> = curves
        .into_iter()
        .filter(|c| c.test.has_connector_law())
        .collect();
    let rules = ReadingRules::default();
    let results = curves
        .iter()
        .map(|c| validate_curve(&params, c, &rules))
        .collect::<Result<Vec<Validation>, _>>()
        .map_err(CliError::input)?;
    for c in curves
        .iter()
        .filter(|c| !c.fabric.is_empty() && c.fabric != params.fabric)
    {
        eprintln!(
            "note: {} is fabric `{}`, {} is for `{}`",
            c.path_name(),
            c.fabric,
            args.params.display(),
            params.fabric
        );
    }
    if args.json {
        let text = serde_json::to_string_pretty(&json!({ "curves": results }))
            .map_err(CliError::failed)?;
        println!("{text}");
        return Ok(());
    }
    println!(
        "{} — laws of {}, driven from a virgin state along each measured path",
        params.fabric,
        args.params.display()
    );
    for v in &results {
        let protocol = v
            .protocol
            .as_deref()
            .map_or(String::new(), |p| format!("  protocol: {p}"));
        println!(
            "  {} {}  {}{protocol}\n    NRMSE {:.3} %",
            v.test,
            v.direction,
            v.file,
            100.0 * v.nrmse
        );
        for (name, unit, _) in VALUE_NAMES {
            let (m, p) = (v.values.measured.get(name), v.values.predicted.get(name));
            if m.is_none() && p.is_none() {
                continue;
            }
            let show = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.4}"));
            let diff = match (m, p) {
                (Some(m), Some(p)) if m != 0.0 => format!("{:+.1} %", 100.0 * (p / m - 1.0)),
                _ => String::new(),
            };
            println!(
                "    {name:<5} {unit:<12} measured {:>10}  predicted {:>10}  {diff}",
                show(m),
                show(p)
            );
        }
    }
    let scores: Vec<f64> = results.iter().map(|v| v.nrmse).collect();
    if let Some((median, worst, at)) = median_and_worst(&scores) {
        println!(
            "{} curves: median NRMSE {:.3} %, worst {:.3} % ({})",
            results.len(),
            100.0 * median,
            100.0 * worst,
            results[at].file
        );
    }
    Ok(())
}
