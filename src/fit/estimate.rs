//! Initial estimates from the curve's shape (Ngo Ngoc & Boivin §6): main rigidity from the
//! main slope, friction from what is left once the rigidity is subtracted (level from the
//! loop's half-width, ε_f from the distance to saturate after a reversal), the priming zone
//! (ε₁, F₁) from the change of slope of the tensile loading curve.

use nalgebra::{DMatrix, DVector};

use super::path_model::{idx, simulate, ElasticKind, LawKind, ShapeKind, P};
use crate::kes::Path;

/// What an estimate is built from: the path, the forces, and their ranges.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CurveRanges {
    pub x_min: f64,
    pub x_max: f64,
    pub y_min: f64,
    pub y_max: f64,
}

impl CurveRanges {
    pub(crate) fn of(x: &[f64], y: &[f64]) -> Self {
        let fold = |v: &[f64]| {
            v.iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &t| {
                    (a.min(t), b.max(t))
                })
        };
        let (x_min, x_max) = fold(x);
        let (y_min, y_max) = fold(y);
        Self {
            x_min,
            x_max,
            y_min,
            y_max,
        }
    }
    pub(crate) fn x_range(&self) -> f64 {
        self.x_max - self.x_min
    }
    pub(crate) fn y_range(&self) -> f64 {
        self.y_max - self.y_min
    }
}

/// Ordinary least squares; `None` when the design is singular.
fn lstsq(rows: &[Vec<f64>], y: &[f64]) -> Option<(DVector<f64>, f64)> {
    let n = rows.first()?.len();
    let a = DMatrix::from_fn(rows.len(), n, |i, j| rows[i][j]);
    let b = DVector::from_column_slice(y);
    let svd = a.clone().svd(true, true);
    let sol = svd.solve(&b, 1e-12).ok()?;
    let r = &a * &sol - b;
    Some((sol, r.norm_squared()))
}

/// Toe shape functions: F_el = k·g1(ε) + F·g2(ε) for toe end `e`.
fn toe_basis(eps: f64, e: f64) -> (f64, f64) {
    if eps <= 0.0 {
        (0.0, 0.0)
    } else if eps < e {
        let r = eps / e;
        (eps * r - eps, 2.0 * r - r * r)
    } else {
        (eps - e, 1.0)
    }
}

/// Linear interpolation of a branch (samples sorted by x) at `at`; None outside it.
fn interpolate(branch: &[(f64, f64)], at: f64) -> Option<f64> {
    let i = branch.partition_point(|(bx, _)| *bx < at);
    if i == 0 || i >= branch.len() {
        return None;
    }
    let ((x0, y0), (x1, y1)) = (branch[i - 1], branch[i]);
    Some(if x1 > x0 {
        y0 + (y1 - y0) * (at - x0) / (x1 - x0)
    } else {
        0.5 * (y0 + y1)
    })
}

/// Mean of a branch's y over a window of x (robust to the instrument's noise).
fn window_mean(branch: &[(f64, f64)], lo: f64, hi: f64) -> Option<f64> {
    let (mut s, mut n) = (0.0, 0);
    for (bx, by) in branch {
        if *bx >= lo && *bx <= hi {
            s += by;
            n += 1;
        }
    }
    if n > 0 {
        Some(s / n as f64)
    } else {
        interpolate(branch, 0.5 * (lo + hi))
    }
}

