//! KES-FB3 compression (T0, TM [mm]; WC = ∫P dT [gf·cm/cm²]; LC = WC/(P_m(T0−TM)/2);
//! RC = 100·∫P dT on recovery / WC, EMC = 100(T0−TM)/T0 [%]) and FB4 surface values over
//! X [cm]: MIU = (1/X)∫μ dx, MMD = (1/X)∫|μ − MIU| dx [-], SMD = (1/X)∫|T − T̄| dx [µm].

use super::{KesPath, KesReading, ReadingRules};
use crate::kes::path::Branch;
use crate::kes::write::number;

/// The turn of a compression test may stop a little short of P_m (the plate reverses at the
/// sample that reaches it, within the load cell's resolution): a maximum pressure within this
/// fraction below P_m still gives TM, at the turning point, with a note.
pub const PM_SHORTFALL: f64 = 0.01;

/// The pieces of a branch whose x lies in [lo, hi], as (length |dx|, y at the start, y at the
/// end), y linear between samples.
fn clipped(x: &[f64], y: &[f64], b: &Branch, lo: f64, hi: f64) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for i in b.start..b.end {
        let (xa, xb, ya, yb) = (x[i], x[i + 1], y[i], y[i + 1]);
        let (s0, s1) = (xa.min(xb).max(lo), xa.max(xb).min(hi));
        if s1 <= s0 || xa == xb {
            continue;
        }
        let at = |s: f64| ya + (yb - ya) * (s - xa) / (xb - xa);
        out.push((s1 - s0, at(s0), at(s1)));
    }
    out
}

/// ∫y |dx| over the pieces (trapezoids: exact for y linear between samples).
fn integral(pieces: &[(f64, f64, f64)]) -> f64 {
    pieces.iter().map(|&(l, a, b)| 0.5 * l * (a + b)).sum()
}

/// ∫|y − c| |dx| over the pieces, exact for y linear between samples (a piece crossing c is
/// two triangles).
fn abs_deviation(pieces: &[(f64, f64, f64)], c: f64) -> f64 {
    pieces
        .iter()
        .map(|&(l, a, b)| {
            let (da, db) = (a - c, b - c);
            if da * db >= 0.0 {
                0.5 * l * (da + db).abs()
            } else {
                0.5 * l * (da * da + db * db) / (da.abs() + db.abs())
            }
        })
        .sum()
}

/// The thickness where the pressure first reaches `p` on the compression branch, linear
/// between the samples around it; `None` when it never does (with a little slack for
/// pressures converted SI → KES units).
fn thickness_at(x: &[f64], y: &[f64], b: &Branch, p: f64) -> Option<f64> {
    let reach = p - 1e-9 * p.abs().max(1.0);
    (b.start..b.end).find_map(|i| {
        let (ya, yb) = (y[i], y[i + 1]);
        (ya < reach && yb >= reach).then(|| {
            let s = ((p - ya) / (yb - ya)).clamp(0.0, 1.0);
            x[i] + (x[i + 1] - x[i]) * s
        })
    })
}

/// T0, TM, WC, LC, RC, EMC of a compression path (thickness in mm, pressure in gf/cm²).
pub(super) fn compression(path: &KesPath, rules: &ReadingRules, reading: &mut KesReading) {
    let (x, y, bs) = (&path.x, &path.y, &path.branches);
    let all = ["T0", "TM", "WC", "LC", "RC", "EMC"];
    let Some(comp) = bs.first().filter(|b| !b.rising) else {
        let reason = if bs.is_empty() {
            "the thickness never changes: no compression branch"
        } else {
            "the path starts by opening the plates (thickness rising), where a compression \
             test starts by closing them: are the rows in measurement order?"
        };
        for v in all {
            reading.missing(v, reason);
        }
        return;
    };
    let (p0, pm) = (
        rules.compression_t0_pressure,
        rules.compression_max_pressure,
    );
    let t0 = if y[comp.start] >= p0 - 1e-9 * p0.abs().max(1.0) {
        reading.missing(
            "T0",
            format!(
                "the first sample is already at {} gf/cm2, not below the {p0} gf/cm2 that \
                 defines T0: the record must start before the plate touches the fabric",
                number(y[comp.start])
            ),
        );
        None
    } else {
        let t0 = thickness_at(x, y, comp, p0);
        if t0.is_none() {
            reading.missing(
                "T0",
                format!("the pressure never reaches {p0} gf/cm2 on compression"),
            );
        }
        t0
    };
    let p_max = comp.range().map(|i| y[i]).fold(f64::NEG_INFINITY, f64::max);
    let tm = match thickness_at(x, y, comp, pm) {
        Some(tm) => Some(tm),
        _ if p_max >= pm * (1.0 - PM_SHORTFALL) && p_max < pm => {
            reading.notes.push(format!(
                "TM at the turning point: the pressure turns at {} gf/cm2, within {} % of \
                 P_m = {pm} gf/cm2",
                number(p_max),
                100.0 * PM_SHORTFALL
            ));
            Some(x[comp.end])
        }
        _ => {
            reading.missing(
                "TM",
                format!(
                    "the pressure never reaches P_m = {pm} gf/cm2 on compression (its maximum \
                     is {} gf/cm2): TM is the thickness at P_m",
                    number(p_max)
                ),
            );
            None
        }
    };
    reading.values.t0 = t0;
    reading.values.tm = tm;
    let (Some(t0), Some(tm)) = (t0, tm) else {
        for v in ["WC", "LC", "RC", "EMC"] {
            reading.missing(v, "it needs both T0 and TM");
        }
        return;
    };
    if t0 <= tm || t0 <= 0.0 {
        for v in ["WC", "LC", "RC", "EMC"] {
            reading.missing(
                v,
                format!("T0 = {} mm is not above TM = {} mm", number(t0), number(tm)),
            );
        }
        return;
    }
    // thickness in mm, pressure in gf/cm²: ∫P dT with T in cm is in gf·cm/cm²
    let wc = integral(&clipped(x, y, comp, tm, t0)) / 10.0;
    let returned = bs
        .get(1)
        .map(|recovery| integral(&clipped(x, y, recovery, tm, t0)) / 10.0);
    // recovery above compression gives back more energy than compression took: a path run
    // backwards (rows in reverse order), never a measured one; T0 was then read on recovery
    if let Some(returned) = returned.filter(|r| wc > 0.0 && *r > super::REVERSED_RETURN * wc) {
        let reason = format!(
            "the recovery branch lies above the compression one (it gives back {} % of the \
             compression energy): rows in reverse order? T0, WC, LC, RC and EMC are read on \
             the compression branch",
            super::short(100.0 * returned / wc)
        );
        reading.values.t0 = None;
        for v in ["T0", "WC", "LC", "RC", "EMC"] {
            reading.missing(v, reason.clone());
        }
        return;
    }
    reading.values.wc = Some(wc);
    reading.values.emc = Some(100.0 * (t0 - tm) / t0);
    if pm > 0.0 {
        reading.values.lc = Some(wc / (pm * (t0 - tm) / 10.0 / 2.0));
    }
    let over = pm * (1.0 + super::FM_TOLERANCE);
    match returned {
        // RC is the recovery from P_m: a recovery from far above it is another branch
        Some(_) if p_max > over => reading.missing(
            "RC",
            format!(
                "the curve turns at {} gf/cm2, more than {} % above P_m = {pm} gf/cm2: its \
                 recovery starts there, and RC is the recovery from P_m",
                super::short(p_max),
                100.0 * super::FM_TOLERANCE
            ),
        ),
        Some(returned) if wc > 0.0 => reading.values.rc = Some(100.0 * returned / wc),
        Some(_) => reading.missing("RC", format!("WC = {} is not positive", number(wc))),
        None => reading.missing(
            "RC",
            "no reversal: the thickness never recovers from TM, and RC needs the recovery \
             branch",
        ),
    }
}

