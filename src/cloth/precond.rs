//! The stretch preconditioner of the Broyden step: P = D + Σ_edges coupling, D_i the block
//! scaling and −k·d̂d̂ᵀ [N/m] off the diagonal for each traction connector (or spring), so that
//! P ≈ M/Δt² + C/Δt + K_stretch; factored by faer's sparse Cholesky (pinned rows: identity).

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::SparseColMatRef;
use faer::{MatMut, Side};

use super::block_sparse::BlockPattern;
use super::world::{ClothWorld, Material};
use super::{Mat3, Vec3};

/// The block sparsity of P for one set of couplings, with its symbolic Cholesky.
#[derive(Debug, Clone)]
struct Pattern {
    edges: Vec<(u32, u32)>,
    blocks: BlockPattern,
    symbolic_llt: SymbolicLlt<usize>,
}

impl Pattern {
    fn new(nodes: usize, edges: Vec<(u32, u32)>) -> Option<Self> {
        let mut cols: Vec<Vec<u32>> = (0..nodes).map(|p| vec![p as u32]).collect();
        for &(a, b) in &edges {
            cols[a as usize].push(b);
            cols[b as usize].push(a);
        }
        let blocks = BlockPattern::new(cols);
        let symbolic_llt = SymbolicLlt::try_new(blocks.symbolic.as_ref(), Side::Lower).ok()?;
        Some(Self {
            edges,
            blocks,
            symbolic_llt,
        })
    }

    #[inline]
    fn add(&self, values: &mut [f64], p: usize, q: usize, m: &Mat3) {
        self.blocks.add(values, self.blocks.held(p, q), m);
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
    pub(crate) fn refactor(&mut self, world: &ClothWorld, x: &[Vec3], d: &[Mat3]) -> bool {
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
            p.blocks.nodes() == n
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
        values.resize(pattern.blocks.symbolic.row_idx().len(), 0.0);
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
        let a = SparseColMatRef::new(pattern.blocks.symbolic.as_ref(), values);
        self.factor = Llt::try_new_with_symbolic(pattern.symbolic_llt.clone(), a, Side::Lower).ok();
        self.factorisations += 1;
        self.factor.is_some()
    }

    pub(crate) fn is_ready(&self) -> bool {
        self.factor.is_some()
    }

    /// Drops the factor (the next step refactors).
    pub(crate) fn invalidate(&mut self) {
        self.factor = None;
    }

    /// rhs ← P⁻¹·rhs (3 entries per particle).
    pub(crate) fn solve_in_place(&self, rhs: &mut [f64]) {
        if let Some(f) = &self.factor {
            let n = rhs.len();
            f.solve_in_place(MatMut::from_column_major_slice_mut(rhs, n, 1));
        }
    }
}
