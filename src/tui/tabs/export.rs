//! The Export tab: PNGs of what the tabs show (curve with overlay, fabric sheet, hysteresis
//! view) plotted on a worker, and cloth frames rendered by the simulation thread, with a gauge.

use std::path::{Path, PathBuf};

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::Line;
use ratatui::widgets::{Gauge, ListItem, Paragraph, Widget};

use super::connector::ConnectorState;
use super::curves::CurvesState;
use super::hysteresis::HysteresisState;
use super::Effects;
use crate::kes::{Curve, Direction, KesTest};
use crate::material::MaterialLaw;
use crate::plot::Overlay;
use crate::tui::message::{Action, ExportKind, ExportRequest, Job, PlotItem};
use crate::tui::prompt::PromptPurpose;
use crate::tui::series;
use crate::tui::widgets::{block, selection_list, Theme};

/// The export chosen, the last file written and a cloth render under way.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExportState {
    pub selected: usize,
    pub last_written: Option<PathBuf>,
    /// A cloth render under way: frames done and in all.
    pub rendering: Option<(usize, usize)>,
    /// The graphics adapter of the last cloth render.
    pub adapter: Option<String>,
}

/// What the export tabs show, read to build a request.
pub(crate) struct Sources<'a> {
    pub curves: &'a CurvesState,
    pub connector: &'a ConnectorState,
    pub hysteresis: &'a HysteresisState,
}

fn item(src: &Sources, index: usize) -> Option<PlotItem> {
    let c = src.curves.list.get(index)?;
    let mut legend: Vec<String> = c.values.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let overlay = match &c.fit {
        Some(f) if f.is_fitted() => {
            legend.push(format!("fit {}: NRMSE {:.2} %", f.model, 100.0 * f.nrmse));
            f.forces(&c.curve.x).map(|y| Overlay {
                label: format!("fit ({})", f.model),
                y,
            })
        }
        // Only a law fitted to this curve (its test and direction) is drawn over it.
        _ => None,
    };
    Some(PlotItem {
        curve: c.curve.clone(),
        overlay,
        legend,
    })
}

/// Everything a plotted export of `kind` needs, copied now.
pub(crate) fn request(src: &Sources, kind: ExportKind) -> ExportRequest {
    match kind {
        ExportKind::CurrentView => match item(src, src.curves.selected) {
            Some(i) => ExportRequest::Curve(i),
            None => ExportRequest::Nothing("no curve selected".into()),
        },
        ExportKind::FabricSheet => {
            let items: Vec<PlotItem> = src
                .curves
                .fabric_members()
                .iter()
                .filter(|&&i| src.curves.list[i].curve.direction != Direction::Bias)
                // the sheet's cells are tensile, shear, bending
                .filter(|&&i| src.curves.list[i].curve.test.has_connector_law())
                .filter_map(|&i| item(src, i))
                .collect();
            let title = src
                .curves
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
            let law = *src.connector.current();
            let test = series::test_of_law(&law);
            let amplitude = series::kes_amplitude_si(test) * src.hysteresis.amplitude;
            let x = src
                .hysteresis
                .path
                .samples(amplitude, 200, test == KesTest::Tensile);
            let y = law.drive(&x);
            let curve = Curve {
                fabric: String::new(),
                test,
                direction: Direction::Warp,
                x,
                y,
                metadata: Default::default(),
                source: None,
                sha256: None,
            };
            ExportRequest::Hysteresis {
                item: PlotItem {
                    curve,
                    overlay: None,
                    legend: vec![
                        format!("{} law, {}", law.name(), law.friction().shape.name()),
                        format!("path: {}", src.hysteresis.path.name()),
                    ],
                },
                law,
            }
        }
        ExportKind::ClothFrame | ExportKind::ClothSequence => {
            ExportRequest::Nothing("cloth frames are rendered by the simulation thread".into())
        }
    }
}

/// The job that writes an export of `kind` to `path`.
pub(crate) fn export_job(src: &Sources, kind: ExportKind, path: PathBuf, force: bool) -> Job {
    Job::ExportPng {
        kind,
        path,
        force,
        request: Box::new(request(src, kind)),
        inputs: src.curves.inputs(),
    }
}

/// The file-name slug of what an export of `kind` shows: the curve (fabric, test,
/// direction), the fabric, the law's test, or the scene.
fn subject(src: &Sources, kind: ExportKind, cloth: Option<&Path>) -> String {
    use crate::fit::fabric::fabric_slug;
    let curve = src.curves.selected_curve().map(|c| &c.curve);
    let fabric = |c: &Curve| {
        let name = if c.fabric.is_empty() {
            c.source_name()
        } else {
            c.fabric.clone()
        };
        fabric_slug(&name)
    };
    match kind {
        ExportKind::CurrentView => curve
            .map(|c| format!("{}-{}-{}", fabric(c), c.test, c.direction))
            .unwrap_or_else(|| "curve".into()),
        ExportKind::FabricSheet => curve.map(fabric).unwrap_or_else(|| "fabric".into()),
        ExportKind::Hysteresis => series::test_of_law(src.connector.current()).to_string(),
        ExportKind::ClothFrame | ExportKind::ClothSequence => cloth
            .and_then(|p| p.file_stem())
            .map(|s| fabric_slug(&s.to_string_lossy()))
            .unwrap_or_else(|| "cloth".into()),
    }
}

