//! `kestrel fit --values V.toml`: a fabric's laws from published KES values alone.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::CliError;
use kestrel::fit::fabric::fabric_slug;
use kestrel::fit::values::{fit_fabric_values, FabricValues};
use kestrel::params::ParamsFormat;

pub fn run(
    values: &Path,
    out: &Option<PathBuf>,
    force: bool,
    as_json: bool,
    json_out: bool,
) -> Result<(), CliError> {
    let text = kestrel::input::read_text(values, kestrel::input::SMALL_FILE_LIMIT)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", values.display())))?;
    let spec: FabricValues = toml::from_str(&text).map_err(|e| {
        CliError::input(format!(
            "{}: not a KES values file: {e}\nexpected: fabric = \"…\", then [warp] and [weft] tables with EMT [%], LT, RT [%], G [gf/(cm*deg)], 2HG, 2HG5 [gf/cm], B [gf*cm^2/cm], 2HB [gf*cm/cm]",
            values.display()
        ))
    })?;
    let (params, fits) = fit_fabric_values(&spec);
    let format = if json_out {
        ParamsFormat::Json
    } else {
        ParamsFormat::Toml
    };
    let path = out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "{}.params.{}",
            fabric_slug(&spec.fabric),
            if json_out { "json" } else { "toml" }
        ))
    });
    params
        .write(&path, format, force)
        .map_err(CliError::written)?;
    if as_json {
        println!(
            "{}",
            json!({
                "fabric": spec.fabric,
                "written": path.display().to_string(),
                "laws": fits.iter().map(|f| json!({
                    "test": f.test.name(),
                    "direction": f.direction.name(),
                    "fitted": f.law.is_some(),
                    "values": f.matches.iter().map(|m| json!({
                        "name": m.name, "target": m.target, "achieved": m.achieved, "rel_error": m.rel_error
                    })).collect::<Vec<_>>(),
                    "note": f.note,
                })).collect::<Vec<_>>(),
            })
        );
        return Ok(());
    }
    println!("{} — laws from KES values", spec.fabric);
    for f in &fits {
        println!(
            "  {} {}: {}",
            f.test,
            f.direction,
            if f.law.is_some() {
                "fitted"
            } else {
                "not fitted"
            }
        );
        for m in &f.matches {
            match (m.achieved, m.rel_error) {
                (Some(a), Some(e)) => println!(
                    "    {:<5} target {:>10.4}  achieved {:>10.4}  error {:+.2} %",
                    m.name,
                    m.target,
                    a,
                    100.0 * e
                ),
                _ => println!("    {:<5} target {:>10.4}  not achieved", m.name, m.target),
            }
        }
    }
    println!("  written {}", path.display());
    Ok(())
}
