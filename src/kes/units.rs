//! Units named in CSV headers (`name [unit]`) and their factors to SI: lengths \[m\], strain
//! [-], angles \[rad\], curvature [1/m], forces \[N\], force per width [N/m], moment per width \[N\],
//! pressure \[Pa\], friction coefficient [-], areal density [kg/m²].

use super::{
    KesTest, DEG_RAD, GF_CM_PER_CM_N, GF_N, GF_PER_CM2_PA, GF_PER_CM_N_PER_M, MG_PER_CM2_KG_PER_M2,
    OZ_PER_YD2_KG_PER_M2, PER_CM_PER_M,
};

/// The quantity a KES column holds, with the units a KES file may give it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KesQuantity {
    Time,
    Strain,
    /// A tensile test's clamp displacement; strain = elongation / gauge length.
    Elongation,
    Angle,
    /// A shear test's engineering shear strain γ = tan φ; the angle φ = atan γ is the x column.
    ShearStrain,
    Curvature,
    Force,
    Moment,
    /// Compression: the fabric's thickness (the plate's gap).
    Thickness,
    /// Compression: the plate's pressure.
    Pressure,
    /// Surface: the specimen's travel under the contactor.
    Position,
    /// Surface: the coefficient of friction μ.
    Mu,
    /// Surface: the roughness contactor's height.
    Height,
}

/// The units a fabric's weight (areal density) may be given in, each with its factor to kg/m²;
/// the first is the KES unit W is shown in.
pub(crate) const WEIGHT_UNITS: &[(&str, f64)] = &[
    ("mg/cm2", MG_PER_CM2_KG_PER_M2),
    ("g/m2", 1e-3),
    ("kg/m2", 1.0),
    ("oz/yd2", OZ_PER_YD2_KG_PER_M2),
];

/// The weight units' names as a message lists them: `mg/cm2, g/m2, kg/m2 or oz/yd2`.
pub(crate) fn weight_unit_names() -> String {
    let names: Vec<&str> = WEIGHT_UNITS.iter().map(|&(name, _)| name).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// Areal densities a fabric may have [kg/m²]: 1 g/m² to 5 kg/m², wide enough for any woven
/// fabric (a value outside is a unit mistake).
pub const AREAL_DENSITY_RANGE_KG_PER_M2: (f64, f64) = (1e-3, 5.0);

/// Thicknesses a fabric may have \[m\]: 1 µm to 5 cm.
pub const THICKNESS_RANGE_M: (f64, f64) = (1e-6, 0.05);

/// Factor to kg/m² of a weight unit (`g/m2`, `mg/cm²`, …), `None` when unknown.
pub(crate) fn weight_factor(unit: &str) -> Option<f64> {
    let unit = normalise_unit(unit);
    WEIGHT_UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|&(_, f)| f)
}

