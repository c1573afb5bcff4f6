//! KES curve files (`# key: value` metadata, `name [unit]` header, rows in measurement order)
//! and generic delimited loop records, read into SI curves; every error names file, line, column.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use thiserror::Error;

use super::units::{loop_unit, loop_units_list, split_header, test_quantities, KesQuantity};
use super::{Curve, Direction, KesTest};

/// The fewest samples a curve may have.
pub const MIN_SAMPLES: usize = 3;

/// Everything that can be wrong with a curve file, with where and what was expected.
#[derive(Debug, Error)]
pub enum KesError {
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
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
    #[error("{file}:{line}: unknown test `{text}` — expected tensile, shear or bending")]
    UnknownTest {
        file: String,
        line: usize,
        text: String,
    },
    #[error("{file}:{line}: unknown direction `{text}` — expected warp, weft or bias")]
    UnknownDirection {
        file: String,
        line: usize,
        text: String,
    },
    #[error("{file}: no `{key}` metadata — expected a line `# {key}: {expected}` or --{key}")]
    MissingMetadata {
        file: String,
        key: &'static str,
        expected: &'static str,
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
         expected a decimal number such as 0.125"
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
        "{file}:{line}: ragged row: {found} fields `{text}` — expected {expected}, as the header"
    )]
    Ragged {
        file: String,
        line: usize,
        found: usize,
        expected: usize,
        text: String,
    },
    #[error("{file}: too few samples: {found} — expected at least {needed} rows of numbers")]
    TooFewSamples {
        file: String,
        found: usize,
        needed: usize,
    },
    #[error("{file}:{line}: malformed CSV: {message}")]
    Csv {
        file: String,
        line: usize,
        message: String,
    },
    #[error(
        "{second}: duplicate curve: {fabric} / {test} / {direction} was already read from \
         {first} — expected one file per fabric, test and direction"
    )]
    Duplicate {
        fabric: String,
        test: KesTest,
        direction: Direction,
        first: String,
        second: String,
    },
    #[error("bad row filter `{text}` — expected `COLUMN > VALUE` or `COLUMN < VALUE`, e.g. `Normal [uN] > 1e6`")]
    BadFilter { text: String },
}

/// Test and direction from the caller, for files whose metadata lacks them. A file that
/// names a different one is an error (`Conflict`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CurveOverrides {
    pub test: Option<KesTest>,
    pub direction: Option<Direction>,
}

/// Metadata, header and body of a delimited file.
struct Table<'a> {
    file: String,
    metadata: BTreeMap<String, String>,
    /// Line of each metadata key.
    metadata_lines: BTreeMap<String, usize>,
    /// Line of the first non-comment, non-blank line (the header, or the first row).
    first_line: usize,
    /// Text from that line on.
    body: &'a str,
    delimiter: u8,
    /// Every line of the file was blank or metadata.
    no_rows: bool,
}

fn decode(bytes: &[u8], file: &str) -> Result<String, KesError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        KesError::NotUtf8 {
            file: file.to_string(),
            line: 1 + bytes[..valid].iter().filter(|&&b| b == b'\n').count(),
        }
    })
}

fn read_file(path: &Path) -> Result<String, KesError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| KesError::Read {
        file: file.clone(),
        source,
    })?;
    decode(&bytes, &file)
}

impl<'a> Table<'a> {
    fn split(text: &'a str, file: &str) -> Result<Self, KesError> {
        if text.trim().is_empty() {
            return Err(KesError::Empty {
                file: file.to_string(),
            });
        }
        let mut metadata = BTreeMap::new();
        let mut metadata_lines = BTreeMap::new();
        let mut offset = 0;
        for (i, raw) in text.split_inclusive('\n').enumerate() {
            let line = raw.trim();
            if let Some(comment) = line.strip_prefix('#') {
                if let Some((key, value)) = comment.split_once(':') {
                    let key = key.trim().to_ascii_lowercase();
                    metadata_lines.insert(key.clone(), i + 1);
                    metadata.insert(key, value.trim().to_string());
                }
            } else if !line.is_empty() {
                let body = &text[offset..];
                return Ok(Self {
                    file: file.to_string(),
                    metadata,
                    metadata_lines,
                    first_line: i + 1,
                    delimiter: detect_delimiter(line),
                    body,
                    no_rows: false,
                });
            }
            offset += raw.len();
        }
        Ok(Self {
            file: file.to_string(),
            metadata,
            metadata_lines,
            first_line: text.split_inclusive('\n').count() + 1,
            body: "",
            delimiter: b',',
            no_rows: true,
        })
    }

