//! What the workbench reads from disk: KES curves with their values, the scenes and reduced
//! models the Cloth tab lists, and path completion for the prompt.

use std::path::{Path, PathBuf};

use super::message::{is_model, LoadedCurve};
use crate::kes::Curve;

/// KES values of a curve formatted for the tabs: (name, value with unit), or why not; a
/// tensile curve's F_m with where it came from (as the values' reading gives it).
pub fn format_values(curve: &Curve) -> Vec<(String, String)> {
    crate::kes::values::formatted_for_workbench(curve)
}

fn loaded(curve: Curve) -> LoadedCurve {
    LoadedCurve {
        values: format_values(&curve),
        curve,
        fit: None,
        canonical: None,
        generation: 0,
    }
}

/// A pattern with glob characters (`*`, `?`, `[`).
fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// The paths typed in the open prompt: a glob pattern's matches (`kes_data/*/*.csv`,
/// `kes_data/denim*/`), sorted, or the path itself. A pattern matching nothing is an error
/// naming it.
pub fn expand_open(text: &str) -> Result<Vec<PathBuf>, String> {
    if !is_pattern(text) {
        return Ok(vec![PathBuf::from(text)]);
    }
    let matches = glob::glob(text).map_err(|e| format!("bad pattern `{text}`: {e}"))?;
    let mut paths: Vec<PathBuf> = matches.filter_map(Result::ok).collect();
    if paths.is_empty() {
        return Err(format!("no file or folder matches `{text}`"));
    }
    paths.sort();
    Ok(paths)
}

/// Loads KES files (a folder: its `.csv` files, or those of each sub-folder), each with its
/// KES values; a file named twice is read once.
pub fn load_curves(paths: &[PathBuf]) -> (Vec<LoadedCurve>, Vec<String>) {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        let mut found = crate::kes::folder::KesFiles::default();
        match crate::kes::folder::add_kes_files(p, &mut found) {
            Ok(()) => files.extend(found.files),
            Err(e) => errors.push(e),
        }
    }
    let mut seen = Vec::new();
    let mut curves = Vec::new();
    for f in files {
        let canonical = f.canonicalize().ok();
        if canonical.is_some() && seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical.clone());
        match crate::kes::import::read_kes(&f, Default::default()) {
            Ok(curve) => curves.push(LoadedCurve {
                canonical,
                ..loaded(curve)
            }),
            // a CLI option is no remedy here: the file is
            Err(e) => errors.push(e.without_options()),
        }
    }
    (curves, errors)
}

/// What the open prompt's text opens: the paths or the pattern's matches.
pub fn open(text: &str) -> (Vec<LoadedCurve>, Vec<String>) {
    match expand_open(text) {
        Ok(paths) => load_curves(&paths),
        Err(e) => (Vec::new(), vec![e]),
    }
}

/// The sample fabric built into kestrel, with its KES values.
pub fn sample_curves() -> (Vec<LoadedCurve>, Vec<String>) {
    match crate::kes::sample::sample_fabric() {
        Ok(curves) => (curves.into_iter().map(loaded).collect(), Vec::new()),
        Err(e) => (Vec::new(), vec![e.to_string()]),
    }
}

/// The dynamic scenes of a folder (virtual KES scenes are left out), sorted.
pub fn dynamic_scenes(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| !n.starts_with("kes_"))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The reduced models (`*.krd`) of a folder, sorted.
pub fn reduced_models(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && is_model(p))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The Cloth tab's list: the dynamic scenes of `root/scenes`, then the reduced models of
/// `root/scenes` and of `root` (the working directory when `root` is empty).
pub fn cloth_entries(root: &Path) -> Vec<PathBuf> {
    let scenes = root.join("scenes");
    let mut out = dynamic_scenes(&scenes);
    out.extend(reduced_models(&scenes));
    out.extend(reduced_models(if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    }));
    out
}

/// A path prompt completed: the text with the longest common prefix of the matching entries,
/// and those entries when there are several (folders with a trailing `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    pub candidates: Vec<String>,
}

/// Completes a path prompt; `None` when nothing matches.
pub fn complete_path(text: &str) -> Option<Completion> {
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
            let is_dir = e.path().is_dir();
            (e.file_name().to_string_lossy().into_owned(), is_dir)
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
    let candidates = if names.len() == 1 {
        if first.1 {
            out.push('/');
        }
        Vec::new()
    } else {
        names
            .iter()
            .map(|(n, is_dir)| if *is_dir { format!("{n}/") } else { n.clone() })
            .collect()
    };
    Some(Completion {
        text: out,
        candidates,
    })
}
