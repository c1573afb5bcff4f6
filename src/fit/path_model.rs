//! A connector law driven along a measured path with forward sensitivities: F(x_i; p) and
//! ∂F/∂p for every physical parameter p, stepping the friction states exactly (docs/model.md).

use crate::friction::{bs2_step, dahl_step};
use crate::material::{ToeShape, TractionLaw};

/// Index of each physical parameter in a parameter vector `P`.
pub mod idx {
    /// Rigidity: k_t [N/m] (traction), k_b [N·m] (bending), k_s [N/(m·rad)] (shear), k (loop).
    pub(crate) const K: usize = 0;
    /// ε₁, end of the virgin toe [-].
    pub(crate) const E1: usize = 1;
    /// F₁, force at ε₁ [N/m].
    pub(crate) const F1: usize = 2;
    /// ε₁', end of the aligned toe [-].
    pub(crate) const E1A: usize = 3;
    /// Friction level at zero load F_c0.
    pub(crate) const LEVEL: usize = 4;
    /// Growth of the level with load μ [-].
    pub(crate) const MU: usize = 5;
    /// Friction length ε_f (slow length for the second order).
    pub(crate) const EPSF: usize = 6;
    /// Dahl exponent α.
    pub(crate) const ALPHA: usize = 7;
    /// Second order: fast/slow length ratio η.
    pub(crate) const ETA: usize = 8;
    /// Second order: f₂/f₁.
    pub(crate) const RATIO: usize = 9;
    /// Force zero offset of the instrument.
    pub(crate) const OFFSET: usize = 10;
    /// Number of physical parameters.
    pub(crate) const N: usize = 11;
}

/// A full physical parameter vector (unused entries are ignored by the law).
pub(crate) type P = [f64; idx::N];

/// The elastic part of the law.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElasticKind {
    /// Traction: quadratic toe and line, virgin/aligned, no compression.
    ToeLine,
    /// Traction: power toe F₁(ε/ε_c)^n, n = k_t ε_c/F₁, and line.
    PowerToeLine,
    /// Bending, shear, generic loop: k·x.
    Linear,
}

/// The friction shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeKind {
    /// Dahl (α may be 1 or free).
    Dahl,
    /// Bliman–Sorine second order.
    Bs2,
}

/// Law structure for the path model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LawKind {
    pub elastic: ElasticKind,
    pub shape: ShapeKind,
}

impl ElasticKind {
    /// A traction law (toe and line, alignment)?
    pub(crate) fn is_traction(self) -> bool {
        matches!(self, ElasticKind::ToeLine | ElasticKind::PowerToeLine)
    }
}

/// Elastic force and its derivatives with respect to (k, ε₁, F₁, ε₁') for traction.
#[inline]
fn toe_line_with_grad(p: &P, eps: f64, aligned: bool, power: bool) -> (f64, [f64; 4]) {
    use idx::*;
    let k = p[K];
    let (e, f, de_dp, df_dp): (f64, f64, [f64; 4], [f64; 4]) = if aligned {
        // ε_c = ε₁', F_c = F₁ − k(ε₁ − ε₁')
        let e = p[E1A];
        let f = p[F1] - k * (p[E1] - p[E1A]);
        (e, f, [0.0, 0.0, 0.0, 1.0], [-(p[E1] - p[E1A]), -k, 1.0, k])
    } else {
        (p[E1], p[F1], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0])
    };
    // partials of F_el w.r.t. (k explicit, e, f)
    let (val, dk, de, df) = if eps <= 0.0 {
        (0.0, 0.0, 0.0, 0.0)
    } else if eps < e && power {
        // F_el = f r^n, r = ε/e, n = k e/f
        let r = eps / e;
        let n = k * e / f;
        let l = r.ln();
        let rn = (n * l).exp();
        (f * rn, e * rn * l, k * rn * (l - 1.0), rn * (1.0 - n * l))
    } else if eps < e {
        let r = eps / e;
        let val = k * eps * r - f * r * r + 2.0 * f * r - k * eps;
        let dk = eps * r - eps;
        let de = -k * r * r + 2.0 * f * r * r / e - 2.0 * f * r / e;
        let df = -r * r + 2.0 * r;
        (val, dk, de, df)
    } else {
        (k * (eps - e) + f, eps - e, -k, 1.0)
    };
    let mut g = [0.0; 4];
    g[0] = dk;
    for j in 0..4 {
        g[j] += de * de_dp[j] + df * df_dp[j];
    }
    (val, g)
}

