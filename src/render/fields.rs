//! Per-particle quantities for the colour map: strain ε = l/l₀ − 1 of the structural pairs,
//! friction mobilisation |z| of the KES connectors, elastic energy density [J/m²].

use crate::cloth::{ClothWorld, EdgeFamily, Grid, Material, SpringFamily};
use crate::material::{LawState, MaterialLaw};
use crate::reduced::transfer::srgb8;

crate::named::named_enum! {
    /// What the colour map shows.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ColorBy: "quantity", exact {
        /// Mean strain of the structural pairs at a particle (from positions and rest spacings).
        Strain => "strain",
        /// Largest friction mobilisation |z| (0 … 1) of the KES connectors at a particle.
        Friction => "friction",
        /// Elastic energy density at a particle [J/m²].
        Energy => "energy",
    }
}

impl ColorBy {
    /// Whether the quantity can be computed from positions alone (a record).
    pub fn from_positions(self) -> bool {
        self == ColorBy::Strain
    }
}

/// A per-particle scalar with the range the colour map spans and its legend label.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub values: Vec<f32>,
    /// Values mapped to the two ends of the colour bar.
    pub range: (f32, f32),
    /// Legend title, e.g. "STRAIN %".
    pub label: String,
    /// Factor from a value to the number printed on the legend (100 for percent).
    pub scale: f32,
}

impl Field {
    /// The strain field of positions `x` on an `nu` × `nv` grid (rest spacings \[m\]), in %.
    pub(crate) fn strain(nu: usize, nv: usize, h_warp: f64, h_weft: f64, x: &[[f32; 3]]) -> Self {
        Self::auto(strain(nu, nv, h_warp, h_weft, x), "STRAIN %", 100.0)
    }

    /// The same field with its colour-map range fixed to `range`, when given.
    pub fn with_range(mut self, range: Option<(f32, f32)>) -> Self {
        if let Some(r) = range {
            self.range = r;
        }
        self
    }

    /// A field with the range [min(0, lowest), highest] rounded out to 1, 2 or 5 × 10ⁿ.
    pub fn auto(values: Vec<f32>, label: impl Into<String>, scale: f32) -> Self {
        let hi = values.iter().copied().fold(0.0f32, f32::max);
        let lo = values.iter().copied().fold(0.0f32, f32::min);
        // Negatives below 1 % of the largest value are round-off, not compression.
        let lo = if lo < -0.01 * hi.max(0.0) || (hi <= 0.0 && lo < 0.0) {
            -nice(-lo)
        } else {
            0.0
        };
        let hi = if hi > 0.0 { nice(hi) } else { 0.0 };
        let range = if hi > lo { (lo, hi) } else { (0.0, 1.0) };
        Self {
            values,
            range,
            label: label.into(),
            scale,
        }
    }
}

/// The smallest 1, 2 or 5 × 10ⁿ at or above `v` (> 0).
fn nice(v: f32) -> f32 {
    let e = v.log10().floor();
    let b = 10f32.powf(e);
    for m in [1.0, 2.0, 5.0, 10.0] {
        if v <= m * b * 1.0001 {
            return m * b;
        }
    }
    10.0 * b
}

/// Strain ε = l/l₀ − 1 averaged over the structural pairs at each particle, from positions
/// `x` (particle p(i, j) at j·nu + i) and the rest spacings.
pub fn strain(nu: usize, nv: usize, h_warp: f64, h_weft: f64, x: &[[f32; 3]]) -> Vec<f32> {
    let mut sum = vec![0.0f32; x.len()];
    let mut count = vec![0u32; x.len()];
    let len = |a: usize, b: usize| {
        let (p, q) = (x[a], x[b]);
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    };
    let mut add = |a: usize, b: usize, rest: f32| {
        let e = len(a, b) / rest - 1.0;
        for k in [a, b] {
            sum[k] += e;
            count[k] += 1;
        }
    };
    if x.len() != nu * nv {
        return vec![0.0; x.len()];
    }
    for j in 0..nv {
        for i in 0..nu {
            let k = j * nu + i;
            if i + 1 < nu {
                add(k, k + 1, h_warp as f32);
            }
            if j + 1 < nv {
                add(k, k + nu, h_weft as f32);
            }
        }
    }
    sum.iter()
        .zip(&count)
        .map(|(s, &c)| if c > 0 { s / c as f32 } else { 0.0 })
        .collect()
}

/// Largest friction mobilisation |z| of the connectors acting on each particle, or `None`
/// for a material without friction (Provot's springs).
pub fn friction(world: &ClothWorld) -> Option<Vec<f32>> {
    let Material::Kes(k) = &world.material else {
        return None;
    };
    let states = k.states();
    let mut out = vec![0.0f32; world.len()];
    let nt_nb = (0..k.len())
        .take_while(|&c| k.kind(c) != crate::cloth::ConnectorKind::Shear)
        .count();
    for c in 0..k.len() {
        // Two states (warp, weft) per shear cell after the traction and bending connectors.
        let z = if c < nt_nb {
            states.get(c).map(|s| s.friction.z().abs())
        } else {
            let s = nt_nb + 2 * (c - nt_nb);
            match (states.get(s), states.get(s + 1)) {
                (Some(a), Some(b)) => Some(a.friction.z().abs().max(b.friction.z().abs())),
                _ => None,
            }
        }
        .unwrap_or(0.0) as f32;
        for (p, _) in k.connector_forces(world.positions(), c) {
            out[p] = out[p].max(z);
        }
    }
    Some(out)
}

