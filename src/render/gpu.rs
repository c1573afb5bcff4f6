//! The wgpu side: adapter and device without a window, pipelines, 4× MSAA colour and depth
//! targets, a shadow map and the ground's light texture, and the texture → buffer readback
//! with 256-byte row alignment.

use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::mesh::{Mesh, StaticParts, Vertex};
use super::RenderError;

pub(crate) const SAMPLES: u32 = 4;
/// Plain RGBA8: the shader writes sRGB-encoded colours itself (a software rasteriser converts
/// every sample of an sRGB target, which costs more than all the shading).
const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
pub(crate) const SHADOW_SIZE: u32 = 1024;
/// Texels of the ground's light texture along each side (it spans the shadow map's square).
const GROUND_LIGHT_SIZE: u32 = 512;
const GROUND_LIGHT_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R8Unorm;

/// The adapter a renderer runs on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AdapterSummary {
    pub name: String,
    /// `vulkan`, `gl`, …
    pub backend: String,
    /// `cpu` for a software rasteriser (lavapipe, llvmpipe), else the GPU's kind.
    pub device_type: String,
    pub driver: String,
}

impl std::fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {}", self.name, self.backend, self.device_type)?;
        if !self.driver.is_empty() {
            write!(f, ", {}", self.driver)?;
        }
        f.write_str(")")
    }
}

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
struct MeshBuffers {
    vertex: GrowBuffer,
    index: GrowBuffer,
    count: u32,
}

impl MeshBuffers {
    fn new(device: &wgpu::Device) -> Self {
        Self {
            vertex: GrowBuffer::new(device, "vertices", wgpu::BufferUsages::VERTEX),
            index: GrowBuffer::new(device, "indices", wgpu::BufferUsages::INDEX),
            count: 0,
        }
    }

    fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, mesh: &Mesh) {
        self.vertex
            .write(device, queue, bytemuck::cast_slice(&mesh.vertices));
        self.index
            .write(device, queue, bytemuck::cast_slice(&mesh.indices));
        self.count = mesh.indices.len() as u32;
    }

    /// Draws the triangles of `indices` (clipped to the mesh), if any.
    fn draw(&self, pass: &mut wgpu::RenderPass<'_>, indices: std::ops::Range<u32>) {
        let indices = indices.start.min(self.count)..indices.end.min(self.count);
        if !indices.is_empty() {
            pass.set_vertex_buffer(0, self.vertex.buffer.slice(..));
            pass.set_index_buffer(self.index.buffer.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(indices, 0, 0..1);
        }
    }
}

/// Size-dependent targets.
struct Targets {
    width: u32,
    height: u32,
    msaa: wgpu::TextureView,
    depth: wgpu::TextureView,
    resolve: wgpu::Texture,
    resolve_view: wgpu::TextureView,
    readback: wgpu::Buffer,
    padded_row: u32,
}

impl Targets {
    fn new(device: &wgpu::Device, width: u32, height: u32) -> Self {
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

/// Device, queue, pipelines and targets.
pub(crate) struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: AdapterSummary,
    globals: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    shadow_bind_group: wgpu::BindGroup,
    ground_light_bind_group: wgpu::BindGroup,
    /// The first validation or device error wgpu reported, taken after each submission.
    errors: Arc<Mutex<Option<String>>>,
    shadow_view: wgpu::TextureView,
    ground_light_view: wgpu::TextureView,
    sky: wgpu::RenderPipeline,
    lit: wgpu::RenderPipeline,
    ground: wgpu::RenderPipeline,
    plane: wgpu::RenderPipeline,
    ground_light: wgpu::RenderPipeline,
    shadow: wgpu::RenderPipeline,
    statics: MeshBuffers,
    /// Where the ground (not drawn into the shadow map) and the other planes end in `statics`.
    parts: StaticParts,
    dynamic: MeshBuffers,
    targets: Targets,
}

fn backend_name(b: wgpu::Backend) -> String {
    format!("{b:?}").to_lowercase()
}

fn type_name(t: wgpu::DeviceType) -> String {
    match t {
        wgpu::DeviceType::Cpu => "cpu".into(),
        wgpu::DeviceType::IntegratedGpu => "integrated gpu".into(),
        wgpu::DeviceType::DiscreteGpu => "discrete gpu".into(),
        wgpu::DeviceType::VirtualGpu => "virtual gpu".into(),
        wgpu::DeviceType::Other => "other".into(),
    }
}

/// Preference among adapters: a real GPU first, then Vulkan before GL.
fn rank(info: &wgpu::AdapterInfo) -> u32 {
    let kind = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    };
    let backend = match info.backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    };
    2 * kind + backend
}