    /// Records of the body with their line numbers in the file.
    fn records(&self) -> Result<Vec<(usize, csv::StringRecord)>, KesError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(self.delimiter)
            .comment(Some(b'#'))
            .trim(csv::Trim::All)
            .from_reader(self.body.as_bytes());
        let mut out = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| {
                let line = e
                    .position()
                    .map_or(self.first_line, |p| self.first_line + p.line() as usize - 1);
                KesError::Csv {
                    file: self.file.clone(),
                    line,
                    message: e.to_string(),
                }
            })?;
            // A row of empty fields is a blank line written with separators only.
            if record.iter().all(str::is_empty) {
                continue;
            }
            let line = record
                .position()
                .map_or(self.first_line, |p| self.first_line + p.line() as usize - 1);
            out.push((line, record));
        }
        Ok(out)
    }

    fn line_of(&self, key: &str) -> usize {
        self.metadata_lines.get(key).copied().unwrap_or(1)
    }
}

fn detect_delimiter(header: &str) -> u8 {
    if header.contains('\t') {
        b'\t'
    } else if header.contains(';') {
        b';'
    } else {
        b','
    }
}

fn record_text(record: &csv::StringRecord, delimiter: u8) -> String {
    let sep = (delimiter as char).to_string();
    let text = record.iter().collect::<Vec<_>>().join(&sep);
    shorten(&text)
}

/// At most 80 characters of `text`, for messages.
fn shorten(text: &str) -> String {
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text.to_string()
    }
}

/// Parses one cell: a finite decimal number.
fn number(
    file: &str,
    line: usize,
    column: usize,
    text: &str,
    header: &str,
) -> Result<f64, KesError> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(KesError::NotFinite {
            file: file.to_string(),
            line,
            column,
            text: shorten(text),
            header: header.to_string(),
        }),
        Err(_) => Err(KesError::NotNumeric {
            file: file.to_string(),
            line,
            column,
            text: shorten(text),
            header: header.to_string(),
        }),
    }
}

fn looks_numeric(record: &csv::StringRecord) -> bool {
    record.iter().all(|c| c.trim().parse::<f64>().is_ok())
}

/// Test or direction: from the file's metadata, else from the caller; both and different is
/// a conflict.
fn resolve<T: FromStr + PartialEq + Copy + fmt::Display>(
    table: &Table,
    key: &'static str,
    given: Option<T>,
    unknown: impl Fn(String, usize, String) -> KesError,
) -> Result<Option<T>, KesError> {
    let Some(text) = table.metadata.get(key) else {
        return Ok(given);
    };
    let line = table.line_of(key);
    let in_file = text
        .parse::<T>()
        .map_err(|_| unknown(table.file.clone(), line, text.clone()))?;
    match given {
        Some(g) if g != in_file => Err(KesError::Conflict {
            file: table.file.clone(),
            line,
            key,
            in_file: in_file.to_string(),
            given: g.to_string(),
        }),
        _ => Ok(Some(in_file)),
    }
}

/// Reads a KES curve file (KES-CSV.md) into SI units, rows in file order.
pub fn read_kes(path: &Path, overrides: CurveOverrides) -> Result<Curve, KesError> {
    let text = read_file(path)?;
    let mut curve = parse_kes(&text, &path.display().to_string(), overrides)?;
    curve.source = Some(path.to_path_buf());
    Ok(curve)
}

