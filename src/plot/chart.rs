//! One chart of a panel: padded ranges, tick labels that fit plotters' step, the frame's
//! margins, the legend box, and the series drawn on it (branches, dashed model, zero line).

use std::ops::Range;

use plotters::chart::MeshStyle;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::{draw_err, text_style, Area, Fonts};
use super::page::Page;
use super::style::{rgb, AXIS, GRID, LOADING_RGB, MODEL_RGB, NOTE, UNLOADING_RGB};
use super::PlotError;

/// Runs of one branch: (first sample, last sample, loading); consecutive runs share a sample.
fn branch_runs(flags: &[bool]) -> Vec<(usize, usize, bool)> {
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 2..=flags.len() {
        if i == flags.len() || flags[i] != flags[i - 1] {
            runs.push((start, i - 1, flags[i - 1]));
            start = i - 1;
        }
    }
    runs
}

pub(super) fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    })
}

pub(super) fn padded((lo, hi): (f64, f64), frac: f64) -> Range<f64> {
    let span = if hi > lo {
        hi - lo
    } else {
        lo.abs().max(1e-12)
    };
    (lo - frac * span)..(hi + frac * span)
}

/// What a legend line shows before its text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Mark {
    Line(RGBColor),
    Dashed(RGBColor),
    Bar(RGBColor),
    None,
}

pub(super) struct Legend {
    pub entries: Vec<(Mark, String)>,
    pub font: u32,
}

impl Legend {
    const SWATCH: i32 = 26;

    fn line_height(&self) -> i32 {
        (self.font as f64 * 1.4).round() as i32
    }

    /// Pixel size of the box (padding included).
    pub(crate) fn size(&self, area: &Area<'_>) -> (i32, i32) {
        let style = text_style(self.font, &BLACK);
        let pad = self.font as i32 / 2 + 2;
        let widest = self
            .entries
            .iter()
            .map(|(mark, text)| {
                let w = area
                    .estimate_text_size(text, &style)
                    .map(|(w, _)| w as i32)
                    .unwrap_or(text.chars().count() as i32 * self.font as i32 * 6 / 10);
                w + if *mark == Mark::None {
                    0
                } else {
                    Self::SWATCH + 8
                }
            })
            .max()
            .unwrap_or(0);
        (
            widest + 2 * pad,
            self.line_height() * self.entries.len() as i32 + 2 * pad,
        )
    }

    /// Draws the box with its top-left corner at `at` (pixels of `area`).
    pub(crate) fn draw(
        &self,
        area: &Area<'_>,
        at: (i32, i32),
        border: bool,
    ) -> Result<(), PlotError> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let (w, h) = self.size(area);
        let pad = self.font as i32 / 2 + 2;
        let (x0, y0) = at;
        area.draw(&Rectangle::new(
            [(x0, y0), (x0 + w, y0 + h)],
            WHITE.mix(0.92).filled(),
        ))
        .map_err(draw_err)?;
        if border {
            area.draw(&Rectangle::new(
                [(x0, y0), (x0 + w, y0 + h)],
                AXIS.stroke_width(1),
            ))
            .map_err(draw_err)?;
        }
        let lh = self.line_height();
        let style = text_style(self.font, &BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        for (k, (mark, text)) in self.entries.iter().enumerate() {
            let cy = y0 + pad + lh * k as i32 + lh / 2;
            let mut tx = x0 + pad;
            let sx = x0 + pad;
            match *mark {
                Mark::Line(c) => {
                    area.draw(&PathElement::new(
                        vec![(sx, cy), (sx + Self::SWATCH, cy)],
                        c.stroke_width(3),
                    ))
                    .map_err(draw_err)?;
                }
                Mark::Dashed(c) => {
                    for d in [0, 10, 20] {
                        area.draw(&PathElement::new(
                            vec![(sx + d, cy), (sx + d + 6, cy)],
                            c.stroke_width(2),
                        ))
                        .map_err(draw_err)?;
                    }
                }
                Mark::Bar(c) => {
                    area.draw(&Rectangle::new(
                        [(sx + 4, cy - lh / 3), (sx + Self::SWATCH - 4, cy + lh / 3)],
                        c.filled(),
                    ))
                    .map_err(draw_err)?;
                }
                Mark::None => {}
            }
            if *mark != Mark::None {
                tx += Self::SWATCH + 8;
            }
            area.draw(&Text::new(text.clone(), (tx, cy), style.clone()))
                .map_err(draw_err)?;
        }
        Ok(())
    }
}

pub(super) const X_TICKS: usize = 7;
pub(super) const Y_TICKS: usize = 6;

