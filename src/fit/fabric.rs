//! A fabric's curves (up to six: tensile, shear, bending × warp, weft) fitted into one
//! parameter set, with the fit quality per curve and the provenance of every source file.

use std::time::{Instant, SystemTime};

use rayon::prelude::*;

use super::options::FitOptions;
use super::report::{CurveFit, FitStatus};
use super::strategy::fit_specimens;
use crate::kes::{replicate_groups, Curve, Direction, ReadingRules, ReplicateGroup};
use crate::material::ConnectorLaw;
use crate::params::{CurveFitQuality, FabricParams, FabricProperties, Provenance, SourceFile};

/// The outcome of fitting one fabric.
#[derive(Debug, Clone)]
pub struct FabricFit {
    pub fabric: String,
    pub params: FabricParams,
    pub fits: Vec<CurveFit>,
    pub total_ms: f64,
}

/// Groups curves by their `fabric` metadata, in order of first appearance.
pub fn group_by_fabric(curves: &[Curve]) -> Vec<(String, Vec<&Curve>)> {
    let mut groups: Vec<(String, Vec<&Curve>)> = Vec::new();
    for c in curves {
        match groups.iter_mut().find(|(f, _)| *f == c.fabric) {
            Some((_, g)) => g.push(c),
            None => groups.push((c.fabric.clone(), vec![c])),
        }
    }
    groups
}

/// Curves of one fabric whose laws would take the same place in its card, with the two files:
/// a bias curve's law is stored under warp, so a warp and a bias curve of one test cannot both
/// be written (one law would replace the other). None when every law has its own place.
pub fn slot_clash<'a>(curves: impl IntoIterator<Item = &'a Curve>) -> Option<String> {
    let slot = |d: Direction| match d {
        Direction::Weft => Direction::Weft,
        Direction::Warp | Direction::Bias | Direction::Normal => Direction::Warp,
    };
    let with_law: Vec<&Curve> = curves
        .into_iter()
        .filter(|c| c.test.has_connector_law())
        .collect();
    for (i, a) in with_law.iter().enumerate() {
        let clash = with_law[i + 1..].iter().find(|b| {
            b.fabric == a.fabric
                && b.test == a.test
                && b.direction != a.direction
                && slot(b.direction) == slot(a.direction)
        });
        if let Some(b) = clash {
            return Some(format!(
                "{} ({} {}) and {} ({} {}) of fabric `{}` would both be its warp {} law (a bias \
                 curve's law is stored under warp): fit them apart",
                a.path_name(),
                a.test,
                a.direction,
                b.path_name(),
                b.test,
                b.direction,
                crate::input::printable(&a.fabric),
                a.test
            ));
        }
    }
    None
}

/// UTC now as RFC 3339 to the second (`2026-11-23T07:05:00Z`).
pub(crate) fn utc_now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// SHA-256 of a file's bytes as lowercase hex; None if it cannot be read.
pub(crate) fn sha256_file(path: &std::path::Path) -> Option<String> {
    let bytes = crate::input::read_bytes(path, crate::input::CURVE_FILE_LIMIT).ok()?;
    Some(crate::input::sha256_hex(&bytes))
}

/// The card's source files whose bytes on disk are no longer those its SHA-256 were taken
/// from when the curves were read (changed, deleted or unreadable since): a warning naming
/// each, for the moment the card is written; None when every file still matches.
pub fn sources_changed_on_disk(params: &FabricParams) -> Option<String> {
    let changed: Vec<String> = params
        .provenance
        .sources
        .iter()
        .filter(|s| !s.file.is_empty() && s.sha256 != UNREADABLE)
        .filter_map(|s| {
            let why = match sha256_file(std::path::Path::new(&s.file)) {
                Some(now) if now == s.sha256 => return None,
                Some(_) => "changed",
                None => "gone or unreadable",
            };
            Some(format!("{} ({why})", crate::input::printable(&s.file)))
        })
        .collect();
    (!changed.is_empty()).then(|| {
        format!(
            "sources differ on disk from the bytes read: {}; the card's sha256 are of the bytes \
             read and fitted",
            changed.join(", ")
        )
    })
}

