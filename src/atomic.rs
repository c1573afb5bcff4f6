//! Files written whole or not at all: a temporary file beside the target, then a rename.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum WriteError {
    #[error("{path} exists; pass --force to overwrite it")]
    Exists { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a
/// reader never sees half a file. Refuses to replace an existing file unless `force`.
pub fn write_atomic(path: &Path, bytes: &[u8], force: bool) -> Result<(), WriteError> {
    if !force && path.exists() {
        return Err(WriteError::Exists {
            path: path.to_path_buf(),
        });
    }
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
