//! The Cloth tab's drawing: the list, the live statistics or the lab test's gauge and
//! figures, the palette legend and the wireframe.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{self, Canvas};
use ratatui::widgets::{Gauge, ListItem, Paragraph, Widget, Wrap};

use super::{card_label, ClothEntry, ClothTabState, LabState};
use crate::tui::keymap::palette_key_label;
use crate::tui::message::{is_model, ClothFrame};
use crate::tui::series;
use crate::tui::widgets::{block, bounds, selection_list, Theme};

impl ClothTabState {
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
            Paragraph::new("running on a worker thread; Esc stops it")
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
