//! The workbench without a terminal: keymap and update as plain functions, every tab drawn on
//! ratatui's TestBackend and compared with a snapshot.

use kestrel::tui::files::{cloth_entries, sample_curves};
use kestrel::tui::keymap::keymap;
use kestrel::tui::prompt::Confirm;
use kestrel::tui::{Action, App, Event, Job, Tab};
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

use crate::common::assert_a_line_has;

pub(crate) fn app() -> App {
    let (curves, errors) = sample_curves();
    assert!(errors.is_empty(), "{errors:?}");
    let mut a = App::new(curves, "sample loaded".into(), true);
    // what the scan job finds when kestrel starts in the repository
    let scenes = cloth_entries(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    a.update(Action::Event(Event::ClothScanned(scenes)));
    a
}

pub(crate) fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub(crate) fn press(app: &mut App, code: KeyCode) {
    if let Some(a) = keymap(app, key(code)) {
        app.update(a);
    }
}

pub(crate) fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().to_string()
}

/// Pops the fit job the app queued and runs it as the worker would: (curve index, the fit,
/// the specimens fitted).
pub(crate) fn run_fit_job(a: &mut App) -> (usize, kestrel::fit::CurveFit, usize) {
    let Some(Job::Fit {
        curve_index,
        specimens,
        options,
    }) = a.jobs.pop()
    else {
        panic!("no fit job")
    };
    let refs: Vec<&kestrel::kes::Curve> = specimens.iter().collect();
    (
        curve_index,
        kestrel::fit::fit_specimens(&refs, &options),
        refs.len(),
    )
}

/// The worker's answer to a fit job, as the app receives it.
pub(crate) fn fit_done(curve_index: usize, fit: kestrel::fit::CurveFit) -> Action {
    Action::Event(Event::FitDone {
        curve_index,
        fit: Box::new(fit),
    })
}

/// Runs the fit job the app queued, as the worker would, handing its answer to the app; the
/// index of the curve fitted.
pub(crate) fn finish_fit_job(a: &mut App) -> usize {
    let (curve_index, fit, _) = run_fit_job(a);
    a.update(fit_done(curve_index, fit));
    curve_index
}

/// Types `file` into the open save prompt, submits it and runs the save job as the worker
/// would, handing its answer to the app.
pub(crate) fn save_card_to(a: &mut App, file: &std::path::Path) {
    a.update(Action::PromptClear);
    for c in file.display().to_string().chars() {
        a.update(Action::PromptInput(c));
    }
    a.update(Action::PromptSubmit);
    let Some(job @ Job::SaveParams { .. }) = a.jobs.pop() else {
        panic!("no save job")
    };
    let (progress, _) = std::sync::mpsc::channel();
    let Some(event) = kestrel::tui::worker::run(job, &progress) else {
        panic!("the save job gives no answer")
    };
    a.update(Action::Event(event));
}

/// Runs the card-reading job the app queued, as the worker would, handing its answer to the
/// app.
pub(crate) fn read_card(a: &mut App) {
    let Some(job @ Job::ReadCard(_)) = a.jobs.pop() else {
        panic!("no card to read: {:?}", a.jobs)
    };
    let (progress, _) = std::sync::mpsc::channel();
    let event = kestrel::tui::worker::run(job, &progress).expect("an answer");
    a.update(Action::Event(event));
}

