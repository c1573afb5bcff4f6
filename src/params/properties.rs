//! The `[properties]` table of a parameter file: the fabric as a sheet for simulation — areal
//! density ρ_A [kg/m²] (KES weight W), thickness [m] (KES T0) and surface friction μ [-] (MIU).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ParamsError;
use crate::kes::{kes_values, Curve, KesTest, ReadingRules};

/// Physically meaningful ranges, wide enough for any woven fabric (a value outside is a unit
/// mistake): areal density 1 g/m² .. 5 kg/m², thickness 1 µm .. 5 cm, friction 0 .. 5.
const AREAL_DENSITY: (f64, f64) = crate::kes::units::AREAL_DENSITY_RANGE_KG_PER_M2;
const THICKNESS: (f64, f64) = crate::kes::units::THICKNESS_RANGE_M;
const FRICTION: (f64, f64) = (0.0, 5.0);

/// The fabric's sheet properties, each from its KES curve or given explicitly; `sources` says
/// where each value comes from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricProperties {
    /// Areal density (the KES weight W) [kg/m²].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub areal_density: Option<f64>,
    /// Thickness T0, at 0.5 gf/cm² \[m\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thickness: Option<f64>,
    /// Surface coefficient of friction MIU [-] (the mean of warp and weft).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friction_coefficient: Option<f64>,
    /// Where each value comes from, by key (`areal_density`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sources: BTreeMap<String, String>,
}

/// Mean of the values and the files they come from (saying so when they differ), `None` when
/// there are none.
fn mean_of(values: &[(f64, String)]) -> Option<(f64, String)> {
    if values.is_empty() {
        return None;
    }
    let mean = values.iter().map(|(v, _)| v).sum::<f64>() / values.len() as f64;
    let files: Vec<&str> = values.iter().map(|(_, f)| f.as_str()).collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (v, _)| {
            (lo.min(*v), hi.max(*v))
        });
    let from = if hi - lo > 1e-9 * hi.abs() {
        format!(
            "mean of {} values from {} to {} (SI): {}",
            values.len(),
            crate::kes::write::number(lo),
            crate::kes::write::number(hi),
            files.join(", ")
        )
    } else {
        files.join(", ")
    };
    Some((mean, from))
}

impl FabricProperties {
    /// From a fabric's curves: the weight W of every curve that carries a `# weight` line,
    /// T0 of its compression curves, MIU of its friction curves (each averaged over the files
    /// that give it); `None` when no curve gives any.
    pub fn from_curves(curves: &[&Curve], rules: &ReadingRules) -> Option<Self> {
        let (mut weight, mut t0, mut miu) = (Vec::new(), Vec::new(), Vec::new());
        for c in curves {
            let file = c.path_name();
            if let Some(w) = c.weight() {
                weight.push((w, format!("{file} (weight)")));
            }
            if !matches!(c.test, KesTest::Compression | KesTest::Friction) {
                continue;
            }
            let v = kes_values(c, rules).values;
            if let Some(t) = v.t0 {
                t0.push((t * 1e-3, format!("{file} (T0)")));
            }
            if let Some(m) = v.miu {
                miu.push((m, format!("{file} (MIU)")));
            }
        }
        let mut p = Self::default();
        for (key, values, slot) in [
            ("areal_density", &weight, &mut p.areal_density),
            ("thickness", &t0, &mut p.thickness),
            ("friction_coefficient", &miu, &mut p.friction_coefficient),
        ] {
            if let Some((v, from)) = mean_of(values) {
                *slot = Some(v);
                p.sources.insert(key.to_string(), from);
            }
        }
        (!p.is_empty()).then_some(p)
    }

    /// `properties` with the values given explicitly (each replaces the curves' one; `None`
    /// leaves it), each with its source; `None` when nothing is known.
    pub fn with_given(
        properties: Option<Self>,
        given: [(&str, Option<f64>); 3],
        source: &str,
    ) -> Option<Self> {
        let mut p = properties.unwrap_or_default();
        for (key, value) in given {
            if let Some(v) = value {
                p.set(key, v, source);
            }
        }
        (!p.is_empty()).then_some(p)
    }

    /// Sets a value given explicitly (it replaces the curves' one), with its source.
    pub fn set(&mut self, key: &str, value: f64, source: &str) {
        let slot = match key {
            "areal_density" => &mut self.areal_density,
            "thickness" => &mut self.thickness,
            "friction_coefficient" => &mut self.friction_coefficient,
            _ => return,
        };
        *slot = Some(value);
        self.sources.insert(key.to_string(), source.to_string());
    }

    pub fn is_empty(&self) -> bool {
        self.areal_density.is_none()
            && self.thickness.is_none()
            && self.friction_coefficient.is_none()
    }

