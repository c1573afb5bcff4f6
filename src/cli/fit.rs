//! `kestrel fit`: identify the connector laws of each fabric's curves and write one parameter
//! file per fabric; `--values` fits from published KES values instead of curves.

use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use serde_json::json;

use super::CliError;
use kestrel::fit::fabric::fabric_slug;
use kestrel::fit::{
    fit_fabrics, CurveFit, FabricFit, FitModel, FitOptions, FitStatus, MuMode, OffsetMode,
    ToeChoice, ValuesSideBySide,
};
use kestrel::kes::import::{read_kes_files, read_loop, CurveOverrides};
use kestrel::kes::values::VALUE_NAMES;
use kestrel::kes::{Curve, Direction, KesTest};
use kestrel::params::ParamsFormat;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// KES curve files (CSV) or folders (each folder's .csv files, or each sub-folder's); files are grouped by their `fabric` metadata.
    #[arg(required_unless_present = "values")]
    pub files: Vec<PathBuf>,
    /// Friction model: dahl, dahl-alpha, bs2, or auto (lowest AIC, with mu free and zero).
    #[arg(long, default_value = "auto")]
    pub model: FitModel,
    /// Load-dependent friction level: free, or zero (the paper's additive law). Ignored by auto.
    #[arg(long, default_value = "free", value_parser = parse_mu)]
    pub mu: MuMode,
    /// Traction toe: quadratic (the paper's), power, or auto (lower AIC).
    #[arg(long, default_value = "auto")]
    pub toe: ToeChoice,
    /// Force zero offset: zero (the curve's own zero), or fit (an instrument zero error fitted
    /// with the law, written to the parameter file and added wherever the law is driven).
    #[arg(long, default_value = "zero")]
    pub offset: OffsetMode,
    /// Weight W of the KES values in a joint objective NRMSE² + W²·g² (g: RMS relative gap of
    /// the fitted law's KES values along the measured path to the measured ones); 0 fits
    /// the curve alone (docs/fitting.md).
    #[arg(long, value_name = "W", default_value_t = 0.0, value_parser = parse_weight)]
    pub weight_values: f64,
    /// Output file (one fabric) or directory (several); default `<fabric>.params.toml` here.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Overwrite existing parameter files.
    #[arg(long)]
    pub force: bool,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write parameter files as JSON instead of TOML.
    #[arg(long)]
    pub json_out: bool,
    /// Test of files that lack it in their metadata (tensile, shear, bending, compression,
    /// friction, roughness).
    #[arg(long)]
    pub test: Option<KesTest>,
    /// Direction of files that lack it (warp, weft, bias; normal for compression).
    #[arg(long)]
    pub direction: Option<Direction>,
    /// Gauge length [mm] of tensile files with an `elongation [mm]` column.
    #[arg(long, value_name = "MM")]
    pub gauge_length: Option<f64>,
    #[command(flatten)]
    pub lp: super::LoopArgs,
    /// Fit from published KES values (a TOML file) instead of curves.
    #[arg(long)]
    pub values: Option<PathBuf>,
    /// Write the laws that could be fitted even when some curve (or value) could not; without
    /// it, one failure writes no file and exits with status 2.
    #[arg(long)]
    pub allow_partial: bool,
    /// The fabric's areal density for the card's `[properties]` (replaces a `# weight` line):
    /// 320g/m2 or 32mg/cm2.
    #[arg(long, value_name = "W", value_parser = kestrel::params::parse_weight)]
    pub weight: Option<f64>,
    /// The fabric's thickness for `[properties]` (replaces the compression curve's T0): 0.9mm.
    #[arg(long, value_name = "T", value_parser = kestrel::params::parse_thickness)]
    pub thickness: Option<f64>,
    /// The surface coefficient of friction for `[properties]` (replaces the friction curves'
    /// MIU).
    #[arg(long, value_name = "MU", value_parser = kestrel::params::parse_friction_coefficient)]
    pub friction_coefficient: Option<f64>,
}

