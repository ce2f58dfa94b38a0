//! Typed access to the keys of a table whose shape depends on its `kind` or
//! `cc`, with errors that name the key and point at its value.

use std::collections::BTreeSet;
use std::ops::Range;
use std::time::Duration;

use fairstream_proto::units::{parse_duration, Bytes, Rate};
use toml::{Spanned, Value};

use super::error::{ScenarioError, Source};
use super::raw::RawTable;

/// Parses a rate written at `span`, refusing zero.
pub(crate) fn rate_at(
    source: Source<'_>,
    text: &str,
    span: Range<usize>,
    key: &str,
) -> Result<Rate, ScenarioError> {
    let rate: Rate = text
        .parse()
        .map_err(|e| source.invalid(span.clone(), key, format!("{e}")))?;
    if rate.bits_per_sec() <= 0.0 {
        return Err(source.invalid(span, key, "rate must be greater than zero"));
    }
    crate::limits::check_rate(rate.bits_per_sec()).map_err(|e| source.invalid(span, key, e))?;
    Ok(rate)
}

/// Parses a duration written at `span`; refuses zero unless `zero_ok`.
pub(crate) fn duration_at(
    source: Source<'_>,
    text: &str,
    span: Range<usize>,
    key: &str,
    zero_ok: bool,
) -> Result<Duration, ScenarioError> {
    let duration =
        parse_duration(text).map_err(|e| source.invalid(span.clone(), key, format!("{e}")))?;
    if !zero_ok && duration.is_zero() {
        return Err(source.invalid(span.clone(), key, "duration must be greater than zero"));
    }
    crate::limits::check_duration(duration).map_err(|e| source.invalid(span, key, e))?;
    Ok(duration)
}

/// Parses a size: a TOML integer (bytes) or a string with a unit (`"1.5kB"`).
pub(crate) fn bytes_at(
    source: Source<'_>,
    value: &Spanned<Value>,
    key: &str,
) -> Result<Bytes, ScenarioError> {
    match value.get_ref() {
        Value::Integer(n) => u64::try_from(*n).map(Bytes).map_err(|_| {
            source.invalid(value.span(), key, format!("size {n} must not be negative"))
        }),
        Value::String(text) => text
            .parse()
            .map_err(|e| source.invalid(value.span(), key, format!("{e}"))),
        other => Err(source.invalid(
            value.span(),
            key,
            format!(
                "expected a size in bytes (an integer or a string such as \"1.5kB\"), found {}",
                other.type_str()
            ),
        )),
    }
}

/// The keys of one `kind`-dependent table, taken one by one; [`Fields::finish`]
/// refuses whatever was not taken.
pub(crate) struct Fields<'a> {
    source: Source<'a>,
    path: String,
    table: &'a RawTable,
    span: Range<usize>,
    taken: BTreeSet<&'static str>,
}

impl<'a> Fields<'a> {
    /// Starts reading `table`, whose key path is `path` (e.g. `link[0].queue`).
    pub(crate) fn new(source: Source<'a>, path: String, table: &'a Spanned<RawTable>) -> Self {
        Fields {
            source,
            path,
            table: table.get_ref(),
            span: table.span(),
            taken: BTreeSet::new(),
        }
    }

    /// The full path of `key`.
    pub(crate) fn key(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// The table's own key path.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// An error about `key`, pointing at its value (or at the table).
    pub(crate) fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        let span = self
            .table
            .get(key)
            .map_or_else(|| self.span.clone(), Spanned::span);
        self.source.invalid(span, self.key(key), message)
    }

    /// The value of `key`, if present.
    pub(crate) fn optional(&mut self, key: &'static str) -> Option<&'a Spanned<Value>> {
        self.taken.insert(key);
        self.table.get(key)
    }

    /// The value of `key`, which must be present.
    pub(crate) fn required(
        &mut self,
        key: &'static str,
    ) -> Result<&'a Spanned<Value>, ScenarioError> {
        self.optional(key)
            .ok_or_else(|| self.error(key, format!("missing required key `{key}`")))
    }

    fn wrong_type(&self, key: &str, value: &Spanned<Value>, expected: &str) -> ScenarioError {
        self.error(
            key,
            format!("expected {expected}, found {}", value.get_ref().type_str()),
        )
    }

