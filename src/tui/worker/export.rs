//! The Export tab's images (PNG or SVG by the extension), drawn by the plot module from the
//! request the tab copied.

use std::path::Path;

use crate::plot::{self, CurvePlot, HysteresisPlot, ImageFormat, PlotError, PlotSize};
use crate::tui::message::{ExportRequest, PlotItem};

fn curve_plot(i: &PlotItem) -> CurvePlot<'_> {
    CurvePlot {
        curve: &i.curve,
        model: i.overlay.as_ref(),
        legend: &i.legend,
    }
}

/// Draws and writes the image (atomically; an existing file only with `force`).
pub(crate) fn write(request: &ExportRequest, path: &Path, force: bool) -> Result<(), PlotError> {
    let format = ImageFormat::of_path(path)?;
    if !force && path.exists() {
        return Err(PlotError::Write(crate::atomic::WriteError::Exists {
            path: path.to_path_buf(),
        }));
    }
    let bytes = match request {
        ExportRequest::Curve(i) => plot::curve_image(&curve_plot(i), PlotSize::SINGLE, format)?,
        ExportRequest::Sheet { title, items } => {
            let plots: Vec<CurvePlot> = items.iter().map(curve_plot).collect();
            plot::sheet_image(title, &plots, PlotSize::SHEET, format)?
        }
        ExportRequest::Hysteresis { item, law } => plot::hysteresis_image(
            &HysteresisPlot {
                curve: &item.curve,
                law: Some(law),
                offset: 0.0,
                legend: &item.legend,
                law_alone: true,
            },
            PlotSize::SINGLE,
            format,
        )?,
        ExportRequest::Nothing(why) => return Err(PlotError::Sheet(why.clone())),
    };
    plot::write_image(path, &bytes, force)
}
