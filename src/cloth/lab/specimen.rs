//! The drape test's specimen: a 30 cm disc of a square lattice (the cells centred inside), held
//! on an 18 cm disc whose rim clamps each yarn at its crossing, positions in m (Y up).

use super::drape::{DISC_DIAMETER_M, SPECIMEN_DIAMETER_M};
use super::LabError;
use crate::cloth::connectors::{ClampedYarn, KesConnectors, KesLaws};
use crate::cloth::grid::Grid;
use crate::cloth::world::{ClothWorld, Material, Pin};
use crate::cloth::Vec3;

/// The specimen cut from a square grid: the corners of the cells whose centres lie within the
/// specimen's radius of the centre (a polygon of area π·R² to O(h²) on average; each cell's
/// mass ρ·h² lumped on its corners), flat in the XZ plane at y = 0, centred on the origin;
/// every particle is a corner of a cell (a yarn end with no cell made the cotton card's step
/// fail, docs/cloth.md). The disc holds
/// the lattice points within its radius (to h/100), and each yarn leaving it is clamped at its
/// crossing of the rim: an anchor, a held particle taken from the square outside the specimen.
#[derive(Debug, Clone, PartialEq)]
pub struct Specimen {
    pub grid: Grid,
    /// Flat lattice positions \[m\].
    pub flat: Vec<Vec3>,
    /// Particles of the specimen.
    pub kept: Vec<bool>,
    /// Particles on the supporting disc (held).
    pub on_disc: Vec<bool>,
    /// The anchors: (particle, its place on the rim \[m\]); particles of the square outside the
    /// specimen, held there.
    pub anchors: Vec<(usize, Vec3)>,
    /// The yarns leaving the disc: held particle, free neighbour, anchor.
    pub(crate) yarns: Vec<ClampedYarn>,
}

impl Specimen {
    /// The specimen at mesh spacing close to `cell` \[m\] (an even number of cells across).
    pub fn new(cell: f64) -> Result<Self, LabError> {
        Self::placed(cell, 0.0)
    }

    /// The specimen with its lattice moved by `shift` cells along both yarns from the disc's
    /// centre (0: a particle on the centre, 0.5: a cell's centre there), `shift` in [0, 1).
    pub fn placed(cell: f64, shift: f64) -> Result<Self, LabError> {
        if !(0.0..1.0).contains(&shift) {
            return Err(LabError::Option(format!(
                "lattice shift = {shift} cells: must be in [0, 1)"
            )));
        }
        // at most 30 mm: a coarser lattice (8 cells across) leaves too few particles outside
        // the specimen to anchor every yarn at the rim
        if !(cell.is_finite() && (0.001..=0.03).contains(&cell)) {
            return Err(LabError::Option(format!(
                "cell = {} mm: must be 1 to 30 mm",
                crate::friction::short_number(cell * 1e3)
            )));
        }
        let cells = (SPECIMEN_DIAMETER_M / cell).round().max(2.0) as usize;
        let cells = cells + cells % 2;
        let h = SPECIMEN_DIAMETER_M / cells as f64;
        let grid = Grid::new(cells + 1, cells + 1, h, h)?;
        let half = 0.5 * SPECIMEN_DIAMETER_M;
        let flat: Vec<Vec3> = (0..grid.len())
            .map(|k| {
                let (i, j) = grid.coords(k);
                Vec3::new(
                    (i as f64 + shift) * h - half,
                    0.0,
                    (j as f64 + shift) * h - half,
                )
            })
            .collect();
        let tiny = 1e-9 * h;
        let radius = |p: &Vec3| (p.x * p.x + p.z * p.z).sqrt();
        let mut kept = vec![false; flat.len()];
        for i in 0..cells {
            for j in 0..cells {
                let corners = grid.cell_corners(i, j);
                // the cells whose centre lies inside: a polygon of area πR² to O(h²) on
                // average (the cells wholly inside fall a band of about h/2 short)
                let centre = (flat[corners[0]] + flat[corners[3]]) * 0.5;
                if radius(&centre) <= half + tiny {
                    corners.iter().for_each(|&q| kept[q] = true);
                }
            }
        }
        let disc = 0.5 * DISC_DIAMETER_M;
        // a lattice point within h/100 of the rim is on it (held where it is): an anchor closer
        // to a free particle would make a connector shorter than h/100
        let on_rim = 0.01 * h;
        let on_disc: Vec<bool> = flat.iter().map(|p| radius(p) <= disc + on_rim).collect();
        let (yarns, anchors) = clamp_at_rim(&grid, &flat, &kept, &on_disc, disc, on_rim)?;
        Ok(Self {
            kept,
            on_disc,
            anchors,
            yarns,
            grid,
            flat,
        })
    }