impl KesQuantity {
    /// The column name in a KES header (lower case, without unit).
    pub(crate) fn column_name(self) -> &'static str {
        match self {
            KesQuantity::Time => "time",
            KesQuantity::Strain => "strain",
            KesQuantity::Elongation => "elongation",
            KesQuantity::Angle => "angle",
            KesQuantity::ShearStrain => "shear strain",
            KesQuantity::Curvature => "curvature",
            KesQuantity::Force => "force",
            KesQuantity::Moment => "moment",
            KesQuantity::Thickness => "thickness",
            KesQuantity::Pressure => "pressure",
            KesQuantity::Position => "position",
            KesQuantity::Mu => "mu",
            KesQuantity::Height => "height",
        }
    }

    /// The units a KES curve file (docs/kes.md) allows for this quantity, each with its factor
    /// to SI; the first one is the KES unit that files are written in.
    pub(crate) fn units(self) -> &'static [(&'static str, f64)] {
        match self {
            KesQuantity::Time => &[("s", 1.0), ("ms", 1e-3), ("min", 60.0)],
            KesQuantity::Strain => &[("%", 0.01), ("-", 1.0)],
            KesQuantity::Elongation => &[("mm", 1e-3), ("cm", 1e-2), ("m", 1.0)],
            KesQuantity::Angle => &[("deg", DEG_RAD), ("rad", 1.0)],
            KesQuantity::ShearStrain => &[("-", 1.0), ("%", 0.01)],
            KesQuantity::Curvature => &[("1/cm", PER_CM_PER_M), ("1/m", 1.0), ("1/mm", 1e3)],
            KesQuantity::Force => &[
                ("gf/cm", GF_PER_CM_N_PER_M),
                ("N/m", 1.0),
                ("cN/cm", 1.0),
                ("N/cm", 100.0),
                ("kgf/m", 1e3 * GF_N),
            ],
            KesQuantity::Moment => &[
                ("gf*cm/cm", GF_CM_PER_CM_N),
                ("N*m/m", 1.0),
                ("cN*cm/cm", 1e-2),
            ],
            KesQuantity::Thickness => &[("mm", 1e-3), ("um", 1e-6), ("cm", 1e-2), ("m", 1.0)],
            KesQuantity::Pressure => &[
                ("gf/cm2", GF_PER_CM2_PA),
                ("Pa", 1.0),
                ("kPa", 1e3),
                ("N/m2", 1.0),
                ("cN/cm2", 100.0),
            ],
            KesQuantity::Position => &[("cm", 1e-2), ("mm", 1e-3), ("m", 1.0)],
            KesQuantity::Mu => &[("-", 1.0)],
            KesQuantity::Height => &[("um", 1e-6), ("mm", 1e-3), ("m", 1.0)],
        }
    }

    /// The largest magnitude a column of this quantity may hold \[SI\], with its SI unit and
    /// its name: about a thousand times what a KES-FB instrument measures (500 gf/cm in
    /// tension, ±8 deg, ±2.5 1/cm, 50 gf/cm²), beyond any fabric, so a value past it is a unit
    /// or file mistake and every value derived from the curve stays finite. None: bounded
    /// elsewhere (strain, elongation: `check_strain`) or not at all (time).
    pub(crate) fn bound(self) -> Option<(f64, &'static str, &'static str)> {
        Some(match self {
            KesQuantity::Time | KesQuantity::Strain | KesQuantity::Elongation => return None,
            KesQuantity::Angle => (std::f64::consts::PI, "rad", "shear angle"),
            // tan 84°: far past the instrument's ±8° (tan 8° = 0.14)
            KesQuantity::ShearStrain => (10.0, "-", "shear strain"),
            KesQuantity::Curvature => (1e5, "1/m", "curvature"),
            KesQuantity::Force => (1e6, "N/m", "force per width"),
            KesQuantity::Moment => (100.0, "N*m/m", "bending moment per width"),
            KesQuantity::Thickness => (1.0, "m", "thickness"),
            KesQuantity::Pressure => (1e8, "Pa", "pressure"),
            KesQuantity::Position => (10.0, "m", "position"),
            KesQuantity::Mu => (100.0, "-", "friction coefficient"),
            KesQuantity::Height => (0.1, "m", "roughness height"),
        })
    }

    /// The KES unit (the one written by kestrel) and its factor to SI.
    pub(crate) fn kes_unit(self) -> (&'static str, f64) {
        self.units()[0]
    }

    /// Factor to SI of `unit` for this quantity, `None` when a KES curve file does not allow it.
    pub(crate) fn factor(self, unit: &str) -> Option<f64> {
        let unit = normalise_unit(unit);
        self.units()
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|&(_, f)| f)
    }

    /// The allowed units as prose: `gf/cm or N/m`.
    pub(crate) fn expected_units(self) -> String {
        let names: Vec<&str> = self.units().iter().map(|(n, _)| *n).collect();
        match names.as_slice() {
            [one] => (*one).to_string(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
            [] => String::new(),
        }
    }

    /// The quantity of a column name (`strain`, `force`, …), case-insensitive.
    pub(crate) fn from_column_name(name: &str) -> Option<Self> {
        let name = name.trim().to_lowercase().replace(['μ', 'µ'], "mu");
        // the names KES exports and lab sheets give the friction coefficient
        let name = match name.as_str() {
            "miu" | "friction coefficient" | "coefficient of friction" => "mu".to_string(),
            _ => name,
        };
        [
            KesQuantity::Time,
            KesQuantity::Strain,
            KesQuantity::Elongation,
            KesQuantity::Angle,
            KesQuantity::ShearStrain,
            KesQuantity::Curvature,
            KesQuantity::Force,
            KesQuantity::Moment,
            KesQuantity::Thickness,
            KesQuantity::Pressure,
            KesQuantity::Position,
            KesQuantity::Mu,
            KesQuantity::Height,
        ]
        .into_iter()
        .find(|q| q.column_name() == name)
    }
}

