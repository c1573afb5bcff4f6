//! KES-FB1 tensile values: EMT [%] at the turning point, WT = ∫F dε on loading [gf·cm/cm²],
//! LT = WT / (F_m·EMT/2), RT = 100 · returned energy / WT [%], all read at the curve's F_m.

use std::collections::BTreeMap;

use super::{short, trapezoid, KesPath, KesReading, ReadingRules};
use crate::friction::short_number;
use crate::kes::import::parse_decimal;
use crate::kes::units::{split_header, KesQuantity};

/// A compression curve that turns within this fraction above P_m went to P_m (the instrument
/// stops at the sample past it); further above, its recovery starts from another pressure.
pub const FM_TOLERANCE: f64 = 0.05;

/// A tensile curve whose largest force lies from `FM_BELOW` below to `FM_ABOVE` above the
/// nominal F_m (or the file's `max force`) went to it: the instrument stops at the first sample
/// past F_m (overshoot), and a sampled peak may fall just short; further off, it went to
/// another force and F_m is its own largest force (LT is then not biased by the nominal one).
pub const FM_BELOW: f64 = 0.01;
pub const FM_ABOVE: f64 = 0.02;

/// A return branch that gives back more than this fraction of the loading energy runs the
/// wrong way (rows in reverse order): more than round-off and noise on an elastic curve.
pub(super) const REVERSED_RETURN: f64 = 1.02;

/// The `max force [unit]` metadata in gf/cm: `None` without the line, `Err` (the line as
/// written) when its unit or number cannot be read or the force is not positive.
fn max_force_metadata(metadata: &BTreeMap<String, String>) -> Option<Result<f64, String>> {
    let (key, text) = metadata
        .iter()
        .find(|(k, _)| split_header(k).0 == "max force")?;
    let (_, gf_cm) = KesQuantity::Force.kes_unit();
    // metadata keys are read in lower case: the force units differ in more than case
    let force = split_header(key)
        .1
        .and_then(|u| {
            let u = u.to_lowercase();
            KesQuantity::Force
                .units()
                .iter()
                .find(|(name, _)| name.to_lowercase() == u)
                .map(|&(_, f)| f)
        })
        .zip(parse_decimal(text))
        .map(|(factor, v)| v * factor / gf_cm)
        .filter(|v| v.is_finite() && *v > 0.0);
    Some(force.ok_or_else(|| format!("`# {key}: {text}`")))
}

/// F_m [gf/cm] for a loading branch whose largest force is `largest`: the file's `max force`
/// (else the nominal one) when `largest` lies within [`FM_BELOW`]..[`FM_ABOVE`] of it, else
/// `largest` itself (with a note); `Err` with the reason LT cannot be read.
fn max_force(
    metadata: &BTreeMap<String, String>,
    largest: f64,
    nominal: f64,
    reading: &mut KesReading,
) -> Result<f64, String> {
    let compare = "EMT, WT, LT and RT compare only with curves taken to the same force";
    // the force the curve should have stopped at: the file's line, else the standard one
    let (fm, from_line) = match max_force_metadata(metadata) {
        Some(Err(line)) => {
            return Err(format!(
                "the metadata line {line} is not a positive force in {}, and LT needs F_m",
                KesQuantity::Force.expected_units()
            ))
        }
        Some(Ok(fm)) => (fm, true),
        None => (nominal, false),
    };
    if (fm * (1.0 - FM_BELOW)..=fm * (1.0 + FM_ABOVE)).contains(&largest) {
        if from_line && fm != nominal {
            reading.notes.push(format!(
                "F_m = {} gf/cm from the file's `max force` metadata, not the standard {} \
                 gf/cm: {compare}",
                short_number(fm),
                short_number(nominal)
            ));
        }
        return Ok(fm);
    }
    if largest <= 0.0 {
        return Err(format!(
            "the force never rises above zero on loading (its largest is {} gf/cm), and LT \
             needs F_m",
            short(largest)
        ));
    }
    let band = format!("{} % to +{} %", -100.0 * FM_BELOW, 100.0 * FM_ABOVE);
    let missed = if from_line {
        format!(
            "`max force` metadata, {} gf/cm, so the curve did not stop there",
            short_number(fm)
        )
    } else {
        format!(
            "standard {} gf/cm and the file has no `# max force [gf/cm]` line",
            short_number(fm)
        )
    };
    reading.notes.push(format!(
        "F_m = {} gf/cm, the curve's largest force: it is not within {band} of the {missed}; \
         {compare}",
        short(largest)
    ));
    Ok(largest)
}

