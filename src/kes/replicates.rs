//! Replicates: files of one fabric, test and direction are specimens of one curve; their KES
//! values summarised as mean and coefficient of variation CV = s / |mean| (s with n − 1).

use serde::Serialize;

use super::values::{
    kes_values, KesReading, KesValues, MaxForce, MaxForceSource, ReadingRules, VALUE_NAMES,
};
use super::{Curve, Direction, KesTest};

/// The specimens of one curve: same (non-empty) fabric, test and direction. A curve without
/// fabric metadata is a group of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicateGroup {
    pub fabric: String,
    pub test: KesTest,
    pub direction: Direction,
    /// Indices of the specimens in the list grouped, in list order.
    pub members: Vec<usize>,
}

impl ReplicateGroup {
    /// More than one specimen.
    pub fn is_replicated(&self) -> bool {
        self.members.len() > 1
    }
}

/// The replicate groups of `curves`, in order of first appearance.
pub fn replicate_groups<'a>(curves: impl IntoIterator<Item = &'a Curve>) -> Vec<ReplicateGroup> {
    let mut groups: Vec<ReplicateGroup> = Vec::new();
    for (i, c) in curves.into_iter().enumerate() {
        let same = |g: &&mut ReplicateGroup| {
            !c.fabric.is_empty()
                && g.fabric == c.fabric
                && g.test == c.test
                && g.direction == c.direction
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.members.push(i),
            None => groups.push(ReplicateGroup {
                fabric: c.fabric.clone(),
                test: c.test,
                direction: c.direction,
                members: vec![i],
            }),
        }
    }
    groups
}

/// Mean and coefficient of variation (sample standard deviation with n − 1 over |mean|, a
/// fraction) of the values given; the CV is `None` with fewer than two values or a zero mean.
pub fn mean_and_cv(values: &[f64]) -> Option<(f64, Option<f64>)> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let cv = (n > 1 && mean != 0.0).then(|| {
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
        var.sqrt() / mean.abs()
    });
    Some((mean, cv))
}

/// The KES values of a replicate group: each specimen's, their mean and CV.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplicateSummary {
    pub fabric: String,
    pub test: KesTest,
    pub direction: Direction,
    /// The specimens' files, in order.
    pub files: Vec<String>,
    pub specimens: usize,
    /// Each value's mean over the specimens that give it (KES units).
    pub mean: KesValues,
    /// Each value's coefficient of variation, a fraction; only where two or more specimens
    /// give the value.
    pub cv: KesValues,
    /// Each specimen's values, in the order of `files`.
    #[serde(skip)]
    pub each: Vec<KesValues>,
    /// The F_m the specimens' tensile values were read at (None: not tensile, or the
    /// specimens went to different forces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_force: Option<MaxForce>,
    /// Why some means are not given (specimens read on different paths).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Tensile specimens whose F_m differ by more than this fraction were taken to different
/// forces: their EMT, WT, LT and RT are not averaged.
const SAME_MAX_FORCE: f64 = 0.02;

/// The summary of one group of `curves` from the specimens' readings.
pub fn summarise(curves: &[&Curve], readings: Vec<KesReading>) -> ReplicateSummary {
    let first = curves.first();
    let mut mean = KesValues::default();
    let mut cv = KesValues::default();
    let mut notes = Vec::new();
    let forces: Vec<f64> = readings
        .iter()
        .filter_map(|r| r.max_force.map(|f| f.gf_cm))
        .collect();
    let (lo, hi) = forces
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), f| {
            (lo.min(*f), hi.max(*f))
        });
    let mixed = forces.len() > 1 && hi > lo * (1.0 + SAME_MAX_FORCE);
    if mixed {
        let shown: Vec<String> = forces.iter().map(|f| format!("{f:.0}")).collect();
        notes.push(format!(
            "the specimens were taken to different forces (F_m {} gf/cm): their EMT, WT, LT \
             and RT are not averaged",
            shown.join(", ")
        ));
    }
    // the specimens' common F_m (their mean, they lie within 2 %) and where it came from
    let max_force = readings
        .iter()
        .filter_map(|r| r.max_force)
        .reduce(|a, b| MaxForce {
            gf_cm: a.gf_cm + b.gf_cm,
            from: if a.from == b.from {
                a.from
            } else {
                MaxForceSource::Mixed
            },
        })
        .filter(|_| !mixed)
        .map(|sum| MaxForce {
            gf_cm: sum.gf_cm / forces.len() as f64,
            ..sum
        });
    let each: Vec<KesValues> = readings.iter().map(|r| r.values).collect();
    for (name, _, _) in VALUE_NAMES {
        if mixed && ["EMT", "WT", "LT", "RT"].contains(&name) {
            continue;
        }
        let values: Vec<f64> = each.iter().filter_map(|v| v.get(name)).collect();
        if let Some((m, c)) = mean_and_cv(&values) {
            mean.set(name, Some(m));
            cv.set(name, c);
        }
    }
    ReplicateSummary {
        fabric: first.map_or_else(String::new, |c| c.fabric.clone()),
        test: first.map_or(KesTest::Loop, |c| c.test),
        direction: first.map_or(Direction::Warp, |c| c.direction),
        files: curves.iter().map(|c| c.path_name()).collect(),
        specimens: curves.len(),
        mean,
        cv,
        each,
        max_force,
        notes,
    }
}

/// The summaries of every replicate group of `curves`, values read by `rules`.
pub fn replicate_summaries(curves: &[Curve], rules: &ReadingRules) -> Vec<ReplicateSummary> {
    replicate_groups(curves)
        .into_iter()
        .map(|g| {
            let members: Vec<&Curve> = g.members.iter().map(|&i| &curves[i]).collect();
            let readings = members.iter().map(|c| kes_values(c, rules)).collect();
            summarise(&members, readings)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_cv_match_the_closed_form() {
        // 9, 10, 11: mean 10, s = 1, CV = 0.1
        let (m, cv) = mean_and_cv(&[9.0, 10.0, 11.0]).unwrap();
        assert_eq!(m, 10.0);
        assert!((cv.unwrap() - 0.1).abs() < 1e-15);
        assert_eq!(mean_and_cv(&[4.0]), Some((4.0, None)));
        assert_eq!(mean_and_cv(&[]), None);
        assert_eq!(mean_and_cv(&[-1.0, 1.0]).unwrap().1, None);
    }
}
