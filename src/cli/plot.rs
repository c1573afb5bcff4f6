//! `kestrel plot`: PNG or SVG of one curve, of a fabric sheet (2 × 3 grid), or a hysteresis
//! view, with a parameter file's laws overlaid.

use std::path::{Path, PathBuf};

use kestrel::fit::{fit_curve, FitOptions, ValuesSideBySide};
use kestrel::kes::Curve;
use kestrel::material::{ConnectorLaw, MaterialLaw};
use kestrel::params::{FabricParams, FittedLaw};
use kestrel::plot::{self, CurvePlot, HysteresisPlot, ImageFormat, Overlay, PlotSize};

use super::CliError;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// KES curve files (CSV) or folders (each folder's .csv files, or each sub-folder's). Several files make a fabric sheet.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Fabric parameter file (TOML or JSON): each curve's law is driven along the measured
    /// path and overlaid, with a residual panel.
    #[arg(long, value_name = "P")]
    pub params: Option<PathBuf>,
    /// The hysteresis view of one curve: friction part and energy dissipated per cycle.
    #[arg(long, conflicts_with = "sheet")]
    pub hysteresis: bool,
    /// The fabric sheet (rows warp, weft × columns tensile, shear, bending), even for one file.
    #[arg(long)]
    pub sheet: bool,
    /// The image to write: PNG or SVG, by the extension (`.png`, `.svg`).
    #[arg(short, long, value_name = "OUT.png|OUT.svg")]
    pub output: PathBuf,
    /// Image size in pixels [default: 1200x800; sheet 1800x1100].
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub size: Option<PlotSize>,
    /// Overwrite the image if it exists.
    #[arg(long)]
    pub force: bool,
}

fn parse_size(s: &str) -> Result<PlotSize, String> {
    s.parse().map_err(|e: plot::PlotError| e.to_string())
}

pub fn run(args: Args) -> Result<(), CliError> {
    let format = ImageFormat::of_path(&args.output).map_err(CliError::input)?;
    let inputs = super::curve_inputs(&args.files)
        .into_iter()
        .chain(args.params.clone());
    super::check_output_of(&args.output, args.force, inputs)?;
    let curves = load_curves(&super::kes_paths(&args.files)?).map_err(CliError::input)?;
    let params = match &args.params {
        Some(p) => Some(FabricParams::read(p).map_err(CliError::input)?),
        None => None,
    };
    let params = params.as_ref().zip(args.params.as_deref());
    let image = if args.hysteresis {
        hysteresis(&args, &curves, params, format)?
    } else {
        curves_image(&args, &curves, params, format)?
    };
    plot::write_image(&args.output, &image, args.force).map_err(CliError::written)?;
    println!("wrote {}", args.output.display());
    Ok(())
}

/// One curve, or the sheet, with each curve's law overlaid when a parameter file is given.
fn curves_image(
    args: &Args,
    curves: &[Curve],
    params: Option<(&FabricParams, &Path)>,
    format: ImageFormat,
) -> Result<Vec<u8>, CliError> {
    let mut overlays = Vec::with_capacity(curves.len());
    let mut legends = Vec::with_capacity(curves.len());
    for curve in curves {
        let mut legend = legend_for(curve);
        let overlay = params.and_then(|(p, path)| {
            let fitted = law_for(p, curve, path)?;
            let law = fitted.law;
            let y = fitted.forces(&curve.x);
            let name = path
                .file_name()
                .unwrap_or(path.as_os_str())
                .to_string_lossy();
            legend.push(format!("NRMSE {:.2} %", 100.0 * plot::nrmse(&curve.y, &y)));
            legend.push(fitted_values_line(curve, &fitted));
            Some(Overlay {
                label: format!("law from {name} ({})", law_name(&law)),
                y,
            })
        });
        overlays.push(overlay);
        legends.push(legend);
    }
    let plots: Vec<CurvePlot<'_>> = curves
        .iter()
        .zip(&overlays)
        .zip(&legends)
        .map(|((curve, model), legend)| CurvePlot {
            curve,
            model: model.as_ref(),
            legend,
        })
        .collect();
    let bytes = if args.sheet || plots.len() > 1 {
        let mut fabrics: Vec<&str> = curves.iter().map(|c| c.fabric.as_str()).collect();
        fabrics.sort_unstable();
        fabrics.dedup();
        if fabrics.len() > 1 {
            return Err(CliError::input(format!(
                "a sheet shows one fabric; the files hold {}",
                fabrics.join(", ")
            )));
        }
        let title = format!("{} — KES-FB curves", fabrics.first().copied().unwrap_or(""));
        // the sheet's cells are tensile, shear, bending: compression and surface curves are
        // plotted one by one
        let notes = kestrel::kes::no_law_notes(curves, "on the sheet").map_err(CliError::input)?;
        notes.iter().for_each(|n| eprintln!("{n}"));
        let plots: Vec<CurvePlot<'_>> = plots
            .into_iter()
            .filter(|p| p.curve.test.has_connector_law())
            .collect();
        plot::sheet_image(&title, &plots, args.size.unwrap_or(PlotSize::SHEET), format)
    } else {
        plot::curve_image(&plots[0], args.size.unwrap_or(PlotSize::SINGLE), format)
    };
    bytes.map_err(CliError::input)
}