    /// A string value.
    pub(crate) fn string(&mut self, key: &'static str) -> Result<Option<&'a str>, ScenarioError> {
        match self.optional(key) {
            None => Ok(None),
            Some(value) => match value.get_ref() {
                Value::String(text) => Ok(Some(text)),
                _ => Err(self.wrong_type(key, value, "a string")),
            },
        }
    }

    /// A boolean value.
    pub(crate) fn boolean(&mut self, key: &'static str) -> Result<Option<bool>, ScenarioError> {
        match self.optional(key) {
            None => Ok(None),
            Some(value) => match value.get_ref() {
                Value::Boolean(flag) => Ok(Some(*flag)),
                _ => Err(self.wrong_type(key, value, "true or false")),
            },
        }
    }

    /// A finite number (TOML integer or float).
    pub(crate) fn number(&mut self, key: &'static str) -> Result<Option<f64>, ScenarioError> {
        match self.optional(key) {
            None => Ok(None),
            Some(value) => match value.get_ref() {
                #[allow(clippy::cast_precision_loss)] // thresholds are small
                Value::Integer(n) => Ok(Some(*n as f64)),
                Value::Float(x) if x.is_finite() => Ok(Some(*x)),
                Value::Float(x) => Err(self.error(key, format!("{x} is not a finite number"))),
                _ => Err(self.wrong_type(key, value, "a number")),
            },
        }
    }

    /// A required number.
    pub(crate) fn required_number(&mut self, key: &'static str) -> Result<f64, ScenarioError> {
        self.required(key)?;
        self.number(key)?
            .ok_or_else(|| self.error(key, format!("missing required key `{key}`")))
    }

    /// A required probability, in [0, 1].
    pub(crate) fn probability(&mut self, key: &'static str) -> Result<f64, ScenarioError> {
        let p = self.required_number(key)?;
        if (0.0..=1.0).contains(&p) {
            Ok(p)
        } else {
            Err(self.error(key, format!("probability {p} is outside [0, 1]")))
        }
    }

    /// A size in bytes.
    pub(crate) fn bytes(&mut self, key: &'static str) -> Result<Option<Bytes>, ScenarioError> {
        let path = self.key(key);
        self.optional(key)
            .map(|value| bytes_at(self.source, value, &path))
            .transpose()
    }

    /// A packet size: at least one byte and at most [`super::MAX_PACKET_SIZE`].
    pub(crate) fn packet_size(
        &mut self,
        key: &'static str,
    ) -> Result<Option<Bytes>, ScenarioError> {
        let size = self.bytes(key)?;
        match size {
            Some(Bytes(0)) => Err(self.error(key, "packet size must be at least 1 byte")),
            Some(size) if size > super::MAX_PACKET_SIZE => Err(self.error(
                key,
                format!(
                    "packet size {} exceeds the largest UDP payload ({})",
                    size.0,
                    super::MAX_PACKET_SIZE.0
                ),
            )),
            other => Ok(other),
        }
    }

    /// A required rate such as `"5mbit"`, never zero.
    pub(crate) fn rate(&mut self, key: &'static str) -> Result<Rate, ScenarioError> {
        let value = self.required(key)?;
        let text = self
            .string(key)?
            .ok_or_else(|| self.wrong_type(key, value, "a rate string such as \"2mbit\""))?;
        rate_at(self.source, text, value.span(), &self.key(key))
    }

    /// The text the table came from (for values parsed by hand).
    pub(crate) fn source(&self) -> Source<'a> {
        self.source
    }

    /// An optional rate such as `"2mbit"`, never zero when present.
    pub(crate) fn optional_rate(
        &mut self,
        key: &'static str,
    ) -> Result<Option<Rate>, ScenarioError> {
        if self.optional(key).is_none() {
            return Ok(None);
        }
        self.rate(key).map(Some)
    }

    /// A required duration such as `"1.5s"`, never zero.
    pub(crate) fn duration(&mut self, key: &'static str) -> Result<Duration, ScenarioError> {
        self.duration_checked(key, false)
    }

    /// A required duration that may be zero (a moment from the start of
    /// the run, such as an outage's `at = "0s"`).
    pub(crate) fn duration_or_zero(
        &mut self,
        key: &'static str,
    ) -> Result<Duration, ScenarioError> {
        self.duration_checked(key, true)
    }

    fn duration_checked(
        &mut self,
        key: &'static str,
        zero_ok: bool,
    ) -> Result<Duration, ScenarioError> {
        let value = self.required(key)?;
        let text = self
            .string(key)?
            .ok_or_else(|| self.wrong_type(key, value, "a duration string such as \"1.5s\""))?;
        duration_at(self.source, text, value.span(), &self.key(key), zero_ok)
    }

    /// An optional duration such as `"200ms"`, never zero when present.
    pub(crate) fn optional_duration(
        &mut self,
        key: &'static str,
    ) -> Result<Option<Duration>, ScenarioError> {
        if self.optional(key).is_none() {
            return Ok(None);
        }
        self.duration(key).map(Some)
    }

    /// Refuses every key that was not taken; `what` describes the table's
    /// kind for the message (e.g. `queue kind "red"`).
    pub(crate) fn finish(self, what: &str) -> Result<(), ScenarioError> {
        let unknown = self
            .table
            .keys()
            .find(|key| !self.taken.contains(key.as_str()));
        match unknown {
            Some(key) => {
                let expected: Vec<&str> = self.taken.iter().copied().collect();
                Err(self.error(
                    key,
                    format!(
                        "unknown key `{key}` for {what}; expected one of: {}",
                        expected.join(", ")
                    ),
                ))
            }
            None => Ok(()),
        }
    }
}
