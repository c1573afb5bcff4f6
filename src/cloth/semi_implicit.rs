//! Terzopoulos' semi-implicit step (eqs. 28–31): (K(r_t) + M/Δt² + C/2Δt)·r_{t+Δt} = g_t,
//! g_t = f_t + (M/Δt² + C/2Δt)·r_t + (M/Δt − C/2)·v_t, by faer's sparse Cholesky (LU fallback).

use std::time::Instant;

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, Lu, SymbolicLlt, SymbolicLu};
use faer::sparse::SparseColMatRef;
use faer::{MatMut, Side};

use super::block_sparse::BlockPattern;
use super::terzopoulos::{TerzopoulosParams, TerzopoulosSurface};
use super::world::{ClothWorld, Material};
use super::{ClothError, Grid, Mat3, Vec3};

/// Wall-clock seconds spent in each phase of the semi-implicit steps taken so far.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SemiImplicitTiming {
    /// Building K(r), A and g, with the Dirichlet rows \[s\].
    pub assembly_s: f64,
    /// Numeric factorisations of A (symbolic analysis included) \[s\].
    pub factor_s: f64,
    /// Triangular solves \[s\].
    pub solve_s: f64,
    pub steps: u64,
    /// Numeric factorisations done (fewer than steps when a linear material reuses one).
    pub factorisations: u64,
    /// Factorisations where Cholesky failed (A indefinite) and LU was used.
    pub lu_fallbacks: u64,
}

/// The block sparsity of A for one surface, with where each term's blocks and the diagonal lie.
#[derive(Debug, Clone)]
struct Pattern {
    grid: Grid,
    terms: usize,
    blocks: BlockPattern,
    /// Block index of each (row slot, column slot) of each term: 16 per term.
    term_blocks: Vec<u32>,
    /// Block index of (p, p).
    diag: Vec<u32>,
}

impl Pattern {
    fn new(surface: &TerzopoulosSurface) -> Self {
        let grid = *surface.grid();
        let n = grid.len();
        let mut cols: Vec<Vec<u32>> = (0..n).map(|p| vec![p as u32]).collect();
        for t in surface.terms() {
            for a in 0..t.len {
                for b in 0..t.len {
                    cols[t.nodes[b] as usize].push(t.nodes[a]);
                }
            }
        }
        let blocks = BlockPattern::new(cols);
        // every (p, q) pair of a term was inserted above
        let find = |p: u32, q: u32| blocks.held(p as usize, q as usize);
        let mut term_blocks = Vec::with_capacity(16 * surface.len());
        for t in surface.terms() {
            for a in 0..4 {
                for b in 0..4 {
                    term_blocks.push(if a < t.len && b < t.len {
                        find(t.nodes[a], t.nodes[b])
                    } else {
                        0
                    });
                }
            }
        }
        let diag = (0..n as u32).map(|p| find(p, p)).collect();
        Self {
            grid,
            terms: surface.len(),
            blocks,
            term_blocks,
            diag,
        }
    }

    fn matches(&self, surface: &TerzopoulosSurface) -> bool {
        self.grid == *surface.grid() && self.terms == surface.len()
    }
}

#[derive(Debug, Clone)]
enum Factor {
    Llt(Llt<usize, f64>),
    Lu(Box<Lu<usize, f64>>),
}

/// What a reusable factorisation of a linear material depends on.
#[derive(Debug, Clone, PartialEq)]
struct FactorKey {
    dt: f64,
    params: TerzopoulosParams,
    pinned: Vec<bool>,
    mass: Vec<f64>,
    area: Vec<f64>,
    anchors: Vec<(usize, f64)>,
}

