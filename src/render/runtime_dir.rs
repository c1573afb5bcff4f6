//! A valid `XDG_RUNTIME_DIR` for Mesa's EGL (a private folder when the user's is missing),
//! so that the driver's Wayland probe says nothing on the user's terminal.

use std::path::{Path, PathBuf};

/// The runtime folder set as `XDG_RUNTIME_DIR` when the variable is unset or does not name an
/// absolute folder: Mesa's EGL probes Wayland, which otherwise prints "XDG_RUNTIME_DIR is
/// invalid" on the user's terminal. On Unix the folder is the user's own
/// `kestrel-runtime-UID` in the temporary folder (mode 0700, made once and kept, so a process
/// that ends by a signal or `exit` leaves nothing new behind); where that name is taken by
/// something that is not a private folder of this user, a fresh temporary folder removed when
/// the guard drops. Call it before any thread starts.
#[derive(Debug)]
pub struct RuntimeDir(Made);

#[derive(Debug)]
enum Made {
    /// `XDG_RUNTIME_DIR` was valid, or no folder could be made (Mesa may then say so, nothing
    /// else is affected).
    Nothing,
    /// The user's kept folder.
    Kept(PathBuf),
    /// A temporary folder, removed on drop.
    Temporary(tempfile::TempDir),
}

impl RuntimeDir {
    pub fn ensure() -> Self {
        if runtime_dir_is_valid(std::env::var_os("XDG_RUNTIME_DIR").as_deref()) {
            return Self(Made::Nothing);
        }
        let made = match kept_runtime_dir(&std::env::temp_dir()) {
            Some(dir) => Made::Kept(dir),
            None => match temporary_dir() {
                Some(dir) => Made::Temporary(dir),
                None => Made::Nothing,
            },
        };
        let dir = Self(made);
        if let Some(path) = dir.made() {
            std::env::set_var("XDG_RUNTIME_DIR", path);
        }
        dir
    }

    /// The folder set for this process, if one was needed.
    pub fn made(&self) -> Option<&Path> {
        match &self.0 {
            Made::Nothing => None,
            Made::Kept(path) => Some(path),
            Made::Temporary(dir) => Some(dir.path()),
        }
    }
}

/// A fresh private folder, removed when dropped.
fn temporary_dir() -> Option<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("kestrel-runtime-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir().ok()
}

/// `TMP/kestrel-runtime-UID`, made with mode 0700 if absent; `None` where the name is taken by
/// a link, a file, or a folder of another user or open to others (never used then).
#[cfg(unix)]
pub fn kept_runtime_dir(tmp: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let path = tmp.join(format!("kestrel-runtime-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    // not followed: a link planted under the name is refused, not trusted
    let meta = std::fs::symlink_metadata(&path).ok()?;
    let private = meta.is_dir()
        && meta.uid() == uid
        && meta.permissions().mode() & 0o077 == 0
        && path.is_absolute();
    private.then_some(path)
}

/// Elsewhere: no kept folder (a temporary one serves).
#[cfg(not(unix))]
pub fn kept_runtime_dir(_tmp: &Path) -> Option<PathBuf> {
    None
}

/// `XDG_RUNTIME_DIR` as Wayland accepts it: set, absolute, an existing folder.
pub fn runtime_dir_is_valid(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| {
        let p = Path::new(v);
        p.is_absolute() && p.is_dir()
    })
}
