//! What can be wrong with a curve file, each error with its file, line and column and what
//! was expected (units named).

use thiserror::Error;

use crate::kes::{Direction, KesTest};

/// Everything that can be wrong with a curve file, with where and what was expected.
#[derive(Debug, Error)]
pub enum KesError {
    #[error("cannot read {0}")]
    Read(#[from] crate::input::Unreadable),
    #[error("{file}:{line}: not UTF-8 text — expected a UTF-8 (or ASCII) CSV file")]
    NotUtf8 { file: String, line: usize },
    #[error(
        "{file}: empty file — expected `# key: value` metadata, a header such as \
         `strain [%],force [gf/cm]` and rows of numbers"
    )]
    Empty { file: String },
    #[error(
        "{file}:{line}: no header: `{text}` — expected column names with units, e.g. `{expected}`"
    )]
    NoHeader {
        file: String,
        line: usize,
        text: String,
        expected: String,
    },
    #[error(
        "{file}:{line}:{column}: unknown unit `{unit}` in column {column} header `{text}` — \
         expected {expected}"
    )]
    UnknownUnit {
        file: String,
        line: usize,
        column: usize,
        unit: String,
        text: String,
        expected: String,
    },
    #[error(
        "{file}:{line}:{column}: missing unit in column {column} header `{text}` — expected \
         `{name} [unit]` with unit {expected}"
    )]
    MissingUnit {
        file: String,
        line: usize,
        column: usize,
        text: String,
        name: String,
        expected: String,
    },
    #[error(
        "{file}:{line}:{column}: unknown column `{text}` for a {test} curve — expected {expected}"
    )]
    UnknownColumn {
        file: String,
        line: usize,
        column: usize,
        text: String,
        test: KesTest,
        expected: String,
    },
    #[error("{file}:{line}:{column}: column `{text}` appears twice — expected one {name} column")]
    DuplicateColumn {
        file: String,
        line: usize,
        column: usize,
        text: String,
        name: String,
    },
    #[error("{file}:{line}: no `{name}` column for a {test} curve — the header has {found}")]
    MissingColumn {
        file: String,
        line: usize,
        name: String,
        test: KesTest,
        found: String,
    },
    #[error("{file}:{line}: no {column} — the header has {found}")]
    NoSuchColumn {
        file: String,
        line: usize,
        column: String,
        found: String,
    },
    #[error(
        "{file}:{line}: unknown test `{text}` — expected tensile, shear, bending, compression, \
         friction or roughness"
    )]
    UnknownTest {
        file: String,
        line: usize,
        text: String,
    },
    #[error(
        "{file}:{line}: unknown direction `{text}` — expected warp, weft or bias (normal for \
         compression)"
    )]
    UnknownDirection {
        file: String,
        line: usize,
        text: String,
    },
    #[error("{file}:{line}: direction `{direction}` for a {test} curve — {expected}")]
    WrongDirection {
        file: String,
        line: usize,
        direction: Direction,
        test: KesTest,
        expected: &'static str,
    },
    #[error(
        "{file}:{line}: weight `{text}` — expected an areal density of 1 g/m2 to 5 kg/m2 with \
         its unit, e.g. `# weight [g/m2]: 320` or `# weight [mg/cm2]: 32` ({units})",
        units = crate::kes::units::weight_unit_names()
    )]
    BadWeight {
        file: String,
        line: usize,
        text: String,
    },
    #[error("{}", missing_metadata(file, key, expected, true))]
    MissingMetadata {
        file: String,
        key: &'static str,
        expected: &'static str,
    },
    #[error(
        "{file}:{line}: `{key}` is `{value}` here but `{first}` at line {first_line} — a \
         metadata line says its key once (or the same value again)"
    )]
    MetadataTwice {
        file: String,
        line: usize,
        key: String,
        value: String,
        first: String,
        first_line: usize,
    },
    #[error(
        "{file}:{line}: `{said}` disagrees with `{first}` at line {first_line} — a metadata \
         line says its key once (or the same value again, in any unit)"
    )]
    MetadataUnits {
        file: String,
        line: usize,
        /// `key: value` as said here and at `first_line`.
        said: String,
        first: String,
        first_line: usize,
    },
    #[error(
        "{file}:{line}: metadata `{text}` after the header — metadata lines come before the \
         header line"
    )]
    MetadataAfterHeader {
        file: String,
        line: usize,
        text: String,
    },
    #[error("{file}:{line}: `# kestrel-kes: {text}` — this kestrel reads version 1 of the format")]
    FormatVersion {
        file: String,
        line: usize,
        text: String,
    },
    #[error(
        "{file}:{line}: metadata `{text}` holds a control character — expected printable text"
    )]
    ControlCharacter {
        file: String,
        line: usize,
        text: String,
    },
    #[error(
        "{file}: lines end in a carriage return alone (classic Mac OS text) — save the file \
         with LF or CRLF line ends"
    )]
    CrLineEnds { file: String },
    #[error(
        "{file}:{line}:{column}: `{text}` in column {column} (`{header}`) overflows in SI units \
         ({si}) — expected a number the unit keeps finite",
        si = crate::friction::short_number(*.si)
    )]
    OverflowsInSi {
        file: String,
        line: usize,
        column: usize,
        text: String,
        header: String,
        si: f64,
    },
    #[error(
        "{file}:{line}:{column}: `{text}` in column {column} (`{header}`) is beyond any \
         {bound} in magnitude — check the column's unit"
    )]
    BeyondInstrument {
        file: String,
        line: usize,
        column: usize,
        text: String,
        header: String,
        /// What the column holds and its bound in the column's unit and in SI (`force per
        /// width a fabric test gives: expected at most 1.02e6 gf/cm = 1e6 N/m`).
        bound: String,
    },
    #[error(
        "{file}:{line}:{column}: `{text}` in column {column} (`{header}`) — a thickness is \
         positive"
    )]
    NotPositive {
        file: String,
        line: usize,
        column: usize,
        text: String,
        header: String,
    },
    #[error(
        "{file}:{line}:{column}: time goes back to {now} s after {before} s — the rows must be \
         in measurement order (time never decreases)",
        now = crate::friction::short_number(*.now),
        before = crate::friction::short_number(*.before)
    )]
    TimeBack {
        file: String,
        line: usize,
        column: usize,
        now: f64,
        before: f64,
    },
    #[error("{file}:{line}: the file says {key} `{in_file}` but `{given}` was asked for")]
    Conflict {
        file: String,
        line: usize,
        key: &'static str,
        in_file: String,
        given: String,
    },
    #[error(
        "{file}:{line}:{column}: not a number: `{text}` in column {column} (`{header}`) — \
         expected a decimal number such as 0.125 or 0,125 (no thousands separator)"
    )]
    NotNumeric {
        file: String,
        line: usize,
        column: usize,
        text: String,
        header: String,
    },
    #[error(
        "{file}:{line}:{column}: `{text}` in column {column} (`{header}`) is not finite — \
         expected a finite number"
    )]
    NotFinite {
        file: String,
        line: usize,
        column: usize,
        text: String,
        header: String,
    },
    #[error(
        "{file}:{line}: ragged row: {found} fields `{text}` — expected {expected}, as the \
         header{hint}"
    )]
    Ragged {
        file: String,
        line: usize,
        found: usize,
        expected: usize,
        text: String,
        /// How to fix a likely cause (a decimal comma between comma-separated columns).
        hint: String,
    },
    #[error(
        "{file}:{line}:{column}: ragged row: {found} field(s) `{text}` — it ends before column \
         {column}, `{header}`, which is read"
    )]
    RowTooShort {
        file: String,
        line: usize,
        column: usize,
        found: usize,
        text: String,
        header: String,
    },
    #[error("{file}: too few samples: {found} — expected at least {needed} rows of numbers")]
    TooFewSamples {
        file: String,
        found: usize,
        needed: usize,
    },
    #[error(
        "{file}:{line}: more than {limit} rows, the limit of a curve file — split the record",
        limit = super::MAX_ROWS
    )]
    TooManyRows { file: String, line: usize },
    #[error("{file}:{line}: malformed CSV: {message}")]
    Csv {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}: duplicate curve: the file is given twice (a replicate is another file)")]
    FileGivenTwice { file: String },
    #[error(
        "{file}:{line}:{column}: column `{text}` is an elongation and strain = elongation / \
         gauge length needs the gauge length (the clamp distance) — add a metadata line \
         `# gauge length [mm]: 200` or pass --gauge-length 200 (mm)"
    )]
    NoGaugeLength {
        file: String,
        line: usize,
        column: usize,
        text: String,
    },
    #[error(
        "{file}:{line}: gauge length `{text}` — expected a positive length (1 mm to 10 m) with its \
         unit, e.g. `# gauge length [mm]: 200` (mm, cm or m)"
    )]
    BadGaugeLength {
        file: String,
        line: usize,
        text: String,
    },
    #[error(
        "{file}:{line}:{column}: column `{text}` reaches {shown} (a strain of {pc} %), beyond \
         any woven fabric — {fix}",
        shown = crate::friction::short_number(*.max),
        pc = crate::friction::short_number(*.percent)
    )]
    StrainTooLarge {
        file: String,
        line: usize,
        column: usize,
        text: String,
        max: f64,
        percent: f64,
        fix: &'static str,
    },
    #[error(
        "{file}: the rows are not in measurement order: x reverses {turns} times in {samples} \
         samples, where a measured path reverses only at the instrument's turning points — \
         keep the rows in the order they were measured (not sorted or shuffled)"
    )]
    PathOrder {
        file: String,
        turns: usize,
        samples: usize,
    },
    #[error("bad row filter `{text}` — expected `COLUMN > VALUE` or `COLUMN < VALUE`, e.g. `Normal [uN] > 1e6`")]
    BadFilter { text: String },
}

impl KesError {
    /// The message where no command-line option can give what the file lacks (the
    /// workbench): a missing metadata line is to be added to the file. Other errors read
    /// as [`std::fmt::Display`] says.
    pub fn without_options(&self) -> String {
        match self {
            KesError::MissingMetadata {
                file,
                key,
                expected,
            } => missing_metadata(file, key, expected, false),
            other => other.to_string(),
        }
    }
}

/// A file without its `key` metadata line: what is expected, and (`option`) the command-line
/// option that can give it instead.
fn missing_metadata(file: &str, key: &str, expected: &str, option: bool) -> String {
    let line = format!("`# {key}: {expected}`");
    if option {
        format!("{file}: no `{key}` metadata — expected a line {line} or --{key}")
    } else {
        format!("{file}: no `{key}` metadata — add a line {line} to the file, then open it again")
    }
}
