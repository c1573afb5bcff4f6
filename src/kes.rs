//! KES-FB curves (Kawabata): a measured or simulated path x → y in SI units, rows in
//! measurement order. Tensile: strain [-] → N/m; shear: angle \[rad\] → N/m; bending:
//! curvature [1/m] → moment per width \[N\]; a generic loop: any x → any y, SI.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub mod import;
pub mod path;
pub mod protocol;
pub mod replicates;
pub mod sample;
pub mod units;
pub mod values;
pub mod write;

pub use import::{
    parse_kes, parse_loop, read_kes, read_kes_files, read_loop, refuse_replicates, ColumnRef,
    CurveOverrides, KesError, LoopColumn, LoopSpec, RowFilter,
};
pub use path::{Cycle, OpenSegment, Path};
pub use protocol::{simulate, Protocol, ProtocolError};
pub use replicates::{replicate_groups, replicate_summaries, ReplicateGroup, ReplicateSummary};
pub use values::{
    kes_values, loop_values, KesReading, KesValues, LoopValues, ReadingRules, REVERSAL_FRACTION,
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
    }
}

/// One curve: a path x → y in SI units, in measurement order.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The `fabric` metadata (empty when the file has none).
    pub fabric: String,
    pub test: KesTest,
    pub direction: Direction,
    /// Strain [-], angle \[rad\], curvature [1/m] (or a loop's x in SI).
    pub x: Vec<f64>,
    /// Force per width [N/m], or moment per width \[N\] (or a loop's y in SI).
    pub y: Vec<f64>,
    /// Every metadata line of the file (`key: value`), kept for provenance.
    pub metadata: BTreeMap<String, String>,
    /// The file it was read from, if any.
    pub source: Option<PathBuf>,
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

    pub fn len(&self) -> usize {
        self.x.len()
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
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
            KesTest::Loop => KesUnits {
                x_label: "x [SI]",
                y_label: "y [SI]",
                x_per_si: 1.0,
                y_per_si: 1.0,
            },
        }
    }
}
