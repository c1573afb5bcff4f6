//! Drawing on plotters' bitmap backend: page title, curve panels (measured branches, model,
//! residuals, legend box), empty cells, the hysteresis page; PNG encoding of the buffer.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::hysteresis::{dissipation_per_cycle, friction_part, law_friction, Cycle};
use super::style::{
    energy_unit, ensure_font, rgb, sig, KesAxes, AXIS, FAMILY, GRID, LOADING_RGB, MODEL_RGB, NOTE,
    UNLOADING_RGB,
};
use super::{curve_title, CurvePlot, HysteresisPlot, PlotError, PlotSize};
use crate::fit::estimate::directions;
use crate::kes::Curve;
use crate::material::MaterialLaw;

pub(crate) type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

pub(crate) fn draw_err(e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// Font sizes (pixels) for one panel, from its size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fonts {
    pub caption: u32,
    /// Ticks, axis titles and legends.
    pub label: u32,
}

impl Fonts {
    pub fn for_area(area: &Area<'_>) -> Self {
        let (w, h) = area.dim_in_pixel();
        let base = ((w as f64 / 1.5).min(h as f64) / 46.0).clamp(12.0, 17.0);
        Self {
            caption: (base * 1.15).round() as u32,
            label: base.round() as u32,
        }
    }
}

fn text_style(size: u32, color: &RGBColor) -> TextStyle<'_> {
    TextStyle::from((FAMILY, size).into_font()).color(color)
}

/// Draws on a white RGB buffer of `size`, then encodes it as PNG.
pub(crate) fn render<F>(size: PlotSize, draw: F) -> Result<Vec<u8>, PlotError>
where
    F: FnOnce(&Area<'_>) -> Result<(), PlotError>,
{
    ensure_font()?;
    let (w, h) = (size.width, size.height);
    let mut buf = vec![255u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        draw(&root)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
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
pub(crate) fn title<'a>(
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
pub(crate) fn check_curve(plot: &CurvePlot<'_>) -> Result<(), PlotError> {
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

/// For each sample i ≥ 1, whether the segment (i−1, i) loads (|x| grows: moving away from
/// zero); sample 0 copies sample 1. Dwell and noise follow the path's direction.
pub(crate) fn loading_flags(x: &[f64]) -> Vec<bool> {
    let (lo, hi) = bounds(x.iter().copied());
    let v = directions(x, 1e-3 * (hi - lo));
    let mut flags: Vec<bool> = (0..x.len())
        .map(|i| {
            let mid = if i == 0 {
                x[0]
            } else {
                0.5 * (x[i] + x[i - 1])
            };
            v[i] * mid >= 0.0
        })
        .collect();
    if flags.len() > 1 {
        flags[0] = flags[1];
    }
    flags
}

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

fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    })
}

fn padded((lo, hi): (f64, f64), frac: f64) -> Range<f64> {
    let span = if hi > lo {
        hi - lo
    } else {
        lo.abs().max(1e-12)
    };
    (lo - frac * span)..(hi + frac * span)
}

/// What a legend line shows before its text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mark {
    Line(RGBColor),
    Dashed(RGBColor),
    Bar(RGBColor),
    None,
}

struct Legend {
    entries: Vec<(Mark, String)>,
    font: u32,
}

impl Legend {
    const SWATCH: i32 = 26;

    fn line_height(&self) -> i32 {
        (self.font as f64 * 1.4).round() as i32
    }

