//! PNG and SVG plots of KES curves, model overlays, fabric sheets and hysteresis views
//! (plotters, bundled DejaVu Sans): pure functions return the file's bytes, drawn in KES units.

mod canvas;
mod chart;
mod curve;
mod hysteresis;
mod page;
pub mod reduced;
pub mod style;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use thiserror::Error;

use crate::atomic::{write_atomic, WriteError};
use crate::kes::{Curve, Direction, KesTest};
use crate::material::ConnectorLaw;

pub use style::{energy_unit, KesAxes, LOADING_RGB, MODEL_RGB, UNLOADING_RGB};

/// An end of an axis range in a message: three significant digits, or `inf` / `NaN`.
fn axis_end(v: f64) -> String {
    if v.is_finite() {
        crate::kes::units::significant(v, 3)
    } else {
        v.to_string()
    }
}

#[derive(Debug, Error)]
pub enum PlotError {
    #[error("bad plot size `{0}`: expected WIDTHxHEIGHT, e.g. 1200x800, each 200..=8000 pixels")]
    Size(String),
    #[error("{0}: nothing to plot (fewer than two samples)")]
    Empty(String),
    #[error("{0}: the curve holds values that are not finite numbers")]
    NotFinite(String),
    #[error(
        "the {axis} axis would span {} to {}: more than a chart can divide (a value near ±1e308 \
         in the curve or the model?)",
        axis_end(*.lo),
        axis_end(*.hi)
    )]
    Span { axis: String, lo: f64, hi: f64 },
    #[error("{what}: {x} x values but {y} y values")]
    Lengths { what: String, x: usize, y: usize },
    #[error("{what}: the model has {model} values for {samples} samples")]
    ModelLength {
        what: String,
        model: usize,
        samples: usize,
    },
    #[error("fabric sheet: {0}")]
    Sheet(String),
    #[error("the bundled font could not be loaded")]
    Font,
    #[error("drawing failed: {0}")]
    Draw(String),
    #[error("PNG encoding failed: {0}")]
    Encode(String),
    #[error("{0}: unknown image type; the file name ends in .png or .svg")]
    Format(String),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// The file an image is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    /// Vector: lines and text as SVG elements (the size in pixels is the SVG's user units).
    Svg,
}

impl ImageFormat {
    /// The format a file name's extension names (`.png`, `.svg`, any case).
    pub fn of_path(path: &Path) -> Result<Self, PlotError> {
        let ext = path.extension().map(|e| e.to_ascii_lowercase());
        match ext.as_ref().and_then(|e| e.to_str()) {
            Some("png") => Ok(Self::Png),
            Some("svg") => Ok(Self::Svg),
            _ => Err(PlotError::Format(path.display().to_string())),
        }
    }

    /// The file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Svg => "svg",
        }
    }
}

/// Image size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlotSize {
    pub width: u32,
    pub height: u32,
}

impl PlotSize {
    /// Default size of a single-curve or hysteresis plot.
    pub const SINGLE: PlotSize = PlotSize {
        width: 1200,
        height: 800,
    };
    /// Default size of a fabric sheet.
    pub const SHEET: PlotSize = PlotSize {
        width: 1800,
        height: 1100,
    };
    const MIN: u32 = 200;
    const MAX: u32 = 8000;

    /// A size with both sides in 200..=8000 pixels.
    pub fn new(width: u32, height: u32) -> Result<Self, PlotError> {
        let ok = |v: u32| (Self::MIN..=Self::MAX).contains(&v);
        if ok(width) && ok(height) {
            Ok(Self { width, height })
        } else {
            Err(PlotError::Size(format!("{width}x{height}")))
        }
    }
}

impl FromStr for PlotSize {
    type Err = PlotError;
    fn from_str(s: &str) -> Result<Self, PlotError> {
        let bad = || PlotError::Size(s.to_string());
        let (w, h) = s.trim().split_once(['x', 'X', '×']).ok_or_else(bad)?;
        let w = w.trim().parse().map_err(|_| bad())?;
        let h = h.trim().parse().map_err(|_| bad())?;
        Self::new(w, h).map_err(|_| bad())
    }
}

impl fmt::Display for PlotSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// A model curve along the measured path (SI, one value per sample), with its legend label.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlay {
    pub label: String,
    pub y: Vec<f64>,
}

/// One curve to plot: the measured (or simulated) path, an optional model along the same
/// path, and legend lines already formatted by the caller (KES values, NRMSE…).
#[derive(Debug, Clone, Copy)]
pub struct CurvePlot<'a> {
    pub curve: &'a Curve,
    pub model: Option<&'a Overlay>,
    pub legend: &'a [String],
}

/// A hysteresis view of one curve: its friction part (total minus the law's elastic part,
/// minus the instrument's zero `offset`) and the energy dissipated per closed cycle. Without a law
/// the loop itself is shown and only the energies are computed.
#[derive(Debug, Clone, Copy)]
pub struct HysteresisPlot<'a> {
    pub curve: &'a Curve,
    pub law: Option<&'a ConnectorLaw>,
    /// Force zero offset of the instrument (SI, as fitted); 0 for a law's own curve.
    pub offset: f64,
    pub legend: &'a [String],
    /// The curve is `law`'s own response along a driven path, not a measurement: one series
    /// and one set of bars, labelled as the law's.
    pub law_alone: bool,
}