    /// The specimen's world, flat and at rest: the card's `laws` on the connectors of the cells
    /// kept, the yarns clamped at the rim, each specimen particle of mass ρ·h² (`density` ρ
    /// [kg/m²]), the disc's particles, the anchors and the square outside the specimen held;
    /// no load.
    pub(crate) fn world(&self, laws: KesLaws, density: f64) -> Result<ClothWorld, LabError> {
        let (grid, h) = (self.grid, self.grid.h_warp);
        let mut connectors = KesConnectors::new(&grid, laws);
        connectors.retain_particles(&self.kept);
        let flat = self.positions();
        // the hinges' fixed cross-yarn axes, oriented as each family's own: e = p(i, j−1) −
        // p(i, j+1) for the warp, p(i+1, j) − p(i−1, j) for the weft, at the centre (on the disc)
        let c = (grid.nu - 1) / 2;
        let id = |i: usize, j: usize| grid.index(i, j) as u32;
        connectors.clamp_yarns(
            &flat,
            &self.on_disc,
            &self.yarns,
            [[id(c, c - 1), id(c, c + 1)], [id(c + 1, c), id(c - 1, c)]],
        );
        let mut world = ClothWorld::with_positions(
            grid,
            flat.clone(),
            density,
            Material::Kes(Box::new(connectors)),
        )?;
        // each cell of the specimen lumps its mass ρ·h² on its four corners
        for (k, m) in world.mass.iter_mut().enumerate() {
            if self.kept[k] {
                *m = 0.0;
            }
        }
        for i in 0..grid.nu - 1 {
            for j in 0..grid.nv - 1 {
                let corners = grid.cell_corners(i, j);
                if corners.iter().all(|&q| self.kept[q]) {
                    corners
                        .iter()
                        .for_each(|&q| world.mass[q] += 0.25 * density * h * h);
                }
            }
        }
        for (k, p) in flat.iter().enumerate() {
            if !self.kept[k] || self.on_disc[k] {
                world.add_pin(Pin {
                    particle: k,
                    position: *p,
                    velocity: Vec3::zeros(),
                });
            }
        }
        Ok(world)
    }

    /// The flat positions with the anchors in their places on the rim \[m\].
    pub fn positions(&self) -> Vec<Vec3> {
        let mut x = self.flat.clone();
        for &(k, p) in &self.anchors {
            x[k] = p;
        }
        x
    }
}

/// The yarns leaving the disc and the anchors: (particle, its place on the rim \[m\]).
type ClampedRim = (Vec<ClampedYarn>, Vec<(usize, Vec3)>);