/// Tensile: from the loading branch L and the unloading branch U (far from the reversal),
/// F_el = (L + U)/2 and the half-width (L − U)/2 = F_c0 + μ F_el; then the toe and line
/// fitted to F_el = (L − F_c0)/(1 + μ) on the loading branch, ε₁ by a grid search with
/// F₁ kept in the toe bound; the grid's ε₁ = x_max·j/40 for j in `window`.
fn tensile_estimate(
    p: &mut P,
    x: &[f64],
    y: &[f64],
    ranges: &CurveRanges,
    power: bool,
    window: EpsOneWindow,
) {
    let x_max = ranges.x_max.max(1e-12);
    let top = x
        .iter()
        .enumerate()
        .fold(0, |b, (i, v)| if *v > x[b] { i } else { b });
    let mut loading: Vec<(f64, f64)> = x[..=top]
        .iter()
        .copied()
        .zip(y[..=top].iter().copied())
        .collect();
    let mut unloading: Vec<(f64, f64)> = x[top..]
        .iter()
        .copied()
        .zip(y[top..].iter().copied())
        .collect();
    loading.sort_by(|a, b| a.0.total_cmp(&b.0));
    unloading.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut level, mut mu) = (0.02 * ranges.y_range(), 0.0);
    if unloading.len() > 8 {
        let u_lo = unloading[0].0;
        let span = x_max - u_lo;
        // middle of the overlap: away from the reversal and from the residual strain
        let half = 0.02 * span;
        let mut rows = Vec::new();
        let mut hs = Vec::new();
        for j in 0..24 {
            let at = u_lo + span * (0.1 + 0.75 * j as f64 / 23.0);
            if let (Some(l), Some(u)) = (
                window_mean(&loading, at - half, at + half),
                window_mean(&unloading, at - half, at + half),
            ) {
                rows.push(vec![1.0, 0.5 * (l + u)]);
                hs.push(0.5 * (l - u));
            }
        }
        if let Some((c, _)) = lstsq(&rows, &hs) {
            mu = c[1].clamp(0.0, 0.8);
            level = c[0].max(1e-3 * ranges.y_range());
            if c[1] < 0.0 || c[0] < 0.0 {
                // a loop that does not widen with load: constant level, the mean half-width
                mu = 0.0;
                level =
                    (hs.iter().sum::<f64>() / hs.len().max(1) as f64).max(1e-3 * ranges.y_range());
            }
        }
    }
    // elastic target on the loading branch, past the virgin friction transition
    let full: Vec<(f64, f64)> = loading
        .iter()
        .filter(|(bx, _)| *bx > 0.05 * x_max)
        .map(|&(bx, by)| (bx, (by - level) / (1.0 + mu)))
        .collect();
    // averaged in bins of about 10 samples: the grid search needs the shape, not the noise
    let target: Vec<(f64, f64)> = full
        .chunks(10)
        .map(|c| {
            let n = c.len() as f64;
            (
                c.iter().map(|v| v.0).sum::<f64>() / n,
                c.iter().map(|v| v.1).sum::<f64>() / n,
            )
        })
        .collect();
    let mut best: Option<(f64, f64, f64, f64)> = None; // (rss, e, k, f)
                                                       // ln of the binned strains, for the power toe (bx / e)^n = exp(n (ln bx − ln e))
    let ln_bx: Vec<f64> = target.iter().map(|&(bx, _)| bx.max(1e-300).ln()).collect();
    let mut h = vec![0.0; target.len()];
    for j in window.0.max(1)..=window.1.min(EPS1_GRID) {
        let e = x_max * j as f64 / EPS1_GRID as f64;
        let ln_e = e.ln();
        // F_el = k g1 + F g2 with F = k e (1 + φ)/2: for each φ on a grid the model is k·h
        let phis: &[f64] = if power {
            &[
                -0.7, -0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.2, 0.4, 0.7, 1.0,
            ]
        } else {
            &[0.0, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0]
        };
        for &phi in phis {
            let f_over_k = e * (1.0 + phi) / 2.0;
            for ((hm, &(bx, _)), &lb) in h.iter_mut().zip(&target).zip(&ln_bx) {
                *hm = if power {
                    // F_el/k with F₁ = k e (1+φ)/2, n = 2/(1+φ)
                    let n = 2.0 / (1.0 + phi);
                    if bx <= 0.0 {
                        0.0
                    } else if bx < e {
                        f_over_k * (n * (lb - ln_e)).exp()
                    } else {
                        bx - e + f_over_k
                    }
                } else {
                    let (g1, g2) = toe_basis(bx, e);
                    g1 + g2 * f_over_k
                };
            }
            let (hh, hy) = h
                .iter()
                .zip(&target)
                .fold((0.0, 0.0), |(hh, hy), (&hm, &(_, t))| {
                    (hh + hm * hm, hy + hm * t)
                });
            if hh <= 0.0 {
                continue;
            }
            let k = hy / hh;
            if k <= 0.0 {
                continue;
            }
            let f = k * f_over_k;
            let rss: f64 = h
                .iter()
                .zip(&target)
                .map(|(&hm, &(_, t))| {
                    let r = k * hm - t;
                    r * r
                })
                .sum();
            if best.is_none_or(|b| rss < b.0) {
                best = Some((rss, e, k, f));
            }
        }
    }
    let (e, k, f) = match best {
        Some((_, e, k, f)) => (e, k, f),
        None => (
            0.5 * x_max,
            ranges.y_range() / x_max,
            0.375 * ranges.y_range(),
        ),
    };
    p[idx::K] = k;
    p[idx::E1] = e;
    p[idx::F1] = f;
    p[idx::E1A] = e;
    p[idx::MU] = mu;
    p[idx::LEVEL] = level;
    p[idx::OFFSET] = 0.0;
}

/// The steps of the grid over ε₁ of the tensile estimate: ε₁ = x_max·j/40, j = 1..=40.
pub(crate) const EPS1_GRID: usize = 40;

