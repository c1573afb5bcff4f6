//! The Cloth tab: a fabric card's tests (hang, drape test, cantilever), the scenes and reduced
//! models found, the one loaded running on a worker (run, pause, step, palette impulses), its
//! live statistics or the lab test's figures, and an orthographic wireframe (coloured by the
//! exit radiance of a model's radiance transfer, when it holds one).

use std::path::PathBuf;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{self, Canvas};
use ratatui::widgets::{Gauge, ListItem, Paragraph, Widget, Wrap};

use super::Effects;
use crate::tui::keymap::palette_key_label;
use crate::tui::message::{
    is_model, Action, CardTest, ClothControl, ClothFrame, ClothSource, Job, LabReport, PaletteKey,
};
use crate::tui::series;
use crate::tui::widgets::{block, bounds, selection_list, Theme};

/// One row of the tab's list: a test of the card, or a scene or model file.
#[derive(Debug, Clone, PartialEq)]
pub enum ClothEntry {
    Card(CardTest),
    File(PathBuf),
}

/// A lab test of the card (drape test, cantilever): running (its progress) or done (its
/// figures, or why it failed).
#[derive(Debug, Clone, PartialEq)]
pub struct LabState {
    pub test: CardTest,
    /// 0..1 while running; None when done.
    pub progress: Option<f64>,
    pub lines: Vec<String>,
}

/// The card and the scenes and reduced models found, the one loaded, its last frame, the
/// model's palette (empty for a scene), the lab test and the view's angles.
#[derive(Debug, Clone, PartialEq)]
pub struct ClothTabState {
    /// Scenes (`*.toml`), then reduced models (`*.krd`).
    pub scenes: Vec<PathBuf>,
    /// The fabric card sent from the Fit tab or opened by path: its tests head the list.
    pub card: Option<PathBuf>,
    pub palette: Vec<PaletteKey>,
    /// Index into [`Self::entries`].
    pub selected: usize,
    /// The simulation loaded: a scene or model file, or the card (hanging).
    pub loaded: Option<PathBuf>,
    /// The card test loaded (hang) or run (drape, cantilever), if the last load was one.
    pub card_test: Option<CardTest>,
    pub lab: Option<LabState>,
    pub frame: Option<ClothFrame>,
    /// View rotation about the up axis and tilt \[rad\].
    pub yaw: f64,
    pub pitch: f64,
    /// Azimuth of the SH sky of a model's transfer shading about +y \[deg\], 0..360.
    pub sky_deg: i32,
}

impl Default for ClothTabState {
    fn default() -> Self {
        Self {
            scenes: Vec::new(),
            card: None,
            palette: Vec::new(),
            selected: 0,
            loaded: None,
            card_test: None,
            lab: None,
            frame: None,
            yaw: 0.0,
            pitch: 0.35,
            sky_deg: 0,
        }
    }
}

