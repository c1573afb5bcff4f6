//! Fabric parameter sets: every fitted law of a fabric (warp and weft × traction, bending,
//! shear) in SI units, the fabric's sheet properties, the fit quality per curve and the
//! provenance; TOML or JSON.

mod properties;
pub use properties::{
    parse_friction_coefficient, parse_thickness, parse_weight, FabricProperties, QuantityError,
};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::atomic::{write_atomic, WriteError};
use crate::friction::ParamError;
use crate::friction::{short_number, FrictionShape};
use crate::kes::{Direction, KesTest};
use crate::material::{BendingLaw, ConnectorLaw, FrictionLaw, MaterialLaw, ShearLaw, TractionLaw};

/// Version of the parameter file format.
pub(crate) const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Error)]
pub enum ParamsError {
    #[error("cannot read {0}")]
    Read(#[from] crate::input::Unreadable),
    #[error("{path}: not a kestrel parameter file: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {law} ({direction}): {source}")]
    Invalid {
        path: PathBuf,
        direction: &'static str,
        law: &'static str,
        #[source]
        source: ParamError,
    },
    #[error(
        "{path}: properties.{key} = {shown} is outside {range}",
        shown = crate::friction::short_number(*.value)
    )]
    Property {
        path: PathBuf,
        key: &'static str,
        value: f64,
        range: String,
    },
    #[error(
        "{path}: fits ({curve}): offset = {shown} is outside [-{bound}, {bound}] {unit}",
        shown = crate::friction::short_number(*.value),
        bound = crate::friction::short_number(*.bound)
    )]
    Offset {
        path: PathBuf,
        /// The entry's test, direction and file.
        curve: String,
        value: f64,
        bound: f64,
        unit: &'static str,
    },
    #[error("cannot encode parameters: {0}")]
    Encode(String),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// A physically meaningful range [lo, hi] of a parameter read from a file, and its unit: a
