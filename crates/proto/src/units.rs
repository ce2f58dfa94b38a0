//! Quantities whose unit matters, and parsers for the way users write them.
//!
//! Rates are bytes per second internally ([`Rate`]); users write bits per
//! second with SI prefixes (`250kbit`, `2mbit`, `1gbps`), as `tc` and iperf do.
//! Durations are written with a unit (`100ms`, `0.1s`, `20us`); sizes are plain
//! bytes (`1460`) or carry a unit (`1.5kB`, `64KiB`).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// What was wrong with a quantity a user wrote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The text was empty.
    #[error("empty {what}: expected e.g. {example}")]
    Empty {
        /// The kind of quantity (`rate`, `duration`, `size`).
        what: &'static str,
        /// An example of a valid value.
        example: &'static str,
    },
    /// The numeric part did not parse.
    #[error("invalid {what} `{text}`: `{number}` is not a number (e.g. {example})")]
    BadNumber {
        /// The kind of quantity.
        what: &'static str,
        /// The whole text given.
        text: String,
        /// The part that should have been a number.
        number: String,
        /// An example of a valid value.
        example: &'static str,
    },
    /// The unit is missing or unknown.
    #[error("invalid {what} `{text}`: unknown unit `{unit}` (expected one of {expected})")]
    BadUnit {
        /// The kind of quantity.
        what: &'static str,
        /// The whole text given.
        text: String,
        /// The unit found (possibly empty).
        unit: String,
        /// The units accepted.
        expected: &'static str,
    },
    /// The value is negative, not finite, or out of range.
    #[error("invalid {what} `{text}`: {reason}")]
    OutOfRange {
        /// The kind of quantity.
        what: &'static str,
        /// The whole text given.
        text: String,
        /// Why the value was refused.
        reason: &'static str,
    },
}

/// Splits `"2.5mbit"` into `(2.5, "mbit")`, checking the number.
fn split_number<'a>(
    text: &'a str,
    what: &'static str,
    example: &'static str,
) -> Result<(f64, &'a str), UnitError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(UnitError::Empty { what, example });
    }
    let bytes = trimmed.as_bytes();
    let is_number_char = |c: u8| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+' | b'_');
    let mut end = bytes
        .iter()
        .position(|&c| !is_number_char(c))
        .unwrap_or(bytes.len());
    // An exponent such as `1e-3` or `2E6` counts as part of the number only
    // when digits follow it (so `1e` stays a number with unit `e`).
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut digits_at = end + 1;
        if matches!(bytes.get(digits_at), Some(b'-' | b'+')) {
            digits_at += 1;
        }
        if bytes.get(digits_at).is_some_and(u8::is_ascii_digit) {
            end = digits_at
                + bytes[digits_at..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
        }
    }
    let (number, unit) = trimmed.split_at(end);
    let unit = unit.trim();
    let value: f64 = number
        .replace('_', "")
        .parse()
        .map_err(|_| UnitError::BadNumber {
            what,
            text: text.to_owned(),
            number: number.to_owned(),
            example,
        })?;
    if !value.is_finite() {
        return Err(UnitError::OutOfRange {
            what,
            text: text.to_owned(),
            reason: "not finite",
        });
    }
    if value < 0.0 {
        return Err(UnitError::OutOfRange {
            what,
            text: text.to_owned(),
            reason: "must not be negative",
        });
    }
    Ok((value, unit))
}

/// A data rate in bytes per second.
///
/// Always finite and non-negative when built through [`Rate::from_bytes_per_sec`]
/// or parsing; [`Rate::INFINITY`] stands for "no limit" (RFC 5348's initial
/// X_recv_set of {Infinity}).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Rate(f64);

impl Rate {
    /// Zero bytes per second.
    pub const ZERO: Rate = Rate(0.0);
    /// No limit.
    pub const INFINITY: Rate = Rate(f64::INFINITY);

    /// A rate of `bytes_per_sec` bytes per second; negative and NaN inputs give zero.
    pub fn from_bytes_per_sec(bytes_per_sec: f64) -> Rate {
        if bytes_per_sec.is_nan() || bytes_per_sec < 0.0 {
            Rate(0.0)
        } else {
            Rate(bytes_per_sec)
        }
    }

