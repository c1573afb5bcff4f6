//! A fabric library's summary table: one row per fabric and direction with the KES values
//! (mean and CV over replicates), the laws' parameters (SI) and the fit quality (NRMSE).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::fit::{fit_fabrics, FabricFit, FitOptions};
use crate::kes::replicates::{replicate_summaries, ReplicateSummary};
use crate::kes::{Curve, Direction, KesTest, KesValues, MaxForce, ReadingRules};
use crate::params::{units_table, FabricParams};
use crate::validate::validate_curve;

/// One row of the table: a fabric in one direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LibraryRow {
    pub fabric: String,
    pub direction: Direction,
    /// The curve files of this fabric and direction.
    pub files: Vec<String>,
    /// Specimens per test (`tensile`, `shear`, `bending`).
    pub specimens: BTreeMap<String, usize>,
    /// Each KES value's mean over the specimens (KES units).
    pub values: KesValues,
    /// Each value's coefficient of variation (a fraction), where two or more specimens give it.
    pub cv: KesValues,
    /// The F_m the tensile values were read at and where it came from (None without a
    /// tensile curve, or for specimens taken to different forces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_force: Option<MaxForce>,
    /// The laws' parameters of this direction, SI, by `law.name` (`shear.k_s`, …).
    pub params: BTreeMap<String, serde_json::Value>,
    /// Mean NRMSE (a fraction) of each test's law over its specimens, `params::nrmse`.
    pub nrmse: BTreeMap<String, f64>,
    /// Where the parameters come from: a parameter file, or `fitted` (kestrel's default fit).
    pub params_source: String,
}

/// The table and what could not be filled (a fit that failed, a law a card lacks).
#[derive(Debug, Clone, Default)]
pub struct LibrarySummary {
    pub rows: Vec<LibraryRow>,
    pub notes: Vec<String>,
}

/// Fabrics in order of first appearance.
fn fabrics(curves: &[Curve]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in curves {
        if !out.contains(&c.fabric.as_str()) {
            out.push(&c.fabric);
        }
    }
    out
}

/// The summary of `curves`: each fabric's parameters from the card of that fabric in `cards`
/// (path, parameters), else from `kestrel fit`'s fit (`fit_fabrics`: the specimens of a curve
/// fitted jointly; `progress` after each fabric); values read by `rules`.
pub fn library_summary(
    curves: &[Curve],
    cards: &[(PathBuf, FabricParams)],
    options: &FitOptions,
    rules: &ReadingRules,
    progress: &(dyn Fn(&FabricFit) + Sync),
) -> LibrarySummary {
    let carded = |fabric: &str| cards.iter().find(|(_, p)| p.fabric == fabric);
    let to_fit: Vec<Curve> = curves
        .iter()
        .filter(|c| carded(&c.fabric).is_none())
        .cloned()
        .collect();
    let fitted = fit_fabrics(&to_fit, options, progress);
    let replicates = replicate_summaries(curves, rules);
    let mut summary = LibrarySummary::default();
    for fabric in fabrics(curves) {
        let (params, source) = match carded(fabric) {
            Some((path, p)) => (p, path.display().to_string()),
            None => match fitted.iter().find(|f| f.fabric == fabric) {
                Some(f) => (&f.params, "fitted".to_string()),
                None => continue,
            },
        };
        // compression (direction normal) is the fabric's in every direction: its values join
        // each row, and make a row of their own only for a fabric with nothing else
        let in_plane = [Direction::Warp, Direction::Weft, Direction::Bias];
        let plane_only = |d: Direction| {
            curves
                .iter()
                .any(|c| c.fabric == fabric && c.direction == d)
        };
        let directions: Vec<Direction> = match in_plane.into_iter().filter(|&d| plane_only(d)) {
            d if d.clone().count() > 0 => d.collect(),
            _ => vec![Direction::Normal],
        };
        for direction in directions {
            let of: Vec<&Curve> = curves
                .iter()
                .filter(|c| {
                    c.fabric == fabric
                        && (c.direction == direction || c.direction == Direction::Normal)
                })
                .collect();
            if of.is_empty() {
                continue;
            }
            let mut row = LibraryRow {
                fabric: fabric.to_string(),
                direction,
                files: of.iter().map(|c| c.path_name()).collect(),
                specimens: BTreeMap::new(),
                values: KesValues::default(),
                cv: KesValues::default(),
                max_force: None,
                params: BTreeMap::new(),
                nrmse: BTreeMap::new(),
                params_source: source.clone(),
            };
            let groups = replicates.iter().filter(|r| {
                r.fabric == fabric && (r.direction == direction || r.direction == Direction::Normal)
            });
            for group in groups {
                merge_values(&mut row, group);
            }
            for test in [KesTest::Tensile, KesTest::Shear, KesTest::Bending] {
                let specimens: Vec<&&Curve> = of.iter().filter(|c| c.test == test).collect();
                if specimens.is_empty() {
                    continue;
                }
                let mut scores = Vec::new();
                for c in specimens {
                    match validate_curve(params, c, rules) {
                        Ok(v) => scores.push(v.nrmse),
                        Err(e) => summary.notes.push(e.to_string()),
                    }
                }
                if !scores.is_empty() {
                    let mean = scores.iter().sum::<f64>() / scores.len() as f64;
                    row.nrmse.insert(test.name().to_string(), mean);
                }
            }
            let laws = params.direction(direction);
            for (name, law) in [
                ("traction", serde_json::to_value(laws.traction).ok()),
                ("shear", serde_json::to_value(laws.shear).ok()),
                ("bending", serde_json::to_value(laws.bending).ok()),
            ] {
                if let Some(law) = law.filter(|l| !l.is_null()) {
                    flatten(name, &law, &mut row.params);
                }
            }
            // only the laws this direction's curves measure
            row.params.retain(|key, _| {
                let law = key.split('.').next().unwrap_or("");
                row.specimens
                    .keys()
                    .any(|t| law == if t == "tensile" { "traction" } else { t })
            });
            summary.rows.push(row);
        }
    }
    summary
}

