//! What serde lets through in a scene file: arrays longer than their field (`size = [1, 1, 7]`
//! read as `[1, 1]`), the tables of a dynamic scene in a virtual KES test, which never
//! reads them, and a `name` that is not a title (escape sequences, a megabyte of text).

use toml::{Table, Value};

/// Fields that are arrays of a fixed length, by key (wherever they appear); `particles` is a
/// list of such arrays.
const LENGTHS: [(&str, usize, &str); 23] = [
    ("size", 2, "[warp, weft] m"),
    ("particle", 2, "[i, j]"),
    ("particles", 2, "[i, j] for each particle"),
    ("range_deg", 2, "[from, to] deg"),
    ("origin", 3, "[x, y, z]"),
    ("warp", 3, "[x, y, z]"),
    ("weft", 3, "[x, y, z]"),
    ("point", 3, "[x, y, z]"),
    ("normal", 3, "[x, y, z]"),
    ("center", 3, "[x, y, z]"),
    ("min", 3, "[x, y, z]"),
    ("max", 3, "[x, y, z]"),
    ("gravity", 3, "[x, y, z]"),
    ("velocity", 3, "[x, y, z]"),
    ("wind", 3, "[x, y, z]"),
    ("eye", 3, "[x, y, z]"),
    ("target", 3, "[x, y, z]"),
    ("up", 3, "[x, y, z]"),
    ("hinge", 3, "[x, y, z]"),
    ("axis", 3, "[x, y, z]"),
    ("impulse", 3, "[x, y, z]"),
    ("eta", 3, "[11, 22, 12]"),
    ("xi", 3, "[11, 22, 12]"),
];

/// The tables a virtual KES test does not read.
const DYNAMIC_TABLES: [&str; 9] = [
    "grid",
    "integrator",
    "loads",
    "pins",
    "obstacles",
    "potentials",
    "anchors",
    "camera",
    "reduced",
];

/// What serde let through in `text` (a scene that parsed), as a message: the first array
/// longer than its field, naming the key and the length expected; then, in a virtual KES
/// test's scene (`virtual_kes`), the first table of a dynamic scene, with its line.
pub(crate) fn check(text: &str, virtual_kes: bool) -> Result<(), String> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    walk(&table, "")?;
    if virtual_kes {
        check_virtual_kes_tables(&table, text)?;
    }
    Ok(())
}

fn walk(table: &Table, at: &str) -> Result<(), String> {
    for (key, value) in table {
        let name = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        match value {
            Value::Table(t) => walk(t, &name)?,
            Value::Array(items) => {
                if let Some(&(_, n, form)) = LENGTHS.iter().find(|l| l.0 == key) {
                    let arrays: Vec<&Value> = if key == "particles" {
                        items.iter().collect()
                    } else {
                        vec![value]
                    };
                    for a in arrays {
                        if let Value::Array(a) = a {
                            if a.len() > n {
                                return Err(format!(
                                    "{name} = {}: {} elements where {n} are expected ({form})",
                                    crate::input::clipped(&a_text(a)),
                                    a.len()
                                ));
                            }
                        }
                    }
                }
                for (k, item) in items.iter().enumerate() {
                    if let Value::Table(t) = item {
                        walk(t, &format!("{name}[{}]", k + 1))?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn a_text(a: &[Value]) -> String {
    let items: Vec<String> = a.iter().map(Value::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The first table of a dynamic scene in `table` (parsed from `text`), a virtual KES test's
/// scene, with its line, as a message.
fn check_virtual_kes_tables(table: &Table, text: &str) -> Result<(), String> {
    for key in DYNAMIC_TABLES {
        if table.contains_key(key) {
            return Err(format!(
                "{}[{key}] does not apply to a virtual KES test scene ([kes_test]): it runs a \
                 strip of the KES sample's size, not a [grid] with [integrator], [loads], \
                 [pins], obstacles or a camera; remove the table, or the [kes_test] for a \
                 dynamic run",
                line_of(text, key)
                    .map(|l| format!("line {l}: "))
                    .unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// The line (from 1) where the table `key` starts in `text`: its header (`[key]`,
/// `[[key]]`, `[key.sub]`) or a dotted or inline key (`key.x = `, `key = {`).
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            let l = line.trim_start();
            let header = l.trim_start_matches('[').trim_start();
            let starts = |s: &str| {
                s.strip_prefix(key)
                    .is_some_and(|rest| rest.trim_start().starts_with(['.', '=', ']']))
            };
            (l.starts_with('[') && starts(header)) || starts(l)
        })
        .map(|k| k + 1)
}

/// The most characters of a scene's `name` (a title: printed by every command, the Cloth tab
/// and renders).
pub(crate) const MAX_NAME_CHARS: usize = 200;

/// A scene's `name`: printable, at most [`MAX_NAME_CHARS`] characters.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        let start: String = name.chars().take(40).collect();
        return Err(format!(
            "name = \"{}…\" is {chars} characters long: at most {MAX_NAME_CHARS} (a title)",
            crate::input::printable(&start)
        ));
    }
    if name.chars().any(crate::input::unprintable) {
        return Err(format!(
            "name = \"{}\" holds a control character — expected printable text (no \
             terminal or bidirectional controls)",
            crate::input::printable(name)
        ));
    }
    Ok(())
}