/// The x and y quantities of a KES test (`None` for a generic loop).
pub(crate) fn test_quantities(test: KesTest) -> Option<(KesQuantity, KesQuantity)> {
    match test {
        KesTest::Tensile => Some((KesQuantity::Strain, KesQuantity::Force)),
        KesTest::Shear => Some((KesQuantity::Angle, KesQuantity::Force)),
        KesTest::Bending => Some((KesQuantity::Curvature, KesQuantity::Moment)),
        KesTest::Compression => Some((KesQuantity::Thickness, KesQuantity::Pressure)),
        KesTest::Friction => Some((KesQuantity::Position, KesQuantity::Mu)),
        KesTest::Roughness => Some((KesQuantity::Position, KesQuantity::Height)),
        KesTest::Loop => None,
    }
}

/// Factors SI → KES unit of a test's x and y (strain in %, deg, 1/cm; gf/cm, gf·cm/cm).
pub(crate) fn kes_scale(test: KesTest) -> Option<(f64, f64)> {
    test_quantities(test).map(|(x, y)| (1.0 / x.kes_unit().1, 1.0 / y.kes_unit().1))
}

/// The KES unit a connector-law parameter is shown in and its factor (KES per SI), from the
/// parameter's SI unit (`material::LawParameter::unit`): force per width in gf/cm, moment
/// per width in gf·cm/cm, rigidities in gf·cm²/cm and gf/(cm·deg), angles in deg,
/// curvatures in 1/cm, and a dimensionless parameter that is a `strain` in %; others as in SI.
pub fn law_parameter_unit(si_unit: &'static str, strain: bool) -> (&'static str, f64) {
    let kes = |q: KesQuantity| {
        let (unit, si_per_kes) = q.kes_unit();
        (unit, 1.0 / si_per_kes)
    };
    match si_unit {
        "N/m" => kes(KesQuantity::Force),
        "N" => kes(KesQuantity::Moment),
        "N*m" => ("gf*cm^2/cm", 1.0 / super::GF_CM2_PER_CM_N_M),
        "N/(m*rad)" => ("gf/(cm*deg)", DEG_RAD / GF_PER_CM_N_PER_M),
        "rad" => kes(KesQuantity::Angle),
        "1/m" => kes(KesQuantity::Curvature),
        "-" if strain => kes(KesQuantity::Strain),
        other => (other, 1.0),
    }
}

