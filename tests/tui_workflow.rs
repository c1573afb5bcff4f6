//! The workbench along a user's workflow: stopping a card's lab test, reloading a curve
//! changed on disk, saves refused over the files read, scrolling the fit's result and the
//! help, the save prompt at 80 columns, the amplitude's limits, `c` after unsaved fits.

use kestrel::tui::message::{CardTest, ClothControl, ClothSource, LabReport};
use kestrel::tui::prompt::Confirm;
use kestrel::tui::{Action, App, Event, Job, Tab};
use ratatui::crossterm::event::KeyCode;

use super::tui::{
    app, draw, finish_fit_job, fit_done, joined_at_end, press, read_card, run_fit_job,
    save_card_to, write_kes,
};

use crate::common::assert_a_line_has;

const CARD: &str = "scenes/fabrics/cotton-shirting.fitted.params.toml";

/// The app with the shipped card opened in the Cloth tab.
fn with_card() -> App {
    let mut a = app();
    a.open_card(CARD.into());
    assert_eq!(a.tab, Tab::Cloth);
    read_card(&mut a);
    assert!(a.cloth.card.is_some(), "{}", a.status);
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
    assert!(
        open_file(&mut a, &file).starts_with("opened 1 curve"),
        "{}",
        a.status
    );
    let before = a.curves.list[0].values.clone();
    let status = open_file(&mut a, &file);
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
    a.update(fit_done(0, fit));
    assert!(a.curves.list[0].fit.is_some());
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("5,500", "7.5,500");
    std::fs::write(&file, text).unwrap();
    let status = open_file(&mut a, &file);
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

/// A law accepted from a curve's fit stays the fabric's when the curve is read again from
/// disk with other data, and the reload says so (status and messages): a save would otherwise
/// write the old data's law beside the new bytes' hash without a word.
#[test]
fn reloading_a_curve_whose_fit_was_accepted_says_the_accepted_law_is_the_old_datas() {
    let (mut a, _dir, file) = opened_copy();
    a.update(Action::RunFit);
    let (_, fit, _) = run_fit_job(&mut a);
    a.update(fit_done(0, fit));
    a.update(Action::AcceptFit);
    assert!(a.status.contains("accepted"), "{}", a.status);
    // the last force read 1 % higher on disk
    let text = std::fs::read_to_string(&file).unwrap();
    let (head, last) = text.trim_end().rsplit_once('\n').unwrap();
    let (x, y) = last.split_once(',').unwrap();
    let y: f64 = y.trim().parse().unwrap();
    std::fs::write(&file, format!("{head}\n{x},{}\n", 1.01 * y + 0.1)).unwrap();
    let status = open_file(&mut a, &file);
    assert!(status.contains("reloaded 1 curve"), "{status}");
    assert!(
        status.contains("the law accepted for tensile warp was fitted to the old data"),
        "{status}"
    );
    assert_a_line_has(
        &a.log,
        &["the law accepted for tensile warp was fitted to the old data"],
    );
}

/// Opens `file` as the open prompt's job would (it reads without an error) and hands what it
/// read to the app; the status the app then shows.
fn open_file(a: &mut App, file: &std::path::Path) -> String {
    let (curves, errors) = kestrel::tui::files::open(&file.display().to_string());
    assert!(errors.is_empty(), "{errors:?}");
    a.update(Action::Event(Event::Opened { curves, errors }));
    a.status.clone()
}

/// The shipped cotton tensile warp curve copied to a temporary folder, opened in the app with
/// the Fit tab shown.
fn opened_copy() -> (App, tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tensile_warp.csv");
    std::fs::copy("kes_data/cotton-shirting/tensile_warp.csv", &file).unwrap();
    let (curves, errors) = kestrel::tui::files::open(&file.display().to_string());
    assert!(errors.is_empty(), "{errors:?}");
    let mut a = App::new(curves, String::new(), true);
    a.update(Action::GoTab(Tab::Fit));
    (a, dir, file)
}

#[test]
fn a_fit_of_data_read_again_while_it_ran_is_dropped() {
    let (mut a, _dir, file) = opened_copy();
    a.update(Action::RunFit);
    // the worker fits the bytes read first …
    let (curve_index, old_fit, _) = run_fit_job(&mut a);
    // … while the file changes on disk (forces doubled) and is opened again
    let text = std::fs::read_to_string(&file).unwrap();
    let doubled: String = text
        .lines()
        .map(|l| match l.split_once(',') {
            Some((x, y)) if y.trim().parse::<f64>().is_ok() => {
                format!("{x},{}\n", 2.0 * y.trim().parse::<f64>().unwrap())
            }
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&file, doubled).unwrap();
    let status = open_file(&mut a, &file);
    assert!(status.contains("reloaded 1 curve"), "{status}");
    assert!(
        a.status.contains("the fit running is of the old data"),
        "{}",
        a.status
    );
    // the old data's fit comes back: not attached to the new curve, and said so
    a.update(fit_done(curve_index, old_fit));
    assert!(
        a.curves.list[0].fit.is_none(),
        "the old data's fit is dropped"
    );
    assert!(
        a.status.contains("fit of tensile warp dropped")
            && a.status.contains("read again from disk"),
        "{}",
        a.status
    );
    assert_a_line_has(&a.log, &["dropped"]);
    assert!(a.fit.running.is_none());
    assert!(!a.unsaved, "nothing new to save");
    // nothing of the old data to save; a new fit is of the new data
    a.update(Action::SaveParams);
    assert!(a.status.contains("nothing to save"), "{}", a.status);
    a.update(Action::RunFit);
    finish_fit_job(&mut a);
    assert!(a.curves.list[0].fit.is_some(), "{}", a.status);
}

#[test]
fn a_joint_fit_is_dropped_when_a_replicate_opens_while_it_runs() {
    let (mut a, dir, _) = opened_copy();
    a.update(Action::RunFit);
    let (curve_index, fit, specimens) = run_fit_job(&mut a);
    assert_eq!(specimens, 1);
    // a second specimen of the same curve opens meanwhile
    let replicate = dir.path().join("tensile_warp_2.csv");
    std::fs::copy("kes_data/cotton-shirting/tensile_warp.csv", &replicate).unwrap();
    open_file(&mut a, &replicate);
    assert_eq!(a.curves.list.len(), 2);
    a.update(fit_done(curve_index, fit));
    assert!(
        a.curves.list.iter().all(|c| c.fit.is_none()),
        "a one-specimen fit is not the pair's joint fit"
    );
    assert!(a.status.contains("replicates changed"), "{}", a.status);
}

/// An app with the shipped cotton curves opened from a copy in a temporary folder, the
/// tensile warp curve fitted; the folder and the copy of that curve.
fn fitted_from_files() -> (App, tempfile::TempDir, std::path::PathBuf) {
    let (mut a, dir, file) = opened_copy();
    a.update(Action::RunFit);
    finish_fit_job(&mut a);
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

/// The Fit tab's `F` run to its end: every curve of the fabric fitted, one job after another.
fn fit_the_fabric(a: &mut App) {
    a.update(Action::GoTab(Tab::Fit));
    press(a, KeyCode::Char('F'));
    while a.fit.running.is_some() {
        finish_fit_job(a);
    }
}

#[test]
fn the_save_prompt_keeps_the_path_typed_in_view_at_80_columns() {
    let mut a = app();
    fit_the_fabric(&mut a);
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
    finish_fit_job(&mut a);
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

/// The shipped cotton tensile warp curve with its strains shifted by 0.5 %: a curve that
/// starts off zero, which the values' reading notes.
fn shifted_curve(dir: &std::path::Path, by: f64) -> std::path::PathBuf {
    let text = std::fs::read_to_string("kes_data/cotton-shirting/tensile_warp.csv").unwrap();
    let shifted: String = text
        .lines()
        .map(|l| match l.split_once(',') {
            Some((x, y)) if x.trim().parse::<f64>().is_ok() => {
                format!("{},{y}\n", x.trim().parse::<f64>().unwrap() + by)
            }
            _ => format!("{l}\n"),
        })
        .collect();
    let file = dir.join("tensile_warp.csv");
    std::fs::write(&file, shifted).unwrap();
    file
}

#[test]
fn values_notes_go_to_the_message_log_and_the_panel_says_what_it_cuts() {
    let dir = tempfile::tempdir().unwrap();
    let file = shifted_curve(dir.path(), 0.5);
    let (curves, errors) = kestrel::tui::files::open(&file.display().to_string());
    assert!(errors.is_empty(), "{errors:?}");
    let mut a = App::new(curves, "opened".into(), true);
    let notes: Vec<String> = a.curves.list[0]
        .values
        .iter()
        .filter(|(k, _)| k == "note")
        .map(|(_, v)| v.clone())
        .collect();
    assert!(!notes.is_empty(), "{:?}", a.curves.list[0].values);
    // every note in the log in full, naming its file
    for n in &notes {
        assert_a_line_has(&a.log, &[n.as_str(), "tensile_warp.csv"]);
    }
    // stacked under the chart in a short terminal, the cut notes are said
    let screen = draw(&a, 80, 20);
    assert!(screen.contains("EMT"), "{screen}");
    assert!(screen.contains("… (e: all notes)"), "{screen}");
    // at 40 x 12 the panel keeps a few rows: values, and that more need a larger terminal
    let screen = draw(&a, 40, 12);
    assert!(
        screen.contains("EMT") && screen.contains("… (enlarge)"),
        "{screen}"
    );
    // reloaded (changed on disk): its notes are logged again
    let logged = a.log.len();
    shifted_curve(dir.path(), 0.6);
    let status = open_file(&mut a, &file);
    assert!(status.contains("reloaded"), "{status}");
    let new_notes: Vec<&String> = a.curves.list[0]
        .values
        .iter()
        .filter(|(k, _)| k == "note")
        .map(|(_, v)| v)
        .collect();
    assert!(!new_notes.is_empty() && new_notes[0] != &notes[0]);
    assert_a_line_has(&a.log[logged..], &[new_notes[0].as_str()]);
}

#[test]
fn the_fit_result_keeps_rows_in_a_small_terminal() {
    let mut a = app();
    a.update(Action::GoTab(Tab::Fit));
    a.update(Action::RunFit);
    finish_fit_job(&mut a);
    for (w, h) in [(40, 12), (60, 20)] {
        let screen = draw(&a, w, h);
        assert!(screen.contains("NRMSE"), "{w}x{h}: {screen}");
        assert!(screen.contains("PgUp/PgDn"), "{w}x{h}: {screen}");
    }
}

#[test]
fn a_compression_curve_is_not_fitted_and_the_tab_says_where_its_values_are() {
    let (curves, errors) = kestrel::tui::files::open("kes_data/cotton-shirting/compression.csv");
    assert!(errors.is_empty(), "{errors:?}");
    let mut a = App::new(curves, String::new(), true);
    a.update(Action::GoTab(Tab::Fit));
    let screen = draw(&a, 120, 40);
    assert!(
        screen.contains("its KES values are in the Curves tab"),
        "{screen}"
    );
    a.update(Action::RunFit);
    assert!(a.jobs.is_empty(), "no fit job: {:?}", a.jobs);
    assert!(a.fit.running.is_none());
    assert!(
        a.status.contains("no connector law") && a.status.contains("Curves tab"),
        "{}",
        a.status
    );
    assert!(!a.status.contains("kestrel values"), "{}", a.status);
}

#[test]
fn s_and_c_in_the_curves_tab_save_and_send_the_card_as_the_fit_tab_does() {
    let mut a = app();
    fit_the_fabric(&mut a);
    assert!(a.status.contains("s saves the card"), "{}", a.status);
    press(&mut a, KeyCode::Char('1'));
    assert_eq!(a.tab, Tab::Curves);
    press(&mut a, KeyCode::Char('s'));
    assert!(a.prompt.is_some(), "s opens the save prompt: {}", a.status);
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("cotton.params.toml");
    save_card_to(&mut a, &card);
    assert!(card.exists(), "{}", a.status);
    assert!(a.status.contains("written"), "{}", a.status);
    press(&mut a, KeyCode::Char('c'));
    assert_eq!(a.tab, Tab::Cloth, "{}", a.status);
    assert_eq!(a.cloth.card.as_deref(), Some(card.as_path()));
    // the help lists them
    a.update(Action::GoTab(Tab::Curves));
    assert!(kestrel::tui::keymap::help_lines(Tab::Curves)
        .iter()
        .any(|(k, _)| *k == "s / c"));
}

#[test]
fn fitting_the_fabric_fits_a_curve_read_again_meanwhile_once_more() {
    let (mut a, _dir, file) = opened_copy();
    press(&mut a, KeyCode::Char('F'));
    let (curve_index, old_fit, _) = run_fit_job(&mut a);
    // the file changes on disk (one sample moved) and is opened again while it runs
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replacen("0.0078,", "0.0079,", 1);
    std::fs::write(&file, text).unwrap();
    let status = open_file(&mut a, &file);
    assert!(status.contains("reloaded 1 curve"), "{status}");
    a.update(fit_done(curve_index, old_fit));
    assert!(a.curves.list[0].fit.is_none());
    assert_a_line_has(&a.log, &["dropped", "fitted again"]);
    // the same curve, now of the new data, is fitted next
    let Some(Job::Fit { specimens, .. }) = a.jobs.last() else {
        panic!("no fit queued again: {}", a.status)
    };
    assert!(specimens[0].x.iter().any(|&x| (x - 0.000079).abs() < 1e-12));
    finish_fit_job(&mut a);
    assert!(a.curves.list[0].fit.is_some(), "{}", a.status);
    assert!(a.status.contains("fabric fitted"), "{}", a.status);
}
