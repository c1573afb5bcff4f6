//! Distance between the last frames of two records of the same grid: the largest and the RMS
//! particle distance [m], and the largest as a fraction of the sheet's size
//! (its longer side).
//! `cargo run --release --example record_distance -- REFERENCE.krec OTHER.krec`
//! (the Δt study of docs/cloth.md: positions at the same simulated time).

use std::path::Path;
use std::process::ExitCode;

use kestrel::cloth::record::Recording;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b] = args.as_slice() else {
        eprintln!("usage: record_distance REFERENCE.krec OTHER.krec");
        return ExitCode::from(2);
    };
    let read = |p: &str| Recording::read(Path::new(p)).map_err(|e| format!("{p}: {e}"));
    let (ra, rb) = match (read(a), read(b)) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let (Some(fa), Some(fb)) = (ra.frames.last(), rb.frames.last()) else {
        eprintln!("error: a record has no frame");
        return ExitCode::from(2);
    };
    if fa.positions.len() != fb.positions.len() {
        eprintln!(
            "error: the grids differ ({} and {} particles)",
            fa.positions.len(),
            fb.positions.len()
        );
        return ExitCode::from(2);
    }
    let (mut max, mut sq) = (0.0f64, 0.0f64);
    for (p, q) in fa.positions.iter().zip(&fb.positions) {
        let d2: f64 = (0..3)
            .map(|k| (f64::from(p[k]) - f64::from(q[k])).powi(2))
            .sum();
        max = max.max(d2.sqrt());
        sq += d2;
    }
    let rms = (sq / fa.positions.len() as f64).sqrt();
    let g = ra.info.grid();
    let size = ((g.nu - 1) as f64 * g.h_warp).max((g.nv - 1) as f64 * g.h_weft);
    println!(
        "{{\"time_reference_s\":{},\"time_other_s\":{},\"max_m\":{max:.6e},\"rms_m\":{rms:.6e},\"max_of_size\":{:.6e}}}",
        fa.time,
        fb.time,
        max / size
    );
    ExitCode::SUCCESS
}
