//! The terminal workbench (ratatui): curves, connector laws, hysteresis, fits, export.
//! `App` is plain data, keys map to actions, `App::update` changes state, workers do the work.

pub mod app;
pub mod cloth;
mod export;
pub mod keymap;
pub mod playback;
pub mod series;
pub mod view;
mod worker;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event as TermEvent};

pub use app::{Action, App, Event, LoadedCurve, Tab};

use crate::kes::Curve;

/// KES values of a curve formatted for the tabs: (name, value with unit), or why not.
pub fn format_values(curve: &Curve) -> Vec<(String, String)> {
    crate::kes::values::formatted(curve)
}

/// Completes a path prompt: the longest common prefix of the matching entries.
pub fn complete_path(text: &str) -> Option<String> {
    let path = Path::new(text);
    let (dir, prefix) = if text.ends_with('/') || text.is_empty() {
        (
            PathBuf::from(if text.is_empty() { "." } else { text }),
            String::new(),
        )
    } else {
        (
            path.parent()
                .map(|p| {
                    if p.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        p.to_path_buf()
                    }
                })
                .unwrap_or_else(|| PathBuf::from(".")),
            path.file_name()?.to_string_lossy().into_owned(),
        )
    };
    let mut names: Vec<(String, bool)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.file_type().map(|t| t.is_dir()).unwrap_or(false),
            )
        })
        .filter(|(n, _)| n.starts_with(&prefix))
        .collect();
    names.sort();
    let first = names.first()?;
    let mut common = first.0.clone();
    for (n, _) in &names[1..] {
        while !n.starts_with(&common) {
            common.pop();
        }
    }
    let base = if text.ends_with('/') || text.is_empty() {
        text.to_string()
    } else {
        let parent = &text[..text.len() - prefix.len()];
        parent.to_string()
    };
    let mut out = format!("{base}{common}");
    if names.len() == 1 && first.1 {
        out.push('/');
    }
    Some(out)
}

/// Loads KES files (a folder loads every `.csv` in it, sorted), each with its KES values.
pub fn load_curves(paths: &[PathBuf]) -> (Vec<LoadedCurve>, Vec<String>) {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                .map(|rd| {
                    rd.filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|f| f.extension().is_some_and(|e| e == "csv"))
                        .collect()
                })
                .unwrap_or_default();
            entries.sort();
            files.extend(entries);
        } else {
            files.push(p.clone());
        }
    }
    let mut curves = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match crate::kes::import::read_kes(&f, Default::default()) {
            Ok(curve) => curves.push(LoadedCurve {
                values: format_values(&curve),
                curve,
                fit: None,
            }),
            Err(e) => errors.push(e.to_string()),
        }
    }
    (curves, errors)
}

/// The sample fabric built into kestrel, with its KES values.
pub fn sample_curves() -> (Vec<LoadedCurve>, Vec<String>) {
    match crate::kes::sample::sample_fabric() {
        Ok(curves) => (
            curves
                .into_iter()
                .map(|curve| LoadedCurve {
                    values: format_values(&curve),
                    curve,
                    fit: None,
                })
                .collect(),
            Vec::new(),
        ),
        Err(e) => (Vec::new(), vec![e.to_string()]),
    }
}

/// Runs the workbench on the terminal until the user quits. With no files, the sample
/// fabric of `kes_data/` is loaded.
pub fn run(files: Vec<PathBuf>) -> io::Result<()> {
    let (curves, errors) = if files.is_empty() {
        sample_curves()
    } else {
        load_curves(&files)
    };
    let status = if errors.is_empty() {
        format!("{} curve(s) loaded — ? shows the keys", curves.len())
    } else {
        format!("{} curve(s) loaded; {}", curves.len(), errors.join("; "))
    };
    let monochrome = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut app = App::new(curves, status, monochrome);

    let terminate = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register(signal, Arc::clone(&terminate))?;
    }
    // ratatui::init enters the alternate screen and raw mode and restores them on panic
    let mut terminal = ratatui::init();
    let (tx, rx) = mpsc::channel();
    let mut workers = worker::Workers::default();
    let result = (|| -> io::Result<()> {
        loop {
            terminal.draw(|frame| frame.render_widget(&app, frame.area()))?;
            if terminate.load(Ordering::Relaxed) {
                return Ok(());
            }
            if event::poll(Duration::from_millis(50))? {
                match event::read()? {
                    TermEvent::Key(key) => {
                        if let Some(action) = keymap::keymap(&app, key) {
                            app.update(action);
                        }
                    }
                    TermEvent::Resize(_, _) => {}
                    _ => {}
                }
            }
            while let Ok(ev) = rx.try_recv() {
                // graphics drivers may write to stderr while a renderer starts: repaint it all
                let repaint = matches!(ev, Event::RenderProgress { done: 1, .. })
                    || (app.export.rendering.is_some()
                        && matches!(ev, Event::Failed(_) | Event::Exists(_) | Event::Written(_)));
                app.update(Action::Event(ev));
                if repaint {
                    terminal.clear()?;
                }
            }
            for job in std::mem::take(&mut app.jobs) {
                workers.start(job, &app, tx.clone());
            }
            if app.should_quit {
                return Ok(());
            }
        }
    })();
    ratatui::restore();
    result
}