/// Decimals that tell apart ticks of plotters' step (1, 2 or 5 × 10^k, at most `ticks` of them).
pub(super) fn tick_decimals(range: &Range<f64>, ticks: usize) -> usize {
    let raw = (range.end - range.start).abs() / ticks.max(1) as f64;
    if raw.is_nan() || raw <= 0.0 || raw.is_infinite() {
        return 2;
    }
    let base = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * base)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * base);
    (-step.log10().floor()).clamp(0.0, 12.0) as usize
}

/// A tick label with `decimals` decimals, never "-0"; past a million in magnitude, three
/// significant digits in scientific notation (not hundreds of digits).
pub(super) fn tick_label(v: f64, decimals: usize) -> String {
    if v.abs() >= 1e6 {
        return crate::kes::units::significant(v, 3);
    }
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        format!("{:.decimals$}", 0.0)
    } else {
        s
    }
}

/// Margins and label areas of a chart, in pixels, for a font size.
pub(super) struct ChartFrame {
    pub margin: u32,
    pub x_label: u32,
    pub y_label: u32,
    pub caption: u32,
}

impl ChartFrame {
    pub(crate) fn new(fonts: Fonts, caption: bool) -> Self {
        Self {
            margin: fonts.label / 2 + 4,
            x_label: fonts.label * 3,
            y_label: fonts.label * 5,
            caption: if caption { fonts.caption * 2 } else { 0 },
        }
    }

    /// The plotting area's pixel size inside `area`.
    pub(crate) fn plot_size(&self, area: &Area<'_>) -> (f64, f64) {
        let (w, h) = area.dim_in_pixel();
        let w = w.saturating_sub(2 * self.margin + self.y_label).max(1);
        let h = h
            .saturating_sub(2 * self.margin + self.x_label + self.caption)
            .max(1);
        (w as f64, h as f64)
    }
}

/// The house style of a mesh: label and axis-title fonts, axis, grid and sub-grid colours.
pub(super) fn house_mesh<'m, 'a, 'b, X: Ranged, Y: Ranged, DB: DrawingBackend>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    fonts: Fonts,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB> {
    mesh.label_style(text_style(fonts.label, &BLACK))
        .axis_desc_style(text_style(fonts.label, &BLACK))
        .axis_style(AXIS)
        .bold_line_style(GRID)
        .light_line_style(WHITE)
}

pub(super) type Chart<'a, 'b> = ChartContext<
    'a,
    Page<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Refuses an axis range plotters cannot divide: its tick search never ends on a span that is
/// not a finite positive number, nor on one whose tenfold overflows (it scales its step by 10
/// past the span); a margin of 1000 keeps its arithmetic finite.
pub(super) fn check_span(axis: &str, r: &Range<f64>) -> Result<(), PlotError> {
    let span = r.end - r.start;
    if (1e3 * span).is_finite() && span > 0.0 {
        Ok(())
    } else {
        Err(PlotError::Span {
            axis: axis.to_string(),
            lo: r.start,
            hi: r.end,
        })
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn chart<'a, 'b>(
    area: &'a Area<'b>,
    frame: &ChartFrame,
    caption: Option<&str>,
    fonts: Fonts,
    x: Range<f64>,
    y: Range<f64>,
    x_desc: &str,
    y_desc: &str,
) -> Result<Chart<'a, 'b>, PlotError> {
    for (axis, desc, r) in [("x", x_desc, &x), ("y", y_desc, &y)] {
        // a panel above a residual strip draws no x title: name the axis itself
        check_span(if desc.is_empty() { axis } else { desc }, r)?;
    }
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(frame.margin)
        .x_label_area_size(frame.x_label)
        .y_label_area_size(frame.y_label);
    if let Some(c) = caption {
        builder.caption(c, text_style(fonts.caption, &BLACK));
    }
    let (xd, yd) = (tick_decimals(&x, X_TICKS), tick_decimals(&y, Y_TICKS));
    let x_fmt = |v: &f64| tick_label(*v, xd);
    let y_fmt = |v: &f64| tick_label(*v, yd);
    let mut chart = builder.build_cartesian_2d(x, y).map_err(draw_err)?;
    house_mesh(&mut chart.configure_mesh(), fonts)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(X_TICKS)
        .y_labels(Y_TICKS)
        .draw()
        .map_err(draw_err)?;
    Ok(chart)
}

/// Draws a path in branch colours (loading blue, unloading vermilion).
pub(super) fn draw_branches(
    chart: &mut Chart<'_, '_>,
    xs: &[f64],
    ys: &[f64],
    flags: &[bool],
    width: u32,
) -> Result<(), PlotError> {
    let (load, unload) = (rgb(LOADING_RGB), rgb(UNLOADING_RGB));
    for (a, b, loading) in branch_runs(flags) {
        let color = if loading { load } else { unload };
        let points = (a..=b).map(|i| (xs[i], ys[i]));
        // plotters' bitmap backend drops 1-pixel horizontal steps drawn right to left: a
        // branch that runs leftwards is drawn from its other end (the same segments)
        let points: Vec<(f64, f64)> = if xs[b] < xs[a] {
            points.rev().collect()
        } else {
            points.collect()
        };
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(width)))
            .map_err(draw_err)?;
    }
    Ok(())
}