/// Every adapter wgpu can see, best first; the fallback (software) adapter is asked for
/// when enumeration finds none.
fn pick_adapter() -> Result<wgpu::Adapter, RenderError> {
    let allowed = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all());
    // Vulkan (Metal, DX12) first; GL only when they find nothing, which keeps EGL's probing
    // quiet on machines with lavapipe.
    let tiers = [allowed - wgpu::Backends::GL, allowed & wgpu::Backends::GL];
    for backends in tiers.into_iter().filter(|b| !b.is_empty()) {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
        let mut adapters = pollster::block_on(instance.enumerate_adapters(backends));
        adapters.sort_by_key(|a| rank(&a.get_info()));
        if let Some(a) = adapters.into_iter().next() {
            return Ok(a);
        }
    }
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = allowed;
    let instance = wgpu::Instance::new(desc);
    for force_fallback_adapter in [false, true] {
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter,
            compatible_surface: None,
            ..Default::default()
        };
        if let Ok(a) = pollster::block_on(instance.request_adapter(&options)) {
            return Ok(a);
        }
    }
    Err(RenderError::NoAdapter)
}

impl Gpu {
    pub fn new(width: u32, height: u32) -> Result<Self, RenderError> {
        let adapter = pick_adapter()?;
        let info = adapter.get_info();
        let summary = AdapterSummary {
            name: info.name.clone(),
            backend: backend_name(info.backend),
            device_type: type_name(info.device_type),
            driver: [info.driver.as_str(), info.driver_info.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
        };
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
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("scene.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("scene.wgsl").into()),
        });
        let globals = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("globals"),
            size: std::mem::size_of::<Globals>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let square = |label, size, format| {
            device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: wgpu::Extent3d {
                        width: size,
                        height: size,
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                        | wgpu::TextureUsages::TEXTURE_BINDING,
                    view_formats: &[],
                })
                .create_view(&Default::default())
        };
        let shadow_view = square("shadow map", SHADOW_SIZE, DEPTH_FORMAT);
        let ground_light_view = square("ground light", GROUND_LIGHT_SIZE, GROUND_LIGHT_FORMAT);
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("shadow sampler"),
            address_mode_u: wgpu::AddressMode::ClampToEdge,
            address_mode_v: wgpu::AddressMode::ClampToEdge,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            compare: Some(wgpu::CompareFunction::LessEqual),
            ..Default::default()
        });
        let linear = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("ground light sampler"),
            address_mode_u: wgpu::AddressMode::ClampToEdge,
            address_mode_v: wgpu::AddressMode::ClampToEdge,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let entry = |binding, visibility, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility,
            ty,
            count: None,
        };
        let uniform = wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        };
        let fragment = wgpu::ShaderStages::FRAGMENT;
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("globals"),
            entries: &[
                entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT, uniform),
                entry(
                    1,
                    fragment,
                    wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Depth,
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                ),
                entry(
                    2,
                    fragment,
                    wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
                ),
            ],
        });
        let ground_light_layout =
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("ground light"),
                entries: &[
                    entry(
                        0,
                        fragment,
                        wgpu::BindingType::Texture {
                            sample_type: wgpu::TextureSampleType::Float { filterable: true },
                            view_dimension: wgpu::TextureViewDimension::D2,
                            multisampled: false,
                        },
                    ),
                    entry(
                        1,
                        fragment,
                        wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    ),
                ],
            });
        let shadow_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("shadow globals"),
            entries: &[entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT, uniform)],
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("globals"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: globals.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&shadow_view),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Sampler(&sampler),
                },
            ],
        });
        let ground_light_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("ground light"),
            layout: &ground_light_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&ground_light_view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&linear),
                },
            ],
        });
        let shadow_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("shadow globals"),
            layout: &shadow_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: globals.as_entire_binding(),
            }],
        });
        let pipeline_layout = |label, groups: &[Option<&wgpu::BindGroupLayout>]| {
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: groups,
                immediate_size: 0,
            })
        };
        let shadow_pipeline_layout = pipeline_layout("shadow", &[Some(&shadow_layout)]);
        // The ground-light pass reads the shadow map; the frame's pass also the ground light.
        let scene_layout = pipeline_layout("scene", &[Some(&layout)]);
        let ground_layout = pipeline_layout("frame", &[Some(&layout), Some(&ground_light_layout)]);
        let attributes = wgpu::vertex_attr_array![
            0 => Float32x3, 1 => Float32x3, 2 => Float32x3, 3 => Float32x2, 4 => Uint32
        ];
        let vertex_layout = wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<Vertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &attributes,
        };
        let msaa = wgpu::MultisampleState {
            count: SAMPLES,
            mask: !0,
            alpha_to_coverage_enabled: false,
        };
        let depth = |write, compare, bias| wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(write),
            depth_compare: Some(compare),
            stencil: Default::default(),
            bias,
        };
        let target = |format| {
            [Some(wgpu::ColorTargetState {
                format,
                blend: None,
                write_mask: wgpu::ColorWrites::ALL,
            })]
        };
        let color_target = target(COLOR_FORMAT);
        let ground_light_target = target(GROUND_LIGHT_FORMAT);
        // One pipeline of scene.wgsl: `mesh` draws vertex buffers of `Vertex`, else a
        // fullscreen triangle; `fragment` is the entry point and its targets, if any.
        let pipeline = |label,
                        layout: &wgpu::PipelineLayout,
                        vertex,
                        mesh: bool,
                        fragment: Option<(&str, &[Option<wgpu::ColorTargetState>])>,
                        depth_stencil,
                        multisample| {
            let buffers = [Some(vertex_layout.clone())];
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(layout),
                vertex: wgpu::VertexState {
                    module: &shader,
                    entry_point: Some(vertex),
                    compilation_options: Default::default(),
                    buffers: if mesh { &buffers } else { &[] },
                },
                primitive: wgpu::PrimitiveState {
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil,
                multisample,
                fragment: fragment.map(|(entry, targets)| wgpu::FragmentState {
                    module: &shader,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    targets,
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let less = wgpu::CompareFunction::Less;
        let lit = pipeline(
            "lit",
            &ground_layout,
            "vs_main",
            true,
            Some(("fs_main", &color_target)),
            Some(depth(true, less, Default::default())),
            msaa,
        );
        let ground = pipeline(
            "ground",
            &ground_layout,
            "vs_main",
            true,
            Some(("fs_ground", &color_target)),
            Some(depth(true, less, Default::default())),
            msaa,
        );
        let plane = pipeline(
            "plane",
            &ground_layout,
            "vs_main",
            true,
            Some(("fs_plane", &color_target)),
            Some(depth(true, less, Default::default())),
            msaa,
        );
        // Drawn last at the far plane: only where nothing else was.
        let sky = pipeline(
            "sky",
            &ground_layout,
            "vs_fullscreen",
            false,
            Some(("fs_sky", &color_target)),
            Some(depth(
                false,
                wgpu::CompareFunction::LessEqual,
                Default::default(),
            )),
            msaa,
        );
        let ground_light = pipeline(
            "ground light",
            &scene_layout,
            "vs_fullscreen",
            false,
            Some(("fs_ground_light", &ground_light_target)),
            None,
            Default::default(),
        );
        let shadow = pipeline(
            "shadow",
            &shadow_pipeline_layout,
            "vs_shadow",
            true,
            None,
            Some(depth(
                true,
                less,
                wgpu::DepthBiasState {
                    constant: 2,
                    slope_scale: 2.0,
                    clamp: 0.0,
                },
            )),
            Default::default(),
        );
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
            globals,
            bind_group,
            shadow_bind_group,
            ground_light_bind_group,
            errors,
            shadow_view,
            ground_light_view,
            sky,
            lit,
            ground,
            plane,
            ground_light,
            shadow,
            statics,
            parts: StaticParts::default(),
            dynamic,
            targets,
        })
    }

    pub fn adapter(&self) -> &AdapterSummary {
        &self.adapter
    }

    pub fn size(&self) -> (u32, u32) {
        (self.targets.width, self.targets.height)
    }

    pub fn resize(&mut self, width: u32, height: u32) {
        if (width, height) != self.size() {
            self.targets = Targets::new(&self.device, width, height);
        }
    }

    pub fn set_static(&mut self, mesh: &Mesh, parts: StaticParts) {
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
    pub fn draw(&mut self, globals: &Globals, cloth: &Mesh) -> Result<Duration, RenderError> {
        let t0 = Instant::now();
        self.queue
            .write_buffer(&self.globals, 0, bytemuck::bytes_of(globals));
        self.dynamic.upload(&self.device, &self.queue, cloth);
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("frame"),
            });
        {
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("shadow"),
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.shadow_view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.shadow);
            pass.set_bind_group(0, &self.shadow_bind_group, &[]);
            self.statics.draw(&mut pass, self.parts.ground..u32::MAX);
            self.dynamic.draw(&mut pass, 0..u32::MAX);
        }
        {
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("ground light"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &self.ground_light_view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::WHITE),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.ground_light);
            pass.set_bind_group(0, &self.bind_group, &[]);
            pass.draw(0..3, 0..1);
        }
        {
            let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("lit"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &self.targets.msaa,
                    depth_slice: None,
                    resolve_target: (SAMPLES > 1).then_some(&self.targets.resolve_view),
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::WHITE),
                        store: if SAMPLES > 1 {
                            wgpu::StoreOp::Discard
                        } else {
                            wgpu::StoreOp::Store
                        },
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.targets.depth,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            // Front to back: the cloth and obstacles hide parts of the ground, which hides
            // most of the sky.
            pass.set_bind_group(0, &self.bind_group, &[]);
            pass.set_bind_group(1, &self.ground_light_bind_group, &[]);
            let StaticParts { ground, planes } = self.parts;
            let (s, d) = (&self.statics, &self.dynamic);
            for (pipeline, m, range) in [
                (&self.lit, d, 0..u32::MAX),
                (&self.lit, s, planes..u32::MAX),
                (&self.plane, s, ground..planes),
                (&self.ground, s, 0..ground),
            ] {
                pass.set_pipeline(pipeline);
                m.draw(&mut pass, range);
            }
            pass.set_pipeline(&self.sky);
            pass.draw(0..3, 0..1);
        }
        self.queue.submit([enc.finish()]);
        self.wait()?;
        Ok(t0.elapsed())
    }

    /// Copies the resolved frame to memory as tightly packed RGBA rows.
    pub fn read(&mut self, out: &mut Vec<u8>) -> Result<Duration, RenderError> {
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
