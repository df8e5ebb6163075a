//! `kind`-tagged tables and the error type every part of the config uses.

use serde::de;
use std::fmt;

/// One clear error naming the field and the fix.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { field: field.into(), message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "`{}`: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Marks an error path carried inside a message through a `kind`-tagged enum (serde's own internally
/// tagged enums buffer their content and lose the field path; ours keep it).
pub const PATH_MARK: char = '\u{1}';

/// Split a message into the inner field path it carries (if any) and the text.
pub fn split_marked(msg: &str) -> (String, String) {
    if let Some(rest) = msg.strip_prefix(PATH_MARK) {
        if let Some((p, m)) = rest.split_once(PATH_MARK) {
            return (p.to_string(), m.to_string());
        }
    }
    (String::new(), msg.to_string())
}

pub fn join_path(a: &str, b: &str) -> String {
    match (a.is_empty() || a == ".", b.is_empty() || b == ".") {
        (true, _) => b.to_string(),
        (false, true) => a.to_string(),
        (false, false) => format!("{a}.{b}"),
    }
}

/// Deserialize a variant's fields from what is left of the table once `kind` is taken out; the error
/// carries the inner path.
pub fn de_variant<T: serde::de::DeserializeOwned, E: de::Error>(rest: toml::Table) -> Result<T, E> {
    serde_path_to_error::deserialize(toml::Value::Table(rest)).map_err(|e| {
        let outer = e.path().to_string();
        let (inner, msg) = split_marked(&e.into_inner().to_string());
        E::custom(format!("{PATH_MARK}{}{PATH_MARK}{}", join_path(&outer, &inner), msg))
    })
}

/// Take the `kind` key out of a table.
pub fn take_kind<E: de::Error>(t: &mut toml::Table, kinds: &[&str]) -> Result<String, E> {
    match t.remove("kind") {
        Some(toml::Value::String(k)) => Ok(k),
        Some(_) => Err(E::custom(format!("{PATH_MARK}kind{PATH_MARK}must be a string, one of {}", kinds.join(", ")))),
        None => Err(E::custom(format!("missing `kind`; one of {}", kinds.join(", ")))),
    }
}

/// An enum tagged by `kind = "…"`, one struct-like variant per kind, unknown keys denied, field paths
/// kept in errors.
macro_rules! tagged_enum {
    (
        $(#[$eattr:meta])*
        pub enum $name:ident {
            $(
                $(#[$vattr:meta])*
                $variant:ident = $kind:literal {
                    $( $(#[$fattr:meta])* $field:ident : $fty:ty ),* $(,)?
                }
            ),* $(,)?
        }
    ) => {
        $(#[$eattr])*
        pub enum $name {
            $( $(#[$vattr])* $variant { $( $field: $fty ),* } ),*
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[allow(non_snake_case)]
                mod variants {
                    #[allow(unused_imports)]
                    use super::*;
                    $(
                        #[derive(serde::Deserialize)]
                        #[serde(deny_unknown_fields)]
                        pub struct $variant { $( $(#[$fattr])* pub $field: $fty ),* }
                    )*
                }
                const KINDS: &[&str] = &[$($kind),*];
                let mut t = <toml::Table as serde::Deserialize>::deserialize(d)?;
                let kind: String = $crate::config::kind::take_kind(&mut t, KINDS)?;
                match kind.as_str() {
                    $(
                        $kind => {
                            let _v: variants::$variant = $crate::config::kind::de_variant(t)?;
                            Ok($name::$variant { $( $field: _v.$field ),* })
                        }
                    )*
                    other => Err(<D::Error as serde::de::Error>::custom(format!(
                        "{m}kind{m}unknown kind `{other}`; use one of {}", KINDS.join(", "), m = $crate::config::kind::PATH_MARK
                    ))),
                }
            }
        }
    };
}

pub(crate) use tagged_enum;

/// An enum tagged by `kind = "…"` whose variants each wrap one algorithm's own config struct (which
/// denies unknown keys itself): the registry line of that algorithm.
macro_rules! kind_enum {
    (
        $(#[$eattr:meta])*
        pub enum $name:ident {
            $( $(#[$vattr:meta])* $variant:ident = $kind:literal ($ty:ty) ),* $(,)?
        }
    ) => {
        $(#[$eattr])*
        pub enum $name {
            $( $(#[$vattr])* $variant($ty) ),*
        }

        impl $name {
            /// Every `kind` this enum accepts.
            pub const KINDS: &'static [&'static str] = &[$($kind),*];
            /// This value's `kind`.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( $name::$variant(_) => $kind ),*
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let mut t = <toml::Table as serde::Deserialize>::deserialize(d)?;
                let kind: String = $crate::config::kind::take_kind(&mut t, Self::KINDS)?;
                match kind.as_str() {
                    $( $kind => Ok($name::$variant($crate::config::kind::de_variant(t)?)), )*
                    other => Err(<D::Error as serde::de::Error>::custom(format!(
                        "{m}kind{m}unknown kind `{other}`; use one of {}", Self::KINDS.join(", "), m = $crate::config::kind::PATH_MARK
                    ))),
                }
            }
        }
    };
}
pub(crate) use kind_enum;