/// A cloth worker started by a test, stopped and joined when the test ends (also on a
/// failed assertion): a renderer still alive in a thread when the process exits can crash the
/// graphics driver (NVIDIA's does).
pub(crate) struct JoinedAtEnd {
    control: std::sync::mpsc::Sender<kestrel::tui::message::ClothControl>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for JoinedAtEnd {
    fn drop(&mut self) {
        let _ = self.control.send(kestrel::tui::message::ClothControl::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub(crate) fn joined_at_end(
    (control, thread): (
        std::sync::mpsc::Sender<kestrel::tui::message::ClothControl>,
        std::thread::JoinHandle<()>,
    ),
) -> (
    std::sync::mpsc::Sender<kestrel::tui::message::ClothControl>,
    JoinedAtEnd,
) {
    let guard = JoinedAtEnd {
        control: control.clone(),
        thread: Some(thread),
    };
    (control, guard)
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
        .list
        .iter()
        .position(|c| c.curve.test.name() == "shear")
        .unwrap();
    while a.curves.selected != shear {
        press(&mut a, KeyCode::Down);
    }
    assert_eq!(a.connector.current().name(), "shear");
}

#[test]
fn parameters_nudge_and_invalid_values_are_refused_with_the_reason() {
    let mut a = app();
    a.update(Action::GoTab(Tab::Connector));
    assert_eq!(a.connector.current().name(), "traction");
    let k0 = a.connector.current().parameters()[0].value;
    press(&mut a, KeyCode::Char('-'));
    let k1 = a.connector.current().parameters()[0].value;
    assert!((k1 / k0 - 0.99).abs() < 1e-12, "{k0} → {k1}: {}", a.status);
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
    assert!(a.fit.running.is_some());
    // the worker's result comes back as an event
    let curve_index = finish_fit_job(&mut a);
    assert!(a.fit.running.is_none());
    assert!(a.curves.list[curve_index].fit.as_ref().unwrap().is_fitted());
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
fn a_curve_with_replicates_is_fitted_jointly_and_saved_once() {
    let (mut curves, _) = sample_curves();
    // a second specimen of the first curve: same fabric, test, direction, another file
    let mut second = curves[0].clone();
    second.curve.source = Some("second_specimen.csv".into());
    for (y, e) in second
        .curve
        .y
        .iter_mut()
        .zip(crate::common::noise(1 << 16, 7))
    {
        *y *= 1.0 + 0.005 * e;
    }
    curves.push(second);
    let n = curves.len();
    let mut a = App::new(curves, "sample loaded".into(), true);
    a.update(Action::GoTab(Tab::Fit));
    press(&mut a, KeyCode::Enter);
    assert!(a.status.contains("2 specimens jointly"), "{}", a.status);
    let (curve_index, fit, specimens) = run_fit_job(&mut a);
    assert_eq!((curve_index, specimens), (0, 2));
    assert_eq!(fit.specimens.len(), 2);
    a.update(fit_done(curve_index, fit));
    // the joint fit is the fit of both specimens, and the tab lists each one's NRMSE
    assert!(a.curves.list[0].fit.as_ref().unwrap().is_fitted());
    assert!(a.curves.list[n - 1].fit.as_ref().unwrap().is_fitted());
    let screen = draw(&a, 160, 60);
    assert!(screen.contains("2 specimens jointly"), "{screen}");
    assert!(screen.contains("second_specimen.csv"), "{screen}");
    // saved: one law and one [[fits]] entry with both specimens
    press(&mut a, KeyCode::Char('s'));
    a.update(Action::PromptSubmit);
    let Some(Job::SaveParams { fabric, fitted, .. }) = a.jobs.pop() else {
        panic!("not a save job")
    };
    let (cs, fits): (Vec<_>, Vec<_>) = fitted.into_iter().unzip();
    let refs: Vec<&kestrel::kes::Curve> = cs.iter().collect();
    let params = kestrel::fit::assemble_fabric_params(&fabric, &refs, &fits);
    assert_eq!(params.fits.len(), 1);
    assert_eq!(params.fits[0].specimens.len(), 2);
    assert_eq!(params.provenance.sources.len(), 2);
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

/// The 120 × 40 screen shows every one of `texts`.
fn assert_screen_shows(a: &App, texts: &[&str]) {
    let screen = draw(a, 120, 40);
    assert!(texts.iter().all(|t| screen.contains(t)), "{screen}");
}

#[test]
fn cloth_tab_loads_a_scene_and_controls_its_worker() {
    use kestrel::tui::message::ClothControl;
    let mut a = app();
    a.cloth.scenes = kestrel::tui::files::dynamic_scenes(std::path::Path::new(concat!(
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
    assert!(matches!(a.jobs.pop(), Some(Job::ClothStart { .. })));
    press(&mut a, KeyCode::Char(' '));
    assert!(matches!(a.jobs.pop(), Some(Job::Cloth(ClothControl::Run))));
    press(&mut a, KeyCode::Right);
    assert!((a.cloth.yaw - 0.15).abs() < 1e-12);
    // the worker really steps the scene and sends frames
    let (tx, rx) = std::sync::mpsc::channel();
    let path = a.cloth.loaded.clone().unwrap();
    let (control, _worker) = joined_at_end(kestrel::tui::worker::cloth::start(
        kestrel::tui::worker::cloth::SceneSource::File(path),
        tx,
    ));
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
    assert_screen_shows(&a, &["ms per step", "max rate structural"]);
}

#[test]
fn export_tab_renders_the_cloth_frame_and_a_sequence_with_a_gauge() {
    use kestrel::tui::message::ClothControl;
    use kestrel::tui::message::{ExportKind, CLOTH_SEQUENCE_FRAMES};
    // the worker renders on its own renderer: only where wgpu finds an adapter
    if crate::common::gpu_or_skip(16, 16).is_none() {
        return;
    }
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
    let (control, _worker) = joined_at_end(kestrel::tui::worker::cloth::start(
        kestrel::tui::worker::cloth::SceneSource::File(scene),
        tx,
    ));
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
    let render_frame = |a: &mut App| {
        control
            .send(ClothControl::Render {
                kind: ExportKind::ClothFrame,
                path: png.clone(),
                force: false,
            })
            .unwrap();
        wait_written(a);
    };
    render_frame(&mut a);
    let image = image_size(&png);
    assert_eq!(image, kestrel::tui::worker::cloth::RENDER_SIZE);
    assert_eq!(a.export.last_written.as_deref(), Some(png.as_path()));
    assert!(a.export.adapter.is_some());

    // a second export to the same file asks first
    render_frame(&mut a);
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
            kestrel::tui::worker::cloth::RENDER_SIZE,
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

fn door_palette() -> Vec<kestrel::tui::message::PaletteKey> {
    [("stop", 's'), ("open", 'o'), ("close", 'c')]
        .into_iter()
        .map(|(n, k)| kestrel::tui::message::PaletteKey {
            name: n.into(),
            key: k,
        })
        .collect()
}

#[test]
fn palette_keys_apply_impulses_only_while_a_model_is_loaded() {
    let alt = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT);
    let mut a = app();
    a.update(Action::GoTab(Tab::Cloth));
    assert!(keymap(&a, key(KeyCode::Char('s'))).is_none());
    assert!(keymap(&a, key(KeyCode::Char('c'))).is_none());
    assert!(!matches!(
        keymap(&a, alt('o')),
        Some(Action::ClothImpulse(_))
    ));
    a.cloth.loaded = Some("door.krd".into());
    a.update(Action::Event(Event::ClothPalette(door_palette())));
    assert!(matches!(
        keymap(&a, key(KeyCode::Char('s'))),
        Some(Action::ClothImpulse(0))
    ));
    assert!(matches!(
        keymap(&a, key(KeyCode::Char('c'))),
        Some(Action::ClothImpulse(2))
    ));
    // `o` stays the global open key: the open entry is Alt-o
    assert!(matches!(
        keymap(&a, key(KeyCode::Char('o'))),
        Some(Action::OpenPrompt)
    ));
    assert!(matches!(
        keymap(&a, alt('o')),
        Some(Action::ClothImpulse(1))
    ));
    assert!(matches!(
        keymap(&a, key(KeyCode::Char(' '))),
        Some(Action::ClothRunPause)
    ));
    // only in the Cloth tab
    a.update(Action::GoTab(Tab::Fit));
    assert!(matches!(
        keymap(&a, key(KeyCode::Char('s'))),
        Some(Action::SaveParams)
    ));
    a.update(Action::GoTab(Tab::Cloth));
    press(&mut a, KeyCode::Char('c'));
    assert!(matches!(
        a.jobs.pop(),
        Some(Job::Cloth(kestrel::tui::message::ClothControl::Impulse(2)))
    ));
    // loading a scene drops the palette
    a.cloth.scenes = vec!["scenes/flag.toml".into()];
    a.cloth.selected = 0;
    a.update(Action::ClothLoad);
    assert!(keymap(&a, key(KeyCode::Char('s'))).is_none());
}

#[test]
fn snapshot_of_the_cloth_tab_playing_a_model() {
    use kestrel::tui::message::{ClothFrame, ReducedStats};
    let mut a = app();
    a.update(Action::GoTab(Tab::Cloth));
    let model = std::path::PathBuf::from("scenes/door.krd");
    a.cloth.scenes.push(model.clone());
    a.cloth.selected = a.cloth.scenes.len() - 1;
    a.cloth.loaded = Some(model);
    a.update(Action::Event(Event::ClothPalette(door_palette())));
    let (nu, nv) = (8, 9);
    let positions = (0..nu * nv)
        .map(|k| {
            let (i, j) = ((k % nu) as f64, (k / nu) as f64);
            [
                0.1 + 0.1 * i,
                1.9 - 0.1 * j,
                0.02 + 0.01 * j * (0.5 * i).sin(),
            ]
        })
        .collect();
    let frame = ClothFrame {
        scene: "Cloth on a swinging door (reduced, 8 x 9)".into(),
        positions,
        nu,
        nv,
        up: [0.0, 1.0, 0.0],
        steps: 120,
        time_s: 3.0,
        ms_per_step: 0.028,
        rate_structural: 0.0,
        rate_shear: 0.0,
        kinetic_j: 0.0,
        elastic_j: 0.0,
        running: true,
        reduced: Some(ReducedStats {
            rank: 9,
            frames_per_s: 35500.0,
            entry: 1,
            entry_name: "open".into(),
            door_deg: Some(42.5),
            jumps: 3,
            ignored: 0,
            shading: Some(kestrel::tui::message::TransferShade {
                rank: 10,
                sky_deg: 30,
                colours: vec![[200, 120, 90]; nu * nv],
            }),
        }),
    };
    a.update(Action::Event(Event::ClothFrame(Box::new(frame))));
    insta::assert_snapshot!("tab_cloth_model", draw(&a, 120, 40));
}

#[test]
fn a_playback_worker_plays_a_small_model_and_takes_an_impulse() {
    use kestrel::reduced::{precompute, PrecomputeOptions};
    use kestrel::tui::message::ClothControl;
    let scene = crate::common::small_door(8, 9, 8.0);
    let (model, _) = precompute(&scene, &PrecomputeOptions::default(), &|_| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let krd = dir.path().join("door.krd");
    model.write(&krd, false).unwrap();
    assert_eq!(
        kestrel::tui::files::reduced_models(dir.path()),
        vec![krd.clone()]
    );

    let mut a = app();
    a.update(Action::GoTab(Tab::Cloth));
    let (tx, rx) = std::sync::mpsc::channel();
    let (control, _worker) = joined_at_end(kestrel::tui::worker::playback::start(krd.clone(), tx));
    a.cloth.loaded = Some(krd);
    let wait = |pred: &dyn Fn(&Event) -> bool| loop {
        let e = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("no event from the playback worker");
        assert!(!matches!(e, Event::Failed(_)), "{e:?}");
        if pred(&e) {
            break e;
        }
    };
    let e = wait(&|e| matches!(e, Event::ClothPalette(_)));
    a.update(Action::Event(e));
    let open = a
        .cloth
        .palette
        .iter()
        .position(|p| p.name == "open")
        .unwrap();
    control.send(ClothControl::Step).unwrap();
    let before = match wait(&|e| matches!(e, Event::ClothFrame(f) if f.steps >= 1)) {
        Event::ClothFrame(f) => f,
        _ => unreachable!(),
    };
    let r = before.reduced.clone().unwrap();
    assert_eq!(
        (before.nu, before.nv, r.entry_name.as_str()),
        (8, 9, "stop")
    );
    assert_eq!(r.rank, model.rank);
    // the open key, through keymap and update, reaches the worker
    if let Some(act) = keymap(&a, KeyEvent::new(KeyCode::Char('o'), KeyModifiers::ALT)) {
        a.update(act);
    }
    match a.jobs.pop() {
        Some(Job::Cloth(c @ ClothControl::Impulse(k))) if k == open => control.send(c).unwrap(),
        other => panic!("{other:?}"),
    }
    control.send(ClothControl::Run).unwrap();
    let after = match wait(
        &|e| matches!(e, Event::ClothFrame(f) if f.reduced.as_ref().is_some_and(|r| r.door_deg.unwrap_or(0.0) > 5.0)),
    ) {
        Event::ClothFrame(f) => f,
        _ => unreachable!(),
    };
    control.send(ClothControl::Stop).unwrap();
    let r = after.reduced.clone().unwrap();
    assert_eq!(r.entry_name, "open");
    assert!(r.frames_per_s > 0.0 && r.jumps >= 1, "{r:?}");
    assert!(after.time_s > before.time_s);
    let moved = before
        .positions
        .iter()
        .zip(&after.positions)
        .map(|(p, q)| (0..3).map(|i| (p[i] - q[i]).powi(2)).sum::<f64>())
        .fold(0.0, f64::max)
        .sqrt();
    assert!(moved > 0.01, "the cloth turned with the door: {moved} m");
    a.update(Action::Event(Event::ClothFrame(after)));
    assert_screen_shows(&a, &["entry: open", "Alt-o open"]);
}

/// The cells of the drawn screen whose foreground is an RGB colour.
fn rgb_cells(app: &App, w: u16, h: u16) -> usize {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend()
        .buffer()
        .content()
        .iter()
        .filter(|c| matches!(c.fg, ratatui::style::Color::Rgb(..)))
        .count()
}

#[test]
fn a_model_with_transfer_is_shaded_in_the_cloth_tab_under_a_sky_the_l_key_turns() {
    use kestrel::reduced::precompute;
    use kestrel::reduced::transfer::srgb8;
    use kestrel::tui::message::{ClothControl, ClothFrame};
    // sRGB of the standard's anchors: 0 → 0, 1 → 255, 0.5 → 188 (1.055·0.5^(1/2.4) − 0.055)
    assert_eq!(srgb8([0.0, 1.0, 0.5]), [0, 255, 188]);
    assert_eq!(srgb8([0.002, 2.0, f32::NAN]), [7, 255, 0]);
    let scene = crate::common::small_tree_door();
    let (model, _) = precompute(&scene, &crate::transfer::transfer_options(), &|_| {}).unwrap();
    let r_a = model.transfer.as_ref().unwrap().info.rank as usize;
    let dir = tempfile::tempdir().unwrap();
    let krd = dir.path().join("door_t.krd");
    model.write(&krd, false).unwrap();

    let mut a = App::new(sample_curves().0, "sample loaded".into(), false);
    a.update(Action::GoTab(Tab::Cloth));
    // no model: the key says why it does nothing
    press(&mut a, KeyCode::Char('l'));
    assert!(a.status.contains("load a .krd"), "{}", a.status);
    assert!(a.jobs.is_empty());
    let (tx, rx) = std::sync::mpsc::channel();
    let (control, _worker) = joined_at_end(kestrel::tui::worker::playback::start(krd.clone(), tx));
    a.cloth.loaded = Some(krd.clone());
    let next_frame = |after: u64| loop {
        match rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("no event from the playback worker")
        {
            Event::Failed(e) => panic!("{e}"),
            Event::ClothFrame(f) if f.steps >= after => break f,
            _ => {}
        }
    };
    control.send(ClothControl::Step).unwrap();
    let shade_of = |f: &ClothFrame| f.reduced.as_ref().unwrap().shading.clone().unwrap();
    let f0 = next_frame(1);
    let s0 = shade_of(&f0);
    assert_eq!((s0.rank, s0.sky_deg, s0.colours.len()), (r_a, 0, 72));
    // every vertex sees some of the sky (a red cloth: its red channel is never black)
    assert!(s0.colours.iter().all(|c| c[0] > 0), "{:?}", s0.colours);
    a.update(Action::Event(Event::ClothFrame(f0.clone())));
    assert_screen_shows(&a, &[&format!("transfer r_a {r_a}  sky 0 deg")]);
    assert!(
        rgb_cells(&a, 120, 40) > 20,
        "the wireframe is coloured by the radiance"
    );
    // l turns the sky by 30 deg: a job for the worker, and the next frame is lit otherwise
    let turn = |a: &mut App, key: char, control: &std::sync::mpsc::Sender<ClothControl>| {
        press(a, KeyCode::Char(key));
        match a.jobs.pop() {
            Some(Job::Cloth(c @ ClothControl::SkyAzimuth(_))) => control.send(c).unwrap(),
            other => panic!("{other:?}"),
        }
    };
    let mut seen = Vec::new();
    for k in 1..=6 {
        turn(&mut a, 'l', &control);
        assert_eq!(a.cloth.sky_deg, 30 * k);
        let f = loop {
            let f = next_frame(1);
            if shade_of(&f).sky_deg == 30 * k {
                break f;
            }
        };
        // the played state did not move (paused): only the light did
        assert_eq!(f.positions, f0.positions);
        seen.push(shade_of(&f).colours);
        a.update(Action::Event(Event::ClothFrame(f)));
    }
    assert_ne!(
        seen[5], s0.colours,
        "the sky turned by 180 deg lights the cloth otherwise"
    );
    // L turns it back: after -180 deg the frame is the first one, colour for colour
    for _ in 0..6 {
        turn(&mut a, 'L', &control);
    }
    assert_eq!(a.cloth.sky_deg, 0);
    let back = loop {
        let f = next_frame(1);
        let s = shade_of(&f);
        if s.sky_deg == 0 && a.jobs.is_empty() {
            break s;
        }
    };
    assert_eq!(back.colours, s0.colours);
    // the frame export shades with the transfer too: the sky turned, the image changes
    if crate::common::gpu_or_skip(16, 16).is_some() {
        use kestrel::tui::message::ExportKind;
        let render = |name: &str, sky: i32| {
            control.send(ClothControl::SkyAzimuth(sky)).unwrap();
            let path = dir.path().join(name);
            let kind = ExportKind::ClothFrame;
            let force = false;
            control
                .send(ClothControl::Render {
                    kind,
                    path: path.clone(),
                    force,
                })
                .unwrap();
            loop {
                match rx
                    .recv_timeout(std::time::Duration::from_secs(120))
                    .unwrap()
                {
                    Event::Written(p) => break assert_eq!(p, path),
                    Event::Failed(e) => panic!("{e}"),
                    _ => {}
                }
            }
            crate::render::decode(&std::fs::read(&path).unwrap())
        };
        let (lit, turned) = (render("a.png", 0), render("b.png", 180));
        assert_eq!((lit.0, lit.1), (turned.0, turned.1));
        assert_ne!(lit.2, turned.2);
    }
    control.send(ClothControl::Stop).unwrap();

    // a model without transfer: the key says so and nothing is sent
    let mut plain = model.clone();
    plain.transfer = None;
    let krd_plain = dir.path().join("door.krd");
    plain.write(&krd_plain, false).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (control, _worker) =
        joined_at_end(kestrel::tui::worker::playback::start(krd_plain.clone(), tx));
    control.send(ClothControl::Step).unwrap();
    let f = loop {
        if let Event::ClothFrame(f) = rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap() {
            break f;
        }
    };
    control.send(ClothControl::Stop).unwrap();
    assert!(f.reduced.as_ref().unwrap().shading.is_none());
    a.cloth.loaded = Some(krd_plain);
    a.update(Action::Event(Event::ClothFrame(f)));
    press(&mut a, KeyCode::Char('l'));
    assert!(a.status.contains("no radiance transfer"), "{}", a.status);
    assert!(a.jobs.is_empty());
    assert_screen_shows(&a, &["no radiance transfer"]);
    assert_eq!(rgb_cells(&a, 120, 40), 0);
}

#[test]
fn the_key_table_has_no_shadowed_keys_and_the_help_lists_every_row() {
    use kestrel::tui::keymap::{help_lines, Context, BINDINGS};
    // within what is looked up together, a key is bound once
    let groups = |c: Context| match c {
        Context::Global => vec![Context::Global],
        Context::Tab(t) => vec![Context::Global, Context::Tab(t)],
        other => vec![other],
    };
    for b in BINDINGS {
        for (k, _) in b.keys {
            let bound = BINDINGS
                .iter()
                .filter(|o| groups(b.context).contains(&o.context))
                .flat_map(|o| o.keys)
                .filter(|(o, _)| o == k)
                .count();
            assert_eq!(bound, 1, "{k:?} bound {bound} times near {}", b.label);
        }
    }
    for tab in Tab::ALL {
        let help = help_lines(tab);
        for b in BINDINGS
            .iter()
            .filter(|b| matches!(b.context, Context::Global) || b.context == Context::Tab(tab))
        {
            assert!(help.contains(&(b.label, b.help)), "{tab:?}: {}", b.label);
        }
    }
}

#[test]
fn constructing_the_app_reads_no_files_the_cloth_list_comes_from_a_scan_job() {
    let (curves, _) = sample_curves();
    let mut a = App::new(curves, String::new(), true);
    assert!(a.cloth.scenes.is_empty() && a.jobs.is_empty());
    let scenes = vec![std::path::PathBuf::from("scenes/flag.toml")];
    a.update(Action::Event(Event::ClothScanned(scenes.clone())));
    assert_eq!(a.cloth.scenes, scenes);
}

#[test]
fn tab_in_a_prompt_completes_the_path_through_a_job() {
    let mut a = app();
    press(&mut a, KeyCode::Char('o'));
    a.update(Action::PromptClear);
    for c in concat!(env!("CARGO_MANIFEST_DIR"), "/scen").chars() {
        a.update(Action::PromptInput(c));
    }
    press(&mut a, KeyCode::Tab);
    let Some(Job::CompletePath(typed)) = a.jobs.pop() else {
        panic!("no completion job")
    };
    let completed = kestrel::tui::files::complete_path(&typed).unwrap();
    assert!(completed.candidates.is_empty(), "{completed:?}");
    a.update(Action::Event(Event::PathCompleted { typed, completed }));
    assert_eq!(
        a.prompt.as_ref().map(|p| p.text.as_str()),
        Some(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/"))
    );
}

/// A small tensile KES file `dir/name` of `fabric` (created with its folder).
pub(crate) fn write_kes(dir: &std::path::Path, name: &str, fabric: &str, direction: &str) {
    let f = dir.join(name);
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(
        &f,
        format!(
            "# fabric: {fabric}\n# test: tensile\n# direction: {direction}\n\
             strain [%],force [gf/cm]\n0,0\n5,500\n2,0\n"
        ),
    )
    .unwrap();
}

#[test]
fn tab_with_several_matches_lists_them_above_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    write_kes(dir.path(), "tensile_warp.csv", "Denim D", "warp");
    write_kes(dir.path(), "tensile_weft.csv", "Denim D", "weft");
    write_kes(dir.path(), "tensile/x.csv", "Denim D", "weft");
    let typed = format!("{}/tens", dir.path().display());
    let completed = kestrel::tui::files::complete_path(&typed).unwrap();
    assert_eq!(completed.text, format!("{}/tensile", dir.path().display()));
    assert_eq!(
        completed.candidates,
        vec!["tensile/", "tensile_warp.csv", "tensile_weft.csv"]
    );
    let mut a = app();
    press(&mut a, KeyCode::Char('o'));
    for c in typed.chars() {
        a.update(Action::PromptInput(c));
    }
    press(&mut a, KeyCode::Tab);
    assert!(matches!(a.jobs.pop(), Some(Job::CompletePath(t)) if t == typed));
    a.update(Action::Event(Event::PathCompleted { typed, completed }));
    let screen = draw(&a, 80, 24);
    assert!(
        screen.contains("3 matches")
            && screen.contains("tensile/  tensile_warp.csv  tensile_weft.csv"),
        "{screen}"
    );
    // typing on hides them
    a.update(Action::PromptInput('_'));
    assert!(!draw(&a, 80, 24).contains("3 matches"));
}

#[test]
fn the_open_prompt_takes_a_library_of_fabric_folders_globs_and_no_file_twice() {
    use kestrel::tui::files::open;
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib");
    write_kes(&lib, "denim-a/tensile_warp.csv", "Denim A", "warp");
    write_kes(&lib, "denim-a/tensile_weft.csv", "Denim A", "weft");
    write_kes(&lib, "denim-b/tensile_warp.csv", "Denim B", "warp");
    write_kes(&lib, "twill/tensile_weft.csv", "Twill", "weft");
    let (curves, _) = sample_curves();
    let mut a = App::new(curves, String::new(), true);
    let n0 = a.curves.list.len();
    let opened = |a: &mut App, text: &str| {
        let (curves, errors) = open(text);
        a.update(Action::Event(Event::Opened { curves, errors }));
        a.status.clone()
    };
    // the library: every fabric folder in it, one group each
    let status = opened(&mut a, &lib.display().to_string());
    assert!(
        status.starts_with("opened 4 curves of 3 fabrics: Denim A, Denim B, Twill"),
        "{status}"
    );
    assert_eq!(a.curves.list.len(), n0 + 4);
    // the same folder again, under another spelling, and a file of it: nothing added
    let again = format!("{}/../lib/", lib.display());
    let status = opened(&mut a, &again);
    assert!(status.contains("4 curves already open"), "{status}");
    let file = format!("{}/denim-a/tensile_warp.csv", lib.display());
    assert!(opened(&mut a, &file).contains("1 curve already open"));
    assert_eq!(a.curves.list.len(), n0 + 4);

    // globs: files, folders; a pattern matching nothing is an error naming it
    let mut b = App::new(Vec::new(), String::new(), true);
    let status = opened(&mut b, &format!("{}/*/tensile_warp.csv", lib.display()));
    assert!(
        status.starts_with("opened 2 curves of 2 fabrics"),
        "{status}"
    );
    let status = opened(&mut b, &format!("{}/denim*/", lib.display()));
    assert!(
        status.starts_with("opened 1 curve of 1 fabric: Denim A; 2 curves already open"),
        "{status}"
    );
    let none = format!("{}/wool*/", lib.display());
    let status = opened(&mut b, &none);
    assert!(
        status.starts_with("error") && status.contains(&format!("`{none}`")),
        "{status}"
    );
    // a folder with no CSV at any depth says what to open
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let status = opened(&mut b, &empty.display().to_string());
    assert!(
        status.starts_with("error: no .csv file in") && status.contains("folder of fabric folders"),
        "{status}"
    );
    assert_eq!(b.curves.list.len(), 3);
}

#[test]
fn the_curves_tab_names_files_and_groups_specimens() {
    use kestrel::tui::files::load_curves;
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, direction: &str| {
        crate::common::write_file(
            dir.path(),
            name,
            format!(
                "# fabric: Denim D\n# test: tensile\n# direction: {direction}\n\
                 strain [%],force [gf/cm]\n0,0\n5,500\n2,0\n"
            ),
        )
    };
    // two specimens of warp with a weft curve between them
    let files = [
        write("warp_a.csv", "warp"),
        write("weft.csv", "weft"),
        write("warp_b.csv", "warp"),
    ];
    let (curves, errors) = load_curves(&files);
    assert!(errors.is_empty(), "{errors:?}");
    let mut a = app();
    a.update(Action::Event(Event::Opened { curves, errors }));
    let screen = draw(&a, 120, 40);
    let rows: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("Denim D"))
        .collect();
    let at = |s: &str| {
        rows.iter()
            .position(|r| r.contains(s))
            .unwrap_or(usize::MAX)
    };
    // specimens side by side, numbered, each with its file name below
    assert!(at("tensile warp 1/2") < at("warp_a.csv"), "{screen}");
    assert!(at("warp_a.csv") < at("tensile warp 2/2"), "{screen}");
    assert!(at("tensile warp 2/2") < at("warp_b.csv"), "{screen}");
    assert!(at("warp_b.csv") < at("│    weft.csv"), "{screen}");
    assert!(at("│    weft.csv") < usize::MAX, "{screen}");
}

#[test]
fn the_hysteresis_tab_lists_closed_cycles_apart_from_open_segments() {
    let mut a = app();
    a.update(Action::GoTab(Tab::Hysteresis));
    a.update(Action::CyclePath);
    a.update(Action::CyclePath); // partial reversals
    let screen = draw(&a, 120, 40);
    assert!(screen.contains("partial"), "{screen}");
    let listed: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("dissipated ["))
        .skip(1)
        .take_while(|l| !l.contains("open segments"))
        .collect();
    assert!(!listed.is_empty(), "{screen}");
    for l in &listed {
        assert!(
            l.contains("cycle") && !l.contains(": -"),
            "a cycle dissipates: {l}\n{screen}"
        );
    }
    assert!(screen.contains("open segments (no cycle)"), "{screen}");
}

#[test]
fn exports_are_offered_under_the_name_of_what_they_show() {
    let mut a = app();
    let c = a.curves.list[a.curves.selected].curve.clone();
    let slug = kestrel::fit::fabric::fabric_slug(&c.fabric);
    a.update(Action::GoTab(Tab::Export));
    let mut offered = Vec::new();
    for _ in 0..3 {
        a.update(Action::Export);
        offered.push(a.prompt.take().expect("a path prompt").text);
        a.update(Action::Down);
    }
    assert_eq!(
        offered,
        vec![
            format!("{slug}-{}-{}.png", c.test, c.direction),
            format!("{slug}-sheet.png"),
            "tensile-law-hysteresis.png".to_string(),
        ]
    );
    a.update(Action::OpenPrompt);
    assert_eq!(a.prompt.as_ref().unwrap().text, "", "no folder assumed");
}

#[test]
fn without_colour_loading_unloading_and_law_have_their_own_markers() {
    let (curves, _) = sample_curves();
    let mut a = App::new(curves, "sample loaded".into(), true);
    let screen = draw(&a, 120, 40);
    for legend in ["⠒ loading", "• unloading"] {
        assert!(screen.contains(legend), "{legend}\n{screen}");
    }
    a.update(Action::GoTab(Tab::Connector));
    let screen = draw(&a, 120, 40);
    assert!(screen.matches('•').count() > 20, "{screen}");
    assert!(
        screen.matches('█').count() > 20,
        "the law drawn in blocks\n{screen}"
    );
}

#[test]
fn the_message_log_shows_a_long_error_in_full_at_80x24() {
    let mut a = app();
    let long = "cannot read /a/very/long/folder/name/of/a/fabric/library/denim-3/tensile-warp.csv: \
                line 7, column 2: strain is not a number (found \"abc\", expected a value in %) END-OF-ERROR";
    a.update(Action::Event(Event::Failed(long.into())));
    a.update(Action::GoTab(Tab::Fit));
    let screen = draw(&a, 80, 24);
    assert!(
        !screen.contains("END-OF-ERROR"),
        "the status line is cut:\n{screen}"
    );
    press(&mut a, KeyCode::Char('e'));
    assert!(a.log_open);
    let screen = draw(&a, 80, 24);
    assert!(screen.contains("END-OF-ERROR"), "{screen}");
    insta::assert_snapshot!("messages_80x24", screen);
    // the oldest message is below; Down scrolls to it, no further
    assert_eq!(a.log.first().map(String::as_str), Some("sample loaded"));
    for _ in 0..10 {
        press(&mut a, KeyCode::Down);
    }
    assert_eq!(a.log_scroll, a.log.len() - 1);
    assert!(draw(&a, 80, 24).contains("sample loaded"));
    press(&mut a, KeyCode::Up);
    assert_eq!(a.log_scroll, a.log.len() - 2);
    // tab keys do nothing while it is open; Esc closes it
    press(&mut a, KeyCode::Char('1'));
    assert_eq!(a.tab, Tab::Fit);
    press(&mut a, KeyCode::Esc);
    assert!(!a.log_open);
    press(&mut a, KeyCode::Char('?'));
    assert!(draw(&a, 120, 40).contains("every status and error in full"));
}

#[test]
fn snapshots_of_every_tab_and_its_help_at_80x24() {
    let mut a = app();
    for tab in Tab::ALL {
        a.update(Action::GoTab(tab));
        let name = tab.title().to_lowercase();
        insta::assert_snapshot!(format!("tab_{name}_80x24"), draw(&a, 80, 24));
        press(&mut a, KeyCode::Char('?'));
        let screen = draw(&a, 80, 24);
        // every help line is shown whole: the help ends with the tab's last key, uncut
        let last = kestrel::tui::keymap::help_lines(tab).last().unwrap().1;
        assert!(screen.contains(last), "{tab:?}:\n{screen}");
        insta::assert_snapshot!(format!("help_{name}_80x24"), screen);
        press(&mut a, KeyCode::Esc);
    }
}

#[test]
fn the_connector_starts_from_the_fabric_per_direction_in_kes_units_and_saves_what_was_accepted() {
    use kestrel::tui::tabs::connector::LawOrigin;
    let mut a = app();
    a.update(Action::GoTab(Tab::Connector));
    // no fit yet: the fit's initial estimate from the selected curve
    let warp = a.connector.slot().clone();
    assert_eq!(warp.key.label(), "tensile warp");
    assert_eq!(
        warp.origin,
        LawOrigin::Estimate("tensile_warp.csv".into()),
        "{warp:?}"
    );
    let screen = draw(&a, 120, 40);
    assert!(
        screen.contains("estimate from") && screen.contains("gf/cm") && !screen.contains("N/m"),
        "{screen}"
    );
    // the other direction has its own law, from its own curve
    press(&mut a, KeyCode::Char('d'));
    assert_eq!(a.connector.slot().key.label(), "tensile weft");
    assert_eq!(
        a.connector.slot().origin,
        LawOrigin::Estimate("tensile_weft.csv".into())
    );
    assert_ne!(a.connector.current(), &warp.law);
    // values are typed in KES units: 10 gf/cm of friction level is 9.80665 N/m
    let level = a
        .connector
        .current()
        .parameters()
        .iter()
        .position(|p| p.name == "level")
        .unwrap();
    for _ in 0..level {
        press(&mut a, KeyCode::Down);
    }
    press(&mut a, KeyCode::Enter);
    assert!(
        a.prompt.as_ref().unwrap().label.contains("[gf/cm]"),
        "{:?}",
        a.prompt
    );
    a.update(Action::PromptClear);
    for c in "10".chars() {
        a.update(Action::PromptInput(c));
    }
    a.update(Action::PromptSubmit);
    let si = a.connector.current().parameters()[level].value;
    assert!((si - 9.80665).abs() < 1e-9, "{si}: {}", a.status);
    assert!(a.connector.slot().edited);
    // the toe: quadratic ↔ power, shown
    press(&mut a, KeyCode::Char('t'));
    assert!(draw(&a, 120, 40).contains("toe      power"));
    press(&mut a, KeyCode::Char('a'));
    assert!(
        a.status.contains("tensile weft law accepted"),
        "{}",
        a.status
    );
    let accepted_weft = *a.connector.current();
    // a bending law edited but not accepted is not saved
    press(&mut a, KeyCode::Char('l'));
    assert_eq!(a.connector.slot().key.label(), "bending weft");
    press(&mut a, KeyCode::Char(']'));
    assert!(a.connector.slot().edited);

    // the tensile warp curve fitted: the Connector shows the fit
    a.update(Action::GoTab(Tab::Fit));
    press(&mut a, KeyCode::Enter);
    let (curve_index, fit, specimens) = run_fit_job(&mut a);
    assert_eq!(specimens, 1);
    let fitted_law = fit.law().unwrap();
    a.update(fit_done(curve_index, fit));
    assert_eq!(a.connector.slot().key.label(), "tensile warp");
    assert_eq!(
        a.connector.slot().origin,
        LawOrigin::Fitted("tensile_warp.csv".into())
    );
    assert_eq!(*a.connector.current(), fitted_law);

    // save: the fitted warp law and the accepted weft law, and says so
    press(&mut a, KeyCode::Char('s'));
    // the prompt counts them, and lists them above itself
    let prompt = a.prompt.clone().unwrap();
    assert!(prompt.label.contains("2 laws"), "{}", prompt.label);
    assert!(
        prompt
            .notes
            .contains(&"tensile weft (accepted)".to_string())
            && prompt.notes.contains(&"tensile warp (fitted)".to_string()),
        "{:?}",
        prompt.notes
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("denim.params.toml");
    save_card_to(&mut a, &file);
    assert!(
        a.status.contains("written") && a.status.contains("tensile weft (accepted)"),
        "{}",
        a.status
    );
    let params = kestrel::params::FabricParams::read(&file).unwrap();
    let kestrel::material::ConnectorLaw::Traction(weft) = accepted_weft else {
        panic!("not traction")
    };
    assert_eq!(params.weft.traction, Some(weft));
    assert!(params.warp.traction.is_some());
    assert_eq!(params.weft.bending, None, "edited, not accepted: not saved");
    assert_eq!(params.warp.bending, None);
}

#[test]
fn law_parameters_convert_to_the_units_of_the_plots() {
    use kestrel::kes::units::law_parameter_unit as unit;
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-12;
    // 1 gf·cm²/cm = 9.80665e-5 N·m; 1 gf/(cm·deg) = 0.980665 N/m per π/180 rad
    let (u, f) = unit("N*m", false);
    assert!(u == "gf*cm^2/cm" && close(f * 9.80665e-5, 1.0));
    let (u, f) = unit("N/(m*rad)", false);
    assert!(u == "gf/(cm*deg)" && close(f * 0.980665 / (std::f64::consts::PI / 180.0), 1.0));
    assert!(matches!(unit("N", false), ("gf*cm/cm", f) if close(f * 9.80665e-3, 1.0)));
    assert!(matches!(unit("rad", false), ("deg", f) if close(f, 180.0 / std::f64::consts::PI)));
    assert!(matches!(unit("1/m", false), ("1/cm", f) if close(f, 0.01)));
    assert_eq!(unit("-", true), ("%", 100.0));
    assert_eq!(unit("-", false), ("-", 1.0));
}

#[test]
fn a_scene_named_on_the_command_line_opens_loaded_in_the_cloth_tab() {
    use kestrel::tui::is_cloth_input;
    use std::path::{Path, PathBuf};
    assert!(is_cloth_input(Path::new("scenes/provot_sheet_17.toml")));
    assert!(is_cloth_input(Path::new("door.krd")));
    assert!(!is_cloth_input(Path::new("fabrics/cotton.params.toml")));
    assert!(!is_cloth_input(Path::new("kes_data/cotton-shirting/")));
    assert!(!is_cloth_input(Path::new("tensile_warp.csv")));

    let mut a = app();
    let scene = PathBuf::from("/elsewhere/my_scene.toml");
    a.open_cloth(scene.clone());
    assert_eq!(a.tab, Tab::Cloth);
    assert_eq!(a.cloth.loaded.as_ref(), Some(&scene));
    assert!(
        a.jobs
            .iter()
            .any(|j| matches!(j, Job::ClothStart { source: kestrel::tui::message::ClothSource::File(p), .. } if *p == scene)),
        "{:?}",
        a.jobs
    );
    // the scan of ./scenes arrives later: the scene stays listed and selected
    let found = vec![
        PathBuf::from("scenes/a.toml"),
        PathBuf::from("scenes/b.toml"),
    ];
    a.update(Action::Event(Event::ClothScanned(found)));
    assert_eq!(a.cloth.scenes.len(), 3);
    assert_eq!(a.cloth.scenes[a.cloth.selected], scene);
}

#[test]
fn fit_all_save_and_send_the_card_to_the_cloth_tab_which_runs_its_tests() {
    use kestrel::tui::message::{CardTest, ClothSource, LabReport};
    use kestrel::tui::tabs::cloth::ClothEntry;
    let mut a = app();
    press(&mut a, KeyCode::Char('4'));
    assert_eq!(a.tab, Tab::Fit);
    // c before any save: says what to do, sends nothing
    press(&mut a, KeyCode::Char('c'));
    assert!(a.status.contains("no card saved"), "{}", a.status);
    assert_eq!(a.tab, Tab::Fit);
    // F: every curve of the fabric with a law, one after the other
    press(&mut a, KeyCode::Char('F'));
    let laws = a
        .curves
        .list
        .iter()
        .filter(|c| c.curve.test.has_connector_law())
        .count();
    assert_eq!(a.fit.queued, laws);
    let mut fitted = Vec::new();
    while a.fit.running.is_some() {
        let (curve_index, fit, _) = run_fit_job(&mut a);
        assert!(
            !fitted.contains(&curve_index),
            "fitted twice: {curve_index}"
        );
        fitted.push(curve_index);
        a.update(fit_done(curve_index, fit));
    }
    assert_eq!(fitted.len(), laws);
    assert!(a.status.contains("fabric fitted"), "{}", a.status);
    assert!(a
        .curves
        .list
        .iter()
        .filter(|c| c.curve.test.has_connector_law())
        .all(|c| c.fit.as_ref().is_some_and(|f| f.is_fitted())));
    // s saves the card; c sends it
    press(&mut a, KeyCode::Char('s'));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sample.params.toml");
    save_card_to(&mut a, &file);
    assert!(a.status.contains("c sends the card"), "{}", a.status);
    press(&mut a, KeyCode::Char('c'));
    assert_eq!(a.tab, Tab::Cloth);
    assert_eq!(a.cloth.card.as_ref(), Some(&file));
    let entries = a.cloth.entries();
    assert_eq!(
        &entries[..4],
        &CardTest::ALL.map(ClothEntry::Card)[..],
        "the card's tests head the list"
    );
    // Enter on the drape test: a lab job, its gauge, then its figures
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Enter);
    let job = a.jobs.pop();
    assert!(
        matches!(&job, Some(Job::ClothStart { source: ClothSource::Card { card, test: CardTest::Drape }, .. }) if *card == file),
        "{job:?}"
    );
    let run = a.cloth.run;
    a.update(Action::Event(Event::LabProgress {
        run,
        fraction: 0.25,
    }));
    assert_eq!(a.cloth.lab.as_ref().and_then(|l| l.progress), Some(0.25));
    let screen = draw(&a, 120, 30);
    assert!(screen.contains("25 %"), "{screen}");
    a.update(Action::Event(Event::LabDone {
        run,
        outcome: Ok(Box::new(LabReport {
            lines: vec!["drape coefficient 41.0 %".into(), "folds 6".into()],
            frame: None,
        })),
    }));
    assert!(
        a.status.contains("drape coefficient 41.0 %"),
        "{}",
        a.status
    );
    let screen = draw(&a, 120, 30);
    assert!(screen.contains("folds 6"), "{screen}");
    // Enter on hang: a simulation of the card, which loads as a scene does
    press(&mut a, KeyCode::Up);
    press(&mut a, KeyCode::Enter);
    assert!(matches!(
        a.jobs.pop(),
        Some(Job::ClothStart {
            source: ClothSource::Card {
                test: CardTest::Hang,
                ..
            },
            ..
        })
    ));
    assert_eq!(a.cloth.loaded.as_ref(), Some(&file));
    // the sample's curves carry no weight: the card has no areal density, and the hanging
    // scene says how to give it; a card with one hangs
    match kestrel::scene::hanging_scene(&file) {
        Err(e) => assert!(e.to_string().contains("areal_density"), "{e}"),
        Ok(_) => panic!("a card without areal density hangs"),
    }
    let shipped = std::path::Path::new("scenes/fabrics/cotton-shirting.fitted.params.toml");
    match kestrel::scene::hanging_scene(shipped) {
        Ok(kestrel::scene::Scene::Dynamic(s)) => assert_eq!(s.world.grid.nu, 26),
        Ok(_) => panic!("not a dynamic scene"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn a_card_opened_by_path_offers_its_tests_in_the_cloth_tab() {
    use kestrel::tui::message::CardTest;
    use kestrel::tui::tabs::cloth::ClothEntry;
    let mut a = app();
    press(&mut a, KeyCode::Char('o'));
    let card = "scenes/fabrics/cotton-shirting.fitted.params.toml";
    for ch in card.chars() {
        a.update(Action::PromptInput(ch));
    }
    a.update(Action::PromptSubmit);
    assert_eq!(a.tab, Tab::Cloth);
    read_card(&mut a);
    assert_eq!(a.cloth.card.as_deref(), Some(std::path::Path::new(card)));
    assert_eq!(a.cloth.entries()[1], ClothEntry::Card(CardTest::Drape));
    assert!(a.jobs.is_empty(), "nothing runs until Enter: {:?}", a.jobs);
}

#[test]
fn a_card_that_does_not_read_is_refused_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("broken.params.toml");
    std::fs::write(&bad, "this is = = not a card").unwrap();
    for card in [dir.path().join("nonexist.params.toml"), bad] {
        let mut a = app();
        press(&mut a, KeyCode::Char('o'));
        for ch in card.display().to_string().chars() {
            a.update(Action::PromptInput(ch));
        }
        a.update(Action::PromptSubmit);
        read_card(&mut a);
        assert!(
            a.status.starts_with("error: card not opened"),
            "{}",
            a.status
        );
        assert!(
            a.status
                .contains(&card.file_name().unwrap().to_string_lossy().to_string()),
            "the file is named: {}",
            a.status
        );
        assert!(
            a.cloth.card.is_none(),
            "no tests offered for {}",
            card.display()
        );
        assert!(!draw(&a, 120, 40).contains("drape test"));
    }
}

/// A curve changed on disk after it was opened: the saved card keeps the hash of the bytes
/// opened and fitted, and the status line carries the library's warning.
#[test]
fn a_card_saved_after_its_curve_changed_on_disk_keeps_the_bytes_read_and_warns() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().unwrap();
    let curve = dir.path().join("bending_warp.csv");
    let original = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/kes_data/cotton-shirting/bending_warp.csv"
    ))
    .unwrap();
    std::fs::write(&curve, &original).unwrap();
    let (curves, errors) = kestrel::tui::files::open(curve.to_str().unwrap());
    assert!(errors.is_empty(), "{errors:?}");
    let mut a = App::new(curves, "opened".into(), false);
    a.update(Action::GoTab(Tab::Fit));
    press(&mut a, KeyCode::Enter);
    finish_fit_job(&mut a);
    // the file changes on disk (one more line) after it was read and fitted
    let mut changed = original.clone();
    changed.extend_from_slice(b"# edited: later\n");
    std::fs::write(&curve, &changed).unwrap();
    press(&mut a, KeyCode::Char('s'));
    let card = dir.path().join("card.params.toml");
    save_card_to(&mut a, &card);
    assert!(
        a.status.contains("written")
            && a.status.starts_with("warning: sources differ on disk")
            && a.status.contains("bending_warp.csv (changed)"),
        "{}",
        a.status
    );
    let params = kestrel::params::FabricParams::read(&card).unwrap();
    let hex: String = Sha256::digest(&original)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(params.provenance.sources.len(), 1);
    assert_eq!(params.provenance.sources[0].sha256, hex);
    // saved again once the file is back as it was read: no warning
    std::fs::write(&curve, &original).unwrap();
    press(&mut a, KeyCode::Char('s'));
    let again = dir.path().join("again.params.toml");
    save_card_to(&mut a, &again);
    assert!(
        a.status.contains("written") && !a.status.contains("warning"),
        "{}",
        a.status
    );
    // the first card, opened while its curve differs on disk again: offered, with the
    // warning in the status and in full in the message log
    std::fs::write(&curve, &changed).unwrap();
    a.open_card(card.clone());
    read_card(&mut a);
    assert_eq!(a.cloth.card.as_deref(), Some(card.as_path()));
    assert!(a.status.contains("sources changed on disk"), "{}", a.status);
    assert_a_line_has(
        &a.log,
        &[
            "warning: sources differ on disk",
            "bending_warp.csv (changed)",
        ],
    );
}

/// A `.krd` named on the command line was listed twice in the Cloth tab: once as named, once
/// as the scan found it (`trunc.krd` and `./trunc.krd`). Entries are the same file by their
/// canonical path.
#[test]
fn a_model_named_on_the_command_line_is_listed_once() {
    use std::path::PathBuf;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("m.krd"), b"KESTRELD").unwrap();
    let mut a = app();
    // the same file by another spelling than the scan's
    let named: PathBuf = dir.path().join("sub").join("..").join("m.krd");
    a.open_cloth(named);
    a.update(Action::Event(Event::ClothScanned(cloth_entries(
        dir.path(),
    ))));
    let listed: Vec<_> = a
        .cloth
        .scenes
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "m.krd"))
        .collect();
    assert_eq!(listed.len(), 1, "{:?}", a.cloth.scenes);
    assert_eq!(a.cloth.scenes[a.cloth.selected], dir.path().join("m.krd"));
}

/// The workbench exited 0 after SIGTERM; it now ends by the signal once the terminal is
/// restored (the shell's 143). Needs util-linux `script` for a terminal; skipped without it.
#[test]
fn the_workbench_ends_by_sigterm_with_143() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` for a pseudo-terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let inner = format!(
        "echo $$ > '{}'; exec '{}' '{}'",
        pid_file.display(),
        env!("CARGO_BIN_EXE_kestrel"),
        dir.path().join("none.krd").display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &format!("sh -c \"{inner}\""), "/dev/null"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the workbench did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // the workbench draws, then the signal
    std::thread::sleep(Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the workbench did not end after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(child.stdin.take());
    assert_eq!(status.code(), Some(143), "{status:?}");
}

/// The Cloth tab loads scenes as the commands do: a sheet that starts inside an obstacle is
/// refused on its status line, naming the scene and the obstacle (it used to run, thrown out of
/// the ball with energy from nothing).
#[test]
fn the_cloth_tab_refuses_a_sheet_that_starts_inside_an_obstacle() {
    use kestrel::tui::worker::cloth::{start, SceneSource};
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(crate::common::repo("scenes/drape_sphere.toml"))
        .unwrap()
        .replace("origin = [-0.5, 0.35, -0.5]", "origin = [-0.5, 0.0, -0.5]");
    let scene = dir.path().join("inside.toml");
    std::fs::write(&scene, text).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (_control, thread) = start(SceneSource::File(scene), tx);
    thread.join().unwrap();
    let failed = rx
        .try_iter()
        .find_map(|e| match e {
            Event::Failed(m) => Some(m),
            _ => None,
        })
        .expect("the scene is refused");
    let mut a = app();
    a.update(Action::Event(Event::Failed(failed)));
    for word in ["inside.toml", "obstacle 1 (sphere)", "mm deep"] {
        assert!(a.status.contains(word), "`{word}` not in {}", a.status);
    }
}