/// The yarns leaving the disc (radius `disc` [m]) between a held and a free particle of the
/// specimen, each with its anchor at the yarn's crossing of the rim: the held particle when it
/// lies within `on_rim` [m] of the rim, else a particle of the square outside the specimen
/// (one with no specimen particle among its eight neighbours first, then the nearest) moved to
/// the crossing. `Err` when the square has too few such particles (a very coarse cell).
fn clamp_at_rim(
    grid: &Grid,
    flat: &[Vec3],
    kept: &[bool],
    on_disc: &[bool],
    disc: f64,
    on_rim: f64,
) -> Result<ClampedRim, LabError> {
    let (nu, nv) = (grid.nu, grid.nv);
    let radius = |p: &Vec3| (p.x * p.x + p.z * p.z).sqrt();
    let isolated = |k: usize| {
        let (i, j) = grid.coords(k);
        (i.saturating_sub(1)..=(i + 1).min(nu - 1))
            .all(|a| (j.saturating_sub(1)..=(j + 1).min(nv - 1)).all(|b| !kept[grid.index(a, b)]))
    };
    let mut spare: Vec<(usize, bool)> = (0..grid.len())
        .filter(|&k| !kept[k])
        .map(|k| (k, isolated(k)))
        .collect();
    let mut yarns = Vec::new();
    let mut anchors = Vec::new();
    for k in 0..grid.len() {
        let (i, j) = grid.coords(k);
        for q in [
            (i + 1 < nu).then(|| grid.index(i + 1, j)),
            (j + 1 < nv).then(|| grid.index(i, j + 1)),
        ]
        .into_iter()
        .flatten()
        {
            if !(kept[k] && kept[q]) || on_disc[k] == on_disc[q] {
                continue;
            }
            let (held, free) = if on_disc[k] { (k, q) } else { (q, k) };
            let (p, d) = (flat[held], flat[free] - flat[held]);
            let anchor = if radius(&p) >= disc - on_rim {
                held
            } else {
                // |p + t·d| = R on the segment, t in (0, 1): p inside, p + d outside
                let (a, b, c) = (d.norm_squared(), p.dot(&d), p.norm_squared() - disc * disc);
                let t = (-b + (b * b - a * c).max(0.0).sqrt()) / a;
                let at = p + d * t;
                let best = spare
                    .iter()
                    .enumerate()
                    .min_by(|(_, x), (_, y)| {
                        let key = |s: &(usize, bool)| (!s.1, (flat[s.0] - at).norm());
                        let (kx, ky) = (key(x), key(y));
                        kx.0.cmp(&ky.0).then(kx.1.total_cmp(&ky.1))
                    })
                    .map(|(n, _)| n)
                    .ok_or_else(|| {
                        LabError::Option(format!(
                            "cell = {} mm: too coarse: the square around the specimen has too \
                             few particles to anchor the yarns at the disc's rim",
                            grid.h_warp * 1e3
                        ))
                    })?;
                let (slot, _) = spare.swap_remove(best);
                anchors.push((slot, at));
                slot
            };
            yarns.push(ClampedYarn {
                held: held as u32,
                free: free as u32,
                anchor: anchor as u32,
            });
        }
    }
    Ok((yarns, anchors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::LawState;

    /// Six laws with quadratic toes (whose energy `elastic_energy` integrates), friction off.
    fn laws() -> KesLaws {
        let mut laws = crate::cloth::connectors::tangent_test_laws();
        for d in 0..2 {
            for f in [
                &mut laws.traction[d].friction,
                &mut laws.bending[d].friction,
                &mut laws.shear[d].friction,
            ] {
                (f.level, f.mu) = (0.0, 0.0);
            }
        }
        laws
    }

    /// Every yarn leaving the disc is clamped on the rim: its anchor lies on the 9 cm circle
    /// (1e-12 m), on the segment between its held and its free particle (or is the held particle,
    /// on the rim to h/100); every held–free neighbour pair of the specimen along a yarn has one;
    /// the anchors are distinct held particles outside the specimen. At 10 and 5 mm, with the
    /// disc's centre on a particle and on a cell's centre.
    #[test]
    fn yarns_are_clamped_where_they_cross_the_rim() {
        let disc = 0.5 * DISC_DIAMETER_M;
        for (cell, shift) in [(0.01, 0.0), (0.01, 0.5), (0.005, 0.0), (0.005, 0.5)] {
            let s = Specimen::placed(cell, shift).unwrap();
            let (g, x) = (&s.grid, s.positions());
            let mut pairs = 0;
            for k in 0..g.len() {
                let (i, j) = g.coords(k);
                for q in [(i + 1 < g.nu, (i + 1, j)), (j + 1 < g.nv, (i, j + 1))]
                    .into_iter()
                    .filter(|&(ok, _)| ok)
                    .map(|(_, (a, b))| g.index(a, b))
                {
                    if s.kept[k] && s.kept[q] && s.on_disc[k] != s.on_disc[q] {
                        pairs += 1;
                    }
                }
            }
            assert_eq!(s.yarns.len(), pairs, "{cell} m, shift {shift}");
            let mut anchors: Vec<u32> = (s.yarns.iter())
                .filter(|y| y.anchor != y.held)
                .map(|y| y.anchor)
                .collect();
            for y in &s.yarns {
                let [c, b, q] = [y.held, y.free, y.anchor].map(|p| x[p as usize]);
                assert!(s.on_disc[y.held as usize] && !s.on_disc[y.free as usize]);
                assert!(s.kept[y.held as usize] && s.kept[y.free as usize]);
                let r = (q.x * q.x + q.z * q.z).sqrt();
                if y.anchor == y.held {
                    assert!((r - disc).abs() <= 0.01 * g.h_warp);
                    continue;
                }
                assert!((r - disc).abs() < 1e-12, "{cell} m: anchor at r = {r}");
                assert!(!s.kept[y.anchor as usize]);
                // on the segment c–b: collinear, between its ends
                let (u, w) = (q - c, b - q);
                assert!(u.cross(&w).norm() < 1e-15, "{cell} m: off the yarn");
                assert!(u.dot(&w) > 0.0, "{cell} m: not between its ends");
            }
            anchors.sort_unstable();
            let n = anchors.len();
            anchors.dedup();
            assert_eq!(anchors.len(), n, "{cell} m: an anchor used twice");
        }
    }

    /// The flat clamped specimen is the connectors' rest state: with no load the force on every
    /// particle that is not held is zero (to 1e-9 of its weight: round-off); and at a drooped, rippled
    /// specimen every connector force on a free particle near the rim is minus the derivative
    /// of their energy (central differences, friction off), at 10 mm on a shifted lattice.
    #[test]
    fn clamped_specimen_rests_flat_and_its_forces_derive_from_its_energy() {
        let s = Specimen::placed(0.01, 0.3).unwrap();
        let world = s.world(laws(), 0.12).unwrap();
        let n = world.len();
        let mut trial = vec![LawState::default(); world.state_len()];
        let (mut normals, mut f) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
        let v = vec![Vec3::zeros(); n];
        let free: Vec<usize> = (0..n).filter(|&k| !world.is_pinned(k)).collect();
        let weight = 0.12 * s.grid.h_warp.powi(2) * 9.81;
        let flat = world.positions().to_vec();
        let mut unloaded = world.clone();
        unloaded.loads.gravity = [0.0; 3];
        unloaded.forces(&flat, &v, &mut trial, &mut normals, &mut f);
        for &k in &free {
            assert!(
                f[k].norm() < 1e-9 * weight,
                "{:?}: {}",
                s.grid.coords(k),
                f[k]
            );
        }
        let disc = 0.5 * DISC_DIAMETER_M;
        let drooped: Vec<Vec3> = flat
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let r = (p.x * p.x + p.z * p.z).sqrt();
                let u = if world.is_pinned(k) { 0.0 } else { r - disc };
                let ripple = 1.0 + 0.2 * (4.0 * p.z.atan2(p.x)).cos();
                Vec3::new(p.x * (1.0 - 0.3 * u), -4.0 * u * u * ripple - 0.2 * u, p.z)
            })
            .collect();
        unloaded.forces(&drooped, &v, &mut trial, &mut normals, &mut f);
        let Material::Kes(kes) = &unloaded.material else {
            unreachable!()
        };
        let energy = |x: &[Vec3]| kes.elastic_energy(x);
        let near: Vec<usize> = free
            .iter()
            .copied()
            .filter(|&k| s.yarns.iter().any(|y| y.free as usize == k))
            .collect();
        assert!(near.len() > 20);
        let step = 1e-7;
        for &k in &near {
            for axis in 0..3 {
                let (mut xp, mut xm) = (drooped.clone(), drooped.clone());
                xp[k][axis] += step;
                xm[k][axis] -= step;
                let slope = (energy(&xp) - energy(&xm)) / (2.0 * step);
                let tol = 1e-5 * f[k].norm().max(weight);
                assert!(
                    (f[k][axis] + slope).abs() < tol,
                    "{:?} axis {axis}: force {} against -dE/dx {}",
                    s.grid.coords(k),
                    f[k][axis],
                    -slope
                );
            }
        }
    }
}
