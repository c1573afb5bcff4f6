//! The drape specimen's lowering: quasi-static (gravity g·k/N, k = 1..N, at rest at each:
//! |F_i| ≤ 10⁻³·ρ·h²·g·k/N \[N\]) or dynamic (g·(3τ² − 2τ³), τ = t/T \[s\], until it settles).

use std::collections::VecDeque;

use super::drape::{drape_reading, Specimen};
use super::rest::{relax_to_rest, Relaxation};
use super::{check_cancel, KineticDamping, LabError, STANDARD_GRAVITY};
use crate::cloth::Vec3;

/// The specimen counts as settled when its drape coefficient has stayed within this span
/// [points] over the last `SETTLE_WINDOW_S` (a tenth of the 2-point mesh tolerance)...
const SETTLED_DC_SPAN: f64 = 0.2;
/// ... [s], read every `READ_INTERVAL_S` [s]...
pub(crate) const SETTLE_WINDOW_S: f64 = 1.0;
const READ_INTERVAL_S: f64 = 0.1;
/// ... and the RMS speed of its free particles is below this [m/s]...
const SETTLED_RMS_SPEED: f64 = 5e-3;
/// ... reading from this simulated time after the end of the gravity ramp \[s\].
pub(crate) const MIN_TIME_S: f64 = 0.5;

/// The largest and the RMS speed [m/s] of the free particles.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Speeds {
    pub max: f64,
    pub rms: f64,
}

impl Speeds {
    pub(crate) fn of(v: &[Vec3], free: &[bool]) -> Self {
        let (mut max, mut sum2, mut n) = (0.0f64, 0.0, 0usize);
        for (vk, _) in v.iter().zip(free).filter(|(_, f)| **f) {
            let s = vk.norm();
            max = max.max(s);
            sum2 += s * s;
            n += 1;
        }
        Self {
            max,
            rms: if n > 0 { (sum2 / n as f64).sqrt() } else { 0.0 },
        }
    }
}

/// The fraction of g applied at time `t` \[s\] of a ramp over `ramp` \[s\]: 3τ² − 2τ³,
/// τ = t/ramp clamped to [0, 1] (1 when `ramp` is 0).
pub(crate) fn gravity_fraction(t: f64, ramp: f64) -> f64 {
    if ramp <= 0.0 {
        return 1.0;
    }
    let tau = (t / ramp).clamp(0.0, 1.0);
    tau * tau * (3.0 - 2.0 * tau)
}

/// How the lowering went.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lowered {
    /// Dynamic steps (0 when quasi-static).
    pub steps: u64,
    /// Dynamic steps kept unconverged with a residual below the accepted one.
    pub unconverged: u64,
    /// Static steps of the quasi-static lowering, and those of them left unconverged (0 when
    /// dynamic).
    pub static_steps: u64,
    pub static_unconverged: u64,
    pub kinetic_stops: u64,
    /// The free particles' speeds at the last reading (zero after a quasi-static lowering).
    pub speeds: Speeds,
}

/// Lowers the specimen quasi-statically: gravity g·k/N for k = 1..N, each load brought to
/// rest from the last (`relax_to_rest`: static steps from zero velocity, the friction states
/// following the displacement of each) before the next. No dynamics: the path is the
/// sequence of equilibria under the rising load, not a motion whose vibrations depend on
/// the mesh. `progress` gets k/N, and (k − 1)/N before each static step of load step k.
pub(crate) fn lower_quasi_statically(
    lab: &mut Relaxation<'_>,
    increments: u32,
    progress: &mut dyn FnMut(f64),
) -> Result<Lowered, LabError> {
    let (mut static_steps, mut static_unconverged) = (0, 0);
    for k in 1..=increments {
        let fraction = f64::from(k) / f64::from(increments);
        let done = f64::from(k - 1) / f64::from(increments);
        lab.world.loads.gravity = [0.0, -STANDARD_GRAVITY * fraction, 0.0];
        // the load steps done so far, before each static step: a stop is seen within one
        let rest = relax_to_rest(lab, &mut || progress(done)).map_err(|e| match e {
            LabError::NotReached(m) => LabError::NotReached(format!(
                "lowering at {:.0} % of g (load step {k} of {increments}): {m}",
                100.0 * fraction
            )),
            other => other,
        })?;
        static_steps += rest.steps;
        static_unconverged += rest.unconverged;
        progress(fraction);
    }
    Ok(Lowered {
        steps: 0,
        unconverged: 0,
        static_steps,
        static_unconverged,
        kinetic_stops: 0,
        speeds: Speeds::of(lab.world.velocities(), lab.free),
    })
}

