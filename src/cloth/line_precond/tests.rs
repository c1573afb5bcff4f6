use super::*;
use crate::cloth::connectors::tangent_test_sheet;
use crate::material::LawState;

/// One line against the dense solve of the same block tridiagonal.
#[test]
fn line_solve_matches_the_dense_solve() {
    let n = 5;
    let mut f = LineFactor {
        len: n,
        ..LineFactor::default()
    };
    let mut d = Vec::new();
    f.next.resize(n, Mat3::zeros());
    for k in 0..n {
        let s = k as f64;
        let a = Mat3::new(3.0 + s, 0.2, 0.1, 0.2, 4.0, 0.3 * s, 0.1, 0.3 * s, 5.0);
        d.push(a);
        if k + 1 < n {
            f.next[k] = Mat3::new(-1.0, 0.1 * s, 0.0, 0.2, -0.5, 0.1, 0.0, 0.3, -0.7);
        }
    }
    assert!(f.factor(&d));
    let r: Vec<Vec3> = (0..n)
        .map(|k| Vec3::new(1.0, -(k as f64), 0.5 * k as f64))
        .collect();
    let mut z = vec![Vec3::zeros(); n];
    f.solve(&r, &mut z);
    let mut dense = nalgebra::DMatrix::<f64>::zeros(3 * n, 3 * n);
    for (k, dk) in d.iter().enumerate() {
        dense.view_mut((3 * k, 3 * k), (3, 3)).copy_from(dk);
        if k + 1 < n {
            dense
                .view_mut((3 * k, 3 * k + 3), (3, 3))
                .copy_from(&f.next[k]);
            dense
                .view_mut((3 * k + 3, 3 * k), (3, 3))
                .copy_from(&f.next[k].transpose());
        }
    }
    let rhs = nalgebra::DVector::from_iterator(3 * n, r.iter().flat_map(|v| v.iter().copied()));
    let exact = dense.lu().solve(&rhs).unwrap();
    for k in 0..n {
        for c in 0..3 {
            assert!((z[k][c] - exact[3 * k + c]).abs() < 1e-12, "{k} {c}");
        }
    }
}

/// The three sweeps on a stretched, sheared 5 × 4 kes sheet with a pinned corner against
/// their definition with dense matrices: z₁ = P_warp⁻¹r, z₂ = z₁ + P_weft⁻¹(r − Pz₁),
/// z₃ = z₂ + P_warp⁻¹(r − Pz₂), P = D − ΣK_ab over the line couplings.
#[test]
fn sweeps_match_their_dense_definition() {
    let (nu, nv, h) = (5, 4, 0.01);
    let mut world = tangent_test_sheet(nu, nv, h);
    let grid = world.grid;
    world.pin(0, 0).unwrap();
    let n = nu * nv;
    let x: Vec<Vec3> = (0..n)
        .map(|k| {
            let (i, j) = grid.coords(k);
            let (i, j) = (i as f64, j as f64);
            Vec3::new(h * (1.03 * i + 0.1 * j), h * 1.02 * j, 1e-3 * (i * j).sin())
        })
        .collect();
    let Material::Kes(kes) = &world.material else {
        unreachable!()
    };
    let mut trial = vec![LawState::default(); kes.state_len()];
    let mut f = vec![Vec3::zeros(); n];
    kes.add_forces(&x, &mut trial, &mut f);
    let mut t = crate::cloth::connectors::KesTangent::default();
    kes.tangent(&x, &trial, &mut t);
    let mut d = vec![Mat3::identity() * 50.0; n];
    let mut edges = Vec::new();
    kes.tangent_blocks(&t, &mut d, |a, b, m| edges.push((a, b, m)));
    let mut p = LinePreconditioner::default();
    assert!(p.build(&world, &d, |edge| {
        for &(a, b, m) in &edges {
            edge(a, b, m);
        }
    }));
    // dense P, P_warp, P_weft with the pinned row and column the identity
    let pinned = world.pinned();
    // a pair can have several couplings (a traction connector and shear cell sides)
    let block = |m: &mut nalgebra::DMatrix<f64>, a: usize, b: usize, v: &Mat3| {
        let mut blk = m.view_mut((3 * a, 3 * b), (3, 3));
        blk += v;
    };
    let mut p_warp = nalgebra::DMatrix::<f64>::zeros(3 * n, 3 * n);
    for (k, dk) in d.iter().enumerate() {
        let dk = if pinned[k] { Mat3::identity() } else { *dk };
        block(&mut p_warp, k, k, &dk);
    }
    let mut p_weft = p_warp.clone();
    let mut c_warp = nalgebra::DMatrix::<f64>::zeros(3 * n, 3 * n);
    let mut c_weft = c_warp.clone();
    for &(a, b, m) in &edges {
        let (a, b) = (a.min(b), a.max(b));
        if pinned[a] || pinned[b] {
            continue;
        }
        let c = if b == a + 1 { &mut c_warp } else { &mut c_weft };
        block(c, a, b, &-m);
        block(c, b, a, &-m.transpose());
    }
    p_warp += &c_warp;
    p_weft += &c_weft;
    let p_full = &p_warp + &c_weft;
    let r: Vec<Vec3> = (0..n)
        .map(|k| {
            let s = k as f64;
            Vec3::new((0.7 * s).sin(), (1.3 * s).cos(), (2.1 * s + 0.4).sin())
        })
        .collect();
    let rv = nalgebra::DVector::from_iterator(3 * n, r.iter().flat_map(|v| v.iter().copied()));
    let z1 = p_warp.clone().lu().solve(&rv).unwrap();
    let z2 = &z1 + p_weft.lu().solve(&(&rv - &p_full * &z1)).unwrap();
    let z3 = &z2 + p_warp.lu().solve(&(&rv - &p_full * &z2)).unwrap();
    let mut z = vec![Vec3::zeros(); n];
    p.apply(&r, &mut z);
    let scale = z3.amax();
    for k in 0..n {
        for c in 0..3 {
            assert!(
                (z[k][c] - z3[3 * k + c]).abs() < 1e-10 * scale,
                "{k} {c}: {} against {}",
                z[k][c],
                z3[3 * k + c]
            );
        }
    }
    // solve_in_place is the same operator
    let mut flat: Vec<f64> = r.iter().flat_map(|v| v.iter().copied()).collect();
    p.solve_in_place(&mut flat);
    for k in 0..n {
        assert!((Vec3::new(flat[3 * k], flat[3 * k + 1], flat[3 * k + 2]) - z[k]).norm() == 0.0);
    }
}