    /// Every value finite and within its range; the error names the file, the key, the range
    /// and the unit.
    pub(crate) fn validate(&self, path: &Path) -> Result<(), ParamsError> {
        for (key, value, (lo, hi), unit) in [
            ("areal_density", self.areal_density, AREAL_DENSITY, "kg/m2"),
            ("thickness", self.thickness, THICKNESS, "m"),
            (
                "friction_coefficient",
                self.friction_coefficient,
                FRICTION,
                "-",
            ),
        ] {
            if let Some(v) = value.filter(|v| !(v.is_finite() && *v >= lo && *v <= hi)) {
                return Err(ParamsError::Property {
                    path: path.to_path_buf(),
                    key,
                    value: v,
                    range: format!("[{lo}, {hi}] {unit}"),
                });
            }
        }
        Ok(())
    }
}

/// A quantity given on the command line that could not be read: what it was for, the text
/// given, and what was expected (with an example and the accepted units or range).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} `{text}` — expected {expected}")]
pub struct QuantityError {
    pub what: &'static str,
    pub text: String,
    pub expected: String,
}

/// A positive number followed by its unit (`320g/m2`, `0.9 mm`) in SI, by `factor` of the
/// unit; `expected` ends the error message (what it should be, with an example and the units).
fn positive_with_unit(
    text: &str,
    what: &'static str,
    factor: fn(&str) -> Option<f64>,
    (lo, hi): (f64, f64),
    expected: &str,
) -> Result<f64, QuantityError> {
    let bad = || QuantityError {
        what,
        text: text.into(),
        expected: expected.into(),
    };
    let trimmed = text.trim();
    let split = (1..=trimmed.len())
        .rev()
        .filter(|&i| trimmed.is_char_boundary(i))
        .find(|&i| trimmed[..i].parse::<f64>().is_ok())
        .ok_or_else(bad)?;
    let v: f64 = trimmed[..split].parse().map_err(|_| bad())?;
    let f = factor(trimmed[split..].trim()).ok_or_else(bad)?;
    Some(v * f)
        .filter(|x| (lo..=hi).contains(x))
        .ok_or_else(bad)
}

/// An areal density given on the command line, `320g/m2` or `32 mg/cm2` (or kg/m2, oz/yd2), in
/// kg/m².
pub fn parse_weight(text: &str) -> Result<f64, QuantityError> {
    positive_with_unit(
        text,
        "weight",
        crate::kes::units::weight_factor,
        AREAL_DENSITY,
        &format!(
            "an areal density of 1 g/m2 to 5 kg/m2 with its unit, e.g. 320g/m2 or 32mg/cm2 ({})",
            crate::kes::units::weight_unit_names()
        ),
    )
}

/// A thickness given on the command line, `0.9mm` or `900um` (or cm, m), in m.
pub fn parse_thickness(text: &str) -> Result<f64, QuantityError> {
    positive_with_unit(
        text,
        "thickness",
        crate::kes::units::thickness_factor,
        THICKNESS,
        "a length of 1 um to 5 cm with its unit, e.g. 0.9mm (mm, um, cm or m)",
    )
}

/// A surface coefficient of friction given on the command line, within [0, 5].
pub fn parse_friction_coefficient(text: &str) -> Result<f64, QuantityError> {
    let (lo, hi) = FRICTION;
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= lo && *v <= hi)
        .ok_or_else(|| QuantityError {
            what: "friction coefficient",
            text: text.into(),
            expected: format!("a number in [{lo}, {hi}], e.g. 0.2"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_with_units_parse() {
        assert_eq!(parse_weight("320g/m2"), Ok(0.32));
        assert!((parse_weight(" 32 mg/cm² ").unwrap() - 0.32).abs() < 1e-15);
        let e = parse_weight("320").unwrap_err();
        assert_eq!((e.what, e.text.as_str()), ("weight", "320"));
        assert!(e.to_string().contains("with its unit"), "{e}");
        assert!(parse_weight("-3g/m2").is_err());
        assert!((parse_thickness("0.9mm").unwrap() - 9e-4).abs() < 1e-18);
        assert!((parse_thickness("900 µm").unwrap() - 9e-4).abs() < 1e-18);
        assert!(parse_thickness("0.9 in").is_err());
        // the card's ranges, so that what the options give can be read back
        assert!(parse_weight("5kg/m2").is_ok() && parse_weight("1g/m2").is_ok());
        for beyond in ["99999g/m2", "1e308g/m2", "1e-300g/m2", "0.9g/m2"] {
            let e = parse_weight(beyond).unwrap_err();
            assert!(e.to_string().contains("1 g/m2 to 5 kg/m2"), "{e}");
        }
        assert!(parse_thickness("100mm")
            .unwrap_err()
            .to_string()
            .contains("5 cm"));
        assert!(parse_thickness("0.5um").is_err() && parse_thickness("50mm").is_ok());
        assert_eq!(parse_friction_coefficient("0.21"), Ok(0.21));
        let e = parse_friction_coefficient("7").unwrap_err();
        assert_eq!(e.what, "friction coefficient");
        assert!(e.to_string().contains("[0, 5]"), "{e}");
    }
}
