//! Snapshot SVD (eqs. 3–7): A = [u¹ … u^N] mean-subtracted displacements [m]; A ≈ U·Q with
//! σ_r ≥ ε·σ₁, by the method of snapshots (eigen of AᵀA) when N < M, else of A·Aᵀ.

use nalgebra::{DMatrix, SymmetricEigen};

/// The reduced basis of a snapshot set.
#[derive(Debug, Clone)]
pub struct Reduction {
    /// Coordinates M = 3v.
    pub coordinates: usize,
    /// Snapshots N.
    pub snapshots: usize,
    /// Mean shape \[m\], M values.
    pub mean: Vec<f64>,
    /// All singular values σ₁ ≥ σ₂ ≥ … of A \[m\], min(M, N) of them.
    pub sigma: Vec<f64>,
    /// Rank r kept.
    pub rank: usize,
    /// U: M × r, column-major (column k is basis vector k).
    pub basis: Vec<f64>,
    /// Q = Uᵀ·A: r × N, snapshot-major (snapshot j's r coordinates are contiguous) \[m\].
    pub coords: Vec<f64>,
}

impl Reduction {
    /// Relative l₂ error ‖A − A_r‖₂/‖A‖₂ = σ_{r+1}/σ₁ at rank r (0 when r covers all).
    pub fn spectral_error(&self, r: usize) -> f64 {
        relative_error(&self.sigma, r)
    }
}

/// σ_{r+1}/σ₁: the relative spectral-norm error of the best rank-r approximation.
pub fn relative_error(sigma: &[f64], r: usize) -> f64 {
    match (sigma.first(), sigma.get(r)) {
        (Some(&s1), Some(&s)) if s1 > 0.0 => s / s1,
        _ => 0.0,
    }
}

/// ‖A − A_r‖_F/‖A‖_F at rank r.
pub fn frobenius_error(sigma: &[f64], r: usize) -> f64 {
    let total: f64 = sigma.iter().map(|s| s * s).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let tail: f64 = sigma.iter().skip(r).map(|s| s * s).sum();
    (tail / total).sqrt()
}

/// Reduces snapshots (`data`: N snapshots of M values each, snapshot-major) to the largest
/// rank r ≤ `max_rank` with σ_r ≥ ε·σ₁, or exactly `rank` when given (capped by min(M, N)).
pub fn reduce(
    data: Vec<f64>,
    coordinates: usize,
    epsilon: f64,
    max_rank: usize,
    rank: Option<usize>,
) -> Reduction {
    let m = coordinates;
    let n = data.len().checked_div(m).unwrap_or(0);
    let mut a = DMatrix::from_vec(m, n, data);
    let mut mean = vec![0.0; m];
    for j in 0..n {
        for (mu, x) in mean.iter_mut().zip(a.column(j).iter()) {
            *mu += x;
        }
    }
    let inv_n = 1.0 / n.max(1) as f64;
    mean.iter_mut().for_each(|mu| *mu *= inv_n);
    for j in 0..n {
        for (x, mu) in a.column_mut(j).iter_mut().zip(&mean) {
            *x -= mu;
        }
    }
    // Eigenpairs of the smaller Gram matrix, sorted by decreasing eigenvalue.
    let snapshots_method = n < m;
    // A blocked product (matrixmultiply) on an explicit transpose: far faster than tr_mul.
    let at = a.transpose();
    let gram = if snapshots_method { &at * &a } else { &a * &at };
    drop(at);
    let eig = SymmetricEigen::new(gram);
    let mut order: Vec<usize> = (0..eig.eigenvalues.len()).collect();
    order.sort_by(|&i, &j| eig.eigenvalues[j].total_cmp(&eig.eigenvalues[i]));
    let sigma: Vec<f64> = order
        .iter()
        .map(|&i| eig.eigenvalues[i].max(0.0).sqrt())
        .collect();
    let s1 = sigma.first().copied().unwrap_or(0.0);
    let positive = sigma.iter().take_while(|&&s| s > s1 * 1e-12).count();
    let r = match rank {
        Some(r) => r,
        None => sigma
            .iter()
            .take_while(|&&s| s > 0.0 && s >= epsilon * s1)
            .count()
            .min(max_rank),
    }
    .min(positive);
    let mut basis = vec![0.0; m * r];
    for (k, &i) in order.iter().take(r).enumerate() {
        let col = &mut basis[k * m..(k + 1) * m];
        if snapshots_method {
            // u_k = A v_k / σ_k
            let v = eig.eigenvectors.column(i);
            let u = &a * v;
            let inv = 1.0 / sigma[k];
            for (c, x) in col.iter_mut().zip(u.iter()) {
                *c = x * inv;
            }
        } else {
            col.copy_from_slice(eig.eigenvectors.column(i).as_slice());
        }
    }
    // Q = Uᵀ A, snapshot-major.
    let u = DMatrix::from_column_slice(m, r, &basis);
    let q = u.tr_mul(&a); // r × N column-major = snapshot-major
    Reduction {
        coordinates: m,
        snapshots: n,
        mean,
        sigma,
        rank: r,
        basis,
        coords: q.as_slice().to_vec(),
    }
}
