//! Writes the synthetic KES-FB3 compression and FB4 surface curves of `kes_data/` and their
//! closed-form values (`expected_fb34.json`): van Wyk compression P = K((T−T_c)⁻³ − (T_f−T_c)⁻³)
//! [gf/cm², T in mm] and the same law on recovery, sinusoidal μ(x) and height T(x) at the weave period.
//!
//! `cargo run --release --example kes_fb34 -- kes_data` (the folder holding the fabric folders).

use std::f64::consts::PI;
use std::fmt::Write as _;
use std::path::Path;

/// P_m and the T0 pressure of the KES-FB3 test [gf/cm²].
const P_M: f64 = 50.0;
const P_0: f64 = 0.5;
/// The FB4 trace X [cm].
const TRACE: f64 = 2.0;

/// One fabric's model: compression (thickness in mm) and surface (period in cm).
struct Fabric {
    folder: &'static str,
    name: &'static str,
    /// Weight [g/m²].
    weight: f64,
    /// Thickness at P_0 and at P_m [mm].
    t0: f64,
    tm: f64,
    /// Incompressible core T_c as a fraction of TM.
    core: f64,
    /// Recovery: van Wyk again, through (TM, P_m), zero at T_r = TM + r(T0 − TM) (the set the
    /// fabric keeps just after the test): below the compression branch since T_r < T_f.
    r: f64,
    /// Friction: mean forward / reverse, amplitude of the weave ripple; warp, weft.
    miu: [(f64, f64, f64); 2],
    /// Roughness: amplitude of the height ripple [µm]; warp, weft.
    height: [f64; 2],
    /// Weave period along warp, weft [cm].
    period: [f64; 2],
}

const FABRICS: [Fabric; 4] = [
    Fabric {
        folder: "wool-suiting",
        name: "Wool suiting",
        weight: 260.0,
        t0: 1.05,
        tm: 0.70,
        core: 0.7,
        r: 0.5,
        miu: [(0.205, 0.215, 0.018), (0.195, 0.205, 0.016)],
        height: [4.5, 5.2],
        period: [0.05, 0.0625],
    },
    Fabric {
        folder: "cotton-shirting",
        name: "Cotton shirting",
        weight: 120.0,
        t0: 0.36,
        tm: 0.26,
        core: 0.8,
        r: 0.45,
        miu: [(0.165, 0.172, 0.012), (0.158, 0.166, 0.011)],
        height: [2.4, 2.9],
        period: [0.025, 0.03125],
    },
    Fabric {
        folder: "polyester-georgette",
        name: "Polyester georgette",
        weight: 70.0,
        t0: 0.30,
        tm: 0.19,
        core: 0.75,
        r: 0.55,
        miu: [(0.19, 0.20, 0.026), (0.185, 0.195, 0.028)],
        height: [6.0, 6.8],
        period: [0.04, 0.04],
    },
    Fabric {
        folder: "silk-crepe",
        name: "Silk crepe",
        weight: 60.0,
        t0: 0.42,
        tm: 0.23,
        core: 0.7,
        r: 0.5,
        miu: [(0.18, 0.19, 0.030), (0.175, 0.182, 0.032)],
        height: [7.0, 7.5],
        period: [0.05, 0.05],
    },
];

/// A reproducible uniform draw in [-1, 1) (64-bit LCG, the seed per file).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

fn seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// K and T_f of the van Wyk law through (T0, P_0) and (TM, P_m), with core T_c [mm].
fn van_wyk(f: &Fabric) -> (f64, f64, f64) {
    let tc = f.core * f.tm;
    let (u0, um) = ((f.t0 - tc).powi(-3), (f.tm - tc).powi(-3));
    let k = (P_M - P_0) / (um - u0);
    let uf = u0 - P_0 / k;
    (k, tc, tc + uf.powf(-1.0 / 3.0))
}

fn header(f: &Fabric, test: &str, direction: Option<&str>, model: &str) -> String {
    let mut s = format!("# kestrel-kes: 1\n# fabric: {}\n# test: {test}\n", f.name);
    if let Some(d) = direction {
        let _ = writeln!(s, "# direction: {d}");
    }
    let _ = writeln!(
        s,
        "# source: synthetic, {model} (examples/kes_fb34.rs; see kes_data/README.md)"
    );
    s
}