    /// A rate of `bits_per_sec` bits per second.
    pub fn from_bits_per_sec(bits_per_sec: f64) -> Rate {
        Rate::from_bytes_per_sec(bits_per_sec / 8.0)
    }

    /// Bytes per second.
    pub fn bytes_per_sec(self) -> f64 {
        self.0
    }

    /// Bits per second.
    pub fn bits_per_sec(self) -> f64 {
        self.0 * 8.0
    }

    /// Whether this is [`Rate::INFINITY`].
    pub fn is_infinite(self) -> bool {
        self.0.is_infinite()
    }

    /// The smaller of two rates.
    pub fn min(self, other: Rate) -> Rate {
        Rate(self.0.min(other.0))
    }

    /// The larger of two rates.
    pub fn max(self, other: Rate) -> Rate {
        Rate(self.0.max(other.0))
    }

    /// This rate multiplied by a non-negative factor.
    pub fn scaled(self, factor: f64) -> Rate {
        Rate::from_bytes_per_sec(self.0 * factor)
    }

    /// How long `bytes` take at this rate; `None` at rate zero.
    pub fn time_to_send(self, bytes: f64) -> Option<Duration> {
        if self.0 <= 0.0 {
            return None;
        }
        Duration::try_from_secs_f64(bytes / self.0).ok()
    }
}

impl FromStr for Rate {
    type Err = UnitError;

    /// Parses `250kbit`, `2mbit`, `1.5Mbps`, `1gbit`, `64000bit`, `100kB/s`.
    /// Bit units use SI prefixes (k = 1000), as `tc` does. A bare number is
    /// refused: it is ambiguous between bits and bytes.
    fn from_str(text: &str) -> Result<Rate, UnitError> {
        const EXPECTED: &str = "bit, kbit, mbit, gbit, bps, kbps, mbps, gbps, B/s, kB/s, MB/s";
        let (value, unit) = split_number(text, "rate", "2mbit")?;
        let lower = unit.to_ascii_lowercase();
        // `B/s` (capital B) is bytes per second; everything else is bits.
        let (prefix, bits_per_unit) = if unit.ends_with("B/s") {
            (lower.trim_end_matches("b/s"), 8.0)
        } else {
            let prefix = ["bit/s", "bit", "bps"]
                .iter()
                .find_map(|suffix| lower.strip_suffix(suffix))
                .unwrap_or("?");
            (prefix, 1.0)
        };
        let multiplier = match prefix {
            "" => 1.0,
            "k" => 1e3,
            "m" => 1e6,
            "g" => 1e9,
            _ => {
                return Err(UnitError::BadUnit {
                    what: "rate",
                    text: text.to_owned(),
                    unit: unit.to_owned(),
                    expected: EXPECTED,
                })
            }
        };
        let bits = value * multiplier * bits_per_unit;
        if !bits.is_finite() {
            return Err(UnitError::OutOfRange {
                what: "rate",
                text: text.to_owned(),
                reason: "too large",
            });
        }
        Ok(Rate::from_bits_per_sec(bits))
    }
}

impl fmt::Display for Rate {
    /// Bits per second with an SI prefix, e.g. `1.312 Mbit/s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.bits_per_sec();
        if bits.is_infinite() {
            write!(f, "unlimited")
        } else if bits >= 1e9 {
            write!(f, "{:.3} Gbit/s", bits / 1e9)
        } else if bits >= 1e6 {
            write!(f, "{:.3} Mbit/s", bits / 1e6)
        } else if bits >= 1e3 {
            write!(f, "{:.3} kbit/s", bits / 1e3)
        } else {
            write!(f, "{bits:.1} bit/s")
        }
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    /// The number of bytes.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl FromStr for Bytes {
    type Err = UnitError;

