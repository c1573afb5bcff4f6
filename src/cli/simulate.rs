//! `kestrel simulate`: run a KES protocol on a law from a parameter file and write the curve
//! as a KES CSV (KES units).

use std::path::PathBuf;

use kestrel::kes::protocol::{read_fitted_law, simulate_fitted, DEFAULT_SAMPLES};
use kestrel::kes::{
    kes_values, write_kes_csv, Direction, KesTest, Protocol, ProtocolError, ReadingRules,
};

use super::CliError;

/// Simulate a KES test (tensile to 500 gf/cm and back to zero force; shear ±8°; bending
/// ±2.5 1/cm) on a fabric's law and write the curve as a KES CSV file.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Fabric parameter file (TOML, or JSON for .json), or a TOML file holding one law alone
    /// (a traction, shear or bending law table).
    #[arg(long)]
    params: PathBuf,
    /// Test to simulate: tensile, shear or bending.
    #[arg(long)]
    test: KesTest,
    /// Direction whose law to use (warp, weft; bias reads warp).
    #[arg(long)]
    direction: Direction,
    /// Output KES CSV file.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Samples on the whole path.
    #[arg(long, default_value_t = DEFAULT_SAMPLES, value_parser = super::whole::<usize>("of samples from 8 to 1000000"))]
    samples: usize,
    /// Fabric name for the metadata (default: the parameter file's fabric, else its stem).
    #[arg(long)]
    fabric: Option<String>,
    /// Replace the output file if it exists.
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    super::check_output_of(&args.output, args.force, [&args.params])?;
    // what is written must read back: `normal` is the compression test's direction
    if args.direction == Direction::Normal {
        return Err(CliError::input(format!(
            "--direction normal: a {} curve is warp, weft or bias (normal is the compression \
             test's direction)",
            args.test
        )));
    }
    let (law, fabric) =
        read_fitted_law(&args.params, args.test, args.direction).map_err(CliError::input)?;
    let fabric = args.fabric.clone().or(fabric).unwrap_or_else(|| {
        args.params
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
    });
    let protocol = Protocol::kes(args.test).map_err(CliError::input)?;
    let mut curve = simulate_fitted(&law, &protocol, args.samples, &fabric, args.direction)
        .map_err(|e| match e {
            // The law could not be driven where the protocol asks: the work failed.
            ProtocolError::NeverReaches { .. }
            | ProtocolError::NoReturn { .. }
            | ProtocolError::NotFinite { .. } => CliError::failed(e),
            _ => CliError::input(e),
        })?;
    curve
        .metadata
        .insert("parameters".into(), args.params.display().to_string());
    write_kes_csv(&curve, &args.output, args.force).map_err(CliError::written)?;
    let reading = kes_values(&curve, &ReadingRules::default());
    let values: Vec<String> = reading
        .values
        .iter()
        .map(|(name, v)| format!("{name} = {v:.5}"))
        .collect();
    println!(
        "wrote {}: {} {} {}, {} samples; {}",
        args.output.display(),
        fabric,
        args.test,
        args.direction,
        curve.len(),
        values.join(", ")
    );
    Ok(())
}
