//! Four numbers or 3-vectors in AVX2 registers, with the operations of the force kernel: each
//! lane rounds as the scalar operation does (no fused multiply-adds), so a lane's result is the
//! scalar code's bit for bit.

use std::ops::{Add, Mul, Neg, Sub};

use pulp::Simd as _;

use super::super::Vec3;

/// Lanes per group.
pub(super) const N: usize = 4;

/// The instruction set of the lanes: AVX2 (x86-64 v3).
pub(super) type Simd = pulp::x86::V3;

/// One number per lane.
#[derive(Debug, Clone, Copy)]
pub(super) struct L {
    v: pulp::f64x4,
    simd: Simd,
}

/// A mask per lane.
pub(super) type Mask = pulp::m64x4;

impl L {
    #[inline(always)]
    pub(super) fn new(simd: Simd, a: [f64; N]) -> Self {
        Self {
            v: pulp::cast(a),
            simd,
        }
    }
    #[inline(always)]
    pub(super) fn splat(simd: Simd, v: f64) -> Self {
        Self::new(simd, [v; N])
    }
    #[inline(always)]
    pub(super) fn lanes(self) -> [f64; N] {
        pulp::cast(self.v)
    }
    #[inline(always)]
    pub(super) fn with(self, v: pulp::f64x4) -> Self {
        Self { v, simd: self.simd }
    }
    /// Per lane `f` (a scalar function, lane by lane).
    #[inline(always)]
    pub(super) fn map(self, f: impl Fn(f64) -> f64) -> Self {
        let mut r = self.lanes();
        for r in &mut r {
            *r = f(*r);
        }
        Self::new(self.simd, r)
    }
    #[inline(always)]
    pub(super) fn zip(self, o: Self, f: impl Fn(f64, f64) -> f64) -> Self {
        let mut r = self.lanes();
        for (r, b) in r.iter_mut().zip(o.lanes()) {
            *r = f(*r, b);
        }
        Self::new(self.simd, r)
    }
    #[inline(always)]
    pub(super) fn div(self, o: Self) -> Self {
        self.with(self.simd.div_f64s(self.v, o.v))
    }
    #[inline(always)]
    pub(super) fn sqrt(self) -> Self {
        self.with(self.simd.sqrt_f64s(self.v))
    }
    /// Per lane: `self` where `keep`, else `other`.
    #[inline(always)]
    pub(super) fn or(self, keep: Mask, other: f64) -> Self {
        let o = self.simd.splat_f64s(other);
        self.with(self.simd.select_f64s(keep, self.v, o))
    }
    /// Per lane: `other` where `drop`, else `self`.
    #[inline(always)]
    pub(super) fn unless(self, drop: Mask, other: f64) -> Self {
        let o = self.simd.splat_f64s(other);
        self.with(self.simd.select_f64s(drop, o, self.v))
    }
    /// Per lane: self > v (false where NaN).
    #[inline(always)]
    pub(super) fn gt(self, v: f64) -> Mask {
        let s = self.simd;
        s.greater_than_f64s(self.v, s.splat_f64s(v))
    }
    /// Per lane: self < v (false where NaN).
    #[inline(always)]
    pub(super) fn lt(self, v: f64) -> Mask {
        let s = self.simd;
        s.less_than_f64s(self.v, s.splat_f64s(v))
    }
    /// Per lane: self == v (false where NaN).
    #[inline(always)]
    pub(super) fn eq(self, v: f64) -> Mask {
        let s = self.simd;
        s.equal_f64s(self.v, s.splat_f64s(v))
    }
    /// f64::max(self, v) per lane for a number v: v where self is NaN.
    #[inline(always)]
    pub(super) fn max(self, v: f64) -> Self {
        self.or(self.gt(v), v)
    }
    /// f64::clamp(self, lo, hi) per lane: NaN stays NaN.
    #[inline(always)]
    pub(super) fn clamp(self, lo: f64, hi: f64) -> Self {
        let c = self.unless(self.lt(lo), lo);
        c.unless(c.gt(hi), hi)
    }
}

/// Either mask.
#[inline(always)]
pub(super) fn either(simd: Simd, a: Mask, b: Mask) -> Mask {
    simd.or_m64s(a, b)
}