/// A card's name without its `.params.toml` / `.params.json`.
fn card_label(card: &std::path::Path) -> String {
    let name = card
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    [".params.toml", ".params.json", ".toml", ".json"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .map_or_else(|| name.clone(), str::to_string)
}

impl ClothTabState {
    /// The palette keys in force: those of a reduced model loaded, else none.
    pub(crate) fn live_palette(&self) -> &[PaletteKey] {
        if self.loaded.is_some() {
            &self.palette
        } else {
            &[]
        }
    }

    /// Handles the tab's actions: selection, load, run/pause, step, impulses, view.
    pub(crate) fn update(&mut self, action: &Action, fx: &mut Effects) {
        match *action {
            Action::Up | Action::Down => {
                let up = matches!(action, Action::Up);
                self.selected = super::ring_step(self.selected, self.entries().len(), up);
            }
            Action::ClothLoad => self.load(fx),
            Action::ClothRunPause => {
                if self.loaded.is_none() {
                    fx.status(if self.lab.as_ref().is_some_and(|l| l.progress.is_some()) {
                        "the lab test runs by itself: Enter on another row stops it"
                    } else {
                        "load a scene first (Enter)"
                    });
                } else {
                    let running = self.frame.as_ref().is_some_and(|f| f.running);
                    fx.job(Job::Cloth(if running {
                        ClothControl::Pause
                    } else {
                        ClothControl::Run
                    }));
                }
            }
            Action::ClothStep if self.loaded.is_some() => {
                fx.job(Job::Cloth(ClothControl::Step));
            }
            Action::ClothImpulse(k) => match self.palette.get(k) {
                Some(entry) => {
                    fx.status(format!("impulse: {}", entry.name));
                    fx.job(Job::Cloth(ClothControl::Impulse(k)));
                }
                None => fx.status("no reduced model playing: load a .krd first"),
            },
            Action::ClothSky(step_deg) => self.turn_sky(step_deg, fx),
            Action::Rotate(yaw, pitch) => {
                self.yaw = (self.yaw + yaw).rem_euclid(std::f64::consts::TAU);
                self.pitch = (self.pitch + pitch).clamp(-1.5, 1.5);
            }
            _ => {}
        }
    }

    /// Turns the sky of the model's transfer shading by `step_deg` about +y (the worker shades
    /// the next frames under it); says why not without a model or without a transfer.
    fn turn_sky(&mut self, step_deg: i32, fx: &mut Effects) {
        let reduced = self.frame.as_ref().and_then(|f| f.reduced.as_ref());
        match reduced.map(|r| r.shading.is_some()) {
            Some(true) if self.loaded.is_some() => {
                self.sky_deg = (self.sky_deg + step_deg).rem_euclid(360);
                fx.status(format!("sky turned to {} deg about +y", self.sky_deg));
                fx.job(Job::Cloth(ClothControl::SkyAzimuth(self.sky_deg)));
            }
            Some(false) if self.loaded.is_some() => {
                fx.status("this model holds no radiance transfer: precompute it with --transfer")
            }
            _ => fx.status("the sky lights a reduced model's transfer: load a .krd first"),
        }
    }

    /// The rows of the list: the card's tests (with a card), then the files found.
    pub fn entries(&self) -> Vec<ClothEntry> {
        let tests = self
            .card
            .iter()
            .flat_map(|_| CardTest::ALL.map(ClothEntry::Card));
        tests
            .chain(self.scenes.iter().cloned().map(ClothEntry::File))
            .collect()
    }

    /// Rows before the first file: the card's tests.
    fn card_rows(&self) -> usize {
        if self.card.is_some() {
            CardTest::ALL.len()
        } else {
            0
        }
    }

    /// Loads the selected row: a scene or model (paused), the card hanging (paused), or a lab
    /// test of the card (running; its figures come back when done).
    fn load(&mut self, fx: &mut Effects) {
        let entry = self.entries().get(self.selected).cloned();
        let source = match (entry, self.card.clone()) {
            (Some(ClothEntry::File(path)), _) => {
                fx.status(if is_model(&path) {
                    format!(
                        "loading model {} — Space plays, palette keys apply impulses",
                        path.display()
                    )
                } else {
                    format!("loaded {} — Space runs, n steps", path.display())
                });
                self.loaded = Some(path.clone());
                self.card_test = None;
                ClothSource::File(path)
            }
            (Some(ClothEntry::Card(test)), Some(card)) => {
                let label = card_label(&card);
                if test == CardTest::Hang {
                    fx.status(format!("{label} hanging — Space runs, n steps"));
                    self.loaded = Some(card.clone());
                } else {
                    fx.status(format!(
                        "{} of {label} running — its figures show when done",
                        test.title()
                    ));
                    self.loaded = None;
                    self.lab = Some(LabState {
                        test,
                        progress: Some(0.0),
                        lines: Vec::new(),
                    });
                }
                self.card_test = Some(test);
                ClothSource::Card { card, test }
            }
            _ => {
                fx.status(
                    "no scenes: start kestrel in the folder that holds scenes/, or open a card (o)",
                );
                return;
            }
        };
        self.frame = None;
        self.palette.clear();
        // a new worker starts under the default sky
        self.sky_deg = 0;
        fx.job(Job::ClothStart(source));
    }

    /// A fabric card to test (sent from the Fit tab or opened by path): its tests head the
    /// list, the first selected.
    pub(crate) fn set_card(&mut self, card: PathBuf, fx: &mut Effects) {
        fx.status(format!(
            "card {}: hang, drape test or cantilever — Enter runs the one selected",
            card_label(&card)
        ));
        // another card's figures are not this one's
        if self.card.as_ref() != Some(&card) {
            self.lab = None;
        }
        self.card = Some(card);
        self.selected = 0;
    }

    /// A lab test's progress (0..1).
    pub(crate) fn on_lab_progress(&mut self, fraction: f64) {
        if let Some(lab) = self.lab.as_mut().filter(|l| l.progress.is_some()) {
            lab.progress = Some(fraction.clamp(0.0, 1.0));
        }
    }

    /// A lab test ended: its figures and final mesh, or why it did not reach a result.
    pub(crate) fn on_lab_done(
        &mut self,
        outcome: Result<Box<LabReport>, String>,
        fx: &mut Effects,
    ) {
        let Some(lab) = self.lab.as_mut() else {
            return;
        };
        lab.progress = None;
        match outcome {
            Ok(report) => {
                fx.status(format!(
                    "{} done: {}",
                    lab.test.title(),
                    report.lines.first().cloned().unwrap_or_default()
                ));
                lab.lines = report.lines;
                self.frame = report.frame;
            }
            Err(why) => {
                fx.status(format!("error: {}: {why}", lab.test.title()));
                lab.lines = vec![format!("failed: {why}")];
            }
        }
    }

    /// The list found by the scan job; a scene or model loaded from elsewhere (named on the
    /// command line) stays in it, selected.
    pub(crate) fn on_scanned(&mut self, scenes: Vec<PathBuf>) {
        self.scenes = scenes;
        match self.loaded.clone() {
            Some(loaded) if self.card.as_ref() != Some(&loaded) => self.list_and_select(loaded),
            _ => self.selected = self.selected.min(self.entries().len().saturating_sub(1)),
        }
    }

    /// Lists `path` (a scene or a reduced model named on the command line), selects it and
    /// loads it.
    pub(crate) fn open(&mut self, path: PathBuf, fx: &mut Effects) {
        self.list_and_select(path);
        self.update(&Action::ClothLoad, fx);
    }

    /// Selects `path` in the list, appending it when it is not there.
    fn list_and_select(&mut self, path: PathBuf) {
        let at = match self.scenes.iter().position(|p| *p == path) {
            Some(i) => i,
            None => {
                self.scenes.push(path);
                self.scenes.len() - 1
            }
        };
        self.selected = self.card_rows() + at;
    }

    pub(crate) fn on_palette(&mut self, palette: Vec<PaletteKey>, fx: &mut Effects) {
        let names: Vec<&str> = palette.iter().map(|p| p.name.as_str()).collect();
        fx.status(format!(
            "model loaded — Space plays; impulses: {}",
            names.join(", ")
        ));
        self.palette = palette;
    }

    pub(crate) fn render(&self, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let [left, right] =
            Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(area);
        // the palette legend wraps inside the 32 columns of the left pane
        let legend_chars: usize = self
            .palette
            .iter()
            .map(|p| palette_key_label(p.key).chars().count() + p.name.chars().count() + 3)
            .sum();
        let legend_rows = if self.palette.is_empty() {
            0
        } else {
            2 + legend_chars.div_ceil(28).clamp(1, 6) as u16
        };
        let [list, stats, legend] = Layout::vertical([
            Constraint::Min(4),
            Constraint::Length(12),
            Constraint::Length(legend_rows),
        ])
        .areas(left);
        self.render_list(theme, list, buf);
        match &self.lab {
            Some(lab) if self.loaded.is_none() => render_lab(lab, theme, stats, buf),
            _ => {
                let lines: Vec<Line> = match &self.frame {
                    Some(f) if f.reduced.is_some() => reduced_lines(f),
                    Some(f) => simulation_lines(f),
                    None => vec![Line::from("no simulation: select a scene, Enter")],
                };
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .block(block("live"))
                    .render(stats, buf);
            }
        }
        if !self.palette.is_empty() {
            self.render_palette(theme, legend, buf);
        }
        let title = self
            .frame
            .as_ref()
            .map(|f| format!("{} (Left/Right turn, PgUp/PgDn tilt)", f.scene))
            .unwrap_or_else(|| "view".into());
        match &self.frame {
            Some(frame) => self.render_view(frame, &title, theme, right, buf),
            None => block(&title).render(right, buf),
        }
    }

    fn render_list(&self, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let entries = self.entries();
        let items: Vec<ListItem> = if entries.is_empty() {
            vec![ListItem::new("no scenes/ folder here")]
        } else {
            let card = self.card.as_deref().map(card_label).unwrap_or_default();
            entries
                .iter()
                .map(|e| {
                    let (name, loaded) = match e {
                        ClothEntry::Card(t) => {
                            (format!("{}: {card}", t.title()), self.card_test == Some(*t))
                        }
                        // scenes by their stem, models by their whole name
                        ClothEntry::File(p) => (
                            if is_model(p) {
                                p.file_name()
                            } else {
                                p.file_stem()
                            }
                            .map(|s| s.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                            self.card_test.is_none() && self.loaded.as_ref() == Some(p),
                        ),
                    };
                    let mark = if loaded { "* " } else { "  " };
                    ListItem::new(format!("{mark}{name}"))
                })
                .collect()
        };
        let title = if self.card.is_some() {
            "card tests, scenes, models (Enter)"
        } else {
            "scenes, models (Enter loads)"
        };
        selection_list(theme, title, items, Some(self.selected), area, buf);
    }

    fn render_palette(&self, theme: &Theme, area: Rect, buf: &mut Buffer) {
        let current = self
            .frame
            .as_ref()
            .and_then(|f| f.reduced.as_ref())
            .map(|r| r.entry);
        let spans: Vec<Span> = self
            .palette
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let text = format!("{} {}  ", palette_key_label(p.key), p.name);
                if current == Some(k) {
                    Span::styled(text, theme.selected())
                } else {
                    Span::raw(text)
                }
            })
            .collect();
        Paragraph::new(Line::from(spans))
            .block(block("palette (Alt+key when taken)"))
            .wrap(Wrap { trim: true })
            .render(area, buf);
    }

    /// The wireframe, with equal scales on both axes.
    fn render_view(
        &self,
        frame: &ClothFrame,
        title: &str,
        theme: &Theme,
        area: Rect,
        buf: &mut Buffer,
    ) {
        let points = series::project(frame, self.yaw, self.pitch);
        let (xb, yb) = bounds([points.as_slice()]);
        // a braille cell is 2 × 4 dots, about 1:2 in aspect
        let w = f64::from(area.width.saturating_sub(2).max(1));
        let h = f64::from(area.height.saturating_sub(2).max(1)) * 2.0;
        let (cx, cy) = (0.5 * (xb[0] + xb[1]), 0.5 * (yb[0] + yb[1]));
        let scale = ((xb[1] - xb[0]) / w).max((yb[1] - yb[0]) / h);
        let (hx, hy) = (0.5 * scale * w, 0.5 * scale * h);
        // the canvas maps a point through (v − lo)·dots/span: past about 1e300 m that
        // overflows and drawing a line to it never ends (a cloth that blew up)
        if !((1e6 * hx).is_finite() && (1e6 * hy).is_finite()) {
            Paragraph::new("not drawn: the positions span more than the view can scale")
                .block(block(title))
                .wrap(Wrap { trim: true })
                .render(area, buf);
            return;
        }
        let (nu, nv) = (frame.nu, frame.nv);
        let plain = if theme.mono {
            Color::Reset
        } else {
            Color::Cyan
        };
        // a segment takes the mean of its ends' radiance, when the frame is shaded
        let shade = frame
            .reduced
            .as_ref()
            .and_then(|r| r.shading.as_ref())
            .map(|s| s.colours.as_slice())
            .filter(|c| !theme.mono && c.len() == nu * nv);
        let color = |a: usize, b: usize| match shade {
            Some(c) => {
                let (p, q) = (c[a], c[b]);
                let mean = |k: usize| ((u16::from(p[k]) + u16::from(q[k])) / 2) as u8;
                Color::Rgb(mean(0), mean(1), mean(2))
            }
            None => plain,
        };
        Canvas::default()
            .block(block(title))
            .marker(Marker::Braille)
            .x_bounds([cx - hx, cx + hx])
            .y_bounds([cy - hy, cy + hy])
            .paint(|ctx| {
                // a particle outside the specimen (a lab test's mesh) is not finite: not drawn
                let at = |i: usize, j: usize| {
                    points
                        .get(j * nu + i)
                        .copied()
                        .filter(|p| p.0.is_finite() && p.1.is_finite())
                };
                for i in 0..nu {
                    for j in 0..nv {
                        let Some((x1, y1)) = at(i, j) else { continue };
                        for (di, dj) in [(1, 0), (0, 1)] {
                            if let Some((x2, y2)) =
                                at(i + di, j + dj).filter(|_| i + di < nu && j + dj < nv)
                            {
                                ctx.draw(&canvas::Line {
                                    x1,
                                    y1,
                                    x2,
                                    y2,
                                    color: color(j * nu + i, (j + dj) * nu + i + di),
                                });
                            }
                        }
                    }
                }
            })
            .render(area, buf);
    }
}

