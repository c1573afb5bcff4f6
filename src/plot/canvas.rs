//! A white page of the plot size (PNG pixels or SVG), its title, the font sizes of a panel,
//! the checks on what is drawn, and the encoding of the page.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::page::Page;
use super::style::{ensure_font, FAMILY};
use super::{curve_title, CurvePlot, ImageFormat, PlotError, PlotSize};

pub(super) type Area<'a> = DrawingArea<Page<'a>, Shift>;

pub(super) fn draw_err(e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// Font sizes (pixels) for one panel, from its size.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fonts {
    pub caption: u32,
    /// Ticks, axis titles and legends.
    pub label: u32,
}

impl Fonts {
    pub(crate) fn for_area(area: &Area<'_>) -> Self {
        let (w, h) = area.dim_in_pixel();
        let base = ((w as f64 / 1.5).min(h as f64) / 46.0).clamp(12.0, 17.0);
        Self {
            caption: (base * 1.15).round() as u32,
            label: base.round() as u32,
        }
    }
}

pub(super) fn text_style(size: u32, color: &RGBColor) -> TextStyle<'_> {
    TextStyle::from((FAMILY, size).into_font()).color(color)
}

/// Draws on a white page of `size`, then encodes it as PNG (an RGB buffer) or SVG (text).
pub(super) fn render<F>(size: PlotSize, format: ImageFormat, draw: F) -> Result<Vec<u8>, PlotError>
where
    F: FnOnce(&Area<'_>) -> Result<(), PlotError>,
{
    ensure_font()?;
    let (w, h) = (size.width, size.height);
    let paint = |page: Page<'_>| {
        let root = page.into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        draw(&root)?;
        root.present().map_err(draw_err)
    };
    match format {
        ImageFormat::Png => {
            let mut buf = vec![255u8; w as usize * h as usize * 3];
            paint(Page::Bitmap(BitMapBackend::with_buffer(&mut buf, (w, h))))?;
            encode_png(&buf, w, h)
        }
        ImageFormat::Svg => {
            let mut svg = String::new();
            paint(Page::Svg(SVGBackend::with_string(&mut svg, (w, h))))?;
            Ok(svg.into_bytes())
        }
    }
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, PlotError> {
    let enc = |e: png::EncodingError| PlotError::Encode(e.to_string());
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(enc)?;
    writer.write_image_data(rgb).map_err(enc)?;
    writer.finish().map_err(enc)?;
    Ok(out)
}

/// Writes the page title at the top; returns the area under it.
pub(super) fn title<'a>(
    root: &Area<'a>,
    text: &str,
    size: PlotSize,
) -> Result<Area<'a>, PlotError> {
    let fs = (size.height / 36).clamp(14, 26);
    let pad = fs / 2;
    let (w, _) = root.dim_in_pixel();
    let style = text_style(fs, &BLACK).pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(
        text.to_string(),
        ((w / 2) as i32, pad as i32),
        style,
    ))
    .map_err(draw_err)?;
    Ok(root.split_vertically(fs + 2 * pad).1)
}

/// Refuses what cannot be drawn: fewer than two samples, lengths that differ, values that are
/// not finite.
pub(super) fn check_curve(plot: &CurvePlot<'_>) -> Result<(), PlotError> {
    let c = plot.curve;
    let what = curve_title(c);
    if c.x.len() < 2 || c.y.len() < 2 {
        return Err(PlotError::Empty(what));
    }
    if c.x.len() != c.y.len() {
        return Err(PlotError::Lengths {
            what,
            x: c.x.len(),
            y: c.y.len(),
        });
    }
    if let Some(m) = plot.model {
        if m.y.len() != c.x.len() {
            return Err(PlotError::ModelLength {
                what,
                model: m.y.len(),
                samples: c.x.len(),
            });
        }
        if m.y.iter().any(|v| !v.is_finite()) {
            return Err(PlotError::NotFinite(format!("{what} (model)")));
        }
    }
    if c.x.iter().chain(&c.y).any(|v| !v.is_finite()) {
        return Err(PlotError::NotFinite(what));
    }
    Ok(())
}