/// The dynamic lowering: gravity ramped from 0 to g over `ramp` \[s\] (smoothstep 3τ² − 2τ³,
/// τ = t/T; 0: the full weight at once), backward-Euler steps until the coefficient settles
/// (within 0.2 points over 1 s from 0.5 s after the ramp), at most `max_time` \[s\]; with
/// `kinetic_damping` every free particle is stopped whenever the free particles' kinetic
/// energy has passed a peak (Barnes' dynamic relaxation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DynamicLowering {
    pub ramp: f64,
    pub max_time: f64,
    pub kinetic_damping: bool,
}

/// Lowers the specimen dynamically: gravity ramped over `ramp` \[s\], backward-Euler steps of
/// `params`, optionally stopped at every kinetic-energy peak, until from 0.5 s after the ramp
/// the drape coefficient read every 0.1 s stays within 0.2 points over 1 s and the free
/// particles' RMS speed is below 5 mm/s. `progress` gets the simulated time over the longest.
pub(crate) fn lower_dynamically(
    lab: &mut Relaxation<'_>,
    specimen: &Specimen,
    how: &DynamicLowering,
    progress: &mut dyn FnMut(f64),
) -> Result<Lowered, LabError> {
    let Relaxation {
        world,
        pipeline,
        params,
        accepted,
        free,
        cancel,
        ..
    } = lab;
    let (accepted, cancel) = (*accepted, *cancel);
    let dt = params.dt;
    let max_steps = (how.max_time / dt).ceil() as u64;
    let read_every = ((READ_INTERVAL_S / dt).round() as u64).max(1);
    let mut speeds = Speeds {
        max: f64::INFINITY,
        rms: f64::INFINITY,
    };
    // the readings (time [s], DC [%]) of the last SETTLE_WINDOW_S
    let mut window: VecDeque<(f64, f64)> = VecDeque::new();
    let mut unconverged = 0u64;
    let mut kinetic = KineticDamping::default();
    for step in 1..=max_steps {
        check_cancel(cancel)?;
        // backward Euler takes the forces at the end of the step
        world.loads.gravity = [
            0.0,
            -STANDARD_GRAVITY * gravity_fraction(world.time + dt, how.ramp),
            0.0,
        ];
        let report = pipeline.step(params, world)?;
        if !report.solve.converged {
            if report.solve.residual > accepted {
                return Err(LabError::NotReached(format!(
                    "the implicit step at t = {:.3} s did not converge (after {} halvings, residual \
                     {:.1e} m > {:.0e} m): the drape is not trustworthy",
                    world.time, report.halvings, report.solve.residual, accepted
                )));
            }
            unconverged += 1;
        }
        if step % 25 == 0 {
            progress(step as f64 / max_steps as f64);
        }
        let reads = world.time >= MIN_TIME_S + how.ramp && step % read_every == 0;
        if reads {
            // the speeds the specimen reached, before any kinetic stop below
            speeds = Speeds::of(world.velocities(), free);
        }
        // pinned particles do not move: this is the free particles' kinetic energy
        if how.kinetic_damping && kinetic.stop(world.kinetic_energy()) {
            world.v.iter_mut().for_each(|v| *v = Vec3::zeros());
        }
        if !reads {
            continue;
        }
        let dc = drape_reading(specimen, world.positions()).drape_coefficient;
        window.push_back((world.time, dc));
        while window
            .front()
            .is_some_and(|(t, _)| *t < world.time - SETTLE_WINDOW_S - 1e-9)
        {
            window.pop_front();
        }
        let (lo, hi) = window
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, d)| {
                (lo.min(*d), hi.max(*d))
            });
        let spans_window = window
            .front()
            .is_some_and(|(t, _)| *t <= world.time - SETTLE_WINDOW_S + 1e-9);
        if spans_window && hi - lo <= SETTLED_DC_SPAN && speeds.rms < SETTLED_RMS_SPEED {
            return Ok(Lowered {
                steps: world.steps,
                unconverged,
                static_steps: 0,
                static_unconverged: 0,
                kinetic_stops: kinetic.stops,
                speeds,
            });
        }
    }
    Err(LabError::NotReached(format!(
        "the specimen did not settle in {} s (RMS speed {:.4} m/s, fastest particle {:.3} m/s; \
         raise the longest time)",
        how.max_time, speeds.rms, speeds.max
    )))
}

