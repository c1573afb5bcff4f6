//! KES connectors (docs/cloth.md): per-width laws times the width each stands for. Traction
//! F = w·F_t(ε)·k̂ [N], ε = l/h − 1; bending F_k = −w·M(K)·∂φ/∂x_k, K = φ/h [1/m]; shear per
//! cell F_k = −A·F_s(θ)·∂θ/∂x_k [N]. Elastic parts derive from energies, so ΣF = Σx×F = 0.

use crate::kes::Direction;
use crate::material::{BendingLaw, FrictionLaw, LawState, ShearLaw, TractionLaw};
use crate::params::FabricParams;

use super::grid::Grid;
use super::{ClothError, Mat3, Vec3};

mod clamp;
mod forces;
#[cfg(target_arch = "x86_64")]
mod lanes;
mod matrix;
mod tangent;

pub(crate) use clamp::ClampedYarn;
pub use forces::ForceKernel;

use tangent::{
    bending_factor, shear_factor, traction_factor, trial_and_tangent, BendingFactor, ShearFactor,
    TractionFactor,
};

#[cfg(test)]
pub(crate) use matrix::tests::{bent_sheet, tangent_at};
#[cfg(test)]
pub(crate) use tangent::tests::flat_sheet as tangent_test_sheet;
#[cfg(test)]
pub(crate) use tangent::tests::laws as tangent_test_laws;
pub(crate) use tangent::KesTangent;

/// Warp (0) or weft (1), indexing the per-direction laws.
const WARP: u8 = 0;
const WEFT: u8 = 1;

fn direction_name(d: u8) -> &'static str {
    if d == WARP {
        "warp"
    } else {
        "weft"
    }
}

/// A traction connector p_a–p_b along a yarn: width w [m], rest length h [m].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Traction {
    a: u32,
    b: u32,
    dir: u8,
    width: f64,
    rest: f64,
}

/// A bending connector over p_a, p_c, p_b along a yarn; the bending axis is
/// e = p_{e+} − p_{e−} across the yarn, so the signed turning angle φ about e gives K = φ/h.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bending {
    a: u32,
    c: u32,
    b: u32,
    e_plus: u32,
    e_minus: u32,
    dir: u8,
    width: f64,
    rest: f64,
}

/// A shear connector on a cell p00, p10, p01, p11 (area A [m²]); θ is the deviation from a right
/// angle between the cell's mean warp and weft directions. Each cell carries the warp and the
/// weft shear law on half its area.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shear {
    p: [u32; 4],
    area: f64,
}

/// The kind of a connector, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectorKind {
    Traction,
    Bending,
    Shear,
}

/// The six laws of a fabric, each as [warp, weft].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KesLaws {
    pub traction: [TractionLaw; 2],
    pub bending: [BendingLaw; 2],
    pub shear: [ShearLaw; 2],
}

impl KesLaws {
    /// The six laws of a fabric parameter file; a missing law is an error naming it.
    pub fn from_params(params: &FabricParams) -> Result<Self, ClothError> {
        let missing = |dir: Direction, law: &str| {
            ClothError::Invalid(format!(
                "fabric `{}` has no {dir} {law} law (the kes material needs all six)",
                params.fabric
            ))
        };
        let (w, f) = (&params.warp, &params.weft);
        Ok(Self {
            traction: [
                w.traction
                    .ok_or_else(|| missing(Direction::Warp, "traction"))?,
                f.traction
                    .ok_or_else(|| missing(Direction::Weft, "traction"))?,
            ],
            bending: [
                w.bending
                    .ok_or_else(|| missing(Direction::Warp, "bending"))?,
                f.bending
                    .ok_or_else(|| missing(Direction::Weft, "bending"))?,
            ],
            shear: [
                w.shear.ok_or_else(|| missing(Direction::Warp, "shear"))?,
                f.shear.ok_or_else(|| missing(Direction::Weft, "shear"))?,
            ],
        })
    }
}

/// Every KES connector of a grid with its committed friction state.
#[derive(Debug, Clone, PartialEq)]
pub struct KesConnectors {
    pub laws: KesLaws,
    traction: Vec<Traction>,
    bending: Vec<Bending>,
    shear: Vec<Shear>,
    /// Committed law states: traction, then bending, then two per shear cell (warp, weft).
    states: Vec<LawState>,
    grid: Grid,
    /// How `add_forces` evaluates the connectors (the same numbers either way).
    pub kernel: ForceKernel,
}

