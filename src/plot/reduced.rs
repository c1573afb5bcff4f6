//! Relative l₂ error of the rank-r snapshot approximation against r (James & Fatahalian
//! fig. 12): σ_{r+1}/σ₁ (spectral) and ‖A − A_r‖_F/‖A‖_F, log scale.

use plotters::prelude::*;

use plotters::coord::ranged1d::AsRangedCoord;
use plotters::coord::types::RangedCoordi64;

use super::canvas::{draw_err, render, title};
use super::page::Page;
use super::style::{rgb, FAMILY, LOADING_RGB, UNLOADING_RGB};
use super::{ImageFormat, PlotError, PlotSize};
use crate::reduced::{frobenius_error, relative_error};

/// The error-against-rank plot of singular values `sigma` (decreasing), marking the rank kept
/// and the tolerance ε.
pub fn error_vs_rank_image(
    name: &str,
    sigma: &[f64],
    rank: usize,
    epsilon: f64,
    size: PlotSize,
    format: ImageFormat,
) -> Result<Vec<u8>, PlotError> {
    let s1 = sigma.first().copied().unwrap_or(0.0);
    if sigma.len() < 2 || s1 <= 0.0 {
        return Err(PlotError::Empty("error vs rank".into()));
    }
    let max_r = (sigma.len() - 1).min((rank * 3).max(40));
    let floor = 1e-5;
    // Ranks are integers: an integer axis labels them "10", never "10.0".
    let rank_of = |r: usize| r as i64;
    let spectral: Vec<(i64, f64)> = (0..=max_r)
        .map(|r| (rank_of(r), relative_error(sigma, r).max(floor)))
        .collect();
    let frob: Vec<(i64, f64)> = (0..=max_r)
        .map(|r| (rank_of(r), frobenius_error(sigma, r).max(floor)))
        .collect();
    rank_plot(name, (max_r, floor), "rank r", size, format, |chart| {
        let blue = rgb(LOADING_RGB);
        let red = rgb(UNLOADING_RGB);
        draw_line(chart, spectral, blue, 2, "spectral  σ(r+1)/σ₁")?;
        draw_line(chart, frob, red, 2, "Frobenius  ‖A − A_r‖/‖A‖")?;
        let grey = RGBColor(90, 90, 90);
        let eps_line = vec![(0, epsilon), (rank_of(max_r), epsilon)];
        draw_line(chart, eps_line, grey, 1, format!("ε = {epsilon}"))?;
        let rank_line = vec![(rank_of(rank), floor), (rank_of(rank), 1.5)];
        draw_line(chart, rank_line, grey, 1, format!("r = {rank} kept"))
    })
}

/// Fig. 12 with the appearance model: σ_{r+1}/σ₁ of the displacement snapshots (`sigma_u`)
/// and of the transfer matrix (`sigma_a`) against rank, with the held-out interpolation error
/// ‖T − T̃_r‖/‖T‖ at each transfer rank r (`held_out`, r = 0, 1, …); the ranks kept are marked.
pub fn transfer_error_vs_rank_image(
    name: &str,
    (sigma_u, rank_u): (&[f64], usize),
    (sigma_a, rank_a): (&[f64], usize),
    held_out: &[f64],
    size: PlotSize,
    format: ImageFormat,
) -> Result<Vec<u8>, PlotError> {
    if sigma_u.len() < 2 || sigma_a.len() < 2 || sigma_u[0] <= 0.0 || sigma_a[0] <= 0.0 {
        return Err(PlotError::Empty("error vs rank".into()));
    }
    let max_r = (sigma_u.len() - 1).min(sigma_a.len().max(rank_u * 3).max(40));
    let floor = 1e-4;
    let curve = |sigma: &[f64]| -> Vec<(i64, f64)> {
        (0..sigma.len().min(max_r + 1))
            .map(|r| (r as i64, relative_error(sigma, r).max(floor)))
            .collect()
    };
    let held: Vec<(i64, f64)> = held_out
        .iter()
        .enumerate()
        .take(max_r + 1)
        .map(|(r, &e)| (r as i64, e.max(floor)))
        .collect();
    let blue = rgb(LOADING_RGB);
    let red = rgb(UNLOADING_RGB);
    let green = RGBColor(40, 140, 60);
    let series = [
        (
            curve(sigma_u),
            blue,
            format!("displacement σ(r+1)/σ₁ (r_u = {rank_u})"),
        ),
        (
            curve(sigma_a),
            red,
            format!("transfer σ(r+1)/σ₁ (r_a = {rank_a})"),
        ),
        (
            held,
            green,
            "transfer, held-out states ‖T − T̃‖/‖T‖".to_string(),
        ),
    ];
    let ranks = "rank r_u, r_a";
    rank_plot(name, (max_r, floor), ranks, size, format, |chart| {
        for (points, color, label) in series {
            draw_line(chart, points.clone(), color, 2, label)?;
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(draw_err)?;
        }
        Ok(())
    })
}

/// One measured playback: the model's precompute time \[s\], its relative l₂ error against the
/// full simulation (`compare.playback_error`), and the offset rule it was played with.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaybackErrorPoint {
    /// The offset rule (`exponential`, `linear`, `flow`).
    pub rule: String,
    /// The model's precompute time \[s\].
    pub precompute_s: f64,
    /// Relative l₂ error of the playback against the full simulation (a fraction).
    pub error: f64,
}

