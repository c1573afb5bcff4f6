//! Fuzzing on stable Rust: mutates seed inputs made from the repository's files and runs each
//! reader on them under `catch_unwind`; flags a panic, an input that takes over 1 s and any
//! single allocation over 256 MB (a counting global allocator), saving the input to
//! `target/fuzz-findings/`. Targets: kes (KES CSV), loop (delimited loop record), params-toml,
//! params-json, values, scene, record, model (.krd). docs/reliability.md has the long run.
//!
//!     cargo run --release --example fuzz -- [TARGET|all] [--runs N] [--seconds S] [--seed K]
//!
//! Exits 1 when anything was flagged.

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use kestrel::cloth::record::{RecordInfo, Recording};
use kestrel::cloth::ClothPipeline;
use kestrel::fit::values::FabricValues;
use kestrel::kes::import::{
    parse_kes, parse_loop, ColumnRef, CurveOverrides, LoopColumn, LoopSpec,
};
use kestrel::params::{FabricParams, ParamsFormat};
use kestrel::reduced::{precompute, PrecomputeOptions, ReducedModel};
use kestrel::scene::{Scene, SceneFile};

/// Largest single allocation not flagged [bytes].
const ALLOCATION_LIMIT: usize = 256 << 20;
/// Allocations above this are refused (the process aborts after saving the input) [bytes].
const ALLOCATION_REFUSED: usize = 4 << 30;
/// An input taking longer is flagged; one taking longer than `HANG_ABORT` ends the run.
const SLOW: Duration = Duration::from_secs(1);
const HANG_ABORT: Duration = Duration::from_secs(20);

/// Counts the largest allocation asked for since the last reset.
struct Counting;

static LARGEST: AtomicUsize = AtomicUsize::new(0);
static IN_DUMP: AtomicBool = AtomicBool::new(false);
/// The input being run and its target, saved when the process must stop.
static CURRENT: Mutex<(String, Vec<u8>)> = Mutex::new((String::new(), Vec::new()));
/// Start of the current execution [ms since START], 0 when idle.
static RUNNING_SINCE: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if refused(new_size) {
            return std::ptr::null_mut();
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Notes an allocation of `size` bytes; true when it is refused (its input saved first).
fn refused(size: usize) -> bool {
    LARGEST.fetch_max(size, Ordering::Relaxed);
    if size > ALLOCATION_REFUSED {
        dump_current("alloc-abort");
        return true;
    }
    false
}

fn findings() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-findings")
}

/// Saves the current input as `findings/KIND-TARGET.bin` (once at a time; the allocations it
/// makes are small).
fn dump_current(kind: &str) {
    if IN_DUMP.swap(true, Ordering::SeqCst) {
        return;
    }
    if let Ok(current) = CURRENT.try_lock() {
        let _ = std::fs::create_dir_all(findings());
        let path = findings().join(format!("{kind}-{}.bin", current.0));
        let _ = std::fs::write(&path, &current.1);
        eprintln!("fuzz: {kind}: input saved to {}", path.display());
    }
    IN_DUMP.store(false, Ordering::SeqCst);
}

/// What one reader does with one input; Err is a refusal (fine), a panic is a finding.
type Reader = fn(&[u8]) -> Result<(), String>;

struct Target {
    name: &'static str,
    seeds: Vec<Vec<u8>>,
    read: Reader,
    binary: bool,
}

fn text(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|e| e.to_string())
}

fn read_kes(bytes: &[u8]) -> Result<(), String> {
    parse_kes(text(bytes)?, "fuzz.csv", CurveOverrides::default())
        .map(drop)
        .map_err(|e| e.to_string())
}

