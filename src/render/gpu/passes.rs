//! The passes of scene.wgsl: uniform buffer, bind groups, the shadow map and the ground's
//! light texture, and the render pipelines (lit, ground, plane, sky, ground light, shadow).

use super::{
    Globals, COLOR_FORMAT, DEPTH_FORMAT, GROUND_LIGHT_FORMAT, GROUND_LIGHT_SIZE, SAMPLES,
    SHADOW_SIZE,
};
use crate::render::mesh::Vertex;

/// Uniforms, bind groups, textures and pipelines, made once per device.
pub(super) struct Passes {
    pub globals: wgpu::Buffer,
    pub bind_group: wgpu::BindGroup,
    pub shadow_bind_group: wgpu::BindGroup,
    pub ground_light_bind_group: wgpu::BindGroup,
    pub shadow_view: wgpu::TextureView,
    pub ground_light_view: wgpu::TextureView,
    pub sky: wgpu::RenderPipeline,
    pub lit: wgpu::RenderPipeline,
    pub ground: wgpu::RenderPipeline,
    pub plane: wgpu::RenderPipeline,
    pub ground_light: wgpu::RenderPipeline,
    pub shadow: wgpu::RenderPipeline,
}

impl Passes {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("scene.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../scene.wgsl").into()),
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
        let bind_group = numbered_bind_group(
            device,
            "globals",
            &layout,
            [
                globals.as_entire_binding(),
                wgpu::BindingResource::TextureView(&shadow_view),
                wgpu::BindingResource::Sampler(&sampler),
            ],
        );
        let ground_light_bind_group = numbered_bind_group(
            device,
            "ground light",
            &ground_light_layout,
            [
                wgpu::BindingResource::TextureView(&ground_light_view),
                wgpu::BindingResource::Sampler(&linear),
            ],
        );
        let shadow_bind_group = numbered_bind_group(
            device,
            "shadow globals",
            &shadow_layout,
            [globals.as_entire_binding()],
        );
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
        let [lit, ground, plane] = [
            ("lit", "fs_main"),
            ("ground", "fs_ground"),
            ("plane", "fs_plane"),
        ]
        .map(|(label, fragment)| {
            pipeline(
                label,
                &ground_layout,
                "vs_main",
                true,
                Some((fragment, &color_target)),
                Some(depth(true, less, Default::default())),
                msaa,
            )
        });
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
        Self {
            globals,
            bind_group,
            shadow_bind_group,
            ground_light_bind_group,
            shadow_view,
            ground_light_view,
            sky,
            lit,
            ground,
            plane,
            ground_light,
            shadow,
        }
    }
}

/// A bind group of `resources` at bindings 0, 1, …
fn numbered_bind_group<'a>(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    resources: impl IntoIterator<Item = wgpu::BindingResource<'a>>,
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'a>> = (0..)
        .zip(resources)
        .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}
