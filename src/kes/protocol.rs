//! The KES instruments' paths run on a material law (SI): tensile 0 → ε_m where F = F_m → back
//! to F = 0; shear 0 → +8° → −8° → 0 under 10 gf/cm; bending 0 → +2.5 → −2.5 → 0 cm⁻¹.

use std::collections::BTreeMap;

use thiserror::Error;

use super::values::KES_TENSILE_MAX_FORCE;
use super::write::number;
use super::{Curve, Direction, KesTest, DEG_RAD, GF_PER_CM_N_PER_M, PER_CM_PER_M};
use crate::friction::ParamError;
use crate::material::{ConnectorLaw, LawState, MaterialLaw};
use crate::params::FittedLaw;

/// The fewest samples a protocol curve may have.
pub(crate) const MIN_PROTOCOL_SAMPLES: usize = 8;

/// The most samples a protocol curve may have: the rows a curve file may hold, so that what
/// `kestrel simulate` writes is read back.
pub(crate) const MAX_PROTOCOL_SAMPLES: usize = crate::kes::import::MAX_ROWS;

/// Samples written when the caller does not choose.
pub const DEFAULT_SAMPLES: usize = 1001;

/// Bisection steps for a turning strain (each halves the bracket).
const BISECTION_STEPS: usize = 200;

#[derive(Debug, Error)]
pub enum ProtocolError {
    #[error("{samples} samples are too few for the {test} protocol — expected at least {needed}")]
    TooFewSamples {
        test: KesTest,
        samples: usize,
        needed: usize,
    },
    #[error(
        "{samples} samples are too many — expected at most {MAX_PROTOCOL_SAMPLES} (the rows a \
         curve file may hold)"
    )]
    TooManySamples { samples: usize },
    #[error("a {law} law cannot run the {test} protocol — expected a {expected} law")]
    WrongLaw {
        law: &'static str,
        test: KesTest,
        expected: &'static str,
    },
    #[error("a {0} curve has no KES protocol")]
    NoProtocol(KesTest),
    #[error(
        "the law never reaches F_m = {max_force_gf_cm} gf/cm: {force_gf_cm:.6} gf/cm at \
         strain {strain_percent} %"
    )]
    NeverReaches {
        max_force_gf_cm: f64,
        force_gf_cm: f64,
        strain_percent: f64,
    },
    #[error(
        "the force does not return to zero on unloading: still {force_gf_cm:.6} gf/cm at \
         strain {strain_percent} %"
    )]
    NoReturn {
        force_gf_cm: f64,
        strain_percent: f64,
    },
    #[error("the law gives a non-finite force at x = {x} (SI)")]
    NotFinite { x: f64 },
    #[error("invalid law: {0}")]
    Law(#[from] ParamError),
}

/// A KES instrument's path, in SI units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Protocol {
    /// Extend until the force per width reaches `max_force` [N/m], then return until it is
    /// back to zero.
    Tensile { max_force: f64 },
    /// 0 → +amplitude → −amplitude → 0 \[rad\], under a constant `tension` [N/m].
    Shear { amplitude: f64, tension: f64 },
    /// 0 → +amplitude → −amplitude → 0 [1/m].
    Bending { amplitude: f64 },
}

/// The instrument's shear amplitude \[deg\] and bending amplitude [1/cm].
pub const KES_SHEAR_AMPLITUDE_DEG: f64 = 8.0;
pub const KES_BENDING_AMPLITUDE_PER_CM: f64 = 2.5;

