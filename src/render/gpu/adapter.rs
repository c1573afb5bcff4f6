//! The adapter a renderer runs on: every one wgpu can see without a window, ranked (a real
//! GPU first, Vulkan before GL), the software fallback last.

use std::sync::Mutex;

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

/// Opens the best adapter that works: every adapter wgpu can see, best first, is handed to
/// `open` until one succeeds (a driver may list an adapter whose device then fails: wgpu's GL
/// backend on NVIDIA's driver says "Parent device is lost"); an image too large for the best
/// adapter is the user's error and ends the search. The fallback (software) adapter is asked
/// for when enumeration finds none.
pub(super) fn open_first<T>(
    mut open: impl FnMut(wgpu::Adapter) -> Result<T, RenderError>,
) -> Result<T, RenderError> {
    let allowed = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all());
    let mut failures: Vec<RenderError> = Vec::new();
    // Vulkan (Metal, DX12) first; GL only when they find nothing or fail, which keeps EGL's
    // probing quiet on machines with lavapipe.
    let tiers = [allowed - wgpu::Backends::GL, allowed & wgpu::Backends::GL];
    for backends in tiers.into_iter().filter(|b| !b.is_empty()) {
        let instance = instance(backends);
        let mut adapters = pollster::block_on(instance.enumerate_adapters(backends));
        adapters.sort_by_key(|a| rank(&a.get_info()));
        for adapter in adapters {
            match open(adapter) {
                Ok(opened) => return Ok(opened),
                Err(e @ RenderError::Size(_)) => return Err(e),
                Err(e) => failures.push(e),
            }
        }
    }
    if failures.is_empty() {
        let instance = instance(allowed);
        for force_fallback_adapter in [false, true] {
            let options = wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter,
                compatible_surface: None,
                ..Default::default()
            };
            if let Ok(adapter) = pollster::block_on(instance.request_adapter(&options)) {
                match open(adapter) {
                    Ok(opened) => return Ok(opened),
                    Err(e @ RenderError::Size(_)) => return Err(e),
                    Err(e) => failures.push(e),
                }
            }
        }
    }
    Err(none_opened(failures, allowed))
}

/// The instance of `backends`, made once and kept for the life of the process: dropping the
/// last instance unloads the driver, and NVIDIA's keeps threads running in it, which crashes
/// the process when one renderer is dropped while another starts (seen on an H100).
fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    static INSTANCES: Mutex<Vec<(wgpu::Backends, wgpu::Instance)>> = Mutex::new(Vec::new());
    let mut made = INSTANCES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, instance)) = made.iter().find(|(b, _)| *b == backends) {
        return instance.clone();
    }
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    made.push((backends, instance.clone()));
    instance
}

/// The error when no adapter opened: none found, the one failure as it is, or every failure
/// in order (with a hint when the GL backend was forced).
fn none_opened(mut failures: Vec<RenderError>, allowed: wgpu::Backends) -> RenderError {
    let hint = if allowed == wgpu::Backends::GL {
        "; WGPU_BACKEND=gl is set: unset it (or set WGPU_BACKEND=vulkan) to use Vulkan"
    } else {
        ""
    };
    match failures.len() {
        0 => RenderError::NoAdapter,
        1 if hint.is_empty() => failures.remove(0),
        _ => {
            let each: Vec<String> = failures
                .iter()
                .map(|e| match e {
                    RenderError::Device(detail) => detail.clone(),
                    other => other.to_string(),
                })
                .collect();
            RenderError::Device(format!("no adapter opened ({}){hint}", each.join("; ")))
        }
    }
}
