//! The emulator's option values as a user writes them on the command line:
//! rates, delays, queues and loss models. Each parser returns the simulator's
//! own configuration type, so the emulator runs exactly the models a scenario
//! file would describe (`fairstream_sim::scenario`), and each error says what
//! was wrong with the text and what would have been accepted.

use std::time::Duration;

use fairstream_proto::units::{parse_duration, Bytes, Rate, UnitError};
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::{Limit, QueueConfig};
use fairstream_sim::scenario::{DEFAULT_QUEUE_PACKETS, DEFAULT_RED_WEIGHT};
use thiserror::Error;

/// The capacity of the queue when no queue is given: the simulator's
/// default ([`DEFAULT_QUEUE_PACKETS`]), so that an emulated link and a
/// simulated one without a `queue` key buffer alike.
pub const DEFAULT_QUEUE: QueueConfig = QueueConfig::DropTail {
    limit: Limit::Packets(DEFAULT_QUEUE_PACKETS as usize),
};

/// An option value that could not be understood. The message names the
/// text; the caller adds the option's name (clap does it for the CLI).
#[derive(Clone, Debug, PartialEq, Error)]
#[error("`{text}`: {reason}")]
pub struct OptionError {
    /// The text as given.
    pub text: String,
    /// What was wrong with it, and what would be accepted.
    pub reason: String,
}

fn error(text: &str, reason: impl Into<String>) -> OptionError {
    OptionError {
        text: text.to_owned(),
        reason: reason.into(),
    }
}

/// Says "no unit" plainly when the unit is missing.
fn unit_error(text: &str, error_value: &UnitError, example: &str) -> OptionError {
    match error_value {
        UnitError::BadUnit { unit, expected, .. } if unit.is_empty() => error(
            text,
            format!("no unit: write e.g. {example} (units: {expected})"),
        ),
        other => error(text, other.to_string()),
    }
}

/// The largest UDP payload the emulator forwards, bytes.
const MAX_DATAGRAM_BYTES: u64 = 65_507;

/// The most packets a queue counted in packets may hold: the emulator holds
/// real datagrams of up to 64 KiB, so a count is bounded so that a full
/// queue stays within the byte maximum (1 GiB, 16,391 packets).
const MAX_QUEUE_PACKETS: u64 = fairstream_sim::limits::MAX_QUEUE_BYTES / MAX_DATAGRAM_BYTES;

/// A link rate such as `2mbit`, `250kbit` or `125kB/s` (SI prefixes, as `tc`
/// writes them; [`Rate`]'s parser). Zero is refused: a link that never
/// sends is not a link.
pub fn parse_rate(text: &str) -> Result<Rate, OptionError> {
    let rate: Rate = text
        .parse()
        .map_err(|e| unit_error(text, &e, "2mbit or 250kbit"))?;
    if rate.bits_per_sec() <= 0.0 {
        return Err(error(text, "the rate must be greater than zero"));
    }
    fairstream_sim::limits::check_rate(rate.bits_per_sec()).map_err(|e| error(text, e))?;
    Ok(rate)
}

/// A one-way propagation delay such as `40ms`, `0.1s` or `0ms`.
pub fn parse_delay(text: &str) -> Result<Duration, OptionError> {
    let delay = parse_duration(text).map_err(|e| unit_error(text, &e, "40ms"))?;
    fairstream_sim::limits::check_duration(delay).map_err(|e| error(text, e))?;
    Ok(delay)
}

/// A positive duration such as `1s` (stats intervals, run lengths).
pub fn parse_positive_duration(text: &str) -> Result<Duration, OptionError> {
    let duration = parse_duration(text).map_err(|e| unit_error(text, &e, "1s"))?;
    if duration.is_zero() {
        return Err(error(text, "the duration must be greater than zero"));
    }
    fairstream_sim::limits::check_duration(duration).map_err(|e| error(text, e))?;
    Ok(duration)
}

/// A time the link is cut, `START+LENGTH` after the emulator started
/// (`10s+5s`: from 10 s to 15 s).
pub fn parse_outage(text: &str) -> Result<super::Outage, OptionError> {
    let (start, length) = text
        .split_once('+')
        .ok_or_else(|| error(text, "expected START+LENGTH, e.g. 10s+5s"))?;
    let start = parse_duration(start.trim()).map_err(|e| unit_error(text, &e, "10s+5s"))?;
    let length = parse_positive_duration(length.trim())?;
    fairstream_sim::limits::check_duration(start + length).map_err(|e| error(text, e))?;
    Ok(super::Outage { start, length })
}

/// The shortest idle time [`parse_client_idle`] takes: a flow that pauses
/// for a moment (a stalled process, a long round trip) must not lose its
/// place, and with it the upstream port its peer knows it by.
pub const MIN_CLIENT_IDLE: Duration = Duration::from_secs(1);

