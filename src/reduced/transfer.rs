//! Reduced radiance transfer (James & Fatahalian §4, Sloan et al. 2002): per-vertex diffuse
//! transfer T_p = ∫ V_p(s) max(0, n_p·s) Y(s) ds / π in 3 SH bands at N_a k-means states,
//! T ≈ mean + U_a·q_a by SVD, q_a(q_u) by regularised NRBF; exit radiance albedo·Σ L_i T_i.

mod checks;
mod nrbf;
mod raycast;
mod sh;
mod shade;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::cloth::ObstacleShape;

use super::basis::{frobenius_error, reduce};
use super::ReducedError;

pub use checks::TransferOptionsError;
pub use sh::{axis_rotation, clamped_cosine, sh_basis, sky_rotation, ShLight, SH_BANDS, SH_COEFFS};

pub use shade::{
    frame_transfer, light_in_model_frame, mode_colours, radiance_of, srgb8, FrameShader,
    TransferSource, CLOTH_ALBEDO,
};

use raycast::Occluders;

/// Settings of a transfer precomputation (`precompute --transfer`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferOptions {
    /// Representative states N_a (k-means clusters of q_u); default 48.
    pub states: usize,
    /// Shadow rays per vertex (rounded up to a square: stratified m × m); default 64.
    pub samples: usize,
    /// Held-out states (not among the N_a) whose transfer is computed directly to measure
    /// the interpolation error; default 8.
    pub held_out: usize,
    /// ε_a: keep σ_r ≥ ε_a·σ₁ of the transfer matrix (default 0.1), unless `rank` is given.
    pub epsilon: f64,
    pub rank: Option<usize>,
    /// Seed of the ray directions and of the k-means start.
    pub seed: u64,
}

impl Default for TransferOptions {
    fn default() -> Self {
        Self {
            states: 48,
            samples: 64,
            held_out: 8,
            epsilon: 0.1,
            rank: None,
            seed: 1,
        }
    }
}

/// Largest N_a, rays per vertex and held-out states accepted.
pub const TRANSFER_LIMITS: (usize, usize, usize) = (1000, 4096, 200);

/// The transfer's entry in the model header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferInfo {
    /// SH bands (3: 9 coefficients per vertex).
    pub bands: u32,
    /// Rays per vertex (m², stratified cosine-weighted directions).
    pub samples: u32,
    pub seed: u64,
    /// Representative states N_a and transfer rank r_a.
    pub states: u32,
    pub rank: u32,
    /// +1: the transfer is of the side the mesh normal (warp × weft) points to; −1: the other.
    pub side: f32,
    /// NRBF kernel width σ in q_u \[m\] and relative ridge μ.
    pub width: f64,
    pub regularisation: f64,
    /// σ_{r_a+1}/σ₁ and ‖A_a − A_a,r‖_F/‖A_a‖_F of the mean-subtracted transfer matrix.
    pub rel_error: f64,
    pub frobenius_error: f64,
    /// Held-out states and their relative l₂ errors ‖T − T̃‖/‖T‖: interpolated (NRBF) and
    /// projected on U_a (the basis' share).
    pub held_out: u32,
    pub held_out_error: f64,
    pub held_out_projection_error: f64,
    /// The occluders besides the cloth, in the model's frame.
    pub obstacles: Vec<ObstacleShape>,
}

/// A reduced transfer model: T(q_u) ≈ mean + U_a·q_a(q_u), 9 values per vertex.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    pub info: TransferInfo,
    /// The N_a representative states (indices of the model's states): the NRBF centres.
    pub centers: Vec<u32>,
    /// Singular values of the transfer matrix, N_a of them.
    pub sigma: Vec<f32>,
    /// Mean transfer, 9 per vertex.
    pub mean: Vec<f32>,
    /// U_a: 9v × r_a, column-major.
    pub basis: Vec<f32>,
    /// NRBF weights: N_a × r_a, row-major.
    pub weights: Vec<f32>,
}

