//! The numbers a scene takes from the fabric card its material names (`[properties]`): the
//! areal density ρ_A [kg/m²], and for each obstacle the Coulomb coefficient μ = MIU [-] and
//! the contact offset δ = T0/2 \[m\]; a number the scene gives itself wins.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::SceneError;
use crate::cloth::Obstacle;
use crate::params::FabricProperties;

/// Where a number of a scene comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// Written in the scene file.
    Scene,
    /// The fabric card's `[properties]`.
    Card,
    /// Neither: the default (no friction, no offset).
    Default,
}

impl ValueSource {
    pub fn name(self) -> &'static str {
        match self {
            ValueSource::Scene => "scene",
            ValueSource::Card => "card",
            ValueSource::Default => "default",
        }
    }
}

/// An obstacle's contact as it runs, and where each number comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObstacleContact {
    /// `plane`, `sphere` or `box`.
    pub kind: &'static str,
    /// `coulomb`, `velocity_scaling` (the older `friction`) or `none`.
    pub friction_law: &'static str,
    /// μ [-] for `coulomb`, the fraction removed for `velocity_scaling`, 0 for `none`.
    pub friction: f64,
    pub friction_source: ValueSource,
    /// δ \[m\].
    pub offset: f64,
    pub offset_source: ValueSource,
}

/// The sheet numbers of a dynamic scene and where each comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneNumbers {
    /// The fabric card the material names (resolved against the scene's folder), if any.
    pub card: Option<PathBuf>,
    /// ρ_A [kg/m²].
    pub areal_density: f64,
    pub areal_density_source: ValueSource,
    /// One per obstacle, in the scene's order.
    pub obstacles: Vec<ObstacleContact>,
}

/// The areal density and the obstacles of a scene (`path`) with what its card (`card`: the
/// file and its properties) fills in; `obstacles` are completed in place. Without a card the
/// scene must give the areal density; an obstacle without friction or offset has none.
pub(super) fn fill_from_card(
    path: &Path,
    card: Option<(&Path, Option<&FabricProperties>)>,
    areal_density: Option<f64>,
    obstacles: &mut [Obstacle],
) -> Result<SceneNumbers, SceneError> {
    let missing = |message: String| SceneError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let properties = card.and_then(|(_, p)| p);
    // "no WHAT: add `[properties] KEY` to CARD (HINT) or OR"
    let advice = |what: &str, key: &str, hint: &str, or: &str| match card {
        Some((file, _)) => format!(
            "no {what}: add `[properties] {key}` to {} ({hint}) or {or}",
            file.display()
        ),
        None => format!("no {what}: add {or} (its material names no fabric card)"),
    };
    let has_card = card.is_some();
    let no_density = || {
        missing(advice(
            "areal density",
            "areal_density",
            "`kestrel fit CURVES... --weight 120g/m2`, or a curve with a `# weight` line",
            "`areal_density` [kg/m2] to [grid] in the scene",
        ))
    };
    let on_card = properties.and_then(|p| p.areal_density);
    let (areal_density, areal_density_source) =
        match scene_or_card(areal_density, has_card, on_card, no_density)? {
            (Some(v), source) => (v, source),
            (None, _) => return Err(no_density()),
        };
    let mut contacts = Vec::with_capacity(obstacles.len());
    for (k, o) in obstacles.iter_mut().enumerate() {
        let which = format!("obstacle {} ({})", k + 1, o.shape.kind());
        let on_card = properties.and_then(|p| p.friction_coefficient);
        let (mu, friction_source) =
            scene_or_card(o.coulomb.or(o.friction), has_card, on_card, || {
                missing(advice(
                    &format!("contact friction for {which}"),
                    "friction_coefficient",
                    "`kestrel fit CURVES... --friction-coefficient 0.2`, or the friction curves",
                    "`coulomb = MU` (or the older `friction`) to the obstacle",
                ))
            })?;
        if friction_source == ValueSource::Card {
            o.coulomb = mu;
        }
        let on_card = properties.and_then(|p| p.thickness).map(|t| 0.5 * t);
        let (offset, offset_source) = scene_or_card(o.offset, has_card, on_card, || {
            missing(advice(
                &format!("contact offset for {which}"),
                "thickness",
                "`kestrel fit CURVES... --thickness 0.4mm`, or the compression curve",
                "`offset` [m] to the obstacle",
            ))
        })?;
        o.offset = offset;
        let (friction_law, friction) = match (o.coulomb, o.friction) {
            (Some(mu), _) => ("coulomb", mu),
            (None, Some(f)) => ("velocity_scaling", f),
            (None, None) => ("none", 0.0),
        };
        contacts.push(ObstacleContact {
            kind: o.shape.kind(),
            friction_law,
            friction,
            friction_source,
            offset: o.offset(),
            offset_source,
        });
    }
    Ok(SceneNumbers {
        card: card.map(|(f, _)| f.to_path_buf()),
        areal_density,
        areal_density_source,
        obstacles: contacts,
    })
}

/// One number with where it comes from: the scene's own (`given`) wins; else, with a card, the
/// card's (`on_card`; `lacking` is the error for a card without it); else none, the default.
fn scene_or_card(
    given: Option<f64>,
    has_card: bool,
    on_card: Option<f64>,
    lacking: impl FnOnce() -> SceneError,
) -> Result<(Option<f64>, ValueSource), SceneError> {
    match (given, has_card, on_card) {
        (Some(v), _, _) => Ok((Some(v), ValueSource::Scene)),
        (None, true, Some(v)) => Ok((Some(v), ValueSource::Card)),
        (None, true, None) => Err(lacking()),
        (None, false, _) => Ok((None, ValueSource::Default)),
    }
}
