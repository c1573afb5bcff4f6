//! KES curve files (`# key: value` metadata, `name [unit]` header, rows in measurement order)
//! and generic delimited loop records, read into SI curves; every error names file, line, column.

mod error;
mod loops;
mod table;
pub(crate) use table::parse_decimal;

use std::path::{Path, PathBuf};

use super::units::{split_header, test_quantities, trimmed, KesQuantity};
use super::{Curve, Direction, KesTest};
pub use error::KesError;
pub use table::MAX_ROWS;
use table::{looks_numeric, number, read_file, record_text, resolve, Table};

pub use loops::{parse_loop, read_loop, ColumnRef, LoopColumn, LoopSpec, RowFilter};

/// The fewest samples a curve may have.
pub(crate) const MIN_SAMPLES: usize = 3;

/// Test, direction and gauge length from the caller, for files whose metadata lacks them. A
/// file that names a different one is an error (`Conflict`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CurveOverrides {
    pub test: Option<KesTest>,
    pub direction: Option<Direction>,
    /// Gauge length (clamp distance) \[m\] of tensile files with an elongation column.
    pub gauge_length: Option<f64>,
}

/// A tensile strain above this (100 %) is no woven fabric's: percent numbers in `strain [-]`,
/// or an elongation over a wrong gauge length.
const MAX_STRAIN: f64 = 1.0;
/// Largest tensile strain read under a `%` header [-] (1000 %: beyond any textile, knits too).
const MAX_PERCENT_STRAIN: f64 = 10.0;

/// A measured path reverses at the instrument's turning points, each stroke many samples long;
/// a file with at least this many reversals, and fewer than `MIN_SAMPLES_PER_STROKE` samples
/// per stroke, has its rows out of order (a shuffled file reverses at two samples in three).
const MIN_DISORDER_TURNS: usize = 10;
const MIN_SAMPLES_PER_STROKE: usize = 4;

/// Gauge lengths read (a file's `# gauge length` line, `--gauge-length`) \[m\]: 1 mm to 10 m.
pub const GAUGE_LENGTH_RANGE_M: (f64, f64) = (1e-3, 10.0);

/// Reads a KES curve file (docs/kes.md) into SI units, rows in file order.
pub fn read_kes(path: &Path, overrides: CurveOverrides) -> Result<Curve, KesError> {
    let (text, sha256) = read_file(path)?;
    let mut curve = parse_kes(&text, &path.display().to_string(), overrides)?;
    curve.source = Some(path.to_path_buf());
    curve.sha256 = Some(sha256);
    Ok(curve)
}

