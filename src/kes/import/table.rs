//! Delimited text split into `# key: value` metadata, a first line and CSV records, with
//! the cell parsers every reader shares; errors name file, line and column.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use super::KesError;

/// Most data rows of a curve file (a KES curve has thousands, a rig's loop record at 1 kHz
/// for 15 minutes a million).
pub const MAX_ROWS: usize = 1_000_000;

/// Metadata, header and body of a delimited file.
pub(super) struct Table<'a> {
    pub(super) file: String,
    pub(super) metadata: BTreeMap<String, String>,
    /// Line of each metadata key.
    pub(super) metadata_lines: BTreeMap<String, usize>,
    /// Line of the first non-comment, non-blank line (the header, or the first row).
    pub(super) first_line: usize,
    /// Text from that line on.
    pub(super) body: &'a str,
    pub(super) delimiter: u8,
    /// Every line of the file was blank or metadata.
    pub(super) no_rows: bool,
}

pub(super) fn decode(bytes: &[u8], file: &str) -> Result<String, KesError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        KesError::NotUtf8 {
            file: file.to_string(),
            line: 1 + bytes[..valid].iter().filter(|&&b| b == b'\n').count(),
        }
    })
}

/// Reads a curve file: its text and the SHA-256 of the bytes read.
pub(super) fn read_file(path: &Path) -> Result<(String, String), KesError> {
    let file = path.display().to_string();
    let bytes = crate::input::file_bytes(path, crate::input::CURVE_FILE_LIMIT)?;
    Ok((decode(&bytes, &file)?, crate::input::sha256_hex(&bytes)))
}

/// The metadata keys kestrel reads (a unit in brackets aside): said twice, they must agree.
const READ_KEYS: [&str; 7] = [
    "kestrel-kes",
    "test",
    "direction",
    "fabric",
    "protocol",
    "weight",
    "gauge length",
];