/// fabric's law outside it is a unit mistake or a corrupted file (ranges in docs/params.md).
type Range = (f64, f64, &'static str);

const TRACTION_K: Range = (1e-3, 1e7, "N/m");
const STRAIN: Range = (1e-6, 1.0, "-");
const BENDING_K: Range = (1e-12, 1.0, "N*m");
const CURVATURE: Range = (-1e4, 1e4, "1/m");
const SHEAR_K: Range = (1e-6, 1e5, "N/(m*rad)");
const ANGLE: Range = (-1.0, 1.0, "rad");
/// Friction of each law: the level's range and the friction length ε_f's range.
const TRACTION_FRICTION: [Range; 2] = [(0.0, 1e5, "N/m"), (1e-7, 1.0, "-")];
const BENDING_FRICTION: [Range; 2] = [(0.0, 10.0, "N"), (1e-5, 1e4, "1/m")];
const SHEAR_FRICTION: [Range; 2] = [(0.0, 1e5, "N/m"), (1e-7, 1.0, "rad")];
/// Dahl's exponent α [-].
const DAHL_ALPHA: Range = (1.0, 100.0, "-");

/// Checks a law's parameters against the physical ranges of a fabric's laws (docs/params.md):
/// a card's, and a law file's alone.
pub(crate) fn law_within_physics(law: &ConnectorLaw) -> Result<(), ParamError> {
    match law {
        ConnectorLaw::Traction(l) => {
            let elastic = [("k_t", l.k_t, TRACTION_K), ("eps1", l.eps1, STRAIN)];
            within_physics(&elastic, &l.friction, TRACTION_FRICTION)
        }
        ConnectorLaw::Bending(l) => {
            let elastic = [("k_b", l.k_b, BENDING_K), ("k0", l.k0, CURVATURE)];
            within_physics(&elastic, &l.friction, BENDING_FRICTION)
        }
        ConnectorLaw::Shear(l) => {
            let elastic = [("k_s", l.k_s, SHEAR_K), ("theta0", l.theta0, ANGLE)];
            within_physics(&elastic, &l.friction, SHEAR_FRICTION)
        }
    }
}

/// Checks the elastic parameters and the friction term of a law against their ranges.
fn within_physics(
    elastic: &[(&'static str, f64, Range)],
    friction: &FrictionLaw,
    [level, length]: [Range; 2],
) -> Result<(), ParamError> {
    let (eps_f, alpha) = match friction.shape {
        FrictionShape::Dahl { eps_f, alpha } => (eps_f, Some(alpha)),
        FrictionShape::Bs2 { eps_f, .. } => (eps_f, None),
    };
    let friction = [
        ("friction.level", friction.level, level),
        ("eps_f", eps_f, length),
    ];
    let alpha = alpha.map(|a| ("alpha", a, DAHL_ALPHA));
    for &(field, value, (lo, hi, unit)) in elastic.iter().chain(&friction).chain(&alpha) {
        if !(value >= lo && value <= hi) {
            return Err(ParamError::new(
                field,
                value,
                format!(
                    "outside the physical range [{}, {}] {unit}",
                    short_number(lo),
                    short_number(hi)
                ),
            ));
        }
    }
    Ok(())
}

/// The three laws of one direction (warp or weft); a law is absent when no curve gave it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionLaws {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traction: Option<TractionLaw>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bending: Option<BendingLaw>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shear: Option<ShearLaw>,
}

/// The quality of one curve's fit. Its default is a fit with no statistics: every optional
/// field absent, as a file without them reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveFitQuality {
    pub file: String,
    pub test: String,
    pub direction: String,
    /// Friction model chosen (`dahl`, `dahl+mu`, `bs2`, `bs2+mu`).
    pub model: String,
    /// RMS(residual) / (max − min of the measured force), as a fraction (absent: not fitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nrmse: Option<f64>,
    pub iterations: usize,
    pub termination: String,
    /// The instrument's force zero offset fitted with the law (`kestrel fit --offset fit`), in
    /// the law's force unit (N/m for traction and shear, N for bending); absent: none. The
    /// NRMSE above is the law plus this offset against the curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<f64>,
    /// 95 % Wald intervals [low, high] of the fitted parameters, SI (value ∓ 1.96·s.e.).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub intervals95: BTreeMap<String, [f64; 2]>,
    /// Correlation matrix of the fitted parameters (Wald, from the fit's JᵀJ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation: Option<Correlation>,
    /// Parameters the curve could not identify, pinned at their value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned: Vec<String>,
    /// Fitted parameters the curve does not identify (JᵀJ singular along them: no standard
    /// error, interval or correlation is given for them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_identified: Vec<String>,
    /// What an interval means beyond its numbers, `name: text`: a parameter determined only
    /// with a pinned one held at its value (not identified; the combination the curve measures,
    /// with its interval), or an interval that reaches a bound of the parameter (clipped to it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interval_notes: Vec<String>,
    /// Replicates fitted jointly (one law for several specimens of one curve): each
    /// specimen's NRMSE; `nrmse` above is then the pooled figure. Absent for one curve.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub specimens: Vec<SpecimenNrmse>,
}

/// One specimen of a joint fit: the law driven along its path from a virgin state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecimenNrmse {
    pub file: String,
    pub samples: usize,
    /// [`nrmse`] of the law along this specimen's path, as a fraction.
    pub nrmse: f64,
}

/// The correlation matrix of the parameters that have a standard error (Wald, from
/// s²(JᵀJ)⁻¹ propagated to the physical parameters), in report order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Correlation {
    pub names: Vec<String>,
    /// `matrix\[i\]\[j\]` = corr(names\[i\], names\[j\]); 1 on the diagonal.
    pub matrix: Vec<Vec<f64>>,
}

/// A law as it was scored: the connector law and the instrument's force zero offset fitted
/// with it. Everything that drives a fitted law along a path (fit reports, `simulate`, `plot`,
/// `validate`, the workbench) goes through [`FittedLaw::forces`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FittedLaw {
    pub law: ConnectorLaw,
    /// Force zero offset [N/m, or N for bending] added to the law's force (0: none fitted).
    pub offset: f64,
}

impl FittedLaw {
    /// Forces along `path` (SI strains in order) from a virgin state: F_law(x) + offset.
    pub fn forces(&self, path: &[f64]) -> Vec<f64> {
        let mut f = self.law.drive(path);
        if self.offset != 0.0 {
            f.iter_mut().for_each(|v| *v += self.offset);
        }
        f
    }
}

/// RMS(model − measured)/(max − min of measured): the NRMSE every report shows, as a fraction
/// (NaN when the measured force has no range or the lengths differ).
pub fn nrmse(measured: &[f64], model: &[f64]) -> f64 {
    if measured.len() != model.len() || measured.is_empty() {
        return f64::NAN;
    }
    let (lo, hi) = measured
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let rss: f64 = measured
        .iter()
        .zip(model)
        .map(|(y, f)| (f - y) * (f - y))
        .sum();
    (rss / measured.len() as f64).sqrt() / (hi - lo)
}

