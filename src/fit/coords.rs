//! The fitted parameters and their bounded coordinates: q = lo + (hi − lo)(1 + sin θ)/2 maps
//! an unconstrained θ onto [lo, hi]; the toe is reparametrised (φ, ψ) so its bounds are boxes.

use std::ops::{Index, IndexMut};

use nalgebra::DVector;

use super::estimate::CurveRanges;
use super::path_model::{idx, ElasticKind, LawKind, ShapeKind, P};
use crate::kes::KesTest;

/// One physical parameter of a connector law; `Param as usize` indexes a parameter vector `P`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(usize)]
pub enum Param {
    /// Rigidity: k_t [N/m] (traction), k_s [N/(m·rad)] (shear), k_b [N·m] (bending), k (loop).
    K = idx::K,
    /// ε₁, end of the virgin toe [-].
    Eps1 = idx::E1,
    /// F₁, force at ε₁ [N/m].
    F1 = idx::F1,
    /// ε₁', end of the aligned toe [-].
    Eps1Aligned = idx::E1A,
    /// Friction level at zero load F_c0.
    Level = idx::LEVEL,
    /// Growth of the friction level with load μ [-].
    Mu = idx::MU,
    /// Friction length ε_f (the slow length for the second order).
    EpsF = idx::EPSF,
    /// Dahl exponent α [-].
    Alpha = idx::ALPHA,
    /// Second order: fast/slow length ratio η [-].
    Eta = idx::ETA,
    /// Second order: f₂/f₁ [-].
    Ratio = idx::RATIO,
    /// Force zero offset of the instrument.
    Offset = idx::OFFSET,
}

impl Param {
    pub(crate) const ALL: [Param; idx::N] = [
        Param::K,
        Param::Eps1,
        Param::F1,
        Param::Eps1Aligned,
        Param::Level,
        Param::Mu,
        Param::EpsF,
        Param::Alpha,
        Param::Eta,
        Param::Ratio,
        Param::Offset,
    ];

