//! GPU memory of a frame: growing vertex and index buffers of the meshes, and the
//! size-dependent targets (4× MSAA colour and depth, resolve texture, padded readback buffer).

use super::{COLOR_FORMAT, DEPTH_FORMAT, SAMPLES};
use crate::render::mesh::Mesh;

/// A GPU buffer written from memory, replaced by one of the next power of two when the data
/// outgrows it.
struct GrowBuffer {
    buffer: wgpu::Buffer,
    cap: u64,
    usage: wgpu::BufferUsages,
    label: &'static str,
}

impl GrowBuffer {
    fn new(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages) -> Self {
        let usage = usage | wgpu::BufferUsages::COPY_DST;
        Self {
            buffer: Self::make(device, label, usage, 4096),
            cap: 4096,
            usage,
            label,
        }
    }

    fn make(
        device: &wgpu::Device,
        label: &str,
        usage: wgpu::BufferUsages,
        size: u64,
    ) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        })
    }

    fn write(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, data: &[u8]) {
        if data.len() as u64 > self.cap {
            self.cap = (data.len() as u64).next_power_of_two();
            self.buffer = Self::make(device, self.label, self.usage, self.cap);
        }
        if !data.is_empty() {
            queue.write_buffer(&self.buffer, 0, data);
        }
    }
}

/// GPU buffers of one mesh.
pub(super) struct MeshBuffers {
    vertex: GrowBuffer,
    index: GrowBuffer,
    count: u32,
}

impl MeshBuffers {
    pub(super) fn new(device: &wgpu::Device) -> Self {
        Self {
            vertex: GrowBuffer::new(device, "vertices", wgpu::BufferUsages::VERTEX),
            index: GrowBuffer::new(device, "indices", wgpu::BufferUsages::INDEX),
            count: 0,
        }
    }

    pub(super) fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, mesh: &Mesh) {
        self.vertex
            .write(device, queue, bytemuck::cast_slice(&mesh.vertices));
        self.index
            .write(device, queue, bytemuck::cast_slice(&mesh.indices));
        self.count = mesh.indices.len() as u32;
    }

    /// Draws the triangles of `indices` (clipped to the mesh), if any.
    pub(super) fn draw(&self, pass: &mut wgpu::RenderPass<'_>, indices: std::ops::Range<u32>) {
        let indices = indices.start.min(self.count)..indices.end.min(self.count);
        if !indices.is_empty() {
            pass.set_vertex_buffer(0, self.vertex.buffer.slice(..));
            pass.set_index_buffer(self.index.buffer.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(indices, 0, 0..1);
        }
    }
}

/// Size-dependent targets.
pub(super) struct Targets {
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) msaa: wgpu::TextureView,
    pub(super) depth: wgpu::TextureView,
    pub(super) resolve: wgpu::Texture,
    pub(super) resolve_view: wgpu::TextureView,
    pub(super) readback: wgpu::Buffer,
    pub(super) padded_row: u32,
}

impl Targets {
    pub(super) fn new(device: &wgpu::Device, width: u32, height: u32) -> Self {
        let size = wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        };
        let tex = |label, samples, format, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size,
                mip_level_count: 1,
                sample_count: samples,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let msaa = tex(
            "msaa colour",
            SAMPLES,
            COLOR_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let depth = tex(
            "depth",
            SAMPLES,
            DEPTH_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let resolve = tex(
            "resolved colour",
            1,
            COLOR_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        );
        let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let padded_row = (4 * width).div_ceil(align) * align;
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: padded_row as u64 * height as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self {
            width,
            height,
            msaa: if SAMPLES > 1 {
                msaa.create_view(&Default::default())
            } else {
                resolve.create_view(&Default::default())
            },
            depth: depth.create_view(&Default::default()),
            resolve_view: resolve.create_view(&Default::default()),
            resolve,
            readback,
            padded_row,
        }
    }
}
