//! The wgpu side: adapter and device without a window, pipelines, 4× MSAA colour and depth
//! targets, a shadow map and the ground's light texture, and the texture → buffer readback
//! with 256-byte row alignment.

use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

mod adapter;
mod buffers;
mod passes;

use super::mesh::{Mesh, StaticParts};
use super::RenderError;
use adapter::open_first;
use buffers::{MeshBuffers, Targets};
use passes::Passes;

pub use adapter::AdapterSummary;

pub const SAMPLES: u32 = 4;
/// Plain RGBA8: the shader writes sRGB-encoded colours itself (a software rasteriser converts
/// every sample of an sRGB target, which costs more than all the shading).
const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
pub(crate) const SHADOW_SIZE: u32 = 1024;
/// Texels of the ground's light texture along each side (it spans the shadow map's square).
const GROUND_LIGHT_SIZE: u32 = 512;
const GROUND_LIGHT_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R8Unorm;

/// Uniforms shared by every pass; layout matches `Globals` in scene.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Globals {
    pub view_proj: [[f32; 4]; 4],
    pub light_view_proj: [[f32; 4]; 4],
    pub light_inverse: [[f32; 4]; 4],
    pub eye: [f32; 4],
    pub light: [f32; 4],
    pub up: [f32; 4],
    pub grid: [f32; 4],
    pub ground: [f32; 4],
}

/// Device, queue, pipelines and targets.
pub(crate) struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: AdapterSummary,
    /// The first validation or device error wgpu reported, taken after each submission.
    errors: Arc<Mutex<Option<String>>>,
    passes: Passes,
    statics: MeshBuffers,
    /// Where the ground (not drawn into the shadow map) and the other planes end in `statics`.
    parts: StaticParts,
    dynamic: MeshBuffers,
    targets: Targets,
}

impl Gpu {
    /// Device, pipelines and targets on the best adapter that opens.
    pub(crate) fn new(width: u32, height: u32) -> Result<Self, RenderError> {
        open_first(|adapter| Self::open(&adapter, width, height))
    }