/// Signed turning angle φ = atan2((r_a × r_b)·ê, r_a·r_b) with r_a = c − a, r_b = b − c, and
/// its gradients with respect to r_a, r_b and e.
#[inline(always)]
fn turning_angle(xa: Vec3, xc: Vec3, xb: Vec3, e: Vec3) -> (f64, Vec3, Vec3, Vec3) {
    let ra = xc - xa;
    let rb = xb - xc;
    let le = e.norm();
    // one division for the axis (1/|e|), one for the gradients (1/(x² + y²))
    let inv_le = if le > 0.0 { 1.0 / le } else { 0.0 };
    let eh = e * inv_le;
    let rab = ra.cross(&rb);
    let y = rab.dot(&eh);
    let x = ra.dot(&rb);
    let den = x * x + y * y;
    if den == 0.0 || le == 0.0 {
        return (0.0, Vec3::zeros(), Vec3::zeros(), Vec3::zeros());
    }
    let phi = y.atan2(x);
    let inv = 1.0 / den;
    let d_ra = (rb.cross(&eh) * x - rb * y) * inv;
    let d_rb = (eh.cross(&ra) * x - ra * y) * inv;
    let d_e = (rab - eh * rab.dot(&eh)) * (x * inv * inv_le);
    (phi, d_ra, d_rb, d_e)
}

/// Shear angle θ = asin(t̂_w·t̂_f) of a cell with mean warp and weft directions, and its
/// gradients with respect to t_w and t_f.
#[inline(always)]
fn shear_angle(p: [Vec3; 4]) -> (f64, Vec3, Vec3) {
    let tw = (p[1] - p[0] + p[3] - p[2]) * 0.5;
    let tf = (p[2] - p[0] + p[3] - p[1]) * 0.5;
    let (lw, lf) = (tw.norm(), tf.norm());
    if lw == 0.0 || lf == 0.0 {
        return (0.0, Vec3::zeros(), Vec3::zeros());
    }
    // reciprocals once: two divisions per cell instead of twelve
    let (inv_lw, inv_lf) = (1.0 / lw, 1.0 / lf);
    let (uw, uf) = (tw * inv_lw, tf * inv_lf);
    let c = uw.dot(&uf).clamp(-1.0, 1.0);
    let inv_s = 1.0 / (1.0 - c * c).sqrt().max(1e-12);
    let theta = c.asin();
    let d_tw = (uf - uw * c) * (inv_lw * inv_s);
    let d_tf = (uw - uf * c) * (inv_lf * inv_s);
    (theta, d_tw, d_tf)
}

/// ∫₀^ε F_el dε of a traction law per unit width and length [N/m · 1 = J/m²].
fn traction_energy_density(law: &TractionLaw, state: &LawState, eps: f64) -> f64 {
    if eps <= 0.0 {
        return 0.0;
    }
    let (k, ec, fc) = if state.aligned {
        (law.k_t, law.eps1_aligned(), law.f1_aligned())
    } else {
        (law.k_t, law.eps1, law.f1)
    };
    let a = (k / ec) * (1.0 - fc / (k * ec));
    let b = 2.0 * fc / ec - k;
    let toe = |e: f64| a * e * e * e / 3.0 + b * e * e / 2.0;
    if eps < ec {
        toe(eps)
    } else {
        let d = eps - ec;
        toe(ec) + fc * d + 0.5 * k * d * d
    }
}

/// Largest tangent of a friction term per unit strain (2·level/length at a reversal).
fn friction_stiffness(f: &FrictionLaw, load: f64) -> f64 {
    let len = match f.shape {
        crate::friction::FrictionShape::Dahl { eps_f, .. } => eps_f,
        crate::friction::FrictionShape::Bs2 { eps_f, eta, .. } => eta * eps_f,
    };
    2.0 * f.level_at(load) / len
}

