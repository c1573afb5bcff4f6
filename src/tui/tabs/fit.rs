//! The Fit tab: Levenberg–Marquardt fits of the selected curve on a worker (model, progress,
//! parameters ± standard errors, correlations), accepted into the Connector tab or saved.

mod draw;

use draw::{no_law, result_lines};

use std::path::PathBuf;

use super::connector::{ConnectorState, LawKey};
use super::curves::CurvesState;
use super::Effects;
use crate::fit::{CurveFit, FitModel, FitOptions, FitProgress, FitStatus};
use crate::kes::replicate_groups;
use crate::material::ConnectorLaw;
use crate::tui::message::{Action, Job};
use crate::tui::prompt::PromptPurpose;

/// A fit running on a worker.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningFit {
    /// The curve fitted (its replicates with it).
    pub index: usize,
    /// The specimens sent, each (index, [`LoadedCurve::generation`]): the result is theirs only.
    ///
    /// [`LoadedCurve::generation`]: crate::tui::message::LoadedCurve::generation
    pub specimens: Vec<(usize, u64)>,
    pub progress: Option<FitProgress>,
}

impl RunningFit {
    /// Why its result is no longer the fit of the curve's specimens, if it is not: a specimen
    /// read again from disk, or the replicates changed, since it started.
    pub(crate) fn stale(&self, curves: &CurvesState) -> Option<&'static str> {
        let reloaded = self
            .specimens
            .iter()
            .any(|&(i, g)| curves.list.get(i).is_none_or(|c| c.generation != g));
        if reloaded {
            Some("its curve was read again from disk (changed there) after the fit started")
        } else if generations(curves, self.index) != self.specimens {
            Some("the curve's replicates changed after the fit started")
        } else {
            None
        }
    }
}

/// The curve at `index` and its replicates, each (index, generation).
fn generations(curves: &CurvesState, index: usize) -> Vec<(usize, u64)> {
    specimens_of(curves, index)
        .into_iter()
        .filter_map(|i| curves.list.get(i).map(|c| (i, c.generation)))
        .collect()
}

/// The model to fit and the fit running.
#[derive(Debug, Clone, PartialEq)]
pub struct FitState {
    pub model: FitModel,
    /// A fit is running on a worker: which curve, and the last progress.
    pub running: Option<RunningFit>,
    /// Iterations seen in the running fit (all models together), for the gauge.
    pub iterations_seen: usize,
    /// The parameter file being written, its fabric and the laws it holds, for the status.
    pub saving: Option<(PathBuf, String, Vec<String>)>,
    /// The card written last and its fabric (what `c` sends to the Cloth tab, and what `s`
    /// offers for that fabric).
    pub saved_card: Option<(PathBuf, String)>,
    /// `c` asked to save the card first: it is sent once written.
    pub send_after_save: bool,
    /// Fitting all curves of a fabric: the curves (one per replicate group) still to fit, and
    /// how many there were.
    pub queue: Vec<usize>,
    pub queued: usize,
    /// Lines of the result scrolled past (PgUp/PgDn).
    pub scroll: usize,
}

impl Default for FitState {
    fn default() -> Self {
        Self {
            model: FitModel::Auto,
            running: None,
            iterations_seen: 0,
            saving: None,
            saved_card: None,
            send_after_save: false,
            queue: Vec::new(),
            queued: 0,
            scroll: 0,
        }
    }
}

/// What a save of the selected curve's fabric writes: per test and direction the accepted
/// law (`a`), else the fit of its curves; a law only edited in the Connector tab, an estimate
/// or a default is not written. The job, and the laws it writes (`tensile warp (fitted)`).
pub(crate) fn save_job(
    curves: &CurvesState,
    connector: &ConnectorState,
    path: PathBuf,
    force: bool,
) -> (Job, Vec<String>) {
    let fabric = curves
        .selected_curve()
        .map(|c| c.curve.fabric.clone())
        .unwrap_or_default();
    let accepted: Vec<&(LawKey, ConnectorLaw)> = connector
        .accepted
        .iter()
        .filter(|(k, _)| k.fabric == fabric)
        .collect();
    let mut laws: Vec<String> = accepted
        .iter()
        .map(|(k, _)| format!("{} (accepted)", k.label()))
        .collect();
    let mut fitted = Vec::new();
    for &i in &curves.fabric_members() {
        let c = &curves.list[i];
        let Some(fit) = c.fit.as_ref().filter(|f| f.is_fitted()) else {
            continue;
        };
        if let Some(law) = fit.law() {
            let key = LawKey::of(&c.curve);
            match accepted.iter().find(|(k, _)| *k == key) {
                // another law accepted in its place: this fit's report does not describe it
                Some((_, a)) if *a != law => continue,
                Some(_) => {}
                None => {
                    let label = format!("{} (fitted)", key.label());
                    if !laws.contains(&label) {
                        laws.push(label);
                    }
                }
            }
        }
        fitted.push((c.curve.clone(), fit.clone()));
    }
    let job = Job::SaveParams {
        path,
        force,
        fabric,
        fitted,
        accepted: accepted.iter().map(|(k, l)| (k.direction, *l)).collect(),
        curves: curves
            .fabric_members()
            .iter()
            .map(|&i| curves.list[i].curve.clone())
            .collect(),
        inputs: curves.inputs(),
    };
    (job, laws)
}

