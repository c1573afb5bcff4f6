//! Explicit symplectic Euler (Provot eq. 2): v ← v + Δt·F(x, v)/m, x ← x + Δt·v [m]; friction
//! states advance along each step's strain increment and are committed at once.

use super::implicit::Workspace;
use super::pipeline::StepParameters;
use super::world::ClothWorld;

/// The explicit stepper; holds only scratch.
#[derive(Debug, Default, Clone)]
pub struct SymplecticEulerStepper {
    ws: Workspace,
}

impl SymplecticEulerStepper {
    pub fn new() -> Self {
        Self::default()
    }

    /// One step of `world`: forces at (x, v), velocities then positions of the free particles,
    /// pins re-set to their targets at t + Δt.
    pub(crate) fn step(&mut self, params: &StepParameters, world: &mut ClothWorld) {
        let dt = params.dt;
        let ws = &mut self.ws;
        ws.resize(world);
        world.forces(
            &world.x,
            &world.v,
            &mut ws.trial,
            &mut ws.normals,
            &mut ws.force,
        );
        world.commit(&mut ws.trial);
        for k in 0..world.len() {
            if world.is_pinned(k) {
                continue;
            }
            let v = world.v[k] + ws.force[k] * (dt / world.mass[k]);
            world.v[k] = v;
            world.x[k] += v * dt;
        }
        world.advance_pins(dt);
    }
}
