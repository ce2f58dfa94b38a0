//! The [`DccpOption`] enum: one option, its encoding and decoding.

use super::feature::FeatureProblem;
use super::{
    feature_name, kind, option_name, AckVector, ElapsedTime, Feature, LossEventRate, LossInterval,
    LossIntervals, OptionError, MAX_OPTION_DATA_LEN,
};

/// Whether option type `kind` has a decoder here (everything else is
/// [`DccpOption::Unknown`]).
fn is_decoded(kind: u8) -> bool {
    matches!(kind, 0..=2 | 32..=44 | 192..=195)
}

/// One DCCP option.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DccpOption {
    /// Padding (0): no meaning (RFC 4340 §5.8.1).
    Padding,
    /// Mandatory (1): the next option must be understood (RFC 4340 §5.8.2).
    Mandatory,
    /// Slow Receiver (2): the receiver asks the sender not to speed up (RFC
    /// 4340 §11.6).
    SlowReceiver,
    /// Change L (32): the sender asks to change its own feature (§6.1).
    ChangeL(Feature),
    /// Confirm L (33): confirms a Change R, for the sender's feature (§6.2).
    ConfirmL(Feature),
    /// Change R (34): the sender asks to change the receiver's feature (§6.1).
    ChangeR(Feature),
    /// Confirm R (35): confirms a Change L, for the receiver's feature (§6.2).
    ConfirmR(Feature),
    /// Init Cookie (36): opaque server state echoed by the client (§8.1.4).
    InitCookie(Vec<u8>),
    /// NDP Count (37): packets without data since the last data packet (§7.7),
    /// 1-6 bytes on the wire.
    NdpCount(u64),
    /// Ack Vector (38 with nonce 0, 39 with nonce 1; §11.4).
    AckVector(AckVector),
    /// Data Dropped (40): block-encoded drop information (§11.7), kept raw.
    DataDropped(Vec<u8>),
    /// Timestamp (41): a 32-bit timestamp in units of 10 µs (§13.1).
    Timestamp(u32),
    /// Timestamp Echo (42): an echoed Timestamp, optionally with the time
    /// since it was received (§13.3).
    TimestampEcho {
        /// The echoed Timestamp value.
        timestamp: u32,
        /// Time between receiving the Timestamp and sending this echo.
        elapsed: Option<ElapsedTime>,
    },
    /// Elapsed Time (43): time between receiving the acknowledged packet and
    /// sending the acknowledgement (§13.2).
    ElapsedTime(ElapsedTime),
    /// Data Checksum (44): CRC-32c of the application data (§9.3).
    DataChecksum(u32),
    /// Loss Event Rate (192, CCID 3/4; RFC 4342 §8.5).
    LossEventRate(LossEventRate),
    /// Loss Intervals (193, CCID 3/4; RFC 4342 §8.6).
    LossIntervals(LossIntervals),
    /// Receive Rate (194, CCID 3/4; RFC 4342 §8.3), bytes per second.
    ReceiveRate(u32),
    /// Dropped Packets (195, CCID 4; RFC 5622 §8), kept raw: its record
    /// layout is not decoded here.
    DroppedPackets(Vec<u8>),
    /// A reserved or CCID-specific option without a decoder here. Types 3-31
    /// are single-byte, so their `data` is empty.
    Unknown {
        /// The option type.
        kind: u8,
        /// The data after the type and length bytes.
        data: Vec<u8>,
    },
}

impl DccpOption {
    /// The option type byte.
    pub fn kind(&self) -> u8 {
        match self {
            DccpOption::Padding => kind::PADDING,
            DccpOption::Mandatory => kind::MANDATORY,
            DccpOption::SlowReceiver => kind::SLOW_RECEIVER,
            DccpOption::ChangeL(_) => kind::CHANGE_L,
            DccpOption::ConfirmL(_) => kind::CONFIRM_L,
            DccpOption::ChangeR(_) => kind::CHANGE_R,
            DccpOption::ConfirmR(_) => kind::CONFIRM_R,
            DccpOption::InitCookie(_) => kind::INIT_COOKIE,
            DccpOption::NdpCount(_) => kind::NDP_COUNT,
            DccpOption::AckVector(v) if v.nonce() => kind::ACK_VECTOR_NONCE_1,
            DccpOption::AckVector(_) => kind::ACK_VECTOR_NONCE_0,
            DccpOption::DataDropped(_) => kind::DATA_DROPPED,
            DccpOption::Timestamp(_) => kind::TIMESTAMP,
            DccpOption::TimestampEcho { .. } => kind::TIMESTAMP_ECHO,
            DccpOption::ElapsedTime(_) => kind::ELAPSED_TIME,
            DccpOption::DataChecksum(_) => kind::DATA_CHECKSUM,
            DccpOption::LossEventRate(_) => kind::LOSS_EVENT_RATE,
            DccpOption::LossIntervals(_) => kind::LOSS_INTERVALS,
            DccpOption::ReceiveRate(_) => kind::RECEIVE_RATE,
            DccpOption::DroppedPackets(_) => kind::DROPPED_PACKETS,
            DccpOption::Unknown { kind, .. } => *kind,
        }
    }

