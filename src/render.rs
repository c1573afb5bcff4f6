//! Offline frames of a cloth with headless wgpu: a [`Renderer`] made once and called per
//! frame (on any thread) returns RGBA images, written as PNG; docs/render.md.

mod door;
mod fields;
mod gpu;
mod legend;
mod mesh;
mod runtime_dir;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nalgebra::Vector3;
use thiserror::Error;

use crate::atomic::{write_atomic, WriteError};
use crate::cloth::record::{Camera, Recording};
use crate::cloth::{ClothWorld, Grid, Obstacle};
use crate::reduced::ReducedModel;
use crate::scene::DoorSpec;

pub use door::DoorPanel;
pub use fields::{colormap, energy, friction, strain, world_field, ColorBy, Field};
pub use gpu::AdapterSummary;
pub use runtime_dir::{kept_runtime_dir, runtime_dir_is_valid, RuntimeDir};

use gpu::{Globals, Gpu};
use mesh::Mesh;

#[derive(Debug, Error)]
pub enum RenderError {
    #[error(
        "no graphics adapter found (wgpu found neither a GPU nor a software rasteriser); \
         install Mesa's software Vulkan driver: `apt-get install mesa-vulkan-drivers` \
         (or a GPU driver), then run again"
    )]
    NoAdapter,
    #[error("graphics device: {0}")]
    Device(String),
    #[error("image size: {0}")]
    Size(String),
    #[error("{0}")]
    Input(String),
    #[error("PNG encoding: {0}")]
    Png(String),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// What stays the same from frame to frame: the grid, obstacles (and collision potentials'
/// bodies), pinned particles, camera.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneView {
    /// The cloth's grid: particles along the warp and the weft, rest spacings.
    pub grid: Grid,
    pub obstacles: Vec<Obstacle>,
    /// Pinned particles (index j·nu + i), drawn as small red balls.
    pub pins: Vec<usize>,
    /// The scene's camera; `None`: looking at the cloth from the front and above.
    pub camera: Option<Camera>,
    /// A door leaf turning about its hinge ([`Renderer::set_door_angle`]), drawn as a thin box.
    pub door: Option<DoorPanel>,
}

impl SceneView {
    /// The view of a world with the scene's camera.
    pub fn of_world(world: &ClothWorld, camera: Option<Camera>) -> Self {
        let mut pins: Vec<usize> = world.pins().iter().map(|p| p.particle).collect();
        pins.sort_unstable();
        Self {
            grid: world.grid,
            obstacles: world
                .obstacles
                .iter()
                .copied()
                .chain(world.potentials.iter().map(|p| p.obstacle()))
                .collect(),
            pins,
            camera,
            door: None,
        }
    }

    /// The view with the leaf of `door` drawn in place of the scene's first plane obstacle
    /// (the leaf's plane, drawn otherwise as a large square); unchanged without a plane.
    pub fn with_door(mut self, door: &DoorSpec, x: &[[f32; 3]]) -> Self {
        let plane = self
            .obstacles
            .iter()
            .enumerate()
            .find_map(|(k, o)| o.plane().map(|plane| (k, plane)));
        if let Some((k, plane)) = plane {
            if let Some(panel) = DoorPanel::around(door, plane, x) {
                self.obstacles.remove(k);
                self.door = Some(panel);
            }
        }
        self
    }