/// The provenance hash of a source that could not be read.
const UNREADABLE: &str = "unreadable";

/// Fits every curve of one fabric and assembles its parameter set. The specimens of one
/// curve (same test and direction: `kes::replicate_groups`) are fitted jointly, one law for
/// all; `fits` holds one fit per group. Curves that cannot be fitted are reported in `fits`
/// with their reason and leave their law out of the set.
pub fn fit_fabric(fabric: &str, curves: &[&Curve], options: &FitOptions) -> FabricFit {
    let start = Instant::now();
    let all = curves;
    // compression and surface curves carry no law: they are not fitted
    let curves: Vec<&Curve> = curves
        .iter()
        .copied()
        .filter(|c| c.test.has_connector_law())
        .collect();
    let groups = replicate_groups(curves.iter().copied());
    let fits: Vec<CurveFit> = groups
        .iter()
        .map(|g| {
            let specimens: Vec<&Curve> = g.members.iter().map(|&i| curves[i]).collect();
            fit_specimens(&specimens, options)
        })
        .collect();
    let mut params = assemble_groups(fabric, &curves, &groups, &fits);
    add_properties(&mut params, all);
    FabricFit {
        fabric: fabric.to_string(),
        params,
        fits,
        total_ms: start.elapsed().as_secs_f64() * 1e3,
    }
}

/// The card's `[properties]` (areal density, thickness, friction coefficient) read from the
/// fabric's curves `all` (their weight lines, compression and friction curves); the files of
/// the curves without a law join the sources.
pub fn add_properties(params: &mut FabricParams, all: &[&Curve]) {
    params.properties = FabricProperties::from_curves(all, &ReadingRules::default());
    let sources = &mut params.provenance.sources;
    for c in all.iter().filter(|c| !c.test.has_connector_law()) {
        sources.push(source_file(c));
    }
}

/// A fabric's parameter set from fits already made: `fits[i]` of `curves[i]`, where the fit
/// of a specimen of a replicate group is its group's joint fit (the first member's is used).
pub fn assemble_fabric_params(fabric: &str, curves: &[&Curve], fits: &[CurveFit]) -> FabricParams {
    let groups = replicate_groups(curves.iter().copied());
    let group_fits: Vec<CurveFit> = groups.iter().map(|g| fits[g.members[0]].clone()).collect();
    assemble_groups(fabric, curves, &groups, &group_fits)
}

/// The parameter set from one fit per replicate group (`groups` of `curves`, in order).
fn assemble_groups(
    fabric: &str,
    curves: &[&Curve],
    groups: &[ReplicateGroup],
    fits: &[CurveFit],
) -> FabricParams {
    let mut params = FabricParams::new(fabric);
    for (group, fit) in groups.iter().zip(fits) {
        let curve = curves[group.members[0]];
        let laws = match curve.direction {
            Direction::Weft => &mut params.weft,
            Direction::Warp | Direction::Bias | Direction::Normal => &mut params.warp,
        };
        match fit.law() {
            Some(ConnectorLaw::Traction(l)) => laws.traction = Some(l),
            Some(ConnectorLaw::Bending(l)) => laws.bending = Some(l),
            Some(ConnectorLaw::Shear(l)) => laws.shear = Some(l),
            None => {}
        }
        let status_note = match &fit.status {
            FitStatus::Fitted => fit.termination.to_string(),
            FitStatus::Failed(reason) => format!("failed: {reason}"),
        };
        params.fits.push(CurveFitQuality {
            file: fit.file.clone(),
            test: curve.test.to_string(),
            direction: curve.direction.to_string(),
            model: fit.model.clone(),
            nrmse: fit.nrmse.is_finite().then_some(fit.nrmse),
            iterations: fit.iterations,
            termination: status_note,
            offset: fit.offset(),
            intervals95: fit
                .params
                .iter()
                .filter_map(|p| Some((p.name.to_string(), p.interval95?)))
                .collect(),
            correlation: fit.correlation.clone(),
            pinned: fit
                .params
                .iter()
                .filter(|p| {
                    p.pinned
                        .as_deref()
                        .is_some_and(|why| why != super::report::FIXED_BY_THE_MODEL)
                })
                .map(|p| format!("{}: {}", p.name, p.pinned.as_deref().unwrap_or_default()))
                .collect(),
            not_identified: fit
                .params
                .iter()
                .filter(|p| p.not_identified)
                .map(|p| p.name.to_string())
                .collect(),
            interval_notes: fit
                .params
                .iter()
                .filter_map(|p| Some(format!("{}: {}", p.name, p.interval_note.as_deref()?)))
                .collect(),
            specimens: fit.specimens.clone(),
        });
    }
    params.provenance = Provenance {
        kestrel_version: env!("CARGO_PKG_VERSION").to_string(),
        date: utc_now_rfc3339(),
        sources: curves.iter().map(|c| source_file(c)).collect(),
    };
    params
}