/// Elastic force alone (no derivatives).
#[inline]
pub(crate) fn elastic(kind: ElasticKind, p: &P, x: f64, aligned: bool) -> f64 {
    match kind {
        ElasticKind::Linear => p[idx::K] * x,
        ElasticKind::ToeLine | ElasticKind::PowerToeLine => {
            let toe = if kind == ElasticKind::PowerToeLine {
                ToeShape::Power
            } else {
                ToeShape::Quadratic
            };
            if aligned {
                let f1a = p[idx::F1] - p[idx::K] * (p[idx::E1] - p[idx::E1A]);
                TractionLaw::toe_and_line(toe, p[idx::K], p[idx::E1A], f1a, x)
            } else {
                TractionLaw::toe_and_line(toe, p[idx::K], p[idx::E1], p[idx::F1], x)
            }
        }
    }
}

/// Drives the law along `x` from a virgin state and writes the forces into `out`.
pub fn simulate(kind: LawKind, p: &P, x: &[f64], out: &mut [f64]) {
    let mut z1 = 0.0;
    let mut z2 = 0.0;
    let mut prev = 0.0;
    let mut aligned = false;
    for (xi, o) in x.iter().zip(out.iter_mut()) {
        let d = xi - prev;
        prev = *xi;
        match kind.shape {
            ShapeKind::Dahl => z1 = dahl_step(z1, d, p[idx::EPSF], p[idx::ALPHA]),
            ShapeKind::Bs2 => {
                (z1, z2) = bs2_step(z1, z2, d, p[idx::EPSF], p[idx::ETA], p[idx::RATIO])
            }
        }
        if kind.elastic.is_traction() && *xi >= p[idx::E1] {
            aligned = true;
        }
        let fel = elastic(kind.elastic, p, *xi, aligned);
        *o = fel + (p[idx::LEVEL] + p[idx::MU] * fel.abs()) * (z1 + z2) + p[idx::OFFSET];
    }
}

/// Exact Dahl step of z and its derivatives: returns (z', ∂z'/∂z, ∂z'/∂ε_f, ∂z'/∂α).
#[inline]
fn dahl_step_grad(z: f64, d: f64, eps_f: f64, alpha: f64) -> (f64, f64, f64, f64) {
    if d == 0.0 {
        return (z, 1.0, 0.0, 0.0);
    }
    let v = d.signum();
    let ds = d.abs();
    if alpha == 1.0 {
        let e = (-ds / eps_f).exp();
        let zn = v + (z - v) * e;
        return (zn, e, (z - v) * e * ds / (eps_f * eps_f), 0.0);
    }
    let u0 = 1.0 - v * z;
    if u0 == 0.0 {
        return (z, 1.0, 0.0, 0.0);
    }
    let b = alpha - 1.0;
    let au0 = u0.abs();
    let pw = au0.powf(-b);
    let a = pw + b * ds / eps_f;
    let au = a.powf(-1.0 / b);
    let u = u0.signum() * au;
    let zn = v * (1.0 - u);
    // d|u| = |u|·ln(a)/β² dβ − |u|/(β a) da
    let du_da = -au / (b * a);
    let da_dau0 = -b * pw / au0;
    let da_deps = -b * ds / (eps_f * eps_f);
    let da_db = -au0.ln() * pw + ds / eps_f;
    let dau_db = au * a.ln() / (b * b) + du_da * da_db;
    // u = sign(u0)|u|, z' = v(1 − u), u0 = 1 − v z  ⇒ ∂|u0|/∂z = −v·sign(u0)
    let s = u0.signum();
    let dzn_dz = -v * s * du_da * da_dau0 * (-v * s);
    let dzn_deps = -v * s * du_da * da_deps;
    let dzn_dalpha = -v * s * dau_db;
    (zn, dzn_dz, dzn_deps, dzn_dalpha)
}