impl Protocol {
    /// The instrument's settings for `test` (500 gf/cm; ±8° under 10 gf/cm; ±2.5 cm⁻¹).
    pub fn kes(test: KesTest) -> Result<Self, ProtocolError> {
        match test {
            KesTest::Tensile => Ok(Protocol::Tensile {
                max_force: KES_TENSILE_MAX_FORCE * GF_PER_CM_N_PER_M,
            }),
            KesTest::Shear => Ok(Protocol::Shear {
                amplitude: KES_SHEAR_AMPLITUDE_DEG * DEG_RAD,
                tension: 10.0 * GF_PER_CM_N_PER_M,
            }),
            KesTest::Bending => Ok(Protocol::Bending {
                amplitude: KES_BENDING_AMPLITUDE_PER_CM * PER_CM_PER_M,
            }),
            KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
                Err(ProtocolError::NoProtocol(test))
            }
        }
    }

    pub(crate) fn test(&self) -> KesTest {
        match self {
            Protocol::Tensile { .. } => KesTest::Tensile,
            Protocol::Shear { .. } => KesTest::Shear,
            Protocol::Bending { .. } => KesTest::Bending,
        }
    }

    /// Drives a virgin sample of `law` along the protocol with `samples` samples in all:
    /// (x, force) in SI, the turning points hit exactly.
    pub(crate) fn run<L: MaterialLaw>(
        &self,
        law: &L,
        samples: usize,
    ) -> Result<(Vec<f64>, Vec<f64>), ProtocolError> {
        if samples < MIN_PROTOCOL_SAMPLES {
            return Err(ProtocolError::TooFewSamples {
                test: self.test(),
                samples,
                needed: MIN_PROTOCOL_SAMPLES,
            });
        }
        if samples > MAX_PROTOCOL_SAMPLES {
            return Err(ProtocolError::TooManySamples { samples });
        }
        let path = match *self {
            Protocol::Tensile { max_force } => return tensile(law, max_force, samples),
            Protocol::Shear { amplitude, .. } | Protocol::Bending { amplitude } => {
                cycle_path(amplitude, samples)
            }
        };
        let forces = drive_checked(law, &path)?;
        Ok((path, forces))
    }
}

/// Drives a virgin law along `path`, refusing non-finite forces.
fn drive_checked<L: MaterialLaw>(law: &L, path: &[f64]) -> Result<Vec<f64>, ProtocolError> {
    let forces = law.drive(path);
    match path.iter().zip(&forces).find(|(_, f)| !f.is_finite()) {
        Some((&x, _)) => Err(ProtocolError::NotFinite { x }),
        None => Ok(forces),
    }
}

/// 0 → +a → −a → 0 with `samples` samples spread evenly over the path length 4a, the
/// vertices included exactly.
fn cycle_path(a: f64, samples: usize) -> Vec<f64> {
    let steps = samples - 1;
    let n1 = (steps / 4).max(1);
    let n2 = (steps / 2).max(1);
    let n3 = steps - n1 - n2;
    let mut path = Vec::with_capacity(samples);
    path.push(0.0);
    for (from, to, n) in [(0.0, a, n1), (a, -a, n2), (-a, 0.0, n3)] {
        for i in 1..=n {
            path.push(if i == n {
                to
            } else {
                from + (to - from) * i as f64 / n as f64
            });
        }
    }
    path
}

