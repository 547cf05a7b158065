//! Config errors, each naming the offending key, and `key.path=value` overrides.

use std::fmt;
use std::path::PathBuf;

/// Why a config could not be loaded. Every variant names where the problem is.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// No `configs/<name>.toml`.
    #[error("no GPU config named `{name}` in {dir} (available: {available})")]
    UnknownName {
        /// The name asked for.
        name: String,
        /// Where it was looked for.
        dir: PathBuf,
        /// The names that exist, comma separated.
        available: String,
    },
    /// The text is not TOML.
    #[error("{origin}: {message}")]
    Syntax {
        /// File name or other origin.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// An override is malformed or cannot be applied.
    #[error("override `{text}`: {message}")]
    Override {
        /// The override as given.
        text: String,
        /// What is wrong.
        message: String,
    },
    /// A key is unknown, missing or has the wrong type.
    #[error("{origin}: {key}: {message}")]
    Field {
        /// File name or other origin.
        origin: String,
        /// Dotted key path.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A key an override set is unknown or has the wrong type.
    #[error("override `{text}`: {key}: {message}")]
    OverrideField {
        /// The override as given.
        text: String,
        /// Dotted key path.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A value is impossible.
    #[error("{key}: {message}")]
    Invalid {
        /// Dotted key path.
        key: String,
        /// What is wrong.
        message: String,
    },
}

impl ConfigError {
    /// The dotted key the error is about, if it is about one key.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Field { key, .. }
            | ConfigError::OverrideField { key, .. }
            | ConfigError::Invalid { key, .. } => Some(key),
            _ => None,
        }
    }
}

pub(crate) fn invalid(key: impl Into<String>, message: impl fmt::Display) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.to_string(),
    }
}

/// One `key.path=value` override.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub(super) text: String,
    pub(super) path: Vec<String>,
    pub(super) value: toml::Value,
}

impl Override {
    /// Parses `key.path=value`. The value is parsed as a TOML value (`8`, `true`,
    /// `"gto"`, `{ unit = "sp", latency = 4, initiation_interval = 1 }`); text that is not
    /// a TOML value is taken as a string, so `sm.scheduler=gto` works unquoted.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let err = |message: &str| ConfigError::Override {
            text: text.to_owned(),
            message: message.to_owned(),
        };
        if text.contains(['\n', '\r']) {
            // The value is parsed as the right-hand side of one TOML line: a line break
            // would let it add keys of its own.
            return Err(err("a value must not contain a line break"));
        }
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| err("expected key.path=value"))?;
        let path: Vec<String> = key.trim().split('.').map(|s| s.trim().to_owned()).collect();
        if path.iter().any(|p| p.is_empty()) {
            return Err(err("empty component in the key path"));
        }
        let value_text = value.trim();
        if value_text.is_empty() {
            return Err(err("empty value"));
        }
        let value = match toml::from_str::<toml::Table>(&format!("v = {value_text}")) {
            Ok(mut t) => t.remove("v").ok_or_else(|| err("value did not parse"))?,
            Err(_) => toml::Value::String(value_text.to_owned()),
        };
        Ok(Self {
            text: text.to_owned(),
            path,
            value,
        })
    }

    /// The dotted key path.
    pub fn key(&self) -> String {
        self.path.join(".")
    }

    /// The override as given (`key.path=value`).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the deserialization error `message` at dotted `key` is this override's:
    /// it wrote that key or a value inside it, or (an unknown field) a key under it.
    pub(super) fn wrote(&self, key: &str, message: &str) -> bool {
        let path = self.path.join(".");
        path == key
            || key.starts_with(&format!("{path}."))
            || (message.starts_with("unknown field") && path.starts_with(&format!("{key}.")))
    }

    pub(super) fn apply(&self, doc: &mut toml::Table) -> Result<(), ConfigError> {
        let err = |message: String| ConfigError::Override {
            text: self.text.clone(),
            message,
        };
        let (last, parents) = self
            .path
            .split_last()
            .ok_or_else(|| err("empty key".into()))?;
        let mut table = doc;
        for (i, part) in parents.iter().enumerate() {
            let entry = table
                .entry(part.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            table = match entry {
                toml::Value::Table(t) => t,
                _ => {
                    return Err(err(format!(
                        "`{}` is a value, not a section",
                        self.path[..=i].join(".")
                    )))
                }
            };
        }
        table.insert(last.clone(), self.value.clone());
        Ok(())
    }
}