/// A source file of the fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    pub file: String,
    pub sha256: String,
    /// The file's metadata lines (`key: value`).
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    pub kestrel_version: String,
    /// UTC date and time of the fit, RFC 3339.
    pub date: String,
    #[serde(default)]
    pub sources: Vec<SourceFile>,
}

/// A fabric's parameter set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricParams {
    pub kestrel_params: u32,
    pub fabric: String,
    /// Units of every law parameter, for the reader of the file.
    #[serde(default)]
    pub units: BTreeMap<String, String>,
    #[serde(default)]
    pub warp: DirectionLaws,
    #[serde(default)]
    pub weft: DirectionLaws,
    /// Areal density, thickness and surface friction (the `[properties]` table), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<FabricProperties>,
    #[serde(default)]
    pub fits: Vec<CurveFitQuality>,
    #[serde(default)]
    pub provenance: Provenance,
}

/// The unit of each law parameter as written in a parameter file.
pub(crate) fn units_table() -> BTreeMap<String, String> {
    [
        ("traction.k_t", "N/m"),
        ("traction.eps1", "- (strain fraction)"),
        ("traction.f1", "N/m"),
        ("traction.eps1_aligned", "- (strain fraction)"),
        ("traction.friction.level", "N/m"),
        ("traction.friction.shape.eps_f", "- (strain fraction)"),
        (
            "bending.k_b",
            "N*m (moment per width [N] per curvature [1/m])",
        ),
        ("bending.k0", "1/m"),
        ("bending.friction.level", "N (moment per width, N*m/m)"),
        ("bending.friction.shape.eps_f", "1/m (curvature)"),
        ("shear.k_s", "N/(m*rad)"),
        ("shear.theta0", "rad"),
        ("shear.friction.level", "N/m"),
        ("shear.friction.shape.eps_f", "rad"),
        ("friction.mu", "- (level growth per unit elastic load)"),
        ("friction.shape.eta", "- (fast/slow length ratio)"),
        ("friction.shape.ratio", "- (f2/f1)"),
        ("friction.shape.alpha", "- (Dahl exponent)"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// File format, from the extension: `.json` is JSON, anything else TOML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamsFormat {
    Toml,
    Json,
}

impl ParamsFormat {
    pub(crate) fn from_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => ParamsFormat::Json,
            _ => ParamsFormat::Toml,
        }
    }
}

impl FabricParams {
    pub fn new(fabric: impl Into<String>) -> Self {
        Self {
            kestrel_params: FORMAT_VERSION,
            fabric: fabric.into(),
            units: units_table(),
            warp: DirectionLaws::default(),
            weft: DirectionLaws::default(),
            properties: None,
            fits: Vec::new(),
            provenance: Provenance::default(),
        }
    }

    /// The laws of `direction` (bias reads as warp).
    pub fn direction(&self, direction: Direction) -> &DirectionLaws {
        match direction {
            Direction::Weft => &self.weft,
            Direction::Warp | Direction::Bias | Direction::Normal => &self.warp,
        }
    }

    /// The law of `test` in `direction` with the offset it was fitted with (from the first
    /// `[[fits]]` entry of that test and direction); None when the file has no such law.
    pub fn fitted_law(&self, test: KesTest, direction: Direction) -> Option<FittedLaw> {
        let laws = self.direction(direction);
        let law = match test {
            KesTest::Tensile => laws.traction.map(ConnectorLaw::Traction),
            KesTest::Shear => laws.shear.map(ConnectorLaw::Shear),
            KesTest::Bending => laws.bending.map(ConnectorLaw::Bending),
            KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => None,
        }?;
        let same_slot = |d: &str| match direction {
            Direction::Weft => d == Direction::Weft.name(),
            Direction::Warp | Direction::Bias | Direction::Normal => d != Direction::Weft.name(),
        };
        let offset = self
            .fits
            .iter()
            .find(|f| f.test == test.name() && same_slot(&f.direction))
            .and_then(|f| f.offset)
            .unwrap_or(0.0);
        Some(FittedLaw { law, offset })
    }

