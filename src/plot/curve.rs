//! A curve panel (measured branches loading/unloading, the model dashed, residuals, legend
//! box) and a sheet's empty cell, in KES units.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::{draw_err, text_style, Area, Fonts};
use super::chart::{
    bounds, chart, draw_branches, draw_dashed, draw_zero_line, make_room, padded, ChartFrame,
    Legend, Mark,
};
use super::style::{rgb, KesAxes, GRID, LOADING_RGB, MODEL_RGB, NOTE, UNLOADING_RGB};
use super::{CurvePlot, PlotError};

/// One curve panel: the measured branches, the model dashed, the legend box upper left and,
/// with a model, the residual panel under it.
pub(super) fn curve_panel(
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
    let flags = c.test.loading_flags(&c.x);
    let (loading, unloading) = c.test.branch_names();

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
            (Mark::Line(rgb(LOADING_RGB)), loading.to_string()),
            (Mark::Line(rgb(UNLOADING_RGB)), unloading.to_string()),
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
pub(super) fn empty_panel(area: &Area<'_>, caption: &str, fonts: Fonts) -> Result<(), PlotError> {
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
