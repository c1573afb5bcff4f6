//! K = −∂F/∂x [N/m] as 3×3 blocks K_ab from the connectors' tangent factors: traction
//! ±(a·d̂d̂ᵀ + l·(I − d̂d̂ᵀ)) (a axial, l lateral stiffness), bending k·∇φ_a∇φ_bᵀ, shear k·∇θ_a∇θ_bᵀ.

use super::tangent::{bending_gradient, shear_gradient, KesTangent};
use super::Mat3;

impl KesTangent {
    /// The particles each connector couples (traction 2, bending 5, shear 4), one slice each,
    /// in connector order: the sparsity of K.
    pub(crate) fn for_each_coupled_set(&self, mut set: impl FnMut(&[u32])) {
        self.traction.iter().for_each(|tf| set(&tf.ends));
        self.bending.iter().for_each(|bf| set(&bf.points));
        self.shear.iter().for_each(|sf| set(&sf.corners));
    }

    /// Every block K_ab of every connector, a and b among its particles (both orders, a = b
    /// included; a particle a connector names twice, or a pair two connectors share, comes
    /// again and is to be summed): y = K·v is y_a = Σ K_ab·v_b over them, the product
    /// `add_tangent_product` takes matrix-free.
    pub(crate) fn for_each_block(&self, mut block: impl FnMut(usize, usize, &Mat3)) {
        for tf in &self.traction {
            let (dir, axial, lateral) = (tf.dir, tf.axial, tf.lateral);
            let k = dir * dir.transpose() * (axial - lateral) + Mat3::identity() * lateral;
            let (a, b) = (tf.ends[0] as usize, tf.ends[1] as usize);
            block(a, a, &k);
            block(b, b, &k);
            block(a, b, &-k);
            block(b, a, &-k);
        }
        for bf in &self.bending {
            let g = bending_gradient(&bf.grad);
            outer_blocks(&bf.points, &g, bf.k, &mut block);
        }
        for sf in &self.shear {
            let g = shear_gradient(&sf.grad);
            outer_blocks(&sf.corners, &g, sf.k, &mut block);
        }
    }
}

/// The blocks k·g_i·g_jᵀ \[N/m\] of the particles `points` with the gradients `g` \[1/m\] and
/// the stiffness `k` \[N·m\].
fn outer_blocks<const N: usize>(
    points: &[u32; N],
    g: &[super::Vec3; N],
    k: f64,
    block: &mut impl FnMut(usize, usize, &Mat3),
) {
    for (&a, ga) in points.iter().zip(g) {
        let kga = ga * k;
        for (&b, gb) in points.iter().zip(g) {
            block(a as usize, b as usize, &(kga * gb.transpose()));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::{KesTangent, Vec3};
    use crate::cloth::world::{ClothWorld, Material};
    use crate::material::LawState;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{RngExt, SeedableRng};

    /// The positions of `world`'s sheet (spacing `h` [m]) sheared by 15 % of a cell per row,
    /// stretched 3 % and 2 % and bent out of plane by up to 2 mm.
    pub(crate) fn bent_sheet(world: &ClothWorld, h: f64) -> Vec<Vec3> {
        let grid = world.grid;
        (0..world.len())
            .map(|k| {
                let (i, j) = grid.coords(k);
                let (i, j) = (i as f64, j as f64);
                Vec3::new(
                    h * (1.03 * i + 0.15 * j),
                    h * 1.02 * j,
                    2e-3 * (i * j).sin(),
                )
            })
            .collect()
    }

    /// K's factors of `world`'s kes connectors at `x`, from virgin states.
    pub(crate) fn tangent_at(world: &ClothWorld, x: &[Vec3]) -> KesTangent {
        let Material::Kes(kes) = &world.material else {
            panic!("not a kes sheet");
        };
        let mut trial = vec![LawState::default(); kes.state_len()];
        let mut f = vec![Vec3::zeros(); x.len()];
        kes.add_forces(x, &mut trial, &mut f);
        let mut t = KesTangent::default();
        kes.tangent(x, &trial, &mut t);
        t
    }

    /// The blocks summed as y_a = Σ K_ab·v_b give the matrix-free product K·v, on a sheared,
    /// bent 6 × 5 sheet (every kind of connector, borders with one-sided bending axes).
    #[test]
    fn blocks_give_the_matrix_free_product() {
        let h = 0.01;
        let world = super::super::tangent::tests::flat_sheet(6, 5, h);
        let x = bent_sheet(&world, h);
        let t = tangent_at(&world, &x);
        let Material::Kes(kes) = &world.material else {
            unreachable!()
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for _ in 0..5 {
            let v: Vec<Vec3> = (0..x.len())
                .map(|_| Vec3::from_fn(|_, _| rng.random::<f64>() - 0.5))
                .collect();
            let mut free = vec![Vec3::zeros(); x.len()];
            kes.add_tangent_product(&t, &v, &mut free);
            let mut blocks = vec![Vec3::zeros(); x.len()];
            t.for_each_block(|a, b, k| blocks[a] += k * v[b]);
            let scale = free.iter().map(|y| y.norm()).fold(0.0, f64::max);
            assert!(scale > 0.0);
            for (a, (y, z)) in free.iter().zip(&blocks).enumerate() {
                assert!((y - z).norm() <= 1e-12 * scale, "{a}: {y} against {z}");
            }
        }
    }
}
