//! Shading with precomputed transfer: exit radiance albedo·Σ L_i T_i per vertex under an SH
//! light given in the world and turned into the model's (door) frame.

use crate::scene::DoorSpec;

use super::{axis_rotation, ShLight, Transfer, TransferSetup, SH_COEFFS};
use crate::reduced::ReducedModel;

/// Diffuse albedo of the cloth in frames shaded by transfer (linear RGB).
pub const CLOTH_ALBEDO: [f32; 3] = [0.78, 0.30, 0.16];

/// Exit radiance of played frames under a light given in the world (linear RGB per vertex):
/// the shading of `kestrel play --out` and of the Cloth tab.
#[derive(Debug, Clone)]
pub struct FrameShader {
    pub source: TransferSource,
    /// The light in the world frame.
    pub sky: ShLight,
    t: Vec<f32>,
    radiance: Vec<[f32; 3]>,
}

impl FrameShader {
    pub fn new(source: TransferSource, sky: ShLight) -> Self {
        Self {
            source,
            sky,
            t: Vec::new(),
            radiance: Vec::new(),
        }
    }

    /// The radiance of `model`'s frame at reduced coordinates `q`, shape `local` (model frame,
    /// 3v \[m\]) and door angle `angle` \[rad\].
    pub fn shade(
        &mut self,
        model: &ReducedModel,
        transfer: &Transfer,
        q: &[f32],
        local: &[f32],
        angle: f64,
    ) -> &[[f32; 3]] {
        frame_transfer(model, transfer, self.source, q, local, &mut self.t);
        let light = light_in_model_frame(&self.sky, model.info.door.as_ref(), angle);
        radiance_of(&light, CLOTH_ALBEDO, &self.t, &mut self.radiance);
        &self.radiance
    }
}

/// The world light seen from the door's frame when the door has turned by `angle` \[rad\]:
/// the frame turns by R(angle) about the hinge axis, so L_door(s) = L(R·s).
pub fn light_in_model_frame(light: &ShLight, door: Option<&DoorSpec>, angle: f64) -> ShLight {
    match door {
        Some(d) => light.rotated(&axis_rotation(d.axis, -angle)),
        None => *light,
    }
}

/// Exit radiance per vertex of transfer vectors `t` (9 per vertex) under `light`.
pub fn radiance_of(light: &ShLight, albedo: [f32; 3], t: &[f32], out: &mut Vec<[f32; 3]>) {
    out.clear();
    out.extend(
        t.chunks_exact(SH_COEFFS)
            .map(|tv| light.radiance(albedo, tv)),
    );
}

/// Linear RGB radiance encoded as 8-bit sRGB (IEC 61966-2-1: 12.92·c below 0.0031308, else
/// 1.055·c^(1/2.4) − 0.055), each channel clamped to \[0, 1\] first.
pub fn srgb8(c: [f32; 3]) -> [u8; 3] {
    c.map(|v| {
        let x = if v.is_finite() {
            v.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let s = if x <= 0.003_130_8 {
            12.92 * x
        } else {
            1.055 * x.powf(1.0 / 2.4) - 0.055
        };
        (255.0 * s).round().clamp(0.0, 255.0) as u8
    })
}

/// Diverging colours of a transfer mode's irradiance (linear RGB): −max, 0 and +max.
const MODE_NEGATIVE: [f32; 3] = [0.05, 0.25, 0.85];
const MODE_ZERO: [f32; 3] = [0.55, 0.55, 0.55];
const MODE_POSITIVE: [f32; 3] = [0.85, 0.25, 0.05];

/// The colour of transfer mode `k` (0-based, < r_a) per vertex: its irradiance under `light`,
/// e_p = Σ_i L̄_i·U_a\[9p + i, k\] with L̄ the light's luminance (Rec. 709 weights 0.2126,
/// 0.7152, 0.0722), scaled by max_p |e_p| to \[−1, 1\] and shown on a diverging scale (blue
/// −1, grey 0, orange +1): Fig. 13's images of the transfer modes. None when k ≥ r_a.
pub fn mode_colours(light: &ShLight, transfer: &Transfer, k: usize) -> Option<Vec<[f32; 3]>> {
    let m = transfer.mean.len();
    let col = transfer.basis.chunks_exact(m).nth(k)?;
    let lum: [f32; SH_COEFFS] = std::array::from_fn(|i| {
        0.2126 * light.rgb[0][i] + 0.7152 * light.rgb[1][i] + 0.0722 * light.rgb[2][i]
    });
    let e: Vec<f32> = col
        .chunks_exact(SH_COEFFS)
        .map(|u| u.iter().zip(&lum).map(|(u, l)| u * l).sum())
        .collect();
    let top = e.iter().fold(0f32, |a, v| a.max(v.abs()));
    Some(
        e.iter()
            .map(|&v| {
                let t = if top > 0.0 { v / top } else { 0.0 };
                let end = if t >= 0.0 {
                    MODE_POSITIVE
                } else {
                    MODE_NEGATIVE
                };
                std::array::from_fn(|c| MODE_ZERO[c] + (end[c] - MODE_ZERO[c]) * t.abs())
            })
            .collect(),
    )
}

/// How a frame's transfer is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferSource {
    /// mean + U_a·q_a(q_u), q_a by the NRBF (the reduced model), with the first `modes` of the
    /// r_a transfer modes (all of them when `modes` ≥ r_a; Fig. 9's frames at increasing r_a).
    Reduced { modes: usize },
    /// Shadow rays on the frame's own mesh (the full transfer, as in the precomputation).
    Direct,
}

/// Transfer vectors of a played frame of `model` (which must hold a transfer): reduced at
/// reduced coordinates `q`, or computed directly on the shape `local` (model frame, 3v \[m\]).
pub fn frame_transfer(
    model: &ReducedModel,
    transfer: &Transfer,
    source: TransferSource,
    q: &[f32],
    local: &[f32],
    out: &mut Vec<f32>,
) {
    match source {
        TransferSource::Reduced { modes } => {
            let mut qa = vec![0f32; transfer.info.rank as usize];
            transfer.coefficients(&model.q, model.rank, q, &mut qa);
            // each coefficient's NRBF weights are their own column: the first `modes` of them
            // are the NRBF of the rank-`modes` basis
            qa.iter_mut().skip(modes).for_each(|c| *c = 0.0);
            out.resize(transfer.mean.len(), 0.0);
            transfer.vectors(&qa, out);
        }
        TransferSource::Direct => {
            let g = model.info.grid();
            let setup = TransferSetup {
                nu: g.nu,
                nv: g.nv,
                spacing: g.h_warp.min(g.h_weft),
                side: transfer.info.side,
                obstacles: &transfer.info.obstacles,
                samples: transfer.info.samples as usize,
                seed: transfer.info.seed,
            };
            let x: Vec<[f32; 3]> = local.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
            *out = setup.transfer_at(&x);
        }
    }
}