    /// Name in reports and parameter files (`k_t`, `eps1`, `mu`…).
    pub fn name(self, test: KesTest) -> &'static str {
        match self {
            Param::K => match test {
                KesTest::Tensile => "k_t",
                KesTest::Shear => "k_s",
                KesTest::Bending => "k_b",
                KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
                    "k"
                }
            },
            Param::Eps1 => "eps1",
            Param::F1 => "f1",
            Param::Eps1Aligned => "eps1_aligned",
            Param::Level => "level",
            Param::Mu => "mu",
            Param::EpsF => "eps_f",
            Param::Alpha => "alpha",
            Param::Eta => "eta",
            Param::Ratio => "ratio",
            Param::Offset => "offset",
        }
    }

    /// SI unit on a curve of `test`.
    pub(crate) fn unit(self, test: KesTest) -> &'static str {
        let (force, length) = match test {
            KesTest::Tensile => ("N/m", "-"),
            KesTest::Shear => ("N/m", "rad"),
            KesTest::Bending => ("N", "1/m"),
            KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
                ("N", "m")
            }
        };
        match self {
            Param::K => match test {
                KesTest::Tensile => "N/m",
                KesTest::Shear => "N/(m*rad)",
                KesTest::Bending => "N*m",
                KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
                    "N/m"
                }
            },
            Param::Eps1 | Param::Eps1Aligned => "-",
            Param::F1 => "N/m",
            Param::Level | Param::Offset => force,
            Param::EpsF => length,
            Param::Mu | Param::Alpha | Param::Eta | Param::Ratio => "-",
        }
    }

    /// The parameters a law of `kind` has, in report order.
    pub(crate) fn of_law(kind: LawKind) -> Vec<Param> {
        let mut list = vec![Param::K];
        if kind.elastic.is_traction() {
            list.extend([Param::Eps1, Param::F1, Param::Eps1Aligned]);
        }
        list.extend([Param::Level, Param::Mu, Param::EpsF]);
        match kind.shape {
            ShapeKind::Dahl => list.push(Param::Alpha),
            ShapeKind::Bs2 => list.extend([Param::Eta, Param::Ratio]),
        }
        list.push(Param::Offset);
        list
    }

    /// Bounds [lo, hi] of the coordinate q of this parameter on a curve (`k0`: the initial
    /// rigidity); F₁ and ε₁' are bounded through φ and ψ (see [`Coordinates`]).
    pub(crate) fn bounds(
        self,
        kind: LawKind,
        test: KesTest,
        k0: f64,
        ranges: &CurveRanges,
    ) -> (f64, f64) {
        let yr = ranges.y_range();
        let xr = ranges.x_range();
        match self {
            // a generic loop's rigidity may be of either sign (a tilted loop); a law's is positive
            Param::K if test == KesTest::Loop => {
                let span = 50.0 * k0 + yr / xr.max(1e-300);
                (-span, span)
            }
            Param::K => (k0 / 50.0, k0 * 50.0),
            Param::Eps1 => (
                1e-3 * ranges.x_max.abs().max(1e-12),
                ranges.x_max.abs().max(1e-12),
            ),
            // φ: F₁ = k ε₁ (1 + φ)/2; the power toe goes down to n = 2/(1 + φ) = 10
            Param::F1 if kind.elastic == ElasticKind::PowerToeLine => (-0.8, 1.0),
            Param::F1 => (0.0, 1.0),
            Param::Eps1Aligned => (0.0, 1.0),
            Param::Level => (0.0, yr),
            Param::Mu => (0.0, 0.99),
            Param::EpsF => (1e-5 * xr, xr),
            Param::Alpha => (1.0, 8.0),
            Param::Eta => (0.01, 0.99),
            Param::Ratio => (0.0, 0.95),
            Param::Offset => (-0.1 * yr, 0.1 * yr),
        }
    }
}

impl Index<Param> for P {
    type Output = f64;
    fn index(&self, p: Param) -> &f64 {
        &self[p as usize]
    }
}

impl IndexMut<Param> for P {
    fn index_mut(&mut self, p: Param) -> &mut f64 {
        &mut self[p as usize]
    }
}

/// The law structure a curve's test calls for (`power` picks the power toe for tensile).
pub(crate) fn law_kind(test: KesTest, shape: ShapeKind, power: bool) -> LawKind {
    LawKind {
        elastic: match test {
            KesTest::Tensile if power => ElasticKind::PowerToeLine,
            KesTest::Tensile => ElasticKind::ToeLine,
            _ => ElasticKind::Linear,
        },
        shape,
    }
}

/// Bounded coordinates q of a law: q = p except q[F1] = φ with F₁ = k ε₁ (1 + φ)/2 and
/// q[Eps1Aligned] = ψ ∈ [0, 1], ε₁' = ε₁(1 − φ + φψ) (quadratic toe) or
/// ε₁' = ε₁ − 0.95(1 − ψ)ε₁(1 + φ)/2 (power toe).
#[derive(Debug, Clone)]
pub(crate) struct Coordinates {
    pub kind: LawKind,
    /// The free coordinates, in θ order.
    pub free: Vec<Param>,
    pub lo: P,
    pub hi: P,
    /// Current coordinates (free and pinned).
    pub q: P,
}

