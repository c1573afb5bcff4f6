//! The Cloth tab's lab-test thread: runs a card's drape test or cantilever test (cloth::lab)
//! with progress events, stops when told, and sends the figures and the final mesh.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::cloth::lab::{
    run_cantilever, run_drape, CantileverOptions, CantileverResult, DrapeOptions, DrapeResult,
};
use crate::params::FabricParams;
use crate::tui::message::{CardTest, ClothControl, ClothFrame, Event, LabReport};

/// Least time between two progress events.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Starts `test` of the card at `card` on its own thread, its events marked `run`; a `Stop`
/// on the returned channel (or dropping it) cancels the test.
pub fn start(
    card: PathBuf,
    test: CardTest,
    run: u64,
    events: Sender<Event>,
) -> (Sender<ClothControl>, JoinHandle<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = thread::spawn(move || {
        let outcome = run_test(&card, test, run, &rx, &events);
        let _ = events.send(Event::LabDone {
            run,
            outcome: outcome.map(Box::new),
        });
    });
    (tx, thread)
}

fn run_test(
    card_path: &Path,
    test: CardTest,
    run: u64,
    control: &Receiver<ClothControl>,
    events: &Sender<Event>,
) -> Result<LabReport, String> {
    let card = FabricParams::read(card_path).map_err(|e| e.to_string())?;
    let cancel = AtomicBool::new(false);
    let mut last = Instant::now();
    let mut progress = |fraction: f64| {
        if matches!(
            control.try_recv(),
            Ok(ClothControl::Stop) | Err(TryRecvError::Disconnected)
        ) {
            cancel.store(true, Ordering::Relaxed);
        }
        if last.elapsed() >= PROGRESS_EVERY {
            let _ = events.send(Event::LabProgress { run, fraction });
            last = Instant::now();
        }
    };
    match test {
        CardTest::Drape => run_drape(
            &card,
            &DrapeOptions::default(),
            &mut progress,
            Some(&cancel),
        )
        .map(|r| drape_report(&r))
        .map_err(|e| e.to_string()),
        CardTest::Cantilever(direction) => run_cantilever(
            &card,
            &CantileverOptions::new(direction),
            &mut progress,
            Some(&cancel),
        )
        .map(|r| cantilever_report(&r))
        .map_err(|e| e.to_string()),
        CardTest::Hang => Err("hanging is a simulation, not a lab test".into()),
    }
}

fn drape_report(r: &DrapeResult) -> LabReport {
    let mut lines = vec![
        format!("drape coefficient {:.2} %", r.drape_coefficient),
        format!("folds {}", r.folds),
        format!(
            "{:.0} cm specimen on a {:.0} cm disc",
            r.specimen_diameter_cm, r.disc_diameter_cm
        ),
        mesh_line(r.cell_mm, r.particles),
        match r.load_steps {
            Some(n) => format!(
                "lowered in {n} load steps ({} static steps) in {:.1} s",
                r.lowering_static_steps, r.wall_s
            ),
            None => format!("{:.2} s simulated in {:.1} s", r.sim_time_s, r.wall_s),
        },
        format!("friction {}", if r.friction { "on" } else { "off" }),
    ];
    lines.extend(r.warning.iter().map(|w| format!("warning: {w}")));
    let mesh = &r.mesh;
    let positions = mesh
        .x
        .iter()
        .zip(&mesh.kept)
        .map(
            |(p, &kept)| {
                if kept {
                    [p.x, p.y, p.z]
                } else {
                    [f64::NAN; 3]
                }
            },
        )
        .collect();
    let frame = ClothFrame {
        scene: format!("{}: drape test", r.fabric),
        positions,
        nu: mesh.grid.nu,
        nv: mesh.grid.nv,
        up: [0.0, 1.0, 0.0],
        steps: r.steps,
        time_s: r.sim_time_s,
        ms_per_step: 0.0,
        rate_structural: 0.0,
        rate_shear: 0.0,
        kinetic_j: 0.0,
        elastic_j: 0.0,
        running: false,
        reduced: None,
    };
    LabReport {
        lines,
        frame: Some(frame),
    }
}

/// The mesh of a drape test as `kestrel test drape` gives it: the cell to 0.01 mm.
fn mesh_line(cell_mm: f64, particles: usize) -> String {
    format!("{cell_mm:.2} mm mesh, {particles} particles")
}

fn cantilever_report(r: &CantileverResult) -> LabReport {
    LabReport {
        lines: vec![
            format!("bending length {:.2} cm", r.bending_length_cm),
            format!(
                "Peirce (B/W)^1/3 {:.2} cm ({:+.1} %)",
                r.peirce_cm,
                100.0 * r.relative_gap
            ),
            format!("B {:.4} gf·cm²/cm", r.rigidity_gf_cm2_per_cm),
            format!("W {:.5} gf/cm²", r.weight_gf_per_cm2),
            format!(
                "overhang {:.2} cm at {:.1} deg",
                r.overhang_cm, r.tip_angle_deg
            ),
            format!(
                "{} cells, friction {}, {:.1} s",
                r.cells,
                if r.friction { "on" } else { "off" },
                r.wall_s
            ),
        ],
        frame: None,
    }
}

#[cfg(test)]
mod tests {
    /// A 7.5 mm cell reads 7.50 mm, as the command line prints it, not a rounded 8 mm.
    #[test]
    fn the_mesh_cell_is_given_to_a_hundredth_of_a_millimetre() {
        assert_eq!(super::mesh_line(7.5, 2821), "7.50 mm mesh, 2821 particles");
    }
}
