//! A door leaf drawn as a thin box turning about its hinge (angles in rad, lengths in m).

use nalgebra::Vector3;

use crate::scene::DoorSpec;

/// A door leaf as a box at door angle 0 (a corner and three edges \[m\]) turning about a hinge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DoorPanel {
    pub hinge: [f64; 3],
    /// Unit hinge axis; positive angles turn right-handed about it.
    pub axis: [f64; 3],
    pub corner: [f64; 3],
    pub edges: [[f64; 3]; 3],
}

impl DoorPanel {
    /// Thickness of the leaf drawn behind its plane \[m\].
    pub(crate) const THICKNESS: f64 = 0.03;
    /// How far the leaf reaches past the cloth's far edge and top \[m\].
    pub(crate) const MARGIN: f64 = 0.1;

    /// The leaf of `door` in the plane (point, normal) in front of which the cloth `x` hangs
    /// (at angle 0): from the hinge to past the cloth, from the hinge point's height (or the
    /// cloth's bottom, if lower) to past its top, `THICKNESS` behind the plane. `None` when
    /// the normal lies along the axis.
    pub(crate) fn around(
        door: &DoorSpec,
        plane: ([f64; 3], [f64; 3]),
        x: &[[f32; 3]],
    ) -> Option<Self> {
        let h = Vector3::from(door.hinge);
        let a = Vector3::from(door.axis).try_normalize(1e-12)?;
        let n0 = Vector3::from(plane.1);
        let mut n = (n0 - a * n0.dot(&a)).try_normalize(1e-12)?;
        let rel =
            |p: &[f32; 3]| Vector3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2])) - h;
        let mean = x.iter().map(rel).sum::<Vector3<f64>>() / x.len().max(1) as f64;
        if mean.dot(&n) < 0.0 {
            n = -n;
        }
        let mut w = a.cross(&n);
        if mean.dot(&w) < 0.0 {
            w = -w;
        }
        let (mut lo, mut hi, mut far) = (0.0f64, 0.0f64, 0.0f64);
        for p in x {
            let d = rel(p);
            lo = lo.min(d.dot(&a));
            hi = hi.max(d.dot(&a));
            far = far.max(d.dot(&w));
        }
        let off = (Vector3::from(plane.0) - h).dot(&n);
        let corner = h + a * lo + n * (off - Self::THICKNESS);
        Some(Self {
            hinge: door.hinge,
            axis: a.into(),
            corner: corner.into(),
            edges: [
                (w * (far + Self::MARGIN)).into(),
                (a * (hi + Self::MARGIN - lo)).into(),
                (n * Self::THICKNESS).into(),
            ],
        })
    }
}
