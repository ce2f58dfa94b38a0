//! Scenario errors and the source positions they point at.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

/// A position in a scenario file, 1-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file's name or path (the `origin` given to the parser).
    pub origin: String,
    /// Line number, from 1.
    pub line: usize,
    /// Column number in characters, from 1.
    pub column: usize,
}

impl Location {
    /// The location of byte `offset` in `text` (clamped to the text).
    pub(crate) fn at(origin: &str, text: &str, offset: usize) -> Location {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Location {
            origin: origin.to_owned(),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, line {}, column {}",
            self.origin, self.line, self.column
        )
    }
}

/// Why a scenario was refused.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario file {}: {source}", path.display())]
    Read {
        /// The path given.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The text is not valid TOML, or has an unknown key, a missing key or a
    /// value of the wrong type.
    #[error("{location}: {}{message}", key.as_ref().map(|k| format!("`{k}`: ")).unwrap_or_default())]
    Syntax {
        /// Where the problem is.
        location: Location,
        /// The key concerned, as far as it can be told from the text.
        key: Option<String>,
        /// The TOML parser's description.
        message: String,
    },
    /// A value is well-formed TOML but not acceptable (bad unit, unknown
    /// node, probability outside [0, 1], …).
    #[error("{location}: `{key}`: {message}")]
    Invalid {
        /// Where the value is.
        location: Location,
        /// The key's path, e.g. `link[0].rate`.
        key: String,
        /// What is wrong and what would be accepted.
        message: String,
    },
    /// A command-line override was refused.
    #[error("invalid --{what} override: {reason}")]
    Override {
        /// The overridden setting.
        what: &'static str,
        /// Why it was refused.
        reason: &'static str,
    },
}

/// Where error messages point: the text and its name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source<'a> {
    /// The scenario's name (usually its path).
    pub(crate) origin: &'a str,
    /// The whole text.
    pub(crate) text: &'a str,
}

impl Source<'_> {
    /// A validation error about `key` at byte range `span`.
    pub(crate) fn invalid(
        &self,
        span: Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::Invalid {
            location: Location::at(self.origin, self.text, span.start),
            key: key.into(),
            message: message.into(),
        }
    }

    /// Converts a TOML deserialisation error, naming the key (with its
    /// table, e.g. `link[1].delya`) when the parser's message does not.
    pub(crate) fn syntax(&self, error: &toml::de::Error) -> ScenarioError {
        let start = error.span().map_or(0, |span| span.start);
        let key = error.span().and_then(|span| {
            let table = self.table_at(span.start);
            match (table, self.key_at(span)) {
                (Some(table), Some(key)) => Some(format!("{table}.{key}")),
                (None, Some(key)) => Some(key),
                (Some(table), None) => Some(table),
                (None, None) => None,
            }
        });
        ScenarioError::Syntax {
            location: Location::at(self.origin, self.text, start),
            key,
            message: error.message().trim().to_owned(),
        }
    }

    /// The key a span belongs to: the span itself when it is a bare key (an
    /// unknown field), else the key before `=` on the same line.
    fn key_at(&self, span: Range<usize>) -> Option<String> {
        let is_key_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        let spanned = self.text.get(span.clone())?;
        if !spanned.is_empty() && spanned.chars().all(is_key_char) {
            let after = self.text.get(span.end..)?.trim_start();
            if after.starts_with('=') || after.starts_with(']') {
                return Some(spanned.to_owned());
            }
        }
        let before = self.text.get(..span.start)?;
        let before = before.trim_end().strip_suffix('=')?.trim_end();
        let key: String = before
            .chars()
            .rev()
            .take_while(|&c| is_key_char(c) || c == '.' || c == '"')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        (!key.is_empty()).then_some(key)
    }

    /// The table header governing byte `offset`, as a key path: `run` for
    /// `[run]`, `link[2]` for the third `[[link]]`. A header counts if it
    /// starts at or before `offset`, but not when `offset` is inside it (an
    /// error about the header's own name belongs to the enclosing table).
    /// Headers are recognised line by line, which is enough for messages.
    fn table_at(&self, offset: usize) -> Option<String> {
        let mut current: Option<String> = None;
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        let mut line_start = 0;
        for line in self.text.split_inclusive('\n') {
            if line_start > offset || (line_start < offset && offset < line_start + line.len()) {
                break;
            }
            let trimmed = line.trim();
            if let Some(name) = trimmed
                .strip_prefix("[[")
                .and_then(|rest| rest.split("]]").next())
            {
                let name = name.trim();
                let count = counts.entry(name).or_insert(0);
                current = Some(format!("{name}[{count}]"));
                *count += 1;
            } else if let Some(name) = trimmed
                .strip_prefix('[')
                .and_then(|rest| rest.split(']').next())
            {
                current = Some(name.trim().to_owned());
            }
            line_start += line.len();
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_counts_lines_and_characters() {
        let text = "a\nbé = 1\n";
        let at = Location::at("f.toml", text, 5);
        assert_eq!((at.line, at.column), (2, 3));
        assert_eq!(at.to_string(), "f.toml, line 2, column 3");
        let end = Location::at("f.toml", text, 1000);
        assert_eq!((end.line, end.column), (3, 1));
        // Inside a multi-byte character: clamped back to its start.
        let inside = Location::at("f.toml", text, 4);
        assert_eq!((inside.line, inside.column), (2, 2));
    }
}
