//! The terminal workbench (ratatui): curves, connector laws, hysteresis, fits, cloth, export.
//! Keys map to actions (`keymap`), `App::update` changes state, workers do the work.

pub mod app;
pub mod files;
pub mod keymap;
pub mod message;
pub mod prompt;
pub mod series;
pub mod tabs;
pub mod view;
pub mod widgets;
pub mod worker;

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event as TermEvent};

pub use app::App;
pub use files::{format_values, load_curves, sample_curves};
pub use message::{Action, Event, Job, LoadedCurve, Tab};

/// Runs the workbench on the terminal until the user quits. With no files, the sample
/// fabric of `kes_data/` is loaded.
pub fn run(files: Vec<PathBuf>) -> io::Result<()> {
    // scenes and reduced models go to the Cloth tab, the rest are curves
    let (cloth, files): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|p| is_cloth_input(p));
    let (cards, files): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|p| is_parameter_file(p));
    let (curves, errors) = if files.is_empty() {
        sample_curves()
    } else {
        load_curves(&files)
    };
    let mut fabrics: Vec<&str> = curves.iter().map(|c| c.curve.fabric.as_str()).collect();
    fabrics.sort_unstable();
    fabrics.dedup();
    let loaded = format!(
        "{} curve(s) of {} fabric(s) loaded",
        curves.len(),
        fabrics.len()
    );
    let status = if errors.is_empty() {
        format!("{loaded} — ? shows the keys")
    } else {
        format!("{loaded}; {}", errors.join("; "))
    };
    let monochrome = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut app = App::new(curves, status, monochrome);
    // the last one named is loaded; each is listed in the Cloth tab; a card offers its tests
    for path in cloth {
        app.open_cloth(path);
    }
    if let Some(card) = cards.into_iter().last() {
        app.open_card(card);
    }

    // the signal that asked the workbench to end (0: none)
    let terminate = Arc::new(AtomicUsize::new(0));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register_usize(signal, Arc::clone(&terminate), signal as usize)?;
    }
    exit_when_stuck(Arc::clone(&terminate));
    // ratatui::init enters the alternate screen and raw mode and restores them on panic
    let mut terminal = ratatui::init();
    let (tx, rx) = mpsc::channel();
    let mut workers = worker::Workers::default();
    // the Cloth tab lists ./scenes and the working directory
    workers.start(Job::ScanCloth(PathBuf::new()), tx.clone());
    let result = (|| -> io::Result<()> {
        loop {
            for job in std::mem::take(&mut app.jobs) {
                workers.start(job, tx.clone());
            }
            terminal.draw(|frame| frame.render_widget(&app, frame.area()))?;
            if terminate.load(Ordering::Relaxed) != 0 {
                return Ok(());
            }
            if event::poll(Duration::from_millis(50))? {
                if let TermEvent::Key(key) = event::read()? {
                    if let Some(action) = keymap::keymap(&app, key) {
                        app.update(action);
                    }
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
            if app.should_quit {
                return Ok(());
            }
        }
    })();
    ratatui::restore();
    // the workers stop first (the cloth thread's renderer, an export's last write), as on q
    drop(workers);
    end_by_signal(terminate.load(Ordering::Relaxed));
    result
}

/// Ends the process by `signal` (when not 0) with its default action, once the terminal is
/// restored: the shell then sees 128 + the signal (143 for SIGTERM), as for other programs.
fn end_by_signal(signal: usize) {
    if let Ok(signal) = i32::try_from(signal) {
        if signal != 0 {
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            // the default action of SIGTERM and SIGHUP ends the process; should it not
            std::process::exit(128 + signal);
        }
    }
}

/// A cloth scene (`*.toml` that is not a parameter file) or a reduced model (`*.krd`): what
/// the Cloth tab opens.
pub fn is_cloth_input(path: &std::path::Path) -> bool {
    message::is_model(path) || (file_name(path).ends_with(".toml") && !is_parameter_file(path))
}

/// A fabric parameter file (card) by its name: `*.params.toml` or `*.params.json`.
pub fn is_parameter_file(path: &std::path::Path) -> bool {
    let name = file_name(path);
    name.ends_with(".params.toml") || name.ends_with(".params.json")
}

fn file_name(path: &std::path::Path) -> std::borrow::Cow<'_, str> {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default()
}

/// After SIGTERM or SIGHUP the workbench's loop returns at its next turn. When the terminal has gone
/// away, though, crossterm's read can spin on end-of-file without returning, so a watchdog
/// restores what it can and ends the process if the loop has not returned within a second.
fn exit_when_stuck(terminate: Arc<AtomicUsize>) {
    std::thread::spawn(move || {
        while terminate.load(Ordering::Relaxed) == 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(900));
        ratatui::restore();
        end_by_signal(terminate.load(Ordering::Relaxed));
    });
}
