//! The drawing backend of every plot: plotters' bitmap (PNG) or SVG backend, with text laid
//! out from the bundled font's metrics (advance + kerning, each glyph at its own bearing).
//!
//! plotters' ab_glyph text drawing places every glyph at the pen position without its left
//! side bearing, which opens gaps before narrow-bearing letters ("EM T") and closes them
//! after wide ones ("lawfrom"); here glyphs are positioned, then rasterised, by ab_glyph.

use std::error::Error;
use std::fmt;
use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};
use plotters::prelude::{BitMapBackend, SVGBackend};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontFamily, FontStyle, FontTransform,
};

use super::style::DEJAVU_SANS;

/// A page being drawn: pixels for PNG, elements for SVG.
pub(crate) enum Page<'a> {
    Bitmap(BitMapBackend<'a>),
    Svg(SVGBackend<'a>),
}

/// A backend's error, as text.
#[derive(Debug)]
pub(crate) struct PageError(String);

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for PageError {}

fn page_err<E: Error + Send + Sync>(e: DrawingErrorKind<E>) -> DrawingErrorKind<PageError> {
    match e {
        DrawingErrorKind::DrawingError(e) => {
            DrawingErrorKind::DrawingError(PageError(e.to_string()))
        }
        DrawingErrorKind::FontError(e) => DrawingErrorKind::FontError(e),
    }
}

/// The same call on whichever backend the page holds.
macro_rules! on_backend {
    ($page:expr, $b:ident => $call:expr) => {
        match $page {
            Page::Bitmap($b) => $call.map_err(page_err),
            Page::Svg($b) => $call.map_err(page_err),
        }
    };
}

/// A text laid out on one line: its glyphs with their pen positions (baseline at the font's
/// ascent, so the box is `width` × `height` from (0, 0)).
struct Line {
    glyphs: Vec<ab_glyph::Glyph>,
    width: f32,
    height: f32,
}

fn font() -> Option<FontRef<'static>> {
    static FONT: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(DEJAVU_SANS).ok())
        .clone()
}

/// Lays `text` out at `size` pixels (ascent − descent, plotters' meaning of a font size).
fn layout(font: &FontRef<'_>, size: f32, text: &str) -> Line {
    let scaled = font.as_scaled(PxScale::from(size));
    let mut pen = 0.0f32;
    let mut prev = None;
    let mut glyphs = Vec::with_capacity(text.len());
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            pen += scaled.kern(p, id);
        }
        glyphs.push(id.with_scale_and_position(size, point(pen, scaled.ascent())));
        pen += scaled.h_advance(id);
        prev = Some(id);
    }
    Line {
        glyphs,
        width: pen,
        height: scaled.ascent() - scaled.descent(),
    }
}

fn font_missing() -> DrawingErrorKind<PageError> {
    DrawingErrorKind::DrawingError(PageError("the bundled font could not be read".into()))
}

/// The text's width and height in pixels.
pub(crate) fn text_size(size: f64, text: &str) -> Option<(u32, u32)> {
    let font = font()?;
    let line = layout(&font, size as f32, text);
    Some((line.width.ceil() as u32, line.height.ceil() as u32))
}

/// A text style whose size is scaled (SVG sizes are in em, plotters' in ascent − descent).
struct SvgText<'s, S> {
    style: &'s S,
    size: f64,
}

impl<S: BackendTextStyle> BackendTextStyle for SvgText<'_, S> {
    type FontError = S::FontError;
    fn color(&self) -> BackendColor {
        self.style.color()
    }
    fn size(&self) -> f64 {
        self.size
    }
    fn transform(&self) -> FontTransform {
        self.style.transform()
    }
    fn style(&self) -> FontStyle {
        self.style.style()
    }
    fn anchor(&self) -> plotters_backend::text_anchor::Pos {
        self.style.anchor()
    }
    fn family(&self) -> FontFamily<'_> {
        self.style.family()
    }
    fn layout_box(&self, text: &str) -> Result<((i32, i32), (i32, i32)), Self::FontError> {
        self.style.layout_box(text)
    }
    fn draw<E, F: FnMut(i32, i32, BackendColor) -> Result<(), E>>(
        &self,
        text: &str,
        pos: BackendCoord,
        draw: F,
    ) -> Result<Result<(), E>, Self::FontError> {
        self.style.draw(text, pos, draw)
    }
}

