//! The adapter a renderer runs on: every one wgpu can see without a window, ranked (a real
//! GPU first, Vulkan before GL), the software fallback last.

use crate::render::RenderError;

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

impl AdapterSummary {
    pub(super) fn of(info: &wgpu::AdapterInfo) -> Self {
        AdapterSummary {
            name: info.name.clone(),
            backend: backend_name(info.backend),
            device_type: type_name(info.device_type),
            driver: [info.driver.as_str(), info.driver_info.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
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
pub(super) fn pick_adapter() -> Result<wgpu::Adapter, RenderError> {
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