    /// The view of a reduced model (pins, camera, the door leaf when it has a door), at the
    /// door's start; the leaf lies in the door plane of the model, or, for models that do not
    /// store it, in the plane through the hinge facing the mean shape.
    pub fn of_model(model: &ReducedModel) -> Self {
        let i = &model.info;
        let mean: Vec<[f32; 3]> = model
            .mean
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        let door = i.door.as_ref().and_then(|d| {
            let plane = match i.door_plane {
                Some([point, normal]) => (point, normal),
                None => {
                    let a = Vector3::from(d.axis);
                    let c = mean
                        .iter()
                        .map(|p| Vector3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2])))
                        .sum::<Vector3<f64>>()
                        / mean.len().max(1) as f64
                        - Vector3::from(d.hinge);
                    (d.hinge, a.cross(&c).into())
                }
            };
            DoorPanel::around(d, plane, &mean)
        });
        Self {
            grid: i.grid(),
            obstacles: Vec::new(),
            pins: i.pins.iter().map(|&p| p as usize).collect(),
            camera: i.camera,
            door,
        }
    }

    /// The view of a record. A record does not list its pins: the particles that stay put in
    /// every frame of a record of two frames or more are shown as pins.
    pub fn of_recording(rec: &Recording) -> Self {
        let i = &rec.info;
        let pins = match rec.frames.split_first() {
            Some((first, rest)) if !rest.is_empty() => (0..first.positions.len())
                .filter(|&k| {
                    rest.iter()
                        .all(|f| f.positions.get(k) == first.positions.get(k))
                })
                .collect(),
            _ => Vec::new(),
        };
        Self {
            grid: i.grid(),
            obstacles: i.obstacles.clone(),
            pins,
            camera: i.camera,
            door: None,
        }
    }
}

/// Wall time of one frame's three stages.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameTimings {
    /// Upload, draw and wait for the GPU.
    pub render: Duration,
    /// Copy to a mappable buffer and back to memory.
    pub readback: Duration,
    /// PNG encoding (zero when no PNG was made).
    pub encode: Duration,
}

/// An RGBA8 image (sRGB), rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// Positions of a world as `f32` triples.
pub fn positions(world: &ClothWorld) -> Vec<[f32; 3]> {
    world
        .positions()
        .iter()
        .map(|p| [p.x as f32, p.y as f32, p.z as f32])
        .collect()
}

/// Scene state derived once per [`SceneView`]: camera, ground, light.
struct Stage {
    view: SceneView,
    camera: Camera,
    up: Vector3<f32>,
    /// The ground plane: a point on it and its unit normal.
    ground: (Vector3<f32>, Vector3<f32>),
    /// Size of the cloth [m], for the scene's scale.
    extent: f32,
}

/// A headless renderer: one device, pipelines and targets for frames of one size. Make it
/// once (it is `Send`: a worker thread may own it) and call [`Renderer::render`] per frame.
pub struct Renderer {
    gpu: Gpu,
    stage: Option<Stage>,
    cloth: Mesh,
    /// Angle of the scene's door leaf [rad].
    door_angle: f64,
}

