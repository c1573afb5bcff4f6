//! KES-FB1 tensile values: EMT [%] at the turning point, WT = ∫F dε on loading [gf·cm/cm²],
//! LT = WT / (F_m·EMT/2), RT = 100 · returned energy / WT [%], all read at the curve's F_m.

use std::collections::BTreeMap;

use super::{short, trapezoid, KesPath, KesReading, MaxForce, MaxForceSource, ReadingRules};
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

/// The metadata key the reader sets to the force column's unit (as written in the header)
/// when a tensile file's `max force` line gives no unit.
pub(crate) const FORCE_COLUMN_UNIT: &str = "force column unit";

/// The `max force [unit]` metadata in gf/cm, with a note when the line has no unit and is
/// read in the force column's (`FORCE_COLUMN_UNIT`): `None` without the line, `Err` (the
/// line as written) when its unit or number cannot be read or the force is not positive.
fn max_force_metadata(
    metadata: &BTreeMap<String, String>,
) -> Option<Result<(f64, Option<String>), String>> {
    let (key, text) = metadata
        .iter()
        .find(|(k, _)| split_header(k).0 == "max force")?;
    let (_, gf_cm) = KesQuantity::Force.kes_unit();
    let line = format!("`# {key}: {text}`");
    let (factor, note) = match split_header(key).1 {
        // metadata keys are read in lower case: the force units differ in more than case
        Some(u) => {
            let u = u.to_lowercase();
            let factor = KesQuantity::Force
                .units()
                .iter()
                .find(|(name, _)| name.to_lowercase() == u)
                .map(|&(_, f)| f);
            (factor, None)
        }
        // no unit: the force column's, which the file gives its forces in
        None => match metadata.get(FORCE_COLUMN_UNIT) {
            Some(unit) => (
                KesQuantity::Force.factor(unit),
                Some(format!(
                    "the metadata line {line} gives no unit: read in the force column's, {unit}"
                )),
            ),
            None => (None, None),
        },
    };
    let force = factor
        .zip(parse_decimal(text))
        .map(|(factor, v)| v * factor / gf_cm)
        .filter(|v| v.is_finite() && *v > 0.0);
    Some(force.map(|f| (f, note)).ok_or(line))
}

/// F_m [gf/cm] for a loading branch whose largest force is `largest`: the file's `max force`
/// (else the nominal one) when `largest` lies within [`FM_BELOW`]..[`FM_ABOVE`] of it, else
/// `largest` itself (with a note); `Err` with the reason LT cannot be read.
fn max_force(
    metadata: &BTreeMap<String, String>,
    largest: f64,
    nominal: f64,
    reading: &mut KesReading,
) -> Result<MaxForce, String> {
    let compare = "EMT, WT, LT and RT compare only with curves taken to the same force";
    // the force the curve should have stopped at: the file's line, else the standard one
    let (fm, from_line) = match max_force_metadata(metadata) {
        Some(Err(line)) => {
            return Err(format!(
                "the metadata line {line} is not a positive force in {} (or, without a unit, \
                 in the force column's), and LT needs F_m",
                KesQuantity::Force.expected_units()
            ))
        }
        Some(Ok((fm, note))) => {
            reading.notes.extend(note);
            (fm, true)
        }
        None => (nominal, false),
    };
    if (fm * (1.0 - FM_BELOW)..=fm * (1.0 + FM_ABOVE)).contains(&largest) {
        if from_line && fm != nominal {
            reading.notes.push(format!(
                "F_m = {} gf/cm from the file's `max force` metadata, not the standard {} \
                 gf/cm: {compare}",
                short(fm),
                short(nominal)
            ));
        }
        let from = if from_line {
            MaxForceSource::Metadata
        } else {
            MaxForceSource::Nominal
        };
        return Ok(MaxForce { gf_cm: fm, from });
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
            short(fm)
        )
    } else {
        format!(
            "standard {} gf/cm and the file has no `# max force [gf/cm]` line",
            short(fm)
        )
    };
    reading.notes.push(format!(
        "F_m = {} gf/cm, the curve's largest force: it is not within {band} of the {missed}; \
         {compare}",
        short(largest)
    ));
    Ok(MaxForce {
        gf_cm: largest,
        from: MaxForceSource::Curve,
    })
}

/// A woven fabric's EMT under a tensile force of [`UNIT_CHECK_FORCE`] gf/cm or more is at most
/// this [%]; above, the strain column may hold percent numbers under `[-]`.
pub const WOVEN_EMT_MAX: f64 = 30.0;

/// The stiffest secant F/EMT a woven fabric shows on the tensile test [gf/cm per %]: 1000,
/// EMT 0.5 % at 500 gf/cm or 0.25 % at 250 gf/cm. Stiffer is the mark of fractions under
/// `[%]` (EMT 3.2 % written 0.032: 15600 at 500 gf/cm); a stiff fabric (EMT 0.83 % at
/// 250 gf/cm: 300) is not.
pub const WOVEN_MAX_SECANT: f64 = 1000.0;

/// The force [gf/cm] from which the strain column's unit is checked.
pub const UNIT_CHECK_FORCE: f64 = 100.0;

/// A note (never a refusal: a technical fabric or a knit may be there) when the strain column
/// looks like the other unit: under a force of hundreds of gf/cm, the secant F/EMT stiffer
/// than [`WOVEN_MAX_SECANT`] (fractions under `[%]`) or EMT above [`WOVEN_EMT_MAX`] (percent
/// numbers under `[-]`).
fn strain_unit_note(emt: f64, largest: f64, reading: &mut KesReading) {
    if largest < UNIT_CHECK_FORCE {
        return;
    }
    let hint = if emt <= 0.0 || largest / emt > WOVEN_MAX_SECANT {
        format!(
            "stiffer than any woven fabric (at most {} gf/cm per % of strain); if the strain \
             column holds fractions (0.065 for 6.5 %), its header must say `strain [-]`",
            short(WOVEN_MAX_SECANT)
        )
    } else if emt > WOVEN_EMT_MAX {
        format!(
            "woven fabrics reach at most {} % at such forces; if the strain column holds \
             percent numbers (0.65 for 0.65 %), its header must say `strain [%]`",
            short(WOVEN_EMT_MAX)
        )
    } else {
        return;
    };
    reading.notes.push(format!(
        "EMT = {} % at {} gf/cm: {hint}",
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
    reading.max_force = fm.as_ref().ok().copied();
    match fm.map(|f| f.gf_cm) {
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
