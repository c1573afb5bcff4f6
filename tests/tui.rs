//! The workbench without a terminal: keymap and update as plain functions, every tab drawn on
//! ratatui's TestBackend and compared with a snapshot.

use kestrel::tui::app::{Action, App, Confirm, Event, Job, Tab};
use kestrel::tui::keymap::keymap;
use kestrel::tui::sample_curves;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

fn app() -> App {
    let (curves, errors) = sample_curves();
    assert!(errors.is_empty(), "{errors:?}");
    App::new(curves, "sample loaded".into(), true)
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(app: &mut App, code: KeyCode) {
    if let Some(a) = keymap(app, key(code)) {
        app.update(a);
    }
}

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().to_string()
}

#[test]
fn keymap_maps_keys_to_actions_per_mode() {
    let mut a = app();
    assert!(matches!(
        keymap(&a, key(KeyCode::Tab)),
        Some(Action::NextTab)
    ));
    assert!(matches!(
        keymap(&a, key(KeyCode::Char('4'))),
        Some(Action::GoTab(Tab::Fit))
    ));
    assert!(
        keymap(&a, key(KeyCode::Char('l'))).is_none(),
        "l is a Connector key"
    );
    a.update(Action::GoTab(Tab::Connector));
    assert!(matches!(
        keymap(&a, key(KeyCode::Char('l'))),
        Some(Action::CycleLaw)
    ));
    assert!(matches!(keymap(&a, key(KeyCode::Char(']'))), Some(Action::Nudge(f)) if f == 0.1));
    a.update(Action::OpenPrompt);
    assert!(matches!(
        keymap(&a, key(KeyCode::Char('q'))),
        Some(Action::PromptInput('q'))
    ));
    let ctrl_u = KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL);
    assert!(matches!(keymap(&a, ctrl_u), Some(Action::PromptClear)));
    a.update(Action::Cancel);
    a.confirm = Some(Confirm::Quit);
    assert!(matches!(
        keymap(&a, key(KeyCode::Char('y'))),
        Some(Action::Answer(true))
    ));
}

#[test]
fn tabs_cycle_and_selection_follows_the_law() {
    let mut a = app();
    for expected in [
        Tab::Connector,
        Tab::Hysteresis,
        Tab::Fit,
        Tab::Cloth,
        Tab::Export,
        Tab::Curves,
    ] {
        press(&mut a, KeyCode::Tab);
        assert_eq!(a.tab, expected);
    }
    press(&mut a, KeyCode::BackTab);
    assert_eq!(a.tab, Tab::Export);
    // selecting a shear curve puts the shear law in the Connector tab
    a.update(Action::GoTab(Tab::Curves));
    let shear = a
        .curves
        .iter()
        .position(|c| c.curve.test.name() == "shear")
        .unwrap();
    while a.selected != shear {
        press(&mut a, KeyCode::Down);
    }
    assert_eq!(a.connector.current().name(), "shear");
}

#[test]
fn parameters_nudge_and_invalid_values_are_refused_with_the_reason() {
    let mut a = app();
    a.update(Action::GoTab(Tab::Connector));
    a.connector.law = 0; // traction
    let k0 = a.connector.current().parameters()[0].value;
    press(&mut a, KeyCode::Char('+'));
    let k1 = a.connector.current().parameters()[0].value;
    assert!((k1 / k0 - 1.01).abs() < 1e-12, "{k0} → {k1}");
    // f1 above k_t ε₁ breaks the toe bound: refused, state unchanged, reason shown
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_some());
    a.update(Action::PromptClear);
    for c in "1e9".chars() {
        a.update(Action::PromptInput(c));
    }
    let before = *a.connector.current();
    a.update(Action::PromptSubmit);
    assert_eq!(*a.connector.current(), before);
    assert!(
        a.status.contains("refused") && a.status.contains("f1"),
        "{}",
        a.status
    );
    // friction model and mu toggles
    press(&mut a, KeyCode::Char('f'));
    assert!(a
        .connector
        .current()
        .parameters()
        .iter()
        .any(|p| p.name == "eta"));
    press(&mut a, KeyCode::Char('m'));
    assert_eq!(a.connector.current().friction_mu(), 0.0);
    press(&mut a, KeyCode::Char('m'));
    assert!(a.connector.current().friction_mu() > 0.0);
}

