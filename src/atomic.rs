//! Files written whole or not at all: a temporary file `.NAME.PID.XXXXXX.tmp` beside the
//! target, then an atomic rename (or, without `--force`, a no-clobber link that fails if the
//! target appeared); temporaries of killed writers are removed by the next write of NAME.

use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum WriteError {
    #[error("{path} exists; pass --force to overwrite it")]
    Exists { path: PathBuf },
    #[error("{path} is a folder; name a file to write (the folder is never replaced)")]
    Folder { path: PathBuf },
    #[error(
        "{path} is not a regular file (a device, FIFO or socket); name a file to write (it is \
         never replaced, also with --force)"
    )]
    NotAFile { path: PathBuf },
    #[error(
        "{}: a file name of {bytes} bytes; at most {MAX_FILE_NAME_BYTES} are written (name \
         the file with -o)",
        shown(path)
    )]
    NameTooLong { path: PathBuf, bytes: usize },
    #[error(
        "{}: a path of {bytes} bytes; at most {MAX_PATH_BYTES} are written",
        shown(path)
    )]
    PathTooLong { path: PathBuf, bytes: usize },
    #[error("an empty output path; name a file to write")]
    Empty,
    #[error(
        "{}: ends with `/`, `.` or `..`, so it names a folder; name a file to write",
        shown(path)
    )]
    EndsInSeparator { path: PathBuf },
    #[error(
        "cannot write {}: {} is a link that leads nowhere (its target is missing, or it is a \
         loop of links); remove it or name another path",
        shown(path),
        shown(link)
    )]
    BrokenLink { path: PathBuf, link: PathBuf },
    #[error(
        "cannot write {}: {} is not a folder (a file of that name exists)",
        shown(path),
        shown(parent)
    )]
    ParentNotFolder { path: PathBuf, parent: PathBuf },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Longest file name written \[bytes\]: 255 less the temporary's `.` prefix, process id,
/// random part and `.tmp` suffix.
pub const MAX_FILE_NAME_BYTES: usize = 200;

/// Longest output path written \[bytes\]: Linux's PATH_MAX (4096, with its final NUL) less the
/// temporary's `.` prefix and `.PID.XXXXXX.tmp` suffix beside the file (at most 26 bytes) and
/// some room.
pub const MAX_PATH_BYTES: usize = 4096 - 64;

/// A path as messages show it: at most 120 characters, the middle cut (a path of kilobytes is
/// not echoed whole).
fn shown(path: &Path) -> String {
    let s = path.display().to_string();
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= 120 {
        return s;
    }
    let head: String = chars[..60].iter().collect();
    let tail: String = chars[chars.len() - 40..].iter().collect();
    format!("{head}…{tail} ({} bytes)", s.len())
}

/// Fails early, before any work is done, when `path` is empty, ends with a separator, `.` or
/// `..`, is longer than [`MAX_PATH_BYTES`], has a file where a folder of its path should be
/// or a link that leads nowhere on it, is a folder or another thing that is not a regular
/// file (a device, a FIFO: never replaced), or exists and `force` is off. A folder of the path that does not exist is fine (it is
/// created when the file is written).
pub fn check_target(path: &Path, force: bool) -> Result<(), WriteError> {
    let target = || path.to_path_buf();
    let text = path.as_os_str();
    if text.is_empty() {
        return Err(WriteError::Empty);
    }
    if text.len() > MAX_PATH_BYTES {
        return Err(WriteError::PathTooLong {
            path: target(),
            bytes: text.len(),
        });
    }
    let shown_text = text.to_string_lossy();
    let last = shown_text
        .rsplit(std::path::is_separator)
        .next()
        .unwrap_or("");
    if shown_text.ends_with(std::path::is_separator) || last == "." || last == ".." {
        return Err(WriteError::EndsInSeparator { path: target() });
    }
    // links followed; one that leads nowhere (dangling, or a loop) is there without a target
    let broken = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    // the nearest folder of the path that exists must be a folder
    for folder in path
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
    {
        match std::fs::metadata(folder) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => {
                return Err(WriteError::ParentNotFolder {
                    path: target(),
                    parent: folder.to_path_buf(),
                })
            }
            Err(_) if broken(folder) => {
                return Err(WriteError::BrokenLink {
                    path: target(),
                    link: folder.to_path_buf(),
                })
            }
            Err(_) => {}
        }
    }
    // followed through links: a link to /dev/null is a device too
    let found = std::fs::metadata(path).ok();
    if found.is_none() && broken(path) {
        return Err(WriteError::BrokenLink {
            path: target(),
            link: target(),
        });
    }
    if found.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(WriteError::Folder { path: target() });
    }
    // the temporary beside it adds a prefix and a suffix: keep the whole name within the
    // 255 bytes most file systems allow
    if let Some(bytes) = path
        .file_name()
        .map(|n| n.len())
        .filter(|&n| n > MAX_FILE_NAME_BYTES)
    {
        return Err(WriteError::NameTooLong {
            path: target(),
            bytes,
        });
    }
    match found {
        Some(m) if !m.is_file() => Err(WriteError::NotAFile { path: target() }),
        Some(_) if !force => Err(WriteError::Exists { path: target() }),
        _ => Ok(()),
    }
}