impl Coordinates {
    /// Coordinates, bounds and free set for a law on a curve, from an initial estimate `p0`.
    pub(crate) fn new(
        kind: LawKind,
        test: KesTest,
        p0: &P,
        ranges: &CurveRanges,
        alpha_free: bool,
        mu_free: bool,
        offset: bool,
    ) -> Self {
        let k0 = p0[Param::K].abs().max(1e-300);
        let mut lo: P = [0.0; idx::N];
        let mut hi: P = [0.0; idx::N];
        for param in Param::ALL {
            (lo[param], hi[param]) = param.bounds(kind, test, k0, ranges);
        }
        let mut free = vec![Param::K];
        if kind.elastic.is_traction() {
            free.extend([Param::Eps1, Param::F1, Param::Eps1Aligned]);
        }
        free.extend([Param::Level, Param::EpsF]);
        if mu_free {
            free.push(Param::Mu);
        }
        match kind.shape {
            ShapeKind::Dahl if alpha_free => free.push(Param::Alpha),
            ShapeKind::Dahl => {}
            ShapeKind::Bs2 => free.extend([Param::Eta, Param::Ratio]),
        }
        if offset {
            free.push(Param::Offset);
        }
        let mut p = *p0;
        if !mu_free {
            p[Param::Mu] = 0.0;
        }
        if !alpha_free {
            p[Param::Alpha] = 1.0;
        }
        if !offset {
            p[Param::Offset] = 0.0;
        }
        let mut q = Self::from_physical(kind, &p);
        // start strictly inside the bounds; bounds from a curve whose values overflow the
        // arithmetic (an infinite slope, a NaN span) leave the start NaN, which the fit
        // reports (`Self::start_is_finite`)
        for &j in &free {
            let (l, h) = (lo[j], hi[j]);
            let margin = 1e-3 * (h - l);
            q[j] = if l.is_finite() && h.is_finite() && margin.is_finite() && l < h {
                q[j].clamp(l + margin, h - margin)
            } else {
                f64::NAN
            };
        }
        Self {
            kind,
            free,
            lo,
            hi,
            q,
        }
    }

    /// Whether the start and the bounds of every free coordinate are finite numbers (false
    /// for a curve whose values are beyond the range of the fit's arithmetic).
    pub(crate) fn start_is_finite(&self) -> bool {
        self.free
            .iter()
            .all(|&j| self.q[j].is_finite() && self.lo[j].is_finite() && self.hi[j].is_finite())
    }

    /// Physical parameters p(q).
    pub(crate) fn physical(&self, q: &P) -> P {
        let mut p = *q;
        let phi = q[Param::F1];
        match self.kind.elastic {
            ElasticKind::ToeLine => {
                p[Param::F1] = q[Param::K] * q[Param::Eps1] * (1.0 + phi) / 2.0;
                p[Param::Eps1Aligned] = q[Param::Eps1] * (1.0 - phi + phi * q[Param::Eps1Aligned]);
            }
            ElasticKind::PowerToeLine => {
                // ε₁' = ε₁ − (1 − ψ)·0.95·F₁/k keeps F₁' ≥ 0.05 F₁ > 0
                p[Param::F1] = q[Param::K] * q[Param::Eps1] * (1.0 + phi) / 2.0;
                p[Param::Eps1Aligned] = q[Param::Eps1]
                    - (1.0 - q[Param::Eps1Aligned]) * 0.95 * q[Param::Eps1] * (1.0 + phi) / 2.0;
            }
            ElasticKind::Linear => {}
        }
        p
    }

    /// Coordinates from physical parameters (inverse of [`Self::physical`]).
    pub(crate) fn from_physical(kind: LawKind, p: &P) -> P {
        let mut q = *p;
        let (k, e1, f1, e1a) = (
            p[Param::K],
            p[Param::Eps1],
            p[Param::F1],
            p[Param::Eps1Aligned],
        );
        if kind.elastic == ElasticKind::PowerToeLine {
            let phi = (2.0 * f1 / (k * e1) - 1.0).clamp(-0.9, 1.0);
            q[Param::F1] = phi;
            let span = 0.95 * e1 * (1.0 + phi) / 2.0;
            q[Param::Eps1Aligned] = (1.0 - (e1 - e1a) / span).clamp(0.0, 1.0);
        } else if kind.elastic == ElasticKind::ToeLine {
            let phi = (2.0 * f1 / (k * e1) - 1.0).clamp(0.0, 1.0);
            q[Param::F1] = phi;
            let ratio = e1a / e1;
            q[Param::Eps1Aligned] = if phi > 0.0 {
                ((ratio - 1.0 + phi) / phi).clamp(0.0, 1.0)
            } else {
                1.0
            };
        }
        q
    }

