//! Colours (always on: a PNG ignores NO_COLOR), the bundled font, and each test's axes in
//! KES units (SI value × scale = KES value).

use std::sync::OnceLock;

use plotters::style::{register_font, FontStyle, RGBColor};

use super::PlotError;
use crate::kes::{KesTest, DEG_RAD, GF_CM_PER_CM_N, GF_PER_CM_N_PER_M, PER_CM_PER_M};

/// Loading branch (|x| growing): blue (Okabe–Ito).
pub const LOADING_RGB: (u8, u8, u8) = (0, 114, 178);
/// Unloading branch (|x| shrinking): vermilion (Okabe–Ito).
pub const UNLOADING_RGB: (u8, u8, u8) = (213, 94, 0);
/// The model overlay (dashed).
pub const MODEL_RGB: (u8, u8, u8) = (0, 0, 0);

pub(crate) fn rgb(c: (u8, u8, u8)) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

pub(crate) const GRID: RGBColor = RGBColor(228, 228, 228);
pub(crate) const AXIS: RGBColor = RGBColor(110, 110, 110);
pub(crate) const NOTE: RGBColor = RGBColor(120, 120, 120);

/// DejaVu Sans (Bitstream Vera licence, `fonts/LICENSE-DejaVu.txt`).
pub(crate) static DEJAVU_SANS: &[u8] = include_bytes!("fonts/DejaVuSans.ttf");
/// The bundled font's family; an SVG names it first, then any sans-serif.
pub(crate) const FAMILY: &str = "DejaVu Sans, sans-serif";

/// Registers the bundled font with plotters once; every text is drawn with it.
pub(crate) fn ensure_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok =
        *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok());
    if ok {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

/// A test's axes in KES units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KesAxes {
    /// SI x × `x_scale` = x in KES units.
    pub x_scale: f64,
    /// SI y × `y_scale` = y in KES units.
    pub y_scale: f64,
    pub x_title: &'static str,
    pub y_title: &'static str,
    /// The unit of y alone (for residual and friction axes).
    pub y_unit: &'static str,
}

impl KesAxes {
    pub(crate) fn of(test: KesTest) -> Self {
        match test {
            KesTest::Tensile => Self {
                x_scale: 100.0,
                y_scale: 1.0 / GF_PER_CM_N_PER_M,
                x_title: "strain [%]",
                y_title: "force [gf/cm]",
                y_unit: "gf/cm",
            },
            KesTest::Shear => Self {
                x_scale: 1.0 / DEG_RAD,
                y_scale: 1.0 / GF_PER_CM_N_PER_M,
                x_title: "shear angle [deg]",
                y_title: "force [gf/cm]",
                y_unit: "gf/cm",
            },
            KesTest::Bending => Self {
                x_scale: 1.0 / PER_CM_PER_M,
                y_scale: 1.0 / GF_CM_PER_CM_N,
                x_title: "curvature [1/cm]",
                y_title: "moment [gf·cm/cm]",
                y_unit: "gf·cm/cm",
            },
            KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
                let u = test.kes_units();
                Self {
                    x_scale: u.x_per_si,
                    y_scale: u.y_per_si,
                    x_title: u.x_label,
                    y_title: u.y_label,
                    y_unit: match test {
                        KesTest::Compression => "gf/cm²",
                        KesTest::Friction => "-",
                        _ => "µm",
                    },
                }
            }
            KesTest::Loop => Self {
                x_scale: 1.0,
                y_scale: 1.0,
                x_title: "x [SI]",
                y_title: "y [SI]",
                y_unit: "SI",
            },
        }
    }
}

/// Scale and unit of a work ∮y dx: for the three KES tests (angle in rad) it is an energy per
/// fabric area, 1 gf·cm/cm² = 0.980665 J/m², WT's unit.
pub fn energy_unit(test: KesTest) -> (f64, &'static str) {
    match test {
        // 1 gf/cm² · cm = 0.980665 J/m² as well
        KesTest::Tensile | KesTest::Shear | KesTest::Bending | KesTest::Compression => {
            (1.0 / GF_PER_CM_N_PER_M, "gf·cm/cm²")
        }
        KesTest::Friction => (100.0, "cm"),
        KesTest::Roughness => (1e8, "µm·cm"),
        KesTest::Loop => (1.0, "x·y [SI]"),
    }
}

pub(crate) use crate::kes::units::significant as sig;