/// A woven fabric's EMT under a tensile force of [`UNIT_CHECK_FORCE`] gf/cm or more lies within
/// these bounds [%]; outside, the strain column's unit may be the wrong one (fractions under
/// `[%]`, percent numbers under `[-]`).
pub const WOVEN_EMT_RANGE: (f64, f64) = (1.0, 30.0);

/// The force [gf/cm] from which an EMT outside [`WOVEN_EMT_RANGE`] is noted.
pub const UNIT_CHECK_FORCE: f64 = 100.0;

/// A note (never a refusal: a stiff technical fabric or a knit may be there) when EMT is
/// outside the woven range under a force of hundreds of gf/cm.
fn strain_unit_note(emt: f64, largest: f64, reading: &mut KesReading) {
    let (lo, hi) = WOVEN_EMT_RANGE;
    if largest < UNIT_CHECK_FORCE || (lo..=hi).contains(&emt) {
        return;
    }
    let hint = if emt < lo {
        "if the strain column holds fractions (0.065 for 6.5 %), its header must say \
         `strain [-]`"
    } else {
        "if the strain column holds percent numbers (0.65 for 0.65 %), its header must say \
         `strain [%]`"
    };
    reading.notes.push(format!(
        "EMT = {} % at {} gf/cm: woven fabrics usually reach {lo}..{hi} % at such forces; {hint}",
        short(emt),
        short(largest)
    ));
}

/// EMT, WT, LT, RT of a tensile path (strain in %, force in gf/cm).
pub(super) fn tensile(
    path: &KesPath,
    metadata: &BTreeMap<String, String>,
    rules: &ReadingRules,
    reading: &mut KesReading,
) {
    let (x, y, bs) = (&path.x, &path.y, &path.branches);
    let Some(loading) = bs.first().filter(|b| b.rising) else {
        let reason = if bs.iter().any(|b| b.rising) {
            "the path starts by lowering the strain, where a tensile test starts by loading: \
             are the rows in measurement order?"
        } else {
            "the strain never increases: no loading branch"
        };
        for v in ["EMT", "LT", "WT", "RT"] {
            reading.missing(v, reason);
        }
        return;
    };
    // Strain in %, force in gf/cm: ∫F dε with ε as a fraction is in gf·cm/cm².
    let emt = x[loading.end];
    let wt = trapezoid(x, y, loading) / 100.0;
    reading.values.emt = Some(emt);
    let largest = loading
        .range()
        .map(|i| y[i])
        .fold(f64::NEG_INFINITY, f64::max);
    strain_unit_note(emt, largest, reading);
    let returned = bs.get(1).map(|b| -trapezoid(x, y, b) / 100.0);
    // the return branch above the loading one gives back more energy than loading took: a
    // path run backwards (rows in reverse order), never a measured one
    if let Some(returned) = returned.filter(|r| wt > 0.0 && *r > REVERSED_RETURN * wt) {
        let reason = format!(
            "the return branch lies above the loading one (it gives back {} % of the loading \
             energy): rows in reverse order? WT, LT and RT are read on the loading branch",
            short(100.0 * returned / wt)
        );
        for v in ["LT", "WT", "RT"] {
            reading.missing(v, reason.clone());
        }
        return;
    }
    reading.values.wt = Some(wt);
    let fm = max_force(metadata, largest, rules.tensile_max_force, reading);
    reading.max_force_gf_cm = fm.as_ref().ok().copied();
    match fm {
        Ok(_) if emt <= 0.0 => reading.missing(
            "LT",
            format!("EMT = {} % is not positive", short_number(emt)),
        ),
        Ok(fm) => reading.values.lt = Some(wt / (fm * emt / 100.0 / 2.0)),
        Err(reason) => reading.missing("LT", reason),
    }
    match returned {
        Some(returned) if wt > 0.0 => reading.values.rt = Some(100.0 * returned / wt),
        Some(_) => reading.missing("RT", format!("WT = {} is not positive", short_number(wt))),
        None => reading.missing(
            "RT",
            "no reversal: the strain never returns from its maximum, and RT needs the \
             unloading branch",
        ),
    }
}