#[cfg(test)]
mod tests {
    use super::super::KineticDamping;
    use super::gravity_fraction;

    /// An undamped oscillator x'' = −ω²x released from rest at x = A (exact: A·cos ωt, kinetic
    /// energy peaks at x = 0 after a quarter period) is stopped by kinetic damping at its
    /// equilibrium to within the travel of one step, A·ω·Δt, and stays there; without kinetic
    /// damping it keeps its energy (symplectic Euler).
    #[test]
    fn kinetic_damping_stops_a_mode_at_its_equilibrium() {
        let (omega, amplitude, dt) = (2.0 * std::f64::consts::PI, 0.01, 1e-3);
        let run = |damped: bool| {
            let (mut x, mut v) = (amplitude, 0.0f64);
            let mut kd = KineticDamping::default();
            let mut first_stop = None;
            for step in 1..=3000 {
                v -= omega * omega * x * dt;
                x += v * dt;
                if damped && kd.stop(0.5 * v * v) {
                    v = 0.0;
                    first_stop.get_or_insert(step);
                }
            }
            (x, v, kd.stops, first_stop)
        };
        let (x, v, stops, first) = run(true);
        let travel = amplitude * omega * dt;
        assert!(
            x.abs() < travel && v.abs() < omega * travel,
            "x = {x} m, v = {v} m/s"
        );
        // the first stop comes at the quarter period (250 steps), one step late at most
        assert!(first.is_some_and(|s| (250..=252).contains(&s)), "{first:?}");
        assert!(stops >= 1);
        let (x, v, stops, _) = run(false);
        let energy = 0.5 * (v * v + omega * omega * x * x) / (0.5 * (omega * amplitude).powi(2));
        assert!((energy - 1.0).abs() < 0.01 && stops == 0, "{energy}");
    }

    /// The ramp 3τ² − 2τ³ runs from 0 to 1 with zero rate at both ends (the specimen starts and
    /// ends its lowering at rest), is monotone, and is the full weight without a ramp.
    #[test]
    fn gravity_ramp_is_a_smoothstep_from_rest_to_rest() {
        let ramp = 1.5;
        assert_eq!(gravity_fraction(0.0, ramp), 0.0);
        assert!((gravity_fraction(0.75, ramp) - 0.5).abs() < 1e-15);
        assert_eq!(gravity_fraction(1.5, ramp), 1.0);
        assert_eq!(gravity_fraction(7.0, ramp), 1.0);
        assert_eq!(gravity_fraction(0.0, 0.0), 1.0);
        let h = 1e-6;
        // rate at the ends: 6τ(1 − τ)/T → 0, against 1.5/T in the middle
        assert!(gravity_fraction(h, ramp) / h < 1e-5);
        assert!((1.0 - gravity_fraction(ramp - h, ramp)) / h < 1e-5);
        let mid = (gravity_fraction(0.75 + h, ramp) - gravity_fraction(0.75 - h, ramp)) / (2.0 * h);
        assert!((mid - 1.5 / ramp).abs() < 1e-6, "{mid}");
        let samples: Vec<f64> = (0..=100)
            .map(|k| gravity_fraction(k as f64 * ramp / 100.0, ramp))
            .collect();
        assert!(samples.windows(2).all(|w| w[1] >= w[0]));
    }
}