/// The first `trace` cm of each monotone stroke of a surface path (forward, reverse, …), as
/// clipped pieces, and how many strokes were shorter than `trace` (left out).
type Strokes = (Vec<Vec<(f64, f64, f64)>>, usize);

fn traces(path: &KesPath, trace: f64) -> Result<Strokes, String> {
    let (x, y) = (&path.x, &path.y);
    let slack = 1e-9 * trace.abs().max(1.0);
    let mut out = Vec::new();
    let mut longest: f64 = 0.0;
    for b in &path.branches {
        let travel = (x[b.end] - x[b.start]).abs();
        longest = longest.max(travel);
        if travel + slack < trace {
            continue;
        }
        let (lo, hi) = if b.rising {
            (x[b.start], x[b.start] + trace)
        } else {
            (x[b.start] - trace, x[b.start])
        };
        out.push(clipped(x, y, b, lo, hi));
    }
    if out.is_empty() {
        return Err(format!(
            "no stroke of the trace covers X = {trace} cm (the longest covers {} cm)",
            number(longest)
        ));
    }
    let short = path.branches.len() - out.len();
    Ok((out, short))
}

/// Mean over the strokes of (1/X)∫y dx and (1/X)∫|y − mean| dx over the first X of each; a
/// note when strokes shorter than X were left out.
fn surface_means(
    path: &KesPath,
    trace: f64,
    reading: &mut KesReading,
) -> Result<(f64, f64), String> {
    let (strokes, short) = traces(path, trace)?;
    if short > 0 {
        reading.notes.push(format!(
            "{short} stroke(s) shorter than X = {trace} cm left out; read from the other {}",
            strokes.len()
        ));
    }
    let n = strokes.len() as f64;
    let (mut mean, mut dev) = (0.0, 0.0);
    for pieces in &strokes {
        let m = integral(pieces) / trace;
        mean += m;
        dev += abs_deviation(pieces, m) / trace;
    }
    Ok((mean / n, dev / n))
}

/// MIU and MMD of a friction trace (position in cm, μ).
pub(super) fn friction(path: &KesPath, rules: &ReadingRules, reading: &mut KesReading) {
    match surface_means(path, rules.surface_trace, reading) {
        Ok((miu, mmd)) => {
            reading.values.miu = Some(miu);
            reading.values.mmd = Some(mmd);
        }
        Err(reason) => {
            reading.missing("MIU", reason.clone());
            reading.missing("MMD", reason);
        }
    }
}

/// SMD of a roughness trace (position in cm, height in µm).
pub(super) fn roughness(path: &KesPath, rules: &ReadingRules, reading: &mut KesReading) {
    match surface_means(path, rules.surface_trace, reading) {
        Ok((_, smd)) => reading.values.smd = Some(smd),
        Err(reason) => reading.missing("SMD", reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abs_deviation_of_a_crossing_piece_is_two_triangles() {
        // y from −1 to 1 over length 2 about 0: two triangles of area 1/2
        assert!((abs_deviation(&[(2.0, -1.0, 1.0)], 0.0) - 1.0).abs() < 1e-15);
        assert!((abs_deviation(&[(2.0, 1.0, 3.0)], 0.0) - 4.0).abs() < 1e-15);
    }
}