/// Units a generic loop column may be given in: name, factor to SI, the SI unit.
pub(crate) const LOOP_UNITS: &[(&str, f64, &str)] = &[
    // length
    ("m", 1.0, "m"),
    ("cm", 1e-2, "m"),
    ("mm", 1e-3, "m"),
    ("um", 1e-6, "m"),
    ("nm", 1e-9, "m"),
    // strain
    ("-", 1.0, "-"),
    ("%", 1e-2, "-"),
    // angle
    ("rad", 1.0, "rad"),
    ("deg", DEG_RAD, "rad"),
    // curvature
    ("1/m", 1.0, "1/m"),
    ("1/cm", PER_CM_PER_M, "1/m"),
    ("1/mm", 1e3, "1/m"),
    // force
    ("N", 1.0, "N"),
    ("kN", 1e3, "N"),
    ("mN", 1e-3, "N"),
    ("uN", 1e-6, "N"),
    ("gf", GF_N, "N"),
    ("kgf", 1e3 * GF_N, "N"),
    // force per width
    ("N/m", 1.0, "N/m"),
    ("N/mm", 1e3, "N/m"),
    ("gf/cm", GF_PER_CM_N_PER_M, "N/m"),
    // moment per width and moment
    ("N*m/m", 1.0, "N*m/m"),
    ("gf*cm/cm", GF_CM_PER_CM_N, "N*m/m"),
    ("N*m", 1.0, "N*m"),
    ("N*mm", 1e-3, "N*m"),
    // time
    ("s", 1.0, "s"),
    ("ms", 1e-3, "s"),
];

/// The largest magnitude a generic loop column may hold in its SI unit, and what it is: as
/// for KES columns (`KesQuantity::bound`), far beyond any fabric, so derived values stay
/// finite.
pub(crate) fn loop_bound(si_unit: &str) -> (f64, &'static str) {
    match si_unit {
        "m" => (10.0, "length"),
        "-" => (10.0, "strain"),
        "rad" => (100.0, "angle"),
        "1/m" => (1e5, "curvature"),
        "N" => (1e6, "force"),
        "N/m" => (1e6, "force per width"),
        "N*m/m" => (100.0, "moment per width"),
        "N*m" => (1e4, "moment"),
        _ => (1e9, "time"),
    }
}

/// Factor to SI and the SI unit of a generic loop unit, `None` when unknown.
pub(crate) fn loop_unit(unit: &str) -> Option<(f64, &'static str)> {
    let unit = normalise_unit(unit);
    LOOP_UNITS
        .iter()
        .find(|(name, _, _)| *name == unit)
        .map(|&(_, f, si)| (f, si))
}

/// The generic loop units as prose, for error messages.
pub(crate) fn loop_units_list() -> String {
    let names: Vec<&str> = LOOP_UNITS.iter().map(|(n, _, _)| *n).collect();
    names.join(", ")
}

/// Units whose case may be changed without changing their meaning (`GF/CM`, `DEG`): the
/// only ones folded to lower case. `mN`/`MN`, `mm`/`Mm`, `Pa`/`PA`… are not.
const CASE_FOLDED: &[&str] = &[
    "gf/cm", "gf*cm/cm", "gf/cm2", "1/cm", "deg", "deg.", "rad", "percent", "micron", "microns",
    "degree", "degrees", "gsm", "kpa",
];

/// Spelling variants to one form: `µ`/`μ` → `u`, `·`/`×`/`.` or spaces between two names →
/// `*`, `^-1` → `1/`, other spaces dropped, `percent` → `%`, `micron` → `um`, `gsm` →
/// `g/m2`, `deg.` → `deg`, `kpa`/`KPA` → `kPa` (no other pascal is spelt so), and the units
/// of `CASE_FOLDED` in any case.
fn normalise_unit(unit: &str) -> String {
    // a run of spaces is one separator (`gf  cm/cm`)
    let unit = unit.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = unit.chars().collect();
    let name = |c: Option<&char>| c.is_some_and(|c| c.is_alphabetic());
    let u: String = chars
        .iter()
        .enumerate()
        .filter_map(|(i, &c)| match c {
            'µ' | 'μ' => Some('u'),
            '·' | '×' | '⋅' => Some('*'),
            '²' => Some('2'),
            // `gf.cm`, `gf cm`, `gf-cm`: a product of two names
            '.' | ' ' | '-' if name(chars.get(i.wrapping_sub(1))) && name(chars.get(i + 1)) => {
                Some('*')
            }
            c if c.is_whitespace() => None,
            c => Some(c),
        })
        .collect::<String>()
        .replace("^2", "2");
    let lower = u.to_lowercase();
    let u = if CASE_FOLDED.contains(&lower.as_str()) {
        lower
    } else {
        u
    };
    match u.as_str() {
        "cm^-1" | "cm-1" | "cm⁻¹" => "1/cm".into(),
        "m^-1" | "m-1" | "m⁻¹" => "1/m".into(),
        "mm^-1" | "mm-1" | "mm⁻¹" => "1/mm".into(),
        "°" | "degree" | "degrees" | "deg." => "deg".into(),
        "kpa" => "kPa".into(),
        "percent" => "%".into(),
        "micron" | "microns" => "um".into(),
        "gsm" => "g/m2".into(),
        _ => u,
    }
}

