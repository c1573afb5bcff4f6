//! The KES files a path names: a file itself; a folder, its `.csv` files; a library folder
//! (no `.csv` of its own, such as `kes_data/`), the `.csv` files of each sub-folder. Shared by
//! the command line and the workbench, so both open a folder the same way.

use std::path::{Path, PathBuf};

/// The KES files of the paths given, in order, and the files left out of the folders read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KesFiles {
    /// The files, each path's in turn: a folder's sorted by name, a library's fabric folder
    /// after fabric folder.
    pub files: Vec<PathBuf>,
    /// Regular files of those folders that are not `.csv` (hidden files aside), skipped.
    pub skipped: Vec<PathBuf>,
}

impl KesFiles {
    /// A note naming the skipped files (at most five, then how many more), or None.
    pub fn skipped_note(&self) -> Option<String> {
        if self.skipped.is_empty() {
            return None;
        }
        let shown: Vec<String> = self
            .skipped
            .iter()
            .take(5)
            .map(|p| crate::input::printable(&p.display().to_string()))
            .collect();
        let more = self.skipped.len().saturating_sub(shown.len());
        Some(format!(
            "skipped {} file(s) that are not .csv: {}{}",
            self.skipped.len(),
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }
}

/// The entries of a folder that are files (`files`) or folders, sorted; unreadable, none.
fn entries(dir: &Path, files: bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| if files { f.is_file() } else { f.is_dir() })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn is_csv(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "csv")
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// Adds the `.csv` files of `dir` to `out` (sorted) and its other visible files to the
/// skipped; whether it had any `.csv`.
fn csv_of(dir: &Path, out: &mut KesFiles) -> bool {
    let (csv, other): (Vec<PathBuf>, Vec<PathBuf>) =
        entries(dir, true).into_iter().partition(|f| is_csv(f));
    out.skipped
        .extend(other.into_iter().filter(|f| !is_hidden(f)));
    let any = !csv.is_empty();
    out.files.extend(csv);
    any
}

/// The KES files `path` opens, added to `out`: a file (or anything not a folder) itself; a
/// folder, every `.csv` in it; a folder with none, the `.csv` files of each of its
/// sub-folders, one fabric folder after the other. A folder with neither is an error naming
/// it.
pub fn add_kes_files(path: &Path, out: &mut KesFiles) -> Result<(), String> {
    if !path.is_dir() {
        out.files.push(path.to_path_buf());
        return Ok(());
    }
    let mut own = KesFiles::default();
    if csv_of(path, &mut own) {
        out.files.extend(own.files);
        out.skipped.extend(own.skipped);
        return Ok(());
    }
    let mut nested = KesFiles::default();
    let mut any = false;
    for d in entries(path, false) {
        any |= csv_of(&d, &mut nested);
    }
    if !any {
        return Err(format!(
            "no .csv file in {} nor in its sub-folders: name a KES CSV file, a fabric folder \
             or a folder of fabric folders",
            crate::input::printable(&path.display().to_string())
        ));
    }
    out.files.extend(nested.files);
    out.skipped.extend(own.skipped);
    out.skipped.extend(nested.skipped);
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
