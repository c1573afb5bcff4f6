//! Input files read whole under a size limit \[bytes\]: regular files only (a FIFO, a device or
//! a folder is refused before it is opened, so nothing waits on a writer that never comes).

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Largest curve file (KES CSV or delimited loop record) \[bytes\]: 64 MiB.
pub const CURVE_FILE_LIMIT: u64 = 64 << 20;
/// Largest parameter, scene, values or law file \[bytes\]: 4 MiB (hand-sized text).
pub const SMALL_FILE_LIMIT: u64 = 4 << 20;
/// Largest record or reduced model file \[bytes\]: 2 GiB.
pub const BINARY_FILE_LIMIT: u64 = 2 << 30;
/// Most memory one announced size (grid, frames, rank) may ask for \[bytes\]: 2 GiB.
pub const MEMORY_BUDGET: u64 = 2 << 30;

/// A size in the largest binary unit that keeps it whole, e.g. "64 MiB".
pub fn bytes_label(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n % (1 << shift) == 0 {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

/// Whether `c` may not be printed as it is: a control character (C0, DEL, C1: escape
/// sequences, bells, NUL, carriage returns) or a bidirectional control (U+202A–U+202E,
/// U+2066–U+2069: a right-to-left override reorders what follows it on the line). The one
/// rule for names, card and curve text read from files.
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Text from an input file as a message shows it: [`unprintable`] characters escaped as
/// `\u{1b}` or `\u{202e}`, so that a file cannot drive the terminal or reorder a line;
/// everything else as it is.
pub fn printable(text: &str) -> String {
    if !text.chars().any(unprintable) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if unprintable(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A parser's message for people: each line cut to its first 200 characters (a TOML error
/// quotes the offending line, which may be a file's whole content), control characters
/// escaped.
pub fn clipped(message: &str) -> String {
    const MAX: usize = 200;
    message
        .lines()
        .map(|line| {
            let n = line.chars().count();
            if n <= MAX {
                printable(line)
            } else {
                let cut: String = line.chars().take(MAX).collect();
                format!("{}… ({n} characters)", printable(&cut))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The bytes of the regular file `path`, at most `limit` of them; an `InvalidInput` error
/// names the limit or says what kind of file it is.
pub fn read_bytes(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    check_kind(&meta)?;
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "larger than the limit of {} for this kind of file",
                bytes_label(limit)
            ),
        )
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let file = std::fs::File::open(path)?;
    // the file may have been replaced between the check and the open
    check_kind(&file.metadata()?)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// A file that could not be read: its path and why.
#[derive(Debug, Error)]
#[error("{}: {source}", path.display())]
pub struct Unreadable {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What a binary file kestrel writes is, by its first 8 bytes (its magic), with the command
/// that reads it; None for anything else.
pub(crate) fn binary_kind(magic: &[u8]) -> Option<&'static str> {
    match magic.get(..8)? {
        b"KESTRELD" => {
            Some("a reduced model (.krd): play it with `kestrel play MODEL --impulses SEQ`")
        }
        b"KESTRELP" => Some(
            "a shard of a precompute (precompute --shard): merge the shards into a model with \
             `kestrel precompute merge PART… --out MODEL`",
        ),
        b"KESTRELR" => Some("a record (--record): render it with `kestrel render --from RECORD`"),
        _ => None,
    }
}

/// [`binary_kind`] of the file `path` (None when it cannot be read).
pub(crate) fn binary_kind_of(path: &Path) -> Option<&'static str> {
    let mut magic = [0u8; 8];
    std::fs::File::open(path)
        .ok()?
        .read_exact(&mut magic)
        .ok()?;
    binary_kind(&magic)
}

/// [`read_bytes`] with the path in the error.
pub fn file_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, Unreadable> {
    read_bytes(path, limit).map_err(|source| Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

/// [`read_text`] with the path in the error.
pub fn file_text(path: &Path, limit: u64) -> Result<String, Unreadable> {
    read_text(path, limit).map_err(|source| Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

/// The UTF-8 text of the regular file `path`, at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 text ({})", e.utf8_error()),
        )
    })
}

fn check_kind(meta: &std::fs::Metadata) -> io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = if meta.is_dir() {
        "a folder"
    } else {
        "not a regular file (a FIFO, socket or device)"
    };
    Err(io::Error::new(io::ErrorKind::InvalidInput, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_folders_and_files_over_the_limit() {
        let e = read_bytes(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = read_bytes(dir.path(), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("folder"), "{e}");
        let p = dir.path().join("a.csv");
        std::fs::write(&p, vec![b'1'; 2048]).unwrap();
        let e = read_bytes(&p, 1024).unwrap_err();
        assert!(e.to_string().contains("limit of 1 KiB"), "{e}");
        assert_eq!(read_bytes(&p, 2048).unwrap().len(), 2048);
        assert_eq!(bytes_label(64 << 20), "64 MiB");
        assert_eq!(bytes_label(1000), "1000 bytes");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_writer_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&p).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo is not available");
            return;
        }
        let e = read_text(&p, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
    }
}