/// A curve's file, its SHA-256 and metadata, for the provenance: the hash of the bytes read
/// when the curve was (the file may have changed since); a curve made elsewhere, the file's.
fn source_file(c: &Curve) -> SourceFile {
    let path = c.source.clone().unwrap_or_default();
    SourceFile {
        file: path.display().to_string(),
        sha256: c
            .sha256
            .clone()
            .or_else(|| sha256_file(&path))
            .unwrap_or_else(|| UNREADABLE.into()),
        metadata: c.metadata.clone(),
    }
}

/// Fits several fabrics in parallel (rayon), calling `progress` after each one.
pub fn fit_fabrics(
    curves: &[Curve],
    options: &FitOptions,
    progress: &(dyn Fn(&FabricFit) + Sync),
) -> Vec<FabricFit> {
    let groups = group_by_fabric(curves);
    groups
        .par_iter()
        .map(|(fabric, cs)| {
            let fit = fit_fabric(fabric, cs, options);
            progress(&fit);
            fit
        })
        .collect()
}

/// A file name for a fabric: lowercase, words joined by `-`. ASCII letters and digits are
/// kept, and so are the letters and digits of scripts other than Latin (`絹クレープ`), so
/// distinct names give distinct files; anything else (spaces, punctuation, path separators,
/// control characters, Latin letters with accents) separates words.
pub fn fabric_slug(fabric: &str) -> String {
    let mut s = String::new();
    for ch in fabric.chars() {
        if ch.is_ascii_alphanumeric() {
            s.push(ch.to_ascii_lowercase());
        } else if ch.is_alphanumeric() && !latin_or_latin1(ch) {
            s.extend(ch.to_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() {
        "fabric".into()
    } else {
        s
    }
}

/// Latin-1 and the Latin extensions (`é`, `ß`, `µ`, `ŋ`): separators in a file name, as they
/// always were, so a Latin name's file keeps its name.
fn latin_or_latin1(ch: char) -> bool {
    matches!(ch, '\u{80}'..='\u{24f}' | '\u{1e00}'..='\u{1eff}' | '\u{2c60}'..='\u{2c7f}' | '\u{a720}'..='\u{a7ff}' | '\u{ab30}'..='\u{ab6f}' | '\u{ff21}'..='\u{ff5a}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_and_date_are_well_formed() {
        assert_eq!(fabric_slug("Wool suiting W1"), "wool-suiting-w1");
        assert_eq!(fabric_slug("  "), "fabric");
        assert_eq!(fabric_slug("Crêpe de Chine"), "cr-pe-de-chine");
        assert_eq!(fabric_slug("絹クレープ No.2"), "絹クレープ-no-2");
        assert_eq!(fabric_slug("Шёлк/Silk"), "шёлк-silk");
        assert_eq!(fabric_slug("a\u{1b}[31m\u{3000}b"), "a-31m-b");
        let before = SystemTime::now();
        let d = utc_now_rfc3339();
        assert_eq!(d.len(), 20, "{d}");
        assert!(d.ends_with('Z') && d.as_bytes()[10] == b'T', "{d}");
        // It reads back as the moment it was taken, to the second.
        let t = humantime::parse_rfc3339(&d).unwrap();
        let lag = before.duration_since(t).map_or(0, |l| l.as_secs());
        let lead = t.duration_since(before).map_or(0, |l| l.as_secs());
        assert!(lag <= 1 && lead <= 2, "{d}");
    }
}
