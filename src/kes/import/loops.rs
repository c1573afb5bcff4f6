//! Generic delimited loop records: x and y columns chosen by index or header, units from the
//! header's brackets or the caller, an optional row filter; read into SI curves.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use super::table::{looks_numeric, number, read_file, record_text, Table};
use super::{KesError, MIN_SAMPLES};
use crate::kes::units::{four_digits, loop_bound, loop_unit, loop_units_list, split_header};
use crate::kes::{Curve, Direction, KesTest};

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
    let (text, sha256) = read_file(path)?;
    let mut curve = parse_loop(&text, &path.display().to_string(), spec)?;
    curve.source = Some(path.to_path_buf());
    curve.sha256 = Some(sha256);
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
                hint: super::ragged_hint(table.delimiter, record.len(), width),
            });
        }
        let cell = |i: usize| number(file, *line, i + 1, &record[i], &header[i]);
        if let Some((fi, above, value)) = filter {
            let v = cell(fi)?;
            if (above && v <= value) || (!above && v >= value) {
                continue;
            }
        }
        let (xv, yv) = (cell(xi)? * sx, cell(yi)? * sy);
        for (v, i, si) in [(xv, xi, x_si), (yv, yi, y_si)] {
            let (max, what) = loop_bound(si);
            // also a value that overflows in SI (1e308 kN)
            if !v.is_finite() || v.abs() > max {
                return Err(KesError::BeyondInstrument {
                    file: file.to_string(),
                    line: *line,
                    column: i + 1,
                    text: super::table::shorten(&record[i]),
                    header: header[i].to_string(),
                    bound: format!(
                        "{what} a fabric test gives: expected at most {} {si}",
                        four_digits(max)
                    ),
                });
            }
        }
        x.push(xv);
        y.push(yv);
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
        sha256: None,
    })
}