#[test]
fn fit_runs_as_a_job_and_quitting_with_unsaved_fits_asks() {
    let mut a = app();
    a.update(Action::GoTab(Tab::Fit));
    press(&mut a, KeyCode::Enter);
    let job = a.jobs.pop().expect("a fit job");
    let Job::Fit {
        curve_index,
        curve,
        options,
    } = job
    else {
        panic!("not a fit job")
    };
    assert!(a.fit.running.is_some());
    // the worker's result comes back as an event
    let fit = kestrel::fit::fit_curve(&curve, &options);
    a.update(Action::Event(Event::FitDone {
        curve_index,
        fit: Box::new(fit),
    }));
    assert!(a.fit.running.is_none());
    assert!(a.curves[curve_index].fit.as_ref().unwrap().is_fitted());
    assert!(a.status.contains("NRMSE"), "{}", a.status);
    press(&mut a, KeyCode::Char('a'));
    assert!(a.status.contains("accepted"), "{}", a.status);
    press(&mut a, KeyCode::Char('q'));
    assert!(matches!(a.confirm, Some(Confirm::Quit)));
    assert!(!a.should_quit);
    press(&mut a, KeyCode::Char('n'));
    assert!(!a.should_quit && a.confirm.is_none());
}

#[test]
fn every_tab_draws_at_80x24_and_help_lists_the_keys() {
    let mut a = app();
    for tab in Tab::ALL {
        a.update(Action::GoTab(tab));
        let screen = draw(&a, 80, 24);
        assert!(screen.contains("1 Curves"), "{tab:?}:\n{screen}");
    }
    a.update(Action::GoTab(Tab::Connector));
    press(&mut a, KeyCode::Char('?'));
    let screen = draw(&a, 120, 40);
    assert!(screen.contains("load-dependent level"), "{screen}");
}

#[test]
fn snapshots_of_every_tab_at_120x40() {
    let mut a = app();
    for tab in Tab::ALL {
        a.update(Action::GoTab(tab));
        insta::assert_snapshot!(
            format!("tab_{}", tab.title().to_lowercase()),
            draw(&a, 120, 40)
        );
    }
}

#[test]
fn cloth_tab_loads_a_scene_and_controls_its_worker() {
    use kestrel::tui::cloth::ClothControl;
    let mut a = app();
    a.cloth.scenes = kestrel::tui::cloth::dynamic_scenes(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes"
    )));
    assert!(a
        .cloth
        .scenes
        .iter()
        .any(|p| p.ends_with("provot_sheet_17.toml")));
    assert!(
        !a.cloth
            .scenes
            .iter()
            .any(|p| p.to_string_lossy().contains("kes_")),
        "virtual KES scenes are not listed"
    );
    a.update(Action::GoTab(Tab::Cloth));
    press(&mut a, KeyCode::Char(' '));
    assert!(a.jobs.is_empty() && a.status.contains("load a scene first"));
    press(&mut a, KeyCode::Enter);
    assert!(matches!(a.jobs.pop(), Some(Job::ClothStart(_))));
    press(&mut a, KeyCode::Char(' '));
    assert!(matches!(a.jobs.pop(), Some(Job::Cloth(ClothControl::Run))));
    press(&mut a, KeyCode::Right);
    assert!((a.cloth.yaw - 0.15).abs() < 1e-12);
    // the worker really steps the scene and sends frames
    let (tx, rx) = std::sync::mpsc::channel();
    let path = a.cloth.loaded.clone().unwrap();
    let control = kestrel::tui::cloth::start(path, tx);
    control.send(ClothControl::Step).unwrap();
    let frame = loop {
        match rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap() {
            Event::ClothFrame(f) if f.steps >= 1 => break f,
            Event::Failed(e) => panic!("{e}"),
            _ => {}
        }
    };
    control.send(ClothControl::Stop).unwrap();
    assert_eq!(frame.positions.len(), frame.nu * frame.nv);
    a.update(Action::Event(Event::ClothFrame(frame)));
    let screen = draw(&a, 120, 40);
    assert!(
        screen.contains("ms per step") && screen.contains("max rate structural"),
        "{screen}"
    );
}

