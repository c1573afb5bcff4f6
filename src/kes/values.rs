//! KES characteristic values read from any curve, in Kawabata units: EMT [%], LT [-],
//! WT [gf·cm/cm²], RT [%], G [gf/(cm·deg)], 2HG, 2HG5 [gf/cm], B [gf·cm²/cm], 2HB [gf·cm/cm],
//! T0, TM \[mm\], LC [-], WC [gf·cm/cm²], RC, EMC [%], MIU, MMD [-], SMD \[µm\], W [mg/cm²].

mod fb34;
mod generic_loop;
mod loops;
mod rules;
mod tensile;
pub use fb34::PM_SHORTFALL;
pub use generic_loop::{loop_values, LoopValues};
pub use loops::TURN_MARGIN;
pub(crate) use rules::KES_TENSILE_MAX_FORCE;
pub use rules::{ReadingRules, REVERSAL_FRACTION};
pub(crate) use tensile::FORCE_COLUMN_UNIT;
use tensile::REVERSED_RETURN;
pub use tensile::{FM_ABOVE, FM_BELOW, FM_TOLERANCE};

use std::fmt;

use serde::Serialize;

use super::path::{Branch, Path};
use super::units::kes_scale;
use super::{Curve, KesTest, MG_PER_CM2_KG_PER_M2};
use loops::{loop_test, LoopReading};

/// The KES values of one curve, in Kawabata units; `None` where the test does not give it or
/// the curve cannot (see `KesReading::unavailable`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct KesValues {
    /// Strain at the turning point (maximum load) [%].
    #[serde(rename = "EMT", skip_serializing_if = "Option::is_none")]
    pub emt: Option<f64>,
    /// Linearity WT / (F_m·EMT/2) [-].
    #[serde(rename = "LT", skip_serializing_if = "Option::is_none")]
    pub lt: Option<f64>,
    /// Tensile energy ∫F dε on loading [gf·cm/cm²].
    #[serde(rename = "WT", skip_serializing_if = "Option::is_none")]
    pub wt: Option<f64>,
    /// Resilience: energy returned on unloading / WT [%].
    #[serde(rename = "RT", skip_serializing_if = "Option::is_none")]
    pub rt: Option<f64>,
    /// Shear rigidity [gf/(cm·deg)].
    #[serde(rename = "G", skip_serializing_if = "Option::is_none")]
    pub g: Option<f64>,
    /// Shear hysteresis width at ±0.5° [gf/cm].
    #[serde(rename = "2HG", skip_serializing_if = "Option::is_none")]
    pub hg: Option<f64>,
    /// Shear hysteresis width at ±5° [gf/cm].
    #[serde(rename = "2HG5", skip_serializing_if = "Option::is_none")]
    pub hg5: Option<f64>,
    /// Bending rigidity [gf·cm²/cm].
    #[serde(rename = "B", skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    /// Bending hysteresis width at ±1 cm⁻¹ [gf·cm/cm].
    #[serde(rename = "2HB", skip_serializing_if = "Option::is_none")]
    pub hb: Option<f64>,
    /// Thickness at 0.5 gf/cm² \[mm\].
    #[serde(rename = "T0", skip_serializing_if = "Option::is_none")]
    pub t0: Option<f64>,
    /// Thickness at P_m = 50 gf/cm² \[mm\].
    #[serde(rename = "TM", skip_serializing_if = "Option::is_none")]
    pub tm: Option<f64>,
    /// Compression linearity WC / (P_m(T0 − TM)/2) [-].
    #[serde(rename = "LC", skip_serializing_if = "Option::is_none")]
    pub lc: Option<f64>,
    /// Compression energy ∫P dT from TM to T0 [gf·cm/cm²].
    #[serde(rename = "WC", skip_serializing_if = "Option::is_none")]
    pub wc: Option<f64>,
    /// Compression resilience: energy returned on recovery / WC [%].
    #[serde(rename = "RC", skip_serializing_if = "Option::is_none")]
    pub rc: Option<f64>,
    /// Compressibility 100(T0 − TM)/T0 [%].
    #[serde(rename = "EMC", skip_serializing_if = "Option::is_none")]
    pub emc: Option<f64>,
    /// Mean coefficient of friction over X [-].
    #[serde(rename = "MIU", skip_serializing_if = "Option::is_none")]
    pub miu: Option<f64>,
    /// Mean deviation of the coefficient of friction [-].
    #[serde(rename = "MMD", skip_serializing_if = "Option::is_none")]
    pub mmd: Option<f64>,
    /// Geometrical roughness: mean deviation of the height \[µm\].
    #[serde(rename = "SMD", skip_serializing_if = "Option::is_none")]
    pub smd: Option<f64>,
    /// Weight (areal density) [mg/cm²] (1 mg/cm² = 10 g/m²).
    #[serde(rename = "W", skip_serializing_if = "Option::is_none")]
    pub w: Option<f64>,
}

