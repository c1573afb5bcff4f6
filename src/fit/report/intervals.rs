//! A fitted parameter's interval against the pins and bounds of its fit: the covariance
//! propagated to physical parameters (G cov_q Gᵀ), the combination a curve measures when a
//! parameter trades with a pinned one (i/h^γ), and Wald intervals clipped to the law's range.

use nalgebra::DMatrix;

use super::super::coords::{Coordinates, Param};
use super::super::path_model::P;
use super::super::problem::{identified_inverse, NEAR_SINGULAR};
use super::Z95;
use crate::kes::KesTest;

/// cov(a, b) of physical parameters, G cov_q Gᵀ (`g[col][param]` = ∂p/∂q); terms with a zero
/// derivative are skipped, so a coordinate that is not identified (NaN covariance) taints only
/// the parameters that depend on it.
pub(super) fn propagate(g: &[P], cov: Option<&DMatrix<f64>>, a: Param, b: Param) -> Option<f64> {
    let cov = cov?;
    let mut s = 0.0;
    for (u, gu) in g.iter().enumerate().filter(|(_, gu)| gu[a] != 0.0) {
        for (v, gv) in g.iter().enumerate().filter(|(_, gv)| gv[b] != 0.0) {
            s += gu[a] * cov[(u, v)] * gv[b];
        }
    }
    Some(s)
}

/// The standard error beyond which a parameter is not determined (the pinning rule's scale,
/// `fit/strategy/rounds.rs`): its bound span for the dimensionless fractions, else its value.
pub(super) fn scale_of(i: Param, value: f64, coords: &Coordinates) -> f64 {
    match i {
        Param::Mu | Param::Eta | Param::Ratio | Param::Alpha | Param::Offset => {
            coords.hi[i] - coords.lo[i]
        }
        _ => value.abs().max(1e-300),
    }
}

/// Why parameter `i`, determined only while the coordinates `held` keep their pinned values,
/// is not identified, and what the curve measures instead: i·h^−γ for the held parameter h it
/// follows most closely, γ = cov(ln i, ln h)/var(ln h) rounded (to an integer within 0.25 of
/// one, else to 0.1) — the combination whose variance with h free is least — with its 95 %
/// interval (Wald on its logarithm, h free). `relative`: i's standard error with h free over
/// its scale (None where JᵀJ does not determine it then).
pub(super) fn conditional_note(
    i: Param,
    held: &[Param],
    p: &P,
    relative: Option<f64>,
    cov: &dyn Fn(Param, Param) -> Option<f64>,
    test: KesTest,
) -> String {
    let correlation = |h: Param| -> f64 {
        let r = (|| Some(cov(i, h)? / (cov(i, i)? * cov(h, h)?).sqrt()))().unwrap_or(f64::NAN);
        if r.is_finite() {
            r
        } else {
            0.0
        }
    };
    let Some(&h) = held
        .iter()
        .max_by(|a, b| correlation(**a).abs().total_cmp(&correlation(**b).abs()))
    else {
        return "determined only with a pinned value held fixed".into();
    };
    // where no correlation is known (JᵀJ singular with the pins freed), every pinned value
    let named: Vec<Param> = if correlation(h) == 0.0 {
        held.to_vec()
    } else {
        vec![h]
    };
    let given: Vec<String> = named
        .iter()
        .map(|j| format!("{} = {:.4e}", j.name(test), p[*j]))
        .collect();
    let freed: Vec<&str> = named.iter().map(|j| j.name(test)).collect();
    let held_name = h.name(test);
    let mut note = format!(
        "determined only with {} held at its pinned value: with {} free",
        given.join(", "),
        freed.join(" and ")
    );
    match relative {
        Some(rel) => note.push_str(&format!(
            " its standard error is {:.0} % of its scale (correlation {:+.3} with {held_name})",
            100.0 * rel,
            correlation(h)
        )),
        None => note.push_str(" the curve does not determine it"),
    }
    let combination = combination(i, h, p, cov, test);
    if let Some(c) = combination {
        note.push_str(&format!(": the curve measures {c}"));
    }
    note
}