/// The compression file and its closed-form values (T0, TM, WC, LC, RC, EMC).
fn compression(f: &Fabric) -> (String, serde_json::Value) {
    let (k, tc, tf) = van_wyk(f);
    let p_comp = |t: f64| {
        if t >= tf {
            0.0
        } else {
            k * ((t - tc).powi(-3) - (tf - tc).powi(-3))
        }
    };
    let tr = f.tm + f.r * (f.t0 - f.tm);
    let ur = (tr - tc).powi(-3);
    let kr = P_M / ((f.tm - tc).powi(-3) - ur);
    let p_rec = |t: f64| {
        if t >= tr {
            0.0
        } else {
            kr * ((t - tc).powi(-3) - ur)
        }
    };
    let mut s = header(
        f,
        "compression",
        None,
        "van Wyk compression P = K((T-Tc)^-3 - (Tf-Tc)^-3), recovery the same law to Tr < Tf",
    );
    let _ = writeln!(s, "# weight [g/m2]: {}", f.weight);
    s += "thickness [mm],pressure [gf/cm2]\n";
    let start = tf + 0.15 * (f.t0 - f.tm);
    let n = 500;
    let mut noise = Noise(seed(f.folder));
    let mut row = |t: f64, p: f64, turn: bool| {
        // load cell noise 0.005 gf/cm², thickness to 0.1 µm, pressure to 0.001 gf/cm²; the
        // plate turns at the first sample at or above P_m
        let e = 0.005 * noise.next();
        let p = if turn { p + e.abs() } else { p + e };
        let _ = writeln!(s, "{t:.4},{p:.3}");
    };
    for i in 0..=n {
        let t = start + (f.tm - start) * i as f64 / n as f64;
        row(t, p_comp(t), i == n);
    }
    for i in 1..=n {
        let t = f.tm + (start - f.tm) * i as f64 / n as f64;
        row(t, p_rec(t), false);
    }
    // closed forms, T in mm → /10 for gf·cm/cm²
    let anti = |t: f64| k * (-0.5 * (t - tc).powi(-2) - t * (tf - tc).powi(-3));
    let wc = (anti(f.t0) - anti(f.tm)) / 10.0;
    let returned =
        kr * (0.5 * (f.tm - tc).powi(-2) - 0.5 * (tr - tc).powi(-2) - ur * (tr - f.tm)) / 10.0;
    let values = serde_json::json!({
        "T0": f.t0,
        "TM": f.tm,
        "WC": wc,
        "LC": wc / (P_M * (f.t0 - f.tm) / 10.0 / 2.0),
        "RC": 100.0 * returned / wc,
        "EMC": 100.0 * (f.t0 - f.tm) / f.t0,
        "W": f.weight / 10.0,
    });
    (s, values)
}

/// A forward and a reverse stroke over X = 2 cm: (the file, its closed-form value(s)).
fn surface(f: &Fabric, test: &str, d: usize) -> (String, serde_json::Value) {
    let direction = ["warp", "weft"][d];
    let period = f.period[d];
    let n = 2000;
    let mut noise = Noise(seed(&format!("{}/{test}_{direction}", f.folder)));
    let (model, head, values) = if test == "friction" {
        let (fwd, rev, a) = f.miu[d];
        // a sine of amplitude a over whole periods: (1/X)∫|μ − MIU| dx = 2a/π
        (
            "mu(x) = MIU + a sin(2 pi x / weave period), reverse stroke offset",
            "position [cm],mu [-]",
            serde_json::json!({ "MIU": 0.5 * (fwd + rev), "MMD": 2.0 * a / PI }),
        )
    } else {
        (
            "height T(x) = h sin(2 pi x / weave period)",
            "position [cm],height [um]",
            serde_json::json!({ "SMD": 2.0 * f.height[d] / PI }),
        )
    };
    let mut s = header(f, test, Some(direction), model);
    let _ = writeln!(
        s,
        "# contact force [gf]: {}",
        if test == "friction" { 50 } else { 10 }
    );
    s += head;
    s += "\n";
    for stroke in 0..2 {
        for i in 0..=n {
            if stroke == 1 && i == 0 {
                continue;
            }
            let u = TRACE * i as f64 / n as f64;
            let x = if stroke == 0 { u } else { TRACE - u };
            let ripple = (2.0 * PI * x / period).sin();
            if test == "friction" {
                let (fwd, rev, a) = f.miu[d];
                let mean = if stroke == 0 { fwd } else { rev };
                let mu = mean + a * ripple + 0.0005 * noise.next();
                let _ = writeln!(s, "{x:.4},{mu:.4}");
            } else {
                let h = f.height[d] * ripple + 0.05 * noise.next();
                let _ = writeln!(s, "{x:.4},{h:.3}");
            }
        }
    }
    (s, values)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args().nth(1).unwrap_or_else(|| "kes_data".into());
    let root = Path::new(&root);
    let mut expected = serde_json::Map::new();
    for f in &FABRICS {
        let dir = root.join(f.folder);
        std::fs::create_dir_all(&dir)?;
        let mut files = serde_json::Map::new();
        let (text, values) = compression(f);
        std::fs::write(dir.join("compression.csv"), text)?;
        files.insert(format!("{}/compression.csv", f.folder), values);
        for test in ["friction", "roughness"] {
            for d in 0..2 {
                let (text, values) = surface(f, test, d);
                let name = format!("{test}_{}.csv", ["warp", "weft"][d]);
                std::fs::write(dir.join(&name), text)?;
                files.insert(format!("{}/{name}", f.folder), values);
            }
        }
        expected.extend(files);
    }
    let json = serde_json::json!({
        "about": "closed-form KES-FB3/FB4 values of the noise-free models of examples/kes_fb34.rs \
                  (KES units: T0, TM mm; WC gf*cm/cm^2; LC -; RC, EMC %; MIU, MMD -; SMD um; \
                  W mg/cm^2)",
        "files": expected,
    });
    std::fs::write(
        root.join("expected_fb34.json"),
        serde_json::to_string_pretty(&json)? + "\n",
    )?;
    Ok(())
}
