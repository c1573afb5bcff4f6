//! Real spherical harmonics of bands 0–2 (9 coefficients): Y_lm(s) of a unit direction,
//! projection of an RGB environment L(s) [W/(m²·sr), relative], and rotation of its coefficients.

use std::f64::consts::PI;

use nalgebra::{Matrix3, Rotation3, Unit, Vector3};

/// Bands kept (l = 0, 1, 2).
pub const SH_BANDS: usize = 3;
/// Coefficients per transfer vector or light channel: bands².
pub const SH_COEFFS: usize = SH_BANDS * SH_BANDS;

/// The 9 real SH basis functions at unit direction (x, y, z), in the order
/// Y00, Y1−1, Y10, Y11, Y2−2, Y2−1, Y20, Y21, Y22 (Sloan et al. 2002's normalisation:
/// ∫ Y_i Y_j ds = δ_ij over the unit sphere).
#[inline]
pub fn sh_basis(s: [f64; 3]) -> [f64; SH_COEFFS] {
    let [x, y, z] = s;
    [
        0.282_094_791_773_878_14,
        0.488_602_511_902_919_9 * y,
        0.488_602_511_902_919_9 * z,
        0.488_602_511_902_919_9 * x,
        1.092_548_430_592_079_2 * x * y,
        1.092_548_430_592_079_2 * y * z,
        0.315_391_565_252_520_05 * (3.0 * z * z - 1.0),
        1.092_548_430_592_079_2 * x * z,
        0.546_274_215_296_039_6 * (x * x - y * y),
    ]
}

/// Band of coefficient `i` (0, 1 or 2).
pub fn band_of(i: usize) -> usize {
    match i {
        0 => 0,
        1..=3 => 1,
        _ => 2,
    }
}

/// The transfer vector of an unoccluded point with unit normal `n`: the projection of the
/// clamped cosine lobe max(0, n·s)/π, by Funk–Hecke (A_l/π)·Y_lm(n) with A_0 = π,
/// A_1 = 2π/3, A_2 = π/4 (so T_00 = 1/(2√π) and a uniform light of 1 gives radiance 1).
pub fn clamped_cosine(n: [f64; 3]) -> [f64; SH_COEFFS] {
    let y = sh_basis(n);
    let a = [1.0, 2.0 / 3.0, 0.25];
    std::array::from_fn(|i| a[band_of(i)] * y[i])
}

/// An RGB environment light in SH: 9 coefficients per channel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShLight {
    pub rgb: [[f32; SH_COEFFS]; 3],
}

impl ShLight {
    /// Projects L(s) (RGB per unit direction) on the 9 SH functions by a midpoint rule on a
    /// `rings` × 2·`rings` latitude-longitude grid (solid-angle weights sin θ dθ dφ).
    pub fn project(rings: usize, light: impl Fn([f64; 3]) -> [f64; 3]) -> Self {
        let rings = rings.max(2);
        let segs = 2 * rings;
        let (dt, dp) = (PI / rings as f64, 2.0 * PI / segs as f64);
        let mut acc = [[0.0f64; SH_COEFFS]; 3];
        for a in 0..rings {
            let th = (a as f64 + 0.5) * dt;
            let w = th.sin() * dt * dp;
            for b in 0..segs {
                let ph = (b as f64 + 0.5) * dp;
                let s = [th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin()];
                let l = light(s);
                let y = sh_basis(s);
                for (c, acc_c) in acc.iter_mut().enumerate() {
                    for (k, yk) in y.iter().enumerate() {
                        acc_c[k] += w * l[c] * yk;
                    }
                }
            }
        }
        Self {
            rgb: acc.map(|c| c.map(|v| v as f32)),
        }
    }

