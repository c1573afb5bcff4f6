//! `kestrel values`: KES characteristic values of curve files, a table per fabric (KES units)
//! or JSON; generic loops with --x/--y.

use std::path::PathBuf;

use kestrel::kes::replicates::summarise;
use kestrel::kes::values::{skipped_columns_note, VALUE_NAMES};
use kestrel::kes::{
    kes_values, loop_values, read_kes_files, read_loop, replicate_groups, Curve, Direction,
    KesReading, KesTest, LoopValues, ReadingRules, ReplicateSummary,
};
use serde::Serialize;

use super::CliError;

/// Read KES curve files and print their characteristic values (EMT, LT, WT, RT, G, 2HG,
/// 2HG5, B, 2HB, T0, TM, LC, WC, RC, EMC, MIU, MMD, SMD, W) grouped by fabric, with the
/// reading rules.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// KES CSV files or folders (each folder's .csv files, or each sub-folder's) (or, with --x and --y, any delimited files read as generic loops).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print JSON: [{"file","fabric","test","direction","values":{...}}].
    #[arg(long)]
    json: bool,
    /// One entry per curve with its replicates (files of one fabric, test and direction)
    /// summarised: the mean and coefficient of variation of each value; with --json
    /// [{"fabric","test","direction","files","specimens","mean":{...},"cv":{...}}].
    #[arg(long)]
    summary: bool,
    #[command(flatten)]
    curve: super::CurveArgs,
    #[command(flatten)]
    lp: super::LoopArgs,
}

#[derive(Serialize)]
struct Entry<'a, V: Serialize> {
    file: String,
    fabric: &'a str,
    test: KesTest,
    direction: Direction,
    values: V,
    /// How some values were read (the notes on stderr).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let rules = ReadingRules::default();
    match (&args.lp.x, &args.lp.y) {
        (Some(_), Some(_)) => run_loops(&args, &rules),
        _ => run_kes(&args, &rules),
    }
}

fn run_kes(args: &Args, rules: &ReadingRules) -> Result<(), CliError> {
    let curves = read_kes_files(&super::kes_paths(&args.files)?, args.curve.overrides()?)
        .map_err(CliError::input)?;
    let readings: Vec<(&Curve, KesReading)> =
        curves.iter().map(|c| (c, kes_values(c, rules))).collect();
    for (curve, reading) in &readings {
        let file = file_name(curve);
        for u in &reading.unavailable {
            eprintln!("{file}: {u}");
        }
        for n in &reading.notes {
            eprintln!("{file}: note: {n}");
        }
    }
    let summaries: Vec<ReplicateSummary> = replicate_groups(&curves)
        .iter()
        .map(|g| {
            let (members, each): (Vec<&Curve>, Vec<KesReading>) = g
                .members
                .iter()
                .map(|&i| (readings[i].0, readings[i].1.clone()))
                .unzip();
            summarise(&members, each)
        })
        .collect();
    for s in &summaries {
        for n in &s.notes {
            eprintln!("{} {} {}: note: {n}", s.fabric, s.test, s.direction);
        }
    }
    match (args.json, args.summary) {
        (true, true) => {
            // the JSON names the columns of the specimens' files that were not read (on
            // stderr, each file's notes above say so)
            let mut summaries = summaries;
            for s in &mut summaries {
                let skipped = curves.iter().filter(|c| s.files.contains(&c.path_name()));
                let notes = skipped.filter_map(|c| {
                    skipped_columns_note(c).map(|n| format!("{}: {n}", c.path_name()))
                });
                s.notes.splice(0..0, notes.collect::<Vec<_>>());
            }
            print_json(&summaries)
        }
        (true, false) => print_json(&entries(
            readings
                .iter()
                .map(|(c, r)| (*c, r.values, r.notes.clone())),
        )),
        (false, _) => {
            print!("{}", kes_table(&summaries, rules));
            Ok(())
        }
    }
}

/// The JSON entries of a list of curves and their values.
fn entries<'a, V: Serialize>(
    values: impl Iterator<Item = (&'a Curve, V, Vec<String>)>,
) -> Vec<Entry<'a, V>> {
    values
        .map(|(c, values, notes)| Entry {
            file: file_name(c),
            fabric: &c.fabric,
            test: c.test,
            direction: c.direction,
            values,
            notes,
        })
        .collect()
}

fn file_name(curve: &Curve) -> String {
    curve
        .source
        .as_ref()
        .map_or_else(String::new, |p| p.display().to_string())
}

fn print_json<T: Serialize>(value: &T) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(CliError::failed)?;
    println!("{text}");
    Ok(())
}