impl Renderer {
    /// Opens the best adapter (a GPU, else Mesa's lavapipe or llvmpipe) for frames of
    /// `width` × `height` pixels.
    pub fn new(width: u32, height: u32) -> Result<Self, RenderError> {
        check_size(width, height)?;
        Ok(Self {
            gpu: Gpu::new(width, height)?,
            stage: None,
            cloth: Mesh::default(),
            door_angle: 0.0,
        })
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &AdapterSummary {
        self.gpu.adapter()
    }

    /// Sets what stays the same between frames; `first` (the first frame's positions) places
    /// the ground and, without a scene camera, the camera.
    pub fn set_scene(&mut self, view: &SceneView, first: &[[f32; 3]]) -> Result<(), RenderError> {
        check_positions(view, first)?;
        let camera = view.camera.unwrap_or_else(|| mesh::default_camera(first));
        let up = mesh::up_of(view);
        let extent = (view.grid.nu.saturating_sub(1) as f32 * view.grid.h_warp as f32)
            .max(view.grid.nv.saturating_sub(1) as f32 * view.grid.h_weft as f32)
            .max(1e-3);
        let ground = mesh::ground_of(view, first);
        let (statics, parts) = mesh::static_mesh(view, ground, extent);
        self.gpu.set_static(&statics, parts);
        self.stage = Some(Stage {
            view: view.clone(),
            camera,
            up,
            ground,
            extent,
        });
        Ok(())
    }

    /// Turns the door leaf of the scene (if any) to `angle` \[rad\] from its start, for the
    /// frames drawn next.
    pub fn set_door_angle(&mut self, angle: f64) {
        self.door_angle = angle;
    }

    /// Draws positions `x` (particle p(i, j) at j·nu + i) of the scene set last, coloured by
    /// `field` when given (with its legend), and reads the image back.
    pub fn render(
        &mut self,
        x: &[[f32; 3]],
        field: Option<&Field>,
    ) -> Result<(Image, FrameTimings), RenderError> {
        if let Some(f) = field {
            if f.values.len() != x.len() {
                return Err(RenderError::Input(format!(
                    "{} field values for {} particles",
                    f.values.len(),
                    x.len()
                )));
            }
        }
        let colors = field.map(fields::colors);
        let mapped = colors.as_deref().map(|c| (c, mesh::CLOTH_MAPPED));
        self.draw(x, mapped, field)
    }

    /// Draws positions `x` with each vertex's exit radiance `radiance` (linear RGB, e.g. from
    /// precomputed radiance transfer) as the cloth's colour, unlit by the key light and its
    /// shadow map, and reads the image back.
    pub fn render_radiance(
        &mut self,
        x: &[[f32; 3]],
        radiance: &[[f32; 3]],
    ) -> Result<(Image, FrameTimings), RenderError> {
        if radiance.len() != x.len() || radiance.iter().flatten().any(|c| !c.is_finite()) {
            return Err(RenderError::Input(format!(
                "{} radiance values for {} particles (all finite)",
                radiance.len(),
                x.len()
            )));
        }
        self.draw(x, Some((radiance, mesh::CLOTH_RADIANCE)), None)
    }

    /// The one path of both: the scene and the positions checked, the mesh built, drawn.
    fn draw(
        &mut self,
        x: &[[f32; 3]],
        colors: Option<(&[[f32; 3]], u32)>,
        field: Option<&Field>,
    ) -> Result<(Image, FrameTimings), RenderError> {
        let stage = self
            .stage
            .as_ref()
            .ok_or_else(|| RenderError::Input("no scene set (call set_scene first)".into()))?;
        check_positions(&stage.view, x)?;
        mesh::cloth_mesh(&stage.view, x, colors, &mut self.cloth);
        if let Some(d) = &stage.view.door {
            mesh::door_panel(d, self.door_angle, &mut self.cloth);
        }
        let globals = globals(stage, x, self.gpu.size());
        let render = self.gpu.draw(&globals, &self.cloth)?;
        let (width, height) = self.gpu.size();
        let mut rgba = Vec::new();
        let readback = self.gpu.read(&mut rgba)?;
        if let Some(f) = field {
            legend::draw(&mut rgba, width, height, f);
        }
        Ok((
            Image {
                width,
                height,
                rgba,
            },
            FrameTimings {
                render,
                readback,
                encode: Duration::ZERO,
            },
        ))
    }

    /// [`Renderer::render_radiance`] encoded as a PNG.
    pub fn render_radiance_png(
        &mut self,
        x: &[[f32; 3]],
        radiance: &[[f32; 3]],
    ) -> Result<Vec<u8>, RenderError> {
        encode_png(&self.render_radiance(x, radiance)?.0)
    }

    /// Renders and encodes a PNG; the timings include the encoding.
    pub fn render_png(
        &mut self,
        x: &[[f32; 3]],
        field: Option<&Field>,
    ) -> Result<(Vec<u8>, FrameTimings), RenderError> {
        let (image, mut t) = self.render(x, field)?;
        let t0 = Instant::now();
        let png = encode_png(&image)?;
        t.encode = t0.elapsed();
        Ok((png, t))
    }
}

/// Sides of an image the renderer draws \[px\].
pub const IMAGE_SIDE_PX: (u32, u32) = (16, 8192);

fn check_size(width: u32, height: u32) -> Result<(), RenderError> {
    let (lo, hi) = IMAGE_SIDE_PX;
    if ![width, height].iter().all(|s| (lo..=hi).contains(s)) {
        return Err(RenderError::Size(format!(
            "{width}x{height}: each side must be {lo} to {hi} pixels"
        )));
    }
    Ok(())
}

fn check_positions(view: &SceneView, x: &[[f32; 3]]) -> Result<(), RenderError> {
    if x.len() != view.grid.nu * view.grid.nv || view.grid.nu < 2 || view.grid.nv < 2 {
        return Err(RenderError::Input(format!(
            "{} positions for a {} x {} grid",
            x.len(),
            view.grid.nu,
            view.grid.nv
        )));
    }
    if x.iter().flatten().any(|c| !c.is_finite()) {
        return Err(RenderError::Input(
            "a position is not finite (the simulation blew up)".into(),
        ));
    }
    Ok(())
}

/// The uniforms of a frame: camera, a key light from above, front and to the side, and a
/// shadow map fitted around the cloth and obstacles.
fn globals(stage: &Stage, x: &[[f32; 3]], (w, h): (u32, u32)) -> Globals {
    let (lo, hi) = mesh::bounds(x);
    let mut c = (lo + hi) * 0.5;
    let mut r = ((hi - lo).norm() * 0.5).max(0.05 * stage.extent);
    for o in &stage.view.obstacles {
        let (oc, or) = match o.shape {
            crate::cloth::ObstacleShape::Sphere { center, radius } => (
                Vector3::new(center[0] as f32, center[1] as f32, center[2] as f32),
                radius as f32,
            ),
            crate::cloth::ObstacleShape::Box { min, max } => {
                let a = Vector3::new(min[0] as f32, min[1] as f32, min[2] as f32);
                let b = Vector3::new(max[0] as f32, max[1] as f32, max[2] as f32);
                ((a + b) * 0.5, (b - a).norm() * 0.5)
            }
            crate::cloth::ObstacleShape::Plane { .. } => continue,
        };
        // Grow the ball (c, r) to hold (oc, or).
        let d = (oc - c).norm();
        if d + or > r {
            let nr = 0.5 * (r + d + or);
            if d > 1e-9 {
                c += (oc - c) * ((nr - r) / d);
            }
            r = nr;
        }
    }
    let up = stage.up;
    let cam = &stage.camera;
    let eye = Vector3::new(cam.eye[0] as f32, cam.eye[1] as f32, cam.eye[2] as f32);
    // The light comes from above, over the camera's right shoulder.
    let fwd = (c - eye).try_normalize(1e-9).unwrap_or(-Vector3::z());
    let right = fwd.cross(&up).try_normalize(1e-9).unwrap_or(Vector3::x());
    let light = (up * 1.0 + right * 0.35 - fwd * 0.45).normalize();
    // The shadow map spans the ball and the shadow it throws on the ground below.
    let r_shadow = 1.6 * r;
    let vp = mesh::view_proj(cam, w as f32 / h as f32, (eye - c).norm() + r);
    let lvp = mesh::light_proj(light, c, r_shadow);
    let mat = |m: nalgebra::Matrix4<f32>| {
        let mut a = [[0.0f32; 4]; 4];
        for (col, out) in a.iter_mut().enumerate() {
            for (row, v) in out.iter_mut().enumerate() {
                *v = m[(row, col)];
            }
        }
        a
    };
    let texel = 2.0 * r_shadow / gpu::SHADOW_SIZE as f32;
    let (gp, gn) = stage.ground;
    let nu = stage.view.grid.nu.saturating_sub(1) as f32;
    let nv = stage.view.grid.nv.saturating_sub(1) as f32;
    Globals {
        view_proj: mat(vp),
        light_view_proj: mat(lvp),
        light_inverse: mat(lvp
            .try_inverse()
            .unwrap_or_else(nalgebra::Matrix4::identity)),
        eye: [eye.x, eye.y, eye.z, 1.0],
        // A penumbra about 1.5 % of the shadow map wide.
        light: [light.x, light.y, light.z, 0.006],
        up: [up.x, up.y, up.z, 25.0 * stage.extent + (eye - c).norm()],
        grid: [nu, nv, tile(stage.extent), 1.5 * texel],
        ground: [gn.x, gn.y, gn.z, gn.dot(&gp)],
    }
}

/// A ground tile about a quarter of the cloth: 1, 2 or 5 × 10ⁿ m.
fn tile(extent: f32) -> f32 {
    let t = 0.25 * extent.max(1e-3);
    let b = 10f32.powf(t.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * b)
        .find(|&v| v >= t)
        .unwrap_or(10.0 * b)
}

/// PNG bytes of an image (RGB, fast compression).
pub fn encode_png(image: &Image) -> Result<Vec<u8>, RenderError> {
    let n = image.width as usize * image.height as usize;
    if image.rgba.len() != 4 * n {
        return Err(RenderError::Png(format!(
            "{} bytes for a {}x{} RGBA image",
            image.rgba.len(),
            image.width,
            image.height
        )));
    }
    let rgb: Vec<u8> = image
        .rgba
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut out = Vec::with_capacity(n);
    {
        let mut enc = png::Encoder::new(&mut out, image.width, image.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc
            .write_header()
            .map_err(|e| RenderError::Png(e.to_string()))?;
        w.write_image_data(&rgb)
            .map_err(|e| RenderError::Png(e.to_string()))?;
        w.finish().map_err(|e| RenderError::Png(e.to_string()))?;
    }
    Ok(out)
}

/// `DIR/frame_00000.png` for frame `n`.
pub fn frame_path(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("frame_{n:05}.png"))
}

/// Where a sequence stands after each frame, for progress bars and gauges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameProgress {
    /// Frames written so far and in all.
    pub done: usize,
    pub total: usize,
    pub timings: FrameTimings,
}