/// Drives the law along `x` and writes forces into `out` and ∂F/∂p into `jac` (column-major:
/// [`idx::N`] columns of `x.len()` rows, ∂F_i/∂p_j at `jac[j·x.len() + i]`, so that a
/// coordinate's column of the Jacobian is assembled from contiguous runs).
pub(crate) fn simulate_with_jacobian(
    kind: LawKind,
    p: &P,
    x: &[f64],
    out: &mut [f64],
    jac: &mut [f64],
) {
    use idx::*;
    let m = x.len();
    debug_assert_eq!(jac.len(), m * N);
    // one slice of exactly m rows per parameter (so that no store below is bounds-checked)
    let (col_k, rest) = jac.split_at_mut(m);
    let (col_e1, rest) = rest.split_at_mut(m);
    let (col_f1, rest) = rest.split_at_mut(m);
    let (col_e1a, rest) = rest.split_at_mut(m);
    let (col_level, rest) = rest.split_at_mut(m);
    let (col_mu, rest) = rest.split_at_mut(m);
    let (col_epsf, rest) = rest.split_at_mut(m);
    let (col_alpha, rest) = rest.split_at_mut(m);
    let (col_eta, rest) = rest.split_at_mut(m);
    let (col_ratio, rest) = rest.split_at_mut(m);
    let col_offset = &mut rest[..m];
    let out = &mut out[..m];
    // states and their derivatives w.r.t. (ε_f, α | η, ratio)
    let (mut z1, mut z2) = (0.0, 0.0);
    let mut dz1 = [0.0f64; 3]; // ∂z1/∂(ε_f, α or η, ratio)
    let mut dz2 = [0.0f64; 3];
    let mut prev = 0.0;
    let mut aligned = false;
    for (i, xi) in x.iter().enumerate() {
        let d = xi - prev;
        prev = *xi;
        match kind.shape {
            ShapeKind::Dahl => {
                let (zn, dzz, dze, dza) = dahl_step_grad(z1, d, p[EPSF], p[ALPHA]);
                z1 = zn;
                dz1 = [dz1[0] * dzz + dze, dz1[1] * dzz + dza, 0.0];
            }
            ShapeKind::Bs2 => {
                if d != 0.0 {
                    let v = d.signum();
                    let ds = d.abs();
                    let (ef, eta, r) = (p[EPSF], p[ETA], p[RATIO]);
                    let e_s = (-ds / ef).exp();
                    let e_f = (-ds / (eta * ef)).exp();
                    // fast state: z1' = v + (z1 − v) e_f
                    let c1 = (z1 - v) * e_f;
                    let dz1_def = dz1[0] * e_f + c1 * ds / (eta * ef * ef);
                    let dz1_deta = dz1[1] * e_f + c1 * ds / (eta * eta * ef);
                    z1 = v + c1;
                    dz1 = [dz1_def, dz1_deta, 0.0];
                    // slow state: z2' = −r v + (z2 + r v) e_s
                    let c2 = (z2 + r * v) * e_s;
                    let dz2_def = dz2[0] * e_s + c2 * ds / (ef * ef);
                    let dz2_dr = dz2[2] * e_s - v + v * e_s;
                    z2 = -r * v + c2;
                    dz2 = [dz2_def, 0.0, dz2_dr];
                }
            }
        }
        // every entry of the row is written below (no zeroing first: it was a memset a sample)
        let (fel, gel) = match kind.elastic {
            ElasticKind::Linear => {
                let mut g = [0.0; 4];
                g[0] = *xi;
                (p[K] * xi, g)
            }
            ElasticKind::ToeLine | ElasticKind::PowerToeLine => {
                if *xi >= p[E1] {
                    aligned = true;
                }
                toe_line_with_grad(p, *xi, aligned, kind.elastic == ElasticKind::PowerToeLine)
            }
        };
        let z = z1 + z2;
        let level = p[LEVEL] + p[MU] * fel.abs();
        out[i] = fel + level * z + p[OFFSET];
        // ∂F/∂(elastic params) = ∂F_el (1 + μ sign(F_el) z)
        let factor = 1.0 + p[MU] * fel.signum() * z;
        col_k[i] = gel[0] * factor;
        col_e1[i] = gel[1] * factor;
        col_f1[i] = gel[2] * factor;
        col_e1a[i] = gel[3] * factor;
        col_level[i] = z;
        col_mu[i] = fel.abs() * z;
        col_offset[i] = 1.0;
        match kind.shape {
            ShapeKind::Dahl => {
                col_epsf[i] = level * dz1[0];
                col_alpha[i] = level * dz1[1];
                col_eta[i] = 0.0;
                col_ratio[i] = 0.0;
            }
            ShapeKind::Bs2 => {
                col_epsf[i] = level * (dz1[0] + dz2[0]);
                col_alpha[i] = 0.0;
                col_eta[i] = level * dz1[1];
                col_ratio[i] = level * dz2[2];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> P {
        let mut p = [0.0; idx::N];
        p[idx::K] = 1000.0;
        p[idx::E1] = 0.03;
        p[idx::F1] = 20.0;
        p[idx::E1A] = 0.02;
        p[idx::LEVEL] = 1.5;
        p[idx::MU] = 0.2;
        p[idx::EPSF] = 0.004;
        p[idx::ALPHA] = 1.7;
        p[idx::ETA] = 0.3;
        p[idx::RATIO] = 0.4;
        p[idx::OFFSET] = 0.1;
        p
    }

    fn path() -> Vec<f64> {
        let mut x = Vec::new();
        for i in 0..=200 {
            x.push(0.06 * i as f64 / 200.0);
        }
        for i in 1..=150 {
            x.push(0.06 - 0.05 * i as f64 / 150.0);
        }
        for i in 1..=100 {
            x.push(0.01 + 0.04 * i as f64 / 100.0);
        }
        x
    }

    #[test]
    fn sensitivities_match_central_differences() {
        let x = path();
        for elastic in [
            ElasticKind::ToeLine,
            ElasticKind::PowerToeLine,
            ElasticKind::Linear,
        ] {
            for shape in [ShapeKind::Dahl, ShapeKind::Bs2] {
                for alpha in [1.0, 1.7] {
                    let kind = LawKind { elastic, shape };
                    let mut p = params();
                    p[idx::ALPHA] = alpha;
                    let mut f = vec![0.0; x.len()];
                    let mut jac = vec![0.0; x.len() * idx::N];
                    simulate_with_jacobian(kind, &p, &x, &mut f, &mut jac);
                    let mut f_plain = vec![0.0; x.len()];
                    simulate(kind, &p, &x, &mut f_plain);
                    for (a, b) in f.iter().zip(&f_plain) {
                        assert!((a - b).abs() < 1e-9 * (1.0 + a.abs()));
                    }
                    for j in 0..idx::N {
                        if alpha == 1.0 && j == idx::ALPHA {
                            continue;
                        }
                        let h = 1e-6 * p[j].abs().max(1e-3);
                        let (mut pp, mut pm) = (p, p);
                        pp[j] += h;
                        pm[j] -= h;
                        let (mut fp, mut fm) = (vec![0.0; x.len()], vec![0.0; x.len()]);
                        simulate(kind, &pp, &x, &mut fp);
                        simulate(kind, &pm, &x, &mut fm);
                        for i in 0..x.len() {
                            // skip samples where a kink (toe switch, ε = ε_c) lies within ±h
                            let num = (fp[i] - fm[i]) / (2.0 * h);
                            let ana = jac[j * x.len() + i];
                            let scale = 1.0 + num.abs().max(ana.abs());
                            if (num - ana).abs() > 1e-4 * scale {
                                let near_kink = [p[idx::E1], p[idx::E1A]]
                                    .iter()
                                    .any(|e| (x[i] - e).abs() < 1e-3);
                                assert!(
                                    near_kink,
                                    "{elastic:?} {shape:?} α={alpha} param {j} sample {i}: {num} vs {ana}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
