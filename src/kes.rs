//! KES-FB curves (Kawabata): a measured or simulated path x → y in SI units, rows in
//! measurement order. Tensile: strain [-] → N/m; shear: angle \[rad\] → N/m; bending:
//! curvature [1/m] → moment per width \[N\]; compression: thickness \[m\] → pressure \[Pa\];
//! surface friction: position \[m\] → μ [-]; roughness: position \[m\] → height \[m\];
//! a generic loop: any x → any y, SI.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub mod folder;
pub mod import;
pub mod path;
pub mod protocol;
pub mod replicates;
pub mod sample;
pub mod units;
pub mod values;
pub mod write;

pub use import::{
    parse_kes, parse_loop, read_kes, read_kes_files, read_loop, ColumnRef, CurveOverrides,
    KesError, LoopColumn, LoopSpec, RowFilter,
};
pub use path::{Cycle, OpenSegment, Path};
pub use protocol::{simulate, Protocol, ProtocolError};
pub use replicates::{replicate_groups, replicate_summaries, ReplicateGroup, ReplicateSummary};
pub use values::{
    kes_values, loop_values, KesReading, KesValues, LoopValues, MaxForce, MaxForceSource,
    ReadingRules, REVERSAL_FRACTION,
};
pub use write::{to_kes_csv, write_kes_csv, WriteCurveError};

/// 1 gf = 9.80665e-3 N.
pub(crate) const GF_N: f64 = 9.80665e-3;
/// 1 gf/cm in N/m.
pub const GF_PER_CM_N_PER_M: f64 = 0.980665;
/// 1 gf·cm/cm in N (bending moment per width).
pub const GF_CM_PER_CM_N: f64 = 9.80665e-3;
/// 1 gf·cm²/cm in N·m (bending rigidity per width).
pub const GF_CM2_PER_CM_N_M: f64 = 9.80665e-5;
/// 1 cm⁻¹ in m⁻¹.
pub(crate) const PER_CM_PER_M: f64 = 100.0;
/// 1 gf/cm² in Pa.
pub const GF_PER_CM2_PA: f64 = 98.0665;
/// 1 mg/cm² in kg/m² (= 10 g/m²).
pub const MG_PER_CM2_KG_PER_M2: f64 = 1e-2;
/// 1 oz/yd² in kg/m² (avoirdupois ounce 28.349523125 g, square yard 0.83612736 m²).
pub const OZ_PER_YD2_KG_PER_M2: f64 = 0.028_349_523_125 / 0.836_127_36;
/// 1 degree in rad.
pub const DEG_RAD: f64 = std::f64::consts::PI / 180.0;

crate::named::named_enum! {
    /// The KES test a curve comes from; `Loop` is a generic hysteresis record (x, y in SI).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum KesTest: "test", folded {
        Tensile => "tensile" | "traction",
        Shear => "shear" | "shearing",
        Bending => "bending",
        /// KES-FB3: pressure against thickness, compression then recovery.
        Compression => "compression",
        /// KES-FB4 friction trace: coefficient of friction μ against position.
        Friction => "friction",
        /// KES-FB4 roughness trace: the contactor's height against position.
        Roughness => "roughness",
        Loop => "loop",
    }
}

crate::named::named_enum! {
    /// Direction of the sample.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Direction: "direction", folded {
        Warp => "warp",
        Weft => "weft",
        Bias => "bias",
        /// Through the thickness: the compression test's only direction.
        Normal => "normal",
    }
}

/// One curve: a path x → y in SI units, in measurement order.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The `fabric` metadata (empty when the file has none).
    pub fabric: String,
    pub test: KesTest,
    pub direction: Direction,
    /// Strain [-], angle \[rad\], curvature [1/m], thickness or position \[m\] (or a loop's
    /// x in SI).
    pub x: Vec<f64>,
    /// Force per width [N/m], moment per width \[N\], pressure \[Pa\], μ [-] or height \[m\]
    /// (or a loop's y in SI).
    pub y: Vec<f64>,
    /// Every metadata line of the file (`key: value`), kept for provenance.
    pub metadata: BTreeMap<String, String>,
    /// The file it was read from, if any.
    pub source: Option<PathBuf>,
    /// SHA-256 (lowercase hex) of the bytes read from `source`, taken as they were read: the
    /// provenance of a card fitted to the curve, whatever the file holds later.
    pub sha256: Option<String>,
}

