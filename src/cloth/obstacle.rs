//! Rigid obstacles by dynamic inverse (Provot §2.4): a particle found inside after a step is
//! put back on the surface (offset δ [m]) and its inward normal velocity Δv_n removed; Coulomb
//! friction then removes min(|v_t|, μ·Δv_n) of its tangential velocity v_t (the old
//! `friction` instead scales v_t by (1 − friction)).

use serde::{Deserialize, Serialize};

use super::{SettingError, Vec3};

/// The shape of an obstacle.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ObstacleShape {
    /// The half-space below a plane through `point` with outward unit `normal`.
    Plane { point: [f64; 3], normal: [f64; 3] },
    /// A ball of `radius` \[m\] about `center`.
    Sphere { center: [f64; 3], radius: f64 },
    /// An axis-aligned box from `min` to `max` \[m\].
    Box { min: [f64; 3], max: [f64; 3] },
}

impl ObstacleShape {
    /// The `kind` of a file's table: `plane`, `sphere` or `box`.
    pub fn kind(&self) -> &'static str {
        match self {
            ObstacleShape::Plane { .. } => "plane",
            ObstacleShape::Sphere { .. } => "sphere",
            ObstacleShape::Box { .. } => "box",
        }
    }
}

/// An obstacle with its contact parameters. In a file: `kind` (`plane`, `sphere`, `box`),
/// the shape's fields, `coulomb` or `friction` (not both) and `offset`; each left out is
/// `None` (no friction, no offset; a scene whose material names a fabric card fills them from
/// the card).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ShapeFields")]
pub struct Obstacle {
    #[serde(flatten)]
    pub shape: ObstacleShape,
    /// Velocity-scaling friction (the scenes before `coulomb`): fraction of the tangential
    /// velocity removed at each contact, 0 ≤ friction ≤ 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friction: Option<f64>,
    /// Coulomb coefficient μ ≥ 0 [-]: a contact removes min(|v_t|, μ·Δv_n) of the tangential
    /// velocity, Δv_n the normal velocity it removes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coulomb: Option<f64>,
    /// Distance kept between a particle and the surface δ \[m\] (cloth half-thickness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<f64>,
}

/// An obstacle or a collision potential as written: every field of every shape and of both
/// tables, checked against `kind` and against the table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeFields {
    kind: String,
    point: Option<[f64; 3]>,
    normal: Option<[f64; 3]>,
    center: Option<[f64; 3]>,
    radius: Option<f64>,
    min: Option<[f64; 3]>,
    max: Option<[f64; 3]>,
    /// Obstacles only.
    friction: Option<f64>,
    coulomb: Option<f64>,
    offset: Option<f64>,
    /// Potentials only.
    strength: Option<f64>,
    range: Option<f64>,
}

/// The two tables that read [`ShapeFields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    Obstacle,
    Potential,
}

impl ShapeFields {
    /// An obstacle has no `strength` or `range`, a potential no `friction`, `coulomb` or
    /// `offset`.
    fn refuse_other_table(&self, table: Table) -> Result<(), String> {
        let (name, other) = match table {
            Table::Obstacle => (
                "obstacle",
                vec![("strength", self.strength), ("range", self.range)],
            ),
            Table::Potential => (
                "potential",
                vec![
                    ("friction", self.friction),
                    ("coulomb", self.coulomb),
                    ("offset", self.offset),
                ],
            ),
        };
        let given: Vec<(&str, bool)> = other.iter().map(|(n, v)| (*n, v.is_some())).collect();
        self.refuse(name, &given)
    }

    /// The first of `fields` (name, given) that is given: an error for a `table` of this kind.
    fn refuse(&self, table: &str, fields: &[(&str, bool)]) -> Result<(), String> {
        match fields.iter().find(|(_, set)| *set) {
            Some((n, _)) => Err(format!("{table} `{}` has no field `{n}`", self.kind)),
            None => Ok(()),
        }
    }

    /// The shape, with the fields its `kind` needs and none of the other shapes'.
    fn shape(&self) -> Result<ObstacleShape, String> {
        let f = self;
        let need = |v: Option<[f64; 3]>, name: &str| {
            v.ok_or_else(|| format!("obstacle `{}` needs `{name}`", f.kind))
        };
        // Every shape field but the `used` ones must be left out.
        let only = |used: [&str; 2]| {
            let given = [
                ("point", f.point.is_some()),
                ("normal", f.normal.is_some()),
                ("center", f.center.is_some()),
                ("radius", f.radius.is_some()),
                ("min", f.min.is_some()),
                ("max", f.max.is_some()),
            ];
            let others: Vec<(&str, bool)> = given
                .into_iter()
                .filter(|(n, _)| !used.contains(n))
                .collect();
            f.refuse("obstacle", &others)
        };
        Ok(match f.kind.as_str() {
            "plane" => {
                only(["point", "normal"])?;
                ObstacleShape::Plane {
                    point: need(f.point, "point")?,
                    normal: need(f.normal, "normal")?,
                }
            }
            "sphere" => {
                only(["center", "radius"])?;
                ObstacleShape::Sphere {
                    center: need(f.center, "center")?,
                    radius: f
                        .radius
                        .ok_or_else(|| "obstacle `sphere` needs `radius`".to_string())?,
                }
            }
            "box" => {
                only(["min", "max"])?;
                ObstacleShape::Box {
                    min: need(f.min, "min")?,
                    max: need(f.max, "max")?,
                }
            }
            other => {
                return Err(format!(
                    "unknown obstacle kind `{other}` — expected plane, sphere or box"
                ))
            }
        })
    }
}