/// `path` as the file system will resolve it once its missing folders are made: its deepest
/// existing folder canonical (links, `.`, `..`), the rest with `.` dropped and `..` taking
/// back the folder before it.
pub fn resolved(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::CurDir => {}
            // `out` is canonical (or below a folder still to be made): its parent is the
            // folder `..` leads to
            Component::ParentDir => {
                out.pop();
            }
            other => {
                out.push(other.as_os_str());
                if let Ok(real) = std::fs::canonicalize(&out) {
                    out = real;
                }
            }
        }
    }
    out
}

/// Why `path` may not be written: it is one of `inputs`, the files a result was made from
/// (replacing it would replace what was read), compared as they resolve ([`resolved`]).
pub fn input_clash<P: AsRef<Path>>(
    path: &Path,
    inputs: impl IntoIterator<Item = P>,
) -> Option<String> {
    let target = resolved(path);
    inputs
        .into_iter()
        .find(|input| resolved(input.as_ref()) == target)
        .map(|input| {
            format!(
                "{}: that is the input {}; writing it would replace what was read (name another \
                 file)",
                path.display(),
                input.as_ref().display()
            )
        })
}

/// Writes `bytes` to `path` through a uniquely named temporary file in the same folder, so a
/// reader never sees half a file and a killed writer leaves no partial file under `path`.
/// Without `force` the final step refuses to replace a file, also one that appeared while
/// writing (no check-then-rename race); with `force` it replaces atomically. A missing folder
/// is created (the one rule for every file kestrel writes); the file is readable by all
/// (mode 0644 on Unix), as an ordinary new file.
pub fn write_atomic(path: &Path, bytes: &[u8], force: bool) -> Result<(), WriteError> {
    check_target(path, force)?;
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    remove_stale_temporaries(dir, &name);
    let prefix = format!(".{name}.{}.", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(default_permissions());
    let mut tmp = builder.tempfile_in(dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(io)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    persist(tmp, path, force)
}

/// The mode a new file gets from `umask` (0666 & !umask) rather than tempfile's 0600, read
/// once from /proc/self/status where there is one (0644 otherwise).
#[cfg(unix)]
fn default_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    static MODE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let mode = *MODE.get_or_init(|| {
        let umask = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("Umask:"))?;
                u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
            })
            .unwrap_or(0o022);
        0o666 & !umask
    });
    std::fs::Permissions::from_mode(mode)
}