    /// The option's name.
    pub fn name(&self) -> &'static str {
        option_name(self.kind())
    }

    /// Whether this implementation decodes the option: `false` only for
    /// [`DccpOption::Unknown`]. The connection layer may know better (a
    /// CCID-specific option is understood only under its CCID).
    pub fn is_understood(&self) -> bool {
        !matches!(self, DccpOption::Unknown { .. })
    }

    /// The feature of a Change/Confirm option.
    pub fn feature(&self) -> Option<&Feature> {
        match self {
            DccpOption::ChangeL(f)
            | DccpOption::ConfirmL(f)
            | DccpOption::ChangeR(f)
            | DccpOption::ConfirmR(f) => Some(f),
            _ => None,
        }
    }

    /// Whether the option may appear on a DCCP-Data packet: the "DCCP-Data?"
    /// column of RFC 4340 §5.8 Table 3, and for CCID 3/4 RFC 4342 §8.3 and
    /// §8.5 ("Receive Rate options MUST NOT be sent on DCCP-Data packets",
    /// likewise Loss Event Rate). `None` where the table leaves it to a CCID
    /// and no rule is encoded here.
    pub fn allowed_on_data(&self) -> Option<bool> {
        match self {
            DccpOption::Padding
            | DccpOption::SlowReceiver
            | DccpOption::NdpCount(_)
            | DccpOption::Timestamp(_)
            | DccpOption::TimestampEcho { .. }
            | DccpOption::DataChecksum(_) => Some(true),
            DccpOption::Mandatory
            | DccpOption::ChangeL(_)
            | DccpOption::ConfirmL(_)
            | DccpOption::ChangeR(_)
            | DccpOption::ConfirmR(_)
            | DccpOption::InitCookie(_)
            | DccpOption::AckVector(_)
            | DccpOption::DataDropped(_)
            | DccpOption::ElapsedTime(_)
            | DccpOption::LossEventRate(_)
            | DccpOption::ReceiveRate(_) => Some(false),
            DccpOption::LossIntervals(_)
            | DccpOption::DroppedPackets(_)
            | DccpOption::Unknown { .. } => None,
        }
    }

    /// The number of data bytes after the type and length bytes.
    fn data_len(&self) -> usize {
        match self {
            DccpOption::Padding | DccpOption::Mandatory | DccpOption::SlowReceiver => 0,
            DccpOption::ChangeL(f)
            | DccpOption::ConfirmL(f)
            | DccpOption::ChangeR(f)
            | DccpOption::ConfirmR(f) => 1 + f.value_len(),
            DccpOption::InitCookie(d)
            | DccpOption::DataDropped(d)
            | DccpOption::DroppedPackets(d) => d.len(),
            DccpOption::Unknown { data, .. } => data.len(),
            DccpOption::NdpCount(n) => ndp_len(*n),
            DccpOption::AckVector(v) => v.len(),
            DccpOption::Timestamp(_)
            | DccpOption::DataChecksum(_)
            | DccpOption::LossEventRate(_)
            | DccpOption::ReceiveRate(_) => 4,
            DccpOption::TimestampEcho { elapsed, .. } => {
                4 + elapsed.map_or(0, ElapsedTime::encoded_len)
            }
            DccpOption::ElapsedTime(t) => t.encoded_len(),
            DccpOption::LossIntervals(l) => 1 + LossInterval::LEN * l.intervals.len(),
        }
    }

    /// The encoded size: 1 for single-byte types (0-31), otherwise 2 plus the
    /// data.
    pub fn encoded_len(&self) -> usize {
        if self.kind() < 32 {
            1
        } else {
            2 + self.data_len()
        }
    }

    /// Checks that the option can be encoded exactly as it is.
    pub fn validate(&self) -> Result<(), OptionError> {
        let fail = |reason: String| OptionError::Unencodable {
            kind: self.kind(),
            name: self.name(),
            reason,
        };
        if let DccpOption::Unknown { kind, data } = self {
            if is_decoded(*kind) {
                return Err(fail(format!(
                    "type {kind} has its own variant; Unknown would not parse back as itself"
                )));
            }
            if *kind < 32 && !data.is_empty() {
                return Err(fail(
                    "a single-byte option (type 0-31) carries no data".into(),
                ));
            }
        }
        if self.kind() >= 32 && self.data_len() > MAX_OPTION_DATA_LEN {
            return Err(fail(format!(
                "{} data bytes, at most {MAX_OPTION_DATA_LEN} fit",
                self.data_len()
            )));
        }
        match self {
            DccpOption::ChangeL(f)
            | DccpOption::ConfirmL(f)
            | DccpOption::ChangeR(f)
            | DccpOption::ConfirmR(f) => f.validate().map_err(|problem| {
                fail(match problem {
                    FeatureProblem::Length { found, expected } => {
                        format!("{} value has {found} bytes, expected {expected}", f.name())
                    }
                    FeatureProblem::Value { value, expected } => {
                        format!("{} value {value}, expected {expected}", f.name())
                    }
                })
            }),
            DccpOption::NdpCount(n) if *n >= 1 << 48 => {
                Err(fail(format!("count {n} does not fit in 6 bytes")))
            }
            DccpOption::LossIntervals(l) => {
                if l.intervals.len() > LossIntervals::MAX_INTERVALS {
                    return Err(fail(format!(
                        "{} intervals, at most {} fit",
                        l.intervals.len(),
                        LossIntervals::MAX_INTERVALS
                    )));
                }
                match l
                    .intervals
                    .iter()
                    .enumerate()
                    .find_map(|(i, interval)| interval.out_of_range().map(|bad| (i, bad)))
                {
                    Some((i, (field, value, bound))) => Err(fail(format!(
                        "interval {i}: {field} {value} is not below {bound}"
                    ))),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Appends the encoded option (assumed validated).
    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.kind());
        if self.kind() < 32 {
            return;
        }
        // Validated: data_len() <= 253, so the length fits in a byte.
        out.push(u8::try_from(2 + self.data_len()).unwrap_or(u8::MAX));
        match self {
            // Single-byte options returned above.
            DccpOption::Padding | DccpOption::Mandatory | DccpOption::SlowReceiver => {}
            DccpOption::ChangeL(f)
            | DccpOption::ConfirmL(f)
            | DccpOption::ChangeR(f)
            | DccpOption::ConfirmR(f) => {
                out.push(f.number());
                f.encode_value(out);
            }
            DccpOption::InitCookie(d)
            | DccpOption::DataDropped(d)
            | DccpOption::DroppedPackets(d) => out.extend_from_slice(d),
            DccpOption::Unknown { data, .. } => out.extend_from_slice(data),
            DccpOption::NdpCount(n) => {
                let bytes = n.to_be_bytes();
                let start = bytes.len() - ndp_len(*n);
                out.extend_from_slice(bytes.get(start..).unwrap_or_default());
            }
            DccpOption::AckVector(v) => out.extend_from_slice(v.as_bytes()),
            DccpOption::Timestamp(v)
            | DccpOption::DataChecksum(v)
            | DccpOption::ReceiveRate(v)
            | DccpOption::LossEventRate(LossEventRate(v)) => {
                out.extend_from_slice(&v.to_be_bytes())
            }
            DccpOption::TimestampEcho { timestamp, elapsed } => {
                out.extend_from_slice(&timestamp.to_be_bytes());
                if let Some(t) = elapsed {
                    t.encode(out);
                }
            }
            DccpOption::ElapsedTime(t) => t.encode(out),
            DccpOption::LossIntervals(l) => {
                out.push(l.skip_length);
                for interval in &l.intervals {
                    interval.encode(out);
                }
            }
        }
    }

    /// Decodes the option of type `kind` with `data` (after the type and
    /// length bytes); `offset` and `length` are for errors.
    pub(super) fn decode(kind: u8, data: &[u8], offset: usize) -> Result<DccpOption, OptionError> {
        let name = option_name(kind);
        // `data` comes from an option whose length byte is data.len() + 2.
        let length = u8::try_from(data.len() + 2).unwrap_or(u8::MAX);
        let bad_length = |expected: &'static str| OptionError::BadLength {
            kind,
            name,
            offset,
            length,
            expected,
        };
        let u32_of = |expected| -> Result<u32, OptionError> {
            match *data {
                [a, b, c, d] => Ok(u32::from_be_bytes([a, b, c, d])),
                _ => Err(bad_length(expected)),
            }
        };
        Ok(match kind {
            kind::CHANGE_L | kind::CONFIRM_L | kind::CHANGE_R | kind::CONFIRM_R => {
                let Some((&number, value)) = data.split_first() else {
                    return Err(bad_length("at least 3 (type, length, feature number)"));
                };
                let feature = Feature::decode(number, value).map_err(|problem| match problem {
                    FeatureProblem::Length { found, expected } => OptionError::BadFeatureLength {
                        kind,
                        name,
                        offset,
                        feature: number,
                        feature_name: feature_name(number),
                        found,
                        expected,
                    },
                    FeatureProblem::Value { value, expected } => OptionError::BadFeatureValue {
                        kind,
                        name,
                        offset,
                        feature: number,
                        feature_name: feature_name(number),
                        value,
                        expected,
                    },
                })?;
                match kind {
                    kind::CHANGE_L => DccpOption::ChangeL(feature),
                    kind::CONFIRM_L => DccpOption::ConfirmL(feature),
                    kind::CHANGE_R => DccpOption::ChangeR(feature),
                    _ => DccpOption::ConfirmR(feature),
                }
            }
            kind::INIT_COOKIE => DccpOption::InitCookie(data.to_vec()),
            kind::NDP_COUNT => {
                // RFC 4340 §7.7: the NDP Count option has length 3 to 8.
                if data.is_empty() || data.len() > 6 {
                    return Err(bad_length("3 to 8"));
                }
                DccpOption::NdpCount(data.iter().fold(0, |n, &b| (n << 8) | u64::from(b)))
            }
            kind::ACK_VECTOR_NONCE_0 | kind::ACK_VECTOR_NONCE_1 => {
                // At most 253 bytes of data: the length byte bounds it.
                let vector = AckVector::from_bytes(kind == kind::ACK_VECTOR_NONCE_1, data)
                    .map_err(|_| bad_length("at most 255"))?;
                DccpOption::AckVector(vector)
            }
            kind::DATA_DROPPED => DccpOption::DataDropped(data.to_vec()),
            kind::TIMESTAMP => DccpOption::Timestamp(u32_of("6")?),
            kind::TIMESTAMP_ECHO => {
                // RFC 4340 §13.3: length 6, 8 or 10 (no Elapsed Time, or a 2- or 4-byte one).
                let (timestamp, elapsed) = match *data {
                    [a, b, c, d] => (u32::from_be_bytes([a, b, c, d]), None),
                    [a, b, c, d, e, f] => (
                        u32::from_be_bytes([a, b, c, d]),
                        Some(ElapsedTime(u32::from(u16::from_be_bytes([e, f])))),
                    ),
                    [a, b, c, d, e, f, g, h] => (
                        u32::from_be_bytes([a, b, c, d]),
                        Some(ElapsedTime(u32::from_be_bytes([e, f, g, h]))),
                    ),
                    _ => return Err(bad_length("6, 8 or 10")),
                };
                DccpOption::TimestampEcho { timestamp, elapsed }
            }
            kind::ELAPSED_TIME => DccpOption::ElapsedTime(match *data {
                // RFC 4340 §13.2: length 4 or 6.
                [a, b] => ElapsedTime(u32::from(u16::from_be_bytes([a, b]))),
                [a, b, c, d] => ElapsedTime(u32::from_be_bytes([a, b, c, d])),
                _ => return Err(bad_length("4 or 6")),
            }),
            kind::DATA_CHECKSUM => DccpOption::DataChecksum(u32_of("6")?),
            kind::LOSS_EVENT_RATE => DccpOption::LossEventRate(LossEventRate(u32_of("6")?)),
            kind::RECEIVE_RATE => DccpOption::ReceiveRate(u32_of("6")?),
            kind::LOSS_INTERVALS => {
                // RFC 4342 §8.6: Skip Length, then 9-byte records.
                let Some((&skip_length, records)) = data.split_first() else {
                    return Err(bad_length("3 + 9n"));
                };
                let chunks = records.chunks_exact(LossInterval::LEN);
                if !chunks.remainder().is_empty() {
                    return Err(bad_length("3 + 9n"));
                }
                let intervals = chunks
                    .filter_map(|c| <[u8; 9]>::try_from(c).ok())
                    .map(LossInterval::decode)
                    .collect();
                DccpOption::LossIntervals(LossIntervals {
                    skip_length,
                    intervals,
                })
            }
            kind::DROPPED_PACKETS => DccpOption::DroppedPackets(data.to_vec()),
            _ => DccpOption::Unknown {
                kind,
                data: data.to_vec(),
            },
        })
    }
}

/// The smallest number of bytes (1-6) that holds an NDP Count.
fn ndp_len(n: u64) -> usize {
    let bits = 64 - n.leading_zeros() as usize;
    bits.div_ceil(8).clamp(1, 6)
}
