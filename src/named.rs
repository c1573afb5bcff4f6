//! Names of small fieldless enums (a KES test, an integrator, a colour-map quantity): one
//! table gives `name()`, `Display` and `FromStr`, whose error lists the accepted names.

/// A fieldless enum with `name()`, `Display` and `FromStr` from one table.
///
/// ```text
/// named_enum! {
///     /// Docs and attributes of the enum.
///     #[derive(Debug, Clone, Copy)]
///     pub enum Direction: "direction", folded {
///         Warp => "warp" | "warp-wise",
///         Weft => "weft",
///     }
/// }
/// ```
///
/// Each variant's first string is its name (`name()`, `Display`), the others are aliases
/// that `FromStr` accepts too; `FromStr` reads the text through `exact`, `folded` or
/// `folded_snake` (below), and an unknown text is an error naming `what` and listing the
/// names: "unknown direction `diagonal` — expected warp or weft".
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident: $what:literal, $read:ident {
            $($(#[$vmeta:meta])* $variant:ident => $name:literal $(| $alias:literal)*),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $ty {
            $($(#[$vmeta])* $variant,)+
        }

        impl $ty {
            /// The name files and the command line use.
            $vis fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                let text = $crate::named::$read(s);
                match &*text {
                    $($name $(| $alias)* => Ok($ty::$variant),)+
                    other => Err(format!(
                        "unknown {} `{other}` — expected {}",
                        $what,
                        $crate::named::one_of(&[$($name),+])
                    )),
                }
            }
        }
    };
}
pub(crate) use named_enum;

/// The text as written (for names matched exactly).
pub(crate) fn exact(s: &str) -> &str {
    s
}

/// Trimmed and lower case.
pub(crate) fn folded(s: &str) -> String {
    s.trim().to_ascii_lowercase()
}

/// Trimmed, lower case, `-` read as `_` (`newton-krylov` = `newton_krylov`).
pub(crate) fn folded_snake(s: &str) -> String {
    folded(s).replace('-', "_")
}

/// "a, b or c".
pub(crate) fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::one_of;

    #[test]
    fn names_are_listed_with_or_before_the_last() {
        assert_eq!(one_of(&["warp"]), "warp");
        assert_eq!(one_of(&["warp", "weft"]), "warp or weft");
        assert_eq!(one_of(&["warp", "weft", "bias"]), "warp, weft or bias");
    }
}