#[test]
fn export_tab_renders_the_cloth_frame_and_a_sequence_with_a_gauge() {
    use kestrel::tui::app::{ExportKind, CLOTH_SEQUENCE_FRAMES};
    use kestrel::tui::cloth::ClothControl;
    let mut a = app();
    a.update(Action::GoTab(Tab::Export));
    let frame_kind = ExportKind::ALL
        .iter()
        .position(|k| *k == ExportKind::ClothFrame)
        .unwrap();
    a.export.selected = frame_kind;
    press(&mut a, KeyCode::Enter);
    assert!(
        a.prompt.is_none() && a.status.contains("load a scene"),
        "{}",
        a.status
    );

    let dir = tempfile::tempdir().unwrap();
    let scene = std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/provot_sheet_17.toml"
    ));
    a.cloth.loaded = Some(scene.clone());
    press(&mut a, KeyCode::Enter);
    assert!(a.prompt.is_some());

    let (tx, rx) = std::sync::mpsc::channel();
    let control = kestrel::tui::cloth::start(scene, tx);
    let wait_written = |a: &mut App| loop {
        match rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .unwrap()
        {
            Event::Failed(e) => panic!("{e}"),
            e @ (Event::Written(_) | Event::Exists(_)) => {
                a.update(Action::Event(e));
                break;
            }
            e @ Event::RenderProgress { .. } => a.update(Action::Event(e)),
            _ => {}
        }
    };
    let png = dir.path().join("cloth.png");
    control
        .send(ClothControl::Render {
            kind: ExportKind::ClothFrame,
            path: png.clone(),
            force: false,
        })
        .unwrap();
    wait_written(&mut a);
    let image = image_size(&png);
    assert_eq!(image, kestrel::tui::cloth::RENDER_SIZE);
    assert_eq!(a.export.last_written.as_deref(), Some(png.as_path()));
    assert!(a.export.adapter.is_some());

    // a second export to the same file asks first
    control
        .send(ClothControl::Render {
            kind: ExportKind::ClothFrame,
            path: png.clone(),
            force: false,
        })
        .unwrap();
    wait_written(&mut a);
    assert!(a.confirm.is_some(), "{}", a.status);
    a.update(Action::Answer(false));

    // a sequence: the gauge moves frame by frame, every frame is written
    let frames = dir.path().join("frames");
    control
        .send(ClothControl::Render {
            kind: ExportKind::ClothSequence,
            path: frames.clone(),
            force: false,
        })
        .unwrap();
    let mut seen = Vec::new();
    loop {
        match rx
            .recv_timeout(std::time::Duration::from_secs(300))
            .unwrap()
        {
            Event::Failed(e) => panic!("{e}"),
            Event::RenderProgress { done, total, .. } => {
                assert_eq!(total, CLOTH_SEQUENCE_FRAMES);
                seen.push(done);
                a.update(Action::Event(Event::RenderProgress {
                    done,
                    total,
                    adapter: "test".into(),
                }));
                if done == total / 2 {
                    let screen = draw(&a, 120, 40);
                    assert!(
                        screen.contains(&format!("frame {done} of {total}")),
                        "{screen}"
                    );
                }
            }
            Event::Written(p) => {
                assert_eq!(p, frames);
                a.update(Action::Event(Event::Written(p)));
                break;
            }
            _ => {}
        }
    }
    control.send(ClothControl::Stop).unwrap();
    assert_eq!(seen, (1..=CLOTH_SEQUENCE_FRAMES).collect::<Vec<_>>());
    assert!(a.export.rendering.is_none());
    for n in [0, CLOTH_SEQUENCE_FRAMES - 1] {
        let f = kestrel::render::frame_path(&frames, n);
        assert_eq!(
            image_size(&f),
            kestrel::tui::cloth::RENDER_SIZE,
            "{}",
            f.display()
        );
    }
    // the sheet falls: the first and the last frame differ
    assert_ne!(
        std::fs::read(kestrel::render::frame_path(&frames, 0)).unwrap(),
        std::fs::read(kestrel::render::frame_path(
            &frames,
            CLOTH_SEQUENCE_FRAMES - 1
        ))
        .unwrap()
    );
}

fn image_size(path: &std::path::Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let reader = decoder.read_info().unwrap();
    let info = reader.info();
    (info.width, info.height)
}

#[test]
fn every_tab_has_its_number_key() {
    let a = app();
    for (i, tab) in Tab::ALL.iter().enumerate() {
        let c = char::from(b'1' + i as u8);
        assert!(
            matches!(keymap(&a, key(KeyCode::Char(c))), Some(Action::GoTab(t)) if t == *tab),
            "{c} → {tab:?}"
        );
    }
}