impl Curve {
    /// The file name the curve was read from, or "curve".
    pub fn source_name(&self) -> String {
        self.source
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "curve".into())
    }

    /// The path of the file the curve was read from, as given, or "(unnamed curve)".
    pub fn path_name(&self) -> String {
        self.source.as_ref().map_or_else(
            || "(unnamed curve)".to_string(),
            |p| p.display().to_string(),
        )
    }

    /// The fabric's weight W (areal density) [kg/m²] from a `# weight [g/m2]: 320` (or
    /// `[mg/cm2]`, `[kg/m2]`) metadata line, checked when the file was read.
    pub fn weight(&self) -> Option<f64> {
        let key = import::weight_key(&self.metadata)?;
        import::weight_of(key, &self.metadata[key])
    }

    pub fn len(&self) -> usize {
        self.x.len()
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// A note for each compression or surface curve, which a connector law does not model
/// (`what` the command does to curves: "validated", "fitted"); an error when no curve is left.
pub fn no_law_notes(curves: &[Curve], what: &str) -> Result<Vec<String>, String> {
    let notes: Vec<String> = curves
        .iter()
        .filter(|c| !c.test.has_connector_law())
        .map(|c| {
            format!(
                "note: {}: a {} curve has no connector law: not {what} (`kestrel values` reads \
                 it)",
                c.path_name(),
                c.test
            )
        })
        .collect();
    if !curves.is_empty() && notes.len() == curves.len() {
        return Err(format!(
            "none of the {} curves has a connector law (tensile, shear, bending): nothing to be \
             {what}",
            curves.len()
        ));
    }
    Ok(notes)
}

/// How a test's curve is shown to a person: KES axis titles and the factors from SI.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KesUnits {
    pub x_label: &'static str,
    pub y_label: &'static str,
    /// KES x per SI x (e.g. 100 % per unit strain).
    pub x_per_si: f64,
    /// KES y per SI y (e.g. 1/0.980665 gf/cm per N/m).
    pub y_per_si: f64,
}

impl KesTest {
    /// Whether a connector law models this path: tensile, shear, bending and a generic loop
    /// are fitted; compression, friction and roughness curves give KES values only.
    pub fn has_connector_law(self) -> bool {
        matches!(
            self,
            KesTest::Tensile | KesTest::Shear | KesTest::Bending | KesTest::Loop
        )
    }

    /// Whether each sample of the path x lies on the test's loading branch — tensile, shear,
    /// bending, loop: |x| grows; compression: the thickness falls; friction, roughness: the
    /// forward stroke (x rises).
    pub fn loading_flags(self, x: &[f64]) -> Vec<bool> {
        let path = Path::new(x);
        match self {
            KesTest::Compression => path.rising().into_iter().map(|r| !r).collect(),
            KesTest::Friction | KesTest::Roughness => path.rising(),
            KesTest::Tensile | KesTest::Shear | KesTest::Bending | KesTest::Loop => path.loading(),
        }
    }

    /// The names of the branches `loading_flags` tells apart: (loading, the other).
    pub fn branch_names(self) -> (&'static str, &'static str) {
        match self {
            KesTest::Compression => ("compression", "recovery"),
            KesTest::Friction | KesTest::Roughness => ("forward", "reverse"),
            KesTest::Tensile | KesTest::Shear | KesTest::Bending | KesTest::Loop => {
                ("loading", "unloading")
            }
        }
    }

    /// Axis titles and factors for showing this test in Kawabata units.
    pub fn kes_units(self) -> KesUnits {
        match self {
            KesTest::Tensile => KesUnits {
                x_label: "strain [%]",
                y_label: "force [gf/cm]",
                x_per_si: 100.0,
                y_per_si: 1.0 / GF_PER_CM_N_PER_M,
            },
            KesTest::Shear => KesUnits {
                x_label: "angle [deg]",
                y_label: "force [gf/cm]",
                x_per_si: 1.0 / DEG_RAD,
                y_per_si: 1.0 / GF_PER_CM_N_PER_M,
            },
            KesTest::Bending => KesUnits {
                x_label: "curvature [1/cm]",
                y_label: "moment [gf*cm/cm]",
                x_per_si: 1.0 / PER_CM_PER_M,
                y_per_si: 1.0 / GF_CM_PER_CM_N,
            },
            KesTest::Compression => KesUnits {
                x_label: "thickness [mm]",
                y_label: "pressure [gf/cm²]",
                x_per_si: 1e3,
                y_per_si: 1.0 / GF_PER_CM2_PA,
            },
            KesTest::Friction => KesUnits {
                x_label: "position [cm]",
                y_label: "friction coefficient μ [-]",
                x_per_si: 1.0 / 1e-2,
                y_per_si: 1.0,
            },
            KesTest::Roughness => KesUnits {
                x_label: "position [cm]",
                y_label: "height [µm]",
                x_per_si: 1.0 / 1e-2,
                y_per_si: 1e6,
            },
            KesTest::Loop => KesUnits {
                x_label: "x [SI]",
                y_label: "y [SI]",
                x_per_si: 1.0,
                y_per_si: 1.0,
            },
        }
    }
}