/// The `[properties]` given on the command line replace the curves' ones.
pub(super) fn given_properties(params: &mut kestrel::FabricParams, args: &Args) {
    let given = [
        ("areal_density", args.weight),
        ("thickness", args.thickness),
        ("friction_coefficient", args.friction_coefficient),
    ];
    params.properties = kestrel::params::FabricProperties::with_given(
        params.properties.take(),
        given,
        "command line",
    );
}

fn parse_mu(s: &str) -> Result<MuMode, String> {
    match s {
        "free" => Ok(MuMode::Free),
        "zero" | "0" => Ok(MuMode::Zero),
        o => Err(format!("unknown mu mode `{o}` — expected free or zero")),
    }
}

/// The largest `--weight-values`: past it the values alone decide the fit already, and W²
/// must stay far from overflow.
const MAX_WEIGHT_VALUES: f64 = 1e6;

fn parse_weight(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(w) if (0.0..=MAX_WEIGHT_VALUES).contains(&w) => Ok(w),
        _ => Err(format!(
            "`{}` is not a weight: expected a number from 0 (the curve alone) to 1e6",
            kestrel::input::printable(s)
        )),
    }
}

fn load(args: &Args) -> Result<Vec<Curve>, CliError> {
    if let Some(spec) = args.lp.spec(args.direction)? {
        return args
            .files
            .iter()
            .map(|f| read_loop(f, &spec).map_err(CliError::input))
            .collect();
    }
    let curves = read_kes_files(
        &super::kes_paths(&args.files)?,
        CurveOverrides {
            test: args.test,
            direction: args.direction,
            gauge_length: super::gauge_length_m(args.gauge_length)?,
        },
    )
    .map_err(CliError::input)?;
    // compression and surface curves are not fitted (`fit_fabric` leaves them out)
    let notes = kestrel::kes::no_law_notes(&curves, "fitted").map_err(CliError::input)?;
    notes.iter().for_each(|n| eprintln!("{n}"));
    Ok(curves)
}

/// Where each fabric's file goes (several: `<slug>.params.toml`, or `.json` with
/// `--json-out`, in the `-o` folder).
fn output_path(args: &Args, fabric: &str, several: bool) -> PathBuf {
    let ext = if args.json_out { "json" } else { "toml" };
    let name = format!("{}.params.{ext}", fabric_slug(fabric));
    match (&args.out, several) {
        (Some(o), true) => o.join(name),
        (Some(o), false) => o.clone(),
        (None, _) => PathBuf::from(name),
    }
}

