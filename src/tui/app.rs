//! The workbench's state as plain data (the tab shown, one state per tab, the prompt, the
//! question, the status, the jobs asked for) and `App::update`, the only code that changes it.

use std::path::PathBuf;

use super::keymap::{Modal, Mode};
use super::message::{Action, Event, Job, LoadedCurve, PendingWrite, Tab};
use super::prompt::{Confirm, Prompt, PromptPurpose};
use super::tabs::cloth::ClothTabState;
use super::tabs::connector::{ConnectorState, LawKey};
use super::tabs::curves::CurvesState;
use super::tabs::export::{ExportState, Sources};
use super::tabs::fit::{self, FitState};
use super::tabs::hysteresis::{start_curve, HysteresisState};
use super::tabs::Effects;

/// Messages the log keeps.
pub const LOG_LEN: usize = 200;

/// The whole workbench.
#[derive(Debug, Clone)]
pub struct App {
    pub tab: Tab,
    pub curves: CurvesState,
    pub connector: ConnectorState,
    pub hysteresis: HysteresisState,
    pub fit: FitState,
    pub cloth: ClothTabState,
    pub export: ExportState,
    pub status: String,
    /// Every status said, oldest first (at most [`LOG_LEN`]), shown in full by `e`: a status
    /// line is cut at the terminal's width.
    pub log: Vec<String>,
    /// The message log is shown.
    pub log_open: bool,
    /// Messages of the log scrolled past (the newest is shown first).
    pub log_scroll: usize,
    pub help: bool,
    /// Lines of the help scrolled past.
    pub help_scroll: usize,
    pub prompt: Option<Prompt>,
    pub confirm: Option<Confirm>,
    /// Fits that are not saved in a parameter file yet.
    pub unsaved: bool,
    pub should_quit: bool,
    /// Colours off (NO_COLOR).
    pub monochrome: bool,
    /// Work asked for by the last updates, taken by the event loop.
    pub jobs: Vec<Job>,
}

impl Modal for App {
    fn mode(&self) -> Mode<'_> {
        Mode {
            tab: self.tab,
            question: self.confirm.is_some(),
            prompt: self.prompt.is_some(),
            help: self.help,
            messages: self.log_open,
            palette: self.cloth.live_palette(),
        }
    }
}

impl App {
    /// The workbench on `curves`; touches no file system (the Cloth tab's list comes from a
    /// [`Job::ScanCloth`]).
    pub fn new(curves: Vec<LoadedCurve>, status: String, monochrome: bool) -> Self {
        let mut app = Self {
            tab: Tab::Curves,
            curves: CurvesState::new(curves),
            connector: ConnectorState::default(),
            hysteresis: HysteresisState::default(),
            fit: FitState::default(),
            cloth: ClothTabState::default(),
            export: ExportState::default(),
            log: Vec::new(),
            log_open: false,
            log_scroll: 0,
            status,
            help: false,
            help_scroll: 0,
            prompt: None,
            confirm: None,
            unsaved: false,
            should_quit: false,
            monochrome,
            jobs: Vec::new(),
        };
        app.follow_selection();
        app.log_status();
        let all: Vec<usize> = (0..app.curves.list.len()).collect();
        for note in app.curves.notes(&all) {
            app.log_message(note);
        }
        app
    }

    /// Keeps the status in the log, unless empty or the same as the last one logged.
    fn log_status(&mut self) {
        let status = self.status.clone();
        self.log_message(status);
    }

    /// Keeps `message` in the log, unless empty or the same as the last one logged.
    fn log_message(&mut self, message: String) {
        if message.is_empty() || self.log.last() == Some(&message) {
            return;
        }
        if self.log.len() == LOG_LEN {
            self.log.remove(0);
        }
        self.log.push(message);
    }

    /// The Export tab's update, with what it exports from.
    fn update_export(&mut self, action: &Action, fx: &mut Effects) {
        let src = Sources {
            curves: &self.curves,
            connector: &self.connector,
            hysteresis: &self.hysteresis,
        };
        self.export
            .update(action, &src, self.cloth.loaded.as_deref(), fx)
    }