    fn open(adapter: &wgpu::Adapter, width: u32, height: u32) -> Result<Self, RenderError> {
        let summary = AdapterSummary::of(&adapter.get_info());
        let limits = adapter.limits();
        if width.max(height) > limits.max_texture_dimension_2d {
            return Err(RenderError::Size(format!(
                "{width}x{height} exceeds the adapter's largest texture ({})",
                limits.max_texture_dimension_2d
            )));
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("kestrel render"),
            required_features: wgpu::Features::empty(),
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(|e| RenderError::Device(format!("{summary}: {e}")))?;

        let errors: Arc<Mutex<Option<String>>> = Arc::default();
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut slot) = sink.lock() {
                slot.get_or_insert_with(|| e.to_string());
            }
        }));
        let passes = Passes::new(&device);
        if let Some(e) = errors.lock().ok().and_then(|mut slot| slot.take()) {
            return Err(RenderError::Device(format!("{summary}: {e}")));
        }
        let statics = MeshBuffers::new(&device);
        let dynamic = MeshBuffers::new(&device);
        let targets = Targets::new(&device, width, height);
        Ok(Self {
            device,
            queue,
            adapter: summary,
            errors,
            passes,
            statics,
            parts: StaticParts::default(),
            dynamic,
            targets,
        })
    }

    pub(crate) fn adapter(&self) -> &AdapterSummary {
        &self.adapter
    }

    pub(crate) fn size(&self) -> (u32, u32) {
        (self.targets.width, self.targets.height)
    }

    pub(crate) fn set_static(&mut self, mesh: &Mesh, parts: StaticParts) {
        self.statics.upload(&self.device, &self.queue, mesh);
        self.parts = parts;
    }

    fn wait(&self) -> Result<(), RenderError> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| RenderError::Device(e.to_string()))?;
        self.check()
    }

    /// The error wgpu reported since the last check, if any.
    fn check(&self) -> Result<(), RenderError> {
        let taken = self.errors.lock().ok().and_then(|mut slot| slot.take());
        match taken {
            Some(e) => Err(RenderError::Device(e)),
            None => Ok(()),
        }
    }

    /// Draws the frame and waits for it: the time spent.
    pub(crate) fn draw(
        &mut self,
        globals: &Globals,
        cloth: &Mesh,
    ) -> Result<Duration, RenderError> {
        let t0 = Instant::now();
        self.queue
            .write_buffer(&self.passes.globals, 0, bytemuck::bytes_of(globals));
        self.dynamic.upload(&self.device, &self.queue, cloth);
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("frame"),
            });
        {
            let mut pass = clear_pass(
                &mut enc,
                "shadow",
                None,
                Some((&self.passes.shadow_view, wgpu::StoreOp::Store)),
            );
            pass.set_pipeline(&self.passes.shadow);
            pass.set_bind_group(0, &self.passes.shadow_bind_group, &[]);
            self.statics.draw(&mut pass, self.parts.ground..u32::MAX);
            self.dynamic.draw(&mut pass, 0..u32::MAX);
        }
        {
            let mut pass = clear_pass(
                &mut enc,
                "ground light",
                Some((&self.passes.ground_light_view, None, wgpu::StoreOp::Store)),
                None,
            );
            pass.set_pipeline(&self.passes.ground_light);
            pass.set_bind_group(0, &self.passes.bind_group, &[]);
            pass.draw(0..3, 0..1);
        }
        {
            let msaa_store = if SAMPLES > 1 {
                wgpu::StoreOp::Discard
            } else {
                wgpu::StoreOp::Store
            };
            let resolve = (SAMPLES > 1).then_some(&self.targets.resolve_view);
            let mut pass = clear_pass(
                &mut enc,
                "lit",
                Some((&self.targets.msaa, resolve, msaa_store)),
                Some((&self.targets.depth, wgpu::StoreOp::Discard)),
            );
            // Front to back: the cloth and obstacles hide parts of the ground, which hides
            // most of the sky.
            pass.set_bind_group(0, &self.passes.bind_group, &[]);
            pass.set_bind_group(1, &self.passes.ground_light_bind_group, &[]);
            let StaticParts { ground, planes } = self.parts;
            let (s, d) = (&self.statics, &self.dynamic);
            for (pipeline, m, range) in [
                (&self.passes.lit, d, 0..u32::MAX),
                (&self.passes.lit, s, planes..u32::MAX),
                (&self.passes.plane, s, ground..planes),
                (&self.passes.ground, s, 0..ground),
            ] {
                pass.set_pipeline(pipeline);
                m.draw(&mut pass, range);
            }
            pass.set_pipeline(&self.passes.sky);
            pass.draw(0..3, 0..1);
        }
        self.queue.submit([enc.finish()]);
        self.wait()?;
        Ok(t0.elapsed())
    }

    /// Copies the resolved frame to memory as tightly packed RGBA rows.
    pub(crate) fn read(&mut self, out: &mut Vec<u8>) -> Result<Duration, RenderError> {
        let t0 = Instant::now();
        let t = &self.targets;
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("readback"),
            });
        enc.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &t.resolve,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &t.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(t.padded_row),
                    rows_per_image: Some(t.height),
                },
            },
            wgpu::Extent3d {
                width: t.width,
                height: t.height,
                depth_or_array_layers: 1,
            },
        );
        self.queue.submit([enc.finish()]);
        let (tx, rx) = mpsc::channel();
        t.readback.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        rx.recv()
            .map_err(|_| RenderError::Device("the readback was dropped".into()))?
            .map_err(|e| RenderError::Device(format!("cannot map the readback buffer: {e}")))?;
        {
            let view = t
                .readback
                .get_mapped_range(..)
                .map_err(|e| RenderError::Device(format!("readback: {e}")))?;
            let row = 4 * t.width as usize;
            out.clear();
            out.reserve(row * t.height as usize);
            for r in view.chunks_exact(t.padded_row as usize) {
                out.extend_from_slice(&r[..row]);
            }
        }
        t.readback.unmap();
        Ok(t0.elapsed())
    }
}

/// Begins a pass that clears its colour target (view, resolve target, store), if any, to
/// white and its depth target (view, store), if any, to 1.
fn clear_pass<'e>(
    enc: &'e mut wgpu::CommandEncoder,
    label: &str,
    color: Option<(
        &wgpu::TextureView,
        Option<&wgpu::TextureView>,
        wgpu::StoreOp,
    )>,
    depth: Option<(&wgpu::TextureView, wgpu::StoreOp)>,
) -> wgpu::RenderPass<'e> {
    let color_attachments: Vec<Option<wgpu::RenderPassColorAttachment<'_>>> = color
        .map(
            |(view, resolve_target, store)| wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::WHITE),
                    store,
                },
            },
        )
        .into_iter()
        .map(Some)
        .collect();
    enc.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &color_attachments,
        depth_stencil_attachment: depth.map(|(view, store)| {
            wgpu::RenderPassDepthStencilAttachment {
                view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store,
                }),
                stencil_ops: None,
            }
        }),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}
