//! The fitted law of a report (its structure and physical parameters as a connector law) and
//! its KES values beside the measured curve's, the law driven along the same measured path and
//! read with the same rules (Kawabata units; `docs/kes.md`).

use serde::Serialize;

use super::super::coords::Param;
use super::super::path_model::{ElasticKind, LawKind, ShapeKind, P};
use crate::friction::FrictionShape;
use crate::kes::KesTest;
use crate::material::{BendingLaw, ConnectorLaw, FrictionLaw, ShearLaw, ToeShape, TractionLaw};

use crate::kes::replicates::summarise;
use crate::kes::values::{kes_values, KesValues, ReadingRules};
use crate::kes::Curve;
use crate::params::FittedLaw;

/// The KES values of a curve beside those of its fitted law driven along the same measured
/// path and read with the same rules (Kawabata units; `docs/kes.md`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ValuesSideBySide {
    /// Read from the measured curve.
    pub measured: KesValues,
    /// Read from the fitted law (with its offset) driven along the measured path, as the
    /// measured curve is read; None when its forces there are not finite (`note` says why).
    pub fitted: Option<KesValues>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ValuesSideBySide {
    /// The fitted law's values against the measured curve's.
    pub fn of(curve: &Curve, fitted: &FittedLaw) -> Self {
        Self::of_specimens(&[curve], fitted)
    }

    /// The fitted law's values against the mean of the specimens' values (one specimen: its
    /// own values; `kes::replicates` reads the mean).
    pub fn of_specimens(specimens: &[&Curve], fitted: &FittedLaw) -> Self {
        let measured = measured_values(specimens);
        let mean_of = (specimens.len() > 1)
            .then(|| format!("measured: the mean of {} specimens", specimens.len()));
        match law_values_along(specimens, fitted) {
            Some(v) => Self {
                measured,
                fitted: Some(v),
                note: mean_of,
            },
            None => Self {
                measured,
                fitted: None,
                note: Some("the fitted law gives non-finite forces along the measured path".into()),
            },
        }
    }

    /// (name, measured, fitted, relative gap fitted/measured − 1) for every measured value.
    pub fn rows(&self) -> Vec<(&'static str, f64, Option<f64>, Option<f64>)> {
        self.measured
            .iter()
            .map(|(name, m)| {
                let f = self.fitted.and_then(|v| v.get(name));
                (name, m, f, f.map(|f| f / m - 1.0))
            })
            .collect()
    }
}

/// The KES values measured on the specimens: their mean (one specimen: its own values).
/// The KES values of `fitted` read as the measured ones are: the law driven from a virgin
/// state along each specimen's measured path (its own protocol, whatever it was), its forces
/// read with the same reading rules and metadata, and the specimens' mean. None where the
/// law's forces are not finite.
pub(crate) fn law_values_along(specimens: &[&Curve], fitted: &FittedLaw) -> Option<KesValues> {
    let rules = ReadingRules::default();
    let mut each = Vec::with_capacity(specimens.len());
    for &c in specimens {
        let mut law = c.clone();
        law.y = fitted.forces(&c.x);
        if law.y.iter().any(|v| !v.is_finite()) {
            return None;
        }
        each.push(kes_values(&law, &rules));
    }
    Some(summarise(specimens, each).mean)
}

pub(crate) fn measured_values(specimens: &[&Curve]) -> KesValues {
    let rules = ReadingRules::default();
    let each = specimens.iter().map(|c| kes_values(c, &rules)).collect();
    summarise(specimens, each).mean
}

/// The connector law of structure `kind` for a curve of `test` at physical parameters `p`
/// (without the zero offset); None for generic loops.
pub(crate) fn law_of(kind: LawKind, test: KesTest, p: &P) -> Option<ConnectorLaw> {
    let shape = match kind.shape {
        ShapeKind::Dahl => FrictionShape::Dahl {
            eps_f: p[Param::EpsF],
            alpha: p[Param::Alpha],
        },
        ShapeKind::Bs2 => FrictionShape::Bs2 {
            eps_f: p[Param::EpsF],
            eta: p[Param::Eta],
            ratio: p[Param::Ratio],
        },
    };
    let friction = FrictionLaw {
        level: p[Param::Level],
        mu: p[Param::Mu],
        shape,
    };
    Some(match test {
        KesTest::Tensile => ConnectorLaw::Traction(TractionLaw {
            k_t: p[Param::K],
            eps1: p[Param::Eps1],
            f1: p[Param::F1],
            eps1_aligned: Some(p[Param::Eps1Aligned]),
            friction,
            toe: if kind.elastic == ElasticKind::PowerToeLine {
                ToeShape::Power
            } else {
                ToeShape::Quadratic
            },
        }),
        KesTest::Shear => ConnectorLaw::Shear(ShearLaw {
            k_s: p[Param::K],
            theta0: 0.0,
            friction,
        }),
        KesTest::Bending => ConnectorLaw::Bending(BendingLaw {
            k_b: p[Param::K],
            k0: 0.0,
            friction,
        }),
        KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
            return None
        }
    })
}
