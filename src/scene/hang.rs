//! The scene the workbench offers for any fabric card: a 50 cm square of the card's fabric
//! (KES connector material, areal density from the card) hanging by its two top corners.

use std::path::Path;

use super::{Scene, SceneError, SceneFile};

/// The out-of-plane imperfection of the hanging scenes \[m\] (`[grid] imperfection`): a sheet
/// started exactly in the vertical plane of gravity would never leave it.
pub const HANGING_IMPERFECTION_M: f64 = 3e-4;

/// The hanging scene of the fabric card at `card` (the settings of `scenes/fabric_hanging.toml`:
/// 26 × 26 particles at 2 cm, implicit backward Euler by Newton with the analytic tangent, Δt = 1 ms, gravity, air damping 0.2/s, a 0.3 mm out-of-plane imperfection).
pub fn hanging_scene(card: &Path) -> Result<Scene, SceneError> {
    let name = card
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // the card by its file name, resolved against its own folder (as a scene file's paths are)
    let params = toml::Value::String(name.clone());
    let title = toml::Value::String(format!("{name} hanging by two corners"));
    let text = format!(
        r#"name = {title}

[grid]
nu = 26
nv = 26
size = [0.5, 0.5]
origin = [0.0, 0.0, 0.0]
warp = [1.0, 0.0, 0.0]
weft = [0.0, -1.0, 0.0]
imperfection = {HANGING_IMPERFECTION_M}

[material]
kind = "kes"
params = {params}

[integrator]
kind = "newton_tangent"
dt = 0.001
steps = 1000
tolerance = 1e-8

[integrator.constraints]
compression = 0.02

[loads]
gravity = [0.0, -9.81, 0.0]
damping = 0.2

[pins]
particles = [[0, 0], [25, 0]]

[camera]
eye = [0.25, -0.25, 1.2]
target = [0.25, -0.25, 0.0]
"#
    );
    let file: SceneFile = toml::from_str(&text).map_err(|e| SceneError::Parse {
        path: card.to_path_buf(),
        message: crate::input::clipped(&e.to_string()),
    })?;
    Scene::build(&file, card)
}
