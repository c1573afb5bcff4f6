//! `kestrel values`: KES characteristic values of curve files, a table per fabric (KES units)
//! or JSON; generic loops with --x/--y.

use std::path::PathBuf;

use kestrel::kes::values::VALUE_NAMES;
use kestrel::kes::{
    kes_values, loop_values, read_kes_files, read_loop, Curve, Direction, KesReading, KesTest,
    LoopValues, ReadingRules,
};
use serde::Serialize;

use super::CliError;

/// Read KES curve files and print their characteristic values (EMT, LT, WT, RT, G, 2HG,
/// 2HG5, B, 2HB) grouped by fabric, with the reading rules.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// KES CSV files (or, with --x and --y, any delimited files read as generic loops).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print JSON: [{"file","fabric","test","direction","values":{...}}].
    #[arg(long)]
    json: bool,
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
}

pub fn run(args: Args) -> Result<(), CliError> {
    let rules = ReadingRules::default();
    match (&args.lp.x, &args.lp.y) {
        (Some(_), Some(_)) => run_loops(&args, &rules),
        _ => run_kes(&args, &rules),
    }
}

fn run_kes(args: &Args, rules: &ReadingRules) -> Result<(), CliError> {
    let curves = read_kes_files(&args.files, args.curve.overrides()?).map_err(CliError::input)?;
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
    if args.json {
        print_json(&entries(readings.iter().map(|(c, r)| (*c, r.values))))
    } else {
        print!("{}", kes_table(&readings, rules));
        Ok(())
    }
}

/// The JSON entries of a list of curves and their values.
fn entries<'a, V: Serialize>(values: impl Iterator<Item = (&'a Curve, V)>) -> Vec<Entry<'a, V>> {
    values
        .map(|(c, values)| Entry {
            file: file_name(c),
            fabric: &c.fabric,
            test: c.test,
            direction: c.direction,
            values,
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

/// `v` with five significant digits.
fn sig5(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (4 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}

/// One table per fabric: rows the values, columns the directions; then the reading rules.
fn kes_table(readings: &[(&Curve, KesReading)], rules: &ReadingRules) -> String {
    let mut fabrics: Vec<&str> = Vec::new();
    for (c, _) in readings {
        if !fabrics.contains(&c.fabric.as_str()) {
            fabrics.push(&c.fabric);
        }
    }
    let mut out = String::new();
    for fabric in fabrics {
        let of_fabric: Vec<&(&Curve, KesReading)> = readings
            .iter()
            .filter(|(c, _)| c.fabric == fabric)
            .collect();
        let title = if fabric.is_empty() {
            "(no fabric metadata)"
        } else {
            fabric
        };
        out += &format!("{title}\n");
        for (c, _) in &of_fabric {
            out += &format!(
                "  {:<8} {:<5} {}\n",
                c.test.name(),
                c.direction.name(),
                file_name(c)
            );
        }
        let directions: Vec<Direction> = [Direction::Warp, Direction::Weft, Direction::Bias]
            .into_iter()
            .filter(|d| of_fabric.iter().any(|(c, _)| c.direction == *d))
            .collect();
        out += &format!("  {:<5} {:<12}", "value", "unit");
        for d in &directions {
            out += &format!(" {:>12}", d.name());
        }
        out += "\n";
        for (name, unit, test) in VALUE_NAMES {
            let cells: Vec<Option<f64>> = directions
                .iter()
                .map(|d| {
                    of_fabric
                        .iter()
                        .find(|(c, _)| c.direction == *d && c.test == test)
                        .and_then(|(_, r)| r.values.get(name))
                })
                .collect();
            let has_curve = of_fabric.iter().any(|(c, _)| c.test == test);
            if !has_curve {
                continue;
            }
            out += &format!("  {name:<5} {unit:<12}");
            for cell in cells {
                out += &format!(" {:>12}", cell.map_or("-".to_string(), sig5));
            }
            out += "\n";
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
        return print_json(&entries(values.iter().map(|(c, v)| (c, *v))));
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