/// Parses the text of a KES curve file; `file` names it in errors.
pub fn parse_kes(text: &str, file: &str, overrides: CurveOverrides) -> Result<Curve, KesError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let table = Table::split(text, file)?;
    let test = resolve(&table, "test", overrides.test, |file, line, text| {
        KesError::UnknownTest { file, line, text }
    })?;
    let direction = resolve(
        &table,
        "direction",
        overrides.direction,
        |file, line, text| KesError::UnknownDirection { file, line, text },
    )?;
    let test = test.ok_or_else(|| KesError::MissingMetadata {
        file: file.to_string(),
        key: "test",
        expected: "tensile|shear|bending",
    })?;
    let (xq, yq) = test_quantities(test).ok_or_else(|| KesError::UnknownTest {
        file: file.to_string(),
        line: table.line_of("test"),
        text: test.to_string(),
    })?;
    let direction = direction.ok_or_else(|| KesError::MissingMetadata {
        file: file.to_string(),
        key: "direction",
        expected: "warp|weft|bias",
    })?;
    let example = format!(
        "{} [{}],{} [{}]",
        xq.column_name(),
        xq.kes_unit().0,
        yq.column_name(),
        yq.kes_unit().0
    );
    if table.no_rows {
        return Err(KesError::NoHeader {
            file: file.to_string(),
            line: table.first_line,
            text: "end of file".into(),
            expected: example,
        });
    }
    let records = table.records()?;
    let Some((header_line, header)) = records.first() else {
        return Err(KesError::NoHeader {
            file: file.to_string(),
            line: table.first_line,
            text: "end of file".into(),
            expected: example,
        });
    };
    let header_line = *header_line;
    if looks_numeric(header) {
        return Err(KesError::NoHeader {
            file: file.to_string(),
            line: header_line,
            text: record_text(header, table.delimiter),
            expected: example,
        });
    }

    // Columns: which quantity, which factor.
    let expected_columns = format!(
        "`{} [{}]` and `{} [{}]` (optionally `time [s]` first)",
        xq.column_name(),
        xq.expected_units(),
        yq.column_name(),
        yq.expected_units()
    );
    let mut columns: Vec<(KesQuantity, f64)> = Vec::with_capacity(header.len());
    for (i, cell) in header.iter().enumerate() {
        let column = i + 1;
        let (name, unit) = split_header(cell);
        let quantity = KesQuantity::from_column_name(&name)
            .filter(|q| [KesQuantity::Time, xq, yq].contains(q))
            .ok_or_else(|| KesError::UnknownColumn {
                file: file.to_string(),
                line: header_line,
                column,
                text: cell.to_string(),
                test,
                expected: expected_columns.clone(),
            })?;
        if columns.iter().any(|(q, _)| *q == quantity) {
            return Err(KesError::DuplicateColumn {
                file: file.to_string(),
                line: header_line,
                column,
                text: cell.to_string(),
                name: quantity.column_name().to_string(),
            });
        }
        let unit = unit.ok_or_else(|| KesError::MissingUnit {
            file: file.to_string(),
            line: header_line,
            column,
            text: cell.to_string(),
            name: quantity.column_name().to_string(),
            expected: quantity.expected_units(),
        })?;
        let factor = quantity
            .factor(&unit)
            .ok_or_else(|| KesError::UnknownUnit {
                file: file.to_string(),
                line: header_line,
                column,
                unit: unit.clone(),
                text: cell.to_string(),
                expected: quantity.expected_units(),
            })?;
        columns.push((quantity, factor));
    }
    let found = header.iter().collect::<Vec<_>>().join(", ");
    let position = |q: KesQuantity| -> Result<usize, KesError> {
        columns
            .iter()
            .position(|(c, _)| *c == q)
            .ok_or_else(|| KesError::MissingColumn {
                file: file.to_string(),
                line: header_line,
                name: q.column_name().to_string(),
                test,
                found: found.clone(),
            })
    };
    let (xi, yi) = (position(xq)?, position(yq)?);
    let header_cells: Vec<String> = header.iter().map(str::to_string).collect();

    let mut x = Vec::with_capacity(records.len());
    let mut y = Vec::with_capacity(records.len());
    for (line, record) in &records[1..] {
        if record.len() != columns.len() {
            return Err(KesError::Ragged {
                file: file.to_string(),
                line: *line,
                found: record.len(),
                expected: columns.len(),
                text: record_text(record, table.delimiter),
            });
        }
        let mut row = [0.0; 3];
        for (i, cell) in record.iter().enumerate() {
            row[i] = number(file, *line, i + 1, cell, &header_cells[i])? * columns[i].1;
        }
        x.push(row[xi]);
        y.push(row[yi]);
    }
    if x.len() < MIN_SAMPLES {
        return Err(KesError::TooFewSamples {
            file: file.to_string(),
            found: x.len(),
            needed: MIN_SAMPLES,
        });
    }
    Ok(Curve {
        fabric: table.metadata.get("fabric").cloned().unwrap_or_default(),
        test,
        direction,
        x,
        y,
        metadata: table.metadata,
        source: None,
    })
}

/// Reads KES files and refuses two curves of the same fabric, test and direction.
pub fn read_kes_files(
    paths: &[PathBuf],
    overrides: CurveOverrides,
) -> Result<Vec<Curve>, KesError> {
    let curves = paths
        .iter()
        .map(|p| read_kes(p, overrides))
        .collect::<Result<Vec<_>, _>>()?;
    check_duplicates(&curves)?;
    Ok(curves)
}