/// Why an obstacle cannot have both friction laws.
const BOTH_FRICTIONS: &str = "give either `coulomb` (Coulomb coefficient μ) or `friction` (the \
     older fraction of the tangential velocity removed per contact), not both";

impl TryFrom<ShapeFields> for Obstacle {
    type Error = String;
    fn try_from(f: ShapeFields) -> Result<Self, String> {
        f.refuse_other_table(Table::Obstacle)?;
        if f.friction.is_some() && f.coulomb.is_some() {
            return Err(format!("obstacle `{}`: {BOTH_FRICTIONS}", f.kind));
        }
        Ok(Obstacle {
            shape: f.shape()?,
            friction: f.friction,
            coulomb: f.coulomb,
            offset: f.offset,
        })
    }
}

/// Terzopoulos' collision potential c·exp(−f(r)/ε) per unit area around an obstacle with
/// inside/outside function f (signed distance \[m\]); force (eq. 13) along the cloth normal n:
/// A·(c/ε)·exp(−f/ε)·(∇f·n)·n \[N\]. In a file: the obstacle's `kind` and shape fields,
/// `strength` c [J/m²] and `range` ε \[m\].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ShapeFields")]
pub struct CollisionPotential {
    #[serde(flatten)]
    pub shape: ObstacleShape,
    /// c [J/m²].
    pub strength: f64,
    /// ε \[m\].
    pub range: f64,
}

impl TryFrom<ShapeFields> for CollisionPotential {
    type Error = String;
    fn try_from(f: ShapeFields) -> Result<Self, String> {
        f.refuse_other_table(Table::Potential)?;
        let need = |v: Option<f64>, name: &str| {
            v.ok_or_else(|| format!("potential `{}` needs `{name}`", f.kind))
        };
        Ok(Self {
            shape: f.shape()?,
            strength: need(f.strength, "strength")?,
            range: need(f.range, "range")?,
        })
    }
}

/// The largest exponent −f/ε used, so that a node deep inside gets a large finite force.
const MAX_EXPONENT: f64 = 30.0;

impl CollisionPotential {
    pub(crate) fn validate(&self) -> Result<(), SettingError> {
        self.obstacle().validate()?;
        SettingError::non_negative("potential strength", self.strength, " J/m^2")?;
        SettingError::positive("potential range", self.range, " m")
    }

    /// The obstacle whose inside/outside function this potential uses (for drawing).
    pub(crate) fn obstacle(&self) -> Obstacle {
        Obstacle::frictionless(self.shape)
    }

    /// Force of eq. 13 on a node of tributary area `area` \[m²\] at `x` with unit normal `n` \[N\].
    #[inline]
    pub(crate) fn force(&self, x: &Vec3, n: &Vec3, area: f64) -> Vec3 {
        let (d, grad) = self.obstacle().distance(x);
        let e = (-d / self.range).min(MAX_EXPONENT).exp();
        n * (area * self.strength / self.range * e * grad.dot(n))
    }
}

/// Farthest an obstacle's coordinates, radius and offset may reach from the origin \[m\], as a
/// camera's ([`crate::cloth::record::CAMERA_REACH_M`]): beyond, a contact moves the cloth
/// where its energies overflow, and the renderer's f32 loses the scene.
pub const OBSTACLE_REACH_M: f64 = crate::cloth::record::CAMERA_REACH_M;

impl Obstacle {
    /// An obstacle of `shape` without friction or offset.
    pub fn frictionless(shape: ObstacleShape) -> Self {
        Self {
            shape,
            friction: None,
            coulomb: None,
            offset: None,
        }
    }

    /// The distance kept from the surface δ \[m\] (0 when not given).
    pub fn offset(&self) -> f64 {
        self.offset.unwrap_or(0.0)
    }