/// The indices of the curve at `index` and its replicates (`kes::replicate_groups`).
fn specimens_of(curves: &CurvesState, index: usize) -> Vec<usize> {
    replicate_groups(curves.list.iter().map(|c| &c.curve))
        .into_iter()
        .find(|g| g.members.contains(&index))
        .map_or_else(|| vec![index], |g| g.members)
}

impl FitState {
    /// Handles the tab's actions: model, run, accept, save.
    pub(crate) fn update(
        &mut self,
        action: &Action,
        curves: &CurvesState,
        connector: &mut ConnectorState,
        unsaved: &mut bool,
        fx: &mut Effects,
    ) {
        match action {
            Action::CycleModel => {
                self.model = match self.model {
                    FitModel::Auto => FitModel::Dahl,
                    FitModel::Dahl => FitModel::Bs2,
                    FitModel::Bs2 => FitModel::DahlAlpha,
                    FitModel::DahlAlpha => FitModel::Auto,
                };
            }
            Action::RunFit => self.run(curves, fx),
            Action::ScrollResult(by) => {
                let lines = curves
                    .selected_curve()
                    .and_then(|c| c.fit.as_ref())
                    .map_or(0, |f| result_lines(f).len());
                self.scroll = self
                    .scroll
                    .saturating_add_signed(*by)
                    .min(lines.saturating_sub(1));
            }
            Action::RunFitAll => {
                if self.running.is_some() {
                    fx.status("a fit is already running");
                    return;
                }
                // one curve (the first specimen) per replicate group of the fabric with a law
                let fabric = curves.selected_curve().map(|c| c.curve.fabric.clone());
                let mut queue: Vec<usize> = replicate_groups(curves.list.iter().map(|c| &c.curve))
                    .into_iter()
                    .filter(|g| Some(&g.fabric) == fabric.as_ref() && g.test.has_connector_law())
                    .filter_map(|g| g.members.first().copied())
                    .collect();
                if queue.is_empty() {
                    fx.status("no curve with a connector law in this fabric");
                    return;
                }
                queue.reverse();
                self.queued = queue.len();
                self.queue = queue;
                self.run_next(curves, fx);
            }
            Action::AcceptFit => {
                let Some(c) = curves.selected_curve() else {
                    return;
                };
                match c.fit.as_ref().and_then(|f| f.law()) {
                    Some(law) => {
                        connector.accept_fit(&c.curve, law);
                        *unsaved = true;
                        fx.status(format!(
                            "fitted {} {} law accepted into the Connector tab as the fabric's law (s saves)",
                            c.curve.test, c.curve.direction
                        ));
                    }
                    None => fx.status("no fitted law for this curve: run the fit first"),
                }
            }
            Action::SaveParams => {
                let (job, laws) = save_job(curves, connector, PathBuf::new(), false);
                if laws.is_empty()
                    && !matches!(&job, Job::SaveParams { fitted, .. } if !fitted.is_empty())
                {
                    fx.status(
                        "nothing to save: fit a curve (Fit tab, Enter) or accept a law (Connector tab, a)",
                    );
                } else {
                    let selected = curves.selected_curve().map(|c| &c.curve.fabric);
                    // the card saved last, for its fabric; else one named after the fabric
                    let offered = match (&self.saved_card, selected) {
                        (Some((card, of)), Some(fabric)) if of == fabric => {
                            card.display().to_string()
                        }
                        (_, Some(fabric)) => {
                            format!("{}.params.toml", crate::fit::fabric::fabric_slug(fabric))
                        }
                        (_, None) => "fabric.params.toml".into(),
                    };
                    fx.prompt(
                        PromptPurpose::SaveParams,
                        &format!(
                            "save the card ({} law{}, above) to .toml/.json:",
                            laws.len(),
                            if laws.len() == 1 { "" } else { "s" }
                        ),
                        offered,
                    );
                    if let Some(p) = fx.prompt.as_mut() {
                        p.notes = laws;
                    }
                }
            }
            _ => {}
        }
    }