    /// G = ∂p/∂q at the current coordinates, one column per free coordinate: `g[col][param]`.
    pub(crate) fn dp_dq(&self) -> Vec<P> {
        let q = &self.q;
        let (k, e1, phi, psi) = (
            q[Param::K],
            q[Param::Eps1],
            q[Param::F1],
            q[Param::Eps1Aligned],
        );
        self.free
            .iter()
            .map(|&j| {
                let mut c: P = [0.0; idx::N];
                c[j] = 1.0;
                match self.kind.elastic {
                    ElasticKind::PowerToeLine => {
                        let a = 0.95 * (1.0 - psi);
                        match j {
                            Param::K => c[Param::F1] = e1 * (1.0 + phi) / 2.0,
                            Param::Eps1 => {
                                c[Param::F1] = k * (1.0 + phi) / 2.0;
                                c[Param::Eps1Aligned] = 1.0 - a * (1.0 + phi) / 2.0;
                            }
                            Param::F1 => {
                                c[Param::F1] = k * e1 / 2.0;
                                c[Param::Eps1Aligned] = -a * e1 / 2.0;
                            }
                            Param::Eps1Aligned => {
                                c[Param::Eps1Aligned] = 0.95 * e1 * (1.0 + phi) / 2.0
                            }
                            _ => {}
                        }
                    }
                    ElasticKind::ToeLine => match j {
                        Param::K => c[Param::F1] = e1 * (1.0 + phi) / 2.0,
                        Param::Eps1 => {
                            c[Param::F1] = k * (1.0 + phi) / 2.0;
                            c[Param::Eps1Aligned] = 1.0 - phi + phi * psi;
                        }
                        Param::F1 => {
                            c[Param::F1] = k * e1 / 2.0;
                            c[Param::Eps1Aligned] = e1 * (psi - 1.0);
                        }
                        Param::Eps1Aligned => c[Param::Eps1Aligned] = e1 * phi,
                        _ => {}
                    },
                    ElasticKind::Linear => {}
                }
                c
            })
            .collect()
    }

    /// θ of the free coordinates (inverse of the sine map, kept off the bounds).
    pub(crate) fn theta(&self) -> DVector<f64> {
        DVector::from_iterator(
            self.free.len(),
            self.free.iter().map(|&j| {
                let (lo, hi) = (self.lo[j], self.hi[j]);
                let t = (2.0 * (self.q[j] - lo) / (hi - lo) - 1.0).clamp(-0.999, 0.999);
                t.asin()
            }),
        )
    }

    pub(crate) fn set_theta(&mut self, theta: &DVector<f64>) {
        for (k, &j) in self.free.iter().enumerate() {
            let (lo, hi) = (self.lo[j], self.hi[j]);
            self.q[j] = lo + (hi - lo) * (1.0 + theta[k].sin()) / 2.0;
        }
    }

    /// dq/dθ of the free coordinate in column `col` at θ.
    pub(crate) fn dq_dtheta(&self, col: usize, theta: f64) -> f64 {
        let j = self.free[col];
        (self.hi[j] - self.lo[j]) * theta.cos() / 2.0
    }

    /// Where a coordinate lies within its bounds, 0 at lo and 1 at hi.
    pub(crate) fn position(&self, j: Param) -> f64 {
        (self.q[j] - self.lo[j]) / (self.hi[j] - self.lo[j])
    }

    /// Takes `j` out of the free set, keeping its current value.
    pub(crate) fn pin(&mut self, j: Param) {
        self.free.retain(|&k| k != j);
    }
}