/// What a transfer precomputation measured, for `--json` (Fig. 12).
#[derive(Debug, Clone, Serialize)]
pub struct TransferStats {
    pub transfer_states: usize,
    pub transfer_samples: usize,
    pub transfer_rank: usize,
    /// σ_{r_a+1}/σ₁ of the transfer matrix.
    pub transfer_rel_error: f64,
    pub transfer_frobenius_error: f64,
    pub transfer_held_out: usize,
    /// ‖T − T̃‖/‖T‖ over the held-out states: NRBF-interpolated, and projected on U_a.
    pub transfer_held_out_error: f64,
    pub transfer_held_out_projection_error: f64,
    /// σ_{r+1}/σ₁ for r = 0 … N_a − 1.
    pub transfer_error_by_rank: Vec<f64>,
    /// Held-out interpolation error at r = 0 … N_a − 1.
    pub transfer_held_out_error_by_rank: Vec<f64>,
    pub transfer_s: f64,
}

/// Two triangles per grid cell (a, b, d and a, d, c of the cell's corners).
pub(crate) fn triangles(nu: usize, nv: usize) -> Vec<[u32; 3]> {
    let mut t = Vec::with_capacity(2 * nu.saturating_sub(1) * nv.saturating_sub(1));
    for j in 0..nv.saturating_sub(1) {
        for i in 0..nu.saturating_sub(1) {
            let a = (j * nu + i) as u32;
            let (b, c) = (a + 1, a + nu as u32);
            t.push([a, b, c + 1]);
            t.push([a, c + 1, c]);
        }
    }
    t
}

/// Area-weighted unit normals (warp × weft side) of a grid's vertices.
pub fn vertex_normals(nu: usize, nv: usize, x: &[[f32; 3]]) -> Vec<[f32; 3]> {
    use nalgebra::Vector3;
    let p = |i: usize, j: usize| Vector3::from(x[j * nu + i]);
    let mut out = Vec::with_capacity(nu * nv);
    for j in 0..nv {
        for i in 0..nu {
            let c = p(i, j);
            let nb = [
                (i + 1 < nu).then(|| p(i + 1, j)),
                (j + 1 < nv).then(|| p(i, j + 1)),
                (i > 0).then(|| p(i - 1, j)),
                (j > 0).then(|| p(i, j - 1)),
            ];
            let mut n = Vector3::zeros();
            for k in 0..4 {
                if let (Some(a), Some(b)) = (nb[k], nb[(k + 1) % 4]) {
                    n += (a - c).cross(&(b - c));
                }
            }
            out.push(n.try_normalize(1e-20).unwrap_or(Vector3::z()).into());
        }
    }
    out
}

/// The surface the transfer is computed for: the grid, its side, the obstacles and the rays.
#[derive(Debug, Clone, Copy)]
pub struct TransferSetup<'a> {
    pub nu: usize,
    pub nv: usize,
    /// Rest spacing used for the ray origins' offset along the normal \[m\].
    pub spacing: f64,
    pub side: f32,
    pub obstacles: &'a [ObstacleShape],
    pub samples: usize,
    pub seed: u64,
}

impl TransferSetup<'_> {
    /// Transfer vectors (9 per vertex) of the cloth at positions `x` \[m\]: cosine-weighted
    /// stratified directions about each vertex's normal, T_i = (1/S)·Σ V(s)·Y_i(s) (the
    /// estimator of ∫ V max(0, n·s) Y_i ds/π), shadow rays against the cloth and obstacles.
    /// Vertex p's directions are seeded by (seed, p): the result does not depend on threads.
    pub fn transfer_at(&self, x: &[[f32; 3]]) -> Vec<f32> {
        let normals = vertex_normals(self.nu, self.nv, x);
        let occ = Occluders::new(x, triangles(self.nu, self.nv), self.obstacles);
        let m = (self.samples as f64).sqrt().ceil().max(1.0) as usize;
        let offset = (0.1 * self.spacing) as f32;
        let mut out = vec![0f32; SH_COEFFS * x.len()];
        out.par_chunks_mut(SH_COEFFS)
            .enumerate()
            .for_each(|(p, t)| {
                let n = normals[p].map(|c| c * self.side);
                let (u, w) = tangent_frame(n);
                let o: [f32; 3] = std::array::from_fn(|k| x[p][k] + offset * n[k]);
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(
                    self.seed ^ (p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                );
                let mut acc = [0f64; SH_COEFFS];
                for a in 0..m {
                    for b in 0..m {
                        let e1 = (a as f32 + rng.random::<f32>()) / m as f32;
                        let e2 = (b as f32 + rng.random::<f32>()) / m as f32;
                        let (r, phi) = (e1.sqrt(), std::f32::consts::TAU * e2);
                        let (lx, ly, lz) =
                            (r * phi.cos(), r * phi.sin(), (1.0 - e1).max(0.0).sqrt());
                        let d: [f32; 3] =
                            std::array::from_fn(|k| lx * u[k] + ly * w[k] + lz * n[k]);
                        if !occ.occluded(o, d, p as u32) {
                            let y = sh_basis(d.map(f64::from));
                            for (s, yk) in acc.iter_mut().zip(y) {
                                *s += yk;
                            }
                        }
                    }
                }
                let inv = 1.0 / (m * m) as f64;
                for (t, s) in t.iter_mut().zip(acc) {
                    *t = (s * inv) as f32;
                }
            });
        out
    }
}