/// A value's name, its KES unit, and the test that gives it (W, a metadata line, is read from
/// any curve that carries it and listed with compression).
pub const VALUE_NAMES: [(&str, &str, KesTest); 19] = [
    ("EMT", "%", KesTest::Tensile),
    ("LT", "-", KesTest::Tensile),
    ("WT", "gf*cm/cm^2", KesTest::Tensile),
    ("RT", "%", KesTest::Tensile),
    ("G", "gf/(cm*deg)", KesTest::Shear),
    ("2HG", "gf/cm", KesTest::Shear),
    ("2HG5", "gf/cm", KesTest::Shear),
    ("B", "gf*cm^2/cm", KesTest::Bending),
    ("2HB", "gf*cm/cm", KesTest::Bending),
    ("T0", "mm", KesTest::Compression),
    ("TM", "mm", KesTest::Compression),
    ("LC", "-", KesTest::Compression),
    ("WC", "gf*cm/cm^2", KesTest::Compression),
    ("RC", "%", KesTest::Compression),
    ("EMC", "%", KesTest::Compression),
    ("MIU", "-", KesTest::Friction),
    ("MMD", "-", KesTest::Friction),
    ("SMD", "um", KesTest::Roughness),
    ("W", "mg/cm^2", KesTest::Compression),
];

impl KesValues {
    /// The value called `name` (`EMT`, `2HG`, …).
    pub fn get(&self, name: &str) -> Option<f64> {
        match name {
            "EMT" => self.emt,
            "LT" => self.lt,
            "WT" => self.wt,
            "RT" => self.rt,
            "G" => self.g,
            "2HG" => self.hg,
            "2HG5" => self.hg5,
            "B" => self.b,
            "2HB" => self.hb,
            "T0" => self.t0,
            "TM" => self.tm,
            "LC" => self.lc,
            "WC" => self.wc,
            "RC" => self.rc,
            "EMC" => self.emc,
            "MIU" => self.miu,
            "MMD" => self.mmd,
            "SMD" => self.smd,
            "W" => self.w,
            _ => None,
        }
    }

    /// Sets the value called `name` (a name not in `VALUE_NAMES` is ignored).
    pub fn set(&mut self, name: &str, value: Option<f64>) {
        let slot = match name {
            "EMT" => &mut self.emt,
            "LT" => &mut self.lt,
            "WT" => &mut self.wt,
            "RT" => &mut self.rt,
            "G" => &mut self.g,
            "2HG" => &mut self.hg,
            "2HG5" => &mut self.hg5,
            "B" => &mut self.b,
            "2HB" => &mut self.hb,
            "T0" => &mut self.t0,
            "TM" => &mut self.tm,
            "LC" => &mut self.lc,
            "WC" => &mut self.wc,
            "RC" => &mut self.rc,
            "EMC" => &mut self.emc,
            "MIU" => &mut self.miu,
            "MMD" => &mut self.mmd,
            "SMD" => &mut self.smd,
            "W" => &mut self.w,
            _ => return,
        };
        *slot = value;
    }

    /// Every value present, in the order of `VALUE_NAMES`.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        VALUE_NAMES
            .iter()
            .filter_map(|&(name, _, _)| self.get(name).map(|v| (name, v)))
    }
}

/// A value the test gives but this curve could not, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub value: &'static str,
    pub reason: String,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} unavailable: {}", self.value, self.reason)
    }
}