    /// The Connector law follows the fabric, test and direction of the selected curve.
    fn follow_selection(&mut self) {
        self.connector.follow(&self.curves);
    }

    /// Starts writing the fabric's parameter file to `path`; the status will name its laws.
    fn save(&mut self, path: PathBuf, force: bool) {
        let (job, laws) = fit::save_job(&self.curves, &self.connector, path.clone(), force);
        let fabric = match &job {
            Job::SaveParams { fabric, .. } => fabric.clone(),
            _ => String::new(),
        };
        self.fit.saving = Some((path, fabric, laws));
        self.jobs.push(job);
    }

    /// The one place that changes the state: a popup takes the action first, else the app
    /// or the tab the action belongs to.
    pub fn update(&mut self, action: Action) {
        let mut fx = Effects::default();
        if let Action::Event(e) = action {
            self.on_event(e, &mut fx);
        } else if self.confirm.is_some() {
            self.answer(action, &mut fx);
        } else if self.prompt.is_some() {
            self.edit_prompt(action, &mut fx);
        } else if self.help {
            match action {
                Action::ToggleHelp | Action::Cancel => self.help = false,
                Action::Up | Action::Down | Action::ScrollResult(_) => {
                    let by = match action {
                        Action::Up => -1,
                        Action::ScrollResult(by) => by,
                        _ => 1,
                    };
                    let last = super::keymap::help_lines(self.tab).len().saturating_sub(1);
                    self.help_scroll = self.help_scroll.saturating_add_signed(by).min(last);
                }
                Action::Quit => self.request_quit(),
                _ => {}
            }
        } else if self.log_open {
            match action {
                Action::ToggleMessages | Action::Cancel => self.log_open = false,
                Action::Up => self.log_scroll = self.log_scroll.saturating_sub(1),
                Action::Down => {
                    self.log_scroll = (self.log_scroll + 1).min(self.log.len().saturating_sub(1))
                }
                Action::Quit => self.request_quit(),
                _ => {}
            }
        } else {
            self.act(action, &mut fx);
        }
        self.apply(fx);
    }

    /// What an action asked for: the status it said, the prompt it opened, the jobs it
    /// started (then the status goes to the log).
    fn apply(&mut self, fx: Effects) {
        for message in fx.log {
            self.log_message(message);
        }
        if let Some(status) = fx.status {
            self.status = status;
        }
        if fx.prompt.is_some() {
            self.prompt = fx.prompt;
        }
        self.jobs.extend(fx.jobs);
        self.log_status();
    }

    /// Opens a cloth scene or a reduced model named on the command line: the Cloth tab shows
    /// it, loaded (paused).
    pub fn open_cloth(&mut self, path: PathBuf) {
        let mut fx = Effects::default();
        self.show_tab(Tab::Cloth);
        self.cloth.open(path, &mut fx);
        self.apply(fx);
    }

    /// Opens a fabric card named on the command line or in the prompt: the Cloth tab shows,
    /// and offers the card's tests once a [`Job::ReadCard`] has read it.
    pub fn open_card(&mut self, card: PathBuf) {
        let mut fx = Effects::default();
        self.read_card(card, &mut fx);
        self.apply(fx);
    }

    fn read_card(&mut self, card: PathBuf, fx: &mut Effects) {
        self.show_tab(Tab::Cloth);
        fx.status(format!("reading card {}…", card.display()));
        fx.job(Job::ReadCard(card));
    }

    /// The Fit tab's `c`: the card saved last goes to the Cloth tab, which offers its tests;
    /// after fits or laws not saved yet, it asks whether to save the card again first.
    fn send_card(&mut self, fx: &mut Effects) {
        match self.fit.saved_card.clone() {
            None => fx.status("no card saved yet: s saves the fabric's card, then c sends it"),
            Some((card, _)) if self.unsaved => {
                fx.status(format!(
                    "fits or laws changed since {} was saved: save it first? (y saves, then sends; n sends it as saved)",
                    card.display()
                ));
                self.confirm = Some(Confirm::SaveFirst);
            }
            Some((card, _)) => {
                self.show_tab(Tab::Cloth);
                self.cloth.set_card(card, fx);
            }
        }
    }

