//! The thinned path the least-squares runs use: every stride-th sample and every turning point,
//! on which the rate-independent laws give exactly the full path's forces.

/// Samples the least-squares runs aim for: longer curves are thinned to about this many, or
/// to an eighth of their samples when that is more (long noisy records keep their detail).
pub(crate) const FIT_SAMPLES: usize = 240;

/// The indices of the samples the least-squares runs use: every `stride`-th sample, the first
/// and the last, and every turning point of the path (a sample where x stops rising or
/// falling). The laws are rate independent and exact over any monotone increment (the friction
/// operators step in closed form, the toe remembers only the largest strain, which a turning
/// point or the current sample holds), so the law driven along the thinned path gives exactly
/// the forces of the full path at the samples kept.
pub fn thinned_samples(x: &[f64], target: usize) -> Vec<usize> {
    let n = x.len();
    let stride = n.div_ceil(target.max(1)).max(1);
    if stride == 1 {
        return (0..n).collect();
    }
    (0..n)
        .filter(|&i| {
            if i == 0 || i + 1 == n || i % stride == 0 {
                return true;
            }
            let before = x[i] - x[i - 1];
            let after = x[i + 1] - x[i];
            before * after < 0.0 || (before == 0.0) != (after == 0.0)
        })
        .collect()
}

/// The samples of (x, y) that [`thinned_samples`] keeps.
pub(crate) fn thinned_path(x: &[f64], y: &[f64], target: usize) -> (Vec<f64>, Vec<f64>) {
    thinned_samples(x, target)
        .into_iter()
        .map(|i| (x[i], y[i]))
        .unzip()
}
