//! Newton's linear system (M/Δt² + C/Δt + K)·δ = −g \[N\] assembled in 3×3 blocks and
//! factored by faer's sparse Cholesky (AMD ordering, supernodal, sequential, no regularisation:
//! a pivot that is not positive fails the factorisation), pinned rows and columns the identity;
//! `newton_direct`'s preconditioner of CG.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LltRef, SymbolicCholesky,
    SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::SparseColMatRef;
use faer::{Conj, MatMut, Par, Side};

use crate::cloth::block_sparse::BlockPattern;
use crate::cloth::connectors::KesTangent;
use crate::cloth::{Mat3, Vec3};

/// The sparsity of A and its symbolic factorisation.
struct Pattern {
    blocks: BlockPattern,
    symbolic: SymbolicCholesky<usize>,
    /// Scratch of the numeric factorisation and of a solve.
    scratch: MemBuffer,
}

/// The factored system matrix A of one Newton iteration, with the sparsity it reuses while
/// the connectors' particle sets stay the same.
#[derive(Debug, Default)]
pub(crate) struct DirectSolve {
    /// The coupled sets the pattern was built from (each as its length, then its particles).
    sets: Vec<u32>,
    pattern: Option<Pattern>,
    /// A's values, then L's; whether L holds the factor of the last A.
    values: Vec<f64>,
    factor: Vec<f64>,
    factored: bool,
    rhs: Vec<f64>,
}

impl Clone for DirectSolve {
    /// A fresh solver: the pattern and the factor are rebuilt at the first use.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pattern")
            .field("nodes", &self.blocks.nodes())
            .field("factor_len", &self.symbolic.len_val())
            .finish_non_exhaustive()
    }
}

impl Pattern {
    fn new(n: usize, t: &KesTangent) -> Option<Self> {
        let mut cols: Vec<Vec<u32>> = (0..n as u32).map(|p| vec![p]).collect();
        t.for_each_coupled_set(|s| {
            for &b in s {
                cols[b as usize].extend_from_slice(s);
            }
        });
        let blocks = BlockPattern::new(cols);
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
            ..Default::default()
        };
        let symbolic = factorize_symbolic_cholesky(
            blocks.symbolic.as_ref(),
            Side::Lower,
            SymmetricOrdering::Amd,
            params,
        )
        .ok()?;
        let scratch = MemBuffer::try_new(StackReq::any_of(&[
            symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]))
        .ok()?;
        Some(Self {
            blocks,
            symbolic,
            scratch,
        })
    }
}

impl DirectSolve {
    /// Assembles A = diag(`inertia` \[N/m\]) + K (the factors `t` \[N/m\]), pinned rows and
    /// columns the identity, and factors it; false (no factor held) when Cholesky fails.
    pub(crate) fn factor(&mut self, t: &KesTangent, inertia: &[f64], pinned: &[bool]) -> bool {
        self.factored = false;
        let n = inertia.len();
        let mut sets = Vec::with_capacity(self.sets.len());
        t.for_each_coupled_set(|s| {
            sets.push(s.len() as u32);
            sets.extend_from_slice(s);
        });
        let stale = self
            .pattern
            .as_ref()
            .is_none_or(|p| p.blocks.nodes() != n || sets != self.sets);
        if stale {
            self.pattern = Pattern::new(n, t);
            self.sets = sets;
        }
        let Some(p) = &mut self.pattern else {
            return false;
        };
        let (blocks, values) = (&p.blocks, &mut self.values);
        values.clear();
        values.resize(blocks.symbolic.row_idx().len(), 0.0);
        for (k, (&s, &pin)) in inertia.iter().zip(pinned).enumerate() {
            let d = Mat3::identity() * if pin { 1.0 } else { s };
            blocks.add(values, blocks.held(k, k), &d);
        }
        t.for_each_block(|a, b, k| {
            if !pinned[a] && !pinned[b] {
                blocks.add(values, blocks.held(a, b), k);
            }
        });
        let a = SparseColMatRef::new(blocks.symbolic.as_ref(), values);
        self.factor.clear();
        self.factor.resize(p.symbolic.len_val(), 0.0);
        self.factored = p
            .symbolic
            .factorize_numeric_llt(
                &mut self.factor,
                a,
                Side::Lower,
                LltRegularization::default(),
                Par::Seq,
                MemStack::new(&mut p.scratch),
                Default::default(),
            )
            .is_ok();
        self.factored
    }

    /// Whether a factor is held (the last `factor` succeeded).
    pub(crate) fn is_factored(&self) -> bool {
        self.factored
    }

