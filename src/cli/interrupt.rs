//! Ctrl-C (SIGINT) and SIGTERM while a command writes several files: inside a [`Watch`] the
//! signal only sets a flag, checked between frames (and steps), so the command removes what
//! it wrote and exits 130 / 143; outside one the signal ends the process as it always did
//! (the handler then performs the default action, so commands that never check the flag stay
//! interruptible). A second signal inside a watch ends the process at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};

use super::CliError;

struct Handlers {
    /// The signal received inside a watch (0: none).
    received: Arc<AtomicUsize>,
    /// Outside a watch (or after the first signal in one): the default action.
    default: Arc<AtomicBool>,
}

/// The handlers, registered on first use; None when they could not be (signals then keep
/// their default action).
fn handlers() -> Option<&'static Handlers> {
    static HANDLERS: OnceLock<Option<Handlers>> = OnceLock::new();
    HANDLERS
        .get_or_init(|| {
            let h = Handlers {
                received: Arc::new(AtomicUsize::new(0)),
                default: Arc::new(AtomicBool::new(true)),
            };
            // a signal the process was started ignoring (`cmd &` in a script, `trap '' INT`)
            // stays ignored
            for sig in [SIGINT, SIGTERM].into_iter().filter(|&s| !ignored(s)) {
                // in order: a second signal in a watch finds `default` set by the first
                signal_hook::flag::register_conditional_default(sig, h.default.clone()).ok()?;
                signal_hook::flag::register_usize(sig, h.received.clone(), sig as usize).ok()?;
                signal_hook::flag::register(sig, h.default.clone()).ok()?;
            }
            Some(h)
        })
        .as_ref()
}

/// Whether `sig`'s disposition is to be ignored (as inherited from the parent).
fn ignored(sig: i32) -> bool {
    // SAFETY: a query only (no new action); `old` is a valid, zeroed sigaction to fill.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// While alive, SIGINT and SIGTERM are recorded instead of ending the process. A signal that
/// nobody asked about (it came after the command's last check) ends the process when the
/// watch drops, as it would have without the watch.
pub struct Watch {
    handlers: Option<&'static Handlers>,
    /// A received signal was returned by [`Watch::signal`]: the command reports it.
    reported: AtomicBool,
}

impl Watch {
    pub fn start() -> Self {
        let h = handlers();
        if let Some(h) = h {
            h.received.store(0, Ordering::SeqCst);
            h.default.store(false, Ordering::SeqCst);
        }
        Self {
            handlers: h,
            reported: AtomicBool::new(false),
        }
    }

    /// The signal received since the watch started, if any (the caller then reports it).
    pub fn signal(&self) -> Option<i32> {
        let sig = self
            .handlers
            .map(|h| h.received.load(Ordering::SeqCst) as i32)
            .filter(|&s| s != 0);
        if sig.is_some() {
            self.reported.store(true, Ordering::SeqCst);
        }
        sig
    }

    /// `Err(interrupted(…))` once a signal was received: `clean` removes what the run wrote
    /// and says what (`3 frames removed`).
    pub fn check(&self, clean: impl FnOnce() -> String) -> Result<(), CliError> {
        match self.signal() {
            Some(sig) => Err(interrupted(sig, &clean())),
            None => Ok(()),
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(h) = self.handlers {
            h.default.store(true, Ordering::SeqCst);
            let sig = h.received.load(Ordering::SeqCst) as i32;
            if sig != 0 && !self.reported.load(Ordering::SeqCst) {
                // the signal's default action, late: the process ends as the signal asked
                let _ = signal_hook::low_level::emulate_default_handler(sig);
            }
        }
    }
}

/// The error of a command stopped by signal `sig`: exit 128 + sig (130 for SIGINT, 143 for
/// SIGTERM), as a shell reports a process the signal ended.
pub fn interrupted(sig: i32, removed: &str) -> CliError {
    CliError {
        message: format!("interrupted: {removed}"),
        code: u8::try_from(128 + sig).unwrap_or(130),
    }
}

/// `N frames` / `1 frame`.
pub fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The files of a command's last phase, written inside a watch: a signal during or between
/// them removes those of them that were not there before (a file replaced under `--force`
/// stays replaced: the old one is gone), and the command exits 130 / 143.
pub struct Outputs {
    watch: Watch,
    made: Vec<std::path::PathBuf>,
}

impl Outputs {
    pub fn start() -> Self {
        Self {
            watch: Watch::start(),
            made: Vec::new(),
        }
    }

    /// Runs `write` (which writes `path`), then checks for a signal.
    pub fn write<T>(
        &mut self,
        path: &std::path::Path,
        write: impl FnOnce() -> Result<T, CliError>,
    ) -> Result<T, CliError> {
        self.check()?;
        let new = path.symlink_metadata().is_err();
        let value = write()?;
        self.wrote(path, new)?;
        Ok(value)
    }

    /// `path` was written (`new`: it was not there before), then checks for a signal.
    pub fn wrote(&mut self, path: &std::path::Path, new: bool) -> Result<(), CliError> {
        if new {
            self.made.push(path.to_path_buf());
        }
        self.check()
    }

    /// `Err(interrupted(…))` once a signal was received, the new files removed.
    pub fn check(&self) -> Result<(), CliError> {
        self.watch.check(|| {
            let removed = self
                .made
                .iter()
                .filter(|p| std::fs::remove_file(p).is_ok())
                .count();
            format!("{} removed", count(removed, "file"))
        })
    }
}
