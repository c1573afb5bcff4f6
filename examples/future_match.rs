//! Is there a recorded frame whose future follows the truth? For each frame t of a
//! `kestrel play --compare … --frame-errors` record, the recorded frames j of the entry in
//! force are scored by their future over the next W frames,
//! e(j) = √Σ_k ‖q_{j+k} − c_{t+k}‖² / √Σ_k ‖x_full − mean‖²_{t+k} (k = 0 … W − 1, j + k inside
//! j's IRF; c the full simulation's reduced coordinates [m]), and the best e is set against
//! the e of eq. 9's nearest frame, the frames within a bound and the played window's error.
//! `cargo run --release --example future_match -- MODEL.krd FRAMES.csv [W] [BOUND] [FROM TO]`
//! (W default 20 frames, BOUND default 0.02; FROM, TO: the frames examined, default all).
//! One CSV row per frame t on stdout (docs/reduced.md, seventh round).

use std::path::Path;
use std::process::ExitCode;

use kestrel::ReducedModel;

struct Frames {
    frame: Vec<usize>,
    segment: Vec<usize>,
    entry: Vec<String>,
    norm: Vec<f64>,
    error: Vec<f64>,
    c: Vec<Vec<f32>>,
    cdot: Vec<Vec<f32>>,
    q: Vec<Vec<f32>>,
}

fn read_frames(path: &str, rank: usize) -> Result<Frames, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or_else(|| format!("{path}: empty"))?
        .split(',')
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("{path}: no column `{name}`"))
    };
    let (fc, sc, ec, nc, erc) = (
        col("frame")?,
        col("segment")?,
        col("entry")?,
        col("norm_m2")?,
        col("error_m2")?,
    );
    let (c1, cd1, q1) = (col("c1")?, col("cdot1")?, col("q1")?);
    let mut f = Frames {
        frame: Vec::new(),
        segment: Vec::new(),
        entry: Vec::new(),
        norm: Vec::new(),
        error: Vec::new(),
        c: Vec::new(),
        cdot: Vec::new(),
        q: Vec::new(),
    };
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        let bad = |what: &str| format!("{path}: line {}: {what}", i + 2);
        let num = |k: usize| -> Result<f64, String> {
            cells
                .get(k)
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| bad(&format!("column {k} is not a number")))
        };
        let vec = |k0: usize| -> Result<Vec<f32>, String> {
            (k0..k0 + rank).map(|k| num(k).map(|v| v as f32)).collect()
        };
        f.frame.push(num(fc)? as usize);
        f.segment.push(num(sc)? as usize);
        f.entry
            .push(cells.get(ec).ok_or_else(|| bad("no entry"))?.to_string());
        f.norm.push(num(nc)?);
        f.error.push(num(erc)?);
        f.c.push(vec(c1)?);
        f.cdot.push(vec(cd1)?);
        f.q.push(vec(q1)?);
    }
    Ok(f)
}

fn d2(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(x - y) * f64::from(x - y))
        .sum()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: future_match MODEL.krd FRAMES.csv [W] [BOUND] [FROM TO]");
        return ExitCode::from(2);
    }
    let model = match ReducedModel::read(Path::new(&args[0])) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let r = model.rank;
    let f = match read_frames(&args[1], r) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let arg = |i: usize, default: f64| {
        args.get(i)
            .map(|s| s.parse::<f64>().unwrap_or(f64::NAN))
            .unwrap_or(default)
    };
    let w = arg(2, 20.0);
    let bound = arg(3, 0.02);
    let (from, to) = (arg(4, 0.0), arg(5, f64::INFINITY));
    if !(w >= 1.0 && bound > 0.0 && from.is_finite() && to >= from) {
        eprintln!("error: W must be >= 1 frame, BOUND > 0, FROM <= TO");
        return ExitCode::from(2);
    }
    let w = w as usize;
    let beta = model.info.beta;
    // what the door did before a recorded frame: frames since its IRF's start, and the entry
    // and frames of the IRF that ended where it started (none: a chain's or branch's first)
    let history = |j: usize| -> String {
        let Some(o) = model
            .orbits
            .iter()
            .find(|o| (o.start as usize) <= j && j < o.end as usize)
        else {
            return "-".into();
        };
        let before = model.orbits.iter().find(|p| p.end == o.start);
        let name = |e: u32| model.info.palette[e as usize].name.clone();
        match before {
            Some(p) => format!(
                "{}+{} after {}:{}",
                name(o.entry),
                j - o.start as usize,
                name(p.entry),
                p.end - p.start
            ),
            None => format!("{}+{} first", name(o.entry), j - o.start as usize),
        }
    };
    let segment_start = |t: usize| {
        (0..=t)
            .rev()
            .take_while(|&i| f.segment[i] == f.segment[t])
            .last()
            .unwrap_or(t)
    };
    println!("frame,segment,entry,best_future,best_frame,best_eq9_rank,nearest_future,nearest_frame,within_bound,candidates,played_future,truth_history,best_history,nearest_history");
    for t in 0..f.frame.len() {
        let ft = f.frame[t] as f64;
        if ft < from || ft > to || t + w > f.frame.len() || f.segment[t + w - 1] != f.segment[t] {
            continue;
        }
        let Some(e) = model.info.palette.iter().position(|p| p.name == f.entry[t]) else {
            continue;
        };
        let norm: f64 = f.norm[t..t + w].iter().sum();
        let played: f64 = f.error[t..t + w].iter().sum();
        let mut scored: Vec<(f64, f64, usize)> = Vec::new(); // (future², eq. 9 d², j)
        for o in model.orbits.iter().filter(|o| o.entry as usize == e) {
            let (s, end) = (o.start as usize, o.end as usize);
            for j in s..=end.saturating_sub(w - 1) {
                if j + w - 1 > end {
                    continue;
                }
                let fut: f64 = (0..w).map(|k| d2(model.q_of(j + k), &f.c[t + k])).sum();
                let eq9 = d2(model.q_of(j), &f.c[t]) + beta * d2(model.qdot_of(j), &f.cdot[t]);
                scored.push((fut, eq9, j));
            }
        }
        if scored.is_empty() {
            continue;
        }
        let best = scored
            .iter()
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .copied()
            .unwrap_or_default();
        let nearest = scored
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .copied()
            .unwrap_or_default();
        let rank = scored.iter().filter(|s| s.1 < best.1).count() + 1;
        let within = scored
            .iter()
            .filter(|s| s.0 <= bound * bound * norm)
            .count();
        let rel = |x: f64| (x / norm).sqrt();
        let s0 = segment_start(t);
        let truth = if s0 > 0 {
            let p0 = segment_start(s0 - 1);
            format!(
                "{}+{} after {}:{}",
                f.entry[t],
                t - s0,
                f.entry[s0 - 1],
                s0 - p0
            )
        } else {
            format!("{}+{} first", f.entry[t], t)
        };
        println!(
            "{},{},{},{:.5},{},{},{:.5},{},{},{},{:.5},{},{},{}",
            f.frame[t],
            f.segment[t],
            f.entry[t],
            rel(best.0),
            best.2,
            rank,
            rel(nearest.0),
            nearest.2,
            within,
            scored.len(),
            rel(played),
            truth,
            history(best.2),
            history(nearest.2),
        );
    }
    ExitCode::SUCCESS
}