/// Two unit vectors completing `n` to an orthonormal frame.
fn tangent_frame(n: [f32; 3]) -> ([f32; 3], [f32; 3]) {
    use nalgebra::Vector3;
    let n = Vector3::from(n);
    let a = if n.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let u = a.cross(&n).normalize();
    let w = n.cross(&u);
    (u.into(), w.into())
}

/// k-means (Lloyd) of N points of `dim` values into `k` clusters, k-means++ start seeded by
/// `seed`; returns, for each cluster, the point nearest its mean (all distinct).
pub(crate) fn representatives(points: &[f32], dim: usize, k: usize, seed: u64) -> Vec<usize> {
    let dim = dim.max(1);
    let n = points.len() / dim;
    let k = k.min(n);
    let pt = |j: usize| &points[j * dim..(j + 1) * dim];
    let d2 = |a: &[f32], b: &[f32]| -> f64 {
        a.iter().zip(b).map(|(x, y)| f64::from(x - y).powi(2)).sum()
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut means: Vec<Vec<f32>> = Vec::with_capacity(k);
    if n == 0 || k == 0 {
        return Vec::new();
    }
    means.push(pt(rng.random_range(0..n)).to_vec());
    let mut near = vec![f64::INFINITY; n];
    while means.len() < k {
        let last = means.last().map(Vec::as_slice).unwrap_or(&[]);
        for (j, d) in near.iter_mut().enumerate() {
            *d = d.min(d2(pt(j), last));
        }
        let total: f64 = near.iter().sum();
        let next = if total > 0.0 {
            let mut target = rng.random::<f64>() * total;
            near.iter()
                .position(|&d| {
                    target -= d;
                    target <= 0.0 && d > 0.0
                })
                .unwrap_or(n - 1)
        } else {
            means.len() % n
        };
        means.push(pt(next).to_vec());
    }
    let mut assign = vec![usize::MAX; n];
    for _ in 0..100 {
        let mut changed = false;
        for (j, a) in assign.iter_mut().enumerate() {
            let best = (0..k)
                .min_by(|&x, &y| d2(pt(j), &means[x]).total_cmp(&d2(pt(j), &means[y])))
                .unwrap_or(0);
            changed |= *a != best;
            *a = best;
        }
        if !changed {
            break;
        }
        for (c, mean) in means.iter_mut().enumerate() {
            let members: Vec<usize> = (0..n).filter(|&j| assign[j] == c).collect();
            if members.is_empty() {
                continue;
            }
            for (i, v) in mean.iter_mut().enumerate() {
                *v = (members.iter().map(|&j| f64::from(pt(j)[i])).sum::<f64>()
                    / members.len() as f64) as f32;
            }
        }
    }
    let mut taken = vec![false; n];
    means
        .iter()
        .map(|mean| {
            let j = (0..n)
                .filter(|&j| !taken[j])
                .min_by(|&x, &y| d2(pt(x), mean).total_cmp(&d2(pt(y), mean)))
                .unwrap_or(0);
            taken[j] = true;
            j
        })
        .collect()
}

/// `count` states spread over 0..n, none among `exclude`.
fn held_out_states(n: usize, count: usize, exclude: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(count);
    for h in 0..count {
        let mut j = ((h as f64 + 0.5) * n as f64 / count as f64) as usize;
        while j < n && (exclude.contains(&j) || out.contains(&j)) {
            j += 1;
        }
        if j < n {
            out.push(j);
        }
    }
    out
}

/// What the transfer precomputation needs of a reduced model's states.
pub(crate) struct TransferInput<'a> {
    /// Every recorded state, unreduced: 3v f32 each \[m\].
    pub data: &'a [f32],
    /// q_u of every state, `rank` each.
    pub q: &'a [f32],
    pub rank: usize,
}