/// The values of a curve, the ones it could not give, and remarks on how some were read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KesReading {
    pub values: KesValues,
    pub unavailable: Vec<Unavailable>,
    pub notes: Vec<String>,
    /// The F_m a tensile curve's values were read at, and where it came from (None: not a
    /// tensile curve, or none could be set).
    pub max_force: Option<MaxForce>,
}

/// Where the F_m of LT = WT / (F_m·EMT/2) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MaxForceSource {
    /// The instrument's nominal F_m ([`ReadingRules::tensile_max_force`]).
    Nominal,
    /// The file's `# max force` metadata line.
    Metadata,
    /// The curve's own largest force on loading (it went to another force).
    Curve,
    /// Replicates whose F_m came from different places (their F_m within 2 % of each other).
    Mixed,
}

impl MaxForceSource {
    /// The name JSON gives it: `nominal`, `metadata`, `curve`, `mixed`.
    pub fn name(self) -> &'static str {
        match self {
            MaxForceSource::Nominal => "nominal",
            MaxForceSource::Metadata => "metadata",
            MaxForceSource::Curve => "curve",
            MaxForceSource::Mixed => "mixed",
        }
    }
}

impl fmt::Display for MaxForceSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MaxForceSource::Nominal => "nominal",
            MaxForceSource::Metadata => "max force line",
            MaxForceSource::Curve => "largest force",
            MaxForceSource::Mixed => "mixed",
        })
    }
}

/// The F_m a tensile curve's values were read at [gf/cm] and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MaxForce {
    pub gf_cm: f64,
    pub from: MaxForceSource,
}

impl fmt::Display for MaxForce {
    /// `500 gf/cm (nominal)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} gf/cm ({})",
            super::units::four_digits(self.gf_cm),
            self.from
        )
    }
}

impl KesReading {
    fn missing(&mut self, value: &'static str, reason: impl Into<String>) {
        self.unavailable.push(Unavailable {
            value,
            reason: reason.into(),
        });
    }
}

/// Least-squares line through the points: (mean x, mean y, slope); `None` with fewer than two
/// distinct x.
fn line_fit(points: impl Iterator<Item = (f64, f64)> + Clone) -> Option<(f64, f64, f64)> {
    let (mut n, mut sx, mut sy) = (0.0, 0.0, 0.0);
    for (x, y) in points.clone() {
        n += 1.0;
        sx += x;
        sy += y;
    }
    if n < 2.0 {
        return None;
    }
    let (mx, my) = (sx / n, sy / n);
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for (x, y) in points {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
    }
    (sxx > 0.0).then(|| (mx, my, sxy / sxx))
}

/// ∫y dx by trapezoids over samples `range` (signed: a falling x gives a negative integral).
fn trapezoid(x: &[f64], y: &[f64], branch: &Branch) -> f64 {
    (branch.start..branch.end)
        .map(|i| 0.5 * (y[i] + y[i + 1]) * (x[i + 1] - x[i]))
        .sum()
}

/// A number in a message: four significant digits, no trailing zeros.
fn short(v: f64) -> String {
    super::units::four_digits(v)
}

/// A closed interval with a little slack for values converted SI → KES units.
fn within(v: f64, lo: f64, hi: f64) -> bool {
    let slack = 1e-9 * lo.abs().max(hi.abs()).max(1.0);
    v >= lo - slack && v <= hi + slack
}

/// The samples of `b` whose x lies in [lo, hi].
fn samples_in<'a>(
    x: &'a [f64],
    y: &'a [f64],
    b: &Branch,
    lo: f64,
    hi: f64,
) -> impl Iterator<Item = (f64, f64)> + Clone + 'a {
    b.range()
        .map(move |i| (x[i], y[i]))
        .filter(move |&(xi, _)| within(xi, lo, hi))
}

/// A path whose first x lies further than this fraction of its amplitude from zero starts off
/// zero (a strain path from 0.5 %, a shear path from +0.3°): noted, read as given.
pub const START_X_SHARE: f64 = 0.02;

