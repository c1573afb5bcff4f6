//! What the tabs show, asked of the library and put in Kawabata units for the charts: the
//! branches of a curve, a law on the KES protocol, a hysteresis loop, a fit's overlay.

use crate::fit::CurveFit;
use crate::kes::protocol::{simulate, Protocol};
use crate::kes::{Curve, Direction, KesTest, Path};
use crate::material::{drive_parts, ConnectorLaw, DrivingPath};
use crate::plot::style::energy_unit;

/// Points (x, y) in KES units.
pub(crate) type Points = Vec<(f64, f64)>;

/// The KES test a law belongs to.
pub(crate) fn test_of_law(law: &ConnectorLaw) -> KesTest {
    law.kes_test().1
}

fn to_kes(test: KesTest, x: &[f64], y: &[f64]) -> Points {
    let u = test.kes_units();
    x.iter()
        .zip(y)
        .map(|(a, b)| (a * u.x_per_si, b * u.y_per_si))
        .collect()
}

/// Loading and unloading samples of a curve (`KesTest::loading_flags`), as the plots colour
/// them, KES units.
pub(crate) fn branches(curve: &Curve) -> (Points, Points) {
    let loading = curve.test.loading_flags(&curve.x);
    let all = to_kes(curve.test, &curve.x, &curve.y);
    let mut up = Vec::new();
    let mut down = Vec::new();
    for (p, load) in all.into_iter().zip(loading) {
        if load {
            up.push(p);
        } else {
            down.push(p);
        }
    }
    (up, down)
}

/// The law's curve on the KES instrument's protocol (SI), or why it cannot run it.
pub(crate) fn protocol_curve(law: &ConnectorLaw, test: KesTest) -> Result<Curve, String> {
    let protocol = Protocol::kes(test).map_err(|e| e.to_string())?;
    simulate(law, &protocol, 400, "law", Direction::Warp).map_err(|e| e.to_string())
}

/// The law driven through the KES instrument's protocol, KES units.
pub(crate) fn protocol_points(law: &ConnectorLaw, test: KesTest) -> Points {
    match protocol_curve(law, test) {
        Ok(c) => to_kes(test, &c.x, &c.y),
        Err(_) => Vec::new(),
    }
}

/// KES values of the law's protocol curve, formatted.
pub(crate) fn protocol_values(law: &ConnectorLaw, test: KesTest) -> Vec<(String, String)> {
    match protocol_curve(law, test) {
        Ok(c) => super::format_values(&c),
        Err(e) => vec![("".into(), e)],
    }
}

/// The model's forces along the curve's own path, KES units.
pub(crate) fn fit_points(curve: &Curve, fit: &CurveFit) -> Points {
    match fit.forces(&curve.x) {
        Some(y) => to_kes(curve.test, &curve.x, &y),
        None => Vec::new(),
    }
}

/// A hysteresis view of a law: total and friction part along a driving path, and the
/// energy dissipated per closed cycle (an open segment's work is no cycle's).
pub(crate) struct LoopView {
    pub total: Points,
    pub friction: Points,
    pub energy_per_cycle: Vec<f64>,
    /// Work ∫y dx of each open segment (a partial reversal that returns nowhere): not a
    /// dissipation, may be negative.
    pub open_work: Vec<f64>,
    pub energy_unit: &'static str,
    pub amplitude_kes: f64,
}

/// The KES range of a test in SI: 8°, 2.5 1/cm, 5 % strain.
pub(crate) fn kes_amplitude_si(test: KesTest) -> f64 {
    match test {
        KesTest::Tensile => 0.05,
        KesTest::Shear => 8.0 * crate::kes::DEG_RAD,
        KesTest::Bending => 2.5 * crate::kes::PER_CM_PER_M,
        KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => 1.0,
    }
}

pub(crate) fn hysteresis(
    law: &ConnectorLaw,
    test: KesTest,
    path: DrivingPath,
    scale: f64,
) -> LoopView {
    let amplitude = kes_amplitude_si(test) * scale;
    let x = path.samples(amplitude, 200, test == KesTest::Tensile);
    let parts = drive_parts(law, &x);
    let total: Vec<f64> = parts.iter().map(|p| p.0).collect();
    let friction: Vec<f64> = parts.iter().map(|p| p.2).collect();
    let u = test.kes_units();
    let (energy_factor, energy_unit) = energy_unit(test);
    let path = Path::new(&x);
    LoopView {
        total: to_kes(test, &x, &total),
        friction: to_kes(test, &x, &friction),
        energy_per_cycle: path
            .closed_cycles(&total)
            .into_iter()
            .map(|c| c.energy * energy_factor)
            .collect(),
        open_work: path
            .open_segments(&total)
            .into_iter()
            .map(|s| s.work * energy_factor)
            .collect(),
        energy_unit,
        amplitude_kes: amplitude * u.x_per_si,
    }
}

/// Orthographic view of a cloth frame: yaw about the up axis, then tilt by `pitch`; returns
/// screen (x, y) per particle [m].
pub(crate) fn project(frame: &super::message::ClothFrame, yaw: f64, pitch: f64) -> Points {
    let u = frame.up;
    // a horizontal unit vector: the world axis least aligned with up, made orthogonal
    let axis = if u[0].abs() < 0.9 {
        [1.0, 0.0, 0.0]
    } else {
        [0.0, 0.0, 1.0]
    };
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    // a·p + b·q
    let mix = |a: f64, p: [f64; 3], b: f64, q: [f64; 3]| {
        [
            a * p[0] + b * q[0],
            a * p[1] + b * q[1],
            a * p[2] + b * q[2],
        ]
    };
    let d = dot(axis, u);
    let mut e1 = [axis[0] - d * u[0], axis[1] - d * u[1], axis[2] - d * u[2]];
    let n = dot(e1, e1).sqrt().max(1e-300);
    e1 = [e1[0] / n, e1[1] / n, e1[2] / n];
    let e2 = cross(u, e1);
    let (s, c) = yaw.sin_cos();
    let right = mix(c, e1, s, e2);
    let depth = cross(right, u);
    let (sp, cp) = pitch.sin_cos();
    let screen_up = mix(cp, u, sp, depth);
    frame
        .positions
        .iter()
        .map(|&p| (dot(p, right), dot(p, screen_up)))
        .collect()
}