/// Renders every frame of a record to `DIR/frame_NNNNN.png` (nothing replaced unless
/// `force`), coloured by strain when asked; `progress` is called after each frame, and stops
/// the render when it breaks (an interrupt). Returns each written frame's timings.
pub fn render_recording(
    renderer: &mut Renderer,
    rec: &Recording,
    color_by: Option<ColorBy>,
    range: Option<(f32, f32)>,
    out_dir: &Path,
    force: bool,
    mut progress: impl FnMut(FrameProgress) -> std::ops::ControlFlow<()>,
) -> Result<Vec<FrameTimings>, RenderError> {
    if let Some(by) = color_by {
        if !by.from_positions() {
            return Err(RenderError::Input(format!(
                "a record holds positions only: --color-by {by} needs a simulation \
                 (render the scene file instead)"
            )));
        }
    }
    let Some(first) = rec.frames.first() else {
        return Err(RenderError::Input("the record has no frames".into()));
    };
    let view = SceneView::of_recording(rec);
    renderer.set_scene(&view, &first.positions)?;
    let total = rec.frames.len();
    let mut all = Vec::with_capacity(total);
    for (n, f) in rec.frames.iter().enumerate() {
        let field = color_by.map(|_| {
            Field::strain(
                view.grid.nu,
                view.grid.nv,
                view.grid.h_warp,
                view.grid.h_weft,
                &f.positions,
            )
            .with_range(range)
        });
        let (png, t) = renderer.render_png(&f.positions, field.as_ref())?;
        write_atomic(&frame_path(out_dir, n), &png, force)?;
        all.push(t);
        let next = progress(FrameProgress {
            done: n + 1,
            total,
            timings: t,
        });
        if next.is_break() {
            break;
        }
    }
    Ok(all)
}