    /// Checks the card as [`FabricParams::read`] does (every law valid and within its
    /// physical range, the properties within theirs); `path` names it in errors.
    pub fn validate(&self, path: &Path) -> Result<(), ParamsError> {
        if let Some(p) = &self.properties {
            p.validate(path)?;
        }
        // the name is printed and written: no escape sequences
        if self.fabric.chars().any(crate::input::unprintable) {
            return Err(ParamsError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "fabric = \"{}\" holds a control character — expected printable text (no \
                     terminal or bidirectional controls)",
                    crate::input::printable(&self.fabric)
                ),
            });
        }
        // a fitted force offset is a force of the law's own scale: finite, and within the
        // friction level's range (the offset is a tenth of the curve's force range at most)
        for f in &self.fits {
            let Some(value) = f.offset else { continue };
            let (_, bound, unit) = match f.test.as_str() {
                "bending" => BENDING_FRICTION[0],
                "shear" => SHEAR_FRICTION[0],
                _ => TRACTION_FRICTION[0],
            };
            if !(value.is_finite() && value.abs() <= bound) {
                return Err(ParamsError::Offset {
                    path: path.to_path_buf(),
                    curve: crate::input::printable(&format!(
                        "{} {}, {}",
                        f.test, f.direction, f.file
                    )),
                    value,
                    bound,
                    unit,
                });
            }
        }
        for (name, laws) in [("warp", &self.warp), ("weft", &self.weft)] {
            let invalid = |law, source| ParamsError::Invalid {
                path: path.to_path_buf(),
                direction: name,
                law,
                source,
            };
            if let Some(l) = &laws.traction {
                l.validate().map_err(|e| invalid("traction", e))?;
                law_within_physics(&ConnectorLaw::Traction(*l))
                    .map_err(|e| invalid("traction", e))?;
            }
            if let Some(l) = &laws.bending {
                l.validate().map_err(|e| invalid("bending", e))?;
                law_within_physics(&ConnectorLaw::Bending(*l))
                    .map_err(|e| invalid("bending", e))?;
            }
            if let Some(l) = &laws.shear {
                l.validate().map_err(|e| invalid("shear", e))?;
                law_within_physics(&ConnectorLaw::Shear(*l)).map_err(|e| invalid("shear", e))?;
            }
        }
        Ok(())
    }

    pub(crate) fn to_string(&self, format: ParamsFormat) -> Result<String, ParamsError> {
        match format {
            ParamsFormat::Toml => {
                toml::to_string(self).map_err(|e| ParamsError::Encode(e.to_string()))
            }
            ParamsFormat::Json => serde_json::to_string_pretty(self)
                .map(|s| s + "\n")
                .map_err(|e| ParamsError::Encode(e.to_string())),
        }
    }

    /// Parses a parameter file's text and validates it; `path` names it in errors.
    pub fn parse(text: &str, format: ParamsFormat, path: &Path) -> Result<Self, ParamsError> {
        // a byte-order mark, as some editors write, is not part of the text (TOML or JSON)
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let parsed: Result<Self, String> = match format {
            ParamsFormat::Toml => {
                toml::from_str(text).map_err(|e| crate::input::clipped(&e.to_string()))
            }
            ParamsFormat::Json => {
                serde_json::from_str(text).map_err(|e| crate::input::clipped(&e.to_string()))
            }
        };
        let params = parsed.map_err(|message| ParamsError::Parse {
            path: path.to_path_buf(),
            message,
        })?;
        if params.kestrel_params != FORMAT_VERSION {
            return Err(ParamsError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "format version {} (this kestrel reads {FORMAT_VERSION})",
                    params.kestrel_params
                ),
            });
        }
        params.validate(path)?;
        Ok(params)
    }

    /// Reads a parameter file (TOML, or JSON for `.json`) and validates every law.
    pub fn read(path: &Path) -> Result<Self, ParamsError> {
        let text = crate::input::file_text(path, crate::input::SMALL_FILE_LIMIT).map_err(|e| {
            match crate::input::binary_kind_of(path) {
                Some(what) => ParamsError::Parse {
                    path: path.to_path_buf(),
                    message: format!("not a fabric card but {what}"),
                },
                None => ParamsError::Read(e),
            }
        })?;
        Self::parse(&text, ParamsFormat::from_path(path), path)
    }

    /// Validates (a card kestrel could not read back is not written) and writes atomically;
    /// refuses to overwrite unless `force`.
    pub fn write(&self, path: &Path, format: ParamsFormat, force: bool) -> Result<(), ParamsError> {
        self.validate(path)?;
        let text = self.to_string(format)?;
        write_atomic(path, text.as_bytes(), force)?;
        Ok(())
    }
}
