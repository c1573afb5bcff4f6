//! `auto` fits the Dahl law with α = 1 (the paper's); `--model dahl-alpha` frees α. When
//! `auto` chooses a Dahl law, the law with α free is fitted once from its optimum and the
//! selection says whether it would win by the AIC (the choice itself is unchanged).

use super::super::coords::Param;
use super::super::options::{FitModel, FitOptions, MuMode, ProgressSink};
use super::super::report::CurveFit;
use super::{better, fit_model, Start};
use crate::kes::Curve;

/// What the Dahl law with α free, fitted from the chosen Dahl law `best`, says: a sentence
/// for the selection (starting with "; "), None when `best` is not an `auto` Dahl law.
pub(super) fn alpha_note(
    specimens: &[&Curve],
    options: &FitOptions,
    progress: ProgressSink<'_>,
    best: &CurveFit,
) -> Option<String> {
    if options.model != FitModel::Auto || !best.is_fitted() || !best.model.starts_with("dahl") {
        return None;
    }
    let mu = if best.model.contains("+mu") {
        MuMode::Free
    } else {
        MuMode::Zero
    };
    let power = best.model.contains("power toe");
    let start = Start {
        estimate: Some(best.physical()),
        leader: None,
    };
    let free = fit_model(
        specimens,
        FitModel::DahlAlpha,
        mu,
        power,
        options,
        progress,
        start,
    );
    let alpha = free.value(Param::Alpha).filter(|_| free.is_fitted())?;
    // a difference of AIC below 2 does not tell the two laws apart (one parameter more)
    Some(
        if better(&free, best) && free.aic < best.aic - CLEARLY_BETTER_AIC {
            format!(
            "; the Dahl law with alpha free fits better: `{}` from this optimum ends at AIC {:.1} (NRMSE {:.3} %, alpha = {alpha:.3}): --model dahl-alpha fits it (auto keeps alpha = 1)",
            free.model,
            free.aic,
            100.0 * free.nrmse
        )
        } else {
            format!(
                "; with alpha free (`{}` from this optimum, alpha = {alpha:.3}) the AIC is {:.1}, \
             not better by {CLEARLY_BETTER_AIC}",
                free.model, free.aic
            )
        },
    )
}

/// AIC points by which the law with α free must beat the chosen Dahl law to be called better
/// (below 2 the data do not tell two laws apart).
const CLEARLY_BETTER_AIC: f64 = 2.0;