/// Elastic energy density [J/m²] at each particle: each spring's ½k(l − l₀)², or each KES
/// traction connector's w·l₀·∫F_el dε (virgin toe), shared by its two ends and divided by
/// the particle's tributary area; for the elastic surface each difference term's energy
/// shared by its nodes.
pub fn energy(world: &ClothWorld) -> Vec<f32> {
    let mut e = vec![0.0f64; world.len()];
    let x = world.positions();
    match &world.material {
        Material::Springs(s) => {
            for k in 0..s.len() {
                let edge = s.edge(k);
                let stiff = match s.family(k) {
                    SpringFamily::Structural => s.stiffness.structural,
                    SpringFamily::Shear => s.stiffness.shear,
                    SpringFamily::Flexion => s.stiffness.flexion,
                };
                let (a, b) = (edge.a as usize, edge.b as usize);
                let d = (x[b] - x[a]).norm() - edge.rest;
                let w = 0.25 * stiff * d * d;
                e[a] += w;
                e[b] += w;
            }
        }
        Material::Kes(k) => {
            let g: &Grid = &world.grid;
            let state = LawState::default();
            for edge in g.edges(&[EdgeFamily::StructuralWarp, EdgeFamily::StructuralWeft]) {
                let (a, b) = (edge.a as usize, edge.b as usize);
                let (law, width) = if edge.family == EdgeFamily::StructuralWarp {
                    let (_, j) = g.coords(a);
                    (&k.laws.traction[0], g.h_weft * Grid::border_weight(j, g.nv))
                } else {
                    let (i, _) = g.coords(a);
                    (&k.laws.traction[1], g.h_warp * Grid::border_weight(i, g.nu))
                };
                let eps = (x[b] - x[a]).norm() / edge.rest - 1.0;
                if eps <= 0.0 {
                    continue;
                }
                // Simpson's rule on ∫₀^ε F_el dε.
                let n = 8;
                let h = eps / n as f64;
                let mut s = 0.0;
                for m in 0..=n {
                    let wgt = if m == 0 || m == n {
                        1.0
                    } else if m % 2 == 1 {
                        4.0
                    } else {
                        2.0
                    };
                    s += wgt * law.elastic(&state, m as f64 * h);
                }
                let w = 0.5 * width * edge.rest * s * h / 3.0;
                e[a] += w;
                e[b] += w;
            }
        }
        Material::Terzopoulos(t) => {
            for (ek, wk) in e.iter_mut().zip(t.node_energy(x)) {
                *ek += wk;
            }
        }
    }
    e.iter()
        .zip(&world.area)
        .map(|(w, a)| if *a > 0.0 { (w / a) as f32 } else { 0.0 })
        .collect()
}

/// The field `by` for a world.
pub fn world_field(by: ColorBy, world: &ClothWorld) -> Option<Field> {
    let g = &world.grid;
    Some(match by {
        ColorBy::Strain => Field::strain(g.nu, g.nv, g.h_warp, g.h_weft, &super::positions(world)),
        ColorBy::Friction => Field::auto(friction(world)?, "FRICTION |Z|", 1.0),
        ColorBy::Energy => Field::auto(energy(world), "ENERGY J/M2", 1.0),
    })
}

/// Viridis, piecewise linear through nine samples; `t` in [0, 1]. Linear RGB.
pub fn colormap(t: f32) -> [f32; 3] {
    const STOPS: [[u8; 3]; 9] = [
        [68, 1, 84],
        [71, 44, 122],
        [59, 81, 139],
        [44, 113, 142],
        [33, 144, 141],
        [39, 173, 129],
        [92, 200, 99],
        [170, 220, 50],
        [253, 231, 37],
    ];
    let s = srgb_u8(colormap_srgb(t, &STOPS));
    s.map(srgb_to_linear)
}

fn colormap_srgb(t: f32, stops: &[[u8; 3]; 9]) -> [f32; 3] {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let f = t * 8.0;
    let i = (f.floor() as usize).min(7);
    let w = f - i as f32;
    let (a, b) = (stops[i], stops[i + 1]);
    [0, 1, 2].map(|c| a[c] as f32 + w * (b[c] as f32 - a[c] as f32))
}

fn srgb_u8(c: [f32; 3]) -> [f32; 3] {
    c.map(|v| v / 255.0)
}

fn srgb_to_linear(v: f32) -> f32 {
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

/// The colour map in sRGB bytes, for the legend drawn into the image.
pub(crate) fn colormap_rgb8(t: f32) -> [u8; 3] {
    srgb8(colormap(t))
}

/// Per-vertex linear colours of a field.
pub(crate) fn colors(field: &Field) -> Vec<[f32; 3]> {
    let (lo, hi) = field.range;
    let span = (hi - lo).max(f32::MIN_POSITIVE);
    field
        .values
        .iter()
        .map(|v| colormap((v - lo) / span))
        .collect()
}