    /// Fitting all curves of a fabric: starts the next one queued, if any.
    pub(crate) fn run_next(&mut self, curves: &CurvesState, fx: &mut Effects) {
        if self.running.is_some() {
            return;
        }
        match self.queue.pop() {
            Some(i) if i < curves.list.len() => self.start(curves, i, fx),
            Some(_) => self.queue.clear(),
            None => {
                if self.queued > 0 {
                    let fitted = curves
                        .fabric_members()
                        .iter()
                        .filter(|&&i| curves.list[i].fit.as_ref().is_some_and(|f| f.is_fitted()))
                        .count();
                    fx.status(format!(
                        "fabric fitted: {fitted} curve(s) with a law — s saves the card, c then sends it to the Cloth tab"
                    ));
                }
                self.queued = 0;
            }
        }
    }

    fn run(&mut self, curves: &CurvesState, fx: &mut Effects) {
        if self.running.is_some() {
            fx.status("a fit is already running");
            return;
        }
        self.queue.clear();
        self.queued = 0;
        self.start(curves, curves.selected, fx);
    }

    /// Starts the fit of the curve at `index` with its replicates on a worker.
    fn start(&mut self, curves: &CurvesState, index: usize, fx: &mut Effects) {
        let Some(curve) = curves.list.get(index).map(|c| &c.curve) else {
            fx.status("no curve selected: open one with o");
            return;
        };
        if !curve.test.has_connector_law() {
            fx.status(no_law(curve.test));
            return;
        }
        let options = FitOptions {
            model: self.model,
            ..FitOptions::default()
        };
        // the selected curve with its replicates: one law fitted to all of them
        let specimens: Vec<_> = specimens_of(curves, index)
            .into_iter()
            .map(|i| curves.list[i].curve.clone())
            .collect();
        let of_all = if self.queued > 0 {
            format!(
                " (curve {} of {} of the fabric)",
                self.queued - self.queue.len(),
                self.queued
            )
        } else {
            String::new()
        };
        fx.status(match specimens.len() {
            1 => format!("fitting {} {}{of_all} …", curve.test, curve.direction),
            n => format!(
                "fitting {} {} ({n} specimens jointly){of_all} …",
                curve.test, curve.direction
            ),
        });
        fx.job(Job::Fit {
            curve_index: index,
            specimens,
            options,
        });
        self.running = Some(RunningFit {
            index,
            specimens: generations(curves, index),
            progress: None,
        });
        self.iterations_seen = 0;
    }

    pub(crate) fn on_progress(&mut self, p: FitProgress) {
        self.iterations_seen += 1;
        if let Some(r) = self.running.as_mut() {
            r.progress = Some(p);
        }
    }

    /// A fit came back: kept with its curve; true when it fitted (results now unsaved). The
    /// fit of data since read again, or of other replicates, is dropped (said, and logged);
    /// fitting all curves, that curve is fitted again.
    pub(crate) fn on_done(
        &mut self,
        curve_index: usize,
        fit: CurveFit,
        curves: &mut CurvesState,
        fx: &mut Effects,
    ) -> bool {
        let running = self.running.take().filter(|r| r.index == curve_index);
        let stale = match &running {
            Some(r) => r.stale(curves),
            None => Some("no fit of that curve was running"),
        };
        if let Some(why) = stale {
            let name = curves
                .list
                .get(curve_index)
                .map(|c| format!("{} {}", c.curve.test, c.curve.direction))
                .unwrap_or_default();
            let again = if self.queued > 0 && running.is_some() {
                self.queue.push(curve_index);
                "it is fitted again"
            } else {
                "Enter fits the data now open"
            };
            let said = format!("fit of {name} dropped: {why}; {again}");
            fx.log(said.clone());
            fx.status(said);
            return false;
        }
        self.scroll = 0;
        let fitted = matches!(fit.status, FitStatus::Fitted);
        fx.status(match &fit.status {
            FitStatus::Fitted => format!(
                "fit done: {} NRMSE {:.2} % in {:.0} ms",
                fit.model,
                100.0 * fit.nrmse,
                fit.elapsed_ms
            ),
            FitStatus::Failed(why) => format!("fit failed: {why}"),
        });
        // a joint fit is the fit of every specimen of the group
        for i in specimens_of(curves, curve_index) {
            curves.list[i].fit = Some(fit.clone());
        }
        fitted
    }
}
