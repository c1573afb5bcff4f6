//! What the workbench reads from disk: KES curves with their values, the scenes and reduced
//! models the Cloth tab lists, and path completion for the prompt.

use std::path::{Path, PathBuf};

use super::message::{is_model, LoadedCurve};
use crate::kes::Curve;

/// KES values of a curve formatted for the tabs: (name, value with unit), or why not.
pub fn format_values(curve: &Curve) -> Vec<(String, String)> {
    crate::kes::values::formatted(curve)
}

fn loaded(curve: Curve) -> LoadedCurve {
    LoadedCurve {
        values: format_values(&curve),
        curve,
        fit: None,
    }
}

/// Loads KES files (a folder loads every `.csv` in it, sorted), each with its KES values.
pub fn load_curves(paths: &[PathBuf]) -> (Vec<LoadedCurve>, Vec<String>) {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                .map(|rd| {
                    rd.filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|f| f.extension().is_some_and(|e| e == "csv"))
                        .collect()
                })
                .unwrap_or_default();
            entries.sort();
            files.extend(entries);
        } else {
            files.push(p.clone());
        }
    }
    let mut curves = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match crate::kes::import::read_kes(&f, Default::default()) {
            Ok(curve) => curves.push(loaded(curve)),
            Err(e) => errors.push(e.to_string()),
        }
    }
    (curves, errors)
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

/// Completes a path prompt: the longest common prefix of the matching entries.
pub fn complete_path(text: &str) -> Option<String> {
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
            (
                e.file_name().to_string_lossy().into_owned(),
                e.file_type().map(|t| t.is_dir()).unwrap_or(false),
            )
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
    if names.len() == 1 && first.1 {
        out.push('/');
    }
    Some(out)
}
