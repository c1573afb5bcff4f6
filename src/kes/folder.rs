//! The KES files a path names: a file itself; a folder, its `.csv` files (as `DIR/*.csv`: no
//! hidden files, any case of `.csv`); a library folder (no `.csv` of its own, such as
//! `kes_data/`), the `.csv` files of each sub-folder, symlinked sub-folders not followed.
//! Shared by the command line and the workbench, so both open a folder the same way.

use std::path::{Path, PathBuf};

/// The KES files of the paths given, in order, and the files left out of the folders read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KesFiles {
    /// The files, each path's in turn: a folder's sorted by name, a library's fabric folder
    /// after fabric folder.
    pub files: Vec<PathBuf>,
    /// Regular files of those folders that are not `.csv` (hidden files aside), skipped.
    pub skipped: Vec<PathBuf>,
    /// How many hidden files (`.name`, macOS `._name`) of those folders were skipped.
    pub hidden: usize,
    /// Sub-folders not read: those of a fabric folder (it has `.csv` files of its own), and
    /// symlinked sub-folders of a library folder (not followed).
    pub folders: Vec<PathBuf>,
}

impl KesFiles {
    /// Adds what `other` found after what this holds.
    fn append(&mut self, other: KesFiles) {
        self.files.extend(other.files);
        self.skipped.extend(other.skipped);
        self.hidden += other.hidden;
        self.folders.extend(other.folders);
    }

    /// A note naming the skipped files and folders not read (at most five of each, then how
    /// many more) and counting the hidden files, or None when nothing was left out.
    pub fn skipped_note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.skipped.is_empty() {
            parts.push(format!(
                "skipped {} file(s) that are not .csv: {}",
                self.skipped.len(),
                listed(&self.skipped)
            ));
        }
        if self.hidden > 0 {
            parts.push(format!(
                "skipped {} hidden file(s) (names starting with `.`, as `DIR/*.csv` would)",
                self.hidden
            ));
        }
        if !self.folders.is_empty() {
            parts.push(format!(
                "did not read {} sub-folder(s) (those of a folder with .csv files of its own, \
                 and symlinked ones): {}",
                self.folders.len(),
                listed(&self.folders)
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// At most five paths, then how many more.
fn listed(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .take(5)
        .map(|p| crate::input::printable(&p.display().to_string()))
        .collect();
    let more = paths.len().saturating_sub(shown.len());
    format!(
        "{}{}",
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// The visible entries of a folder that are files (`files`, a link to a file included) or
/// folders, sorted, and how many hidden ones it has of that kind; unreadable, none.
fn entries(dir: &Path, files: bool) -> (Vec<PathBuf>, usize) {
    let all: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| if files { f.is_file() } else { f.is_dir() })
                .collect()
        })
        .unwrap_or_default();
    let (hidden, mut out): (Vec<PathBuf>, Vec<PathBuf>) =
        all.into_iter().partition(|f| is_hidden(f));
    out.sort();
    (out, hidden.len())
}

/// `.csv` in any case (`.CSV` from an instrument's export).
fn is_csv(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

fn is_symlink(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// Adds the `.csv` files of `dir` to `out` (sorted), its other visible files to the skipped
/// and counts its hidden files; whether it had any `.csv`.
fn csv_of(dir: &Path, out: &mut KesFiles) -> bool {
    let (files, hidden) = entries(dir, true);
    let (csv, other): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(|f| is_csv(f));
    out.skipped.extend(other);
    out.hidden += hidden;
    let any = !csv.is_empty();
    out.files.extend(csv);
    any
}

/// The KES files `path` opens, added to `out`: a file (or anything not a folder) itself; a
/// folder, every visible `.csv` in it (its sub-folders noted, not read); a folder with none,
/// the `.csv` files of each of its visible sub-folders that is not a symlink (a link may lead
/// above the folder given, or back to it), one fabric folder after the other. A folder with
/// neither is an error naming it.
pub fn add_kes_files(path: &Path, out: &mut KesFiles) -> Result<(), String> {
    if !path.is_dir() {
        out.files.push(path.to_path_buf());
        return Ok(());
    }
    let mut own = KesFiles::default();
    let (folders, _) = entries(path, false);
    if csv_of(path, &mut own) {
        own.folders = folders;
        out.append(own);
        return Ok(());
    }
    // the folder's own files (none of them .csv) are skipped, then each fabric folder's
    let mut nested = KesFiles {
        skipped: own.skipped,
        hidden: own.hidden,
        ..KesFiles::default()
    };
    let mut any = false;
    for d in folders {
        if is_symlink(&d) {
            nested.folders.push(d);
            continue;
        }
        any |= csv_of(&d, &mut nested);
    }
    if !any {
        return Err(format!(
            "no .csv file in {} nor in its sub-folders{}: name a KES CSV file, a fabric folder \
             or a folder of fabric folders",
            crate::input::printable(&path.display().to_string()),
            if nested.folders.is_empty() {
                String::new()
            } else {
                format!(
                    " (symlinked sub-folders are not followed: {})",
                    listed(&nested.folders)
                )
            }
        ));
    }
    out.append(nested);
    Ok(())
}

/// The KES files of every path (see [`add_kes_files`]), in the order given; the first folder
/// without any is an error.
pub fn kes_files(paths: &[PathBuf]) -> Result<KesFiles, String> {
    let mut out = KesFiles::default();
    for p in paths {
        add_kes_files(p, &mut out)?;
    }
    Ok(out)
}
