//! The lanes kernel against the scalar one: the same forces, trial states and tangent factors,
//! bit for bit, on deformed and loaded sheets with every law shape and degenerate connectors.

use std::path::Path;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use super::super::tangent::KesTangent;
use super::super::ForceKernel;
use super::*;
use crate::cloth::Grid;
use crate::friction::FrictionShape;
use crate::material::ToeShape;
use crate::params::FabricParams;

/// The sample fabric's six laws (power toes, Dahl friction growing with load).
fn card_laws() -> super::super::KesLaws {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes/fabrics/cotton-shirting.fitted.params.toml");
    let params = FabricParams::read(&path).expect("the sample fabric's card");
    super::super::KesLaws::from_params(&params).expect("six laws")
}

/// The card's laws with the other shapes mixed in: a quadratic toe, a second-order friction
/// and a Dahl exponent above one.
fn mixed_laws() -> super::super::KesLaws {
    let mut l = card_laws();
    l.traction[1].toe = ToeShape::Quadratic;
    l.bending[0].friction.shape = FrictionShape::Bs2 {
        eps_f: 10.0,
        eta: 0.3,
        ratio: 0.4,
    };
    l.shear[1].friction.shape = FrictionShape::Dahl {
        eps_f: 0.008,
        alpha: 2.5,
    };
    l
}

/// An n × m sheet at 1 cm stretched (up to 6 %, past both toes), compressed, sheared, bent
/// and noised, scaled by `a`.
fn deformed(grid: &Grid, a: f64, rng: &mut Xoshiro256PlusPlus) -> Vec<Vec3> {
    let h = 0.01;
    (0..grid.nu * grid.nv)
        .map(|k| {
            let (i, j) = grid.coords(k);
            let (i, j) = (i as f64, j as f64);
            let noise = |rng: &mut Xoshiro256PlusPlus| 2e-4 * a * (rng.random::<f64>() - 0.5);
            Vec3::new(
                h * i * (1.0 + a * 0.06 * (0.3 * j).sin()) + a * 0.2 * h * j + noise(rng),
                h * j * (1.0 + a * 0.05 * (0.21 * i).cos()) + noise(rng),
                a * 3e-3 * (0.4 * i).sin() * (0.3 * j).cos() + noise(rng),
            )
        })
        .collect()
}

/// Forces, trial states and (with `tangent`) factors of `kes` at `x` with `kernel`.
fn evaluate(
    kes: &mut KesConnectors,
    kernel: ForceKernel,
    x: &[Vec3],
    tangent: bool,
) -> (Vec<Vec3>, Vec<LawState>, Option<KesTangent>) {
    kes.kernel = kernel;
    let mut trial = vec![LawState::default(); kes.state_len()];
    let mut f = vec![Vec3::zeros(); x.len()];
    if tangent {
        let mut t = KesTangent::default();
        kes.add_forces_and_tangent(x, &mut trial, &mut f, &mut t);
        (f, trial, Some(t))
    } else {
        kes.add_forces(x, &mut trial, &mut f);
        (f, trial, None)
    }
}

/// The bits of a number, every NaN as one (a NaN's sign and payload may differ).
fn b(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else {
        v.to_bits()
    }
}

fn bits(f: &[Vec3]) -> Vec<[u64; 3]> {
    f.iter().map(|v| [b(v.x), b(v.y), b(v.z)]).collect()
}

fn state_bits(s: &[LawState]) -> Vec<(u64, bool, u64)> {
    s.iter()
        .map(|s| (b(s.strain), s.aligned, b(s.friction.z())))
        .collect()
}

/// Whether the lanes run here (else the comparisons would be of the scalar kernel with
/// itself): said, so a machine without AVX2 does not pass these tests silently.
fn lanes_run_here() -> bool {
    let here = Simd::try_new().is_some();
    if !here {
        eprintln!(
            "skipped: no AVX2 on this processor, the lanes kernel falls back to the scalar one"
        );
    }
    here
}