    /// (point, normal) of a plane obstacle; `None` for other shapes.
    pub(crate) fn plane(&self) -> Option<([f64; 3], [f64; 3])> {
        match self.shape {
            ObstacleShape::Plane { point, normal } => Some((point, normal)),
            _ => None,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), SettingError> {
        if let Some(f) = self.friction {
            if !(f.is_finite() && (0.0..=1.0).contains(&f)) {
                return Err(SettingError::range("obstacle friction", f, "", "in [0, 1]"));
            }
        }
        if let Some(mu) = self.coulomb {
            SettingError::non_negative("obstacle coulomb", mu, "")?;
            if self.friction.is_some() {
                return Err(SettingError::Contact(BOTH_FRICTIONS));
            }
        }
        if let Some(offset) = self.offset {
            if !(0.0..=OBSTACLE_REACH_M).contains(&offset) {
                return Err(SettingError::range(
                    "obstacle offset",
                    offset,
                    " m",
                    "0 to 1e6",
                ));
            }
        }
        let finite = |v: &[f64; 3]| v.iter().all(|x| x.is_finite());
        let within = |v: &[f64; 3]| v.iter().all(|x| x.abs() <= OBSTACLE_REACH_M);
        match &self.shape {
            ObstacleShape::Plane { point, normal } => {
                if !within(point) || !finite(normal) || Vec3::from(*normal).norm() == 0.0 {
                    return Err(SettingError::Plane);
                }
            }
            ObstacleShape::Sphere { center, radius } => {
                if !(within(center) && *radius > 0.0 && *radius <= OBSTACLE_REACH_M) {
                    return Err(SettingError::Sphere { radius: *radius });
                }
            }
            ObstacleShape::Box { min, max } => {
                if !within(min) || !within(max) || (0..3).any(|k| min[k] >= max[k]) {
                    return Err(SettingError::Box {
                        min: *min,
                        max: *max,
                    });
                }
            }
        }
        Ok(())
    }

    /// Signed distance of `x` to the surface minus the offset \[m\] (< 0: inside) and the
    /// outward unit normal there.
    pub fn distance(&self, x: &Vec3) -> (f64, Vec3) {
        let (d, n) = match &self.shape {
            ObstacleShape::Plane { point, normal } => {
                let n = Vec3::from(*normal).normalize();
                ((x - Vec3::from(*point)).dot(&n), n)
            }
            ObstacleShape::Sphere { center, radius } => {
                let r = x - Vec3::from(*center);
                let l = r.norm();
                let n = if l > 0.0 { r / l } else { Vec3::y() };
                (l - radius, n)
            }
            ObstacleShape::Box { min, max } => {
                let (lo, hi) = (Vec3::from(*min), Vec3::from(*max));
                let c = (lo + hi) * 0.5;
                let half = (hi - lo) * 0.5;
                let q = (x - c).abs() - half;
                if q.max() > 0.0 {
                    // outside: distance to the box and the direction from the nearest point
                    let outside = q.map(|v| v.max(0.0));
                    let l = outside.norm();
                    let near = x.zip_zip_map(&lo, &hi, |v, a, b| v.clamp(a, b));
                    let n = if l > 0.0 { (x - near) / l } else { Vec3::y() };
                    (l, n)
                } else {
                    // inside: leave through the nearest face
                    let (k, _) = q.argmax();
                    let mut n = Vec3::zeros();
                    n[k] = if x[k] >= c[k] { 1.0 } else { -1.0 };
                    (q[k], n)
                }
            }
        };
        (d - self.offset(), n)
    }

    /// Projects a particle found inside at the end of a step of `dt` \[s\] onto the surface
    /// and corrects its velocity; returns whether it was in contact. The normal velocity
    /// change is Δv_n = max(0, −v·n); Coulomb friction removes min(|v_t|, μ·Δv_n) of the
    /// tangential velocity v_t (stick when |v_t| ≤ μ·Δv_n) and moves the particle back by that
    /// change times `dt`, since the step ended at x₀ + dt·v: a particle that sticks stays where
    /// the step began along the surface. The velocity-scaling `friction` scales v_t only.
    pub(crate) fn resolve(&self, x: &mut Vec3, v: &mut Vec3, dt: f64) -> bool {
        let (d, n) = self.distance(x);
        if d >= 0.0 {
            return false;
        }
        *x -= n * d;
        let vn = v.dot(&n);
        let tangential = *v - n * vn;
        let kept = match (self.coulomb, self.friction) {
            (Some(mu), _) => {
                let speed = tangential.norm();
                let removed = mu * (-vn).max(0.0);
                let kept = if speed <= removed {
                    Vec3::zeros()
                } else {
                    tangential * (1.0 - removed / speed)
                };
                *x += (kept - tangential) * dt;
                kept
            }
            (None, friction) => tangential * (1.0 - friction.unwrap_or(0.0)),
        };
        *v = kept + n * vn.max(0.0);
        true
    }
}