impl Add for L {
    type Output = L;
    #[inline(always)]
    fn add(self, o: L) -> L {
        self.with(self.simd.add_f64s(self.v, o.v))
    }
}
impl Sub for L {
    type Output = L;
    #[inline(always)]
    fn sub(self, o: L) -> L {
        self.with(self.simd.sub_f64s(self.v, o.v))
    }
}
impl Mul for L {
    type Output = L;
    #[inline(always)]
    fn mul(self, o: L) -> L {
        self.with(self.simd.mul_f64s(self.v, o.v))
    }
}
impl Neg for L {
    type Output = L;
    #[inline(always)]
    fn neg(self) -> L {
        // the sign bit flipped, as scalar negation does
        let s = self.simd;
        self.with(s.xor_f64s(self.v, s.splat_f64s(-0.0)))
    }
}

/// One 3-vector per lane, by component (the operations of nalgebra's `Vector3`, in its order).
#[derive(Debug, Clone, Copy)]
pub(super) struct V {
    pub(super) x: L,
    pub(super) y: L,
    pub(super) z: L,
}

impl V {
    /// The particles `idx` of `x`, one per lane.
    #[inline(always)]
    pub(super) fn gather(simd: Simd, x: &[Vec3], idx: [u32; N]) -> Self {
        let (mut a, mut b, mut c) = ([0.0; N], [0.0; N], [0.0; N]);
        for (i, &p) in idx.iter().enumerate() {
            let q = x[p as usize];
            (a[i], b[i], c[i]) = (q.x, q.y, q.z);
        }
        V {
            x: L::new(simd, a),
            y: L::new(simd, b),
            z: L::new(simd, c),
        }
    }
    /// The vector of each lane.
    #[inline(always)]
    pub(super) fn lanes(self) -> [Vec3; N] {
        let (a, b, c) = (self.x.lanes(), self.y.lanes(), self.z.lanes());
        let mut r = [Vec3::zeros(); N];
        for (i, r) in r.iter_mut().enumerate() {
            *r = Vec3::new(a[i], b[i], c[i]);
        }
        r
    }
    #[inline(always)]
    pub(super) fn scale(self, s: L) -> V {
        V {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
    #[inline(always)]
    pub(super) fn dot(self, o: V) -> L {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    #[inline(always)]
    pub(super) fn norm(self) -> L {
        self.dot(self).sqrt()
    }
    #[inline(always)]
    pub(super) fn cross(self, b: V) -> V {
        V {
            x: self.y * b.z - self.z * b.y,
            y: self.z * b.x - self.x * b.z,
            z: self.x * b.y - self.y * b.x,
        }
    }
    /// Per lane: zero where `drop`, else `self`.
    #[inline(always)]
    pub(super) fn unless(self, drop: Mask) -> V {
        V {
            x: self.x.unless(drop, 0.0),
            y: self.y.unless(drop, 0.0),
            z: self.z.unless(drop, 0.0),
        }
    }
    /// Per lane: `self` where `keep`, else zero.
    #[inline(always)]
    pub(super) fn or_zero(self, keep: Mask) -> V {
        V {
            x: self.x.or(keep, 0.0),
            y: self.y.or(keep, 0.0),
            z: self.z.or(keep, 0.0),
        }
    }
}

impl Add for V {
    type Output = V;
    #[inline(always)]
    fn add(self, o: V) -> V {
        V {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}
impl Sub for V {
    type Output = V;
    #[inline(always)]
    fn sub(self, o: V) -> V {
        V {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}
impl Neg for V {
    type Output = V;
    #[inline(always)]
    fn neg(self) -> V {
        V {
            x: -self.x,
            y: -self.y,
            z: -self.z,
        }
    }
}

/// A field of four connectors, one per lane.
#[inline(always)]
pub(super) fn field<C>(simd: Simd, c: &[C], f: impl Fn(&C) -> f64) -> L {
    let mut r = [0.0; N];
    for (r, c) in r.iter_mut().zip(c) {
        *r = f(c);
    }
    L::new(simd, r)
}

/// A particle index of four connectors, one per lane.
#[inline(always)]
pub(super) fn index<C>(c: &[C], f: impl Fn(&C) -> u32) -> [u32; N] {
    let mut r = [0; N];
    for (r, c) in r.iter_mut().zip(c) {
        *r = f(c);
    }
    r
}