/// The one NRMSE of every report (see [`crate::params::nrmse`]).
pub use crate::params::nrmse;

/// "Fabric · test · direction" (the file name when the curve names no fabric).
pub(crate) fn curve_title(curve: &Curve) -> String {
    let name = if curve.fabric.is_empty() {
        curve.source_name()
    } else {
        curve.fabric.clone()
    };
    format!("{name} · {} · {}", curve.test, curve.direction)
}

/// A single-curve plot: the measured branches (loading, unloading), the model dashed over
/// them and a residual panel under them when a model is given, the legend box upper left.
pub fn curve_image(
    plot: &CurvePlot<'_>,
    size: PlotSize,
    format: ImageFormat,
) -> Result<Vec<u8>, PlotError> {
    canvas::check_curve(plot)?;
    canvas::render(size, format, |root| {
        let area = canvas::title(root, &curve_title(plot.curve), size)?;
        curve::curve_panel(&area, plot, None, canvas::Fonts::for_area(&area))
    })
}

/// A fabric sheet: up to six curves in a 2 × 3 grid (rows warp, weft; columns tensile, shear,
/// bending), each panel as in [`curve_image`]; empty cells say "no curve". Bias or generic loop
/// curves, or two curves for one cell, are refused.
pub fn sheet_image(
    title: &str,
    plots: &[CurvePlot<'_>],
    size: PlotSize,
    format: ImageFormat,
) -> Result<Vec<u8>, PlotError> {
    let mut cells: [Option<&CurvePlot<'_>>; 6] = [None; 6];
    for plot in plots {
        canvas::check_curve(plot)?;
        let c = plot.curve;
        let row = match c.direction {
            Direction::Warp => 0,
            Direction::Weft => 1,
            Direction::Bias | Direction::Normal => {
                return Err(PlotError::Sheet(format!(
                    "{}: {} curves have no cell (rows are warp and weft)",
                    curve_title(c),
                    c.direction
                )))
            }
        };
        let col = match c.test {
            KesTest::Tensile => 0,
            KesTest::Shear => 1,
            KesTest::Bending => 2,
            KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
                return Err(PlotError::Sheet(format!(
                    "{}: {} curves have no cell (columns are tensile, shear, bending): plot \
                     them one by one",
                    curve_title(c),
                    c.test
                )))
            }
            KesTest::Loop => {
                return Err(PlotError::Sheet(format!(
                    "{}: generic loops have no cell (columns are tensile, shear, bending)",
                    curve_title(c)
                )))
            }
        };
        let cell = &mut cells[row * 3 + col];
        if cell.is_some() {
            return Err(PlotError::Sheet(format!(
                "two {} {} curves",
                c.test, c.direction
            )));
        }
        *cell = Some(plot);
    }
    canvas::render(size, format, |root| {
        let area = canvas::title(root, title, size)?;
        let panels = area.split_evenly((2, 3));
        for (i, panel) in panels.iter().enumerate() {
            let panel = panel.margin(4, 4, 4, 4);
            let fonts = canvas::Fonts::for_area(&panel);
            let test = [KesTest::Tensile, KesTest::Shear, KesTest::Bending][i % 3];
            let dir = [Direction::Warp, Direction::Weft][i / 3];
            let caption = format!("{test} · {dir}");
            match cells[i] {
                Some(plot) => curve::curve_panel(&panel, plot, Some(&caption), fonts)?,
                None => curve::empty_panel(&panel, &caption, fonts)?,
            }
        }
        Ok(())
    })
}

/// A hysteresis view: the friction part against the path (the law's own friction part
/// dashed over it), the energy dissipated per closed cycle as bars (measured and law), and a
/// text box with the caller's lines, the energies and any open segment's work.
pub fn hysteresis_image(
    plot: &HysteresisPlot<'_>,
    size: PlotSize,
    format: ImageFormat,
) -> Result<Vec<u8>, PlotError> {
    let check = CurvePlot {
        curve: plot.curve,
        model: None,
        legend: plot.legend,
    };
    canvas::check_curve(&check)?;
    canvas::render(size, format, |root| {
        let c = plot.curve;
        let title = if plot.law_alone {
            let name = match c.fabric.as_str() {
                "" => String::new(),
                f => format!("{f} · "),
            };
            format!("{name}{} law alone — hysteresis", c.test)
        } else {
            format!("{} — hysteresis", curve_title(c))
        };
        let area = canvas::title(root, &title, size)?;
        hysteresis::hysteresis_page(&area, plot)
    })
}

/// Writes an image's bytes atomically (temporary file, then rename); refuses to overwrite
/// unless `force`.
pub fn write_image(path: &Path, bytes: &[u8], force: bool) -> Result<(), PlotError> {
    write_atomic(path, bytes, force)?;
    Ok(())
}