/// The strain in (lo, hi] where `g` changes sign, by bisection; `g(lo)` and `g(hi)` must
/// differ in sign (`g(hi) > 0` is kept).
fn bisect(mut lo: f64, mut hi: f64, g: impl Fn(f64) -> f64) -> f64 {
    for _ in 0..BISECTION_STEPS {
        let mid = 0.5 * (lo + hi);
        if mid == lo || mid == hi {
            break;
        }
        if g(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

fn tensile<L: MaterialLaw>(
    law: &L,
    max_force: f64,
    samples: usize,
) -> Result<(Vec<f64>, Vec<f64>), ProtocolError> {
    let virgin = LawState::default();
    // The loading is monotone, so one exact step from the virgin state gives the force at ε.
    let loading = |e: f64| law.trial(&virgin, e).1;
    let never = |e: f64, f: f64| ProtocolError::NeverReaches {
        max_force_gf_cm: max_force / GF_PER_CM_N_PER_M,
        force_gf_cm: f / GF_PER_CM_N_PER_M,
        strain_percent: 100.0 * e,
    };
    let mut hi = 1e-3;
    loop {
        let f = loading(hi);
        if !f.is_finite() {
            return Err(ProtocolError::NotFinite { x: hi });
        }
        if f >= max_force {
            break;
        }
        if hi >= 100.0 {
            return Err(never(hi, f));
        }
        hi *= 2.0;
    }
    let eps_m = bisect(0.0, hi, |e| loading(e) - max_force);

    // Unloading from the state at ε_m down to the strain where the force is back to zero.
    let state = law.trial(&virgin, eps_m).0;
    let unloading = |e: f64| law.trial(&state, e).1;
    let mut drop = eps_m;
    let eps_0 = loop {
        let lo = eps_m - drop;
        let f = unloading(lo);
        if !f.is_finite() {
            return Err(ProtocolError::NotFinite { x: lo });
        }
        if f <= 0.0 {
            break bisect(lo, eps_m, unloading);
        }
        if drop > 1e3 * eps_m {
            return Err(ProtocolError::NoReturn {
                force_gf_cm: f / GF_PER_CM_N_PER_M,
                strain_percent: 100.0 * lo,
            });
        }
        drop *= 2.0;
    };

    // Samples shared between loading and unloading in proportion to their lengths.
    let (up, down) = (eps_m, eps_m - eps_0);
    let n_load = ((samples as f64 * up / (up + down)).round() as usize).clamp(2, samples - 2);
    let n_unload = samples - n_load;
    let mut path = Vec::with_capacity(samples);
    for i in 0..n_load {
        path.push(if i + 1 == n_load {
            eps_m
        } else {
            eps_m * i as f64 / (n_load - 1) as f64
        });
    }
    for j in 1..=n_unload {
        path.push(if j == n_unload {
            eps_0
        } else {
            eps_m - down * j as f64 / n_unload as f64
        });
    }
    let forces = drive_checked(law, &path)?;
    Ok((path, forces))
}

impl ConnectorLaw {
    /// The law's name (`traction`, `shear`, `bending`) and the test that measures it.
    pub(crate) fn kes_test(&self) -> (&'static str, KesTest) {
        match self {
            ConnectorLaw::Traction(_) => ("traction", KesTest::Tensile),
            ConnectorLaw::Shear(_) => ("shear", KesTest::Shear),
            ConnectorLaw::Bending(_) => ("bending", KesTest::Bending),
        }
    }
}

/// The curve `protocol` gives on `law` (traction for tensile, shear for shear, bending for
/// bending), with `samples` samples, as a `Curve` whose metadata records the simulation.
pub fn simulate(
    law: &ConnectorLaw,
    protocol: &Protocol,
    samples: usize,
    fabric: &str,
    direction: Direction,
) -> Result<Curve, ProtocolError> {
    let (name, test) = law.kes_test();
    if test != protocol.test() {
        let expected = match protocol.test() {
            KesTest::Tensile => "traction",
            KesTest::Shear => "shear",
            KesTest::Bending => "bending",
            KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
                "generic"
            }
        };
        return Err(ProtocolError::WrongLaw {
            law: name,
            test: protocol.test(),
            expected,
        });
    }
    law.validate()?;
    let (x, y) = protocol.run(law, samples)?;
    let mut metadata = BTreeMap::new();
    metadata.insert(
        "source".to_string(),
        format!("simulated by kestrel {}", env!("CARGO_PKG_VERSION")),
    );
    if let Ok(json) = serde_json::to_string(law) {
        metadata.insert("law".to_string(), json);
    }
    match *protocol {
        Protocol::Tensile { max_force } => {
            metadata.insert(
                "max force [gf/cm]".into(),
                number(max_force / GF_PER_CM_N_PER_M),
            );
        }
        Protocol::Shear { amplitude, tension } => {
            metadata.insert(
                "tension [gf/cm]".into(),
                number(tension / GF_PER_CM_N_PER_M),
            );
            metadata.insert("amplitude [deg]".into(), number(amplitude / DEG_RAD));
        }
        Protocol::Bending { amplitude } => {
            metadata.insert("amplitude [1/cm]".into(), number(amplitude / PER_CM_PER_M));
        }
    }
    Ok(Curve {
        fabric: fabric.to_string(),
        test,
        direction,
        x,
        y,
        metadata,
        source: None,
        sha256: None,
    })
}

/// [`simulate`] on a fitted law: the protocol is run on the law, and the instrument's force
/// zero offset the law was fitted with is added to every recorded force (the curve the
/// instrument would have recorded; `offset = 0` gives the law's own curve).
pub fn simulate_fitted(
    fitted: &FittedLaw,
    protocol: &Protocol,
    samples: usize,
    fabric: &str,
    direction: Direction,
) -> Result<Curve, ProtocolError> {
    let mut curve = simulate(&fitted.law, protocol, samples, fabric, direction)?;
    if fitted.offset != 0.0 {
        curve.y.iter_mut().for_each(|f| *f += fitted.offset);
        curve
            .metadata
            .insert("force zero offset (SI)".into(), number(fitted.offset));
    }
    Ok(curve)
}

/// The KES values of a fitted law: the law (with its offset) driven through the instrument's
/// protocol for `test` ([`Protocol::kes`], [`DEFAULT_SAMPLES`] samples), read by the default
/// reading rules — the numbers to set beside a measured curve's values.
pub fn fitted_values(
    fitted: &FittedLaw,
    test: KesTest,
) -> Result<super::values::KesValues, ProtocolError> {
    let protocol = Protocol::kes(test)?;
    let curve = simulate_fitted(fitted, &protocol, DEFAULT_SAMPLES, "", Direction::Warp)?;
    Ok(super::values::kes_values(&curve, &Default::default()).values)
}

/// A law file that cannot give the law a protocol needs.
#[derive(Debug, Error)]
pub enum LawFileError {
    #[error("cannot read {0}")]
    Read(#[from] crate::input::Unreadable),
    #[error(transparent)]
    Params(#[from] crate::params::ParamsError),
    #[error("{file}: not a {law} law: {message} — expected a fabric parameter file or a {law} law table")]
    Parse {
        file: String,
        law: &'static str,
        message: String,
    },
    #[error("{file}: fabric `{fabric}` has no {law} law for {direction}")]
    Missing {
        file: String,
        fabric: String,
        law: &'static str,
        direction: Direction,
    },
    #[error("{file}: {law}: {source}")]
    Invalid {
        file: String,
        law: &'static str,
        #[source]
        source: ParamError,
    },
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
}

/// The law `test` measures in `direction`, from a fabric parameter file (TOML, or JSON for
/// `.json`) or from a file holding that law alone (its table, under a `[traction]`-like
/// table, or tagged `law = "traction"`). Also the fabric name when the file gives one.
pub fn read_law(
    path: &std::path::Path,
    test: KesTest,
    direction: Direction,
) -> Result<(ConnectorLaw, Option<String>), LawFileError> {
    read_fitted_law(path, test, direction).map(|(f, fabric)| (f.law, fabric))
}

/// [`read_law`] with the force zero offset the law was fitted with (0 for a law alone).
pub fn read_fitted_law(
    path: &std::path::Path,
    test: KesTest,
    direction: Direction,
) -> Result<(FittedLaw, Option<String>), LawFileError> {
    use crate::material::{BendingLaw, ShearLaw, TractionLaw};
    use crate::params::{FabricParams, ParamsFormat};

    let file = path.display().to_string();
    let law_name = match test {
        KesTest::Tensile => "traction",
        KesTest::Shear => "shear",
        KesTest::Bending => "bending",
        KesTest::Loop | KesTest::Compression | KesTest::Friction | KesTest::Roughness => {
            return Err(ProtocolError::NoProtocol(test).into())
        }
    };
    let text = crate::input::file_text(path, crate::input::SMALL_FILE_LIMIT)?;
    let format = ParamsFormat::from_path(path);
    let parse_error = |message: String| LawFileError::Parse {
        file: file.clone(),
        law: law_name,
        message,
    };
    let value: serde_json::Value = match format {
        ParamsFormat::Toml => {
            toml::from_str(&text).map_err(|e| parse_error(crate::input::clipped(&e.to_string())))?
        }
        ParamsFormat::Json => serde_json::from_str(&text)
            .map_err(|e| parse_error(crate::input::clipped(&e.to_string())))?,
    };
    if value.get("kestrel_params").is_some() {
        let params = FabricParams::parse(&text, format, path)?;
        return params
            .fitted_law(test, direction)
            .map(|l| (l, Some(params.fabric.clone())))
            .ok_or_else(|| LawFileError::Missing {
                file: file.clone(),
                fabric: params.fabric.clone(),
                law: law_name,
                direction,
            });
    }
    let law = if value.get("law").is_some() {
        serde_json::from_value::<ConnectorLaw>(value).map_err(|e| parse_error(e.to_string()))?
    } else {
        let table = value.get(law_name).cloned().unwrap_or(value);
        let parsed = match test {
            KesTest::Tensile => {
                serde_json::from_value::<TractionLaw>(table).map(ConnectorLaw::Traction)
            }
            KesTest::Shear => serde_json::from_value::<ShearLaw>(table).map(ConnectorLaw::Shear),
            _ => serde_json::from_value::<BendingLaw>(table).map(ConnectorLaw::Bending),
        };
        parsed.map_err(|e| parse_error(e.to_string()))?
    };
    // a law alone is held to the ranges of a card's laws
    law.validate()
        .and_then(|()| crate::params::law_within_physics(&law))
        .map_err(|source| LawFileError::Invalid {
            file: file.clone(),
            law: law_name,
            source,
        })?;
    Ok((FittedLaw { law, offset: 0.0 }, None))
}
