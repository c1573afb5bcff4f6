//! The stretch preconditioner of the Broyden step: P = D + Σ_edges coupling, D_i the block
//! scaling and −k·d̂d̂ᵀ [N/m] off the diagonal for each traction connector (or spring), so that
//! P ≈ M/Δt² + C/Δt + K_stretch; factored by faer's sparse Cholesky (pinned rows: identity).

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{MatMut, Side};

use super::world::{ClothWorld, Material};
use super::{Mat3, Vec3};

/// The 3×3-block sparsity of P: per column node q its sorted row nodes; the scalar matrix is
/// CSC with columns 3q, 3q+1, 3q+2 holding rows 3p..3p+2 of each row node p.
#[derive(Debug, Clone)]
struct Pattern {
    nodes: usize,
    edges: Vec<(u32, u32)>,
    start: Vec<usize>,
    rows: Vec<u32>,
    symbolic: SymbolicSparseColMat<usize>,
    symbolic_llt: SymbolicLlt<usize>,
}

impl Pattern {
    fn new(nodes: usize, edges: Vec<(u32, u32)>) -> Option<Self> {
        let mut cols: Vec<Vec<u32>> = (0..nodes).map(|p| vec![p as u32]).collect();
        for &(a, b) in &edges {
            cols[a as usize].push(b);
            cols[b as usize].push(a);
        }
        let mut start = Vec::with_capacity(nodes + 1);
        let mut rows = Vec::new();
        start.push(0);
        for c in &mut cols {
            c.sort_unstable();
            c.dedup();
            rows.extend_from_slice(c);
            start.push(rows.len());
        }
        let mut col_ptr = Vec::with_capacity(3 * nodes + 1);
        let mut row_idx = Vec::with_capacity(9 * rows.len());
        col_ptr.push(0usize);
        for q in 0..nodes {
            for _c in 0..3 {
                for &p in &rows[start[q]..start[q + 1]] {
                    row_idx.extend([3 * p as usize, 3 * p as usize + 1, 3 * p as usize + 2]);
                }
                col_ptr.push(row_idx.len());
            }
        }
        let symbolic =
            SymbolicSparseColMat::new_checked(3 * nodes, 3 * nodes, col_ptr, None, row_idx);
        let symbolic_llt = SymbolicLlt::try_new(symbolic.as_ref(), Side::Lower).ok()?;
        Some(Self {
            nodes,
            edges,
            start,
            rows,
            symbolic,
            symbolic_llt,
        })
    }

    /// Block index of (p, q) (the pattern holds it).
    #[inline]
    fn find(&self, p: usize, q: usize) -> usize {
        let (s, e) = (self.start[q], self.start[q + 1]);
        s + self.rows[s..e].binary_search(&(p as u32)).unwrap_or(0)
    }

    #[inline]
    fn add(&self, values: &mut [f64], p: usize, q: usize, m: &Mat3) {
        let bi = self.find(p, q);
        let s = self.start[q];
        let len = self.start[q + 1] - s;
        for c in 0..3 {
            for r in 0..3 {
                values[9 * s + 3 * (bi - s) + 3 * c * len + r] += m[(r, c)];
            }
        }
    }
}

/// A factored stretch preconditioner, refactored by the stepper when it goes stale.
#[derive(Debug, Clone, Default)]
pub(crate) struct StretchPreconditioner {
    pattern: Option<Pattern>,
    values: Vec<f64>,
    edges: Vec<(usize, usize, Mat3)>,
    factor: Option<Llt<usize, f64>>,
    /// Numeric factorisations done.
    pub factorisations: u64,
}

impl StretchPreconditioner {
    /// Assembles P at `x` from the unscaled diagonal blocks `d` (D_i of `block_scaling`) and
    /// factors it. Returns false (and holds no factor) when the material has no stretch
    /// couplings or Cholesky fails: the caller falls back to the block scaling.
    pub fn refactor(&mut self, world: &ClothWorld, x: &[Vec3], d: &[Mat3]) -> bool {
        self.factor = None;
        self.edges.clear();
        let edges = &mut self.edges;
        match &world.material {
            Material::Springs(s) => s.stiffness_edges(x, |a, b, m| edges.push((a, b, m))),
            Material::Kes(k) => k.stiffness_edges(x, |a, b, m| edges.push((a, b, m))),
            Material::Terzopoulos(_) => {}
        }
        if self.edges.is_empty() {
            return false;
        }
        let n = world.len();
        let same = self.pattern.as_ref().is_some_and(|p| {
            p.nodes == n
                && p.edges.len() == self.edges.len()
                && p.edges
                    .iter()
                    .zip(&self.edges)
                    .all(|(&(a, b), &(c, e, _))| a as usize == c && b as usize == e)
        });
        if !same {
            let list = self.edges.iter().map(|&(a, b, _)| (a as u32, b as u32));
            self.pattern = Pattern::new(n, list.collect());
        }
        let Some(pattern) = self.pattern.as_ref() else {
            return false;
        };
        let values = &mut self.values;
        values.clear();
        values.resize(pattern.symbolic.row_idx().len(), 0.0);
        let pinned = world.pinned();
        for (p, blk) in d.iter().enumerate() {
            let diag = if pinned[p] { Mat3::identity() } else { *blk };
            pattern.add(values, p, p, &diag);
        }
        for &(a, b, ref m) in &self.edges {
            if !pinned[a] && !pinned[b] {
                pattern.add(values, a, b, &-m);
                pattern.add(values, b, a, &-m);
            }
        }
        let a = SparseColMatRef::new(pattern.symbolic.as_ref(), values);
        self.factor = Llt::try_new_with_symbolic(pattern.symbolic_llt.clone(), a, Side::Lower).ok();
        self.factorisations += 1;
        self.factor.is_some()
    }

    pub fn is_ready(&self) -> bool {
        self.factor.is_some()
    }

    /// Drops the factor (the next step refactors).
    pub fn invalidate(&mut self) {
        self.factor = None;
    }

    /// rhs ← P⁻¹·rhs (3 entries per particle).
    pub fn solve_in_place(&self, rhs: &mut [f64]) {
        if let Some(f) = &self.factor {
            let n = rhs.len();
            f.solve_in_place(MatMut::from_column_major_slice_mut(rhs, n, 1));
        }
    }
}
