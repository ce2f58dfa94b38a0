//! Feature values carried by Change L/R and Confirm L/R (RFC 4340 §6).

/// Feature numbers of RFC 4340 §6.4, Table 4.
pub mod number {
    /// Congestion Control ID (CCID), server-priority.
    pub const CCID: u8 = 1;
    /// Allow Short Seqnos, server-priority.
    pub const ALLOW_SHORT_SEQNOS: u8 = 2;
    /// Sequence Window, non-negotiable.
    pub const SEQUENCE_WINDOW: u8 = 3;
    /// ECN Incapable, server-priority.
    pub const ECN_INCAPABLE: u8 = 4;
    /// Ack Ratio, non-negotiable.
    pub const ACK_RATIO: u8 = 5;
    /// Send Ack Vector, server-priority.
    pub const SEND_ACK_VECTOR: u8 = 6;
    /// Send NDP Count, server-priority.
    pub const SEND_NDP_COUNT: u8 = 7;
    /// Minimum Checksum Coverage, server-priority.
    pub const MINIMUM_CHECKSUM_COVERAGE: u8 = 8;
    /// Check Data Checksum, server-priority.
    pub const CHECK_DATA_CHECKSUM: u8 = 9;
}

/// The most value bytes one Change/Confirm option can carry: 255 minus the
/// type, length and feature number bytes.
pub const MAX_FEATURE_VALUE_LEN: usize = 252;

/// A feature number and its value(s), as carried by Change L/R and Confirm
/// L/R options (RFC 4340 §6.1, §6.2).
///
/// RFC 4340 §6.3: server-priority (SP) features carry a preference list in
/// Change and the selected value followed by the preference list in Confirm,
/// so their values are lists here; non-negotiable (NN) features carry one
/// value. An empty value, as in the empty Confirm an endpoint sends for a
/// feature it does not understand (§6.6.7), is an empty list for SP features
/// and `None` for NN features.
///
/// Feature numbers without a decoder here (0, 10-127 reserved, 128-255
/// CCID-specific) are kept as [`Feature::Unknown`] with their raw value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// Congestion Control ID (feature 1, SP, one byte per CCID).
    Ccid(Vec<u8>),
    /// Allow Short Seqnos (feature 2, SP, boolean).
    AllowShortSeqnos(Vec<bool>),
    /// Sequence Window (feature 3, NN, 48-bit).
    SequenceWindow(Option<u64>),
    /// ECN Incapable (feature 4, SP, boolean).
    EcnIncapable(Vec<bool>),
    /// Ack Ratio (feature 5, NN, 16-bit).
    AckRatio(Option<u16>),
    /// Send Ack Vector (feature 6, SP, boolean).
    SendAckVector(Vec<bool>),
    /// Send NDP Count (feature 7, SP, boolean).
    SendNdpCount(Vec<bool>),
    /// Minimum Checksum Coverage (feature 8, SP, one byte 0-15 per value).
    MinimumChecksumCoverage(Vec<u8>),
    /// Check Data Checksum (feature 9, SP, boolean).
    CheckDataChecksum(Vec<bool>),
    /// A reserved or CCID-specific feature, value kept as bytes.
    Unknown {
        /// The feature number.
        number: u8,
        /// The value bytes, undecoded.
        value: Vec<u8>,
    },
}

/// Why a feature value could not be decoded or encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FeatureProblem {
    /// The value has the wrong number of bytes for this feature.
    Length {
        /// The length found.
        found: usize,
        /// What was expected.
        expected: &'static str,
    },
    /// A byte is outside the feature's range.
    Value {
        /// The byte.
        value: u64,
        /// The valid range.
        expected: &'static str,
    },
}

impl Feature {
    /// The feature number.
    pub fn number(&self) -> u8 {
        match self {
            Feature::Ccid(_) => number::CCID,
            Feature::AllowShortSeqnos(_) => number::ALLOW_SHORT_SEQNOS,
            Feature::SequenceWindow(_) => number::SEQUENCE_WINDOW,
            Feature::EcnIncapable(_) => number::ECN_INCAPABLE,
            Feature::AckRatio(_) => number::ACK_RATIO,
            Feature::SendAckVector(_) => number::SEND_ACK_VECTOR,
            Feature::SendNdpCount(_) => number::SEND_NDP_COUNT,
            Feature::MinimumChecksumCoverage(_) => number::MINIMUM_CHECKSUM_COVERAGE,
            Feature::CheckDataChecksum(_) => number::CHECK_DATA_CHECKSUM,
            Feature::Unknown { number, .. } => *number,
        }
    }