impl KesConnectors {
    /// Builds every connector of `grid` with the fabric's laws, friction states virgin.
    pub fn new(grid: &Grid, laws: KesLaws) -> Self {
        let (nu, nv) = (grid.nu, grid.nv);
        let id = |i: usize, j: usize| grid.index(i, j) as u32;
        let bw = Grid::border_weight;
        let mut traction = Vec::new();
        for j in 0..nv {
            for i in 0..nu {
                if i + 1 < nu {
                    traction.push(Traction {
                        a: id(i, j),
                        b: id(i + 1, j),
                        dir: WARP,
                        width: grid.h_weft * bw(j, nv),
                        rest: grid.h_warp,
                    });
                }
                if j + 1 < nv {
                    traction.push(Traction {
                        a: id(i, j),
                        b: id(i, j + 1),
                        dir: WEFT,
                        width: grid.h_warp * bw(i, nu),
                        rest: grid.h_weft,
                    });
                }
            }
        }
        let mut bending = Vec::new();
        for j in 0..nv {
            for i in 0..nu {
                if i >= 1 && i + 1 < nu {
                    bending.push(Bending {
                        a: id(i - 1, j),
                        c: id(i, j),
                        b: id(i + 1, j),
                        e_plus: id(i, j.saturating_sub(1)),
                        e_minus: id(i, (j + 1).min(nv - 1)),
                        dir: WARP,
                        width: grid.h_weft * bw(j, nv),
                        rest: grid.h_warp,
                    });
                }
                if j >= 1 && j + 1 < nv {
                    bending.push(Bending {
                        a: id(i, j - 1),
                        c: id(i, j),
                        b: id(i, j + 1),
                        e_plus: id((i + 1).min(nu - 1), j),
                        e_minus: id(i.saturating_sub(1), j),
                        dir: WEFT,
                        width: grid.h_warp * bw(i, nu),
                        rest: grid.h_weft,
                    });
                }
            }
        }
        let mut shear = Vec::new();
        for j in 0..nv - 1 {
            for i in 0..nu - 1 {
                shear.push(Shear {
                    p: [id(i, j), id(i + 1, j), id(i, j + 1), id(i + 1, j + 1)],
                    area: grid.h_warp * grid.h_weft,
                });
            }
        }
        let n_states = traction.len() + bending.len() + 2 * shear.len();
        Self {
            laws,
            traction,
            bending,
            shear,
            states: vec![LawState::default(); n_states],
            grid: *grid,
            kernel: ForceKernel::default(),
        }
    }

    /// Keeps the connectors whose particles are all in `keep` (a specimen cut from the
    /// grid: a disc); a bending axis end outside is replaced by the centre particle, and a
    /// bending connector with neither axis end kept is dropped. States restart virgin.
    pub(crate) fn retain_particles(&mut self, keep: &[bool]) {
        let kept = |p: u32| keep.get(p as usize).copied().unwrap_or(false);
        self.traction.retain(|c| kept(c.a) && kept(c.b));
        self.bending.retain_mut(|c| {
            if !(kept(c.a) && kept(c.c) && kept(c.b)) {
                return false;
            }
            if !kept(c.e_plus) {
                c.e_plus = c.c;
            }
            if !kept(c.e_minus) {
                c.e_minus = c.c;
            }
            c.e_plus != c.e_minus
        });
        self.shear.retain(|c| c.p.iter().all(|&p| kept(p)));
        let n = self.traction.len() + self.bending.len() + 2 * self.shear.len();
        self.states = vec![LawState::default(); n];
    }

