//! The sample fabric shipped inside the binary (`kes_data/cotton-shirting`, synthetic curves
//! from an independent hysteresis model; see `kes_data/README.md`), so the workbench opens
//! with real curves wherever it is started.

use std::path::PathBuf;

use super::import::{parse_kes, CurveOverrides, KesError};
use super::Curve;

const FILES: [(&str, &str); 6] = [
    (
        "kes_data/cotton-shirting/tensile_warp.csv",
        include_str!("../../kes_data/cotton-shirting/tensile_warp.csv"),
    ),
    (
        "kes_data/cotton-shirting/tensile_weft.csv",
        include_str!("../../kes_data/cotton-shirting/tensile_weft.csv"),
    ),
    (
        "kes_data/cotton-shirting/shear_warp.csv",
        include_str!("../../kes_data/cotton-shirting/shear_warp.csv"),
    ),
    (
        "kes_data/cotton-shirting/shear_weft.csv",
        include_str!("../../kes_data/cotton-shirting/shear_weft.csv"),
    ),
    (
        "kes_data/cotton-shirting/bending_warp.csv",
        include_str!("../../kes_data/cotton-shirting/bending_warp.csv"),
    ),
    (
        "kes_data/cotton-shirting/bending_weft.csv",
        include_str!("../../kes_data/cotton-shirting/bending_weft.csv"),
    ),
];

/// The six curves of the sample fabric (cotton shirting).
pub fn sample_fabric() -> Result<Vec<Curve>, KesError> {
    FILES
        .iter()
        .map(|(name, text)| {
            let mut c = parse_kes(text, name, CurveOverrides::default())?;
            c.source = Some(PathBuf::from(name));
            Ok(c)
        })
        .collect()
}
