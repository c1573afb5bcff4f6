//! Conjugate gradients on Newton's system A·δ = −g, A = M/Δt² + C/Δt + K \[N/m\], its vector
//! work in chunks of particles on rayon's threads (sums added in chunk order).

use rayon::prelude::*;

use super::{Factor, NewtonScratch, MAX_CG_ITERATIONS};
use crate::cloth::connectors::KesTangent;
use crate::cloth::implicit::residual::{dot, BackwardEuler};
use crate::cloth::implicit::SolveOutcome;
use crate::cloth::world::Material;
use crate::cloth::Vec3;

/// Particles per rayon task of the conjugate gradients' vector operations; their partial
/// sums are added in chunk order, so a dot product does not depend on the thread count.
const CHUNK: usize = 1024;

/// a·b summed per chunk of `CHUNK` particles on rayon's threads, then over the chunks in order.
fn par_dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    let parts: Vec<f64> = a
        .par_chunks(CHUNK)
        .zip(b.par_chunks(CHUNK))
        .map(|(a, b)| dot(a, b))
        .collect();
    parts.iter().sum()
}

/// p ← z + β·p (p ← z when `beta` is None) and y ← diag(inertia)·p, in one pass over the
/// chunks: the first part of y = A·p (`finish_product` adds K·p).
fn direction_and_inertia(
    sc_inertia: &[f64],
    z: &[Vec3],
    beta: Option<f64>,
    p: &mut [Vec3],
    y: &mut [Vec3],
) {
    p.par_chunks_mut(CHUNK)
        .zip(y.par_chunks_mut(CHUNK))
        .zip(z.par_chunks(CHUNK).zip(sc_inertia.par_chunks(CHUNK)))
        .for_each(|((p, y), (z, s))| {
            for ((pk, yk), (zk, s)) in p.iter_mut().zip(y.iter_mut()).zip(z.iter().zip(s)) {
                *pk = match beta {
                    Some(beta) => zk + *pk * beta,
                    None => *zk,
                };
                *yk = *pk * *s;
            }
        });
}

/// y += K·v, then y = v on the pinned rows (A = diag(inertia) + K, pinned rows and columns
/// the identity); returns v·y summed as `par_dot` sums it (per chunk, then in chunk order).
fn finish_product(
    be: &BackwardEuler<'_>,
    t: &KesTangent,
    parts: &mut Vec<Vec<Vec3>>,
    v: &[Vec3],
    y: &mut [Vec3],
) -> f64 {
    if let Material::Kes(k) = &be.world.material {
        k.add_tangent_product_banded(t, v, y, parts);
    }
    let pinned = be.world.pinned();
    let sums: Vec<f64> = y
        .par_chunks_mut(CHUNK)
        .zip(v.par_chunks(CHUNK).zip(pinned.par_chunks(CHUNK)))
        .map(|(y, (v, pinned))| {
            for ((yk, vk), &p) in y.iter_mut().zip(v).zip(pinned) {
                if p {
                    *yk = *vk;
                }
            }
            dot(v, y)
        })
        .collect();
    sums.iter().sum()
}

/// z = B⁻¹·res with the factor in use.
fn precondition(sc: &mut NewtonScratch) {
    match sc.factor {
        Factor::Lines => sc.lines.apply(&sc.res, &mut sc.z),
        Factor::Cholesky => sc.direct.apply(&sc.res, &mut sc.z),
    }
}

/// CG on A·δ = −r (`sc.r`) from δ = 0 into `sc.delta`, preconditioned by `sc.factor` (the
/// identity when the lines hold no factor), to ‖res‖ ≤ `forcing`·‖r‖ or a direction of no
/// curvature.
pub(super) fn conjugate_gradients(
    be: &BackwardEuler<'_>,
    sc: &mut NewtonScratch,
    forcing: f64,
    out: &mut SolveOutcome,
) {
    // CG on A δ = −r from δ = 0
    sc.delta.fill(Vec3::zeros());
    for (res, r) in sc.res.iter_mut().zip(&sc.r) {
        *res = -r;
    }
    let b_norm = par_dot(&sc.res, &sc.res).sqrt();
    precondition(sc);
    // p = z and the inertia part of q = A·p in one pass
    direction_and_inertia(&sc.inertia, &sc.z, None, &mut sc.p, &mut sc.q);
    let mut rz = par_dot(&sc.res, &sc.z);
    for _ in 0..MAX_CG_ITERATIONS {
        // q = A·p and p·q
        let pq = finish_product(be, &sc.tangent, &mut sc.parts, &sc.p, &mut sc.q);
        // a direction of no or negative curvature: K is semi-definite, stop here
        if pq.is_nan() || pq <= 0.0 {
            break;
        }
        let alpha = rz / pq;
        // δ += αp, res −= αq, and ‖res‖² per chunk
        let res_sq: Vec<f64> = sc
            .delta
            .par_chunks_mut(CHUNK)
            .zip(sc.res.par_chunks_mut(CHUNK))
            .zip(sc.p.par_chunks(CHUNK).zip(sc.q.par_chunks(CHUNK)))
            .map(|((delta, res), (p, q))| {
                let mut sq = 0.0;
                for ((d, r), (p, q)) in delta.iter_mut().zip(res.iter_mut()).zip(p.iter().zip(q)) {
                    *d += p * alpha;
                    *r -= q * alpha;
                    sq += r.norm_squared();
                }
                sq
            })
            .collect();
        sc.cg_iterations += 1;
        out.linear_iterations += 1;
        if res_sq.iter().sum::<f64>().sqrt() <= forcing * b_norm {
            break;
        }
        precondition(sc);
        let rz_new = par_dot(&sc.res, &sc.z);
        let beta = rz_new / rz;
        rz = rz_new;
        // p = z + βp and the inertia part of the next q = A·p in one pass
        direction_and_inertia(&sc.inertia, &sc.z, Some(beta), &mut sc.p, &mut sc.q);
    }
}