    /// Shows `tab`; a status said on another tab is dropped there (an error stays).
    fn show_tab(&mut self, tab: Tab) {
        if tab != self.tab && !self.status.starts_with("error") {
            self.status.clear();
        }
        self.tab = tab;
    }

    fn act(&mut self, action: Action, fx: &mut Effects) {
        match action {
            Action::NextTab => self.show_tab(Tab::ALL[(self.tab.index() + 1) % Tab::ALL.len()]),
            Action::PrevTab => {
                self.show_tab(Tab::ALL[(self.tab.index() + Tab::ALL.len() - 1) % Tab::ALL.len()])
            }
            Action::GoTab(t) => self.show_tab(t),
            Action::ToggleHelp => {
                self.help = true;
                self.help_scroll = 0;
            }
            Action::ToggleMessages => {
                self.log_open = true;
                self.log_scroll = 0;
            }
            Action::Quit => self.request_quit(),
            Action::OpenPrompt => fx.prompt(
                PromptPurpose::Open,
                "open KES file, folder or pattern (Tab completes):",
                String::new(),
            ),
            Action::Up | Action::Down => match self.tab {
                Tab::Connector => {
                    self.connector.update(&action, &self.curves, fx);
                }
                Tab::Cloth => self.cloth.update(&action, fx),
                Tab::Export => self.update_export(&action, fx),
                Tab::Curves | Tab::Hysteresis | Tab::Fit => {
                    if self.tab == Tab::Hysteresis {
                        // from the curve of the law shown (`l`, `d` may show another's)
                        self.curves.selected = start_curve(&self.connector, &self.curves);
                    }
                    let before = self.curves.selected;
                    if self.curves.step(matches!(action, Action::Up)) {
                        if self.curves.selected != before {
                            self.fit.scroll = 0;
                        }
                        self.follow_selection();
                    }
                }
            },
            Action::EditValue if self.tab != Tab::Connector => {}
            Action::CycleLaw
            | Action::ToggleDirection
            | Action::ToggleFrictionModel
            | Action::ToggleToe
            | Action::ToggleMu
            | Action::AcceptLaw
            | Action::Nudge(_)
            | Action::EditValue => {
                if self.connector.update(&action, &self.curves, fx) {
                    self.unsaved = true;
                }
            }
            Action::CyclePath | Action::ScaleAmplitude(_) => self.hysteresis.update(&action, fx),
            Action::SendCard => self.send_card(fx),
            Action::CycleModel
            | Action::ScrollResult(_)
            | Action::RunFit
            | Action::RunFitAll
            | Action::AcceptFit
            | Action::SaveParams => self.fit.update(
                &action,
                &self.curves,
                &mut self.connector,
                &mut self.unsaved,
                fx,
            ),
            Action::Export => self.update_export(&action, fx),
            Action::ClothLoad
            | Action::ClothStop
            | Action::ClothRunPause
            | Action::ClothStep
            | Action::ClothImpulse(_)
            | Action::ClothSky(_)
            | Action::Rotate(_, _) => self.cloth.update(&action, fx),
            Action::Cancel
            | Action::Answer(_)
            | Action::PromptInput(_)
            | Action::PromptBackspace
            | Action::PromptClear
            | Action::PromptComplete
            | Action::PromptSubmit
            | Action::Event(_) => {}
        }
    }