/// A tensile curve whose force starts further than this fraction of F_m from zero has a force
/// offset: noted, read as given. The start is the intercept at the first x of the line through
/// the first samples (at most nine, x within [`START_X_SHARE`] of the amplitude
/// from the first), and it must also lie beyond three standard errors of that intercept: an
/// offset within the noise is none (the sample curves' first forces lie up to 3.4 gf/cm off
/// zero in noise of 2 to 4 gf/cm, F_m 500 gf/cm).
pub const START_FORCE_SHARE: f64 = 0.005;
const START_SAMPLES: usize = 9;

/// A note when the path's first x is off zero by more than [`START_X_SHARE`] of its
/// amplitude (the largest |x|): `what` the x quantity, `unit` its KES unit.
fn start_x_note(path: &KesPath, what: &str, unit: &str, reading: &mut KesReading) {
    let Some(&x0) = path.x.first() else {
        return;
    };
    let amplitude = path.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if amplitude > 0.0 && x0.abs() > START_X_SHARE * amplitude {
        reading.notes.push(format!(
            "the {what} starts off zero, at {} {unit} (more than {} % of its amplitude, {} \
             {unit}): read as given, not shifted",
            short(x0),
            100.0 * START_X_SHARE,
            short(amplitude)
        ));
    }
}

/// The force a tensile path starts at (KES units) and its standard error: the intercept at
/// the first x of the least-squares line through the first samples, those within
/// [`START_X_SHARE`] of the amplitude of the first x (at most [`START_SAMPLES`]); with fewer
/// than three, the first force and no error.
fn start_force(path: &KesPath) -> Option<(f64, f64)> {
    let (&x0, &y0) = path.x.first().zip(path.y.first())?;
    let amplitude = path.x.iter().fold(0.0f64, |m, v| m.max((v - x0).abs()));
    let first: Vec<(f64, f64)> = path
        .x
        .iter()
        .zip(&path.y)
        .take(START_SAMPLES)
        .take_while(|(x, _)| (*x - x0).abs() <= START_X_SHARE * amplitude)
        .map(|(x, y)| (*x, *y))
        .collect();
    let n = first.len() as f64;
    let Some((mx, my, slope)) = line_fit(first.iter().copied()).filter(|_| n >= 3.0) else {
        return Some((y0, 0.0));
    };
    let f0 = my + slope * (x0 - mx);
    let (rss, sxx) = first.iter().fold((0.0, 0.0), |(r, s), &(x, y)| {
        let e = y - (my + slope * (x - mx));
        (r + e * e, s + (x - mx) * (x - mx))
    });
    let se = (rss / (n - 2.0) * (1.0 / n + (x0 - mx).powi(2) / sxx)).sqrt();
    Some((f0, se))
}

/// A curve in KES units, split into its branches.
struct KesPath {
    x: Vec<f64>,
    y: Vec<f64>,
    branches: Vec<Branch>,
}

/// The metadata key the reader sets to the columns of a file it did not read, each with its
/// position and why (`force [N/m] (column 3: a second force column, column 2 is read)`).
pub const SKIPPED_COLUMNS: &str = "skipped columns";

/// A note naming the columns of the curve's file that were not read, or None.
pub fn skipped_columns_note(curve: &Curve) -> Option<String> {
    curve
        .metadata
        .get(SKIPPED_COLUMNS)
        .map(|c| format!("columns not read: {c}"))
}

