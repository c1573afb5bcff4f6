//! Parameters left on a bound, said in the user's terms, each with the simpler law (that
//! parameter removed or fixed at a named value) that was tried and lost by the AIC.

use super::super::coords::Param;
use super::super::report::{self, CurveFit};

/// A parameter of the chosen law left on a bound, said in the user's terms, with the simpler
/// law (that parameter removed or fixed at a named value) that was tried and lost by AIC.
pub(super) fn explain_bounds(best: &mut CurveFit, candidates: &[&CurveFit]) {
    let shape = |m: &str| m.split(['+', ',']).next().unwrap_or("").to_string();
    let toe = |m: &str| m.contains("power toe");
    let lost = |simpler: &dyn Fn(&CurveFit) -> bool| {
        candidates
            .iter()
            .filter(|c| simpler(c))
            .min_by(|a, b| a.aic.total_cmp(&b.aic))
            .map(|c| match c.aic_floor() {
                Some(floor) => format!(
                    "the simpler law `{}` was tried and lost by ΔAIC ≥ {:.1} (stopped once it could not win)",
                    c.model,
                    floor - best.aic
                ),
                None => format!(
                    "the simpler law `{}` was tried and lost by ΔAIC = {:.1}",
                    c.model,
                    c.aic - best.aic
                ),
            })
    };
    let model = best.model.clone();
    // the same friction shape and toe, μ = 0 (friction independent of the load)
    let without_mu = lost(&|c: &CurveFit| {
        !c.model.contains("+mu") && shape(&c.model) == shape(&model) && toe(&c.model) == toe(&model)
    });
    // the first-order (Dahl) law, same μ and toe: the second-order law with its ratio removed
    let dahl = lost(&|c: &CurveFit| {
        shape(&c.model) == "dahl"
            && c.model.contains("+mu") == model.contains("+mu")
            && toe(&c.model) == toe(&model)
    });
    for p in best.params.iter_mut() {
        let Some(why) = p.pinned.as_mut() else {
            continue;
        };
        if !why.starts_with(report::AT_BOUND_PREFIX) {
            continue;
        }
        let upper = why.starts_with("at its upper");
        let plain = match (p.param, upper) {
            (Param::Mu, true) => format!(
                "the friction grows with the load as fast as the law allows: at mu = 1 the unloading branch would be flat once the friction has turned (slope k(1 − mu)), beyond it the fabric would give back more than it took; the measured unloading branch falls faster than a friction proportional to the load explains; {}",
                without_mu.clone().unwrap_or_else(|| "no law with mu = 0 (load-independent friction) was tried (--mu zero fits it)".into())
            ),
            (Param::Ratio, false) => format!(
                "f2/f1 = 0: no stiction peak, the second-order law acts as a first-order one with length eta·eps_f; {}",
                dahl.clone().unwrap_or_else(|| "the Dahl law was not tried".into())
            ),
            (Param::Ratio, true) => format!(
                "f2/f1 at 0.95: the friction peaks right after each reversal and falls back to 5 % of that peak once the yarns slide on, the strongest stiction the law allows (at f2/f1 = 1 the sliding friction would vanish); the loop is widest just after each turn; {}",
                dahl.clone().unwrap_or_else(|| "the first-order (Dahl) law, without a stiction peak, was not tried (--model dahl fits it)".into())
            ),
            (Param::EpsF, true) => "eps_f at the whole strain range: the friction never saturates on this path, it keeps building up over a whole stroke after each reversal, so the curve only says its length is at least the stroke (a longer path would measure it)".into(),
            (Param::EpsF, false) => "eps_f at its smallest: the friction saturates at once after a reversal (a step), shorter than the sampling resolves".into(),
            (Param::Level, false) => format!(
                "no friction at zero load: the loop's width comes from mu alone (friction proportional to the load){}",
                if model.contains("+mu") { "" } else { "; with mu = 0 the loop has no friction at all" }
            ),
            (Param::Level, true) => "the friction level at the force range: the loop is as wide as the curve is tall, the friction is not separable from the elastic part on this curve".into(),
            (Param::Eta, _) => "eta at its bound: the fast and slow friction lengths cannot be told apart (eta → 1) or the fast one is unresolved (eta → 0.01)".into(),
            (Param::F1, _) | (Param::Eps1Aligned, _) => "the toe shape is at the end of its admissible range (quadratic toe: F1 between k·eps1/2 and k·eps1)".into(),
            // ε₁ at the largest strain is the toe-only law and ε₁' = ε₁ a named law (`fit_model`)
            _ => continue,
        };
        *why = format!("{why} — {plain}");
    }
}
