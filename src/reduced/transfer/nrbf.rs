//! Regularised normalised radial basis functions (Nelles 2000): f(q) = Σ_k w_k ψ_k(q),
//! ψ_k = φ_k / Σ_j φ_j, φ_k = exp(−‖q − c_k‖²/(2σ²)); W from (ΨᵀΨ + μI)·W = Ψᵀ·F.

use nalgebra::DMatrix;

/// Normalised weights ψ_k(q) of the `centers` (each `dim` values), width `sigma`, into `out`;
/// computed relative to the nearest centre so that no weight underflows to 0/0.
pub(crate) fn normalized_weights(
    centers: &[f32],
    dim: usize,
    sigma: f64,
    q: &[f32],
    out: &mut [f64],
) {
    let dim = dim.max(1);
    let mut d2min = f64::INFINITY;
    for (o, c) in out.iter_mut().zip(centers.chunks_exact(dim)) {
        let d2: f64 = c.iter().zip(q).map(|(a, b)| f64::from(a - b).powi(2)).sum();
        *o = d2;
        d2min = d2min.min(d2);
    }
    let inv = 1.0 / (2.0 * sigma * sigma).max(f64::MIN_POSITIVE);
    let mut total = 0.0;
    for o in out.iter_mut() {
        *o = (-(*o - d2min) * inv).exp();
        total += *o;
    }
    for o in out.iter_mut() {
        *o /= total;
    }
}

/// The kernel width: the mean distance from each centre to its nearest other centre (1 with
/// a single centre or coincident centres).
pub(crate) fn kernel_width(centers: &[f32], dim: usize) -> f64 {
    let dim = dim.max(1);
    let n = centers.len() / dim;
    let c = |k: usize| &centers[k * dim..(k + 1) * dim];
    let nearest: Vec<f64> = (0..n)
        .filter_map(|a| {
            (0..n)
                .filter(|&b| b != a)
                .map(|b| {
                    c(a).iter()
                        .zip(c(b))
                        .map(|(x, y)| f64::from(x - y).powi(2))
                        .sum::<f64>()
                        .sqrt()
                })
                .min_by(f64::total_cmp)
        })
        .collect();
    let mean = nearest.iter().sum::<f64>() / nearest.len().max(1) as f64;
    if mean.is_finite() && mean > 0.0 {
        mean
    } else {
        1.0
    }
}

/// Weights W (n × `outputs`, row-major) fitting `values` (n × `outputs`, row-major) at the
/// `centers`: (ΨᵀΨ + μ·I)·W = Ψᵀ·F, μ = `regularisation` × the mean diagonal of ΨᵀΨ.
pub(crate) fn fit(
    centers: &[f32],
    dim: usize,
    sigma: f64,
    values: &[f64],
    outputs: usize,
    regularisation: f64,
) -> Option<Vec<f64>> {
    let n = centers.len() / dim.max(1);
    let mut psi = DMatrix::<f64>::zeros(n, n);
    let mut row = vec![0.0; n];
    for j in 0..n {
        normalized_weights(
            centers,
            dim,
            sigma,
            &centers[j * dim..(j + 1) * dim],
            &mut row,
        );
        for k in 0..n {
            psi[(j, k)] = row[k];
        }
    }
    let f = DMatrix::from_row_slice(n, outputs, values);
    let mut normal = psi.tr_mul(&psi);
    let mu = regularisation * normal.trace() / n.max(1) as f64;
    for k in 0..n {
        normal[(k, k)] += mu;
    }
    let rhs = psi.tr_mul(&f);
    let w = normal.cholesky()?.solve(&rhs);
    Some(
        (0..n)
            .flat_map(|k| (0..outputs).map(move |i| (k, i)))
            .map(|(k, i)| w[(k, i)])
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_reproduces_its_training_values_within_the_regularisation() {
        // 12 centres in 3 dimensions, two outputs of a smooth function
        let centers: Vec<f32> = (0..12)
            .flat_map(|k| {
                let t = k as f32 * 0.7;
                [t.sin(), (1.3 * t).cos(), 0.2 * t]
            })
            .collect();
        let values: Vec<f64> = centers
            .chunks_exact(3)
            .flat_map(|c| {
                let (x, y, z) = (f64::from(c[0]), f64::from(c[1]), f64::from(c[2]));
                [x * y + z, (x - z).exp()]
            })
            .collect();
        let sigma = kernel_width(&centers, 3);
        let w = fit(&centers, 3, sigma, &values, 2, 1e-10).unwrap();
        let mut psi = vec![0.0; 12];
        for (j, c) in centers.chunks_exact(3).enumerate() {
            normalized_weights(&centers, 3, sigma, c, &mut psi);
            for i in 0..2 {
                let f: f64 = (0..12).map(|k| psi[k] * w[k * 2 + i]).sum();
                assert!(
                    (f - values[j * 2 + i]).abs() < 1e-4,
                    "centre {j} output {i}: {f} against {}",
                    values[j * 2 + i]
                );
            }
        }
        // stronger regularisation smooths: the training values are no longer met exactly
        let w = fit(&centers, 3, sigma, &values, 2, 1e-1).unwrap();
        normalized_weights(&centers, 3, sigma, &centers[..3], &mut psi);
        let f: f64 = (0..12).map(|k| psi[k] * w[k * 2]).sum();
        assert!((f - values[0]).abs() > 1e-4);
        // the weights are a partition of unity, also far from every centre
        normalized_weights(&centers, 3, sigma, &[1e3, -1e3, 1e3], &mut psi);
        assert!((psi.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