    /// The default sky (+y up): a blue zenith fading to a pale horizon, a warm ground bounce
    /// below and a sun of angular falloff cos³² towards (0.5, 0.8, 0.6).
    pub fn sky() -> Self {
        let sun = Vector3::new(0.5, 0.8, 0.6).normalize();
        Self::project(48, |s| {
            let up = s[1];
            let (zenith, horizon, ground) =
                ([0.45, 0.62, 0.95], [0.95, 0.95, 0.92], [0.35, 0.31, 0.27]);
            let base = if up >= 0.0 {
                let t = up.sqrt();
                std::array::from_fn(|c| horizon[c] + (zenith[c] - horizon[c]) * t)
            } else {
                ground
            };
            let d = Vector3::from(s).dot(&sun).max(0.0).powi(32);
            let warm = [1.0, 0.95, 0.85];
            std::array::from_fn(|c| base[c] + 8.0 * warm[c] * d)
        })
    }

    /// The light turned by `r`: L'(s) = L(rᵀ·s), band by band (each band is closed under
    /// rotations): with 2l + 1 directions d_j, c' = Y(d)⁻¹·Y(rᵀd)·c.
    pub fn rotated(&self, r: &Rotation3<f64>) -> Self {
        let m = sh_rotation(r);
        let rgb = self.rgb.map(|c| {
            std::array::from_fn(|i| {
                (0..SH_COEFFS)
                    .map(|j| m[i][j] * f64::from(c[j]))
                    .sum::<f64>() as f32
            })
        });
        Self { rgb }
    }

    /// Exit radiance albedo · Σ L_i T_i of a transfer vector, per channel.
    #[inline]
    pub fn radiance(&self, albedo: [f32; 3], t: &[f32]) -> [f32; 3] {
        std::array::from_fn(|c| {
            albedo[c] * self.rgb[c].iter().zip(t).map(|(l, t)| l * t).sum::<f32>()
        })
    }
}

/// The rotation "turn the sky by `azimuth` about +y, then tilt it by `elevation` about +x" \[rad\].
pub fn sky_rotation(azimuth: f64, elevation: f64) -> Rotation3<f64> {
    Rotation3::from_axis_angle(&Vector3::x_axis(), elevation)
        * Rotation3::from_axis_angle(&Vector3::y_axis(), azimuth)
}

/// A rotation by `angle` \[rad\] about unit `axis`.
pub fn axis_rotation(axis: [f64; 3], angle: f64) -> Rotation3<f64> {
    let a = Unit::try_new(Vector3::from(axis), 1e-12).unwrap_or(Vector3::y_axis());
    Rotation3::from_axis_angle(&a, angle)
}

/// 9 × 9 SH rotation (block diagonal: 1, 3 × 3, 5 × 5) of L'(s) = L(rᵀ·s).
fn sh_rotation(r: &Rotation3<f64>) -> [[f64; SH_COEFFS]; SH_COEFFS] {
    // generic directions: Y restricted to each band is invertible on them
    const DIRS: [[f64; 3]; 5] = [
        [1.0, 1.0, 1.0],
        [1.0, -1.0, 0.5],
        [0.3, 0.2, -1.0],
        [-0.7, 0.4, 0.6],
        [0.1, -0.9, 0.4],
    ];
    let rt: Matrix3<f64> = r.matrix().transpose();
    let mut out = [[0.0; SH_COEFFS]; SH_COEFFS];
    out[0][0] = 1.0;
    for (lo, n) in [(1usize, 3usize), (4, 5)] {
        let mut y = nalgebra::DMatrix::zeros(n, n);
        let mut yr = nalgebra::DMatrix::zeros(n, n);
        for (j, d) in DIRS.iter().take(n).enumerate() {
            let v = Vector3::from(*d).normalize();
            let (b, br) = (sh_basis(v.into()), sh_basis((rt * v).into()));
            for k in 0..n {
                y[(j, k)] = b[lo + k];
                yr[(j, k)] = br[lo + k];
            }
        }
        // Y(d) is invertible for these directions (checked by the tests); were it not, the
        // band would stay as it is
        let m = y.try_inverse().map(|inv| inv * yr);
        for i in 0..n {
            for j in 0..n {
                out[lo + i][lo + j] = match &m {
                    Some(m) => m[(i, j)],
                    None => f64::from(u8::from(i == j)),
                };
            }
        }
    }
    out
}
