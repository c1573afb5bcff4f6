//! The workbench along a user's workflow: stopping a card's lab test, reloading a curve
//! changed on disk, saves refused over the files read, scrolling the fit's result and the
//! help, the save prompt at 80 columns, the amplitude's limits, `c` after unsaved fits.

use kestrel::tui::message::{CardTest, ClothControl, ClothSource, LabReport};
use kestrel::tui::prompt::Confirm;
use kestrel::tui::{Action, App, Event, Job, Tab};
use ratatui::crossterm::event::KeyCode;

use super::tui::{app, draw, joined_at_end, press, run_fit_job, save_card_to, write_kes};

const CARD: &str = "scenes/fabrics/cotton-shirting.fitted.params.toml";

/// The app with the shipped card opened in the Cloth tab.
fn with_card() -> App {
    let mut a = app();
    a.open_card(CARD.into());
    assert_eq!(a.tab, Tab::Cloth);
    a
}

fn typed(a: &mut App, text: &str) {
    a.update(Action::PromptClear);
    for c in text.chars() {
        a.update(Action::PromptInput(c));
    }
}

fn lab_done(run: u64, outcome: Result<Box<LabReport>, String>) -> Action {
    Action::Event(Event::LabDone { run, outcome })
}

#[test]
fn a_stopped_lab_test_is_not_the_next_ones_failure_and_esc_stops_a_test() {
    let mut a = with_card();
    // the drape test runs
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Enter);
    let Some(Job::ClothStart {
        source: ClothSource::Card {
            test: CardTest::Drape,
            ..
        },
        run: drape,
    }) = a.jobs.pop()
    else {
        panic!("no drape job")
    };
    a.update(Action::Event(Event::LabProgress {
        run: drape,
        fraction: 0.3,
    }));
    // Enter on its row again: it runs, nothing restarts
    press(&mut a, KeyCode::Enter);
    assert!(a.jobs.is_empty(), "{:?}", a.jobs);
    assert!(a.status.contains("drape test is running"), "{}", a.status);
    // the cantilever started meanwhile stops the drape test
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Enter);
    let Some(Job::ClothStart {
        run: cantilever, ..
    }) = a.jobs.pop()
    else {
        panic!("no cantilever job")
    };
    assert_ne!(drape, cantilever);
    assert!(a.status.contains("drape test stopped"), "{}", a.status);
    // the stopped test's late progress and its "cancelled" are not the cantilever's
    a.update(Action::Event(Event::LabProgress {
        run: drape,
        fraction: 0.9,
    }));
    a.update(lab_done(drape, Err("cancelled".into())));
    let lab = a.cloth.lab.clone().unwrap();
    assert_eq!(
        lab.test,
        CardTest::Cantilever(kestrel::kes::Direction::Warp)
    );
    assert_eq!(lab.progress, Some(0.0), "the cantilever's gauge is kept");
    assert!(!a.status.contains("error"), "{}", a.status);
    a.update(Action::Event(Event::LabProgress {
        run: cantilever,
        fraction: 0.4,
    }));
    assert!(draw(&a, 120, 30).contains("40 %"));
    // Esc stops it: the worker is told, the tab says "stopped"
    press(&mut a, KeyCode::Esc);
    assert!(matches!(a.jobs.pop(), Some(Job::Cloth(ClothControl::Stop))));
    assert!(a.status.contains("cantilever warp stopped"), "{}", a.status);
    a.update(lab_done(cantilever, Err("cancelled".into())));
    assert!(!a.status.contains("error"), "{}", a.status);
    assert!(draw(&a, 120, 30).contains("stopped"));
    // Esc with nothing running says so; the help lists Esc in this tab
    press(&mut a, KeyCode::Esc);
    assert!(a.status.contains("no test running"), "{}", a.status);
    assert!(a.jobs.is_empty());
    press(&mut a, KeyCode::Char('?'));
    assert!(draw(&a, 120, 40).contains("stop the drape or cantilever test"));
    // a test run to its end is shown as its own
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Enter);
    let run = a.cloth.run;
    a.update(lab_done(
        run,
        Ok(Box::new(LabReport {
            lines: vec!["bending length 2.10 cm".into()],
            frame: None,
        })),
    ));
    assert!(a.status.contains("bending length 2.10 cm"), "{}", a.status);
}