pub(super) fn draw_dashed(
    chart: &mut Chart<'_, '_>,
    xs: &[f64],
    ys: &[f64],
) -> Result<(), PlotError> {
    let style = ShapeStyle {
        color: rgb(MODEL_RGB).to_rgba(),
        filled: false,
        stroke_width: 2,
    };
    chart
        .draw_series(DashedLineSeries::new(
            xs.iter().copied().zip(ys.iter().copied()),
            9u32,
            5u32,
            style,
        ))
        .map_err(draw_err)?;
    Ok(())
}

pub(super) fn draw_zero_line(chart: &mut Chart<'_, '_>, x: &Range<f64>) -> Result<(), PlotError> {
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x.start, 0.0), (x.end, 0.0)],
            NOTE.stroke_width(1),
        )))
        .map_err(draw_err)?;
    Ok(())
}

/// Raises the top of `y` so that no point under the legend's corner (the top-left
/// `fx` × `fy` fraction of the plot) hides behind it.
pub(super) fn make_room(
    y: Range<f64>,
    x: &Range<f64>,
    pts: &[(f64, f64)],
    fx: f64,
    fy: f64,
) -> Range<f64> {
    if !(0.0..0.7).contains(&fy) {
        return y;
    }
    let x_edge = x.start + fx * (x.end - x.start);
    let top = pts
        .iter()
        .filter(|(px, _)| *px <= x_edge)
        .map(|(_, py)| *py)
        .fold(f64::NEG_INFINITY, f64::max);
    let limit = y.end - fy * (y.end - y.start);
    if top <= limit {
        return y;
    }
    let span = y.end - y.start;
    let end = (top + 0.03 * span - fy * y.start) / (1.0 - fy);
    y.start..end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::canvas::render;
    use crate::plot::PlotSize;

    #[test]
    fn runs_of_a_shear_path() {
        // 0 → 2 → −2 → 0: loading, unloading, loading (negative side), unloading
        let f = [true, true, true, false, false, true, true, false, false];
        assert_eq!(
            branch_runs(&f),
            [(0, 2, true), (2, 4, false), (4, 6, true), (6, 8, false)]
        );
    }

    /// Pixels of `color` in a PNG.
    fn count(png_bytes: &[u8], color: (u8, u8, u8)) -> usize {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf[..info.buffer_size()]
            .chunks(3)
            .filter(|p| (p[0], p[1], p[2]) == color)
            .count()
    }

    #[test]
    fn thin_branches_running_leftwards_are_drawn_whole() {
        // a nearly flat path, right to left, 1 pixel wide: every column gets its pixel
        let xs: Vec<f64> = (0..=200).map(|i| 1.0 - i as f64 / 200.0).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 0.01 * x).collect();
        let flags = vec![false; xs.len()];
        let size = PlotSize::new(600, 300).unwrap();
        let bytes = render(size, super::super::ImageFormat::Png, |root| {
            let fonts = Fonts::for_area(root);
            let frame = ChartFrame::new(fonts, false);
            let mut ch = chart(root, &frame, None, fonts, 0.0..1.0, -1.0..1.0, "x", "y")?;
            draw_branches(&mut ch, &xs, &ys, &flags, 1)
        })
        .unwrap();
        let drawn = count(&bytes, UNLOADING_RGB);
        // the plotting area is about 520 pixels wide (600 less margins and labels)
        assert!(drawn >= 480, "{drawn} pixels");
    }

    #[test]
    fn tick_labels_fit_the_step() {
        assert_eq!(tick_decimals(&(0.0..600.0), 6), 0);
        assert_eq!(tick_decimals(&(-0.27..0.27), 6), 1);
        assert_eq!(tick_decimals(&(0.0..0.012), 6), 3);
        assert_eq!(tick_label(-0.00001, 1), "0.0");
        assert_eq!(tick_label(-0.25, 2), "-0.25");
    }

    #[test]
    fn room_is_made_only_when_the_corner_is_taken() {
        let x = 0.0..10.0;
        let free = make_room(0.0..1.0, &x, &[(9.0, 1.0), (1.0, 0.1)], 0.3, 0.3);
        assert_eq!(free, 0.0..1.0);
        let taken = make_room(0.0..1.0, &x, &[(1.0, 0.95)], 0.3, 0.3);
        // the point now sits under the legend's bottom edge
        assert!(taken.end > 1.0);
        assert!(0.95 <= taken.end - 0.3 * (taken.end - taken.start));
    }
}
