//! Curves written as KES CSV files (docs/kes.md): metadata, header and rows in Kawabata units
//! (strain %, deg, 1/cm; gf/cm, gf·cm/cm), ten significant digits.

use std::fmt::Write as _;
use std::path::Path;

use thiserror::Error;

use super::units::test_quantities;
use super::Curve;
use crate::atomic::{write_atomic, WriteError};

#[derive(Debug, Error)]
pub enum WriteCurveError {
    #[error("a {test} curve has no KES columns; only tensile, shear and bending curves are written as KES CSV")]
    NotKes { test: super::KesTest },
    #[error("cannot write a curve with {x} x and {y} y values")]
    Lengths { x: usize, y: usize },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// `v` rounded to ten significant digits, written in its shortest form (10.000000000000002
/// reads 10; very small or large magnitudes in exponent form, 7.2455e-15).
pub(crate) fn number(v: f64) -> String {
    let r = format!("{v:.9e}").parse::<f64>().unwrap_or(v);
    if r != 0.0 && (r.abs() < 1e-4 || r.abs() >= 1e15) {
        format!("{r:e}")
    } else {
        r.to_string()
    }
}

fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

/// The text of a KES CSV file for `curve`: `# kestrel-kes: 1`, fabric, test, direction, the
/// other metadata, then the header and the rows in KES units.
pub fn to_kes_csv(curve: &Curve) -> Result<String, WriteCurveError> {
    let (xq, yq) =
        test_quantities(curve.test).ok_or(WriteCurveError::NotKes { test: curve.test })?;
    if curve.x.len() != curve.y.len() {
        return Err(WriteCurveError::Lengths {
            x: curve.x.len(),
            y: curve.y.len(),
        });
    }
    let ((xu, xf), (yu, yf)) = (xq.kes_unit(), yq.kes_unit());
    let mut out = String::with_capacity(32 * curve.len() + 512);
    // Writing into a String cannot fail.
    let _ = writeln!(out, "# kestrel-kes: 1");
    let _ = writeln!(out, "# fabric: {}", one_line(&curve.fabric));
    let _ = writeln!(out, "# test: {}", curve.test);
    let _ = writeln!(out, "# direction: {}", curve.direction);
    for (key, value) in &curve.metadata {
        if !["kestrel-kes", "fabric", "test", "direction"].contains(&key.as_str()) {
            let _ = writeln!(out, "# {}: {}", one_line(key), one_line(value));
        }
    }
    let _ = writeln!(
        out,
        "{} [{xu}],{} [{yu}]",
        xq.column_name(),
        yq.column_name()
    );
    for (x, y) in curve.x.iter().zip(&curve.y) {
        let _ = writeln!(out, "{},{}", number(x / xf), number(y / yf));
    }
    Ok(out)
}

/// Writes `curve` as a KES CSV file, atomically; refuses to replace a file unless `force`.
pub fn write_kes_csv(curve: &Curve, path: &Path, force: bool) -> Result<(), WriteCurveError> {
    let text = to_kes_csv(curve)?;
    write_atomic(path, text.as_bytes(), force)?;
    Ok(())
}