#[test]
fn the_lab_thread_marks_its_events_with_its_run() {
    let (tx, rx) = std::sync::mpsc::channel();
    let (control, _thread) = joined_at_end(kestrel::tui::worker::lab::start(
        CARD.into(),
        CardTest::Drape,
        7,
        tx,
    ));
    control.send(ClothControl::Stop).unwrap();
    loop {
        match rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap() {
            Event::LabProgress { run, .. } => assert_eq!(run, 7),
            Event::LabDone { run, outcome } => {
                assert_eq!(run, 7);
                assert!(outcome.is_err(), "stopped at once");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_paused_simulation_keeps_its_last_ms_per_step() {
    let (tx, rx) = std::sync::mpsc::channel();
    let (control, _worker) = joined_at_end(kestrel::tui::worker::cloth::start(
        kestrel::tui::worker::cloth::SceneSource::File("scenes/provot_sheet_17.toml".into()),
        tx,
    ));
    let next = || match rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap() {
        Event::ClothFrame(f) => f,
        Event::Failed(e) => panic!("{e}"),
        other => panic!("{other:?}"),
    };
    control.send(ClothControl::Run).unwrap();
    let running = loop {
        let f = next();
        if f.running && f.ms_per_step > 0.0 {
            break f;
        }
    };
    control.send(ClothControl::Pause).unwrap();
    let mut paused = next();
    while paused.running {
        paused = next();
    }
    // two frames sent while paused: no step timed since, the last figure stays
    let later = next();
    assert!(!later.running);
    assert!(
        paused.ms_per_step > 0.0 && later.ms_per_step == paused.ms_per_step,
        "running {} paused {} later {}",
        running.ms_per_step,
        paused.ms_per_step,
        later.ms_per_step
    );
}

#[test]
fn opening_a_file_again_reloads_it_when_it_changed_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    write_kes(dir.path(), "t/tensile_warp.csv", "Live", "warp");
    let file = dir.path().join("t/tensile_warp.csv");
    let mut a = App::new(Vec::new(), String::new(), true);
    let open = |a: &mut App| {
        let (curves, errors) = kestrel::tui::files::open(&file.display().to_string());
        a.update(Action::Event(Event::Opened { curves, errors }));
        a.status.clone()
    };
    assert!(open(&mut a).starts_with("opened 1 curve"), "{}", a.status);
    let before = a.curves.list[0].values.clone();
    let status = open(&mut a);
    assert!(
        status.contains("1 curve already open, unchanged"),
        "{status}"
    );
    // the strain of the peak corrected on disk: read again in its place, its fit dropped
    let (_, fit, _) = {
        a.update(Action::GoTab(Tab::Fit));
        a.update(Action::RunFit);
        run_fit_job(&mut a)
    };
    a.update(Action::Event(Event::FitDone {
        curve_index: 0,
        fit: Box::new(fit),
    }));
    assert!(a.curves.list[0].fit.is_some());
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("5,500", "7.5,500");
    std::fs::write(&file, text).unwrap();
    let status = open(&mut a);
    assert!(status.contains("reloaded 1 curve"), "{status}");
    assert_eq!(a.curves.list.len(), 1);
    assert_ne!(
        a.curves.list[0].values, before,
        "the values are the new file's"
    );
    assert!(
        a.curves.list[0].fit.is_none(),
        "the old data's fit is dropped"
    );
    assert!(a.curves.list[0]
        .curve
        .x
        .iter()
        .any(|&x| (x - 0.075).abs() < 1e-12));
}

/// An app with the shipped cotton curves opened from a copy in a temporary folder, the
/// tensile warp curve fitted; the folder and the copy of that curve.
fn fitted_from_files() -> (App, tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tensile_warp.csv");
    std::fs::copy("kes_data/cotton-shirting/tensile_warp.csv", &file).unwrap();
    let (curves, errors) = kestrel::tui::files::open(&file.display().to_string());
    assert!(errors.is_empty(), "{errors:?}");
    let mut a = App::new(curves, String::new(), true);
    a.update(Action::GoTab(Tab::Fit));
    a.update(Action::RunFit);
    let (curve_index, fit, _) = run_fit_job(&mut a);
    a.update(Action::Event(Event::FitDone {
        curve_index,
        fit: Box::new(fit),
    }));
    (a, dir, file)
}

#[test]
fn a_card_is_not_saved_over_an_open_curve_nor_under_another_extension() {
    let (mut a, dir, file) = fitted_from_files();
    let read = std::fs::read(&file).unwrap();
    // over the curve it was fitted to, spelt another way: refused, no question asked
    press(&mut a, KeyCode::Char('s'));
    let other_spelling = dir.path().join(".").join("tensile_warp.csv");
    save_card_to(&mut a, &other_spelling);
    assert!(a.confirm.is_none());
    assert!(
        a.status.contains("that is the input")
            && a.status.contains("writing it would replace what was read"),
        "{}",
        a.status
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        read,
        "the curve is untouched"
    );
    // a name the prompt does not promise
    press(&mut a, KeyCode::Char('s'));
    save_card_to(&mut a, &dir.path().join("card.txt"));
    assert!(a.confirm.is_none());
    assert!(a.status.contains(".toml or .json"), "{}", a.status);
    assert!(!dir.path().join("card.txt").exists());
    // an export over the curve: refused too
    a.update(Action::GoTab(Tab::Export));
    press(&mut a, KeyCode::Enter);
    typed(&mut a, &file.display().to_string());
    a.update(Action::PromptSubmit);
    let Some(job @ Job::ExportPng { .. }) = a.jobs.pop() else {
        panic!("no export job")
    };
    let (progress, _) = std::sync::mpsc::channel();
    let answer = kestrel::tui::worker::run(job, &progress).unwrap();
    assert!(
        matches!(&answer, Event::Failed(m) if m.contains("that is the input")),
        "{answer:?}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), read);
}

#[test]
fn the_fit_result_scrolls_to_its_last_line_at_80x24() {
    let (mut a, _dir, _file) = fitted_from_files();
    let screen = draw(&a, 80, 24);
    assert!(!screen.contains("termination"), "{screen}");
    let fit = a.curves.list[0].fit.clone().unwrap();
    let pinned = fit
        .params
        .iter()
        .find_map(|p| {
            p.pinned
                .clone()
                .filter(|w| w != kestrel::fit::FIXED_BY_THE_MODEL)
        })
        .expect("a pin reason");
    let mut seen = screen.clone();
    for _ in 0..40 {
        press(&mut a, KeyCode::PageDown);
        seen.push_str(&draw(&a, 80, 24));
    }
    assert!(seen.contains("termination"), "{seen}");
    assert!(seen.contains("KES    measured"), "{seen}");
    // the pin reason, wrapped: its last word is on screen
    let last_word = pinned.split_whitespace().last().unwrap();
    assert!(seen.contains(last_word), "{pinned}\n{seen}");
    // Down with one curve selects the same one: the result stays scrolled
    let scrolled = a.fit.scroll;
    assert!(scrolled > 0);
    press(&mut a, KeyCode::Down);
    assert_eq!(a.fit.scroll, scrolled);
    // the title says where the panel is
    let at_end = draw(&a, 80, 24);
    assert!(at_end.contains("PgUp/PgDn"), "{at_end}");
    assert!(!at_end.contains("┌1/"), "scrolled: {at_end}");
    for _ in 0..40 {
        press(&mut a, KeyCode::PageUp);
    }
    assert_eq!(a.fit.scroll, 0);
    press(&mut a, KeyCode::Char('?'));
    assert!(draw(&a, 120, 40).contains("scroll the result"));
}

#[test]
fn the_save_prompt_keeps_the_path_typed_in_view_at_80_columns() {
    let mut a = app();
    a.update(Action::GoTab(Tab::Fit));
    press(&mut a, KeyCode::Char('F'));
    while a.fit.running.is_some() {
        let (curve_index, fit, _) = run_fit_job(&mut a);
        a.update(Action::Event(Event::FitDone {
            curve_index,
            fit: Box::new(fit),
        }));
    }
    press(&mut a, KeyCode::Char('s'));
    for c in "XYZ".chars() {
        a.update(Action::PromptInput(c));
    }
    let screen = draw(&a, 80, 24);
    let prompt = screen.lines().nth(22).unwrap();
    assert!(prompt.contains("XYZ_"), "{screen}");
    assert!(
        screen.contains("bending weft (fitted)"),
        "the laws above: {screen}"
    );
    // a long path: its end stays in view
    typed(
        &mut a,
        &format!("{}/END.toml", "a-long-folder-name/".repeat(8)),
    );
    let screen = draw(&a, 80, 24);
    assert!(
        screen.lines().nth(22).unwrap().contains("END.toml_"),
        "{screen}"
    );
}

#[test]
fn the_help_scrolls_in_a_small_terminal() {
    let mut a = app();
    a.update(Action::GoTab(Tab::Fit));
    press(&mut a, KeyCode::Char('?'));
    let last = kestrel::tui::keymap::help_lines(Tab::Fit).last().unwrap().1;
    let screen = draw(&a, 40, 12);
    assert!(screen.contains("Up/Down scroll"), "{screen}");
    assert!(!screen.contains(last), "{screen}");
    let mut seen = String::new();
    for _ in 0..40 {
        press(&mut a, KeyCode::Down);
        seen.push_str(&draw(&a, 40, 12));
    }
    // the last line, wrapped at 40 columns: its last word
    let end = last.split_whitespace().last().unwrap();
    assert!(seen.contains(end), "{seen}");
    assert!(a.help, "the help stays open");
    assert_eq!(a.tab, Tab::Fit, "Down scrolls, it selects no curve");
}

#[test]
fn the_amplitude_says_its_limits() {
    let mut a = app();
    a.update(Action::GoTab(Tab::Hysteresis));
    for _ in 0..20 {
        press(&mut a, KeyCode::Char('+'));
    }
    assert!(a.status.contains("at its largest"), "{}", a.status);
    for _ in 0..40 {
        press(&mut a, KeyCode::Char('-'));
    }
    assert!(a.status.contains("at its smallest"), "{}", a.status);
}

#[test]
fn up_down_in_the_hysteresis_tab_move_from_the_law_shown() {
    let mut a = app();
    let label = |a: &App| a.connector.slot().key.label();
    assert_eq!(label(&a), "tensile warp");
    a.update(Action::GoTab(Tab::Connector));
    press(&mut a, KeyCode::Char('l'));
    assert_eq!(label(&a), "bending warp");
    a.update(Action::GoTab(Tab::Hysteresis));
    let bending_warp = a
        .curves
        .list
        .iter()
        .position(|c| {
            c.curve.test == kestrel::kes::KesTest::Bending
                && c.curve.direction == kestrel::kes::Direction::Warp
        })
        .unwrap();
    press(&mut a, KeyCode::Down);
    assert_eq!(a.curves.selected, bending_warp + 1);
}

#[test]
fn c_after_unsaved_fits_asks_to_save_first_and_s_offers_the_card_saved_last() {
    let (mut a, dir, _file) = fitted_from_files();
    let card = dir.path().join("live.params.toml");
    press(&mut a, KeyCode::Char('s'));
    save_card_to(&mut a, &card);
    assert_eq!(a.fit.saved_card.as_ref().map(|c| &c.0), Some(&card));
    // s offers it again
    press(&mut a, KeyCode::Char('s'));
    assert_eq!(
        a.prompt.as_ref().map(|p| p.text.clone()),
        Some(card.display().to_string())
    );
    a.update(Action::Cancel);
    // a new fit, not saved: c asks
    a.update(Action::RunFit);
    let (curve_index, fit, _) = run_fit_job(&mut a);
    a.update(Action::Event(Event::FitDone {
        curve_index,
        fit: Box::new(fit),
    }));
    assert!(a.unsaved);
    press(&mut a, KeyCode::Char('c'));
    assert_eq!(a.confirm, Some(Confirm::SaveFirst));
    assert!(a.status.contains("save it first?"), "{}", a.status);
    // n: the card goes as saved
    press(&mut a, KeyCode::Char('n'));
    assert_eq!(a.tab, Tab::Cloth);
    assert_eq!(a.cloth.card.as_ref(), Some(&card));
    // y: the save prompt (the card saved last offered), then the card is sent once written
    a.update(Action::GoTab(Tab::Fit));
    press(&mut a, KeyCode::Char('c'));
    press(&mut a, KeyCode::Char('y'));
    assert_eq!(
        a.prompt.as_ref().map(|p| p.text.clone()),
        Some(card.display().to_string())
    );
    a.update(Action::PromptSubmit);
    let Some(job) = a.jobs.pop() else {
        panic!("no save job")
    };
    let (progress, _) = std::sync::mpsc::channel();
    let exists = kestrel::tui::worker::run(job, &progress).unwrap();
    a.update(Action::Event(exists));
    press(&mut a, KeyCode::Char('y'));
    let Some(job) = a.jobs.pop() else {
        panic!("no forced save job")
    };
    let written = kestrel::tui::worker::run(job, &progress).unwrap();
    a.update(Action::Event(written));
    assert_eq!(a.tab, Tab::Cloth, "{}", a.status);
    assert!(!a.unsaved);
    assert!(a.status.contains("card live"), "{}", a.status);
}

#[test]
fn a_file_without_its_test_line_is_told_to_the_user_in_the_workbench_s_terms() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("no_test.csv");
    std::fs::write(
        &file,
        "# fabric: X\n# direction: warp\nstrain [%],force [gf/cm]\n0,0\n5,500\n2,0\n",
    )
    .unwrap();
    let (curves, errors) = kestrel::tui::files::open(&file.display().to_string());
    assert!(curves.is_empty());
    let error = errors.join("; ");
    assert!(
        error.contains("add a line `# test: tensile|") && !error.contains("--test"),
        "{error}"
    );
    // the command line still offers its option
    let cli = kestrel::kes::import::read_kes(&file, Default::default())
        .unwrap_err()
        .to_string();
    assert!(cli.contains("or --test"), "{cli}");
}