/// How long a client may be idle before the emulator forgets it, such as
/// `60s` or `5min`: from [`MIN_CLIENT_IDLE`] to a day.
pub fn parse_client_idle(text: &str) -> Result<Duration, OptionError> {
    let idle = parse_duration(text).map_err(|e| unit_error(text, &e, "60s"))?;
    if idle < MIN_CLIENT_IDLE {
        return Err(error(
            text,
            format!(
                "the idle time must be at least {} s, so that a flow pausing for a moment \
                 keeps its place",
                MIN_CLIENT_IDLE.as_secs()
            ),
        ));
    }
    fairstream_sim::limits::check_duration(idle).map_err(|e| error(text, e))?;
    Ok(idle)
}

/// A probability written as a fraction (`0.02`) or a percentage (`2%`).
fn parse_probability(text: &str, what: &str) -> Result<f64, OptionError> {
    let trimmed = text.trim();
    let (number, scale) = match trimmed.strip_suffix('%') {
        Some(number) => (number.trim(), 100.0),
        None => (trimmed, 1.0),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| error(text, format!("{what} must be a number such as 0.02 or 2%")))?;
    let p = value / scale;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(error(
            text,
            format!("{what} must be between 0 and 1 (0% and 100%)"),
        ))
    }
}

/// A channel loss model:
///
/// - `none`: nothing is lost;
/// - `2%`, `0.02` or `bernoulli:0.02`: each packet is lost independently
///   with that probability ([`LossConfig::Bernoulli`]);
/// - `ge:p_good_good,p_bad_bad,loss_good,loss_bad` (or `gilbert-elliott:…`):
///   the simulator's Gilbert-Elliott chain, stepped once per packet, in the
///   order of its scenario keys ([`LossConfig::GilbertElliott`]; paper 000
///   §3.4's channel is `ge:0.95,0.94,0.01,0.05`).
pub fn parse_loss(text: &str) -> Result<LossConfig, OptionError> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("none") {
        return Ok(LossConfig::None);
    }
    let (kind, parameters) = match trimmed.split_once(':') {
        Some((kind, parameters)) => (kind.trim().to_ascii_lowercase(), parameters),
        None => ("bernoulli".to_owned(), trimmed),
    };
    match kind.as_str() {
        "bernoulli" => Ok(LossConfig::Bernoulli {
            p: parse_probability(parameters, "the loss probability").map_err(|e| OptionError {
                text: text.to_owned(),
                reason: format!(
                    "{} (or `none`, or `ge:p_good_good,p_bad_bad,loss_good,loss_bad`)",
                    e.reason
                ),
            })?,
        }),
        "ge" | "gilbert-elliott" => {
            const NAMES: [&str; 4] = ["p_good_good", "p_bad_bad", "loss_good", "loss_bad"];
            let values: Vec<&str> = parameters.split(',').map(str::trim).collect();
            if values.len() != NAMES.len() {
                return Err(error(
                    text,
                    format!(
                        "Gilbert-Elliott needs 4 comma-separated probabilities \
                         ge:p_good_good,p_bad_bad,loss_good,loss_bad (e.g. ge:0.95,0.94,0.01,0.05), \
                         got {}",
                        values.len()
                    ),
                ));
            }
            let mut probabilities = [0.0; 4];
            for ((slot, value), name) in probabilities.iter_mut().zip(&values).zip(NAMES) {
                *slot = parse_probability(value, name)
                    .map_err(|e| error(text, format!("{name} `{value}`: {}", e.reason)))?;
            }
            let [p_good_good, p_bad_bad, loss_good, loss_bad] = probabilities;
            Ok(LossConfig::GilbertElliott {
                p_good_good,
                p_bad_bad,
                loss_good,
                loss_bad,
            })
        }
        other => Err(error(
            text,
            format!(
                "unknown loss model `{other}`: expected `none`, a probability (2% or 0.02), \
                 or ge:p_good_good,p_bad_bad,loss_good,loss_bad"
            ),
        )),
    }
}