/// `v` with five significant digits (in exponent form beyond 1e6 and below 1e-4).
fn sig5(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if !(1e-4..1e6).contains(&v.abs()) {
        return format!("{v:.4e}");
    }
    let decimals = (4 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// One table per fabric: rows the values, columns the directions (the mean of a curve's
/// specimens), then each replicated curve's specimens, mean and CV; then the reading rules.
fn kes_table(summaries: &[ReplicateSummary], rules: &ReadingRules) -> String {
    let mut fabrics: Vec<&str> = Vec::new();
    for s in summaries {
        if !fabrics.contains(&s.fabric.as_str()) {
            fabrics.push(&s.fabric);
        }
    }
    let mut out = String::new();
    for fabric in fabrics {
        let of_fabric: Vec<&ReplicateSummary> =
            summaries.iter().filter(|s| s.fabric == fabric).collect();
        let title = if fabric.is_empty() {
            "(no fabric metadata)"
        } else {
            fabric
        };
        out += &format!("{title}\n");
        for s in &of_fabric {
            let files = match s.files.as_slice() {
                [one] => one.clone(),
                many => format!("{} specimens: {}", many.len(), many.join(", ")),
            };
            out += &format!(
                "  {:<11} {:<6} {files}\n",
                s.test.name(),
                s.direction.name()
            );
        }
        let directions: Vec<Direction> = [
            Direction::Warp,
            Direction::Weft,
            Direction::Bias,
            Direction::Normal,
        ]
        .into_iter()
        .filter(|d| of_fabric.iter().any(|s| s.direction == *d))
        .collect();
        out += &format!("  {:<5} {:<12}", "value", "unit");
        for d in &directions {
            out += &format!(" {:>12}", d.name());
        }
        out += "\n";
        // W is a metadata line any curve may carry: its row reads every test
        let gives = |s: &ReplicateSummary, name: &str, test: KesTest| {
            s.test == test || (name == "W" && s.mean.w.is_some())
        };
        for (name, unit, test) in VALUE_NAMES {
            if !of_fabric.iter().any(|s| gives(s, name, test)) {
                continue;
            }
            out += &format!("  {name:<5} {unit:<12}");
            for d in &directions {
                let cell = of_fabric
                    .iter()
                    .filter(|s| s.direction == *d && gives(s, name, test))
                    .find_map(|s| s.mean.get(name));
                out += &format!(" {:>12}", cell.map_or("-".to_string(), sig5));
            }
            out += "\n";
        }
        let replicated: Vec<&&ReplicateSummary> =
            of_fabric.iter().filter(|s| s.specimens > 1).collect();
        if !replicated.is_empty() {
            out += "  replicates (a cell above is their mean): each specimen, mean, \
                    coefficient of variation\n";
        }
        for s in replicated {
            for (name, unit, test) in VALUE_NAMES {
                let Some(mean) = s.mean.get(name).filter(|_| gives(s, name, test)) else {
                    continue;
                };
                let each: Vec<String> = s
                    .each
                    .iter()
                    .map(|v| v.get(name).map_or("-".to_string(), sig5))
                    .collect();
                let cv =
                    s.cv.get(name)
                        .map_or("CV -".to_string(), |c| format!("CV {:.1} %", 100.0 * c));
                out += &format!(
                    "  {:<11} {:<6} {name:<5} {unit:<12} {}  mean {}  {cv}\n",
                    s.test.name(),
                    s.direction.name(),
                    each.join(" "),
                    sig5(mean)
                );
            }
        }
        out += "\n";
    }
    out += "Reading rules:\n";
    for line in rules.to_string().lines() {
        out += &format!("  {line}\n");
    }
    out
}

fn run_loops(args: &Args, rules: &ReadingRules) -> Result<(), CliError> {
    let Some(spec) = args.lp.spec(args.curve.direction)? else {
        return Err(CliError::input("name both --x and --y for a generic loop"));
    };
    let curves = args
        .files
        .iter()
        .map(|f| read_loop(f, &spec))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::input)?;
    let values: Vec<(Curve, LoopValues)> = curves
        .into_iter()
        .map(|c| {
            let v = loop_values(&c, rules);
            (c, v)
        })
        .collect();
    for (c, v) in &values {
        if v.width.is_none() {
            eprintln!(
                "{}: width unavailable: no rising and falling branch both reach mid-x",
                file_name(c)
            );
        }
    }
    if args.json {
        return print_json(&entries(values.iter().map(|(c, v)| (c, *v, Vec::new()))));
    }
    for (c, v) in &values {
        let unit = |key: &str| c.metadata.get(key).map_or("", String::as_str);
        let (xu, yu) = (unit("x unit (SI)"), unit("y unit (SI)"));
        println!("{}", file_name(c));
        println!("  x: {}", unit("x"));
        println!("  y: {}", unit("y"));
        if let Some(rows) = c.metadata.get("rows") {
            println!("  rows: {rows}");
        }
        println!("  samples           {}", v.samples);
        println!("  reversals         {}", v.reversals);
        println!(
            "  x range [{xu}]     {} .. {}",
            sig5(v.x_min),
            sig5(v.x_max)
        );
        println!(
            "  y range [{yu}]     {} .. {}",
            sig5(v.y_min),
            sig5(v.y_max)
        );
        println!("  work ∫y dx        {} {xu}*{yu}", sig5(v.work));
        match v.width {
            Some(w) => println!(
                "  width at mid-x    {} {yu} (rising minus falling branches)",
                sig5(w)
            ),
            None => println!("  width at mid-x    unavailable"),
        }
    }
    println!(
        "\nReading rules: branches split at turning points of x (reversal once x returns by {} % \
         of its range); width from local lines over mid-x +/- {} % of the x range",
        100.0 * rules.reversal_fraction,
        100.0 * rules.loop_half_window
    );
    Ok(())
}