/// Two curves with the same (non-empty) fabric, test and direction are a `Duplicate` error.
pub fn check_duplicates(curves: &[Curve]) -> Result<(), KesError> {
    let mut seen: BTreeMap<(&str, KesTest, Direction), &Curve> = BTreeMap::new();
    let name = |c: &Curve| {
        c.source.as_ref().map_or_else(
            || "(unnamed curve)".to_string(),
            |p| p.display().to_string(),
        )
    };
    for c in curves.iter().filter(|c| !c.fabric.is_empty()) {
        if let Some(first) = seen.insert((c.fabric.as_str(), c.test, c.direction), c) {
            return Err(KesError::Duplicate {
                fabric: c.fabric.clone(),
                test: c.test,
                direction: c.direction,
                first: name(first),
                second: name(c),
            });
        }
    }
    Ok(())
}

/// A column of a delimited file: its 1-based index or its header text (`Position [mm]`,
/// or the name alone, `Position`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnRef {
    Index(usize),
    Name(String),
}

impl FromStr for ColumnRef {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        match s.parse::<usize>() {
            Ok(0) => Err("column indices start at 1".into()),
            Ok(i) => Ok(ColumnRef::Index(i)),
            Err(_) if s.is_empty() => Err("empty column name".into()),
            Err(_) => Ok(ColumnRef::Name(s.to_string())),
        }
    }
}

impl fmt::Display for ColumnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnRef::Index(i) => write!(f, "column {i}"),
            ColumnRef::Name(n) => write!(f, "column `{n}`"),
        }
    }
}

/// One axis of a generic loop: which column, in which unit (else the header's brackets),
/// and whether to flip its sign.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopColumn {
    pub column: ColumnRef,
    pub unit: Option<String>,
    pub negate: bool,
}

/// Keeps the rows whose `column` (in the file's own unit) is above or below `value`.
#[derive(Debug, Clone, PartialEq)]
pub struct RowFilter {
    pub column: ColumnRef,
    pub above: bool,
    pub value: f64,
}

impl FromStr for RowFilter {
    type Err = KesError;
    /// `Normal [uN] > 1e6`, `3 < 0.5`.
    fn from_str(s: &str) -> Result<Self, KesError> {
        let bad = || KesError::BadFilter {
            text: s.to_string(),
        };
        let (pos, above) = match (s.rfind('>'), s.rfind('<')) {
            (Some(p), None) => (p, true),
            (None, Some(p)) => (p, false),
            _ => return Err(bad()),
        };
        let column = s[..pos].parse::<ColumnRef>().map_err(|_| bad())?;
        let value = s[pos + 1..]
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(bad)?;
        Ok(RowFilter {
            column,
            above,
            value,
        })
    }
}

impl fmt::Display for RowFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = if self.above { '>' } else { '<' };
        write!(f, "{} {op} {}", self.column, self.value)
    }
}

/// How to read a generic loop record: x and y columns, an optional row filter, and the
/// direction to give the curve (warp when not given).
#[derive(Debug, Clone, PartialEq)]
pub struct LoopSpec {
    pub x: LoopColumn,
    pub y: LoopColumn,
    pub filter: Option<RowFilter>,
    pub direction: Option<Direction>,
}

/// Reads a generic delimited record as a loop curve (`KesTest::Loop`), x and y in SI.
pub fn read_loop(path: &Path, spec: &LoopSpec) -> Result<Curve, KesError> {
    let text = read_file(path)?;
    let mut curve = parse_loop(&text, &path.display().to_string(), spec)?;
    curve.source = Some(path.to_path_buf());
    if curve.fabric.is_empty() {
        if let Some(stem) = path.file_stem() {
            curve.fabric = stem.to_string_lossy().into_owned();
        }
    }
    Ok(curve)
}