    /// z = A⁻¹·r with the last factor (`r` zero on the pinned rows, so is z); z = r when
    /// there is none.
    pub(crate) fn apply(&mut self, r: &[Vec3], z: &mut [Vec3]) {
        let Some(p) = self.pattern.as_mut().filter(|_| self.factored) else {
            z.copy_from_slice(r);
            return;
        };
        self.rhs.clear();
        self.rhs.extend(r.iter().flat_map(|v| [v.x, v.y, v.z]));
        let len = self.rhs.len();
        LltRef::new(&p.symbolic, &self.factor).solve_in_place_with_conj(
            Conj::No,
            MatMut::from_column_major_slice_mut(&mut self.rhs, len, 1),
            Par::Seq,
            MemStack::new(&mut p.scratch),
        );
        for (zk, s) in z.iter_mut().zip(self.rhs.chunks_exact(3)) {
            *zk = Vec3::new(s[0], s[1], s[2]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::connectors::{bent_sheet, tangent_at, tangent_test_sheet};
    use crate::cloth::pipeline::{ClothPipeline, Integrator, StepParameters};
    use crate::cloth::world::Material;
    use crate::cloth::Loads;

    /// The factor solves A·δ = −r: δ = −A⁻¹r checked with the matrix-free product,
    /// diag(inertia)·δ + K·δ = −r on the free rows, δ = 0 on the pinned ones (a bent, sheared
    /// 6 × 5 sheet with two pinned particles).
    #[test]
    fn direct_solve_meets_the_matrix_free_system() {
        let h = 0.01;
        let mut world = tangent_test_sheet(6, 5, h);
        world.pin(0, 0).unwrap();
        world.pin(5, 0).unwrap();
        let x = bent_sheet(&world, h);
        let t = tangent_at(&world, &x);
        let Material::Kes(kes) = &world.material else {
            unreachable!()
        };
        let inertia: Vec<f64> = (0..x.len()).map(|k| 2.0 + 0.1 * k as f64).collect();
        let pinned = world.pinned();
        let r: Vec<Vec3> = (0..x.len())
            .map(|k| {
                let s = k as f64;
                if pinned[k] {
                    Vec3::zeros()
                } else {
                    Vec3::new(s.sin(), (2.0 * s).cos(), 0.3 * s.sin() * s.cos())
                }
            })
            .collect();
        let mut direct = DirectSolve::default();
        assert!(direct.factor(&t, &inertia, pinned));
        let mut delta = vec![Vec3::zeros(); x.len()];
        direct.apply(&r, &mut delta);
        delta.iter_mut().for_each(|d| *d = -*d);
        let mut a_delta: Vec<Vec3> = delta.iter().zip(&inertia).map(|(d, s)| d * *s).collect();
        kes.add_tangent_product(&t, &delta, &mut a_delta);
        for k in 0..x.len() {
            if pinned[k] {
                assert_eq!(delta[k], Vec3::zeros(), "{k}");
            } else {
                assert!(
                    (a_delta[k] + r[k]).norm() <= 1e-10,
                    "{k}: {}",
                    a_delta[k] + r[k]
                );
            }
        }
        // the same pattern serves a second factorisation
        let sets = direct.sets.clone();
        assert!(direct.factor(&t, &inertia, pinned));
        assert_eq!(direct.sets, sets);
    }

    /// Backward Euler with CG (to 1e-13) preconditioned by the Cholesky factor and by the
    /// lines reaches the same positions within the Newton tolerance: a 7 × 4 sheet hanging from two corners, ten
    /// steps of 5 ms.
    #[test]
    fn newton_direct_steps_match_newton_with_conjugate_gradients() {
        let run = |integrator| {
            let mut world = tangent_test_sheet(7, 4, 0.01);
            world.loads = Loads {
                gravity: [0.0, 0.0, -9.81],
                ..Loads::none()
            };
            world.pin(0, 0).unwrap();
            world.pin(6, 0).unwrap();
            let mut params = StepParameters::new(integrator, 0.005);
            params.tolerance = 1e-11;
            params.forcing = 1e-13;
            let mut pipeline = ClothPipeline::new();
            let mut cg_iterations = 0;
            for _ in 0..10 {
                let report = pipeline.step(&params, &mut world).unwrap();
                assert!(report.solve.converged);
                cg_iterations += report.solve.linear_iterations;
            }
            (world.positions().to_vec(), cg_iterations)
        };
        let ((direct, cholesky_its), (cg, line_its)) = (
            run(Integrator::NewtonDirect),
            run(Integrator::NewtonTangent),
        );
        // the Cholesky factor (exact when fresh) preconditions CG better than the lines
        assert!(cholesky_its < line_its, "{cholesky_its} against {line_its}");
        let fell = cg.iter().map(|p| p.z.abs()).fold(0.0, f64::max);
        assert!(fell > 1e-4, "{fell}");
        for (a, b) in direct.iter().zip(&cg) {
            assert!((a - b).norm() <= 1e-9, "{a} against {b}");
        }
    }
}