/// Factor to m of a thickness unit (`mm`, `um`, `cm`, `m`), `None` when unknown.
pub(crate) fn thickness_factor(unit: &str) -> Option<f64> {
    KesQuantity::Thickness.factor(unit)
}

/// Splits a header cell `name [unit]` into its name and unit (`None` without brackets).
pub(crate) fn split_header(cell: &str) -> (String, Option<String>) {
    let cell = cell.trim();
    match (cell.rfind('['), cell.ends_with(']')) {
        (Some(open), true) => (
            cell[..open].trim().to_string(),
            Some(cell[open + 1..cell.len() - 1].trim().to_string()),
        ),
        _ => (cell.to_string(), None),
    }
}

/// A number with about `digits` significant digits, without trailing noise (for people:
/// plots, the workbench).
pub fn significant(v: f64, digits: i32) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{:.*e}", (digits - 1).max(0) as usize, v);
    }
    let decimals = (digits - 1 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

/// `v` to four significant digits without trailing zeros: `1.02e6`, `180`, `3.142`.
pub(crate) fn four_digits(v: f64) -> String {
    trimmed(v, 4)
}

/// `v` to `digits` significant digits without trailing zeros (`200` for 200.00000000000003).
pub(crate) fn trimmed(v: f64, digits: i32) -> String {
    let s = significant(v, digits);
    let (mantissa, exponent) = s
        .split_once('e')
        .map_or((s.as_str(), None), |(m, e)| (m, Some(e)));
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    match exponent {
        Some(e) => format!("{mantissa}e{e}"),
        None => mantissa.to_string(),
    }
}

/// A unit as typeset for people: `gf*cm^2/cm` → `gf·cm²/cm`, `-` (dimensionless) → empty.
pub(crate) fn typeset_unit(ascii: &str) -> String {
    if ascii == "-" {
        return String::new();
    }
    if ascii == "um" {
        return "µm".into();
    }
    ascii
        .replace('*', "·")
        .replace("^2", "²")
        .replace("^3", "³")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits() {
        assert_eq!(significant(12.345, 3), "12.3");
        assert_eq!(significant(0.012345, 3), "0.0123");
        assert_eq!(significant(1234.7, 3), "1235");
        assert_eq!(significant(0.0, 3), "0");
        assert_eq!(significant(1.5e-7, 2), "1.5e-7");
        assert_eq!(significant(54.1, 3), "54.1");
        assert_eq!(significant(0.712, 3), "0.712");
    }

    #[test]
    fn units_are_typeset() {
        assert_eq!(typeset_unit("gf*cm^2/cm"), "gf·cm²/cm");
        assert_eq!(typeset_unit("gf*cm/cm^2"), "gf·cm/cm²");
        assert_eq!(typeset_unit("gf/(cm*deg)"), "gf/(cm·deg)");
        assert_eq!(typeset_unit("-"), "");
    }

    #[test]
    fn headers_split_and_units_normalise() {
        assert_eq!(
            split_header(" force [gf/cm] "),
            ("force".into(), Some("gf/cm".into()))
        );
        assert_eq!(split_header("force"), ("force".into(), None));
        assert_eq!(KesQuantity::Moment.factor("gf·cm/cm"), Some(GF_CM_PER_CM_N));
        assert_eq!(loop_unit("µN"), Some((1e-6, "N")));
        assert_eq!(
            KesQuantity::Force.expected_units(),
            "gf/cm, N/m, cN/cm, N/cm or kgf/m"
        );
        assert_eq!(KesQuantity::Force.factor("kgf"), None);
        assert_eq!(KesQuantity::Pressure.factor("gf/cm²"), Some(GF_PER_CM2_PA));
        assert_eq!(KesQuantity::Pressure.factor("gf/cm^2"), Some(GF_PER_CM2_PA));
        assert_eq!(KesQuantity::Height.factor("µm"), Some(1e-6));
        assert_eq!(KesQuantity::from_column_name("μ"), Some(KesQuantity::Mu));
        assert_eq!(weight_factor("g/m²"), Some(1e-3));
        assert_eq!(weight_factor("mg/cm2"), Some(1e-2));
    }

    #[test]
    fn valid_spellings_are_read_and_case_folds_only_where_it_keeps_the_meaning() {
        let force = |u| KesQuantity::Force.factor(u);
        assert_eq!(force("GF/CM"), Some(GF_PER_CM_N_PER_M));
        assert_eq!(force("cN/cm"), Some(1.0));
        assert_eq!(force("N/cm"), Some(100.0));
        assert_eq!(force("kgf/m"), Some(1e3 * GF_N));
        assert_eq!(force("CN/CM"), None);
        assert_eq!(KesQuantity::Angle.factor("DEG"), Some(DEG_RAD));
        assert_eq!(KesQuantity::Curvature.factor("1/CM"), Some(PER_CM_PER_M));
        assert_eq!(KesQuantity::Curvature.factor("1/mm"), Some(1e3));
        assert_eq!(KesQuantity::Curvature.factor("mm^-1"), Some(1e3));
        assert_eq!(KesQuantity::Strain.factor("percent"), Some(0.01));
        let moment = |u| KesQuantity::Moment.factor(u);
        for u in ["gf.cm/cm", "gf cm/cm", "GF*CM/CM", "gf·cm/cm", "gf-cm/cm"] {
            assert_eq!(moment(u), Some(GF_CM_PER_CM_N), "{u}");
        }
        for u in ["cN*cm/cm", "cN·cm/cm", "cN.cm/cm", "cN cm/cm"] {
            assert_eq!(moment(u), Some(1e-2), "{u}");
        }
        assert_eq!(KesQuantity::Pressure.factor("cN/cm2"), Some(100.0));
        assert_eq!(KesQuantity::Pressure.factor("cN/cm²"), Some(100.0));
        for u in ["micron", "microns", "µm", "μm", "Micron"] {
            assert_eq!(KesQuantity::Height.factor(u), Some(1e-6), "{u}");
            assert_eq!(KesQuantity::Thickness.factor(u), Some(1e-6), "{u}");
        }
        assert_eq!(weight_factor("gsm"), Some(1e-3));
        assert_eq!(KesQuantity::Time.factor("ms"), Some(1e-3));
        assert_eq!(KesQuantity::Time.factor("min"), Some(60.0));
        // a hyphen before a digit is an exponent, not a product
        assert_eq!(KesQuantity::Curvature.factor("cm-1"), Some(PER_CM_PER_M));
        // case that changes the meaning is never folded: MN is a meganewton, Mm a megametre
        assert_eq!(loop_unit("MN"), None);
        assert_eq!(KesQuantity::Thickness.factor("MM"), None);
        assert_eq!(KesQuantity::Pressure.factor("PA"), None);
    }

    /// The friction coefficient's other names (KES exports write MIU) are its column.
    #[test]
    fn the_friction_coefficient_goes_by_its_other_names() {
        for name in [
            "mu",
            "μ",
            "MIU",
            "Friction coefficient",
            "coefficient of friction",
        ] {
            assert_eq!(
                KesQuantity::from_column_name(name),
                Some(KesQuantity::Mu),
                "{name}"
            );
        }
        assert_eq!(KesQuantity::from_column_name("miux"), None);
    }
}