/// The combination i·h^−γ the curve measures of a parameter i that follows a held one h:
/// γ = cov(ln i, ln h)/var(ln h) rounded (to an integer within 0.25 of one, else to 0.1), the
/// combination whose variance with h free is least, with its 95 % interval (Wald on its
/// logarithm, h free); None where either value is not positive or γ rounds to 0.
pub(super) fn combination(
    i: Param,
    h: Param,
    p: &P,
    cov: &dyn Fn(Param, Param) -> Option<f64>,
    test: KesTest,
) -> Option<String> {
    let (name, held_name) = (i.name(test), h.name(test));
    let (vi, vh, c) = (p[i], p[h], cov(i, h)?);
    let (var_i, var_h) = (cov(i, i)?, cov(h, h)?);
    if !(vi > 0.0 && vh > 0.0 && var_i > 0.0 && var_h > 0.0 && c.is_finite()) {
        return None;
    }
    let raw = c * vh / (var_h * vi);
    let gamma = rounded_power(raw);
    if gamma == 0.0 || !gamma.is_finite() {
        return None;
    }
    let value = vi / vh.powf(gamma);
    let var_log =
        var_i / (vi * vi) - 2.0 * gamma * c / (vi * vh) + gamma * gamma * var_h / (vh * vh);
    if !(var_log > 0.0 && value.is_finite()) {
        return None;
    }
    let spread = (Z95 * var_log.sqrt()).exp();
    Some(format!(
        "{} = {value:.4e}, 95 % [{:.4e}, {:.4e}]",
        power_name(name, held_name, gamma),
        value / spread,
        value * spread
    ))
}

/// The pinned coordinate `j` freed alone beside the free ones: their covariance where it
/// determines `i`; else, where JᵀJ is singular (an eigenvalue of the scaled JᵀJ below 10⁻⁶)
/// with `i` in the direction it does not determine, the power γ for which i/j^γ stays
/// constant along that direction (the combination the curve measures), γ rounded as in
/// [`combination`]; None otherwise.
pub(super) fn one_freed(
    i: Param,
    j: Param,
    coords: &Coordinates,
    freed: &Coordinates,
    jtj: &DMatrix<f64>,
    s2: f64,
    p: &P,
) -> Option<Trade> {
    let mut one = coords.clone();
    one.free.push(j);
    let at: Vec<usize> = one
        .free
        .iter()
        .map(|c| freed.free.iter().position(|f| f == c))
        .collect::<Option<_>>()?;
    let n = at.len();
    let g = one.dp_dq();
    let sub = DMatrix::from_fn(n, n, |a, b| jtj[(at[a], at[b])]);
    if let Some(cov) = identified_inverse(&sub, s2) {
        let var = propagate(&g, Some(&cov), i, i);
        if var.is_some_and(|v| v > 0.0 && v.is_finite()) {
            return Some(Trade::Covariance(g, cov));
        }
    }
    let d: Vec<f64> = at.iter().map(|&a| jtj[(a, a)].max(0.0).sqrt()).collect();
    if d.iter().any(|v| !(*v > 0.0 && v.is_finite())) {
        return None;
    }
    let scaled = DMatrix::from_fn(n, n, |a, b| jtj[(at[a], at[b])] / (d[a] * d[b]));
    let eigen = scaled.symmetric_eigen();
    let (k, lambda) = eigen
        .eigenvalues
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))?;
    // an exact trade computed in floating point (the sensitivities of two parameters that
    // change the law identically agree to rounding, not to the bit): estimates correlated
    // beyond ±(1 − 10⁻⁶)
    if *lambda >= 1e3 * NEAR_SINGULAR {
        return None;
    }
    // the direction in q, then in the physical parameters
    let dq: Vec<f64> = (0..n).map(|a| eigen.eigenvectors[(a, k)] / d[a]).collect();
    let dp = |x: Param| -> f64 { g.iter().zip(&dq).map(|(col, v)| col[x] * v).sum() };
    let (di, dj) = (dp(i) / p[i], dp(j) / p[j]);
    let raw = di / dj;
    if !(raw.is_finite() && p[i] > 0.0 && p[j] > 0.0 && di.abs() > 1e-3 * dj.abs()) {
        return None;
    }
    let gamma = rounded_power(raw);
    (gamma != 0.0).then_some(Trade::Exact(gamma))
}

