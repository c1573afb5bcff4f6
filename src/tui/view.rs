//! Drawing: `impl Widget for &App` lays out the tab bar, the tab shown (each tab draws
//! itself), the status line and the help popup. Drawing never changes the state.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Tabs, Widget, Wrap};

use super::app::App;
use super::keymap::help_lines;
use super::message::Tab;
use super::prompt::Confirm;
use super::widgets::{block, Theme};

impl Widget for &App {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = Theme {
            mono: self.monochrome,
        };
        let [top, main, status, hint] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(5),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(area);
        let titles: Vec<Line> = Tab::ALL
            .iter()
            .enumerate()
            .map(|(i, t)| Line::from(format!("{} {}", i + 1, t.title())))
            .collect();
        Tabs::new(titles)
            .select(self.tab.index())
            .highlight_style(theme.selected())
            .divider("|")
            .render(top, buf);
        match self.tab {
            Tab::Curves => self.curves.render(&theme, main, buf),
            Tab::Connector => self.connector.render(&self.curves, &theme, main, buf),
            Tab::Hysteresis => self.hysteresis.render(&self.connector, &theme, main, buf),
            Tab::Fit => self.fit.render(&self.curves, &theme, main, buf),
            Tab::Cloth => self.cloth.render(&theme, main, buf),
            Tab::Export => self
                .export
                .render(self.cloth.loaded.as_deref(), &theme, main, buf),
        }
        let status_text = match (&self.prompt, &self.confirm) {
            (Some(p), _) => prompt_line(&p.label, &p.text, status.width),
            (None, Some(Confirm::Quit)) => "unsaved fits will be lost: quit? (y/n)".into(),
            (None, Some(Confirm::Overwrite(_) | Confirm::SaveFirst)) => format!("{} ", self.status),
            _ => self.status.clone(),
        };
        Paragraph::new(status_text)
            .style(theme.fg(Color::Yellow))
            .render(status, buf);
        Paragraph::new("? help  e messages  Tab next tab  o open  q quit")
            .style(theme.fg(Color::DarkGray))
            .render(hint, buf);
        if self.help {
            draw_help(self.tab, self.help_scroll, &theme, main, buf);
        } else if self.log_open {
            draw_log(&self.log, self.log_scroll, &theme, main, buf);
        } else if let Some(p) = self.prompt.as_ref() {
            if !p.candidates.is_empty() {
                draw_candidates(&p.candidates, None, main, buf);
            } else if !p.notes.is_empty() {
                draw_candidates(&p.notes, Some("what it writes"), main, buf);
            }
        }
    }
}

/// The prompt's line: its label and the text typed with a cursor; where that is wider than
/// `width` columns, its end (the text typed is always seen), the start cut to `…`.
fn prompt_line(label: &str, text: &str, width: u16) -> String {
    let line = format!("{label} {text}_");
    let n = line.chars().count();
    let width = usize::from(width.max(2));
    if n <= width {
        line
    } else {
        let tail: String = line.chars().skip(n + 1 - width).collect();
        format!("…{tail}")
    }
}

/// The entries a Tab in the prompt matched (or, with a `title`, the prompt's notes), in a box
/// at the bottom of `area`, just above the prompt: as many rows as they need, at most half
/// the area (the rest counted).
fn draw_candidates(candidates: &[String], title: Option<&str>, area: Rect, buf: &mut Buffer) {
    let inner = area.width.saturating_sub(2).max(1) as usize;
    let max_rows = (area.height / 2).saturating_sub(2).max(1) as usize;
    let mut rows: Vec<String> = vec![String::new()];
    let mut shown = 0;
    for c in candidates {
        let last = rows.last_mut().map_or(0, |r| r.chars().count());
        let width = c.chars().count();
        if last > 0 && last + 2 + width > inner {
            if rows.len() == max_rows {
                break;
            }
            rows.push(String::new());
        }
        if let Some(r) = rows.last_mut() {
            if !r.is_empty() {
                r.push_str("  ");
            }
            r.push_str(c);
        }
        shown += 1;
    }
    let title = if let Some(t) = title {
        if shown < candidates.len() {
            format!("{t} ({} more not shown)", candidates.len() - shown)
        } else {
            t.to_string()
        }
    } else if shown < candidates.len() {
        format!(
            "{} matches, {} more not shown: type more",
            candidates.len(),
            candidates.len() - shown
        )
    } else {
        format!("{} matches: type more, Tab completes", candidates.len())
    };
    let h = (rows.len() as u16 + 2).min(area.height);
    let r = Rect {
        x: area.x,
        y: area.y + area.height - h,
        width: area.width,
        height: h,
    };
    Clear.render(r, buf);
    let lines: Vec<Line> = rows.into_iter().map(Line::from).collect();
    Paragraph::new(lines).block(block(&title)).render(r, buf);
}

/// A popup of `area` less a margin of `dx` columns and `dy` rows each side (none where
/// `area` is too small for one), cleared.
fn popup(area: Rect, dx: u16, dy: u16, buf: &mut Buffer) -> Rect {
    let dx = if area.width > 4 * dx { dx } else { 0 };
    let dy = if area.height > 4 * dy { dy } else { 0 };
    let r = Rect {
        x: area.x + dx,
        y: area.y + dy,
        width: area.width - 2 * dx,
        height: area.height - 2 * dy,
    };
    Clear.render(r, buf);
    r
}

/// The message log, newest first from message `skip` on, each message wrapped in full.
fn draw_log(log: &[String], skip: usize, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let n = log.len();
    let mut lines = Vec::new();
    for (i, m) in log.iter().enumerate().rev().skip(skip) {
        lines.push(Line::from(vec![
            Span::styled(format!("{:>3} ", i + 1), theme.fg(Color::Cyan)),
            Span::raw(m.as_str()),
        ]));
    }
    if lines.is_empty() {
        lines.push(Line::from("no message yet"));
    }
    let title = format!(
        "messages {}/{n}, newest first (Up/Down scroll, e or Esc closes)",
        n.saturating_sub(skip)
    );
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block(&title))
        .render(popup(area, 2, 1, buf), buf);
}

/// The keys of the tab shown, from the key table, in a popup; from line `skip` on when they
/// do not all fit (the title says where, and how to scroll).
fn draw_help(tab: Tab, skip: usize, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let help = help_lines(tab);
    let n = help.len();
    let label_width = help.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let lines: Vec<Line> = help
        .into_iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:>label_width$}  "), theme.fg(Color::Cyan)),
                Span::raw(v),
            ])
        })
        .collect();
    // as wide as the longest line where the terminal allows, else wrapped
    let widest = lines.iter().map(Line::width).max().unwrap_or(0) as u16 + 2;
    let w = widest.min(area.width);
    let inner = w.saturating_sub(2).max(1);
    let rows_of = |ls: &[Line]| -> u16 {
        ls.iter()
            .map(|l| (l.width() as u16).div_ceil(inner).max(1))
            .sum()
    };
    let fits = rows_of(&lines) + 2 <= area.height;
    let first = if fits {
        0
    } else {
        skip.min(n.saturating_sub(1))
    };
    let shown = &lines[first..];
    let h = (rows_of(shown) + 2).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let title = if fits {
        format!("keys: {} tab", tab.title())
    } else {
        format!("keys {}/{n}: Up/Down scroll", first + 1)
    };
    Clear.render(popup, buf);
    Paragraph::new(shown.to_vec())
        .wrap(Wrap { trim: false })
        .block(block(&title))
        .render(popup, buf);
}