    /// Pixel size of the box (padding included).
    fn size(&self, area: &Area<'_>) -> (i32, i32) {
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
    fn draw(&self, area: &Area<'_>, at: (i32, i32), border: bool) -> Result<(), PlotError> {
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

const X_TICKS: usize = 7;
const Y_TICKS: usize = 6;

/// Decimals that tell apart ticks of plotters' step (1, 2 or 5 × 10^k, at most `ticks` of them).
fn tick_decimals(range: &Range<f64>, ticks: usize) -> usize {
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

/// A tick label with `decimals` decimals, never "-0".
fn tick_label(v: f64, decimals: usize) -> String {
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
struct ChartFrame {
    margin: u32,
    x_label: u32,
    y_label: u32,
    caption: u32,
}

impl ChartFrame {
    fn new(fonts: Fonts, caption: bool) -> Self {
        Self {
            margin: fonts.label / 2 + 4,
            x_label: fonts.label * 3,
            y_label: fonts.label * 5,
            caption: if caption { fonts.caption * 2 } else { 0 },
        }
    }

    /// The plotting area's pixel size inside `area`.
    fn plot_size(&self, area: &Area<'_>) -> (f64, f64) {
        let (w, h) = area.dim_in_pixel();
        let w = w.saturating_sub(2 * self.margin + self.y_label).max(1);
        let h = h
            .saturating_sub(2 * self.margin + self.x_label + self.caption)
            .max(1);
        (w as f64, h as f64)
    }
}

type Chart<'a, 'b> = ChartContext<
    'a,
    BitMapBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

#[allow(clippy::too_many_arguments)]
fn chart<'a, 'b>(
    area: &'a Area<'b>,
    frame: &ChartFrame,
    caption: Option<&str>,
    fonts: Fonts,
    x: Range<f64>,
    y: Range<f64>,
    x_desc: &str,
    y_desc: &str,
) -> Result<Chart<'a, 'b>, PlotError> {
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
    chart
        .configure_mesh()
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(text_style(fonts.label, &BLACK))
        .axis_desc_style(text_style(fonts.label, &BLACK))
        .axis_style(AXIS)
        .bold_line_style(GRID)
        .light_line_style(WHITE)
        .x_labels(X_TICKS)
        .y_labels(Y_TICKS)
        .draw()
        .map_err(draw_err)?;
    Ok(chart)
}

/// Draws a path in branch colours (loading blue, unloading vermilion).
fn draw_branches(
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

fn draw_dashed(chart: &mut Chart<'_, '_>, xs: &[f64], ys: &[f64]) -> Result<(), PlotError> {
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

fn draw_zero_line(chart: &mut Chart<'_, '_>, x: &Range<f64>) -> Result<(), PlotError> {
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
fn make_room(y: Range<f64>, x: &Range<f64>, pts: &[(f64, f64)], fx: f64, fy: f64) -> Range<f64> {
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

/// One curve panel: the measured branches, the model dashed, the legend box upper left and,
/// with a model, the residual panel under it.
pub(crate) fn curve_panel(
    area: &Area<'_>,
    plot: &CurvePlot<'_>,
    caption: Option<&str>,
    fonts: Fonts,
) -> Result<(), PlotError> {
    let c = plot.curve;
    let axes = KesAxes::of(c.test);
    let xs: Vec<f64> = c.x.iter().map(|v| v * axes.x_scale).collect();
    let ys: Vec<f64> = c.y.iter().map(|v| v * axes.y_scale).collect();
    let model: Option<Vec<f64>> = plot
        .model
        .map(|m| m.y.iter().map(|v| v * axes.y_scale).collect());
    let flags = loading_flags(&c.x);

    let (_, h) = area.dim_in_pixel();
    let (main, resid) = match model {
        Some(_) => {
            let (a, b) = area.split_vertically((h as f64 * 0.7) as u32);
            (a, Some(b))
        }
        None => (area.clone(), None),
    };

    let mut legend = Legend {
        entries: vec![
            (Mark::Line(rgb(LOADING_RGB)), "loading".to_string()),
            (Mark::Line(rgb(UNLOADING_RGB)), "unloading".to_string()),
        ],
        font: fonts.label,
    };
    if let Some(m) = plot.model {
        legend
            .entries
            .push((Mark::Dashed(rgb(MODEL_RGB)), m.label.clone()));
    }
    legend
        .entries
        .extend(plot.legend.iter().map(|l| (Mark::None, l.clone())));

    let frame = ChartFrame::new(fonts, caption.is_some());
    let x = padded(bounds(xs.iter().copied()), 0.03);
    let y_all = bounds(ys.iter().chain(model.iter().flatten()).copied());
    let mut y = padded(y_all, 0.06);
    let (pw, ph) = frame.plot_size(&main);
    let (lw, lh) = legend.size(&main);
    let inset = 8.0;
    let mut pts: Vec<(f64, f64)> = xs.iter().copied().zip(ys.iter().copied()).collect();
    if let Some(m) = &model {
        pts.extend(xs.iter().copied().zip(m.iter().copied()));
    }
    y = make_room(
        y,
        &x,
        &pts,
        (lw as f64 + 2.0 * inset) / pw,
        (lh as f64 + 2.0 * inset) / ph,
    );
    let x_desc = if resid.is_some() { "" } else { axes.x_title };
    let mut ch = chart(
        &main,
        &frame,
        caption,
        fonts,
        x.clone(),
        y,
        x_desc,
        axes.y_title,
    )?;
    draw_branches(&mut ch, &xs, &ys, &flags, 2)?;
    if let Some(m) = &model {
        draw_dashed(&mut ch, &xs, m)?;
    }
    let plotting = ch.plotting_area().strip_coord_spec();
    legend.draw(&plotting, (inset as i32, inset as i32), true)?;

    if let (Some(area), Some(m)) = (resid, &model) {
        let r: Vec<f64> = ys.iter().zip(m).map(|(a, b)| a - b).collect();
        let top = r.iter().fold(0.0f64, |a, v| a.max(v.abs())).max(1e-12) * 1.15;
        let frame = ChartFrame::new(fonts, false);
        let y_desc = format!("residual [{}]", axes.y_unit);
        let mut ch = chart(
            &area,
            &frame,
            None,
            fonts,
            x.clone(),
            -top..top,
            axes.x_title,
            &y_desc,
        )?;
        draw_zero_line(&mut ch, &x)?;
        draw_branches(&mut ch, &xs, &r, &flags, 1)?;
    }
    Ok(())
}

/// A sheet cell without a curve: a light frame, its caption, "no curve".
pub(crate) fn empty_panel(area: &Area<'_>, caption: &str, fonts: Fonts) -> Result<(), PlotError> {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    area.draw(&Rectangle::new(
        [(4, 4), (w - 4, h - 4)],
        GRID.stroke_width(1),
    ))
    .map_err(draw_err)?;
    let top = text_style(fonts.caption, &BLACK).pos(Pos::new(HPos::Center, VPos::Top));
    area.draw(&Text::new(
        caption.to_string(),
        (w / 2, fonts.caption as i32 / 2 + 4),
        top,
    ))
    .map_err(draw_err)?;
    let mid = text_style(fonts.caption, &NOTE).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new("no curve".to_string(), (w / 2, h / 2), mid))
        .map_err(draw_err)?;
    Ok(())
}

/// The hysteresis page: friction part (or the loop, without a law) on the left; energy per
/// cycle and the text box on the right.
pub(crate) fn hysteresis_page(area: &Area<'_>, plot: &HysteresisPlot<'_>) -> Result<(), PlotError> {
    let c: &Curve = plot.curve;
    let fonts = Fonts::for_area(area);
    let axes = KesAxes::of(c.test);
    let (escale, eunit) = energy_unit(c.test);
    let (w, h) = area.dim_in_pixel();
    let (left, right) = area.split_horizontally((w as f64 * 0.6) as u32);
    let (bars, text) = right.split_vertically((h as f64 * 0.55) as u32);

    let xs: Vec<f64> = c.x.iter().map(|v| v * axes.x_scale).collect();
    let flags = loading_flags(&c.x);
    let x = padded(bounds(xs.iter().copied()), 0.03);
    let frame = ChartFrame::new(fonts, true);
    let measured_cycles = dissipation_per_cycle(&c.x, &c.y);
    let law_cycles: Option<Vec<Cycle>> = plot
        .law
        .map(|law| dissipation_per_cycle(&c.x, &law.drive(&c.x)));

    let mut legend = Legend {
        entries: vec![
            (Mark::Line(rgb(LOADING_RGB)), "loading".to_string()),
            (Mark::Line(rgb(UNLOADING_RGB)), "unloading".to_string()),
        ],
        font: fonts.label,
    };
    match plot.law {
        Some(law) => {
            let fp: Vec<f64> = friction_part(law, &c.x, &c.y, plot.offset)
                .iter()
                .map(|v| v * axes.y_scale)
                .collect();
            let lf: Vec<f64> = law_friction(law, &c.x)
                .iter()
                .map(|v| v * axes.y_scale)
                .collect();
            let y = padded(bounds(fp.iter().chain(&lf).copied()), 0.08);
            let y_desc = format!("friction part [{}]", axes.y_unit);
            let caption = "friction part: total − elastic part of the law";
            let mut ch = chart(
                &left,
                &frame,
                Some(caption),
                fonts,
                x.clone(),
                y,
                axes.x_title,
                &y_desc,
            )?;
            draw_zero_line(&mut ch, &x)?;
            draw_branches(&mut ch, &xs, &fp, &flags, 2)?;
            draw_dashed(&mut ch, &xs, &lf)?;
            legend.entries.push((
                Mark::Dashed(rgb(MODEL_RGB)),
                "the law's friction part".into(),
            ));
        }
        None => {
            let ys: Vec<f64> = c.y.iter().map(|v| v * axes.y_scale).collect();
            let y = padded(bounds(ys.iter().copied()), 0.06);
            let caption = "loop (no law given: friction part not separated)";
            let mut ch = chart(
                &left,
                &frame,
                Some(caption),
                fonts,
                x,
                y,
                axes.x_title,
                axes.y_title,
            )?;
            draw_branches(&mut ch, &xs, &ys, &flags, 2)?;
        }
    }

    energy_bars(
        &bars,
        fonts,
        &measured_cycles,
        law_cycles.as_deref(),
        escale,
        eunit,
    )?;

    legend
        .entries
        .push((Mark::Bar(rgb(LOADING_RGB)), "dissipated, measured".into()));
    if law_cycles.is_some() {
        legend
            .entries
            .push((Mark::Bar(rgb(MODEL_RGB)), "dissipated, law".into()));
    }
    legend
        .entries
        .extend(plot.legend.iter().map(|l| (Mark::None, l.clone())));
    let shown = 6;
    for (k, cy) in measured_cycles.iter().enumerate().take(shown) {
        let law = law_cycles
            .as_ref()
            .and_then(|l| l.get(k))
            .map(|l| format!(", law {}", sig(l.energy * escale, 3)))
            .unwrap_or_default();
        let open = if cy.closed { "" } else { " (open)" };
        legend.entries.push((
            Mark::None,
            format!(
                "cycle {}{open}: {}{law} {eunit}",
                k + 1,
                sig(cy.energy * escale, 3)
            ),
        ));
    }
    if measured_cycles.len() > shown {
        legend.entries.push((
            Mark::None,
            format!("… {} cycles in all", measured_cycles.len()),
        ));
    }
    if measured_cycles.iter().any(|c| !c.closed) {
        legend.entries.push((
            Mark::None,
            "open: the path does not come back to its start".into(),
        ));
    }
    let m = fonts.label as i32;
    legend.draw(&text, (m, m), false)
}

/// Bars of the energy per cycle: measured (blue) and law (black) side by side; open cycles
/// paler; the value above each bar.
fn energy_bars(
    area: &Area<'_>,
    fonts: Fonts,
    measured: &[Cycle],
    law: Option<&[Cycle]>,
    scale: f64,
    unit: &str,
) -> Result<(), PlotError> {
    let frame = ChartFrame::new(fonts, true);
    let caption = "energy dissipated per cycle";
    let n = measured.len().max(law.map_or(0, |l| l.len()));
    let y_desc = format!("dissipated [{unit}]");
    if n == 0 {
        let mut ch = chart(
            area,
            &frame,
            Some(caption),
            fonts,
            0.5..1.5,
            0.0..1.0,
            "cycle",
            &y_desc,
        )?;
        let style = text_style(fonts.label, &NOTE).pos(Pos::new(HPos::Center, VPos::Center));
        ch.draw_series(std::iter::once(Text::new(
            "no reversal: no cycle".to_string(),
            (1.0, 0.5),
            style,
        )))
        .map_err(draw_err)?;
        return Ok(());
    }
    let values = measured
        .iter()
        .chain(law.into_iter().flatten())
        .map(|c| c.energy * scale);
    let (lo, hi) = bounds(values);
    let (lo, hi) = (lo.min(0.0), hi.max(0.0));
    let span = (hi - lo).max(1e-12);
    let y = (lo - if lo < 0.0 { 0.1 * span } else { 0.0 })..(hi + 0.15 * span);
    let x = 0.4..(n as f64 + 0.6);
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(frame.margin)
        .x_label_area_size(frame.x_label)
        .y_label_area_size(frame.y_label)
        .caption(caption, text_style(fonts.caption, &BLACK));
    let yd = tick_decimals(&y, Y_TICKS);
    let y_fmt = |v: &f64| tick_label(*v, yd);
    let mut ch = builder.build_cartesian_2d(x, y).map_err(draw_err)?;
    let int_label = |v: &f64| {
        if (v - v.round()).abs() < 1e-9 && v.round() >= 1.0 {
            format!("{}", v.round() as i64)
        } else {
            String::new()
        }
    };
    ch.configure_mesh()
        .x_desc("cycle")
        .y_desc(y_desc)
        .label_style(text_style(fonts.label, &BLACK))
        .axis_desc_style(text_style(fonts.label, &BLACK))
        .axis_style(AXIS)
        .bold_line_style(GRID)
        .light_line_style(WHITE)
        .disable_x_mesh()
        .x_labels(n.min(12) + 1)
        .x_label_formatter(&int_label)
        .y_label_formatter(&y_fmt)
        .y_labels(Y_TICKS)
        .draw()
        .map_err(draw_err)?;
    let sets: Vec<(&[Cycle], RGBColor, f64)> = match law {
        Some(l) => vec![
            (measured, rgb(LOADING_RGB), -0.38),
            (l, rgb(MODEL_RGB), 0.02),
        ],
        None => vec![(measured, rgb(LOADING_RGB), -0.3)],
    };
    let width = if law.is_some() { 0.36 } else { 0.6 };
    let label = text_style(fonts.label.saturating_sub(2).max(10), &BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    for (cycles, color, shift) in sets {
        for (k, cy) in cycles.iter().enumerate() {
            let xc = (k + 1) as f64 + shift;
            let e = cy.energy * scale;
            let fill = if cy.closed {
                color.filled()
            } else {
                color.mix(0.45).filled()
            };
            ch.draw_series(std::iter::once(Rectangle::new(
                [(xc, 0.0), (xc + width, e)],
                fill,
            )))
            .map_err(draw_err)?;
            if n <= 8 {
                ch.draw_series(std::iter::once(Text::new(
                    sig(e, 3),
                    (xc + width / 2.0, e.max(0.0)),
                    label.clone(),
                )))
                .map_err(draw_err)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branches_of_a_shear_path() {
        // 0 → 2 → −2 → 0: loading, unloading, loading (negative side), unloading
        let x = [0.0, 1.0, 2.0, 1.0, 0.0, -1.0, -2.0, -1.0, 0.0];
        let f = loading_flags(&x);
        assert_eq!(
            f,
            [true, true, true, false, false, true, true, false, false]
        );
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
        let bytes = render(size, |root| {
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
