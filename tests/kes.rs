//! KES curves: import, errors, characteristic values against the synthetic oracle, protocols.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kestrel::kes::{kes_values, read_kes, CurveOverrides, ReadingRules};

fn kes_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kes_data")
}

#[test]
fn values_reproduce_the_oracle_within_3_percent() {
    let text = std::fs::read_to_string(kes_data().join("expected_values.json")).unwrap();
    let oracle: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tol = oracle["tolerance_rel"].as_f64().unwrap();
    let rules = ReadingRules::default();
    let mut worst: BTreeMap<String, (f64, String)> = BTreeMap::new();
    let mut failures = Vec::new();
    let curves = oracle["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 24);
    for c in curves {
        let file = c["file"].as_str().unwrap();
        let curve = read_kes(&kes_data().join(file), CurveOverrides::default()).unwrap();
        let reading = kes_values(&curve, &rules);
        for (name, expected) in c["values"].as_object().unwrap() {
            let expected = expected.as_f64().unwrap();
            let Some(got) = reading.values.get(name) else {
                failures.push(format!(
                    "{file}: {name} missing ({:?})",
                    reading.unavailable
                ));
                continue;
            };
            let dev = (got / expected - 1.0).abs();
            let w = worst.entry(name.clone()).or_insert((0.0, String::new()));
            if dev >= w.0 {
                *w = (dev, file.to_string());
            }
            if dev > tol {
                failures.push(format!(
                    "{file}: {name} = {got}, oracle {expected} ({:+.3} %)",
                    100.0 * (got / expected - 1.0)
                ));
            }
        }
    }
    println!("worst deviation from the oracle per value:");
    for (name, (dev, file)) in &worst {
        println!("  {name:5} {:.4} %  ({file})", 100.0 * dev);
    }
    assert_eq!(worst.len(), 9, "every value kind checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
