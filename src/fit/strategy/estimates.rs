//! The initial estimate of a candidate's law on one or several specimens: each specimen's
//! estimate from its curve's shape, the one whose law is closest to all of them kept.

use super::super::estimate::{elastic_estimate, initial_estimate, with_friction_length};
use super::super::options::FitModel;
use super::super::path_model::{idx, simulate, ElasticKind, LawKind, P};
use super::super::problem::Segment;
use super::{model_kind, segments_of, thin};
use crate::kes::Curve;

/// The initial estimate of the law: from the curve's shape; with several specimens, the
/// specimen estimate whose law is closest to all of them (stacked scaled residuals).
pub(super) fn joint_estimate(kind: LawKind, specimens: &[&Curve], segments: &[Segment<'_>]) -> P {
    let elastic: Vec<P> = specimens
        .iter()
        .map(|c| elastic_estimate(kind.elastic, &c.x, &c.y))
        .collect();
    joint_estimate_from(kind, specimens, segments, &elastic)
}

/// [`joint_estimate`] from each specimen's [`elastic_estimate`] (shared by every friction
/// shape of one elastic law).
fn joint_estimate_from(
    kind: LawKind,
    specimens: &[&Curve],
    segments: &[Segment<'_>],
    elastic: &[P],
) -> P {
    let estimates = specimens
        .iter()
        .zip(elastic)
        .map(|(c, p)| with_friction_length(kind, *p, &c.x, &c.y));
    if specimens.len() == 1 {
        return estimates.into_iter().next().unwrap_or([0.0; idx::N]);
    }
    let misfit = |p: &P| -> f64 {
        segments
            .iter()
            .map(|s| {
                let mut f = vec![0.0; s.x.len()];
                simulate(kind, p, s.x, &mut f);
                let r: f64 = f.iter().zip(s.y).map(|(a, b)| (a - b) * (a - b)).sum();
                r / (s.y_range * s.y_range)
            })
            .sum::<f64>()
    };
    estimates
        .map(|p| (misfit(&p), p))
        .filter(|(m, _)| m.is_finite())
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or_else(
            || initial_estimate(kind, &specimens[0].x, &specimens[0].y),
            |(_, p)| p,
        )
}

/// The initial estimate of `model`'s law (μ free or zero start from the same one); each
/// specimen's elastic estimate is taken from `elastic` when that holds one for the law's
/// elastic part, else computed and kept there.
pub(super) fn model_estimate(
    specimens: &[&Curve],
    model: FitModel,
    power: bool,
    elastic: &mut Vec<(ElasticKind, Vec<P>)>,
) -> P {
    let (kind, _) = model_kind(specimens[0].test, model, power);
    let thinned = thin(specimens);
    let at = match elastic.iter().position(|e| e.0 == kind.elastic) {
        Some(at) => at,
        None => {
            let each = specimens
                .iter()
                .map(|c| elastic_estimate(kind.elastic, &c.x, &c.y))
                .collect();
            elastic.push((kind.elastic, each));
            elastic.len() - 1
        }
    };
    joint_estimate_from(kind, specimens, &segments_of(&thinned), &elastic[at].1)
}
