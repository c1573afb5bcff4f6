//! The rounds of one candidate's least-squares fit: a short run, then refining runs between
//! which coordinates on a bound, or creeping toward one, are pinned there (when the law with
//! them there fits at least as well) and the worst-determined coordinate is pinned at its value.
//! A candidate of `auto` stops once even its linearised optimum cannot beat the leader's AIC.

use levenberg_marquardt::LeastSquaresProblem;
use nalgebra::DMatrix;

use super::super::coords::{Coordinates, Param};
use super::super::options::ProgressSink;
use super::super::problem::{run_lm, PathProblem, Segment, Termination, ValueTargets};
use crate::kes::KesTest;

/// A coordinate closer than this fraction of its span to a bound after a run is pinned there.
/// (Wider margins pin coordinates that are merely passing by and wreck the fit.)
const AT_BOUND: f64 = 0.005;

/// A coordinate this close (fraction of its span) to a bound and moving toward it at the end
/// of a run is tried on the bound.
const NEAR_BOUND: f64 = 0.05;

/// A coordinate near a bound is creeping toward it when one run covered at least this
/// fraction of the way still left.
const HEADING: f64 = 0.25;

/// A refining run that lowers the objective by less than this fraction has converged for the
/// model choice (10⁻⁴ of the residual sum of squares is 0.1 in AIC at 1 000 samples).
const STALLED: f64 = 1e-4;

/// Iterations per refining run, per free coordinate and one (the evaluation budget of a run).
const CHUNK_ITERATIONS: usize = 4;

/// A fit stops after this many times the evaluation budget of one run (`max_evaluations`).
const MAX_RUNS: usize = 4;

/// The residual sum of squares a candidate is granted beyond the minimum of its linearised
/// (Gauss–Newton) model before it is stopped as unable to win: that minimum divided by this.
const OUTRANKED_MARGIN: f64 = 4.0;

/// The candidate with the lowest AIC so far (`auto`), which a candidate being fitted must be
/// able to beat to go on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leader {
    pub aic: f64,
    /// The leader's NRMSE (pooled over specimens), a fraction.
    pub nrmse: f64,
    /// The leader's k in AIC = N ln(RSS/N) + 2k.
    pub free_parameters: usize,
    /// N: every sample of every specimen.
    pub samples: usize,
}

impl Leader {
    /// The lowest AIC the candidate at `problem` could still reach, when even that cannot beat
    /// the leader: its RSS at a [`OUTRANKED_MARGIN`]-th of the minimum of its Gauss–Newton model
    /// (every free coordinate unbounded, J linearised where the candidate stands: the part of
    /// the residuals outside J's column space, from a Householder QR of [J | r]), and k = 0.
    /// With RSS/N = NRMSE²·c (c the squared force range, or 1 for replicates) for both, the
    /// candidate cannot win when N ln(NRMSE_min² / NRMSE_leader²) > 2 k_leader.
    /// `known`: that minimum where the last run already has it (`LmRun::linearised_minimum`).
    fn outranks(&self, problem: &PathProblem<'_>, known: Option<f64>) -> Option<f64> {
        let rows = problem.total_rows();
        let minimum = match known {
            Some(m) => m,
            None => problem.linearised_minimum()?,
        } / OUTRANKED_MARGIN;
        let nrmse2 = minimum / rows.max(1) as f64;
        let leader2 = self.nrmse * self.nrmse;
        let n = self.samples as f64;
        let gain = n * (nrmse2 / leader2).ln() - 2.0 * self.free_parameters as f64;
        (leader2 > 0.0 && gain.is_finite() && gain > 0.0).then_some(self.aic + gain)
    }
}

/// Which bound `j` lies within `margin` (fraction of its span) of, if any (true: the upper).
fn bound_side(coords: &Coordinates, j: Param, margin: f64) -> Option<(Param, bool)> {
    let t = coords.position(j);
    if t < margin {
        Some((j, false))
    } else if t > 1.0 - margin {
        Some((j, true))
    } else {
        None
    }
}

/// Pins each coordinate on its bound (true: the upper), saying so in `pinned`.
pub(super) fn pin_at_bounds(
    coords: &mut Coordinates,
    at: &[(Param, bool)],
    pinned: &mut Vec<(Param, String)>,
    test: KesTest,
) {
    for &(j, upper) in at {
        coords.pin(j);
        coords.q[j] = if upper { coords.hi[j] } else { coords.lo[j] };
        let name = j.name(test);
        let shown = coords.physical(&coords.q)[j];
        pinned.push((
            j,
            format!(
                "at its {} bound ({name} = {shown:.6e})",
                if upper { "upper" } else { "lower" }
            ),
        ));
    }
}