/// Parses the text of a KES curve file; `file` names it in errors.
pub fn parse_kes(text: &str, file: &str, overrides: CurveOverrides) -> Result<Curve, KesError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let table = Table::split(text, file)?;
    if let Some(version) = table
        .metadata
        .get("kestrel-kes")
        .filter(|v| v.trim() != "1")
    {
        return Err(KesError::FormatVersion {
            file: file.to_string(),
            line: table.line_of("kestrel-kes"),
            text: crate::input::printable(&table::shorten(version)),
        });
    }
    let test = resolve(&table, "test", overrides.test, |file, line, text| {
        KesError::UnknownTest { file, line, text }
    })?;
    let test = test.ok_or_else(|| KesError::MissingMetadata {
        file: file.to_string(),
        key: "test",
        expected: "tensile|shear|bending|compression|friction|roughness",
    })?;
    // Compression is through the thickness: its direction is `normal`, whatever --direction
    // says for the other files.
    let given_direction = overrides.direction.filter(|_| test != KesTest::Compression);
    let direction = resolve(&table, "direction", given_direction, |file, line, text| {
        KesError::UnknownDirection { file, line, text }
    })?;
    let direction = match (test, direction) {
        (KesTest::Compression, None | Some(Direction::Normal)) => Some(Direction::Normal),
        (KesTest::Compression, Some(d)) => {
            return Err(KesError::WrongDirection {
                file: file.to_string(),
                line: table.line_of("direction"),
                direction: d,
                test,
                expected: "a compression curve is through the thickness: `# direction: normal` \
                           or no direction line",
            })
        }
        (_, Some(Direction::Normal)) => {
            return Err(KesError::WrongDirection {
                file: file.to_string(),
                line: table.line_of("direction"),
                direction: Direction::Normal,
                test,
                expected: "normal is the compression test's direction; expected warp, weft \
                           or bias",
            })
        }
        (_, d) => d,
    };
    if let Some(key) = weight_key(&table.metadata) {
        let (key, text) = (key.to_string(), table.metadata[key].clone());
        weight_of(&key, &text).ok_or_else(|| KesError::BadWeight {
            file: file.to_string(),
            line: table.line_of(&key),
            text: format!("{key}: {text}"),
        })?;
    }
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

    // Columns: which quantity, which factor. A tensile x may be an elongation.
    let expected_columns = format!(
        "`{} [{}]`{} and `{} [{}]` (optionally `time [s]` first)",
        xq.column_name(),
        xq.expected_units(),
        match test {
            KesTest::Tensile => " (or `elongation [mm]` with a gauge length)",
            KesTest::Shear => " (or `shear strain [-]`, tan of the angle)",
            _ => "",
        },
        yq.column_name(),
        yq.expected_units()
    );
    let allowed = |q: &KesQuantity| {
        [KesQuantity::Time, xq, yq].contains(q)
            || (test == KesTest::Tensile && *q == KesQuantity::Elongation)
            || (test == KesTest::Shear && *q == KesQuantity::ShearStrain)
    };
    // The role a column fills: an elongation or a shear strain is the x column.
    let role = |q: KesQuantity| match q {
        KesQuantity::Elongation | KesQuantity::ShearStrain => xq,
        q => q,
    };
    // a column with no number in any row (a `notes` column left blank): skipped wherever it
    // stands, whatever its name
    let blank = |i: usize| {
        records[1..]
            .iter()
            .all(|(_, r)| r.get(i).is_none_or(|c| c.is_empty()))
    };
    let mut columns: Vec<(KesQuantity, f64)> = Vec::with_capacity(header.len());
    // the record position of each column read; columns after x and y that are none of the
    // test's (a second force channel) are skipped, named in the metadata
    let (mut at, mut skipped) = (Vec::with_capacity(header.len()), Vec::new());
    for (i, cell) in header.iter().enumerate() {
        let column = i + 1;
        let (name, unit) = split_header(cell);
        let has = |q: KesQuantity| columns.iter().any(|(c, _)| role(*c) == q);
        let known = KesQuantity::from_column_name(&name).filter(allowed);
        if known.is_none() && blank(i) && records.len() > 1 {
            skipped.push(format!("{cell} (column {column}: empty)"));
            continue;
        }
        let Some(quantity) = known else {
            if has(xq) && has(yq) {
                skipped.push(format!("{cell} (column {column}: not a {test} column)"));
                continue;
            }
            return Err(KesError::UnknownColumn {
                file: file.to_string(),
                line: header_line,
                column,
                text: cell.to_string(),
                test,
                expected: expected_columns.clone(),
            });
        };
        if columns.iter().any(|(q, _)| role(*q) == role(quantity)) {
            // a second channel of the test's own quantity after x and y: the first is read
            if has(xq) && has(yq) {
                let name = role(quantity).column_name();
                let read = columns.iter().position(|(q, _)| role(*q) == role(quantity));
                skipped.push(format!(
                    "{cell} (column {column}: a second {name} column, column {} is read)",
                    read.map_or(0, |k| at[k] + 1)
                ));
                continue;
            }
            return Err(KesError::DuplicateColumn {
                file: file.to_string(),
                line: header_line,
                column,
                text: cell.to_string(),
                name: role(quantity).column_name().to_string(),
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
        at.push(i);
    }
    let found = header.iter().collect::<Vec<_>>().join(", ");
    let position = |q: KesQuantity| -> Result<usize, KesError> {
        columns
            .iter()
            .position(|(c, _)| role(*c) == q)
            .ok_or_else(|| KesError::MissingColumn {
                file: file.to_string(),
                line: header_line,
                name: q.column_name().to_string(),
                test,
                found: found.clone(),
            })
    };
    let (xi, yi) = (position(xq)?, position(yq)?);
    let mut metadata = table.metadata.clone();
    if !skipped.is_empty() {
        metadata.insert(super::values::SKIPPED_COLUMNS.into(), skipped.join("; "));
    }
    // where the x column stands in a record (xi counts the columns read)
    let x_column = at[xi];
    if columns[xi].0 == KesQuantity::Elongation {
        let gauge = gauge_length(&table, overrides.gauge_length)?.ok_or_else(|| {
            KesError::NoGaugeLength {
                file: file.to_string(),
                line: header_line,
                column: x_column + 1,
                text: header[x_column].to_string(),
            }
        })?;
        columns[xi].1 /= gauge;
        metadata
            .entry("gauge length [mm]".into())
            .or_insert_with(|| super::write::number(gauge * 1e3));
    }
    // a tensile `max force` line without a unit is read in the force column's
    let unitless_max_force = metadata
        .keys()
        .any(|k| split_header(k) == ("max force".to_string(), None));
    if test == KesTest::Tensile && unitless_max_force {
        if let Some(unit) = split_header(&header[at[yi]]).1 {
            metadata.insert(super::values::FORCE_COLUMN_UNIT.into(), unit);
        }
    }
    if columns[xi].0 == KesQuantity::ShearStrain {
        metadata.insert(
            "shear angle".into(),
            format!(
                "atan of the engineering shear strain column `{}` (tan of the angle)",
                header[x_column].trim()
            ),
        );
    }
    let header_cells: Vec<String> = header.iter().map(str::to_string).collect();
    // rows lose their trailing empty cells (`Table::records`): a row may end anywhere after
    // the last column read, the cells it lacks being those of skipped columns
    let last_read = at.iter().copied().max().unwrap_or(0);

    let mut x = Vec::with_capacity(records.len());
    let mut y = Vec::with_capacity(records.len());
    let time = columns.iter().position(|(q, _)| *q == KesQuantity::Time);
    let mut last_time = f64::NEG_INFINITY;
    for (line, record) in &records[1..] {
        let text = || {
            table
                .raw_line(*line)
                .map_or_else(|| record_text(record, table.delimiter), table::shorten)
        };
        if record.len() > header.len() {
            return Err(KesError::Ragged {
                file: file.to_string(),
                line: *line,
                found: record.len(),
                expected: header.len(),
                text: text(),
                hint: ragged_hint(table.delimiter, record.len(), header.len()),
            });
        }
        if record.len() <= last_read {
            let column = at.iter().copied().find(|&i| i >= record.len()).unwrap_or(0);
            return Err(KesError::RowTooShort {
                file: file.to_string(),
                line: *line,
                column: column + 1,
                found: record.len(),
                text: text(),
                header: header_cells[column].clone(),
            });
        }
        let mut row = [0.0; 3];
        for (k, &i) in at.iter().enumerate() {
            let cell = &record[i];
            // finite as written, and still finite in SI units
            let si = number(file, *line, i + 1, cell, &header_cells[i])? * columns[k].1;
            if !si.is_finite() {
                return Err(KesError::OverflowsInSi {
                    file: file.to_string(),
                    line: *line,
                    column: i + 1,
                    text: table::shorten(cell),
                    header: header_cells[i].clone(),
                    si,
                });
            }
            if let Some((max, unit, what)) = columns[k].0.bound().filter(|b| si.abs() > b.0) {
                let column_unit = split_header(&header_cells[i]).1.unwrap_or_default();
                return Err(KesError::BeyondInstrument {
                    file: file.to_string(),
                    line: *line,
                    column: i + 1,
                    text: table::shorten(cell),
                    header: header_cells[i].clone(),
                    bound: format!(
                        "{what} a fabric test gives: expected at most {}",
                        if unit == "-" {
                            format!("{} (no unit)", super::units::four_digits(max))
                        } else {
                            format!(
                                "{} {column_unit} = {} {unit}",
                                super::units::four_digits(max / columns[k].1),
                                super::units::four_digits(max)
                            )
                        }
                    ),
                });
            }
            // a shear strain γ = tan φ is read as the angle φ
            row[k] = if columns[k].0 == KesQuantity::ShearStrain {
                si.atan()
            } else {
                si
            };
        }
        if columns[xi].0 == KesQuantity::Thickness && row[xi] <= 0.0 {
            return Err(KesError::NotPositive {
                file: file.to_string(),
                line: *line,
                column: x_column + 1,
                text: table::shorten(&record[x_column]),
                header: header_cells[x_column].clone(),
            });
        }
        if let Some(t) = time {
            if row[t] < last_time {
                return Err(KesError::TimeBack {
                    file: file.to_string(),
                    line: *line,
                    column: at[t] + 1,
                    now: row[t],
                    before: last_time,
                });
            }
            last_time = row[t];
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
    if test == KesTest::Tensile {
        // the error points at the row of the largest strain
        let rows: Vec<usize> = records[1..].iter().map(|(l, _)| *l).collect();
        check_strain(
            file,
            &rows,
            x_column,
            &header_cells[x_column],
            columns[xi].0,
            &x,
        )?;
    }
    check_path_order(file, &x)?;
    Ok(Curve {
        fabric: table.metadata.get("fabric").cloned().unwrap_or_default(),
        test,
        direction,
        x,
        y,
        metadata,
        source: None,
        sha256: None,
    })
}

/// The gauge length [m]: from a `# gauge length [unit]: value` line, else from the caller;
/// both and different is a conflict.
fn gauge_length(table: &Table, given: Option<f64>) -> Result<Option<f64>, KesError> {
    let Some((key, text)) = table
        .metadata
        .iter()
        .find(|(k, _)| split_header(k).0 == "gauge length")
    else {
        return Ok(given);
    };
    let line = table.line_of(key);
    let bad = || KesError::BadGaugeLength {
        file: table.file.clone(),
        line,
        text: format!("{key}: {text}"),
    };
    let factor = split_header(key)
        .1
        .and_then(|u| KesQuantity::Elongation.factor(&u))
        .ok_or_else(bad)?;
    let (lo, hi) = GAUGE_LENGTH_RANGE_M;
    let in_file = table::parse_decimal(text)
        .map(|v| v * factor)
        .filter(|v| (lo..=hi).contains(v))
        .ok_or_else(bad)?;
    match given {
        Some(g) if (g - in_file).abs() > 1e-9 * in_file => Err(KesError::Conflict {
            file: table.file.clone(),
            line,
            key: "gauge length",
            in_file: format!("{} mm", trimmed(in_file * 1e3, 9)),
            given: format!("{} mm", trimmed(g * 1e3, 9)),
        }),
        _ => Ok(Some(in_file)),
    }
}

/// The metadata key of the fabric's weight (`weight [g/m2]`, `weight [mg/cm2]`, …), if any.
pub(crate) fn weight_key(metadata: &std::collections::BTreeMap<String, String>) -> Option<&str> {
    metadata
        .keys()
        .find(|k| split_header(k).0 == "weight")
        .map(String::as_str)
}

/// The weight (areal density) [kg/m²] of a `weight [unit]` metadata line, `None` when the unit
/// is missing or unknown or the value is not within
/// [`AREAL_DENSITY_RANGE_KG_PER_M2`](super::units::AREAL_DENSITY_RANGE_KG_PER_M2).
pub(crate) fn weight_of(key: &str, text: &str) -> Option<f64> {
    let factor = super::units::weight_factor(&split_header(key).1?)?;
    let (lo, hi) = super::units::AREAL_DENSITY_RANGE_KG_PER_M2;
    table::parse_decimal(text)
        .map(|v| v * factor)
        .filter(|v| (lo..=hi).contains(v))
}

/// How to fix a row with more fields than the header, when a decimal comma is the likely cause.
pub(crate) fn ragged_hint(delimiter: u8, found: usize, expected: usize) -> String {
    if delimiter == b',' && found > expected {
        " (if the numbers have a decimal comma, separate the columns with `;` or a tab)".into()
    } else {
        String::new()
    }
}

/// A tensile strain beyond `MAX_STRAIN`: percent numbers under `strain [-]`, or a wrong gauge
/// length.
fn check_strain(
    file: &str,
    rows: &[usize],
    xi: usize,
    header: &str,
    quantity: KesQuantity,
    x: &[f64],
) -> Result<(), KesError> {
    let (at, max) = x
        .iter()
        .copied()
        .enumerate()
        .fold(
            (0, f64::NEG_INFINITY),
            |(i, m), (j, v)| if v > m { (j, v) } else { (i, m) },
        );
    let line = rows.get(at).copied().unwrap_or(0);
    if max <= MAX_STRAIN {
        return Ok(());
    }
    // the column's own number: a percent column reads in percent
    let percent = split_header(header).1.as_deref() == Some("%");
    let fix = match quantity {
        KesQuantity::Elongation => {
            "check the gauge length and the elongation's unit (strain = elongation / gauge length)"
        }
        // `strain [%]` above 100 % may be a knit's: only a fraction that large is refused, and
        // percent beyond any textile's
        _ if percent => {
            if max <= MAX_PERCENT_STRAIN {
                return Ok(());
            }
            "no textile stretches to ten times its length: check the column and its unit"
        }
        _ => "these look like percent numbers: write the header `strain [%]`",
    };
    Err(KesError::StrainTooLarge {
        file: file.to_string(),
        line,
        column: xi + 1,
        text: header.to_string(),
        max: if percent { 100.0 * max } else { max },
        percent: 100.0 * max,
        fix,
    })
}

/// Rows out of measurement order (shuffled, sorted by another column) make a path that reverses
/// at almost every sample.
fn check_path_order(file: &str, x: &[f64]) -> Result<(), KesError> {
    let turns = super::Path::with_fraction(x, super::REVERSAL_FRACTION)
        .turns()
        .len();
    if turns >= MIN_DISORDER_TURNS && turns * MIN_SAMPLES_PER_STROKE > x.len() {
        return Err(KesError::PathOrder {
            file: file.to_string(),
            turns,
            samples: x.len(),
        });
    }
    Ok(())
}

/// Reads KES files; several files of one fabric, test and direction are replicates
/// (specimens of one curve, `kes::replicates`).
pub fn read_kes_files(
    paths: &[PathBuf],
    overrides: CurveOverrides,
) -> Result<Vec<Curve>, KesError> {
    let same = |a: &PathBuf, b: &PathBuf| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].iter().any(|q| same(p, q)) {
            return Err(KesError::FileGivenTwice {
                file: p.display().to_string(),
            });
        }
    }
    paths.iter().map(|p| read_kes(p, overrides)).collect()
}