impl<'a> Table<'a> {
    pub(super) fn split(text: &'a str, file: &str) -> Result<Self, KesError> {
        if text.trim().is_empty() {
            return Err(KesError::Empty {
                file: file.to_string(),
            });
        }
        // a file of one line with carriage returns in it: lines ended by CR alone
        if text.contains('\r') && !text.contains('\n') && text.trim_end().contains('\r') {
            return Err(KesError::CrLineEnds {
                file: file.to_string(),
            });
        }
        let mut metadata: BTreeMap<String, String> = BTreeMap::new();
        let mut metadata_lines = BTreeMap::new();
        let mut offset = 0;
        for (i, raw) in text.split_inclusive('\n').enumerate() {
            let line = raw.trim();
            if let Some(comment) = line.strip_prefix('#') {
                if let Some((key, value)) = split_metadata(comment) {
                    // kept with the curve, written to cards and printed: no escape sequences
                    if comment
                        .chars()
                        .any(|c| c != '\t' && crate::input::unprintable(c))
                    {
                        return Err(KesError::ControlCharacter {
                            file: file.to_string(),
                            line: i + 1,
                            text: crate::input::printable(&shorten(line)),
                        });
                    }
                    let key = key.trim().to_ascii_lowercase();
                    let value = value.trim().to_string();
                    // a key kestrel reads, said twice, must say the same thing: no silent
                    // last-one-wins (free text such as `note` or `source` may repeat)
                    let base = crate::kes::units::split_header(&key).0;
                    let read = READ_KEYS.contains(&base.as_str());
                    let same = |first: &str| match base.as_str() {
                        // read in any case
                        "test" | "direction" => first.eq_ignore_ascii_case(&value),
                        _ => first == value,
                    };
                    if let Some(first) = metadata.get(&key).filter(|&v| read && !same(v)) {
                        return Err(KesError::MetadataTwice {
                            file: file.to_string(),
                            line: i + 1,
                            first_line: metadata_lines.get(&key).copied().unwrap_or(0),
                            key,
                            first: first.clone(),
                            value,
                        });
                    }
                    // the same key in another unit (`weight [g/m2]`, `weight [mg/cm2]`) must
                    // say the same quantity
                    let other_unit = metadata.iter().find(|(k, _)| {
                        read && **k != key && crate::kes::units::split_header(k).0 == base
                    });
                    if let Some((first_key, first)) = other_unit {
                        let si = |k: &str, v: &str| metadata_si(k, v);
                        let agree = match (si(first_key, first), si(&key, &value)) {
                            (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
                            _ => false,
                        };
                        if !agree {
                            return Err(KesError::MetadataUnits {
                                file: file.to_string(),
                                line: i + 1,
                                first_line: metadata_lines.get(first_key).copied().unwrap_or(0),
                                first: format!("{first_key}: {first}"),
                                said: format!("{key}: {value}"),
                            });
                        }
                    }
                    metadata_lines.entry(key.clone()).or_insert(i + 1);
                    metadata.insert(key, value);
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

    /// Records of the body with their line numbers in the file (counted from the bytes: LF
    /// and CRLF files alike, blank and comment lines included); a metadata line among them
    /// is refused.
    pub(super) fn records(&self) -> Result<Vec<(usize, csv::StringRecord)>, KesError> {
        for (i, raw) in self.body.split_inclusive('\n').enumerate() {
            let line = raw.trim();
            if line
                .strip_prefix('#')
                .and_then(split_metadata)
                .is_some_and(|(k, _)| !k.trim().is_empty())
            {
                return Err(KesError::MetadataAfterHeader {
                    file: self.file.clone(),
                    line: self.first_line + i,
                    text: shorten(line),
                });
            }
        }
        // the line of a byte offset of the body, counted on from the last one asked for
        let mut counted = (0usize, self.first_line);
        let mut line_at = |byte: u64| {
            // in a CRLF file the reader puts a record after the CR of the line before: the
            // record starts past the line ends
            let bytes = self.body.as_bytes();
            let mut byte = (byte as usize).min(bytes.len());
            while bytes.get(byte).is_some_and(|b| *b == b'\r' || *b == b'\n') {
                byte += 1;
            }
            let (from, line) = counted;
            let (from, line) = if byte >= from {
                (from, line)
            } else {
                (0, self.first_line)
            };
            let more = bytes[from..byte].iter().filter(|&&b| b == b'\n').count();
            counted = (byte, line + more);
            line + more
        };
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
                let line = e.position().map_or(self.first_line, |p| line_at(p.byte()));
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
            // Trailing empty fields are empty columns a spreadsheet adds after the last one.
            let mut record = record;
            let width = record.len() - record.iter().rev().take_while(|c| c.is_empty()).count();
            record.truncate(width);
            let line = record
                .position()
                .map_or(self.first_line, |p| line_at(p.byte()));
            // the header is a record too
            if out.len() > MAX_ROWS {
                return Err(KesError::TooManyRows {
                    file: self.file.clone(),
                    line,
                });
            }
            out.push((line, record));
        }
        Ok(out)
    }

    /// The text of line `line` of the file, as written (CR and LF aside), if it is in the body.
    pub(super) fn raw_line(&self, line: usize) -> Option<&str> {
        let i = line.checked_sub(self.first_line)?;
        self.body
            .split('\n')
            .nth(i)
            .map(|l| l.trim_end_matches('\r'))
    }

    pub(super) fn line_of(&self, key: &str) -> usize {
        self.metadata_lines.get(key).copied().unwrap_or(1)
    }
}

/// A read metadata value with a unit in SI (weight [kg/m²], gauge length [m]); None when the
/// unit or the number is not understood.
fn metadata_si(key: &str, value: &str) -> Option<f64> {
    let (base, unit) = crate::kes::units::split_header(key);
    let factor = match base.as_str() {
        "weight" => crate::kes::units::weight_factor(&unit?)?,
        "gauge length" => crate::kes::units::KesQuantity::Elongation.factor(&unit?)?,
        _ => return None,
    };
    parse_decimal(value).map(|v| v * factor)
}

/// `key: value` or `key = value`, whichever separator comes first.
fn split_metadata(comment: &str) -> Option<(&str, &str)> {
    let at = comment.find([':', '='])?;
    Some((&comment[..at], &comment[at + 1..]))
}

pub(super) fn detect_delimiter(header: &str) -> u8 {
    if header.contains('\t') {
        b'\t'
    } else if header.contains(';') {
        b';'
    } else {
        b','
    }
}

pub(super) fn record_text(record: &csv::StringRecord, delimiter: u8) -> String {
    let sep = (delimiter as char).to_string();
    let text = record.iter().collect::<Vec<_>>().join(&sep);
    shorten(&text)
}

/// At most 80 characters of `text`, for messages, control characters escaped.
pub(super) fn shorten(text: &str) -> String {
    let text = crate::input::printable(text);
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// A decimal number with a decimal point or a decimal comma (`0,125`, the European export);
/// `None` for anything else, a number with both marks (a thousands separator) included.
pub(crate) fn parse_decimal(text: &str) -> Option<f64> {
    let text = text.trim();
    match text.matches(',').count() {
        0 => text.parse().ok(),
        1 if !text.contains('.') => text.replacen(',', ".", 1).parse().ok(),
        _ => None,
    }
}

/// Parses one cell: a finite decimal number (decimal point or comma).
pub(super) fn number(
    file: &str,
    line: usize,
    column: usize,
    text: &str,
    header: &str,
) -> Result<f64, KesError> {
    match parse_decimal(text) {
        Some(v) if v.is_finite() => Ok(v),
        Some(_) => Err(KesError::NotFinite {
            file: file.to_string(),
            line,
            column,
            text: shorten(text),
            header: header.to_string(),
        }),
        None => Err(KesError::NotNumeric {
            file: file.to_string(),
            line,
            column,
            text: shorten(text),
            header: header.to_string(),
        }),
    }
}

pub(super) fn looks_numeric(record: &csv::StringRecord) -> bool {
    record.iter().all(|c| parse_decimal(c).is_some())
}

/// Test or direction: from the file's metadata, else from the caller; both and different is
/// a conflict.
pub(super) fn resolve<T: FromStr + PartialEq + Copy + fmt::Display>(
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
