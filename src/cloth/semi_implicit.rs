//! Terzopoulos' semi-implicit step (eqs. 28–31): (K(r_t) + M/Δt² + C/2Δt)·r_{t+Δt} = g_t,
//! g_t = f_t + (M/Δt² + C/2Δt)·r_t + (M/Δt − C/2)·v_t, by faer's sparse Cholesky (LU fallback).

use std::time::Instant;

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, Lu, SymbolicLlt, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{MatMut, Side};

use super::terzopoulos::{TerzopoulosParams, TerzopoulosSurface};
use super::world::{ClothWorld, Material};
use super::{ClothError, Grid, Mat3, Vec3};

/// Wall-clock seconds spent in each phase of the semi-implicit steps taken so far.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SemiImplicitTiming {
    /// Building K(r), A and g, with the Dirichlet rows [s].
    pub assembly_s: f64,
    /// Numeric factorisations of A (symbolic analysis included) [s].
    pub factor_s: f64,
    /// Triangular solves [s].
    pub solve_s: f64,
    pub steps: u64,
    /// Numeric factorisations done (fewer than steps when a linear material reuses one).
    pub factorisations: u64,
    /// Factorisations where Cholesky failed (A indefinite) and LU was used.
    pub lu_fallbacks: u64,
}

/// The 3×3-block sparsity of A for one surface: per column node q its sorted row nodes; the
/// scalar matrix is CSC with columns 3q, 3q+1, 3q+2 holding rows 3p..3p+2 of each row node p.
#[derive(Debug, Clone)]
struct Pattern {
    grid: Grid,
    terms: usize,
    /// Start of column node q in `rows` (length nodes + 1).
    start: Vec<usize>,
    rows: Vec<u32>,
    /// Column node of each block.
    block_col: Vec<u32>,
    /// Block index of each (row slot, column slot) of each term: 16 per term.
    term_blocks: Vec<u32>,
    /// Block index of (p, p).
    diag: Vec<u32>,
    symbolic: SymbolicSparseColMat<usize>,
}

impl Pattern {
    fn new(surface: &TerzopoulosSurface) -> Result<Self, ClothError> {
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
        let mut start = Vec::with_capacity(n + 1);
        let mut rows = Vec::new();
        let mut block_col = Vec::new();
        start.push(0);
        for (q, c) in cols.iter_mut().enumerate() {
            c.sort_unstable();
            c.dedup();
            rows.extend_from_slice(c);
            block_col.extend(std::iter::repeat_n(q as u32, c.len()));
            start.push(rows.len());
        }
        let find = |p: u32, q: u32| -> u32 {
            let (s, e) = (start[q as usize], start[q as usize + 1]);
            // every (p, q) pair of a term was inserted above
            let k = rows[s..e].binary_search(&p).unwrap_or(0);
            (s + k) as u32
        };
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
        let mut col_ptr = Vec::with_capacity(3 * n + 1);
        let mut row_idx = Vec::with_capacity(9 * rows.len());
        col_ptr.push(0usize);
        for q in 0..n {
            for _c in 0..3 {
                for &p in &rows[start[q]..start[q + 1]] {
                    row_idx.extend([3 * p as usize, 3 * p as usize + 1, 3 * p as usize + 2]);
                }
                col_ptr.push(row_idx.len());
            }
        }
        let symbolic = SymbolicSparseColMat::new_checked(3 * n, 3 * n, col_ptr, None, row_idx);
        Ok(Self {
            grid,
            terms: surface.len(),
            start,
            rows,
            block_col,
            term_blocks,
            diag,
            symbolic,
        })
    }

    fn matches(&self, surface: &TerzopoulosSurface) -> bool {
        self.grid == *surface.grid() && self.terms == surface.len()
    }

    /// Scalar position of entry (r, c) of block `bi`.
    #[inline]
    fn pos(&self, bi: u32, r: usize, c: usize) -> usize {
        let q = self.block_col[bi as usize] as usize;
        let s = self.start[q];
        let len = self.start[q + 1] - s;
        9 * s + 3 * (bi as usize - s) + 3 * c * len + r
    }

    #[inline]
    fn add(&self, values: &mut [f64], bi: u32, m: &Mat3) {
        for c in 0..3 {
            for r in 0..3 {
                values[self.pos(bi, r, c)] += m[(r, c)];
            }
        }
    }

    #[inline]
    fn get(&self, values: &[f64], bi: u32) -> Mat3 {
        Mat3::from_fn(|r, c| values[self.pos(bi, r, c)])
    }

    #[inline]
    fn set(&self, values: &mut [f64], bi: u32, m: &Mat3) {
        for c in 0..3 {
            for r in 0..3 {
                values[self.pos(bi, r, c)] = m[(r, c)];
            }
        }
    }

    /// Block index of (p, q).
    #[inline]
    fn find(&self, p: usize, q: usize) -> Option<u32> {
        let (s, e) = (self.start[q], self.start[q + 1]);
        self.rows[s..e]
            .binary_search(&(p as u32))
            .ok()
            .map(|k| (s + k) as u32)
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
    pub fn step(&mut self, dt: f64, world: &mut ClothWorld) -> Result<(), ClothError> {
        let Material::Terzopoulos(surface) = &world.material else {
            return Err(ClothError::Invalid(format!(
                "the semi_implicit integrator needs material kind = \"terzopoulos\", not {}",
                world.material.name()
            )));
        };
        let t0 = Instant::now();
        if !self.pattern.as_ref().is_some_and(|p| p.matches(surface)) {
            self.pattern = Some(Pattern::new(surface)?);
            self.symbolic_llt = None;
            self.symbolic_lu = None;
            self.factor = None;
            self.key = None;
        }
        let Some(pattern) = self.pattern.as_ref() else {
            return Err(ClothError::Invalid("no sparsity pattern".into()));
        };
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
        let nnz = pattern.symbolic.row_idx().len();
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
                        pattern.add(values, pattern.term_blocks[16 * ti + 4 * a + b], &m);
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
                pattern.add(values, pattern.diag[p], &(Mat3::identity() * d));
            }
            self.rhs[3 * p..3 * p + 3].copy_from_slice(g.as_slice());
        }
        // Dirichlet rows: r_{t+Δt} = pin target; the pinned columns of A move to g. They are
        // saved with the factorisation, which a linear material reuses.
        let targets: Vec<(usize, Vec3)> = world.pin_targets(dt).collect();
        if !reuse {
            self.pinned_columns.clear();
            for &(p, _) in &targets {
                for bi in pattern.start[p]..pattern.start[p + 1] {
                    let row = pattern.rows[bi] as usize;
                    if !world.is_pinned(row) {
                        self.pinned_columns
                            .push((p, row, pattern.get(values, bi as u32)));
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
                for bi in pattern.start[p]..pattern.start[p + 1] {
                    pattern.set(values, bi as u32, &Mat3::zeros());
                }
                for bi in pattern.start[p]..pattern.start[p + 1] {
                    let q = pattern.rows[bi] as usize;
                    if let Some(b) = pattern.find(p, q) {
                        pattern.set(values, b, &Mat3::zeros());
                    }
                }
                pattern.set(values, pattern.diag[p], &Mat3::identity());
            }
            let a = SparseColMatRef::new(pattern.symbolic.as_ref(), values);
            if self.symbolic_llt.is_none() {
                self.symbolic_llt =
                    SymbolicLlt::try_new(pattern.symbolic.as_ref(), Side::Lower).ok();
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
                        self.symbolic_lu = SymbolicLu::try_new(pattern.symbolic.as_ref()).ok();
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
                self.factor = None;
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