/// What freeing one pinned coordinate says of a parameter that depends on it.
pub(super) enum Trade {
    /// ∂p/∂q and the covariance of the coordinates with it freed (JᵀJ invertible there).
    Covariance(Vec<P>, DMatrix<f64>),
    /// JᵀJ singular with it: the power γ of the combination i/j^γ the curve measures.
    Exact(f64),
}

/// A power rounded to an integer within 0.25 of one, else to 0.1.
pub(super) fn rounded_power(raw: f64) -> f64 {
    if (raw - raw.round()).abs() < 0.25 {
        raw.round()
    } else {
        (raw * 10.0).round() / 10.0
    }
}

/// The note of a parameter that trades exactly with a pinned one (JᵀJ singular with both):
/// the curve measures i/j^γ, whose interval is i's given j (j fixed, the combination's
/// logarithm has i's relative standard error `se`/i).
pub(super) fn exact_trade_note(
    i: Param,
    j: Param,
    gamma: f64,
    p: &P,
    se: f64,
    test: KesTest,
) -> String {
    let (name, held) = (i.name(test), j.name(test));
    let value = p[i] / p[j].powf(gamma);
    let spread = (Z95 * se / p[i]).exp();
    let combination = power_name(name, held, gamma);
    format!(
        "determined only with {held} = {:.4e} held at its pinned value: {name} trades with {held} (with {held} free, JᵀJ is singular along them to 10⁻⁶): the curve measures {combination} = {value:.4e}, 95 % [{:.4e}, {:.4e}]",
        p[j],
        value / spread,
        value * spread
    )
}

/// `i/j`, `i*j`, `i/j^γ` or `i*j^γ` for i·j^−γ.
pub(super) fn power_name(name: &str, held: &str, gamma: f64) -> String {
    let power = if gamma.abs() == 1.0 {
        String::new()
    } else {
        format!("^{}", gamma.abs())
    };
    let op = if gamma > 0.0 { '/' } else { '*' };
    format!("{name}{op}{held}{power}")
}

/// Where `j` is pinned at a bound that is the fit's limit rather than the law's (eps_f at the
/// whole strain range or at its smallest, a rigidity at ×/÷ 50 of its estimate, alpha at 8,
/// the level at the force range, eps1 at its smallest, the offset): how far i's estimate moves
/// when j moves by its own value beyond that bound, cov(i, j)/var(j)·p_j (j freed); None for
/// a bound the law has itself (mu, f2/f1, eta, a level of 0, alpha = 1).
pub(super) fn open_bound_shift(
    i: Param,
    j: Param,
    p: &P,
    coords: &Coordinates,
    cov: &dyn Fn(Param, Param) -> Option<f64>,
) -> Option<f64> {
    let upper = coords.q[j] >= coords.hi[j];
    let lower = coords.q[j] <= coords.lo[j];
    let open = match j {
        Param::EpsF | Param::K | Param::Offset => upper || lower,
        Param::Alpha | Param::Level => upper,
        Param::Eps1 => lower,
        _ => false,
    };
    if !open {
        return None;
    }
    let slope = cov(i, j)? / cov(j, j).filter(|v| *v > 0.0)?;
    let moved = slope * p[j].abs();
    moved.is_finite().then_some(moved)
}

/// "given j = …": the value a conditional interval of i holds for, and how far i moves with j.
pub(super) fn given_note(
    i: Param,
    j: Param,
    p: &P,
    coords: &Coordinates,
    moved: f64,
    se: f64,
    test: KesTest,
) -> String {
    let (name, held) = (i.name(test), j.name(test));
    let side = if coords.q[j] >= coords.hi[j] {
        format!("the curve says only {held} >= {:.4e}", p[j])
    } else {
        format!("the curve says only {held} <= {:.4e}", p[j])
    };
    format!(
        "conditional: given {held} = {:.4e} (pinned at a bound: {side}); {name} follows it, moving by {moved:+.3e} ({:.0} standard errors) as {held} moves by its own value",
        p[j],
        moved.abs() / se.max(1e-300)
    )
}

