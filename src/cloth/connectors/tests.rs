//! The connectors' angles against central differences of their definitions.

use super::*;

#[test]
fn turning_angle_gradient_matches_differences() {
    let xa = Vec3::new(-1.0, 0.1, 0.2);
    let xc = Vec3::new(0.05, 0.0, -0.1);
    let xb = Vec3::new(1.0, 0.2, 0.4);
    let e = Vec3::new(0.1, 1.0, 0.05);
    let (phi, d_ra, d_rb, d_e) = turning_angle(xa, xc, xb, e);
    let h = 1e-7;
    for k in 0..3 {
        let mut dx = Vec3::zeros();
        dx[k] = h;
        let (p, ..) = turning_angle(xa, xc + dx, xb, e);
        let (q, ..) = turning_angle(xa, xc - dx, xb, e);
        // c enters r_a = c − a positively and r_b = b − c negatively
        assert!(((p - q) / (2.0 * h) - (d_ra - d_rb)[k]).abs() < 1e-6);
        let (p, ..) = turning_angle(xa, xc, xb + dx, e);
        let (q, ..) = turning_angle(xa, xc, xb - dx, e);
        assert!(((p - q) / (2.0 * h) - d_rb[k]).abs() < 1e-6);
        let (p, ..) = turning_angle(xa, xc, xb, e + dx);
        let (q, ..) = turning_angle(xa, xc, xb, e - dx);
        assert!(((p - q) / (2.0 * h) - d_e[k]).abs() < 1e-6);
    }
    assert!(phi.abs() > 0.01);
}

#[test]
fn shear_angle_gradient_matches_differences() {
    let p = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 0.1, 0.05),
        Vec3::new(0.2, 1.0, -0.1),
        Vec3::new(1.1, 1.05, 0.1),
    ];
    let (_, d_tw, d_tf) = shear_angle(p);
    let grads = [
        -(d_tw + d_tf) * 0.5,
        (d_tw - d_tf) * 0.5,
        (d_tf - d_tw) * 0.5,
        (d_tw + d_tf) * 0.5,
    ];
    let h = 1e-7;
    for (n, g) in grads.iter().enumerate() {
        for k in 0..3 {
            let mut pp = p;
            let mut pm = p;
            pp[n][k] += h;
            pm[n][k] -= h;
            let d = (shear_angle(pp).0 - shear_angle(pm).0) / (2.0 * h);
            assert!((d - g[k]).abs() < 1e-6, "{n} {k}: {d} vs {}", g[k]);
        }
    }
}