    /// Number of connectors (a shear cell counts once).
    pub fn len(&self) -> usize {
        self.traction.len() + self.bending.len() + self.shear.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of law states (a shear cell has two: warp and weft).
    pub(crate) fn state_len(&self) -> usize {
        self.states.len()
    }

    /// The committed law states.
    pub(crate) fn states(&self) -> &[LawState] {
        &self.states
    }

    /// Commits the trial states of an accepted step (swapped in: `trial` gets the old ones).
    pub(crate) fn commit(&mut self, trial: &mut Vec<LawState>) {
        if trial.len() == self.states.len() {
            std::mem::swap(&mut self.states, trial);
        }
    }

    /// Replaces the committed states (a step taken back); ignored when the count differs.
    pub(crate) fn set_states(&mut self, states: &[LawState]) {
        if states.len() == self.states.len() {
            self.states.copy_from_slice(states);
        }
    }

    /// Kind of connector `k` (in the order traction, bending, shear).
    pub fn kind(&self, k: usize) -> ConnectorKind {
        if k < self.traction.len() {
            ConnectorKind::Traction
        } else if k < self.traction.len() + self.bending.len() {
            ConnectorKind::Bending
        } else {
            ConnectorKind::Shear
        }
    }

    /// Names connector `k` by kind, direction and grid coordinates.
    pub fn describe(&self, k: usize) -> String {
        let g = &self.grid;
        let at = |p: u32| {
            let (i, j) = g.coords(p as usize);
            format!("({i},{j})")
        };
        let nt = self.traction.len();
        let nb = self.bending.len();
        if k < nt {
            let c = &self.traction[k];
            format!("{} traction {}-{}", direction_name(c.dir), at(c.a), at(c.b))
        } else if k < nt + nb {
            let c = &self.bending[k - nt];
            format!(
                "{} bending {}-{}-{}",
                direction_name(c.dir),
                at(c.a),
                at(c.c),
                at(c.b)
            )
        } else {
            let c = &self.shear[k - nt - nb];
            format!("shear cell {}-{}", at(c.p[0]), at(c.p[3]))
        }
    }

    /// Traction connector `c` from `state`: the trial state, the force on p_a (−it on p_b)
    /// and, with `TANGENT`, its factor of K from the same law evaluation.
    #[inline(always)]
    fn traction_force<const TANGENT: bool>(
        &self,
        c: &Traction,
        x: &[Vec3],
        state: &LawState,
    ) -> (LawState, Vec3, Option<TractionFactor>) {
        let d = x[c.b as usize] - x[c.a as usize];
        let l = d.norm();
        let law = &self.laws.traction[c.dir as usize];
        let strain = l / c.rest - 1.0;
        let (st, force, factor) = if TANGENT {
            let (st, force, tau) = trial_and_tangent(law, state, strain);
            (st, force, Some(traction_factor(c, d, l, force, tau)))
        } else {
            let (st, force) = forces::trial(law, state, strain);
            (st, force, None)
        };
        let fv = if l > 0.0 {
            d * (c.width * force / l)
        } else {
            Vec3::zeros()
        };
        (st, fv, factor)
    }

    /// Bending connector `c` from `state`: the trial state, the forces on
    /// p_a, p_c, p_b, p_{e+}, p_{e−} and, with `TANGENT`, its factor of K.
    #[inline(always)]
    fn bending_force<const TANGENT: bool>(
        &self,
        c: &Bending,
        x: &[Vec3],
        state: &LawState,
    ) -> (LawState, [Vec3; 5], Option<BendingFactor>) {
        let (ep, em) = (x[c.e_plus as usize], x[c.e_minus as usize]);
        let (phi, d_ra, d_rb, d_e) =
            turning_angle(x[c.a as usize], x[c.c as usize], x[c.b as usize], ep - em);
        let law = &self.laws.bending[c.dir as usize];
        let (st, moment, factor) = if TANGENT {
            let (st, moment, tau) = trial_and_tangent(law, state, phi / c.rest);
            (st, moment, Some(bending_factor(c, [d_ra, d_rb, d_e], tau)))
        } else {
            let (st, moment) = forces::trial(law, state, phi / c.rest);
            (st, moment, None)
        };
        let q = -c.width * moment;
        let forces = [-d_ra * q, (d_ra - d_rb) * q, d_rb * q, d_e * q, -d_e * q];
        (st, forces, factor)
    }

    /// Shear cell `c` from its (warp, weft) states: the trial states, the forces on its
    /// four corners and, with `TANGENT`, its factor of K.
    #[inline(always)]
    fn shear_force<const TANGENT: bool>(
        &self,
        c: &Shear,
        x: &[Vec3],
        states: [&LawState; 2],
    ) -> ([LawState; 2], [Vec3; 4], Option<ShearFactor>) {
        let (theta, d_tw, d_tf) = shear_angle(c.p.map(|i| x[i as usize]));
        let [warp, weft] = &self.laws.shear;
        let (sw, fw, sf, ff, factor) = if TANGENT {
            let (sw, fw, tw) = trial_and_tangent(warp, states[0], theta);
            let (sf, ff, tf) = trial_and_tangent(weft, states[1], theta);
            (sw, fw, sf, ff, Some(shear_factor(c, [d_tw, d_tf], tw + tf)))
        } else {
            let (sw, fw) = forces::trial(warp, states[0], theta);
            let (sf, ff) = forces::trial(weft, states[1], theta);
            (sw, fw, sf, ff, None)
        };
        let q = -c.area * 0.5 * (fw + ff);
        let (hw, hf) = (d_tw * (0.5 * q), d_tf * (0.5 * q));
        ([sw, sf], [-(hw + hf), hw - hf, hf - hw, hw + hf], factor)
    }

    /// The forces of connector `k` alone at positions `x` (from its committed state), as
    /// (particle, force) pairs; a particle may appear twice (a bending axis end on a border).
    pub fn connector_forces(&self, x: &[Vec3], k: usize) -> Vec<(usize, Vec3)> {
        let nt = self.traction.len();
        let nb = self.bending.len();
        if k < nt {
            let c = &self.traction[k];
            let (_, fv, _) = self.traction_force::<false>(c, x, &self.states[k]);
            vec![(c.a as usize, fv), (c.b as usize, -fv)]
        } else if k < nt + nb {
            let c = &self.bending[k - nt];
            let (_, fs, _) = self.bending_force::<false>(c, x, &self.states[k]);
            [c.a, c.c, c.b, c.e_plus, c.e_minus]
                .into_iter()
                .zip(fs)
                .map(|(p, f)| (p as usize, f))
                .collect()
        } else {
            let c = &self.shear[k - nt - nb];
            let s = nt + nb + 2 * (k - nt - nb);
            let (_, fs, _) =
                self.shear_force::<false>(c, x, [&self.states[s], &self.states[s + 1]]);
            c.p.into_iter()
                .zip(fs)
                .map(|(p, f)| (p as usize, f))
                .collect()
        }
    }

    /// Elastic energy Σ w·h·∫F_el dε + Σ w·h·½k_b(K − K₀)² + Σ A·½k_s(θ − θ₀)² \[J\] at `x`.
    pub(crate) fn elastic_energy(&self, x: &[Vec3]) -> f64 {
        let mut e = 0.0;
        for (k, c) in self.traction.iter().enumerate() {
            let l = (x[c.b as usize] - x[c.a as usize]).norm();
            let law = &self.laws.traction[c.dir as usize];
            e += c.width * c.rest * traction_energy_density(law, &self.states[k], l / c.rest - 1.0);
        }
        for c in &self.bending {
            let (phi, ..) = turning_angle(
                x[c.a as usize],
                x[c.c as usize],
                x[c.b as usize],
                x[c.e_plus as usize] - x[c.e_minus as usize],
            );
            let law = &self.laws.bending[c.dir as usize];
            e += c.width * c.rest * 0.5 * law.k_b * (phi / c.rest - law.k0).powi(2);
        }
        for c in &self.shear {
            let (theta, ..) = shear_angle(c.p.map(|i| x[i as usize]));
            for law in &self.laws.shear {
                e += 0.5 * c.area * 0.5 * law.k_s * (theta - law.theta0).powi(2);
            }
        }
        e
    }

    /// Adds to each particle's 3×3 block an estimate of its stiffness [N/m] at `x`: k·k̂k̂ᵀ along
    /// each traction connector (mid-range elastic and friction tangents), isotropic terms for
    /// bending and shear; the implicit solvers' block-diagonal scaling.
    pub(crate) fn stiffness_blocks(&self, x: &[Vec3], out: &mut [Mat3]) {
        self.stiffness_edges(x, |a, b, blk| {
            out[a] += blk;
            out[b] += blk;
        });
        // per law: the elastic and the friction's largest tangent
        let kb = (self.laws.bending).map(|l| l.k_b + friction_stiffness(&l.friction, 0.0));
        for c in &self.bending {
            let k = c.width * kb[c.dir as usize] / c.rest.powi(3);
            for (p, f) in [(c.a, 1.0), (c.b, 1.0), (c.c, 4.0)] {
                let (blk, fk) = (&mut out[p as usize], f * k);
                blk[(0, 0)] += fk;
                blk[(1, 1)] += fk;
                blk[(2, 2)] += fk;
            }
        }
        let (hw, hf) = (self.grid.h_warp, self.grid.h_weft);
        let ks: f64 = self
            .laws
            .shear
            .iter()
            .map(|l| 0.5 * (l.k_s + friction_stiffness(&l.friction, 0.0)))
            .sum();
        for c in &self.shear {
            let k = c.area * ks / (2.0 * hw * hf);
            for &p in &c.p {
                let blk = &mut out[p as usize];
                blk[(0, 0)] += k;
                blk[(1, 1)] += k;
                blk[(2, 2)] += k;
            }
        }
    }

    /// k·d̂d̂ᵀ [N/m] of each traction connector (a, b) at `x`, d̂ along p_b − p_a, k the
    /// mid-range tangent of `stiffness_blocks`: the coupling of the stretch preconditioner.
    pub(crate) fn stiffness_edges(&self, x: &[Vec3], mut f: impl FnMut(usize, usize, Mat3)) {
        let kt = (self.laws.traction)
            .map(|l| l.k_t * (1.0 + l.friction.mu) + friction_stiffness(&l.friction, 0.0));
        for c in &self.traction {
            // mid-range tangents: the elastic slope runs from ~0 (toe) to k_t(1 + μ) (line),
            // the friction tangent from 0 to 2·level/ε_f; the mid-range takes a third fewer
            // Broyden iterations than the upper bounds on the hanging sheets
            let k = 0.5 * c.width * kt[c.dir as usize] / c.rest;
            let d = x[c.b as usize] - x[c.a as usize];
            let l2 = d.norm_squared();
            if l2 > 0.0 {
                f(c.a as usize, c.b as usize, d * d.transpose() * (k / l2));
            }
        }
    }
}

#[cfg(test)]
mod tests;