/// The steps j (inclusive) of the ε₁ grid an estimate of the toe and line searches:
/// ε₁ = x_max·j/[`EPS1_GRID`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct EpsOneWindow(pub usize, pub usize);

/// Initial physical parameters for `kind` on the curve (x, y).
pub(crate) fn initial_estimate(kind: LawKind, x: &[f64], y: &[f64]) -> P {
    with_friction_length(kind, elastic_estimate(kind.elastic, x, y), x, y)
}

/// The part of the initial estimate every friction shape shares: the elastic parameters, the
/// saturated friction's level and μ, the offset, and the shapes' default α, η, f₂/f₁.
pub(crate) fn elastic_estimate(elastic: ElasticKind, x: &[f64], y: &[f64]) -> P {
    elastic_estimate_within(elastic, x, y, EpsOneWindow(1, EPS1_GRID))
}

/// [`elastic_estimate`] with the tensile toe's end ε₁ searched in `window` only (a start of
/// the toe/line split other than the curve's best grid point).
pub(crate) fn elastic_estimate_within(
    elastic: ElasticKind,
    x: &[f64],
    y: &[f64],
    window: EpsOneWindow,
) -> P {
    let ranges = CurveRanges::of(x, y);
    let path = Path::new(x);
    let v: Vec<f64> = path
        .rising()
        .into_iter()
        .map(|up| if up { 1.0 } else { -1.0 })
        .collect();
    let s = path.distance_since_turn();
    let mut p = [0.0; idx::N];
    p[idx::ALPHA] = 1.0;
    p[idx::ETA] = 0.3;
    p[idx::RATIO] = 0.3;
    // samples far enough from a reversal for the friction to have saturated
    let settle = 0.05 * ranges.x_range();
    let keep: Vec<usize> = (0..x.len()).filter(|&i| s[i] > settle).collect();
    let keep = if keep.len() < 8 {
        (0..x.len()).collect()
    } else {
        keep
    };
    match elastic {
        ElasticKind::Linear => {
            // y ≈ k x + F_c0 v + μ k |x| v + c  (saturated friction)
            let rows: Vec<Vec<f64>> = keep
                .iter()
                .map(|&i| vec![x[i], v[i], x[i].abs() * v[i], 1.0])
                .collect();
            let ys: Vec<f64> = keep.iter().map(|&i| y[i]).collect();
            if let Some((c, _)) = lstsq(&rows, &ys) {
                // signed: a generic loop may lean either way; laws clamp it into their bounds
                let floor = 1e-9 * ranges.y_range() / ranges.x_range().max(1e-300);
                let k = if c[0].abs() < floor { floor } else { c[0] };
                p[idx::K] = k;
                p[idx::LEVEL] = c[1].max(1e-3 * ranges.y_range());
                p[idx::MU] = (c[2] / k.abs()).clamp(0.0, 0.8);
                p[idx::OFFSET] = c[3];
            }
        }
        ElasticKind::ToeLine | ElasticKind::PowerToeLine => tensile_estimate(
            &mut p,
            x,
            y,
            &ranges,
            elastic == ElasticKind::PowerToeLine,
            window,
        ),
    }
    p
}

/// The estimate `p` of [`elastic_estimate`] completed for `kind`'s friction shape.
pub(crate) fn with_friction_length(kind: LawKind, mut p: P, x: &[f64], y: &[f64]) -> P {
    let ranges = CurveRanges::of(x, y);
    // ε_f: the distance to saturate after a reversal, by a 1-D search on the full law
    // (on the thinned path, exact at the samples kept: `thinned_samples`)
    let (xs, ys) = super::thinning::thinned_path(x, y, super::thinning::FIT_SAMPLES);
    let mut best = (f64::INFINITY, 0.05 * ranges.x_range());
    let mut out = vec![0.0; xs.len()];
    for j in 0..14 {
        let eps_f = ranges.x_range() * 1e-4 * 10f64.powf(j as f64 * 3.5 / 13.0);
        let mut q = p;
        q[idx::EPSF] = eps_f;
        simulate(kind, &q, &xs, &mut out);
        let rss: f64 = out.iter().zip(&ys).map(|(a, b)| (a - b) * (a - b)).sum();
        if rss < best.0 {
            best = (rss, eps_f);
        }
    }
    p[idx::EPSF] = best.1;
    if kind.shape == ShapeKind::Bs2 {
        // same kinetic level as the first-order estimate: level·(1 − ratio) = F_c0
        p[idx::LEVEL] /= 1.0 - p[idx::RATIO];
    }
    p
}
