//! `kestrel report`: a fabric library's summary table (CSV, or JSON on stdout): KES values
//! with their CV over replicates, the laws' parameters and the fit quality per fabric and
//! direction.

use std::path::PathBuf;

use kestrel::atomic::write_atomic;
use kestrel::fit::FitOptions;
use kestrel::kes::{kes_values, read_kes_files, ReadingRules};
use kestrel::params::FabricParams;
use kestrel::summary::{library_summary, to_csv};

use super::CliError;

/// One CSV row per fabric and direction: every KES value (mean and CV where replicates
/// exist), the fitted parameters and the fit quality (NRMSE); fabrics without a parameter
/// file are fitted as `kestrel fit` does.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// KES curve files of the library, or folders (each folder's .csv files, or each sub-folder's) (replicates of a curve are fitted jointly).
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// The CSV table to write.
    #[arg(short, long, value_name = "TABLE.csv")]
    out: PathBuf,
    /// Parameter files (TOML or JSON) to use instead of fitting, matched by their fabric.
    #[arg(long = "params", value_name = "CARD", num_args = 1..)]
    params: Vec<PathBuf>,
    /// Also print the table as JSON on stdout: [{"fabric","direction","files","specimens",
    /// "values","cv","params","nrmse","params_source"}].
    #[arg(long)]
    json: bool,
    /// Overwrite the table if it exists.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    curve: super::CurveArgs,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let inputs = super::curve_inputs(&args.files)
        .into_iter()
        .chain(args.params.clone());
    super::check_output_of(&args.out, args.force, inputs)?;
    let curves = read_kes_files(&super::kes_paths(&args.files)?, args.curve.overrides()?)
        .map_err(CliError::input)?;
    let cards = args
        .params
        .iter()
        .map(|p| FabricParams::read(p).map(|c| (p.clone(), c)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::input)?;
    // one card per fabric: a second would be ignored without a word
    for (i, (path, card)) in cards.iter().enumerate() {
        if let Some((first, _)) = cards[..i].iter().find(|(_, c)| c.fabric == card.fabric) {
            return Err(CliError::input(format!(
                "{} and {} are both cards of fabric `{}`: give one card per fabric",
                first.display(),
                path.display(),
                card.fabric
            )));
        }
    }
    for (path, card) in &cards {
        if !curves.iter().any(|c| c.fabric == card.fabric) {
            eprintln!(
                "note: {} is for fabric `{}`, which none of the files is",
                path.display(),
                card.fabric
            );
        }
    }
    let to_fit = kestrel::fit::fabric::group_by_fabric(&curves)
        .iter()
        .filter(|(f, _)| !cards.iter().any(|(_, c)| &c.fabric == f))
        .count();
    let bar = super::progress_bar(
        to_fit as u64,
        args.json || to_fit == 0,
        "fitting {bar:30} {pos}/{len} fabrics {msg}",
    );
    let summary = library_summary(
        &curves,
        &cards,
        &FitOptions::default(),
        &ReadingRules::default(),
        &|f| {
            bar.set_message(f.fabric.clone());
            bar.inc(1);
        },
    );
    bar.finish_and_clear();
    // how the values were read (a curve that starts off zero, F_m from the curve…): the notes
    // `kestrel values` prints
    for c in &curves {
        for note in kes_values(c, &ReadingRules::default()).notes {
            eprintln!("note: {}: {note}", c.path_name());
        }
    }
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    let csv = to_csv(&summary).map_err(CliError::failed)?;
    write_atomic(&args.out, csv.as_bytes(), args.force).map_err(CliError::input)?;
    if args.json {
        let text = serde_json::to_string_pretty(&summary.rows).map_err(CliError::failed)?;
        println!("{text}");
    } else {
        println!(
            "wrote {}: {} rows (fabric × direction)",
            args.out.display(),
            summary.rows.len()
        );
    }
    Ok(())
}
