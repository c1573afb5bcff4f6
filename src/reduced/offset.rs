//! Offset dynamics: the difference δ = (q − q_IRF, q̇ − q̇_IRF) [m, m/s] between the played state
//! and the IRF it follows evolves as δ_{k+1} = A_e·δ_k per frame, A_e of palette entry e fitted
//! by least squares to its IRFs' frames (x_{j+1} = A_e·x_j + c_e, x = (q, q̇)).

use nalgebra::{DMatrix, DVector};

use super::model::ReducedModel;

/// Frames per unknown a fit needs (2r + 1 unknowns per row).
const SAMPLES_PER_UNKNOWN: usize = 4;

/// A_e for each palette entry (2r × 2r, row-major), or None where the IRFs are too few for a
/// fit or A_e is not stable (spectral radius ≥ 1): that entry's offset decays as e^(−λt).
/// With `stable_only` false (flow playback, which applies A_e once per frame to a fresh δ),
/// an A_e of spectral radius ≥ 1 is kept.
pub(crate) fn fit_offset_dynamics(
    model: &ReducedModel,
    stable_only: bool,
) -> Vec<Option<Vec<f32>>> {
    (0..model.info.palette.len())
        .map(|e| {
            let frames = model
                .orbits
                .iter()
                .filter(|o| o.entry as usize == e)
                .flat_map(|o| o.start as usize..o.end as usize)
                .map(|j| {
                    (
                        [model.q_of(j), model.qdot_of(j)],
                        [model.q_of(j + 1), model.qdot_of(j + 1)],
                    )
                });
            fit_linear(model.rank, frames, stable_only)
        })
        .collect()
}

/// One frame of a fit: (q, q̇) before and after.
type Frame<'a> = ([&'a [f32]; 2], [&'a [f32]; 2]);

/// Least squares x_{j+1} = A·x_j + c over `frames` (x = (q, q̇), r values each): A row-major
/// when there are at least 4 frames per unknown and its spectral radius is below 1.
fn fit_linear<'a>(
    r: usize,
    frames: impl Iterator<Item = Frame<'a>>,
    stable_only: bool,
) -> Option<Vec<f32>> {
    let n2 = 2 * r;
    let d = n2 + 1;
    let mut xtx = DMatrix::<f64>::zeros(d, d);
    let mut xty = DMatrix::<f64>::zeros(d, n2);
    let mut x = DVector::<f64>::zeros(d);
    let mut y = DVector::<f64>::zeros(n2);
    let mut samples = 0usize;
    for ([q0, qd0], [q1, qd1]) in frames {
        for k in 0..r {
            x[k] = f64::from(q0[k]);
            x[r + k] = f64::from(qd0[k]);
            y[k] = f64::from(q1[k]);
            y[r + k] = f64::from(qd1[k]);
        }
        x[n2] = 1.0;
        xtx.ger(1.0, &x, &x, 1.0);
        xty.ger(1.0, &x, &y, 1.0);
        samples += 1;
    }
    if samples < SAMPLES_PER_UNKNOWN * d {
        return None;
    }
    // a ridge of 10⁻⁹ of the mean diagonal keeps the normal equations definite
    let ridge = 1e-9 * xtx.trace() / d as f64;
    for i in 0..d {
        xtx[(i, i)] += ridge;
    }
    let w = xtx.cholesky()?.solve(&xty); // d × n2: y = wᵀ·x
    let a = w.rows(0, n2).transpose();
    let radius = a
        .clone()
        .complex_eigenvalues()
        .iter()
        .map(|z| z.norm())
        .fold(0.0, f64::max);
    (radius.is_finite() && (radius < 1.0 || !stable_only))
        .then(|| a.transpose().iter().map(|&v| v as f32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A damped rotation x_{k+1} = ρ·R(θ)·x_k + c (r = 1) from several starts.
    fn frames_of(rho: f32, theta: f32) -> Vec<[f32; 4]> {
        let (c, s) = (theta.cos(), theta.sin());
        let mut out = Vec::new();
        for start in [[1.0f32, 0.0], [0.0, 2.0], [-1.5, 0.5], [0.3, -0.8]] {
            let mut x = start;
            for _ in 0..20 {
                let next = [
                    rho * (c * x[0] - s * x[1]) + 0.01,
                    rho * (s * x[0] + c * x[1]) - 0.02,
                ];
                out.push([x[0], x[1], next[0], next[1]]);
                x = next;
            }
        }
        out
    }

    #[test]
    fn the_fit_recovers_a_damped_rotation_and_refuses_a_growing_one() {
        let (rho, theta) = (0.95f32, 0.3f32);
        let data = frames_of(rho, theta);
        let frames = data
            .iter()
            .map(|f| ([&f[0..1], &f[1..2]], [&f[2..3], &f[3..4]]));
        let a = fit_linear(1, frames, true).expect("stable");
        let want = [
            rho * theta.cos(),
            -rho * theta.sin(),
            rho * theta.sin(),
            rho * theta.cos(),
        ];
        for (got, want) in a.iter().zip(want) {
            assert!((got - want).abs() < 1e-3, "{a:?} against {want}");
        }
        let growing = frames_of(1.05, 0.3);
        let frames = growing
            .iter()
            .map(|f| ([&f[0..1], &f[1..2]], [&f[2..3], &f[3..4]]));
        assert_eq!(fit_linear(1, frames, true), None);
        let few = data[..5]
            .iter()
            .map(|f| ([&f[0..1], &f[1..2]], [&f[2..3], &f[3..4]]));
        assert_eq!(fit_linear(1, few, true), None);
    }
}