/// Both kernels on a sheet loaded along one deformation, then moved to another: equal, bit
/// for bit (−0 and +0 told apart).
fn check_sheet(nu: usize, nv: usize, laws: super::super::KesLaws, degenerate: bool) {
    if !lanes_run_here() {
        return;
    }
    let grid = Grid::new(nu, nv, 0.01, 0.01).unwrap();
    let mut kes = KesConnectors::new(&grid, laws);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let mut x0 = deformed(&grid, 0.6, &mut rng);
    let mut x1 = deformed(&grid, 1.0, &mut rng);
    if degenerate {
        // a traction connector of length zero, a bending axis of length zero, a cell with a
        // warp side of length zero
        for x in [&mut x0, &mut x1] {
            x[grid.index(3, 2)] = x[grid.index(2, 2)];
            x[grid.index(5, 1)] = x[grid.index(5, 3)];
            x[grid.index(1, 4)] = x[grid.index(0, 4)];
            x[grid.index(1, 5)] = x[grid.index(0, 5)];
        }
    }
    // the friction states and alignment flags of a first loading, committed
    let (_, mut loaded, _) = evaluate(&mut kes, ForceKernel::Scalar, &x0, false);
    kes.commit(&mut loaded);
    assert!(kes.states().iter().any(|s| s.aligned));
    assert!(kes.states().iter().any(|s| !s.aligned && s.strain > 0.0));
    for tangent in [false, true] {
        let (fs, ss, ts) = evaluate(&mut kes, ForceKernel::Scalar, &x1, tangent);
        let (fl, sl, tl) = evaluate(&mut kes, ForceKernel::Lanes, &x1, tangent);
        assert!(fs.iter().all(|f| f.iter().all(|c| c.is_finite())));
        assert!(fs.iter().any(|f| f.norm() > 0.0));
        assert_eq!(bits(&fs), bits(&fl), "forces, tangent {tangent}");
        assert_eq!(
            state_bits(&ss),
            state_bits(&sl),
            "trial states, tangent {tangent}"
        );
        assert_eq!(ss, sl, "trial states, tangent {tangent}");
        if let (Some(ts), Some(tl)) = (ts, tl) {
            assert_eq!(ts.traction, tl.traction);
            assert_eq!(ts.bending, tl.bending);
            assert_eq!(ts.shear, tl.shear);
        }
    }
}

#[test]
fn lanes_give_the_scalar_kernels_numbers_on_the_loaded_70_sheet() {
    check_sheet(70, 70, card_laws(), false);
}

#[test]
fn lanes_give_the_scalar_kernels_numbers_with_every_law_shape_and_degenerate_connectors() {
    // 7 × 6: groups of four with remainders of every kind
    check_sheet(7, 6, mixed_laws(), true);
    check_sheet(9, 8, mixed_laws(), false);
}

/// On two threads (a band per thread) the lanes kernel sums as the scalar kernel does.
#[test]
fn lanes_on_two_threads_give_the_scalar_kernels_sums() {
    if !lanes_run_here() {
        return;
    }
    let grid = Grid::new(70, 70, 0.01, 0.01).unwrap();
    let mut kes = KesConnectors::new(&grid, mixed_laws());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let x = deformed(&grid, 1.0, &mut rng);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let (fs, ss, _) = pool.install(|| evaluate(&mut kes, ForceKernel::Scalar, &x, false));
    let (fl, sl, _) = pool.install(|| evaluate(&mut kes, ForceKernel::Lanes, &x, false));
    assert_eq!(bits(&fs), bits(&fl));
    assert_eq!(state_bits(&ss), state_bits(&sl));
}

/// A NaN and an infinite position: the lanes give the scalar kernel's numbers bit for bit,
/// NaN where it has NaN (a NaN's sign and payload may differ), without panicking.
#[test]
fn lanes_follow_the_scalar_kernel_through_nan_and_infinite_positions() {
    if !lanes_run_here() {
        return;
    }
    let grid = Grid::new(9, 8, 0.01, 0.01).unwrap();
    let mut kes = KesConnectors::new(&grid, mixed_laws());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let mut x = deformed(&grid, 1.0, &mut rng);
    x[grid.index(2, 3)].y = f64::NAN;
    x[grid.index(6, 5)].x = f64::INFINITY;
    let (fs, ss, _) = evaluate(&mut kes, ForceKernel::Scalar, &x, false);
    let (fl, sl, _) = evaluate(&mut kes, ForceKernel::Lanes, &x, false);
    assert!(fs.iter().any(|f| f.x.is_nan()));
    assert_eq!(bits(&fs), bits(&fl));
    assert_eq!(state_bits(&ss), state_bits(&sl));
}
