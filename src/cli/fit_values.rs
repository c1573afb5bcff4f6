//! `kestrel fit --values V.toml`: a fabric's laws from published KES values alone.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::CliError;
use kestrel::fit::fabric::fabric_slug;
use kestrel::fit::values::{check_values, fit_fabric_values, shown, FabricValues};

pub fn run(values: &Path, args: &super::fit::Args) -> Result<(), CliError> {
    let (out, force, as_json, json_out) = (&args.out, args.force, args.json, args.json_out);
    let text = kestrel::input::read_text(values, kestrel::input::SMALL_FILE_LIMIT)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", values.display())))?;
    let spec: FabricValues = toml::from_str(&text).map_err(|e| {
        CliError::input(format!(
            "{}: not a KES values file: {}\nexpected: fabric = \"…\", then [warp] and [weft] tables with EMT [%], LT, RT [%], G [gf/(cm*deg)], 2HG, 2HG5 [gf/cm], B [gf*cm^2/cm], 2HB [gf*cm/cm]",
            values.display(),
            kestrel::input::clipped(&e.to_string())
        ))
    })?;
    check_values(&spec).map_err(|e| CliError::input(format!("{}: {e}", values.display())))?;
    // as for curves: the format follows the -o name
    let format = super::fit::params_format(args, false)?;
    let path = out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "{}.params.{}",
            fabric_slug(&spec.fabric),
            if json_out { "json" } else { "toml" }
        ))
    });
    super::check_output_of(&path, force, [values])?;
    super::fit::check_card_name(args, false)?;
    let (mut params, fits) = fit_fabric_values(&spec);
    super::fit::given_properties(&mut params, args);
    let refused: Vec<String> = fits
        .iter()
        .filter(|f| f.law.is_none())
        .map(|f| {
            format!(
                "{}: {} {}: {}",
                values.display(),
                f.direction,
                f.test,
                f.note.as_deref().unwrap_or("not fitted")
            )
        })
        .collect();
    let fitted_any = fits.iter().any(|f| f.law.is_some());
    let write = refused.is_empty() || (args.allow_partial && fitted_any);
    if write {
        params
            .write(&path, format, force)
            .map_err(CliError::written)?;
    }
    let written = write.then(|| path.display().to_string());
    if as_json {
        println!(
            "{}",
            json!({
                "fabric": spec.fabric,
                "written": written,
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
        return super::fit::refusal(&refused, args.allow_partial, fitted_any);
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
                    "    {:<5} target {:>10}  achieved {:>10}  error {} %",
                    m.name,
                    shown(m.target),
                    shown(a),
                    shown(100.0 * e)
                ),
                _ => println!(
                    "    {:<5} target {:>10}  not achieved",
                    m.name,
                    shown(m.target)
                ),
            }
        }
    }
    if let Some(w) = &written {
        println!("  written {w}");
    }
    super::fit::refusal(&refused, args.allow_partial, fitted_any)
}