    fn answer(&mut self, action: Action, fx: &mut Effects) {
        let Some(confirm) = self.confirm.take() else {
            return;
        };
        match action {
            Action::Answer(true) => match confirm {
                Confirm::Quit => self.should_quit = true,
                Confirm::Overwrite(PendingWrite::Params(path)) => self.save(path, true),
                Confirm::Overwrite(PendingWrite::Png(kind, path)) => {
                    let src = Sources {
                        curves: &self.curves,
                        connector: &self.connector,
                        hysteresis: &self.hysteresis,
                    };
                    let job = self.export.start(&src, kind, path, true);
                    self.jobs.push(job);
                }
                Confirm::SaveFirst => {
                    self.act(Action::SaveParams, fx);
                    // sent once written (the save prompt may also be cancelled)
                    self.fit.send_after_save = fx.prompt.is_some();
                }
            },
            Action::Answer(false) if confirm == Confirm::SaveFirst => {
                if let Some((card, _)) = self.fit.saved_card.clone() {
                    self.show_tab(Tab::Cloth);
                    self.cloth.set_card(card, fx);
                }
            }
            Action::Answer(false) | Action::Cancel => {
                self.fit.send_after_save = false;
                self.status = "cancelled".into();
            }
            _ => self.confirm = Some(confirm),
        }
    }

    fn edit_prompt(&mut self, action: Action, fx: &mut Effects) {
        let Some(p) = self.prompt.as_mut() else {
            return;
        };
        if matches!(
            action,
            Action::PromptInput(_) | Action::PromptBackspace | Action::PromptClear
        ) {
            p.candidates.clear();
        }
        match action {
            Action::PromptInput(c) => p.text.push(c),
            Action::PromptBackspace => {
                p.text.pop();
            }
            Action::PromptClear => p.text.clear(),
            Action::PromptComplete => fx.job(Job::CompletePath(p.text.clone())),
            Action::PromptSubmit => self.submit_prompt(fx),
            Action::Cancel => {
                self.prompt = None;
                self.fit.send_after_save = false;
                self.status = "cancelled".into();
            }
            _ => {}
        }
    }

    fn request_quit(&mut self) {
        if self.unsaved {
            self.confirm = Some(Confirm::Quit);
        } else {
            self.should_quit = true;
        }
    }

    fn submit_prompt(&mut self, fx: &mut Effects) {
        let Some(prompt) = self.prompt.take() else {
            return;
        };
        let text = prompt.text.trim().to_string();
        if text.is_empty() && prompt.purpose != PromptPurpose::ParameterValue {
            fx.status("no path given");
            return;
        }
        match prompt.purpose {
            PromptPurpose::Open => {
                let path = PathBuf::from(&text);
                if crate::tui::is_parameter_file(&path) {
                    self.read_card(path, fx);
                } else if crate::tui::is_cloth_input(&path) {
                    self.show_tab(Tab::Cloth);
                    self.cloth.open(path, fx);
                } else {
                    fx.job(Job::Open(text));
                    fx.status("opening…");
                }
            }
            PromptPurpose::ParameterValue => self.connector.submit_value(&text, fx),
            PromptPurpose::SaveParams => self.save(PathBuf::from(text), false),
            PromptPurpose::ExportPng(kind) => {
                let src = Sources {
                    curves: &self.curves,
                    connector: &self.connector,
                    hysteresis: &self.hysteresis,
                };
                let job = self.export.start(&src, kind, PathBuf::from(text), false);
                fx.job(job);
                fx.status(if kind.is_cloth() {
                    "rendering…"
                } else {
                    "writing PNG…"
                });
            }
        }
    }