/// A group's specimens, means and CVs into its row.
fn merge_values(row: &mut LibraryRow, group: &ReplicateSummary) {
    row.specimens
        .insert(group.test.name().to_string(), group.specimens);
    for (name, v) in group.mean.iter() {
        row.values.set(name, Some(v));
    }
    for (name, v) in group.cv.iter() {
        row.cv.set(name, Some(v));
    }
    if group.test == KesTest::Tensile {
        row.max_force = group.max_force;
    }
}

/// `value`'s leaves as `prefix.key.sub` → leaf.
fn flatten(prefix: &str, value: &serde_json::Value, out: &mut BTreeMap<String, serde_json::Value>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

/// The unit of a flattened parameter (`shear.friction.level` → `N/m`), from the parameter
/// file's units table; "" when it has none (model names, dimensionless shape numbers).
fn unit_of(key: &str, units: &BTreeMap<String, String>) -> String {
    let law = key.split('.').next().unwrap_or("");
    let generic = key.split_once('.').map_or("", |(_, rest)| rest);
    units
        .get(key)
        .or_else(|| units.get(generic))
        .or_else(|| units.get(&format!("{law}.{generic}")))
        .map(|u| u.split(' ').next().unwrap_or("").to_string())
        .unwrap_or_default()
}

/// The table as CSV: fabric, direction, each KES value and its CV, each parameter with its
/// unit, each test's NRMSE, the parameters' source and the files.
pub fn to_csv(summary: &LibrarySummary) -> Result<String, csv::Error> {
    use crate::kes::values::VALUE_NAMES;
    let units = units_table();
    let mut params: Vec<&String> = Vec::new();
    for row in &summary.rows {
        for key in row.params.keys() {
            if !params.contains(&key) {
                params.push(key);
            }
        }
    }
    params.sort();
    let tests: Vec<&str> = [
        "tensile",
        "shear",
        "bending",
        "compression",
        "friction",
        "roughness",
    ]
    .into_iter()
    .filter(|t| summary.rows.iter().any(|r| r.specimens.contains_key(*t)))
    .collect();
    // W is a metadata line any curve may carry
    let has_weight = summary.rows.iter().any(|r| r.values.w.is_some());
    let values: Vec<(&str, &str)> = VALUE_NAMES
        .iter()
        .filter(|(name, _, test)| tests.contains(&test.name()) || (*name == "W" && has_weight))
        .map(|&(n, u, _)| (n, u))
        .collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["fabric".to_string(), "direction".to_string()];
    for t in &tests {
        header.push(format!("{t} specimens"));
    }
    // F_m after the tensile values: the force LT was read at, and where it came from
    let max_force_after = tests.contains(&"tensile").then_some("RT");
    for (name, unit) in &values {
        header.push(format!("{name} [{unit}]"));
        header.push(format!("{name} CV [-]"));
        if max_force_after == Some(*name) {
            header.push("F_m [gf/cm]".into());
            header.push("F_m from".into());
        }
    }
    for key in &params {
        let unit = unit_of(key, &units);
        header.push(if unit.is_empty() {
            (*key).clone()
        } else {
            format!("{key} [{unit}]")
        });
    }
    // only the tests a law is fitted to have an NRMSE
    let fitted: Vec<&str> = tests
        .iter()
        .copied()
        .filter(|t| ["tensile", "shear", "bending"].contains(t))
        .collect();
    for t in &fitted {
        header.push(format!("{t} NRMSE [-]"));
    }
    header.push("params".into());
    header.push("files".into());
    w.write_record(&header)?;
    let num = |v: Option<f64>| v.map_or_else(String::new, crate::kes::write::number);
    // KES values, CVs and NRMSE read from measured curves: six significant digits (the
    // parameters are written exactly, as in the parameter file)
    let six = |v: Option<f64>| {
        v.map_or_else(String::new, |v| {
            let rounded = format!("{v:.5e}").parse::<f64>().unwrap_or(v);
            crate::kes::write::number(rounded)
        })
    };
    for row in &summary.rows {
        let mut rec = vec![row.fabric.clone(), row.direction.name().to_string()];
        for t in &tests {
            rec.push(
                row.specimens
                    .get(*t)
                    .map_or_else(String::new, |n| n.to_string()),
            );
        }
        for (name, _) in &values {
            rec.push(six(row.values.get(name)));
            rec.push(six(row.cv.get(name)));
            if max_force_after == Some(*name) {
                rec.push(six(row.max_force.map(|f| f.gf_cm)));
                rec.push(
                    row.max_force
                        .map_or_else(String::new, |f| f.from.name().to_string()),
                );
            }
        }
        for key in &params {
            rec.push(match row.params.get(*key) {
                Some(serde_json::Value::Number(n)) => num(n.as_f64()),
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            });
        }
        for t in &fitted {
            rec.push(six(row.nrmse.get(*t).copied()));
        }
        rec.push(row.params_source.clone());
        rec.push(row.files.join(" "));
        w.write_record(&rec)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