/// Computes the reduced transfer: N_a representatives by k-means on q_u, their transfer on
/// the unreduced meshes, SVD to r_a, NRBF weights, and the held-out errors.
pub(crate) fn build_transfer(
    setup: &TransferSetup<'_>,
    input: &TransferInput<'_>,
    opts: &TransferOptions,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<(Transfer, TransferStats), ReducedError> {
    opts.validate()?;
    let t0 = std::time::Instant::now();
    let v = setup.nu * setup.nv;
    let r = input.rank.max(1);
    let n = input.q.len() / r;
    if n < 2 {
        return Err(ReducedError::Invalid(format!(
            "{n} recorded states: the transfer needs at least 2"
        )));
    }
    // the transfer matrix and its Gram matrix in f64, as the snapshot SVD's budget
    let na = opts.states.min(n) as u64;
    let bytes = 8 * na * (na + (SH_COEFFS * v) as u64);
    if bytes > crate::input::MEMORY_BUDGET {
        return Err(ReducedError::Invalid(format!(
            "transfer: {na} states of {v} vertices need about {}, more than the budget of {}; lower --transfer-states",
            crate::input::bytes_label(bytes),
            crate::input::bytes_label(crate::input::MEMORY_BUDGET)
        )));
    }
    let centers = representatives(input.q, r, opts.states, opts.seed);
    let held = held_out_states(n, opts.held_out, &centers);
    let total = (centers.len() + held.len()) as f64;
    let state = |j: usize| -> Vec<[f32; 3]> {
        input.data[j * 3 * v..(j + 1) * 3 * v]
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect()
    };
    let mut done = 0.0;
    let mut direct = |j: usize| {
        let t = setup.transfer_at(&state(j));
        done += 1.0;
        progress(done / total);
        t
    };
    let coords = SH_COEFFS * v;
    let mut a = Vec::with_capacity(coords * centers.len());
    for &j in &centers {
        a.extend(direct(j).into_iter().map(f64::from));
    }
    let held_t: Vec<Vec<f32>> = held.iter().map(|&j| direct(j)).collect();
    let max_rank = centers.len();
    let red = reduce(a, coords, opts.epsilon, max_rank, opts.rank);
    let ra = red.rank;
    if ra == 0 {
        return Err(ReducedError::Invalid(
            "the transfer does not change between the representative states: rank 0".into(),
        ));
    }
    // NRBF on q_u of the representatives: q_a of each (N_a × r_a, row-major)
    let cq: Vec<f32> = centers
        .iter()
        .flat_map(|&j| input.q[j * r..(j + 1) * r].iter().copied())
        .collect();
    let width = nrbf::kernel_width(&cq, r);
    let regularisation = 1e-8;
    let weights = nrbf::fit(&cq, r, width, &red.coords, ra, regularisation)
        .ok_or_else(|| ReducedError::Invalid("the NRBF system is singular".into()))?;
    let mean: Vec<f32> = red.mean.iter().map(|&x| x as f32).collect();
    let basis: Vec<f32> = red.basis.iter().map(|&x| x as f32).collect();
    let transfer = Transfer {
        info: TransferInfo {
            bands: SH_BANDS as u32,
            samples: {
                let m = (opts.samples as f64).sqrt().ceil() as u32;
                m * m
            },
            seed: opts.seed,
            states: centers.len() as u32,
            rank: ra as u32,
            side: setup.side,
            width,
            regularisation,
            rel_error: red.spectral_error(ra),
            frobenius_error: frobenius_error(&red.sigma, ra),
            held_out: held.len() as u32,
            held_out_error: 0.0,
            held_out_projection_error: 0.0,
            obstacles: setup.obstacles.to_vec(),
        },
        centers: centers.iter().map(|&j| j as u32).collect(),
        sigma: red.sigma.iter().map(|&s| s as f32).collect(),
        mean,
        basis,
        weights: weights.iter().map(|&w| w as f32).collect(),
    };
    // held-out errors at every rank r ≤ r_a' (the NRBF outputs are independent per coordinate)
    let by_rank = held_out_by_rank(&transfer, &held, &held_t, input);
    let proj = projection_error(&transfer, &held_t);
    let mut transfer = transfer;
    transfer.info.held_out_error = by_rank.get(ra).copied().unwrap_or(0.0);
    transfer.info.held_out_projection_error = proj;
    let stats = TransferStats {
        transfer_states: centers.len(),
        transfer_samples: transfer.info.samples as usize,
        transfer_rank: ra,
        transfer_rel_error: transfer.info.rel_error,
        transfer_frobenius_error: transfer.info.frobenius_error,
        transfer_held_out: held.len(),
        transfer_held_out_error: transfer.info.held_out_error,
        transfer_held_out_projection_error: proj,
        transfer_error_by_rank: (0..red.sigma.len())
            .map(|k| red.spectral_error(k))
            .collect(),
        transfer_held_out_error_by_rank: by_rank,
        transfer_s: t0.elapsed().as_secs_f64(),
    };
    Ok((transfer, stats))
}

/// ‖T − T̃_r‖/‖T‖ over the held-out states for r = 0 … r_a (NRBF coefficients cut to r).
fn held_out_by_rank(
    t: &Transfer,
    held: &[usize],
    held_t: &[Vec<f32>],
    input: &TransferInput<'_>,
) -> Vec<f64> {
    let ra = t.info.rank as usize;
    let r = input.rank.max(1);
    let mut num = vec![0.0f64; ra + 1];
    let mut den = 0.0f64;
    let mut c = vec![0f32; ra];
    for (&j, direct) in held.iter().zip(held_t) {
        t.coefficients(input.q, r, &input.q[j * r..(j + 1) * r], &mut c);
        let mut approx: Vec<f64> = t.mean.iter().map(|&x| f64::from(x)).collect();
        let err = |approx: &[f64]| -> f64 {
            approx
                .iter()
                .zip(direct)
                .map(|(a, &d)| (a - f64::from(d)).powi(2))
                .sum()
        };
        num[0] += err(&approx);
        for k in 0..ra {
            let col = &t.basis[k * approx.len()..(k + 1) * approx.len()];
            for (a, u) in approx.iter_mut().zip(col) {
                *a += f64::from(c[k]) * f64::from(*u);
            }
            num[k + 1] += err(&approx);
        }
        den += direct.iter().map(|&d| f64::from(d).powi(2)).sum::<f64>();
    }
    num.iter()
        .map(|e| if den > 0.0 { (e / den).sqrt() } else { 0.0 })
        .collect()
}

/// ‖T − (mean + U_a U_aᵀ(T − mean))‖/‖T‖ over the held-out transfers.
fn projection_error(t: &Transfer, held_t: &[Vec<f32>]) -> f64 {
    let m = t.mean.len();
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for direct in held_t {
        let d: Vec<f64> = direct
            .iter()
            .zip(&t.mean)
            .map(|(&x, &mu)| f64::from(x - mu))
            .collect();
        let mut resid = d.clone();
        for col in t.basis.chunks_exact(m) {
            let c: f64 = col.iter().zip(&d).map(|(&u, x)| f64::from(u) * x).sum();
            for (r, &u) in resid.iter_mut().zip(col) {
                *r -= c * f64::from(u);
            }
        }
        num += resid.iter().map(|x| x * x).sum::<f64>();
        den += direct.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>();
    }
    if den > 0.0 {
        (num / den).sqrt()
    } else {
        0.0
    }
}

impl Transfer {
    /// q_a at q_u (`rank` values), by the NRBF over the representatives' q_u (taken from
    /// `states_q`, the model's q of every state).
    pub fn coefficients(&self, states_q: &[f32], rank: usize, q: &[f32], out: &mut [f32]) {
        let ra = self.info.rank as usize;
        let na = self.centers.len();
        let cq: Vec<f32> = self
            .centers
            .iter()
            .flat_map(|&j| {
                states_q[j as usize * rank..(j as usize + 1) * rank]
                    .iter()
                    .copied()
            })
            .collect();
        let mut psi = vec![0.0f64; na];
        nrbf::normalized_weights(&cq, rank, self.info.width, q, &mut psi);
        for (i, o) in out.iter_mut().enumerate().take(ra) {
            *o = (0..na)
                .map(|k| psi[k] * f64::from(self.weights[k * ra + i]))
                .sum::<f64>() as f32;
        }
    }

    /// T = mean + U_a·q_a into `out` (9 per vertex).
    pub fn vectors(&self, qa: &[f32], out: &mut [f32]) {
        let m = self.mean.len();
        out[..m].copy_from_slice(&self.mean);
        for (col, &c) in self.basis.chunks_exact(m).zip(qa) {
            for (o, u) in out[..m].iter_mut().zip(col) {
                *o += c * u;
            }
        }
    }
}