/// Parses the text of a generic loop record; `file` names it in errors.
pub fn parse_loop(text: &str, file: &str, spec: &LoopSpec) -> Result<Curve, KesError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let table = Table::split(text, file)?;
    if table.no_rows {
        return Err(KesError::TooFewSamples {
            file: file.to_string(),
            found: 0,
            needed: MIN_SAMPLES,
        });
    }
    let records = table.records()?;
    let Some((first_line, first)) = records.first() else {
        return Err(KesError::TooFewSamples {
            file: file.to_string(),
            found: 0,
            needed: MIN_SAMPLES,
        });
    };
    let first_line = *first_line;
    let has_header = !looks_numeric(first);
    let width = first.len();
    let header: Vec<String> = if has_header {
        first.iter().map(str::to_string).collect()
    } else {
        (1..=width).map(|i| format!("column {i}")).collect()
    };
    let found = if has_header {
        header.join(", ")
    } else {
        format!("no header and {width} columns")
    };

    let locate = |c: &ColumnRef| -> Result<usize, KesError> {
        let hit = match c {
            ColumnRef::Index(i) => (*i <= width).then(|| i - 1),
            ColumnRef::Name(n) if has_header => header
                .iter()
                .position(|h| h == n)
                .or_else(|| header.iter().position(|h| h.eq_ignore_ascii_case(n)))
                .or_else(|| {
                    header
                        .iter()
                        .position(|h| split_header(h).0.eq_ignore_ascii_case(n))
                }),
            ColumnRef::Name(_) => None,
        };
        hit.ok_or_else(|| KesError::NoSuchColumn {
            file: file.to_string(),
            line: first_line,
            column: c.to_string(),
            found: found.clone(),
        })
    };
    let factor = |axis: &LoopColumn, index: usize| -> Result<(f64, &'static str), KesError> {
        let cell = &header[index];
        let unit = match (&axis.unit, has_header) {
            (Some(u), _) => u.clone(),
            (None, true) => split_header(cell).1.ok_or_else(|| KesError::MissingUnit {
                file: file.to_string(),
                line: first_line,
                column: index + 1,
                text: cell.clone(),
                name: split_header(cell).0,
                expected: loop_units_list(),
            })?,
            (None, false) => {
                return Err(KesError::MissingUnit {
                    file: file.to_string(),
                    line: first_line,
                    column: index + 1,
                    text: cell.clone(),
                    name: cell.clone(),
                    expected: loop_units_list(),
                })
            }
        };
        loop_unit(&unit).ok_or_else(|| KesError::UnknownUnit {
            file: file.to_string(),
            line: first_line,
            column: index + 1,
            unit,
            text: cell.clone(),
            expected: format!("one of {}", loop_units_list()),
        })
    };
    let (xi, yi) = (locate(&spec.x.column)?, locate(&spec.y.column)?);
    let ((fx, x_si), (fy, y_si)) = (factor(&spec.x, xi)?, factor(&spec.y, yi)?);
    let (sx, sy) = (
        if spec.x.negate { -fx } else { fx },
        if spec.y.negate { -fy } else { fy },
    );
    let filter = match &spec.filter {
        Some(f) => Some((locate(&f.column)?, f.above, f.value)),
        None => None,
    };

    let rows = if has_header {
        &records[1..]
    } else {
        &records[..]
    };
    let mut x = Vec::with_capacity(rows.len());
    let mut y = Vec::with_capacity(rows.len());
    for (line, record) in rows {
        if record.len() != width {
            return Err(KesError::Ragged {
                file: file.to_string(),
                line: *line,
                found: record.len(),
                expected: width,
                text: record_text(record, table.delimiter),
            });
        }
        let cell = |i: usize| number(file, *line, i + 1, &record[i], &header[i]);
        if let Some((fi, above, value)) = filter {
            let v = cell(fi)?;
            if (above && v <= value) || (!above && v >= value) {
                continue;
            }
        }
        x.push(cell(xi)? * sx);
        y.push(cell(yi)? * sy);
    }
    if x.len() < MIN_SAMPLES {
        return Err(KesError::TooFewSamples {
            file: file.to_string(),
            found: x.len(),
            needed: MIN_SAMPLES,
        });
    }
    let mut metadata = table.metadata.clone();
    let describe = |axis: &LoopColumn, i: usize| {
        let unit = axis
            .unit
            .as_ref()
            .map_or(String::new(), |u| format!(" in {u}"));
        let sign = if axis.negate { ", sign flipped" } else { "" };
        format!("{}{unit}{sign}", header[i])
    };
    metadata.insert("x".into(), describe(&spec.x, xi));
    metadata.insert("y".into(), describe(&spec.y, yi));
    metadata.insert("x unit (SI)".into(), x_si.into());
    metadata.insert("y unit (SI)".into(), y_si.into());
    if let Some(f) = &spec.filter {
        metadata.insert("rows".into(), format!("where {f}"));
    }
    let direction = spec
        .direction
        .or_else(|| table.metadata.get("direction").and_then(|d| d.parse().ok()))
        .unwrap_or(Direction::Warp);
    Ok(Curve {
        fabric: table.metadata.get("fabric").cloned().unwrap_or_default(),
        test: KesTest::Loop,
        direction,
        x,
        y,
        metadata,
        source: None,
    })
}
