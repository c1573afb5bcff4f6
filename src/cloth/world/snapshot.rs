//! What a step changes in a world (positions [m], velocities [m/s], pins, friction states,
//! time [s]), kept to take a step back, and the friction path re-followed after a projection.

use crate::material::LawState;

use super::{ClothWorld, Material, Pin};
use crate::cloth::Vec3;

/// What a step changes in a world (positions, velocities, pins, friction states, time), kept
/// to take the step back: an implicit step that does not converge is retried as two halves.
#[derive(Debug, Clone, Default)]
pub struct WorldSnapshot {
    x: Vec<Vec3>,
    v: Vec<Vec3>,
    pins: Vec<Pin>,
    /// The committed law states (empty when the world keeps them instead: `save_step_start`).
    pub(crate) states: Vec<LawState>,
    /// `save_step_start`'s mark: the world's commit count when the states were left to it.
    kept_at: Option<u64>,
    time: f64,
}

/// The committed law states before the last `commit_keeping_start`: a second buffer the
/// commits rotate through, so a step can be taken back without a copy of every state.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeptStates {
    start: Vec<LawState>,
    /// The commit count at which `start` was the committed states (None: not kept).
    at: Option<u64>,
    /// Commits so far.
    commits: u64,
}

impl ClothWorld {
    /// Commits the trial friction states of an accepted step (swapped in).
    pub(crate) fn commit(&mut self, trial: &mut Vec<LawState>) {
        if let Material::Kes(k) = &mut self.material {
            k.commit(trial);
            self.kept.commits += 1;
        }
    }

    /// `commit`, keeping the states it replaces (no copy: the buffers rotate, and `trial` is
    /// left holding an older buffer of any length, to be resized before use), so that
    /// `restore_step_start` can take the step back.
    pub(crate) fn commit_keeping_start(&mut self, trial: &mut Vec<LawState>) {
        if let Material::Kes(k) = &mut self.material {
            if trial.len() == k.state_len() {
                k.commit(trial);
                std::mem::swap(trial, &mut self.kept.start);
                self.kept.at = Some(self.kept.commits);
                self.kept.commits += 1;
            }
        }
    }

    /// Copies the committed law states into `out` (empty for springs and surfaces).
    pub(crate) fn copy_states(&self, out: &mut Vec<LawState>) {
        out.clear();
        if let Material::Kes(k) = &self.material {
            out.extend_from_slice(k.states());
        }
    }

    /// Moves the friction states from `start` (the committed states at the start of the step;
    /// None: those kept by `commit_keeping_start`) along the straight increment to the current
    /// positions and commits them: after Provot's constraints or an obstacle moved particles,
    /// the accepted step ends at the projected positions, and so does the friction path.
    /// `trial` and `force` are scratch.
    pub(crate) fn refollow_friction(
        &mut self,
        start: Option<&[LawState]>,
        trial: &mut Vec<LawState>,
        force: &mut Vec<Vec3>,
    ) {
        if let Material::Kes(k) = &mut self.material {
            k.set_states(start.unwrap_or(&self.kept.start));
            trial.resize(k.state_len(), LawState::default());
            force.clear();
            force.resize(self.x.len(), Vec3::zeros());
            k.add_forces(&self.x, trial, force);
            k.commit(trial);
            self.kept.commits += 1;
        }
    }

    /// Saves what a step changes into `snap` (its buffers reused).
    pub(crate) fn save(&self, snap: &mut WorldSnapshot) {
        self.save_motion(snap);
        self.copy_states(&mut snap.states);
        snap.kept_at = None;
    }

    /// `save` without the law states: the step that follows keeps them
    /// (`commit_keeping_start`), and `restore_step_start` takes them back from there.
    pub(crate) fn save_step_start(&self, snap: &mut WorldSnapshot) {
        self.save_motion(snap);
        snap.states.clear();
        snap.kept_at = Some(self.kept.commits);
    }

    fn save_motion(&self, snap: &mut WorldSnapshot) {
        snap.x.clone_from(&self.x);
        snap.v.clone_from(&self.v);
        snap.pins.clone_from(&self.pins);
        snap.time = self.time;
    }