/// A queue in front of the link's transmitter:
///
/// - `50`: drop-tail holding at most 50 packets;
/// - `64kB`, `64KiB`, `96000B`: drop-tail holding at most that many bytes
///   of datagrams (a size with a unit, [`Bytes`]'s parser);
/// - `red:min_th,max_th,max_p[,limit]`: RED in packet mode (Floyd and
///   Jacobson 1993) with the simulator's defaults for the rest: w_q =
///   [`DEFAULT_RED_WEIGHT`], gentle, and a hard limit of `limit` packets or
///   else max(100, ⌈2·max_th⌉), as a scenario's `{ kind = "red" }` has them.
pub fn parse_queue(text: &str) -> Result<QueueConfig, OptionError> {
    let trimmed = text.trim();
    if let Some(parameters) = trimmed
        .strip_prefix("red:")
        .or_else(|| trimmed.strip_prefix("RED:"))
    {
        return parse_red(text, parameters);
    }
    if !trimmed.is_empty() && trimmed.bytes().all(|c| c.is_ascii_digit()) {
        let packets: usize = trimmed
            .parse()
            .map_err(|_| error(text, "the packet count is too large"))?;
        if packets == 0 {
            return Err(error(text, "the queue must hold at least 1 packet"));
        }
        let most = MAX_QUEUE_PACKETS;
        if packets as u64 > most {
            return Err(error(
                text,
                format!(
                    "the queue holds at most {most} packets (1 GiB of the largest datagrams); \
                     give a size such as 64MB for more"
                ),
            ));
        }
        return Ok(QueueConfig::DropTail {
            limit: Limit::Packets(packets),
        });
    }
    let bytes: Bytes = trimmed.parse().map_err(|e: UnitError| {
        error(
            text,
            format!(
                "{e}; expected a packet count (50), a size (64kB) or red:min_th,max_th,max_p[,limit]"
            ),
        )
    })?;
    if bytes.get() == 0 {
        return Err(error(text, "the queue must hold at least 1 byte"));
    }
    fairstream_sim::limits::check_queue_bytes(bytes.get()).map_err(|e| error(text, e))?;
    Ok(QueueConfig::DropTail {
        limit: Limit::Bytes(bytes.get()),
    })
}

fn parse_red(text: &str, parameters: &str) -> Result<QueueConfig, OptionError> {
    let values: Vec<&str> = parameters.split(',').map(str::trim).collect();
    if !(3..=4).contains(&values.len()) {
        return Err(error(
            text,
            "RED needs red:min_th,max_th,max_p[,limit] (thresholds in packets, e.g. red:5,15,0.1)",
        ));
    }
    let number = |index: usize, name: &str| -> Result<f64, OptionError> {
        values[index]
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| {
                error(
                    text,
                    format!("RED {name} `{}` is not a number", values[index]),
                )
            })
    };
    let min_th = number(0, "min_th")?;
    let max_th = number(1, "max_th")?;
    let max_p = number(2, "max_p")?;
    let limit = match values.get(3) {
        Some(limit) => limit
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                error(
                    text,
                    format!("RED limit `{limit}` must be a packet count of at least 1"),
                )
            })?,
        // The scenario default: room for gentle RED's ramp to 2·max_th.
        None => (2.0 * max_th).ceil().clamp(100.0, 1e9) as usize,
    };
    // The hard limit holds real datagrams too: bounded as a packet count is.
    if limit as u64 > MAX_QUEUE_PACKETS {
        return Err(error(
            text,
            format!(
                "RED's hard limit of {limit} packets (given, or 2·max_th) exceeds the \
                 {MAX_QUEUE_PACKETS} packets (1 GiB of the largest datagrams) a queue may hold"
            ),
        ));
    }
    let config = QueueConfig::Red {
        min_th,
        max_th,
        max_p,
        weight: DEFAULT_RED_WEIGHT,
        limit: Limit::Packets(limit),
        gentle: true,
        idle_packet_time: Duration::from_millis(1),
        // The emulator forwards plain UDP: no ECN field to mark yet.
        ecn: false,
    };
    // The queue checks the thresholds; build one now so that a bad value is
    // reported as an option error, not when the emulator starts.
    fairstream_sim::queue::Queue::<Sized1>::new(config, fairstream_proto::time::Instant::ZERO)
        .map_err(|e| error(text, e.to_string()))?;
    Ok(config)
}

/// A stand-in packet type to validate a queue configuration.
struct Sized1;