impl Page<'_> {
    /// Rasterises `text` with its anchor at `pos`, turned as the style says.
    fn raster_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<PageError>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let font = font().ok_or_else(font_missing)?;
        let line = layout(&font, style.size() as f32, text);
        let (w, h) = (line.width.round() as i32, line.height.round() as i32);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -w,
            HPos::Center => -w / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -h / 2,
            VPos::Bottom => -h,
        };
        let turn = style.transform();
        for glyph in line.glyphs {
            let Some(outline) = font.outline_glyph(glyph) else {
                continue; // a space
            };
            let bounds = outline.px_bounds();
            let mut pixels = Vec::new();
            outline.draw(|x, y, coverage| {
                if coverage > 0.0 {
                    let (x, y) = (
                        bounds.min.x as i32 + x as i32,
                        bounds.min.y as i32 + y as i32,
                    );
                    let (x, y) = turn.transform(x + dx, y + dy);
                    pixels.push(((pos.0 + x, pos.1 + y), coverage));
                }
            });
            for (at, coverage) in pixels {
                let c = BackendColor {
                    alpha: color.alpha * coverage as f64,
                    rgb: color.rgb,
                };
                self.draw_pixel(at, c)?;
            }
        }
        Ok(())
    }
}

impl DrawingBackend for Page<'_> {
    type ErrorType = PageError;

    fn get_size(&self) -> (u32, u32) {
        match self {
            Page::Bitmap(b) => b.get_size(),
            Page::Svg(b) => b.get_size(),
        }
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.ensure_prepared())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.present())
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.draw_pixel(point, color))
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.draw_line(from, to, style))
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.draw_rect(upper_left, bottom_right, style, fill))
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.draw_path(path, style))
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.draw_circle(center, radius, style, fill))
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.fill_polygon(vert, style))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<PageError>> {
        match self {
            Page::Bitmap(_) => self.raster_text(text, style, pos),
            Page::Svg(b) => {
                // The SVG backend writes font-size = size / 1.24; the bundled font's em is
                // size / (ascent − descent in em), as the PNG draws it.
                let svg = SvgText {
                    style,
                    size: style.size() * 1.24 / svg_line_height_em(),
                };
                b.draw_text(text, &svg, pos).map_err(page_err)
            }
        }
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<PageError>> {
        text_size(style.size(), text).ok_or_else(font_missing)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (iw, ih): (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<PageError>> {
        on_backend!(self, b => b.blit_bitmap(pos, (iw, ih), src))
    }
}

/// Ascent − descent of the bundled font in em (1.164 for DejaVu Sans).
fn svg_line_height_em() -> f64 {
    font()
        .and_then(|f| {
            let em = f.units_per_em()?;
            Some(((f.ascent_unscaled() - f.descent_unscaled()) / em) as f64)
        })
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each glyph's ink starts at its pen position plus its left side bearing.
    #[test]
    fn glyphs_keep_their_side_bearings() {
        let font = font().unwrap();
        let line = layout(&font, 40.0, "EMT");
        let scaled = font.as_scaled(PxScale::from(40.0));
        for g in &line.glyphs {
            let ink = font.outline_glyph(g.clone()).unwrap().px_bounds().min.x;
            let expected = g.position.x + scaled.h_side_bearing(g.id);
            assert!((ink - expected).abs() <= 1.0, "{ink} vs {expected}");
        }
        let (w, _) = text_size(40.0, "EMT").unwrap();
        assert!((w as f32 - line.width).abs() <= 1.0);
    }
}