    /// Goes back to a state saved from this world by `save`.
    pub(crate) fn restore(&mut self, snap: &WorldSnapshot) {
        self.restore_motion(snap);
        if let Material::Kes(k) = &mut self.material {
            k.set_states(&snap.states);
            self.kept.commits += 1;
        }
    }

    /// Goes back to a state saved by `save_step_start`, its law states those the one commit
    /// since kept; false (nothing restored) when they were not kept from that state.
    pub(crate) fn restore_step_start(&mut self, snap: &WorldSnapshot) -> bool {
        if let Material::Kes(k) = &mut self.material {
            let kept = &mut self.kept;
            if snap.kept_at.is_none()
                || kept.at != snap.kept_at
                || kept.start.len() != k.state_len()
            {
                return false;
            }
            k.commit(&mut kept.start);
            kept.at = None;
            kept.commits += 1;
        }
        self.restore_motion(snap);
        true
    }

    fn restore_motion(&mut self, snap: &WorldSnapshot) {
        self.x.clone_from(&snap.x);
        self.v.clone_from(&snap.v);
        self.pins.clone_from(&snap.pins);
        self.pinned.fill(false);
        for p in &self.pins {
            self.pinned[p.particle] = true;
        }
        self.time = snap.time;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::connectors::tangent_test_sheet;

    fn states(world: &ClothWorld) -> Vec<LawState> {
        let mut s = Vec::new();
        world.copy_states(&mut s);
        s
    }

    /// The trial states of the world's laws at its positions scaled by `s` (a stretch).
    fn stretched_trial(world: &ClothWorld, s: f64) -> Vec<LawState> {
        let x: Vec<Vec3> = world.x.iter().map(|p| p * s).collect();
        let mut trial = vec![LawState::default(); world.state_len()];
        let mut f = vec![Vec3::zeros(); world.len()];
        world.add_internal_forces(&x, &mut trial, &mut f);
        trial
    }

    /// A step saved without its law states and committed with `commit_keeping_start` is taken
    /// back to the saved states bit for bit (and positions and time), once; a plain commit
    /// keeps nothing; the friction re-followed from the kept start is the same as from a copy.
    #[test]
    fn a_step_start_kept_by_the_commit_is_restored_exactly() {
        let mut world = tangent_test_sheet(5, 4, 0.01);
        let mut t = stretched_trial(&world, 1.02);
        world.commit(&mut t);
        let before = states(&world);
        assert!(before.iter().any(|s| s.friction.z() != 0.0));
        let (x0, time0) = (world.x.clone(), world.time);
        let mut snap = WorldSnapshot::default();
        world.save_step_start(&mut snap);
        assert!(snap.states.is_empty());
        let mut copy = world.clone();
        let mut t = stretched_trial(&world, 1.005);
        let mut t_copy = t.clone();
        world.commit_keeping_start(&mut t);
        world.x.iter_mut().for_each(|p| p.z += 1e-3);
        world.time += 1e-3;
        assert_ne!(states(&world), before);
        // the friction path from the kept start and from a copied one
        copy.commit(&mut t_copy);
        copy.x.clone_from(&world.x);
        let (mut scratch, mut force) = (Vec::new(), Vec::new());
        let mut refollowed = world.clone();
        refollowed.refollow_friction(None, &mut scratch, &mut force);
        copy.refollow_friction(Some(&before), &mut scratch, &mut force);
        assert_eq!(states(&refollowed), states(&copy));
        assert_ne!(states(&refollowed), before);
        // taken back, once
        assert!(world.restore_step_start(&snap));
        assert_eq!(states(&world), before);
        assert_eq!((&world.x, world.time), (&x0, time0));
        assert!(!world.restore_step_start(&snap));
        // a plain commit keeps nothing for a later snapshot
        world.save_step_start(&mut snap);
        let mut t = stretched_trial(&world, 1.005);
        world.commit(&mut t);
        assert!(!world.restore_step_start(&snap));
    }
}