impl fairstream_sim::queue::SimPacket for Sized1 {
    fn size_bytes(&self) -> u32 {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses() {
        assert_eq!(parse_loss("none").unwrap(), LossConfig::None);
        assert_eq!(parse_loss("2%").unwrap(), LossConfig::Bernoulli { p: 0.02 });
        assert_eq!(parse_loss("0.1").unwrap(), LossConfig::Bernoulli { p: 0.1 });
        assert_eq!(
            parse_loss("bernoulli:5%").unwrap(),
            LossConfig::Bernoulli { p: 0.05 }
        );
        assert_eq!(
            parse_loss("ge:0.95,0.94,0.01,0.05").unwrap(),
            LossConfig::PAPER_000
        );
        assert_eq!(
            parse_loss("gilbert-elliott: 0.95, 0.94, 0.01, 0.05").unwrap(),
            LossConfig::PAPER_000
        );
        for (bad, says) in [
            ("2x", "probability"),
            ("150%", "between 0 and 1"),
            ("-0.1", "between 0 and 1"),
            ("ge:0.9,0.9,0.1", "4 comma-separated"),
            ("ge:0.9,0.9,0.1,1.5", "loss_bad"),
            ("ge:0.9,x,0.1,0.5", "p_bad_bad"),
            ("markov:0.1", "unknown loss model"),
            ("", "probability"),
        ] {
            let err = parse_loss(bad).unwrap_err();
            assert_eq!(err.text, bad);
            assert!(err.to_string().contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn queues() {
        assert_eq!(
            parse_queue("50").unwrap(),
            QueueConfig::DropTail {
                limit: Limit::Packets(50)
            }
        );
        assert_eq!(
            parse_queue("64kB").unwrap(),
            QueueConfig::DropTail {
                limit: Limit::Bytes(64_000)
            }
        );
        assert_eq!(
            parse_queue("64KiB").unwrap(),
            QueueConfig::DropTail {
                limit: Limit::Bytes(65_536)
            }
        );
        let QueueConfig::Red {
            min_th,
            max_th,
            max_p,
            limit,
            gentle,
            ..
        } = parse_queue("red:5,15,0.1").unwrap()
        else {
            panic!("not RED");
        };
        assert_eq!((min_th, max_th, max_p, gentle), (5.0, 15.0, 0.1, true));
        assert_eq!(limit, Limit::Packets(100));
        assert!(matches!(
            parse_queue("red:5,80,0.1,40").unwrap(),
            QueueConfig::Red {
                limit: Limit::Packets(40),
                ..
            }
        ));
        for (bad, says) in [
            ("0", "at least 1 packet"),
            ("lots", "packet count"),
            ("0kB", "at least 1 byte"),
            ("red:15,5,0.1", "max_th"),
            ("red:5,15", "red:min_th,max_th,max_p"),
            ("red:5,15,2", "max_p"),
            ("red:a,15,0.1", "min_th"),
            ("red:5,15,0.1,0", "limit"),
        ] {
            let err = parse_queue(bad).unwrap_err();
            assert!(err.to_string().contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn rates_and_delays() {
        assert_eq!(parse_rate("2mbit").unwrap().bits_per_sec(), 2e6);
        assert_eq!(parse_rate("250kbit").unwrap().bits_per_sec(), 250e3);
        assert!(parse_rate("fast").unwrap_err().to_string().contains("fast"));
        assert!(parse_rate("0mbit").unwrap_err().reason.contains("zero"));
        assert!(parse_rate("2").unwrap_err().reason.contains("no unit"));
        assert_eq!(parse_delay("40ms").unwrap(), Duration::from_millis(40));
        assert_eq!(parse_delay("0ms").unwrap(), Duration::ZERO);
        assert!(parse_delay("40").unwrap_err().reason.contains("no unit"));
        assert!(parse_positive_duration("0s").is_err());
        assert_eq!(
            parse_positive_duration("1.5s").unwrap(),
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn values_beyond_the_maxima_are_refused() {
        assert!(parse_rate("1e30bit")
            .unwrap_err()
            .to_string()
            .contains("100 Gbit/s"));
        assert!(parse_rate("100gbit").is_ok());
        assert!(parse_queue("1000000000000")
            .unwrap_err()
            .to_string()
            .contains("at most 16391 packets"));
        assert!(parse_queue("16391").is_ok());
        assert!(parse_queue("16392").is_err());
        assert!(parse_queue("2GB")
            .unwrap_err()
            .to_string()
            .contains("1 GiB"));
        assert!(parse_queue("64kB").is_ok());
        // RED's hard limit, given or derived from max_th, is bounded alike.
        assert!(parse_queue("red:5,15,0.1,1000000000")
            .unwrap_err()
            .to_string()
            .contains("16391 packets"));
        assert!(parse_queue("red:5,9000,0.1")
            .unwrap_err()
            .to_string()
            .contains("18000 packets"));
        assert!(parse_queue("red:5,15,0.1,16391").is_ok());
        // The fuzz target `emulate_options` found this one (issue 13).
        assert!(parse_queue("red:1,9600,1")
            .unwrap_err()
            .to_string()
            .contains("16391 packets"));
        assert!(parse_queue("red:1,8000,1").is_ok());
        assert!(parse_delay("25h")
            .unwrap_err()
            .to_string()
            .contains("one day"));
    }

    #[test]
    fn client_idle_times() {
        assert_eq!(parse_client_idle("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_client_idle("1s").unwrap(), MIN_CLIENT_IDLE);
        assert_eq!(
            parse_client_idle("24h").unwrap(),
            Duration::from_secs(86_400)
        );
        for (bad, says) in [
            ("999ms", "at least 1 s"),
            ("0s", "at least 1 s"),
            ("25h", "one day"),
            ("60", "no unit"),
            ("soon", "soon"),
        ] {
            let message = parse_client_idle(bad).unwrap_err().to_string();
            assert!(message.contains(bad) && message.contains(says), "{message}");
        }
    }
}