    /// Parses `1460` (bytes), `1460B`, `1.5kB` (1000), `64KiB` (1024), `1MB`, `1MiB`.
    fn from_str(text: &str) -> Result<Bytes, UnitError> {
        const EXPECTED: &str = "B, kB, KiB, MB, MiB, GB, GiB (or none for bytes)";
        let (value, unit) = split_number(text, "size", "1460")?;
        let factor = match unit {
            "" | "B" | "b" | "bytes" | "byte" => 1.0,
            "kB" | "KB" | "kb" => 1e3,
            "KiB" | "kiB" => 1024.0,
            "MB" | "mB" | "mb" => 1e6,
            "MiB" => 1024.0 * 1024.0,
            "GB" | "gb" => 1e9,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            _ => {
                return Err(UnitError::BadUnit {
                    what: "size",
                    text: text.to_owned(),
                    unit: unit.to_owned(),
                    expected: EXPECTED,
                })
            }
        };
        let bytes = value * factor;
        if bytes.fract() != 0.0 {
            return Err(UnitError::OutOfRange {
                what: "size",
                text: text.to_owned(),
                reason: "not a whole number of bytes",
            });
        }
        if bytes >= u64::MAX as f64 {
            return Err(UnitError::OutOfRange {
                what: "size",
                text: text.to_owned(),
                reason: "too large",
            });
        }
        Ok(Bytes(bytes as u64))
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} B", self.0)
    }
}

/// Parses a duration with a unit: `100ms`, `0.1s`, `250us`, `2min`, `1h`, `500ns`.
///
/// A bare number is refused (is `100` milliseconds or seconds?).
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    const EXPECTED: &str = "ns, us, ms, s, min, h";
    let (value, unit) = split_number(text, "duration", "100ms")?;
    let secs = match unit {
        "ns" => value * 1e-9,
        "us" | "µs" => value * 1e-6,
        "ms" => value * 1e-3,
        "s" | "sec" | "secs" => value,
        "min" | "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(UnitError::BadUnit {
                what: "duration",
                text: text.to_owned(),
                unit: unit.to_owned(),
                expected: EXPECTED,
            })
        }
    };
    Duration::try_from_secs_f64(secs).map_err(|_| UnitError::OutOfRange {
        what: "duration",
        text: text.to_owned(),
        reason: "too large",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        let r: Rate = "2mbit".parse().unwrap();
        assert_eq!(r.bits_per_sec(), 2e6);
        assert_eq!("250kbit".parse::<Rate>().unwrap().bytes_per_sec(), 31_250.0);
        assert_eq!("1.5Mbps".parse::<Rate>().unwrap().bits_per_sec(), 1.5e6);
        assert_eq!("1gbit".parse::<Rate>().unwrap().bits_per_sec(), 1e9);
        assert_eq!("100kB/s".parse::<Rate>().unwrap().bytes_per_sec(), 1e5);
        assert_eq!("64000bit".parse::<Rate>().unwrap().bits_per_sec(), 64e3);
        assert_eq!("1e6bit".parse::<Rate>().unwrap().bits_per_sec(), 1e6);
        assert_eq!("2.5E-1mbit".parse::<Rate>().unwrap().bits_per_sec(), 250e3);
        assert_eq!(parse_duration("1e-1s").unwrap(), Duration::from_millis(100));
    }

    #[test]
    fn bad_rates_name_the_problem() {
        let e = "2".parse::<Rate>().unwrap_err().to_string();
        assert!(e.contains("`2`") && e.contains("unit"), "{e}");
        let e = "fastmbit".parse::<Rate>().unwrap_err().to_string();
        assert!(e.contains("not a number"), "{e}");
        let e = "2furlongs".parse::<Rate>().unwrap_err().to_string();
        assert!(e.contains("furlongs"), "{e}");
        assert!("-1mbit".parse::<Rate>().is_err());
        assert!("".parse::<Rate>().is_err());
        assert!("1e400mbit".parse::<Rate>().is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("100ms").unwrap(), Duration::from_millis(100));
        assert_eq!(parse_duration("0.1s").unwrap(), Duration::from_millis(100));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("2min").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("100")
            .unwrap_err()
            .to_string()
            .contains("unit"));
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration("-5ms").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!("1460".parse::<Bytes>().unwrap(), Bytes(1460));
        assert_eq!("1460B".parse::<Bytes>().unwrap(), Bytes(1460));
        assert_eq!("1.5kB".parse::<Bytes>().unwrap(), Bytes(1500));
        assert_eq!("64KiB".parse::<Bytes>().unwrap(), Bytes(65536));
        assert!("1.5".parse::<Bytes>().is_err());
        assert!("12parsecs".parse::<Bytes>().is_err());
    }

    #[test]
    fn display() {
        assert_eq!(
            Rate::from_bits_per_sec(1_312_000.0).to_string(),
            "1.312 Mbit/s"
        );
        assert_eq!(Rate::INFINITY.to_string(), "unlimited");
    }
}