/// Playback error against precompute time, one colour per offset rule (up to 8, in order of first
/// appearance), with the `target` error as a line.
pub fn playback_error_vs_precompute_image(
    name: &str,
    points: &[PlaybackErrorPoint],
    target: f64,
    size: PlotSize,
    format: ImageFormat,
) -> Result<Vec<u8>, PlotError> {
    let finite = |p: &&PlaybackErrorPoint| {
        p.precompute_s.is_finite() && p.precompute_s > 0.0 && p.error.is_finite()
    };
    let points: Vec<&PlaybackErrorPoint> = points.iter().filter(finite).collect();
    if points.is_empty() {
        return Err(PlotError::Empty("playback error vs precompute time".into()));
    }
    let mut rules: Vec<&str> = Vec::new();
    for p in &points {
        if !rules.contains(&p.rule.as_str()) {
            rules.push(&p.rule);
        }
    }
    let t_max = points.iter().map(|p| p.precompute_s).fold(0.0, f64::max) * 1.15;
    let e_max = points
        .iter()
        .map(|p| p.error)
        .fold(target, f64::max)
        .max(0.0)
        * 1.15;
    let palette = [
        rgb(LOADING_RGB),
        rgb(UNLOADING_RGB),
        RGBColor(40, 140, 60),
        RGBColor(120, 60, 160),
        RGBColor(200, 160, 0),
        RGBColor(0, 170, 190),
        RGBColor(200, 60, 120),
        RGBColor(90, 90, 90),
    ];
    let heading = format!("Playback error against precompute time: {name}");
    let axes = (0.0..t_max, 0.0..100.0 * e_max);
    chart_page(&heading, axes, size, format, |chart| {
        chart
            .configure_mesh()
            .x_desc("precompute time [s]")
            .y_desc("relative l₂ error vs full simulation [%]")
            .label_style((FAMILY, 16))
            .draw()
            .map_err(draw_err)?;
        for (k, rule) in rules.iter().enumerate() {
            let color = palette[k % palette.len()];
            let mine: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.rule == *rule)
                .map(|p| (p.precompute_s, 100.0 * p.error))
                .collect();
            chart
                .draw_series(mine.iter().map(|&p| Circle::new(p, 5, color.filled())))
                .map_err(draw_err)?
                .label(rule.to_string())
                .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
        }
        let grey = RGBColor(90, 90, 90);
        let target_line = vec![(0.0, 100.0 * target), (t_max, 100.0 * target)];
        let label = format!("target {:.0} %", 100.0 * target);
        draw_line(chart, target_line, grey, 1, label)
    })
}

/// A chart of these plots, on a page's area.
type Chart<'a, 'b, X, Y> = ChartContext<'b, Page<'a>, Cartesian2d<X, Y>>;

/// A page of these plots: `heading` over one chart with axes `x`, `y` (20 px margin, label
/// areas for the axis titles); `draw` draws the mesh and the series, then their legend is
/// boxed.
fn chart_page<X: AsRangedCoord, Y: AsRangedCoord>(
    heading: &str,
    (x, y): (X, Y),
    size: PlotSize,
    format: ImageFormat,
    draw: impl FnOnce(&mut Chart<'_, '_, X::CoordDescType, Y::CoordDescType>) -> Result<(), PlotError>,
) -> Result<Vec<u8>, PlotError> {
    render(size, format, |root| {
        let area = title(root, heading, size)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(x, y)
            .map_err(draw_err)?;
        draw(&mut chart)?;
        draw_legend(&mut chart)
    })
}

/// The chart of an error-against-rank plot: ranks as integers (labelled "10", never "10.0"),
/// the relative error on a log axis labelled in powers of ten.
type RankChart<'a, 'b> = Chart<'a, 'b, RangedCoordi64, LogCoord<f64>>;

/// An error-against-rank plot of `name`: ranks 0 ..= `max_r` under `x_desc`, the relative
/// error from `floor` to 1.5; `draw` adds the series, then their legend is boxed.
fn rank_plot(
    name: &str,
    (max_r, floor): (usize, f64),
    x_desc: &str,
    size: PlotSize,
    format: ImageFormat,
    draw: impl FnOnce(&mut RankChart<'_, '_>) -> Result<(), PlotError>,
) -> Result<Vec<u8>, PlotError> {
    let heading = format!("Relative l₂ error against rank: {name}");
    let axes = (0..max_r as i64, (floor..1.5f64).log_scale());
    chart_page(&heading, axes, size, format, |chart| {
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("relative error")
            .label_style((FAMILY, 16))
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .draw()
            .map_err(draw_err)?;
        draw(chart)
    })
}

/// A polyline through `points` in `color`, `width` px wide, with its legend entry `label`.
fn draw_line<X: Ranged, Y: Ranged>(
    chart: &mut Chart<'_, '_, X, Y>,
    points: Vec<(X::ValueType, Y::ValueType)>,
    color: RGBColor,
    width: u32,
    label: impl Into<String>,
) -> Result<(), PlotError>
where
    X::ValueType: Clone + 'static,
    Y::ValueType: Clone + 'static,
{
    chart
        .draw_series(LineSeries::new(points, color.stroke_width(width)))
        .map_err(draw_err)?
        .label(label)
        .legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(width))
        });
    Ok(())
}

/// The series' legend, boxed in the upper right corner.
fn draw_legend<'b, 'a: 'b, X: Ranged, Y: Ranged>(
    chart: &mut Chart<'a, 'b, X, Y>,
) -> Result<(), PlotError> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FAMILY, 16))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(draw_err)
}
