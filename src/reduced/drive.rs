//! The full simulation under an impulse palette: α^I adds a velocity to the free particles on
//! an entry's first step, α^F sets the wind [m/s] and the door's angular velocity ω [rad/s].

use nalgebra::{Rotation3, Unit};

use crate::cloth::{ClothPipeline, ClothWorld, ObstacleShape, StepParameters, Vec3};
use crate::scene::{DoorSpec, DynamicScene, PaletteEntrySpec, ReducedSpec};

use super::ReducedError;

/// The door: pins turn with it about its hinge; positions are reduced in its frame.
#[derive(Debug, Clone)]
struct Door {
    hinge: Vec3,
    axis: Unit<Vec3>,
    /// Allowed angles relative to the start [rad].
    range: (f64, f64),
    /// Pin positions at angle 0 [m].
    pins0: Vec<Vec3>,
    /// Plane obstacles at angle 0 (point, normal), turned with the door.
    planes0: Vec<(usize, Vec3, Vec3)>,
}

/// A scene stepped under palette entries; holds the world, its pipeline and the door angle.
#[derive(Debug, Clone)]
pub(crate) struct Driver {
    pub world: ClothWorld,
    pub params: StepParameters,
    pipeline: ClothPipeline,
    palette: Vec<PaletteEntrySpec>,
    door: Option<Door>,
    /// Door angle relative to the start [rad].
    angle: f64,
    entry: usize,
    impulse_due: bool,
    stop: Option<usize>,
}

impl Driver {
    /// A driver at the scene's initial state under its start entry (not yet settled).
    pub(crate) fn new(scene: &DynamicScene) -> Result<Self, ReducedError> {
        let spec = scene.reduced.as_ref().ok_or(ReducedError::NoPalette)?;
        let world = scene.world.clone();
        let door = spec.door.as_ref().map(|d| door_of(d, &world));
        let mut d = Self {
            world,
            params: scene.params,
            pipeline: ClothPipeline::new(),
            palette: spec.palette.clone(),
            door,
            angle: 0.0,
            entry: spec.start_index(),
            impulse_due: false,
            stop: stop_entry(spec),
        };
        d.set_entry(spec.start_index());
        d.impulse_due = false;
        Ok(d)
    }

    /// Switches to palette entry `k`: its impulse goes with the next step, its forcing stays.
    pub(crate) fn set_entry(&mut self, k: usize) {
        self.entry = k;
        self.impulse_due = true;
        let e = &self.palette[k];
        if let (Some(w), Some(u)) = (self.world.loads.wind.as_mut(), e.wind) {
            w.velocity = u;
        }
    }

    pub(crate) fn entry(&self) -> usize {
        self.entry
    }

    /// Lifts the door's range when the cloth's motion in the door's frame does not depend on
    /// the door angle: gravity along the hinge axis, still air under every entry, only plane
    /// obstacles (they turn with the door). An IRF sampled so may then last longer than the
    /// range allows; the player still stops the door at its ends. True when lifted.
    pub(crate) fn lift_range_if_invariant(&mut self) -> bool {
        let Some(door) = self.door.as_mut() else {
            return false;
        };
        let g = self.world.loads.gravity();
        let along_axis = g.cross(&door.axis).norm() <= 1e-12 * g.norm().max(1e-300);
        let still = |w: &[f64; 3]| w.iter().all(|&v| v == 0.0);
        let still_air = self
            .world
            .loads
            .wind
            .as_ref()
            .is_none_or(|w| still(&w.velocity))
            && self
                .palette
                .iter()
                .all(|e| e.wind.as_ref().is_none_or(still));
        let planes = self.world.obstacles.iter().all(|o| o.plane().is_some());
        if along_axis && still_air && planes {
            door.range = (f64::NEG_INFINITY, f64::INFINITY);
            true
        } else {
            false
        }
    }