    /// The feature's name in RFC 4340 §6.4.
    pub fn name(&self) -> &'static str {
        feature_name(self.number())
    }

    /// Whether this is a server-priority feature whose value is a list
    /// (RFC 4340 §6.3.1); `false` for NN and unknown features.
    pub fn is_server_priority(&self) -> bool {
        !matches!(
            self,
            Feature::SequenceWindow(_) | Feature::AckRatio(_) | Feature::Unknown { .. }
        )
    }

    /// Decodes the value bytes of feature `number`.
    pub(crate) fn decode(number: u8, value: &[u8]) -> Result<Feature, FeatureProblem> {
        Ok(match number {
            number::CCID => Feature::Ccid(value.to_vec()),
            number::ALLOW_SHORT_SEQNOS => Feature::AllowShortSeqnos(bools(value)?),
            number::SEQUENCE_WINDOW => Feature::SequenceWindow(match *value {
                [] => None,
                [a, b, c, d, e, f] => Some(u64::from_be_bytes([0, 0, a, b, c, d, e, f])),
                _ => return Err(nn_length(value.len(), "6 (48-bit value) or 0")),
            }),
            number::ECN_INCAPABLE => Feature::EcnIncapable(bools(value)?),
            number::ACK_RATIO => Feature::AckRatio(match *value {
                [] => None,
                [a, b] => Some(u16::from_be_bytes([a, b])),
                _ => return Err(nn_length(value.len(), "2 (16-bit value) or 0")),
            }),
            number::SEND_ACK_VECTOR => Feature::SendAckVector(bools(value)?),
            number::SEND_NDP_COUNT => Feature::SendNdpCount(bools(value)?),
            number::MINIMUM_CHECKSUM_COVERAGE => {
                // RFC 4340 §9.2.1: the feature's values are CsCov values, 0-15.
                if let Some(&bad) = value.iter().find(|&&v| v > 15) {
                    return Err(FeatureProblem::Value {
                        value: u64::from(bad),
                        expected: "0-15",
                    });
                }
                Feature::MinimumChecksumCoverage(value.to_vec())
            }
            number::CHECK_DATA_CHECKSUM => Feature::CheckDataChecksum(bools(value)?),
            _ => Feature::Unknown {
                number,
                value: value.to_vec(),
            },
        })
    }

    /// The number of value bytes (excluding the feature number).
    pub(crate) fn value_len(&self) -> usize {
        match self {
            Feature::Ccid(v) | Feature::MinimumChecksumCoverage(v) => v.len(),
            Feature::Unknown { value, .. } => value.len(),
            Feature::AllowShortSeqnos(v)
            | Feature::EcnIncapable(v)
            | Feature::SendAckVector(v)
            | Feature::SendNdpCount(v)
            | Feature::CheckDataChecksum(v) => v.len(),
            Feature::SequenceWindow(v) => v.map_or(0, |_| 6),
            Feature::AckRatio(v) => v.map_or(0, |_| 2),
        }
    }

    /// Checks that the value can be encoded.
    pub(crate) fn validate(&self) -> Result<(), FeatureProblem> {
        let len = self.value_len();
        if len > MAX_FEATURE_VALUE_LEN {
            return Err(FeatureProblem::Length {
                found: len,
                expected: "at most 252 value bytes",
            });
        }
        match self {
            Feature::SequenceWindow(Some(w)) if *w >= 1 << 48 => Err(FeatureProblem::Value {
                value: *w,
                expected: "below 2^48",
            }),
            Feature::MinimumChecksumCoverage(v) => match v.iter().find(|&&c| c > 15) {
                Some(&bad) => Err(FeatureProblem::Value {
                    value: u64::from(bad),
                    expected: "0-15",
                }),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// Appends the value bytes (excluding the feature number).
    pub(crate) fn encode_value(&self, out: &mut Vec<u8>) {
        match self {
            Feature::Ccid(v) | Feature::MinimumChecksumCoverage(v) => out.extend_from_slice(v),
            Feature::Unknown { value, .. } => out.extend_from_slice(value),
            Feature::AllowShortSeqnos(v)
            | Feature::EcnIncapable(v)
            | Feature::SendAckVector(v)
            | Feature::SendNdpCount(v)
            | Feature::CheckDataChecksum(v) => out.extend(v.iter().map(|&b| u8::from(b))),
            Feature::SequenceWindow(Some(w)) => {
                out.extend_from_slice(w.to_be_bytes().get(2..).unwrap_or_default())
            }
            Feature::AckRatio(Some(r)) => out.extend_from_slice(&r.to_be_bytes()),
            Feature::SequenceWindow(None) | Feature::AckRatio(None) => {}
        }
    }
}

fn nn_length(found: usize, expected: &'static str) -> FeatureProblem {
    FeatureProblem::Length { found, expected }
}

/// RFC 4340 §6.4: boolean features take the values 0 (false) and 1 (true).
fn bools(value: &[u8]) -> Result<Vec<bool>, FeatureProblem> {
    value
        .iter()
        .map(|&b| match b {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(FeatureProblem::Value {
                value: u64::from(other),
                expected: "0 or 1",
            }),
        })
        .collect()
}

/// The name of feature `number` (RFC 4340 §6.4), or a class name for
/// reserved and CCID-specific numbers.
pub fn feature_name(number: u8) -> &'static str {
    match number {
        number::CCID => "CCID",
        number::ALLOW_SHORT_SEQNOS => "Allow Short Seqnos",
        number::SEQUENCE_WINDOW => "Sequence Window",
        number::ECN_INCAPABLE => "ECN Incapable",
        number::ACK_RATIO => "Ack Ratio",
        number::SEND_ACK_VECTOR => "Send Ack Vector",
        number::SEND_NDP_COUNT => "Send NDP Count",
        number::MINIMUM_CHECKSUM_COVERAGE => "Minimum Checksum Coverage",
        number::CHECK_DATA_CHECKSUM => "Check Data Checksum",
        128..=255 => "CCID-specific feature",
        _ => "reserved feature",
    }
}
