//! The hysteresis page: the friction part (total − the law's elastic part) against the path,
//! the energy dissipated per closed cycle ∮y dx as bars, and a text box; an open segment's
//! work ∫y dx is listed as such, never as a cycle's dissipation.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::{draw_err, text_style, Area, Fonts};
use super::chart::{
    bounds, chart, check_span, draw_branches, draw_dashed, draw_zero_line, house_mesh, padded,
    tick_decimals, tick_label, ChartFrame, Legend, Mark, Y_TICKS,
};
use super::style::{energy_unit, rgb, sig, KesAxes, LOADING_RGB, MODEL_RGB, NOTE, UNLOADING_RGB};
use super::{HysteresisPlot, PlotError};
use crate::kes::{Curve, Cycle, Path};
use crate::material::{friction_part, law_friction, MaterialLaw};

/// The hysteresis page: friction part (or the loop, without a law) on the left; energy per
/// closed cycle and the text box on the right.
pub(super) fn hysteresis_page(area: &Area<'_>, plot: &HysteresisPlot<'_>) -> Result<(), PlotError> {
    let c: &Curve = plot.curve;
    let fonts = Fonts::for_area(area);
    let axes = KesAxes::of(c.test);
    let (escale, eunit) = energy_unit(c.test);
    let (w, h) = area.dim_in_pixel();
    let (left, right) = area.split_horizontally((w as f64 * 0.6) as u32);
    let (bars, text) = right.split_vertically((h as f64 * 0.55) as u32);

    let xs: Vec<f64> = c.x.iter().map(|v| v * axes.x_scale).collect();
    let path = Path::new(&c.x);
    let flags = path.loading();
    let x = padded(bounds(xs.iter().copied()), 0.03);
    let frame = ChartFrame::new(fonts, true);
    let measured_cycles = path.closed_cycles(&c.y);
    let measured_open = path.open_segments(&c.y);
    // The law's own curve is its measurement: one series, one set of bars.
    let compared = plot.law.filter(|_| !plot.law_alone);
    let law_total: Option<Vec<f64>> = compared.map(|law| law.drive(&c.x));
    let law_cycles: Option<Vec<Cycle>> = law_total.as_ref().map(|y| path.closed_cycles(y));
    let law_open = law_total.as_ref().map(|y| path.open_segments(y));

    let mut legend = Legend {
        entries: vec![
            (Mark::Line(rgb(LOADING_RGB)), "loading".to_string()),
            (Mark::Line(rgb(UNLOADING_RGB)), "unloading".to_string()),
        ],
        font: fonts.label,
    };
    // With a law: the friction part of the curve (total − the law's elastic part) and the
    // law's own; without: the loop as measured.
    let in_y_unit = |v: &[f64]| -> Vec<f64> { v.iter().map(|v| v * axes.y_scale).collect() };
    let (ys, law_part, y_pad, y_desc, caption) = match plot.law {
        Some(law) => (
            in_y_unit(&friction_part(law, &c.x, &c.y, plot.offset)),
            Some(in_y_unit(&law_friction(law, &c.x))),
            0.08,
            format!("friction part [{}]", axes.y_unit),
            "friction part: total − elastic part of the law",
        ),
        None => (
            in_y_unit(&c.y),
            None,
            0.06,
            axes.y_title.to_string(),
            "loop (no law given: friction part not separated)",
        ),
    };
    let y = padded(
        bounds(ys.iter().chain(law_part.iter().flatten()).copied()),
        y_pad,
    );
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
    if law_part.is_some() {
        draw_zero_line(&mut ch, &x)?;
    }
    draw_branches(&mut ch, &xs, &ys, &flags, 2)?;
    if let Some(lf) = law_part.filter(|_| !plot.law_alone) {
        draw_dashed(&mut ch, &xs, &lf)?;
        legend.entries.push((
            Mark::Dashed(rgb(MODEL_RGB)),
            "the law's friction part".into(),
        ));
    }

    energy_bars(
        &bars,
        fonts,
        &measured_cycles,
        law_cycles.as_deref(),
        escale,
        eunit,
    )?;

    let first_set = if plot.law_alone {
        "dissipated by the law"
    } else {
        "dissipated, measured"
    };
    legend
        .entries
        .push((Mark::Bar(rgb(LOADING_RGB)), first_set.into()));
    if law_cycles.is_some() {
        legend
            .entries
            .push((Mark::Bar(rgb(MODEL_RGB)), "dissipated, law".into()));
    }
    legend
        .entries
        .extend(plot.legend.iter().map(|l| (Mark::None, l.clone())));
    // ", law E" where the law gives the value too
    let law_part = |v: Option<f64>| {
        v.map(|e| format!(", law {}", sig(e * escale, 3)))
            .unwrap_or_default()
    };
    let shown = 6;
    for (k, cy) in measured_cycles.iter().enumerate().take(shown) {
        let law = law_part(law_cycles.as_ref().and_then(|l| l.get(k)).map(|l| l.energy));
        legend.entries.push((
            Mark::None,
            format!(
                "cycle {}: {}{law} {eunit}",
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
    for (k, seg) in measured_open.iter().enumerate().take(2) {
        let law = law_part(law_open.as_ref().and_then(|l| l.get(k)).map(|l| l.work));
        legend.entries.push((
            Mark::None,
            format!(
                "open segment: work {}{law} {eunit}",
                sig(seg.work * escale, 3)
            ),
        ));
    }
    if !measured_open.is_empty() {
        legend.entries.push((
            Mark::None,
            "open: no return to its start x, so no cycle".into(),
        ));
    }
    let m = fonts.label as i32;
    legend.draw(&text, (m, m), false)
}

/// Bars of the energy per closed cycle: measured (blue) and law (black) side by side; the
/// value above each bar.
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
            "no closed cycle".to_string(),
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
    check_span(&y_desc, &y)?;
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
    house_mesh(&mut ch.configure_mesh(), fonts)
        .x_desc("cycle")
        .y_desc(y_desc)
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
    let sets_len = sets.len();
    let label = text_style(fonts.label.saturating_sub(2).max(10), &BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    for (cycles, color, shift) in sets {
        for (k, cy) in cycles.iter().enumerate() {
            let xc = (k + 1) as f64 + shift;
            let e = cy.energy * scale;
            let fill = color.filled();
            ch.draw_series(std::iter::once(Rectangle::new(
                [(xc, 0.0), (xc + width, e)],
                fill,
            )))
            .map_err(draw_err)?;
            // one value per bar while the labels fit side by side
            if n * sets_len <= 8 {
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