/// Scratch and cached factorisations of the semi-implicit integrator.
#[derive(Debug, Default, Clone)]
pub struct SemiImplicitStepper {
    pattern: Option<Pattern>,
    values: Vec<f64>,
    rhs: Vec<f64>,
    normals: Vec<Vec3>,
    force: Vec<Vec3>,
    rest_force: Vec<Vec3>,
    symbolic_llt: Option<SymbolicLlt<usize>>,
    symbolic_lu: Option<SymbolicLu<usize>>,
    factor: Option<Factor>,
    key: Option<FactorKey>,
    /// (pinned node, free row node, block A_row,pinned) of the current factorisation.
    pinned_columns: Vec<(usize, usize, Mat3)>,
    pub timing: SemiImplicitTiming,
}

impl SemiImplicitStepper {
    /// One step of eqs. 28–31: positions from the sparse solve, v = (r_{t+Δt} − r_t)/Δt
    /// (eq. 31), pins by Dirichlet rows. Anchor springs are linear in r and go into A.
    pub(crate) fn step(&mut self, dt: f64, world: &mut ClothWorld) -> Result<(), ClothError> {
        let Material::Terzopoulos(surface) = &world.material else {
            return Err(ClothError::Invalid(format!(
                "the semi_implicit integrator needs material kind = \"terzopoulos\", not {}",
                world.material.name()
            )));
        };
        let t0 = Instant::now();
        if !self.pattern.as_ref().is_some_and(|p| p.matches(surface)) {
            self.pattern = None;
            self.symbolic_llt = None;
            self.symbolic_lu = None;
            self.factor = None;
            self.key = None;
        }
        let pattern = &*self.pattern.get_or_insert_with(|| Pattern::new(surface));
        let n = world.len();
        let linear = surface.params.is_linear();
        let key = FactorKey {
            dt,
            params: surface.params,
            pinned: world.pinned().to_vec(),
            mass: world.mass.clone(),
            area: world.area.clone(),
            anchors: world
                .anchors
                .iter()
                .map(|a| (a.particle, a.stiffness))
                .collect(),
        };
        let reuse = linear && self.factor.is_some() && self.key.as_ref() == Some(&key);

        // External forces f_t (loads, collision potential) without the anchors, which go in A.
        self.normals.resize(n, Vec3::zeros());
        self.force.clear();
        self.force.resize(n, Vec3::zeros());
        world.add_external_forces(
            &world.x,
            &world.v,
            &mut self.normals,
            &mut self.force,
            false,
        );
        self.rest_force.clear();
        self.rest_force.resize(n, Vec3::zeros());
        world.grid.normals(&world.x, &mut self.normals);
        let nnz = pattern.blocks.symbolic.row_idx().len();
        let values = &mut self.values;
        if !reuse {
            values.clear();
            values.resize(nnz, 0.0);
        }
        {
            let x = &world.x;
            let rest_force = &mut self.rest_force;
            if reuse {
                // only b = K r⁰ (rest-shape force) is needed
                surface.stiffness(x, &self.normals, |_, _, _, _| {}, rest_force);
            } else {
                surface.stiffness(
                    x,
                    &self.normals,
                    |ti, a, b, m| {
                        pattern
                            .blocks
                            .add(values, pattern.term_blocks[16 * ti + 4 * a + b], &m);
                    },
                    rest_force,
                );
            }
        }
        let gamma = surface.params.damping_density;
        self.rhs.clear();
        self.rhs.resize(3 * n, 0.0);
        for p in 0..n {
            let m = world.mass[p];
            let c = gamma * world.area[p];
            let diag = m / (dt * dt) + c / (2.0 * dt);
            let mut g = self.force[p]
                + self.rest_force[p]
                + world.x[p] * diag
                + world.v[p] * (m / dt - 0.5 * c);
            let mut d = diag;
            for a in world.anchors.iter().filter(|a| a.particle == p) {
                d += a.stiffness;
                g += Vec3::from(a.point) * a.stiffness;
            }
            if !reuse {
                pattern
                    .blocks
                    .add(values, pattern.diag[p], &(Mat3::identity() * d));
            }
            self.rhs[3 * p..3 * p + 3].copy_from_slice(g.as_slice());
        }
        // Dirichlet rows: r_{t+Δt} = pin target; the pinned columns of A move to g. They are
        // saved with the factorisation, which a linear material reuses.
        let targets: Vec<(usize, Vec3)> = world.pin_targets(dt).collect();
        if !reuse {
            self.pinned_columns.clear();
            for &(p, _) in &targets {
                for bi in pattern.blocks.start[p]..pattern.blocks.start[p + 1] {
                    let row = pattern.blocks.rows[bi] as usize;
                    if !world.is_pinned(row) {
                        self.pinned_columns
                            .push((p, row, pattern.blocks.get(values, bi as u32)));
                    }
                }
            }
        }
        for &(p, row, blk) in &self.pinned_columns {
            if let Some((_, target)) = targets.iter().find(|(q, _)| *q == p) {
                let d = blk * target;
                for r in 0..3 {
                    self.rhs[3 * row + r] -= d[r];
                }
            }
        }
        for &(p, target) in &targets {
            self.rhs[3 * p..3 * p + 3].copy_from_slice(target.as_slice());
        }
        self.timing.assembly_s += t0.elapsed().as_secs_f64();

        if !reuse {
            let t1 = Instant::now();
            for &(p, _) in &targets {
                for bi in pattern.blocks.start[p]..pattern.blocks.start[p + 1] {
                    pattern.blocks.set(values, bi as u32, &Mat3::zeros());
                }
                for bi in pattern.blocks.start[p]..pattern.blocks.start[p + 1] {
                    let q = pattern.blocks.rows[bi] as usize;
                    if let Some(b) = pattern.blocks.find(p, q) {
                        pattern.blocks.set(values, b, &Mat3::zeros());
                    }
                }
                pattern
                    .blocks
                    .set(values, pattern.diag[p], &Mat3::identity());
            }
            let a = SparseColMatRef::new(pattern.blocks.symbolic.as_ref(), values);
            if self.symbolic_llt.is_none() {
                self.symbolic_llt =
                    SymbolicLlt::try_new(pattern.blocks.symbolic.as_ref(), Side::Lower).ok();
            }
            let llt = self
                .symbolic_llt
                .clone()
                .and_then(|s| Llt::try_new_with_symbolic(s, a, Side::Lower).ok());
            self.factor = match llt {
                Some(f) => Some(Factor::Llt(f)),
                None => {
                    // K(r) indefinite (compressed prescribed-metric membrane): LU
                    if self.symbolic_lu.is_none() {
                        self.symbolic_lu =
                            SymbolicLu::try_new(pattern.blocks.symbolic.as_ref()).ok();
                    }
                    self.timing.lu_fallbacks += 1;
                    self.symbolic_lu
                        .clone()
                        .and_then(|s| Lu::try_new_with_symbolic(s, a).ok())
                        .map(|f| Factor::Lu(Box::new(f)))
                }
            };
            self.key = Some(key);
            self.timing.factor_s += t1.elapsed().as_secs_f64();
            self.timing.factorisations += 1;
        }
        let t2 = Instant::now();
        let rhs = MatMut::from_column_major_slice_mut(&mut self.rhs, 3 * n, 1);
        match &self.factor {
            Some(Factor::Llt(f)) => f.solve_in_place(rhs),
            Some(Factor::Lu(f)) => f.solve_in_place(rhs),
            None => {
                self.key = None;
                return Err(ClothError::BlowUp {
                    step: world.steps,
                    time: world.time,
                    reason: "the semi-implicit system is singular (Cholesky and LU failed)".into(),
                    connector: world.worst_connector(),
                });
            }
        }
        self.timing.solve_s += t2.elapsed().as_secs_f64();
        self.timing.steps += 1;
        let inv_dt = 1.0 / dt;
        for p in 0..n {
            let r = Vec3::new(self.rhs[3 * p], self.rhs[3 * p + 1], self.rhs[3 * p + 2]);
            world.v[p] = (r - world.x[p]) * inv_dt;
            world.x[p] = r;
        }
        world.advance_pins(dt);
        Ok(())
    }
}