/// The hysteresis view of one curve; without a parameter file its elastic part comes from a
/// fit of the curve (the `fit` defaults).
fn hysteresis(
    args: &Args,
    curves: &[Curve],
    params: Option<(&FabricParams, &Path)>,
    format: ImageFormat,
) -> Result<Vec<u8>, CliError> {
    let [curve] = curves else {
        return Err(CliError::input(format!(
            "--hysteresis plots one curve; got {} files",
            curves.len()
        )));
    };
    let mut legend = legend_for(curve);
    let (law, offset) = match params {
        Some((p, path)) => {
            let fitted = law_for(p, curve, path);
            legend.push(match &fitted {
                Some(f) => format!(
                    "elastic part: law from {} ({})",
                    file_name(path),
                    law_name(&f.law)
                ),
                None => format!(
                    "no {} {} law in {}",
                    curve.direction,
                    curve.test,
                    file_name(path)
                ),
            });
            (fitted.map(|f| f.law), fitted.map_or(0.0, |f| f.offset))
        }
        None => {
            eprintln!("fitting the curve for its elastic part (--params uses a parameter file)");
            let fit = fit_curve(curve, &FitOptions::default());
            let fitted = fit.fitted_law();
            legend.push(match fitted {
                Some(_) => format!(
                    "elastic part: fitted {} law, NRMSE {:.2} %",
                    fit.model,
                    100.0 * fit.nrmse
                ),
                None => "no law: the fit failed".into(),
            });
            (fitted.map(|f| f.law), fitted.map_or(0.0, |f| f.offset))
        }
    };
    let view = HysteresisPlot {
        curve,
        law: law.as_ref(),
        offset,
        legend: &legend,
        law_alone: false,
    };
    plot::hysteresis_image(&view, args.size.unwrap_or(PlotSize::SINGLE), format)
        .map_err(CliError::input)
}

/// The law (with its fitted offset) of the curve's test and direction in the parameter file
/// (a note when absent).
fn law_for(params: &FabricParams, curve: &Curve, path: &Path) -> Option<FittedLaw> {
    let law = params.fitted_law(curve.test, curve.direction);
    if law.is_none() {
        eprintln!(
            "note: {} has no {} {} law; {} is plotted without a model",
            path.display(),
            curve.direction,
            curve.test,
            curve.source_name()
        );
    } else if !curve.fabric.is_empty() && params.fabric != curve.fabric {
        eprintln!(
            "note: {} is for fabric `{}`, {} is `{}`",
            path.display(),
            params.fabric,
            curve.source_name(),
            curve.fabric
        );
    }
    law
}

/// The law's KES values along the curve's measured path beside the curve's: `law: EMT 3.21
/// (+0.3 %), …`, or why there are none.
fn fitted_values_line(curve: &Curve, fitted: &FittedLaw) -> String {
    let v = ValuesSideBySide::of(curve, fitted);
    if let Some(note) = v.note {
        return note;
    }
    let parts: Vec<String> = v
        .rows()
        .into_iter()
        .filter_map(|(name, _, f, gap)| {
            let value = kestrel::kes::units::significant(f?, 3);
            Some(format!("{name} {value} ({:+.1} %)", 100.0 * gap?))
        })
        .collect();
    format!("law: {}", parts.join(", "))
}

/// "dahl", "bs2+mu"…
fn law_name(law: &ConnectorLaw) -> String {
    let f = law.friction();
    let mu = if f.mu > 0.0 { "+mu" } else { "" };
    format!("{}{mu}", f.shape.name())
}

fn file_name(path: &Path) -> String {
    let name = path.file_name().unwrap_or(path.as_os_str());
    name.to_string_lossy().into_owned()
}

/// The legend lines of a curve: its KES values (default reading rules) and its file.
fn legend_for(curve: &Curve) -> Vec<String> {
    let mut lines: Vec<String> = kestrel::kes::values::formatted(curve)
        .into_iter()
        .filter(|(_, v)| !v.starts_with("n/a"))
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    lines.push(curve.source_name());
    lines
}

fn load_curves(paths: &[PathBuf]) -> Result<Vec<Curve>, String> {
    kestrel::kes::import::read_kes_files(paths, Default::default()).map_err(|e| e.to_string())
}
