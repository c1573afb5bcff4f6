//! The Export tab's PNGs, drawn by the plot module from a copy of what the tabs show.

use std::path::Path;

use super::app::{App, ExportKind};
use super::series;
use crate::kes::{Curve, Direction};
use crate::material::{ConnectorLaw, MaterialLaw};
use crate::plot::{self, CurvePlot, HysteresisPlot, Overlay, PlotError, PlotSize};

/// A curve with its overlay and legend, owned so a worker can draw it.
#[derive(Debug, Clone)]
pub struct PlotItem {
    pub curve: Curve,
    pub overlay: Option<Overlay>,
    pub legend: Vec<String>,
}

/// Everything one export needs, copied from the app.
#[derive(Debug, Clone)]
pub enum ExportRequest {
    Curve(PlotItem),
    Sheet { title: String, items: Vec<PlotItem> },
    Hysteresis { item: PlotItem, law: ConnectorLaw },
    Nothing(String),
}

fn item(app: &App, index: usize) -> Option<PlotItem> {
    let c = app.curves.get(index)?;
    let mut legend: Vec<String> = c.values.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let overlay = match &c.fit {
        Some(f) if f.is_fitted() => {
            legend.push(format!("fit {}: NRMSE {:.2} %", f.model, 100.0 * f.nrmse));
            f.forces(&c.curve.x).map(|y| Overlay {
                label: format!("fit ({})", f.model),
                y,
            })
        }
        _ => {
            let law = app.connector.laws[super::app::ConnectorState::law_index_for(c.curve.test)];
            (series::test_of_law(&law) == c.curve.test).then(|| Overlay {
                label: format!("{} law (Connector tab)", law.name()),
                y: law.drive(&c.curve.x),
            })
        }
    };
    Some(PlotItem {
        curve: c.curve.clone(),
        overlay,
        legend,
    })
}

impl ExportRequest {
    pub fn from_app(app: &App, kind: ExportKind) -> Self {
        match kind {
            ExportKind::CurrentView => match item(app, app.selected) {
                Some(i) => ExportRequest::Curve(i),
                None => ExportRequest::Nothing("no curve selected".into()),
            },
            ExportKind::FabricSheet => {
                let members = app.fabric_members();
                let items: Vec<PlotItem> = members
                    .iter()
                    .filter(|&&i| app.curves[i].curve.direction != Direction::Bias)
                    .filter_map(|&i| item(app, i))
                    .collect();
                let title = app
                    .selected_curve()
                    .map(|c| c.curve.fabric.clone())
                    .unwrap_or_default();
                if items.is_empty() {
                    ExportRequest::Nothing("no curves in this fabric".into())
                } else {
                    ExportRequest::Sheet { title, items }
                }
            }
            ExportKind::Hysteresis => {
                let law = *app.connector.current();
                let test = series::test_of_law(&law);
                let amplitude = series::kes_amplitude_si(test) * app.hysteresis.amplitude;
                let x = app.hysteresis.path.samples(
                    amplitude,
                    200,
                    test == crate::kes::KesTest::Tensile,
                );
                let y = law.drive(&x);
                let curve = Curve {
                    fabric: format!("{} law", law.name()),
                    test,
                    direction: Direction::Warp,
                    x,
                    y,
                    metadata: Default::default(),
                    source: None,
                };
                ExportRequest::Hysteresis {
                    item: PlotItem {
                        curve,
                        overlay: None,
                        legend: vec![format!("path: {}", app.hysteresis.path.name())],
                    },
                    law,
                }
            }
            ExportKind::ClothFrame | ExportKind::ClothSequence => {
                ExportRequest::Nothing("cloth frames are rendered by the simulation thread".into())
            }
        }
    }
}

fn curve_plot(i: &PlotItem) -> CurvePlot<'_> {
    CurvePlot {
        curve: &i.curve,
        model: i.overlay.as_ref(),
        legend: &i.legend,
    }
}

/// Draws and writes the PNG (atomically; an existing file only with `force`).
pub fn write(request: &ExportRequest, path: &Path, force: bool) -> Result<(), PlotError> {
    if !force && path.exists() {
        return Err(PlotError::Write(crate::atomic::WriteError::Exists {
            path: path.to_path_buf(),
        }));
    }
    let bytes = match request {
        ExportRequest::Curve(i) => plot::curve_png(&curve_plot(i), PlotSize::SINGLE)?,
        ExportRequest::Sheet { title, items } => {
            let plots: Vec<CurvePlot> = items.iter().map(curve_plot).collect();
            plot::sheet_png(title, &plots, PlotSize::SHEET)?
        }
        ExportRequest::Hysteresis { item, law } => plot::hysteresis_png(
            &HysteresisPlot {
                curve: &item.curve,
                law: Some(law),
                offset: 0.0,
                legend: &item.legend,
            },
            PlotSize::SINGLE,
        )?,
        ExportRequest::Nothing(why) => return Err(PlotError::Sheet(why.clone())),
    };
    plot::write_png(path, &bytes, force)
}