    /// Time the door may still turn at ω before leaving its range [s] (∞ without motion).
    pub(crate) fn time_to_limit(&self, omega: f64) -> f64 {
        match &self.door {
            Some(d) if omega > 0.0 => (d.range.1 - self.angle) / omega,
            Some(d) if omega < 0.0 => (d.range.0 - self.angle) / omega,
            _ => f64::INFINITY,
        }
    }

    /// One step: impulse if due, door and pins moved, the cloth stepped. When the door
    /// reaches the end of its range, the palette's stop entry takes over.
    pub(crate) fn step(&mut self) -> Result<(), ReducedError> {
        let dt = self.params.dt;
        let e = &self.palette[self.entry];
        if self.impulse_due {
            let kick = Vec3::from(e.impulse);
            if kick != Vec3::zeros() {
                self.world.kick(kick);
            }
            self.impulse_due = false;
        }
        if let Some(door) = &self.door {
            let omega = e.angular_velocity;
            let next = (self.angle + omega * dt).clamp(door.range.0, door.range.1);
            let rot = Rotation3::from_axis_angle(&door.axis, next);
            for (i, p0) in door.pins0.iter().enumerate() {
                let Some(&pin) = self.world.pins().get(i) else {
                    break;
                };
                let target = door.hinge + rot * (p0 - door.hinge);
                self.world
                    .set_pin_velocity(pin.particle, (target - pin.position) / dt);
            }
            for &(i, point, normal) in &door.planes0 {
                if let Some(o) = self.world.obstacles.get_mut(i) {
                    o.shape = ObstacleShape::Plane {
                        point: (door.hinge + rot * (point - door.hinge)).into(),
                        normal: (rot * normal).into(),
                    };
                }
            }
            let clamped = next != self.angle + omega * dt;
            self.angle = next;
            self.pipeline.step(&self.params, &mut self.world)?;
            if clamped && omega != 0.0 {
                if let Some(s) = self.stop {
                    self.set_entry(s);
                }
            }
        } else {
            self.pipeline.step(&self.params, &mut self.world)?;
        }
        Ok(())
    }

    /// Positions in the door's frame (the world's without a door), x, y, z per particle [m].
    pub(crate) fn local_positions<T: Copy>(&self, out: &mut [T])
    where
        f64: AsPrecision<T>,
    {
        let inv = self
            .door
            .as_ref()
            .map(|d| (d.hinge, Rotation3::from_axis_angle(&d.axis, -self.angle)));
        for (o, x) in out.chunks_exact_mut(3).zip(self.world.positions()) {
            let p = match &inv {
                Some((h, r)) => h + r * (x - h),
                None => *x,
            };
            for (o, v) in o.iter_mut().zip(p.iter()) {
                *o = v.to_precision();
            }
        }
    }
}

/// A position coordinate stored in f64 or f32.
pub(crate) trait AsPrecision<T> {
    fn to_precision(self) -> T;
}

impl AsPrecision<f64> for f64 {
    fn to_precision(self) -> f64 {
        self
    }
}

impl AsPrecision<f32> for f64 {
    fn to_precision(self) -> f32 {
        self as f32
    }
}

fn door_of(d: &DoorSpec, world: &ClothWorld) -> Door {
    let axis = Unit::new_normalize(Vec3::from(d.axis));
    let planes0 = world
        .obstacles
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.plane().map(|(p, n)| (i, Vec3::from(p), Vec3::from(n))))
        .collect();
    Door {
        hinge: Vec3::from(d.hinge),
        axis,
        range: (0.0, (d.range_deg[1] - d.range_deg[0]).to_radians()),
        pins0: world.pins().iter().map(|p| p.position).collect(),
        planes0,
    }
}

/// The entry that holds the door still: ω = 0 and no impulse (the start entry first).
pub(crate) fn stop_entry(spec: &ReducedSpec) -> Option<usize> {
    let still = |e: &PaletteEntrySpec| e.angular_velocity == 0.0 && e.impulse == [0.0; 3];
    let s = spec.start_index();
    if still(&spec.palette[s]) {
        return Some(s);
    }
    spec.palette.iter().position(still)
}