/// The least-squares objective (sum of squared scaled residuals, value rows included) where
/// the problem stands, by a drive of the law (where the run did not say it: [`run_lm`]);
/// infinite where it cannot be computed.
pub(super) fn objective(problem: &PathProblem<'_>) -> f64 {
    problem
        .residuals()
        .map_or(f64::INFINITY, |r| r.norm_squared())
}

/// Relative standard error above which a coordinate is not identified: against its bound
/// span for the dimensionless ones, against its value for the others.
fn relative_error(coords: &Coordinates, j: Param, se: f64) -> f64 {
    match j {
        Param::Mu
        | Param::Eta
        | Param::Ratio
        | Param::F1
        | Param::Eps1Aligned
        | Param::Offset
        | Param::Alpha => se / (coords.hi[j] - coords.lo[j]),
        _ => se / coords.q[j].abs().max(1e-300),
    }
}

/// The free coordinate with the largest standard error relative to its scale
/// ([`relative_error`], scaled to every sample by `thinning`), if that exceeds 100 % (or is
/// not finite).
fn worst_determined(problem: &PathProblem<'_>, thinning: f64) -> Option<(Param, f64)> {
    let coords = &problem.coords;
    let cov = problem.covariance()?;
    coords
        .free
        .iter()
        .enumerate()
        .filter_map(|(c, &j)| {
            let se = cov[(c, c)].max(0.0).sqrt();
            let relative = relative_error(coords, j, thinning * se);
            (relative > 1.0 || !relative.is_finite()).then_some((j, relative))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// How the reason of a coordinate pinned at its value as not identified begins.
pub(crate) const NOT_IDENTIFIED_PREFIX: &str = "not identified by this curve";

/// Pins `j` at its value as not identified (relative standard error `rel`), saying so.
fn pin_not_identified(
    coords: &mut Coordinates,
    j: Param,
    rel: f64,
    pinned: &mut Vec<(Param, String)>,
) {
    coords.pin(j);
    pinned.push((
        j,
        format!(
            "{NOT_IDENTIFIED_PREFIX} (standard error {:.0} % of its scale): pinned at its value",
            rel * 100.0
        ),
    ));
}

/// What every run of one candidate shares.
#[derive(Clone, Copy)]
pub(super) struct Runs<'a, 's> {
    pub segments: &'s [Segment<'a>],
    pub targets: &'s Option<ValueTargets>,
    /// The evaluation budget of one full run.
    pub max_evaluations: usize,
    pub progress: ProgressSink<'a>,
    pub label: &'a str,
    pub test: KesTest,
    /// √(fitted/all samples): scales the standard errors of a run on the thinned path to
    /// what every sample would give (1 on every sample).
    pub thinning: f64,
    /// The candidate to beat (`auto` without value weights), if any.
    pub leader: Option<Leader>,
}

/// Where the rounds ended: the last run's problem, why it stopped and the work of all runs.
pub(super) struct Refined<'a> {
    pub problem: PathProblem<'a>,
    pub termination: Termination,
    pub evaluations: usize,
    pub iterations: usize,
    /// Stopped as unable to beat the leader: the lowest AIC it could still reach.
    pub aic_floor: Option<f64>,
}

/// Runs the rounds from `coords`; every pin is said in `pinned`.
pub(super) fn refine<'a>(
    mut coords: Coordinates,
    run: &Runs<'a, '_>,
    pinned: &mut Vec<(Param, String)>,
) -> Refined<'a> {
    let test = run.test;
    let thinning = run.thinning;
    // a candidate that cannot win from its initial estimate is not fitted at all
    if let Some(leader) = run.leader {
        let start = PathProblem::joint(coords.clone(), run.segments.to_vec())
            .with_values(run.targets.clone());
        if let Some(floor) = leader.outranks(&start, None) {
            return Refined {
                problem: start,
                termination: Termination::Outranked,
                evaluations: 0,
                iterations: 0,
                aic_floor: Some(floor),
            };
        }
    }
    let mut evaluations = 0;
    let mut iterations = 0;
    let mut termination;
    let mut problem;
    // coordinates whose trial pin at a bound lost (never tried again)
    let mut kept_free: Vec<Param> = Vec::new();
    let mut objective_now = f64::INFINITY;
    let mut aic_floor;
    let mut round = 0;
    loop {
        round += 1;
        // a short first run: coordinates heading for a bound are pinned there (the sin map
        // converges only linearly at a bound), then the rest is refined in runs of a few
        // iterations, between which a coordinate creeping toward a bound is tried there
        let n1 = coords.free.len() + 1;
        let budget = if round == 1 {
            2 * n1
        } else {
            CHUNK_ITERATIONS * n1
        }
        .min(run.max_evaluations);
        let before = coords.clone();
        let objective_before = objective_now;
        let done = run_lm(
            coords.clone(),
            run.segments.to_vec(),
            run.targets.clone(),
            budget,
            Some((run.progress, run.label)),
        );
        problem = done.problem;
        termination = done.termination;
        evaluations += done.evaluations;
        iterations += problem.jacobian_evaluations.get();
        coords = problem.coords.clone();
        objective_now = done.objective.unwrap_or_else(|| objective(&problem));
        let minimum = done.linearised_minimum;
        // a candidate that cannot win is not refined further
        aic_floor = run.leader.and_then(|l| l.outranks(&problem, minimum));
        if aic_floor.is_some() {
            termination = Termination::Outranked;
            break;
        }
        if evaluations >= MAX_RUNS * run.max_evaluations || coords.free.len() <= 1 {
            break;
        }
        let at_bound: Vec<(Param, bool)> = coords
            .free
            .iter()
            .filter_map(|&j| bound_side(&coords, j, AT_BOUND))
            .collect();
        if !at_bound.is_empty() {
            pin_at_bounds(&mut coords, &at_bound, pinned, test);
            continue;
        }
        // a refining run that gained less than STALLED of the objective has converged as far
        // as the AIC can tell
        let stalled = objective_before - objective_now <= STALLED * objective_now;
        if termination == Termination::LostPatience && !stalled {
            if round == 1 {
                continue;
            }
            // coordinates creeping toward a bound: the law with them on it is tried, and kept
            // when it fits at least as well as where the free run has got to
            let creeping: Vec<(Param, bool)> = coords
                .free
                .iter()
                .filter(|j| !kept_free.contains(j))
                .filter_map(|&j| bound_side(&coords, j, NEAR_BOUND))
                .filter(|&(j, upper)| {
                    let (from, to) = (before.position(j), coords.position(j));
                    // the run covered a good part of the way left
                    if upper {
                        to - from > HEADING * (1.0 - to)
                    } else {
                        from - to > HEADING * to
                    }
                })
                .collect();
            if !creeping.is_empty() {
                let mut trial_coords = coords.clone();
                let mut trial_pinned = Vec::new();
                pin_at_bounds(&mut trial_coords, &creeping, &mut trial_pinned, test);
                let done = run_lm(
                    trial_coords,
                    run.segments.to_vec(),
                    run.targets.clone(),
                    CHUNK_ITERATIONS * n1,
                    Some((run.progress, run.label)),
                );
                let trial = done.problem;
                evaluations += done.evaluations;
                iterations += trial.jacobian_evaluations.get();
                let trial_objective = done.objective.unwrap_or_else(|| objective(&trial));
                if trial_objective <= objective_now {
                    problem = trial;
                    coords = problem.coords.clone();
                    objective_now = trial_objective;
                    pinned.extend(trial_pinned);
                } else {
                    kept_free.extend(creeping.iter().map(|&(j, _)| j));
                }
                continue;
            }
            // a coordinate the curve does not determine is pinned as soon as a refining run
            // shows it: the run after it no longer drifts along the flat direction
            if let Some((j, rel)) = worst_determined(&problem, thinning) {
                pin_not_identified(&mut coords, j, rel, pinned);
                continue;
            }
            if evaluations < run.max_evaluations {
                continue;
            }
        }
        // pin the worst-determined coordinate and refit
        match worst_determined(&problem, thinning) {
            Some((j, rel)) => pin_not_identified(&mut coords, j, rel, pinned),
            None => break,
        }
    }
    Refined {
        problem,
        termination,
        evaluations,
        iterations,
        aic_floor,
    }
}

/// The coordinates with every coordinate the fit pinned at a bound or as not identified freed
/// again at its value, JᵀJ over them and s² on every sample; None when the fit pinned nothing
/// so. An interval computed with
/// a pinned coordinate held at its value is conditional on that value: this covariance is
/// what the curve says of the others when it is not taken as known (docs/fitting.md).
pub(super) fn pins_freed(
    coords: &Coordinates,
    pinned: &[(Param, String)],
    segments: &[Segment<'_>],
    targets: &Option<ValueTargets>,
) -> Option<(Coordinates, DMatrix<f64>, f64)> {
    let freed: Vec<Param> = pinned
        .iter()
        .filter(|(j, why)| {
            !coords.free.contains(j)
                && (why.starts_with(super::super::report::AT_BOUND_PREFIX)
                    || why.starts_with(NOT_IDENTIFIED_PREFIX))
        })
        .map(|(j, _)| *j)
        .collect();
    if freed.is_empty() {
        return None;
    }
    let mut unpinned = coords.clone();
    unpinned.free.extend(freed);
    let (jtj, s2) = PathProblem::joint(unpinned.clone(), segments.to_vec())
        .with_values(targets.clone())
        .normal_matrix()?;
    Some((unpinned, jtj, s2))
}
