//! KES curve files (`# key: value` metadata, `name [unit]` header, rows in measurement order)
//! and generic delimited loop records, read into SI curves; every error names file, line, column.

mod loops;
mod table;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::units::{split_header, test_quantities, KesQuantity};
use super::{Curve, Direction, KesTest};
pub use table::MAX_ROWS;
use table::{looks_numeric, number, read_file, record_text, resolve, Table};

pub use loops::{parse_loop, read_loop, ColumnRef, LoopColumn, LoopSpec, RowFilter};

/// The fewest samples a curve may have.
pub(crate) const MIN_SAMPLES: usize = 3;

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

/// Reads a KES curve file (docs/kes.md) into SI units, rows in file order.
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
pub(crate) fn check_duplicates(curves: &[Curve]) -> Result<(), KesError> {
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