/// The extension of the `-o` file (lower case), when `-o` names one file.
fn out_extension(args: &Args, several: bool) -> Option<String> {
    args.out
        .as_ref()
        .filter(|_| !several)
        .and_then(|o| o.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

/// A `-o` file named neither `.toml` nor `.json` (`card.png`, `x.csv`, `card`) is no
/// parameter file (exit 2), as the workbench's save refuses it; checked after the path's own
/// checks (`check_output_of`: a folder, the command's input…), before anything is fitted.
pub(super) fn check_card_name(args: &Args, several: bool) -> Result<(), CliError> {
    match (&args.out, out_extension(args, several).as_deref()) {
        (Some(o), ext) if !several && !matches!(ext, Some("toml" | "json")) => {
            Err(CliError::input(format!(
                "-o {}: a parameter file is named .toml or .json (the name says which \
                 format), e.g. -o cotton.params.toml",
                o.display()
            )))
        }
        _ => Ok(()),
    }
}

/// The format of the parameter files: JSON with `--json-out` or a `-o` file named `.json`,
/// else TOML; `--json-out` with a `-o` file not named `.json` would not read back (exit 2).
pub(super) fn params_format(args: &Args, several: bool) -> Result<ParamsFormat, CliError> {
    let ext = out_extension(args, several);
    let one_file = args.out.is_some() && !several;
    match (ext.as_deref(), args.json_out) {
        (Some("json"), _) => Ok(ParamsFormat::Json),
        // every reader takes a name not ending in .json for TOML
        (_, true) if one_file => Err(CliError::input(format!(
            "--json-out writes JSON, but -o {} would be read back as TOML (a name not ending \
             in .json): name it .json, or drop --json-out",
            args.out.as_deref().unwrap_or(Path::new("")).display()
        ))),
        (_, true) => Ok(ParamsFormat::Json),
        _ => Ok(ParamsFormat::Toml),
    }
}

/// Refuses (exit 2), before anything is fitted, fabrics whose parameter files would have the
/// same name (`Cotton shirting` and `cotton-shirting` both give `cotton-shirting.params.toml`;
/// names are compared without case, as some file systems do): one would replace the other.
fn check_distinct_outputs(args: &Args, fabrics: &[&str], several: bool) -> Result<(), CliError> {
    let mut seen: Vec<(String, &str)> = Vec::new();
    for &fabric in fabrics {
        let path = output_path(args, fabric, several);
        let key = path.to_string_lossy().to_lowercase();
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            return Err(CliError::input(format!(
                "fabrics `{}` and `{}` would both be written to {}: give them distinct \
                 `# fabric:` names (or fit them apart)",
                kestrel::input::printable(first),
                kestrel::input::printable(fabric),
                path.display()
            )));
        }
        seen.push((key, fabric));
    }
    Ok(())
}

fn params_json(fit: &CurveFit) -> serde_json::Value {
    let mut params = serde_json::Map::new();
    let mut errors = serde_json::Map::new();
    for p in &fit.params {
        params.insert(p.name.to_string(), json!(p.value));
        if let Some(se) = p.std_error {
            errors.insert(p.name.to_string(), json!(se));
        }
    }
    json!({
        "file": fit.file,
        "test": fit.test.name(),
        "direction": fit.direction,
        "model": fit.model,
        "nrmse": if fit.nrmse.is_finite() { json!(fit.nrmse) } else { json!(null) },
        "iterations": fit.iterations,
        "params": params,
        "std_errors": errors,
        "status": match &fit.status { FitStatus::Fitted => json!("fitted"), FitStatus::Failed(r) => json!(format!("failed: {r}")) },
        "termination": fit.termination,
        "selection": fit.selection,
        "values": fit.values,
        "intervals95": fit.params.iter().filter_map(|p| Some((p.name, p.interval95?))).collect::<std::collections::BTreeMap<_, _>>(),
        "interval_method": "Wald: value -/+ 1.96 standard errors, s^2 (J^T J)^-1 at the optimum",
        "correlation": fit.correlation,
        "pinned": fit.params.iter().filter_map(|p| Some((p.name, p.pinned.clone()?))).collect::<std::collections::BTreeMap<_, _>>(),
        "specimens": fit.specimens,
        "not_identified": fit.params.iter().filter(|p| p.not_identified).map(|p| p.name).collect::<Vec<_>>(),
        "conditional": fit.params.iter().filter(|p| p.conditional).map(|p| p.name).collect::<Vec<_>>(),
        "interval_notes": fit.params.iter().filter_map(|p| Some((p.name, p.interval_note.clone()?))).collect::<std::collections::BTreeMap<_, _>>(),
    })
}

fn print_report(fabric: &FabricFit, written: Option<&Path>) {
    println!("{}  ({:.1} ms)", fabric.fabric, fabric.total_ms);
    for fit in &fabric.fits {
        println!(
            "  {} {} — {}",
            fit.test,
            fit.direction,
            if fit.file.is_empty() { "-" } else { &fit.file }
        );
        match &fit.status {
            FitStatus::Failed(reason) => {
                println!("    not fitted: {reason}");
                continue;
            }
            FitStatus::Fitted => {}
        }
        println!(
            "    model {}  NRMSE {:.3} %  {} iterations, {} evaluations, {:.1} ms  ({})",
            fit.model,
            100.0 * fit.nrmse,
            fit.iterations,
            fit.evaluations,
            fit.elapsed_ms,
            fit.termination
        );
        if !fit.specimens.is_empty() {
            println!(
                "    {} specimens fitted jointly (one law; NRMSE above pooled):",
                fit.specimens.len()
            );
            for s in &fit.specimens {
                println!(
                    "      {}  NRMSE {:.3} %  ({} samples)",
                    s.file,
                    100.0 * s.nrmse,
                    s.samples
                );
            }
        }
        if let Some(sel) = &fit.selection {
            println!("    {sel}");
        }
        for p in &fit.params {
            let se = match (&p.pinned, p.std_error, p.interval95) {
                (Some(why), _, _) => format!("pinned: {why}"),
                (None, Some(se), Some([lo, hi])) => {
                    format!("± {se:.3e}  95 % [{lo:.4e}, {hi:.4e}]")
                }
                (None, Some(se), None) => format!("± {se:.3e}"),
                (None, None, _) if p.not_identified => match &p.interval_note {
                    Some(why) => format!("not identified: {why}"),
                    None => {
                        "not identified: the curve does not determine it (J^T J singular along it)"
                            .into()
                    }
                },
                (None, None, _) => "± n/a".into(),
            };
            println!("    {:<13} {:>13.6e} {:<12} {se}", p.name, p.value, p.unit);
            if let (Some(note), false) = (&p.interval_note, p.not_identified) {
                println!("    {:<13} {note}", "");
            }
        }
        for (a, b, r) in &fit.correlations {
            println!("    correlation({a}, {b}) = {r:+.3}");
        }
        if let Some(v) = &fit.values {
            print_values(v);
        }
    }
    if let Some(p) = written {
        println!("  written {}", p.display());
    }
}

/// The curves of a fabric that could not be fitted, one line each naming the file.
fn not_fitted(fabric: &FabricFit) -> Vec<String> {
    fabric
        .fits
        .iter()
        .filter_map(|f| match &f.status {
            FitStatus::Failed(reason) => Some(format!(
                "{} ({} {}, {}): not fitted: {reason}",
                if f.file.is_empty() { "-" } else { &f.file },
                f.test,
                f.direction,
                fabric.fabric
            )),
            FitStatus::Fitted => None,
        })
        .collect()
}

/// The KES values of the curve and of its fitted law along the same measured path.
fn print_values(v: &ValuesSideBySide) {
    println!("    KES value   measured     fitted      gap");
    for (name, m, f, gap) in v.rows() {
        let unit = VALUE_NAMES
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or("", |u| u.1);
        match (f, gap) {
            (Some(f), Some(g)) => println!(
                "    {name:<6} {m:>13.4} {f:>10.4} {:>+7.2} %  {unit}",
                100.0 * g
            ),
            _ => println!("    {name:<6} {m:>13.4}        n/a           {unit}"),
        }
    }
    if let Some(note) = &v.note {
        println!("    {note}");
    }
}

pub fn run(args: Args) -> Result<(), CliError> {
    if let Some(values) = &args.values {
        return super::fit_values::run(values, &args);
    }
    let curves = load(&args)?;
    let options = FitOptions {
        model: args.model,
        mu: args.mu,
        toe: args.toe,
        offset: args.offset,
        weight_values: args.weight_values,
        ..FitOptions::default()
    };
    if let Some(clash) = kestrel::fit::fabric::slot_clash(&curves) {
        return Err(CliError::input(clash));
    }
    let groups = kestrel::fit::fabric::group_by_fabric(&curves);
    let fabrics = groups.len();
    let several = fabrics > 1;
    let all_loops = curves.iter().all(|c| c.test == KesTest::Loop);
    // a generic loop has no law slot in a fabric file: its law is reported (and in --json),
    // never written to a card that would not hold it
    if let (Some(o), Some(lp)) = (&args.out, curves.iter().find(|c| c.test == KesTest::Loop)) {
        return Err(CliError::input(format!(
            "-o {}: the law of a generic loop ({}) has no place in a parameter file (it is not a \
             tensile, shear or bending law); its parameters are in the report and in --json",
            o.display(),
            lp.path_name()
        )));
    }
    let writes = !all_loops;
    // every output checked before anything is fitted; the folder of several is made by the
    // first write (a failed fit leaves none)
    let format = params_format(&args, several)?;
    if writes {
        let names: Vec<&str> = groups.iter().map(|(f, _)| f.as_str()).collect();
        check_distinct_outputs(&args, &names, several)?;
        let inputs = super::curve_inputs(&args.files);
        for name in names {
            super::check_output_of(&output_path(&args, name, several), args.force, &inputs)?;
        }
        check_card_name(&args, several)?;
    }
    let bar = super::progress_bar(
        fabrics as u64,
        !several,
        "fitting {bar:30} {pos}/{len} fabrics {msg}",
    );
    let start = std::time::Instant::now();
    let mut results = fit_fabrics(&curves, &options, &|f| {
        bar.set_message(f.fabric.clone());
        bar.inc(1);
    });
    for f in &mut results {
        given_properties(&mut f.params, &args);
    }
    bar.finish_and_clear();
    let refused: Vec<String> = results.iter().flat_map(not_fitted).collect();
    // every card checked as its reader will check it, before any is written: a value out of
    // its physical range (from the curves or the options) writes no card at all
    let unreadable: Vec<String> = results
        .iter()
        .filter(|f| f.fits.iter().any(|c| c.is_fitted()))
        .filter_map(|f| {
            let path = output_path(&args, &f.fabric, several);
            f.params.validate(&path).err().map(|e| e.to_string())
        })
        .collect();
    let write_any = writes && unreadable.is_empty() && (refused.is_empty() || args.allow_partial);
    let mut out_json = Vec::new();
    let mut failures = Vec::new();
    // an interrupt between the cards removes those this run made
    let mut outputs = super::interrupt::Outputs::start();
    for fabric in &results {
        let fitted_any = fabric.fits.iter().any(|f| f.is_fitted());
        let mut warning = None;
        let written = if !write_any || !fitted_any {
            None
        } else {
            let path = output_path(&args, &fabric.fabric, several);
            let new = path.symlink_metadata().is_err();
            match fabric.params.write(&path, format, args.force) {
                Ok(()) => {
                    outputs.wrote(&path, new)?;
                    // a source changed on disk while it was fitted
                    warning = kestrel::fit::fabric::sources_changed_on_disk(&fabric.params);
                    if let Some(w) = &warning {
                        eprintln!("warning: {}: {w}", path.display());
                    }
                    Some(path)
                }
                Err(e) => {
                    failures.push(e.to_string());
                    None
                }
            }
        };
        if args.json {
            out_json.push(json!({
                "fabric": fabric.fabric,
                "curves": fabric.fits.iter().map(params_json).collect::<Vec<_>>(),
                "total_ms": fabric.total_ms,
                "written": written.as_ref().map(|p| p.display().to_string()),
                "warning": warning,
            }));
        } else {
            print_report(fabric, written.as_deref());
        }
    }
    if args.json {
        println!(
            "{}",
            json!({ "fabrics": out_json, "wall_ms": start.elapsed().as_secs_f64() * 1e3 })
        );
    }
    if writes && !unreadable.is_empty() {
        return Err(CliError::input(format!(
            "{}\nno parameter file written: a card with a value outside its range could not be \
             read back",
            unreadable.join("\n")
        )));
    }
    if !failures.is_empty() {
        return Err(CliError::failed(failures.join("\n")));
    }
    let fitted_any = (results.iter()).any(|f| f.fits.iter().any(|c| c.is_fitted()));
    refusal(&refused, args.allow_partial, fitted_any)
}

/// Exit status 2 when a law could not be fitted (a warning with `--allow-partial`, as long as
/// some law was: with none fitted the command has no result, and is refused all the same).
pub(super) fn refusal(
    refused: &[String],
    allow_partial: bool,
    fitted_any: bool,
) -> Result<(), CliError> {
    match (refused.is_empty(), allow_partial && fitted_any) {
        (true, _) => Ok(()),
        (false, true) => {
            eprintln!("warning: {}", refused.join("\nwarning: "));
            Ok(())
        }
        (false, false) => Err(CliError::input(format!(
            "{}\nno parameter file written (--allow-partial writes the laws that were fitted{})",
            refused.join("\n"),
            if allow_partial { ", and none was" } else { "" }
        ))),
    }
}
