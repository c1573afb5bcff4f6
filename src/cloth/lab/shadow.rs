//! The projected area of a draped specimen on the horizontal plane [m²] (its shadow under a
//! point light far above, as the drapemeter's paper ring records it) and its outline r(θ) \[m\].

use crate::cloth::grid::Grid;
use crate::cloth::Vec3;

/// Angular bins of the outline r(θ) (one per degree).
pub(crate) const OUTLINE_BINS: usize = 360;

/// The shadow of the triangles of `grid` whose three particles are kept, rasterised on a
/// square raster of `pixel` [m] centred on (0, 0) in the XZ plane.
pub(crate) struct Shadow {
    /// Covered area \[m²\].
    pub area: f64,
    /// Farthest covered point from the centre in each 1° bin of the angle about Y \[m\].
    pub outline: Vec<f64>,
}

/// Triangles (p00, p10, p11) and (p00, p11, p01) of every cell, by particle index.
fn triangles(grid: &Grid) -> impl Iterator<Item = [usize; 3]> + '_ {
    (0..grid.nv.saturating_sub(1)).flat_map(move |j| {
        (0..grid.nu.saturating_sub(1)).flat_map(move |i| {
            let [p00, p10, p01, p11] = grid.cell_corners(i, j);
            [[p00, p10, p11], [p00, p11, p01]]
        })
    })
}

/// Rasterises the shadow of the kept triangles within `half_extent` [m] of the centre.
pub(crate) fn shadow(
    grid: &Grid,
    x: &[Vec3],
    kept: &[bool],
    half_extent: f64,
    pixel: f64,
) -> Shadow {
    let n = (2.0 * half_extent / pixel).ceil() as usize + 1;
    let origin = -0.5 * n as f64 * pixel;
    let mut covered = vec![false; n * n];
    let to_pixel = |v: f64| (v - origin) / pixel - 0.5;
    for t in triangles(grid) {
        if !t.iter().all(|&k| kept[k]) {
            continue;
        }
        let p: Vec<(f64, f64)> = t.iter().map(|&k| (x[k].x, x[k].z)).collect();
        let twice_area =
            (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[1].1 - p[0].1);
        if twice_area == 0.0 {
            continue;
        }
        let lo_x = p.iter().map(|q| q.0).fold(f64::INFINITY, f64::min);
        let hi_x = p.iter().map(|q| q.0).fold(f64::NEG_INFINITY, f64::max);
        let lo_z = p.iter().map(|q| q.1).fold(f64::INFINITY, f64::min);
        let hi_z = p.iter().map(|q| q.1).fold(f64::NEG_INFINITY, f64::max);
        let clamp = |v: f64| v.clamp(0.0, (n - 1) as f64);
        let (i0, i1) = (clamp(to_pixel(lo_x).ceil()), clamp(to_pixel(hi_x).floor()));
        let (j0, j1) = (clamp(to_pixel(lo_z).ceil()), clamp(to_pixel(hi_z).floor()));
        let edge = |a: (f64, f64), b: (f64, f64), q: (f64, f64)| {
            ((b.0 - a.0) * (q.1 - a.1) - (q.0 - a.0) * (b.1 - a.1)) * twice_area.signum()
        };
        for jj in j0 as usize..=j1 as usize {
            for ii in i0 as usize..=i1 as usize {
                let q = (
                    origin + (ii as f64 + 0.5) * pixel,
                    origin + (jj as f64 + 0.5) * pixel,
                );
                if edge(p[0], p[1], q) >= 0.0
                    && edge(p[1], p[2], q) >= 0.0
                    && edge(p[2], p[0], q) >= 0.0
                {
                    covered[jj * n + ii] = true;
                }
            }
        }
    }
    let mut outline = vec![0.0f64; OUTLINE_BINS];
    let mut count = 0usize;
    for jj in 0..n {
        for ii in 0..n {
            if !covered[jj * n + ii] {
                continue;
            }
            count += 1;
            let (qx, qz) = (
                origin + (ii as f64 + 0.5) * pixel,
                origin + (jj as f64 + 0.5) * pixel,
            );
            let angle = qz.atan2(qx).rem_euclid(std::f64::consts::TAU);
            let bin = ((angle / std::f64::consts::TAU * OUTLINE_BINS as f64) as usize)
                .min(OUTLINE_BINS - 1);
            outline[bin] = outline[bin].max((qx * qx + qz * qz).sqrt());
        }
    }
    Shadow {
        area: count as f64 * pixel * pixel,
        outline,
    }
}

/// The area of the pixels of [`shadow`]'s raster (`half_extent`, `pixel` [m]) whose centres lie
/// within `radius` [m] of the centre: a disc on the same raster as the shadows \[m²\].
pub(crate) fn disc_area(radius: f64, half_extent: f64, pixel: f64) -> f64 {
    let n = (2.0 * half_extent / pixel).ceil() as usize + 1;
    let origin = -0.5 * n as f64 * pixel;
    let centre = |k: usize| origin + (k as f64 + 0.5) * pixel;
    let count = (0..n)
        .flat_map(|jj| (0..n).map(move |ii| (ii, jj)))
        .filter(|&(ii, jj)| centre(ii).powi(2) + centre(jj).powi(2) <= radius * radius)
        .count();
    count as f64 * pixel * pixel
}

/// Folds of an outline r(θ) (any unit): the outline smoothed over ±`half_window` bins, then
/// the number of rises from below mean − δ to above mean + δ around the circle, δ a tenth of
/// its range; 0 when the range is below `min_range` (an axisymmetric shadow).
pub(crate) fn folds(outline: &[f64], half_window: usize, min_range: f64) -> usize {
    let n = outline.len();
    if n == 0 {
        return 0;
    }
    let smooth: Vec<f64> = (0..n)
        .map(|b| {
            let sum: f64 = (0..=2 * half_window)
                .map(|d| outline[(b + n + d - half_window) % n])
                .sum();
            sum / (2 * half_window + 1) as f64
        })
        .collect();
    let lo = smooth.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = smooth.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi - lo < min_range {
        return 0;
    }
    let mean = smooth.iter().sum::<f64>() / n as f64;
    let delta = 0.1 * (hi - lo);
    // start at the lowest point, decisively below
    let start = smooth
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(b, _)| b);
    let mut below = true;
    let mut rises = 0;
    for d in 1..=n {
        let r = smooth[(start + d) % n];
        if below && r > mean + delta {
            rises += 1;
            below = false;
        } else if !below && r < mean - delta {
            below = true;
        }
    }
    rises
}