fn read_loop(bytes: &[u8]) -> Result<(), String> {
    let column = |name: &str, negate| LoopColumn {
        column: ColumnRef::Name(name.into()),
        unit: None,
        negate,
    };
    let spec = LoopSpec {
        x: column("Position [mm]", false),
        y: column("Friction [uN]", true),
        filter: None,
        direction: None,
    };
    parse_loop(text(bytes)?, "fuzz.txt", &spec)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn read_params(bytes: &[u8], format: ParamsFormat) -> Result<(), String> {
    FabricParams::parse(text(bytes)?, format, Path::new("fuzz.params"))
        .map(drop)
        .map_err(|e| e.to_string())
}

fn read_values(bytes: &[u8]) -> Result<(), String> {
    toml::from_str::<FabricValues>(text(bytes)?)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A scene is parsed and built (world, parameters, palette) as `kestrel run` does before its
/// first step; relative parameter files are found in scenes/.
fn read_scene(bytes: &[u8]) -> Result<(), String> {
    let file: SceneFile = toml::from_str(text(bytes)?).map_err(|e| e.to_string())?;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenes/fuzz.toml");
    Scene::build(&file, &path)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn read_record(bytes: &[u8]) -> Result<(), String> {
    Recording::from_bytes(bytes)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A model is parsed and played for a few frames (the playback relies on what the reader
/// checked).
fn read_model(bytes: &[u8]) -> Result<(), String> {
    let model =
        ReducedModel::from_bytes(bytes, Path::new("fuzz.krd")).map_err(|e| e.to_string())?;
    let mut player = kestrel::reduced::Player::new(&model);
    let mut shape = vec![0f32; 3 * model.vertices];
    let mut world = vec![[0f32; 3]; model.vertices];
    for k in 0..model.info.palette.len().min(4) {
        player.impulse(k);
        for _ in 0..3 {
            player.advance();
            player.shape(&mut shape);
            player.to_world(&shape, &mut world);
        }
    }
    Ok(())
}

fn repo(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![repo(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The first `lines` lines of a file: metadata, header and the first rows keep each
/// execution short.
fn head(path: &Path, lines: usize) -> Vec<u8> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out: String = text.lines().take(lines).collect::<Vec<_>>().join("\n");
    out.push('\n');
    out.into_bytes()
}

/// Scene seeds with their grids shrunk to 5 × 5 (the mutations still reach any size).
fn scene_seeds() -> Vec<Vec<u8>> {
    files("scenes", ".toml")
        .iter()
        .filter(|p| !p.to_string_lossy().contains("/fabrics/"))
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            text.lines()
                .map(|l| {
                    let t = l.trim_start();
                    if t.starts_with("nu =") {
                        "nu = 5".to_string()
                    } else if t.starts_with("nv =") {
                        "nv = 5".to_string()
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes()
        })
        .collect()
}

fn params_seeds(format: ParamsFormat) -> Vec<Vec<u8>> {
    files("scenes/fabrics", ".toml")
        .iter()
        .filter_map(|p| FabricParams::read(p).ok())
        .filter_map(|params| match format {
            ParamsFormat::Toml => toml::to_string(&params).ok(),
            ParamsFormat::Json => serde_json::to_string_pretty(&params).ok(),
        })
        .map(String::into_bytes)
        .collect()
}

fn values_seeds() -> Vec<Vec<u8>> {
    let values = "fabric = \"Cotton shirting\"\n[warp]\nEMT = 4.5\nLT = 0.7\nRT = 55.0\nG = 1.3\n2HG = 2.4\n2HG5 = 4.1\nB = 0.12\n2HB = 0.09\n[weft]\nEMT = 6.0\nLT = 0.65\nRT = 50.0\nG = 1.2\n2HG = 2.0\n2HG5 = 3.8\nB = 0.08\n2HB = 0.07\n";
    vec![values.as_bytes().to_vec()]
}

fn small_door_scene() -> Option<kestrel::scene::DynamicScene> {
    let path = repo("scenes/reduced_door_cloth.toml");
    let mut file = SceneFile::read(&path).ok()?;
    let g = file.grid.as_mut()?;
    (g.nu, g.nv) = (5, 5);
    let r = file.reduced.as_mut()?;
    (r.duration, r.settle) = (3.0, 0.2);
    match Scene::build(&file, &path).ok()? {
        Scene::Dynamic(s) => Some(*s),
        Scene::VirtualKes(_) => None,
    }
}

fn model_seeds() -> Vec<Vec<u8>> {
    let Some(scene) = small_door_scene() else {
        return Vec::new();
    };
    let Some(bytes) = precompute(&scene, &PrecomputeOptions::default(), &|_| {})
        .ok()
        .and_then(|(m, _)| m.to_bytes().ok())
    else {
        return Vec::new();
    };
    // the checksum refuses a mutated version-3 file after parsing it; a version-1 copy
    // (no checksum) lets the mutations reach the playback too
    let mut v1 = bytes[..bytes.len() - 32].to_vec();
    v1[8..12].copy_from_slice(&kestrel::reduced::MODEL_VERSION.to_le_bytes());
    vec![bytes, v1]
}

fn record_seeds() -> Vec<Vec<u8>> {
    let Some(scene) = small_door_scene() else {
        return Vec::new();
    };
    let mut world = scene.world;
    let mut rec = Recording::new(RecordInfo {
        name: scene.name,
        nu: world.grid.nu as u32,
        nv: world.grid.nv as u32,
        h_warp: world.grid.h_warp,
        h_weft: world.grid.h_weft,
        dt: scene.params.dt,
        every: 5,
        camera: scene.camera,
        obstacles: world.obstacles.clone(),
    });
    let mut pipeline = ClothPipeline::new();
    for n in 0..15 {
        if pipeline.step(&scene.params, &mut world).is_err() {
            break;
        }
        if n % 5 == 0 {
            rec.push(&world);
        }
    }
    rec.to_bytes().ok().into_iter().collect()
}

fn targets() -> Vec<Target> {
    let kes: Vec<Vec<u8>> = files("kes_data", ".csv")
        .iter()
        .map(|p| head(p, 40))
        .collect();
    let loops = vec![head(
        &repo("tests/data/friction-loops/FrictionModels_test_data_2.txt"),
        40,
    )];
    vec![
        Target {
            name: "kes",
            seeds: kes,
            read: read_kes,
            binary: false,
        },
        Target {
            name: "loop",
            seeds: loops,
            read: read_loop,
            binary: false,
        },
        Target {
            name: "params-toml",
            seeds: params_seeds(ParamsFormat::Toml),
            read: |b| read_params(b, ParamsFormat::Toml),
            binary: false,
        },
        Target {
            name: "params-json",
            seeds: params_seeds(ParamsFormat::Json),
            read: |b| read_params(b, ParamsFormat::Json),
            binary: false,
        },
        Target {
            name: "values",
            seeds: values_seeds(),
            read: read_values,
            binary: false,
        },
        Target {
            name: "scene",
            seeds: scene_seeds(),
            read: read_scene,
            binary: false,
        },
        Target {
            name: "record",
            seeds: record_seeds(),
            read: read_record,
            binary: true,
        },
        Target {
            name: "model",
            seeds: model_seeds(),
            read: read_model,
            binary: true,
        },
    ]
}

/// Tokens that break readers: numbers at the edges of their types, separators, units.
const TOKENS: &[&str] = &[
    "0",
    "-1",
    "1e300",
    "-1e300",
    "1e-300",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "4294967295",
    "4294967296",
    "65536",
    "2147483648",
    "18446744073709551615",
    "9e18",
    "1e19",
    "0.0",
    "-0",
    "\"\"",
    ",",
    ";",
    "\t",
    "\n",
    "#",
    "# ",
    "[",
    "]",
    "{",
    "}",
    "=",
    ":",
    "\"",
    "%",
    "[mm]",
    "[gf/cm]",
    "[-]",
    "[%]",
    "\r\n",
    "\u{feff}",
    "é",
    "[[",
    "]]",
];

/// One mutation of `input` (byte edits, token insertions, splices with another seed); for a
/// binary input also a whole little-endian u32 overwritten with an edge value.
fn mutate(rng: &mut Xoshiro256PlusPlus, input: &mut Vec<u8>, seeds: &[Vec<u8>], binary: bool) {
    let len = input.len();
    let at = |rng: &mut Xoshiro256PlusPlus, n: usize| rng.random_range(0..n.max(1));
    match rng.random_range(0..if binary { 9 } else { 8 }) {
        0 if len > 0 => {
            let i = at(rng, len);
            input[i] ^= 1 << rng.random_range(0..8);
        }
        1 => {
            let i = at(rng, len + 1).min(len);
            input.insert(i, rng.random());
        }
        2 if len > 1 => {
            let i = at(rng, len);
            let n = rng.random_range(1..=(len - i).min(64));
            input.drain(i..i + n);
        }
        3 if len > 1 => {
            // duplicate a stretch (long rows, repeated sections)
            let i = at(rng, len);
            let n = rng.random_range(1..=(len - i).min(256));
            let copy: Vec<u8> = input[i..i + n].to_vec();
            let j = at(rng, len + 1).min(len);
            input.splice(j..j, copy);
        }
        4 | 5 => {
            let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
            let i = at(rng, len + 1).min(len);
            // replace a run of digits at i when there is one, else insert
            let end = (i..len)
                .find(|&k| !input[k].is_ascii_digit() && input[k] != b'.')
                .unwrap_or(len);
            input.splice(i..end.max(i), t.iter().copied());
        }
        6 if !seeds.is_empty() => {
            let other = &seeds[rng.random_range(0..seeds.len())];
            if !other.is_empty() {
                let a = at(rng, other.len());
                let b = rng.random_range(a..=other.len());
                let i = at(rng, len + 1).min(len);
                input.splice(i..i, other[a..b].iter().copied());
            }
        }
        7 if len > 0 => {
            let i = at(rng, len);
            input.truncate(i);
        }
        8 if len >= 4 => {
            let edges = [
                0u32,
                1,
                2,
                3,
                0xFF,
                0xFFFF,
                0x10000,
                0x7FFF_FFFF,
                0x8000_0000,
                u32::MAX,
            ];
            let v = edges[rng.random_range(0..edges.len())];
            // header fields first: they are where the sizes are
            let fields = if rng.random() { 10 } else { 1 << 20 };
            let i = 4 * rng.random_range(0..(len / 4).min(fields));
            if i + 4 <= len {
                input[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        _ => {
            let i = at(rng, len + 1).min(len);
            input.insert(i, b"0123456789-.e"[rng.random_range(0..13)]);
        }
    }
    if input.len() > 1 << 20 {
        input.truncate(1 << 20);
    }
}

#[derive(Default)]
struct Tally {
    runs: u64,
    refused: u64,
    panics: u64,
    slow: u64,
    big: u64,
    slowest: Duration,
    largest: usize,
}

fn save(kind: &str, target: &str, n: u64, input: &[u8], note: &str) {
    let _ = std::fs::create_dir_all(findings());
    let path = findings().join(format!("{kind}-{target}-{n}.bin"));
    let _ = std::fs::write(&path, input);
    eprintln!("fuzz: {target}: {kind} ({note}): {}", path.display());
}

fn run_target(t: &Target, runs: u64, seconds: f64, seed: u64, start: Instant) -> Tally {
    let mut tally = Tally::default();
    if t.seeds.is_empty() {
        eprintln!("fuzz: {}: no seeds", t.name);
        tally.panics = 1;
        return tally;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let t0 = Instant::now();
    let mut input = Vec::new();
    while tally.runs < runs && t0.elapsed().as_secs_f64() < seconds {
        // a fresh seed now and then, else keep mutating the last input (stacked mutations)
        if tally.runs % 4 == 0 || input.is_empty() {
            input = t.seeds[rng.random_range(0..t.seeds.len())].clone();
        }
        for _ in 0..rng.random_range(1..=2) {
            mutate(&mut rng, &mut input, &t.seeds, t.binary);
        }
        if let Ok(mut c) = CURRENT.lock() {
            c.0.clear();
            c.0.push_str(t.name);
            c.1.clear();
            c.1.extend_from_slice(&input);
        }
        LARGEST.store(0, Ordering::Relaxed);
        RUNNING_SINCE.store(start.elapsed().as_millis() as u64 + 1, Ordering::SeqCst);
        let t1 = Instant::now();
        let result = panic::catch_unwind(AssertUnwindSafe(|| (t.read)(&input)));
        let took = t1.elapsed();
        RUNNING_SINCE.store(0, Ordering::SeqCst);
        let largest = LARGEST.load(Ordering::Relaxed);
        tally.runs += 1;
        tally.slowest = tally.slowest.max(took);
        tally.largest = tally.largest.max(largest);
        match result {
            Ok(Ok(())) => {}
            Ok(Err(_)) => tally.refused += 1,
            Err(p) => {
                tally.panics += 1;
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                save("panic", t.name, tally.runs, &input, &msg);
            }
        }
        if took > SLOW {
            tally.slow += 1;
            save("slow", t.name, tally.runs, &input, &format!("{took:?}"));
        }
        if largest > ALLOCATION_LIMIT {
            tally.big += 1;
            save(
                "alloc",
                t.name,
                tally.runs,
                &input,
                &format!("{largest} bytes"),
            );
        }
    }
    tally
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut which, mut runs, mut seconds, mut seed) = ("all".to_string(), u64::MAX, 2.0, 1u64);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--runs" => runs = value().parse().unwrap_or(runs),
            "--seconds" => seconds = value().parse().unwrap_or(seconds),
            "--seed" => seed = value().parse().unwrap_or(seed),
            name => which = name.to_string(),
        }
    }
    // panics are counted and saved, not printed
    panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        let since = RUNNING_SINCE.load(Ordering::SeqCst);
        if since > 0
            && start.elapsed().as_millis() as u64 + 1 - since > HANG_ABORT.as_millis() as u64
        {
            dump_current("hang");
            eprintln!("fuzz: an input ran over {HANG_ABORT:?}; stopping");
            std::process::exit(3);
        }
    });
    let all = targets();
    let chosen: Vec<&Target> = all
        .iter()
        .filter(|t| which == "all" || t.name == which)
        .collect();
    if chosen.is_empty() {
        eprintln!("fuzz: unknown target `{which}`");
        std::process::exit(2);
    }
    let mut flagged = false;
    println!("target        runs   refused  panics  slow>1s  alloc>256MB  slowest_ms  largest_alloc_MB  seconds");
    for (i, t) in chosen.iter().enumerate() {
        let t0 = Instant::now();
        let r = run_target(t, runs, seconds, seed.wrapping_add(i as u64), start);
        flagged |= r.panics + r.slow + r.big > 0;
        println!(
            "{:<12} {:>9} {:>9} {:>7} {:>8} {:>12} {:>11.1} {:>17.1} {:>8.1}",
            t.name,
            r.runs,
            r.refused,
            r.panics,
            r.slow,
            r.big,
            r.slowest.as_secs_f64() * 1e3,
            r.largest as f64 / (1 << 20) as f64,
            t0.elapsed().as_secs_f64()
        );
    }
    std::process::exit(i32::from(flagged));
}