    fn on_event(&mut self, event: Event, fx: &mut Effects) {
        match event {
            Event::FitProgress(p) => self.fit.on_progress(p),
            Event::FitDone { curve_index, fit } => {
                if self.fit.on_done(curve_index, *fit, &mut self.curves, fx) {
                    self.unsaved = true;
                    // the Connector tab shows the fit (unless its law was edited or accepted)
                    self.follow_selection();
                }
                // fitting all curves of the fabric: the next one
                self.fit.run_next(&self.curves, fx);
            }
            Event::Opened { curves, errors } => {
                let added = self.curves.add(curves);
                if added.curves > 0 || added.reloaded > 0 {
                    self.follow_selection();
                }
                fx.log.extend(self.curves.notes(&added.indices));
                let mut status = added.status();
                if self
                    .fit
                    .running
                    .as_ref()
                    .is_some_and(|r| r.stale(&self.curves).is_some())
                {
                    status.push_str(" — the fit running is of the old data: it will be dropped");
                }
                // a law accepted from the old data stays the fabric's until another is accepted
                let stale_laws: Vec<String> = added.indices[..added.reloaded]
                    .iter()
                    .filter_map(|&i| self.curves.list.get(i))
                    .map(|c| LawKey::of(&c.curve))
                    .filter(|k| self.connector.accepted_law(k).is_some())
                    .map(|k| k.label())
                    .collect();
                if !stale_laws.is_empty() {
                    let warning = format!(
                        "the law accepted for {} was fitted to the old data: it stays the fabric's until the new fit is accepted (a)",
                        stale_laws.join(", ")
                    );
                    fx.log.push(warning.clone());
                    status = format!("{warning}; {status}");
                }
                fx.status(if errors.is_empty() {
                    status
                } else if added.curves == 0 && added.already_open == 0 && added.reloaded == 0 {
                    format!("error: {}", errors.join("; "))
                } else {
                    format!("{status}; {}", errors.join("; "))
                });
            }
            Event::Written(path) => {
                if self.export.on_written(&path) {
                    self.unsaved = false;
                }
                // the full path: relative names are read from the folder kestrel started in
                let shown = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
                let laws = match self.fit.saving.take() {
                    Some((p, fabric, laws)) if p == path => {
                        self.fit.saved_card = Some((path.clone(), fabric));
                        if std::mem::take(&mut self.fit.send_after_save) {
                            self.unsaved = false;
                            self.send_card(fx);
                            return;
                        }
                        if laws.is_empty() {
                            String::new()
                        } else {
                            format!(": {} (c sends the card to the Cloth tab)", laws.join(", "))
                        }
                    }
                    _ => String::new(),
                };
                fx.status(format!("written {}{laws}", shown.display()));
            }
            Event::CardWritten { path, warning } => {
                self.on_event(Event::Written(path), fx);
                let written = fx.status.take().unwrap_or_default();
                // the warning first: a long status line is cut at the terminal's width
                fx.status(format!("warning: {warning}; {written}"));
            }
            Event::CardRead { path, outcome } => match outcome {
                Ok(warnings) => {
                    self.cloth.set_card(path.clone(), fx);
                    for w in &warnings {
                        fx.log(format!("card {}: warning: {w}", path.display()));
                    }
                    if let (Some(status), false) = (fx.status.as_mut(), warnings.is_empty()) {
                        status.push_str(" (warning: its sources changed on disk; e shows it)");
                    }
                }
                Err(why) => fx.status(format!("error: card not opened: {why}")),
            },
            Event::PathCompleted { typed, completed } => {
                // only if the text was not changed meanwhile
                if let Some(p) = self.prompt.as_mut().filter(|p| p.text == typed) {
                    p.text = completed.text;
                    p.candidates = completed.candidates;
                }
            }
            Event::ClothScanned(scenes) => self.cloth.on_scanned(scenes),
            Event::ClothFrame(frame) => self.cloth.frame = Some(*frame),
            Event::ClothPalette(palette) => self.cloth.on_palette(palette, fx),
            Event::LabProgress { run, fraction } => self.cloth.on_lab_progress(run, fraction),
            Event::LabDone { run, outcome } => self.cloth.on_lab_done(run, outcome, fx),
            Event::RenderProgress {
                done,
                total,
                adapter,
            } => {
                fx.status(format!("rendering frame {done}/{total} on {adapter}"));
                self.export.on_progress(done, total, adapter);
            }
            Event::Exists(pending) => {
                self.export.rendering = None;
                let path = match &pending {
                    PendingWrite::Params(p) | PendingWrite::Png(_, p) => p.display().to_string(),
                };
                fx.status(format!("{path} exists: overwrite? (y/n)"));
                self.confirm = Some(Confirm::Overwrite(pending));
            }
            Event::Failed(message) => {
                self.export.rendering = None;
                self.fit.send_after_save = false;
                fx.status(format!("error: {message}"));
            }
        }
    }
}