/// A lab test: its progress while it runs, then its figures.
fn render_lab(lab: &LabState, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let title = lab.test.title();
    match lab.progress {
        Some(fraction) => {
            let [gauge, note] =
                Layout::vertical([Constraint::Length(3), Constraint::Min(1)]).areas(area);
            let color = if theme.mono {
                Color::Reset
            } else {
                Color::Green
            };
            Gauge::default()
                .block(block(&title))
                .gauge_style(color)
                .ratio(fraction.clamp(0.0, 1.0))
                .label(format!("{:.0} %", 100.0 * fraction))
                .render(gauge, buf);
            Paragraph::new("running on a worker thread; Enter on another row stops it")
                .wrap(Wrap { trim: false })
                .render(note, buf);
        }
        None => {
            let lines: Vec<Line> = lab.lines.iter().map(|l| Line::from(l.clone())).collect();
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block(&title))
                .render(area, buf);
        }
    }
}

/// Statistics of a full simulation.
fn simulation_lines(f: &ClothFrame) -> Vec<Line<'static>> {
    vec![
        Line::from(if f.running {
            "running (Space pauses)"
        } else {
            "paused (Space runs, n steps)"
        }),
        Line::from(format!("step {}  t = {:.3} s", f.steps, f.time_s)),
        Line::from(format!("{:.2} ms per step", f.ms_per_step)),
        Line::from(format!(
            "max rate structural {:.2} %",
            100.0 * f.rate_structural
        )),
        Line::from(format!("max rate shear      {:.2} %", 100.0 * f.rate_shear)),
        Line::from(format!("kinetic {:.4e} J", f.kinetic_j)),
        Line::from(format!("elastic {:.4e} J", f.elastic_j)),
        Line::from(format!("{} x {} particles", f.nu, f.nv)),
    ]
}

/// Statistics of a reduced model's playback.
fn reduced_lines(f: &ClothFrame) -> Vec<Line<'static>> {
    let Some(r) = &f.reduced else {
        return Vec::new();
    };
    vec![
        Line::from(if f.running {
            "playing (Space pauses)"
        } else {
            "paused (Space plays, n one frame)"
        }),
        Line::from(format!("frame {}  t = {:.3} s", f.steps, f.time_s)),
        Line::from(format!("rank {}  {:.0} frames/s", r.rank, r.frames_per_s)),
        Line::from(format!("({:.3} ms per reconstruction)", f.ms_per_step)),
        Line::from(format!("entry: {}", r.entry_name)),
        Line::from(match r.door_deg {
            Some(d) => format!("door {d:.1} deg"),
            None => "no door".into(),
        }),
        Line::from(format!("jumps {}  refused {}", r.jumps, r.ignored)),
        Line::from(format!("{} x {} vertices (reduced)", f.nu, f.nv)),
        Line::from(match &r.shading {
            Some(s) => format!("transfer r_a {}  sky {} deg", s.rank, s.sky_deg),
            None => "no radiance transfer".into(),
        }),
    ]
}