/// A Wald interval against the values the law allows.
pub(super) enum Clipped {
    /// Clipped to them, and when it reached a bound, what that says.
    Within([f64; 2], Option<String>),
    /// It spans all of them, from the lower bound to the upper: the curve does not determine
    /// the parameter (the note says so with the interval).
    WholeRange(String),
}

/// The Wald interval clipped to the values the law allows for `i` (its fit bounds where they
/// have a physical meaning, else zero for a positive quantity), and when it reaches one, what
/// that says.
pub(super) fn clip_to_bounds(
    i: Param,
    wald: [f64; 2],
    coords: &Coordinates,
    test: KesTest,
) -> Clipped {
    let (lo, hi) = match i {
        Param::Mu
        | Param::Eta
        | Param::Ratio
        | Param::Alpha
        | Param::Level
        | Param::EpsF
        | Param::Eps1
        | Param::Offset => (coords.lo[i], coords.hi[i]),
        Param::K if test == KesTest::Loop => return Clipped::Within(wald, None),
        Param::K | Param::F1 | Param::Eps1Aligned => (0.0, f64::INFINITY),
    };
    let name = i.name(test);
    if wald[0] < lo && wald[1] > hi {
        return Clipped::WholeRange(format!(
            "not determined by this curve: its 95 % interval [{:.4e}, {:.4e}] spans the whole range the law allows, [{lo:.4e}, {hi:.4e}]",
            wald[0], wald[1]
        ));
    }
    let meaning = |upper: bool| -> &'static str {
        match (i, upper) {
            (Param::Mu, false) => "the law with load-independent friction (mu = 0) is within it",
            (Param::Mu, true) => "the steepest growth of the friction with load the law allows (mu = 0.99, an unloading slope of 1 %) is within it",
            (Param::Ratio, false) => "the first-order (Dahl) law, f2/f1 = 0, is within it",
            (Param::Ratio, true) => "the strongest stiction the law allows (f2/f1 = 0.95) is within it",
            (Param::Eta, false) => "a fast length as short as the law allows against the slow one (eta = 0.01) is within it",
            (Param::Eta, true) => "fast and slow lengths nearly equal (eta = 0.99) is within it",
            (Param::Alpha, false) => "the paper's Dahl law (alpha = 1) is within it",
            (Param::Level, false) => "a law with no friction at zero load (the loop's width from mu alone) is within it",
            (Param::EpsF, true) => "a friction that never saturates on this path (eps_f the whole strain range) is within it",
            (Param::EpsF, false) => "a friction that saturates at once after a reversal is within it",
            (Param::Eps1, true) => "the toe-only law (eps1 at the largest strain) is within it",
            (Param::K | Param::F1 | Param::Eps1Aligned, false) => "the curve does not tell it from zero",
            _ => "the curve does not tell it from the end of the range the fit allows",
        }
    };
    let reached = if wald[0] < lo {
        Some((false, lo))
    } else if wald[1] > hi {
        Some((true, hi))
    } else {
        None
    };
    // ε_f's upper bound is the fit's limit (the whole strain range), not the law's: the curve
    // does not bound ε_f from above there, so the interval keeps its Wald end
    if let (Param::EpsF, Some((true, bound))) = (i, reached) {
        return Clipped::Within(
            [wald[0].max(lo), wald[1]],
            Some(format!(
                "the 95 % interval [{:.4e}, {:.4e}] reaches past the fit's limit {name} = {bound:.4e} (the whole strain range): {}; the curve does not bound {name} from above, the interval is the Wald one",
                wald[0],
                wald[1],
                meaning(true)
            )),
        );
    }
    let clipped = [wald[0].max(lo), wald[1].min(hi)];
    let note = reached.map(|(upper, bound)| {
        format!(
            "the 95 % interval [{:.4e}, {:.4e}] reaches the {} bound {name} = {bound:.4e}: {}; shown clipped to [{:.4e}, {:.4e}]",
            wald[0],
            wald[1],
            if upper { "upper" } else { "lower" },
            meaning(upper),
            clipped[0],
            clipped[1]
        )
    });
    Clipped::Within(clipped, note)
}