/// The KES values of a curve (measured or simulated) read by `rules`.
pub fn kes_values(curve: &Curve, rules: &ReadingRules) -> KesReading {
    let mut reading = KesReading::default();
    reading.notes.extend(skipped_columns_note(curve));
    let Some((sx, sy)) = kes_scale(curve.test) else {
        reading.notes.push(format!(
            "a {} curve has no KES values (read it as a generic loop)",
            curve.test
        ));
        return reading;
    };
    if curve.x.len() != curve.y.len() {
        reading.notes.push(format!(
            "{} x and {} y values: read the first {}",
            curve.x.len(),
            curve.y.len(),
            curve.x.len().min(curve.y.len())
        ));
    }
    let (x, y): (Vec<f64>, Vec<f64>) = curve
        .x
        .iter()
        .zip(&curve.y)
        .map(|(x, y)| (x * sx, y * sy))
        .unzip();
    let branches = Path::with_fraction(&x, rules.reversal_fraction).branches();
    let path = KesPath { x, y, branches };
    reading.values.w = curve.weight().map(|w| w / MG_PER_CM2_KG_PER_M2);
    match curve.test {
        KesTest::Tensile => {
            start_x_note(&path, "strain path", "%", &mut reading);
            tensile::tensile(&path, &curve.metadata, rules, &mut reading);
            let fm = reading.max_force.map(|f| f.gf_cm);
            if let Some(((f0, se), fm)) = start_force(&path).zip(fm) {
                if f0.abs() > START_FORCE_SHARE * fm && f0.abs() > 3.0 * se {
                    reading.notes.push(format!(
                        "the force starts off zero, at {} gf/cm (the line through the first \
                         samples at the first strain; more than {} % of F_m, {} gf/cm, and \
                         than the noise there): read as given, not shifted",
                        short(f0),
                        100.0 * START_FORCE_SHARE,
                        short(fm)
                    ));
                }
            }
        }
        KesTest::Shear => {
            start_x_note(&path, "shear angle", "deg", &mut reading);
            let spec = LoopReading {
                unit: "deg",
                slope: "G",
                range: rules.shear_slope_range,
                widths: [("2HG", rules.shear_2hg_at), ("2HG5", rules.shear_2hg5_at)],
                half: rules.shear_half_window,
                standard: crate::kes::protocol::KES_SHEAR_AMPLITUDE_DEG,
            };
            let (g, [hg, hg5]) = loop_test(&path, &spec, &mut reading);
            (reading.values.g, reading.values.hg, reading.values.hg5) = (g, hg, hg5);
        }
        KesTest::Bending => {
            start_x_note(&path, "curvature", "1/cm", &mut reading);
            let spec = LoopReading {
                unit: "1/cm",
                slope: "B",
                range: rules.bending_slope_range,
                widths: [("2HB", rules.bending_2hb_at)],
                half: rules.bending_half_window,
                standard: crate::kes::protocol::KES_BENDING_AMPLITUDE_PER_CM,
            };
            let (b, [hb]) = loop_test(&path, &spec, &mut reading);
            (reading.values.b, reading.values.hb) = (b, hb);
        }
        KesTest::Compression => fb34::compression(&path, rules, &mut reading),
        KesTest::Friction => fb34::friction(&path, rules, &mut reading),
        KesTest::Roughness => fb34::roughness(&path, rules, &mut reading),
        KesTest::Loop => {}
    }
    reading
}

/// The values of a curve read with the default rules, formatted for a person (three
/// significant digits, typeset units: `RT 54.1 %`, `LT 0.712`, `B 0.0123 gf·cm²/cm`):
/// (name, "value unit") for each value, then ("n/a", reason) for each unavailable one.
pub fn formatted(curve: &Curve) -> Vec<(String, String)> {
    formatted_reading(&kes_values(curve, &ReadingRules::default()), false)
}

/// As [`formatted`], with a tensile curve's F_m and where it came from after the values
/// (`F_m`, `500 gf/cm (nominal)`) and the reading's notes last (`note`, text): the
/// workbench's KES panel.
pub fn formatted_for_workbench(curve: &Curve) -> Vec<(String, String)> {
    let reading = kes_values(curve, &ReadingRules::default());
    let mut out = formatted_reading(&reading, true);
    out.extend(
        reading
            .notes
            .iter()
            .map(|n| ("note".to_string(), n.clone())),
    );
    out
}

fn formatted_reading(reading: &KesReading, max_force: bool) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = reading
        .values
        .iter()
        .map(|(name, v)| {
            let unit = VALUE_NAMES
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, u, _)| *u)
                .unwrap_or("");
            let value = super::units::significant(v, 3);
            let text = match super::units::typeset_unit(unit) {
                u if u.is_empty() => value,
                u => format!("{value} {u}"),
            };
            (name.to_string(), text)
        })
        .collect();
    if let Some(fm) = reading.max_force.filter(|_| max_force) {
        out.push(("F_m".to_string(), fm.to_string()));
    }
    for u in &reading.unavailable {
        out.push((u.value.to_string(), format!("n/a: {}", u.reason)));
    }
    out
}
