//! A valid `XDG_RUNTIME_DIR` for Mesa's EGL (a private folder when the user's is missing),
//! so that the driver's Wayland probe says nothing on the user's terminal.

use std::path::Path;

/// A private runtime folder for this process, set as `XDG_RUNTIME_DIR` when the variable is
/// unset or does not name an absolute folder: Mesa's EGL probes Wayland, which otherwise
/// prints "XDG_RUNTIME_DIR is invalid" on the user's terminal. The folder (mode 0700) is
/// removed when the guard drops; call it before any thread starts.
#[derive(Debug)]
pub struct RuntimeDir(Option<tempfile::TempDir>);

impl RuntimeDir {
    pub fn ensure() -> Self {
        if runtime_dir_is_valid(std::env::var_os("XDG_RUNTIME_DIR").as_deref()) {
            return Self(None);
        }
        let mut builder = tempfile::Builder::new();
        builder.prefix("kestrel-runtime-");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o700));
        }
        match builder.tempdir() {
            Ok(dir) => {
                std::env::set_var("XDG_RUNTIME_DIR", dir.path());
                Self(Some(dir))
            }
            // No temporary folder: Mesa may say so, nothing else is affected.
            Err(_) => Self(None),
        }
    }

    /// The folder made for this process, if one was needed.
    pub fn made(&self) -> Option<&Path> {
        self.0.as_ref().map(|d| d.path())
    }
}

/// `XDG_RUNTIME_DIR` as Wayland accepts it: set, absolute, an existing folder.
pub fn runtime_dir_is_valid(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| {
        let p = Path::new(v);
        p.is_absolute() && p.is_dir()
    })
}