impl ExportState {
    /// Handles the tab's actions: the selection, and Export (asks for a path, offering one
    /// named after what is shown, relative to the folder kestrel was started in).
    pub(crate) fn update(
        &mut self,
        action: &Action,
        src: &Sources,
        cloth: Option<&Path>,
        fx: &mut Effects,
    ) {
        let cloth_loaded = cloth.is_some();
        match action {
            Action::Up | Action::Down => {
                let up = matches!(action, Action::Up);
                self.selected = super::ring_step(self.selected, ExportKind::ALL.len(), up);
            }
            Action::Export => {
                let kind = ExportKind::ALL[self.selected.min(ExportKind::ALL.len() - 1)];
                if kind.is_cloth() && !cloth_loaded {
                    fx.status("no simulation: load a scene in the Cloth tab first");
                } else if kind.is_cloth() && self.rendering.is_some() {
                    fx.status("a render is already running");
                } else {
                    let label = match kind {
                        ExportKind::ClothSequence => "write frames to folder (created if missing):",
                        ExportKind::ClothFrame => "write PNG to (folders created if missing):",
                        _ => "write .png or .svg to (folders created if missing):",
                    };
                    fx.prompt(
                        PromptPurpose::ExportPng(kind),
                        label,
                        kind.default_name(&subject(src, kind, cloth)),
                    );
                }
            }
            _ => {}
        }
    }

    /// Starts the export of `kind` to `path` (forced after a yes to overwrite).
    pub(crate) fn start(
        &mut self,
        src: &Sources,
        kind: ExportKind,
        path: PathBuf,
        force: bool,
    ) -> Job {
        if kind.is_cloth() {
            self.rendering = Some((0, kind.frames()));
        }
        export_job(src, kind, path, force)
    }

    /// A file was written; true when it is a parameter set rather than an export.
    pub(crate) fn on_written(&mut self, path: &Path) -> bool {
        self.rendering = None;
        let params = path.extension().is_some_and(|e| e == "toml" || e == "json");
        if !params {
            self.last_written = Some(path.to_path_buf());
        }
        params
    }

    pub(crate) fn on_progress(&mut self, done: usize, total: usize, adapter: String) {
        self.rendering = Some((done, total));
        self.adapter = Some(adapter);
    }

    pub(crate) fn render(
        &self,
        cloth_loaded: Option<&Path>,
        theme: &Theme,
        area: Rect,
        buf: &mut Buffer,
    ) {
        let [list, gauge, info] = Layout::vertical([
            Constraint::Length(ExportKind::ALL.len() as u16 + 2),
            Constraint::Length(3),
            Constraint::Min(3),
        ])
        .areas(area);
        let items: Vec<ListItem> = ExportKind::ALL
            .iter()
            .map(|k| ListItem::new(k.title()))
            .collect();
        selection_list(
            theme,
            "export PNG or SVG (Enter asks for a path)",
            items,
            Some(self.selected),
            list,
            buf,
        );
        let (ratio, label) = match self.rendering {
            Some((done, total)) => (
                done as f64 / total.max(1) as f64,
                format!("frame {done} of {total}"),
            ),
            None => (0.0, "idle".to_string()),
        };
        Gauge::default()
            .block(block("render"))
            .gauge_style(theme.fg(Color::Green))
            .ratio(ratio.clamp(0.0, 1.0))
            .label(label)
            .render(gauge, buf);
        let mut lines = vec![Line::from(match &self.last_written {
            Some(p) => format!("last written: {}", p.display()),
            None => "nothing written yet".into(),
        })];
        lines.push(Line::from(match cloth_loaded {
            Some(p) => format!("cloth frames: {} (Cloth tab)", p.display()),
            None => "cloth frames: load a scene in the Cloth tab first".into(),
        }));
        if let Some(a) = &self.adapter {
            lines.push(Line::from(format!("adapter: {a}")));
        }
        Paragraph::new(lines)
            .block(block("output"))
            .render(info, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::files::sample_curves;

    /// The Connector tab's law is no curve's fit: an unfitted curve is drawn alone.
    #[test]
    fn a_sheet_overlays_only_the_curves_own_fits() {
        let curves = CurvesState::new(sample_curves().0);
        let src = Sources {
            curves: &curves,
            connector: &ConnectorState::default(),
            hysteresis: &HysteresisState::default(),
        };
        let ExportRequest::Sheet { items, .. } = request(&src, ExportKind::FabricSheet) else {
            panic!("a sheet request");
        };
        assert!(!items.is_empty());
        assert!(items.iter().all(|i| i.overlay.is_none()));
    }
}