/// Removes the temporaries `.NAME.PID.*.tmp` beside a target left by a writer that was killed
/// (its process no longer exists; Linux, where /proc lists processes). A live writer's
/// temporary is never touched.
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let proc = Path::new("/proc/self");
    if !proc.exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for e in entries.flatten() {
        let file = e.file_name();
        let file = file.to_string_lossy();
        let Some(rest) = file
            .strip_prefix(&prefix)
            .filter(|_| file.ends_with(".tmp"))
        else {
            continue;
        };
        let Some(pid) = rest.split('.').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn persist(tmp: NamedTempFile, path: &Path, force: bool) -> Result<(), WriteError> {
    let result = if force {
        tmp.persist(path)
    } else {
        tmp.persist_noclobber(path)
    };
    result.map(|_| ()).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            WriteError::Exists {
                path: path.to_path_buf(),
            }
        } else {
            WriteError::Io {
                path: path.to_path_buf(),
                source: e.error,
            }
        }
        // the temporary file is removed when `e.file` drops
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_missing_folder_is_created_and_the_file_is_readable_by_all() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new/deeper/a.png");
        write_atomic(&p, b"x", false).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"x");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
    }

    #[test]
    fn refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"one", false).unwrap();
        let e = write_atomic(&p, b"two", false).unwrap_err();
        assert!(e.to_string().contains("--force"), "{e}");
        assert_eq!(fs::read(&p).unwrap(), b"one");
        write_atomic(&p, b"two", true).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        // no temporary file left behind
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_never_replaced_also_with_force() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        // (a FIFO stands for devices too: a test must never risk /dev/null)
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        for force in [false, true] {
            let e = write_atomic(&fifo, b"card", force).unwrap_err();
            assert!(matches!(e, WriteError::NotAFile { .. }), "{e}");
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn a_name_too_long_for_its_temporary_is_refused_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("c".repeat(MAX_FILE_NAME_BYTES));
        write_atomic(&ok, b"card", false).unwrap();
        let long = dir.path().join("c".repeat(MAX_FILE_NAME_BYTES + 1));
        let e = check_target(&long, true).unwrap_err();
        assert!(
            matches!(e, WriteError::NameTooLong { bytes: 201, .. }),
            "{e}"
        );
        assert!(!long.exists());
    }

    #[test]
    fn a_folder_is_never_replaced_also_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("cards");
        fs::create_dir(&folder).unwrap();
        fs::write(folder.join("kept.toml"), b"kept").unwrap();
        for force in [false, true] {
            let e = write_atomic(&folder, b"card", force).unwrap_err();
            assert!(matches!(e, WriteError::Folder { .. }), "{e}");
            assert!(e.to_string().contains("is a folder"), "{e}");
        }
        assert_eq!(fs::read(folder.join("kept.toml")).unwrap(), b"kept");
    }

    #[test]
    fn a_target_that_appears_while_writing_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.txt");
        let mut tmp = NamedTempFile::new_in(dir.path()).unwrap();
        tmp.write_all(b"mine").unwrap();
        // another writer slips in after the early check
        fs::write(&p, b"theirs").unwrap();
        let e = persist(tmp, &p, false).unwrap_err();
        assert!(matches!(e, WriteError::Exists { .. }), "{e}");
        assert_eq!(fs::read(&p).unwrap(), b"theirs");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_killed_writers_temporary_is_removed_and_the_mode_follows_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.txt");
        // pid 0 is never a process of /proc; this process's own temporary stays
        let stale = dir.path().join(".c.txt.0.AbCdEf.tmp");
        let live = dir
            .path()
            .join(format!(".c.txt.{}.XyZ123.tmp", std::process::id()));
        fs::write(&stale, b"half").unwrap();
        fs::write(&live, b"busy").unwrap();
        write_atomic(&p, b"whole", false).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"whole");
        if Path::new("/proc/self").exists() {
            assert!(!stale.exists());
        }
        assert!(live.exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, default_permissions().mode(), "{mode:o}");
        }
    }

    #[test]
    fn threads_of_one_process_write_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        std::thread::scope(|s| {
            for i in 0..8 {
                let p = dir.path().join(format!("t{i}.txt"));
                s.spawn(move || write_atomic(&p, format!("{i}").as_bytes(), false).unwrap());
            }
        });
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 8);
        for i in 0..8 {
            let text = fs::read_to_string(dir.path().join(format!("t{i}.txt"))).unwrap();
            assert_eq!(text, i.to_string());
        }
    }
}
