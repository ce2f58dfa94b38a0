//! DCCP options: the generic option list (RFC 4340 §5.8), feature negotiation
//! (§6), Ack Vector (§11.4), the Timestamp family (§13), and the CCID 3/4
//! options (RFC 4342 §8, RFC 5622 §8).
//!
//! ```text
//! single-byte option (type 0-31):   +--------+
//!                                   |  type  |
//!                                   +--------+
//! other options (type 32-255):      +--------+--------+--- ... ---+
//!                                   |  type  | length |   data    |
//!                                   +--------+--------+--- ... ---+
//!                                   length counts type and length: >= 2
//! ```
//!
//! [`Options::parse`] decodes every option in the list; [`Options::emit`]
//! writes them back and pads with Padding to a 32-bit boundary, since the Data
//! Offset counts the header, options included, in 32-bit words (RFC 4340
//! §5.1, §5.8.1).
//!
//! Representation choices:
//! - Padding between options is kept, so that bytes → options → bytes is
//!   exact. Padding *after* the last option is dropped on parse (it only fills
//!   to the 32-bit boundary, and emit adds it back), except one Padding that
//!   directly follows a trailing Mandatory: that one is the option Mandatory
//!   applies to.
//! - Mandatory (§5.8.2) stays in the list in front of the option it applies
//!   to; [`Options::check_mandatory`] enforces its rules and gives the Reset
//!   Code and data the connection must answer with.
//! - Options 128-255 are CCID-specific (§10.3), so their meaning depends on the
//!   half-connection's CCID. 192-195 are decoded as the TFRC options of CCID 3
//!   and 4 (the CCIDs this project implements); the others are kept as
//!   [`DccpOption::Unknown`], as are the reserved types 3-31 and 45-127.
//! - Variable-width values (NDP Count, Elapsed Time) are emitted in their
//!   smallest encoding; a peer's wider encoding of a small value parses to the
//!   same option but would be re-emitted narrower.
//!
//! Option offsets in errors count from the start of the DCCP header when the
//! options come from [`DccpRepr::parse`](super::dccp::DccpRepr::parse), and
//! from the start of the given bytes for [`Options::parse`].

mod ack_vector;
mod dccp_option;
mod feature;
#[cfg(test)]
pub(crate) mod tests;
mod tfrc;

pub use ack_vector::{
    ack_vector_to_feedback, AckVector, AckVectorCell, AckVectorError, AckVectorState,
};
pub use dccp_option::DccpOption;
pub use feature::{feature_name, number as feature_number, Feature, MAX_FEATURE_VALUE_LEN};
pub use tfrc::{ElapsedTime, LossEventRate, LossInterval, LossIntervals};

use super::dccp::ResetCode;

/// Option types (RFC 4340 §5.8 Table 3; RFC 4342 §8; RFC 5622 §8).
pub mod kind {
    /// Padding (single byte).
    pub const PADDING: u8 = 0;
    /// Mandatory (single byte).
    pub const MANDATORY: u8 = 1;
    /// Slow Receiver (single byte).
    pub const SLOW_RECEIVER: u8 = 2;
    /// Change L.
    pub const CHANGE_L: u8 = 32;
    /// Confirm L.
    pub const CONFIRM_L: u8 = 33;
    /// Change R.
    pub const CHANGE_R: u8 = 34;
    /// Confirm R.
    pub const CONFIRM_R: u8 = 35;
    /// Init Cookie.
    pub const INIT_COOKIE: u8 = 36;
    /// NDP Count.
    pub const NDP_COUNT: u8 = 37;
    /// Ack Vector [Nonce 0].
    pub const ACK_VECTOR_NONCE_0: u8 = 38;
    /// Ack Vector [Nonce 1].
    pub const ACK_VECTOR_NONCE_1: u8 = 39;
    /// Data Dropped.
    pub const DATA_DROPPED: u8 = 40;
    /// Timestamp.
    pub const TIMESTAMP: u8 = 41;
    /// Timestamp Echo.
    pub const TIMESTAMP_ECHO: u8 = 42;
    /// Elapsed Time.
    pub const ELAPSED_TIME: u8 = 43;
    /// Data Checksum.
    pub const DATA_CHECKSUM: u8 = 44;
    /// CCID 3/4 Loss Event Rate.
    pub const LOSS_EVENT_RATE: u8 = 192;
    /// CCID 3/4 Loss Intervals.
    pub const LOSS_INTERVALS: u8 = 193;
    /// CCID 3/4 Receive Rate.
    pub const RECEIVE_RATE: u8 = 194;
    /// CCID 4 Dropped Packets.
    pub const DROPPED_PACKETS: u8 = 195;
    /// fairstream's experimental MulTFRC CCID (248) only: Losses per Loss
    /// Event, the receiver's j for the MulTFRC equation
    /// (draft-irtf-iccrg-multfrc), four bytes, j in thousandths of a packet.
    /// Under other CCIDs type 196 means nothing and is not sent.
    pub const MULTFRC_LOSSES_PER_EVENT: u8 = 196;
    /// Experimental CCID 248 feedback option: the data packets the receiver
    /// got marked Congestion Experienced so far, modulo 2³² (four bytes).
    pub const MULTFRC_ECN_MARKS: u8 = 197;
    /// Experimental CCID 248 feedback option: the loss event rate without
    /// the losses the receiver took for the channel's (those declared while
    /// the path marked CE), encoded as Loss Event Rate (RFC 4342 §8.5: 1/p,
    /// four bytes).
    pub const MULTFRC_CONGESTION_LOSS_EVENT_RATE: u8 = 198;
}

/// The most option bytes a header can carry: a Data Offset of 255 words (1020
/// bytes) less the shortest fixed header (12 bytes).
pub const MAX_OPTIONS_LEN: usize = 1008;

/// The most data bytes one option can carry (its length byte is at most 255
/// and counts the type and length bytes).
pub const MAX_OPTION_DATA_LEN: usize = 253;

/// The name of option type `kind` (RFC 4340 §5.8 Table 3), or its class for
/// reserved and unknown CCID-specific types.
pub fn option_name(kind: u8) -> &'static str {
    match kind {
        kind::PADDING => "Padding",
        kind::MANDATORY => "Mandatory",
        kind::SLOW_RECEIVER => "Slow Receiver",
        kind::CHANGE_L => "Change L",
        kind::CONFIRM_L => "Confirm L",
        kind::CHANGE_R => "Change R",
        kind::CONFIRM_R => "Confirm R",
        kind::INIT_COOKIE => "Init Cookie",
        kind::NDP_COUNT => "NDP Count",
        kind::ACK_VECTOR_NONCE_0 => "Ack Vector [Nonce 0]",
        kind::ACK_VECTOR_NONCE_1 => "Ack Vector [Nonce 1]",
        kind::DATA_DROPPED => "Data Dropped",
        kind::TIMESTAMP => "Timestamp",
        kind::TIMESTAMP_ECHO => "Timestamp Echo",
        kind::ELAPSED_TIME => "Elapsed Time",
        kind::DATA_CHECKSUM => "Data Checksum",
        kind::LOSS_EVENT_RATE => "Loss Event Rate",
        kind::LOSS_INTERVALS => "Loss Intervals",
        kind::RECEIVE_RATE => "Receive Rate",
        kind::DROPPED_PACKETS => "Dropped Packets",
        128..=255 => "CCID-specific option",
        _ => "reserved option",
    }
}

/// What was wrong with an option list.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// A multi-byte option type is the last byte: its length byte is missing.
    #[error("DCCP option {name} (type {kind}) at offset {offset}: length byte missing")]
    MissingLength {
        /// The option type.
        kind: u8,
        /// Its name.
        name: &'static str,
        /// Where the option starts.
        offset: usize,
    },
    /// A length byte below 2 (RFC 4340 §5.8: the length counts the type and
    /// length bytes).
    #[error("DCCP option {name} (type {kind}) at offset {offset}: length {length} is below 2")]
    LengthTooSmall {
        /// The option type.
        kind: u8,
        /// Its name.
        name: &'static str,
        /// Where the option starts.
        offset: usize,
        /// The length byte.
        length: u8,
    },
    /// The option runs past the end of the options area.
    #[error(
        "DCCP option {name} (type {kind}) at offset {offset}: length {length} runs past the end of the options ({available} bytes left)"
    )]
    Overrun {
        /// The option type.
        kind: u8,
        /// Its name.
        name: &'static str,
        /// Where the option starts.
        offset: usize,
        /// The length byte.
        length: u8,
        /// Bytes left from the option's start to the end of the options.
        available: usize,
    },
    /// The length is not one this option type allows.
    #[error(
        "DCCP option {name} (type {kind}) at offset {offset}: length {length}, expected {expected}"
    )]
    BadLength {
        /// The option type.
        kind: u8,
        /// Its name.
        name: &'static str,
        /// Where the option starts.
        offset: usize,
        /// The length byte.
        length: u8,
        /// The lengths allowed.
        expected: &'static str,
    },
    /// A Change/Confirm value has the wrong size for its feature.
    #[error(
        "DCCP option {name} (type {kind}) at offset {offset}: {feature_name} (feature {feature}) value has {found} bytes, expected {expected}"
    )]
    BadFeatureLength {
        /// The option type.
        kind: u8,
        /// Its name.
        name: &'static str,
        /// Where the option starts.
        offset: usize,
        /// The feature number.
        feature: u8,
        /// The feature's name.
        feature_name: &'static str,
        /// The value's size.
        found: usize,
        /// The sizes allowed.
        expected: &'static str,
    },
    /// A Change/Confirm value is outside its feature's range.
    #[error(
        "DCCP option {name} (type {kind}) at offset {offset}: {feature_name} (feature {feature}) value {value} is invalid, expected {expected}"
    )]
    BadFeatureValue {
        /// The option type.
        kind: u8,
        /// Its name.
        name: &'static str,
        /// Where the option starts.
        offset: usize,
        /// The feature number.
        feature: u8,
        /// The feature's name.
        feature_name: &'static str,
        /// The value.
        value: u64,
        /// The values allowed.
        expected: &'static str,
    },
    /// The options do not fit in a DCCP header.
    #[error("DCCP options take {len} bytes; a header holds at most {max}")]
    TooLong {
        /// Their encoded length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// An option cannot be encoded (a value too large for its field, too much
    /// data, or `Unknown` used for a type that has its own variant).
    #[error("DCCP option {name} (type {kind}) cannot be encoded: {reason}")]
    Unencodable {
        /// The option type.
        kind: u8,
        /// Its name.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// Why a Mandatory option makes the connection reset (RFC 4340 §5.8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MandatoryError {
    /// Mandatory is the last option: there is no option it applies to.
    #[error("Mandatory is the last option")]
    AtEnd,
    /// Mandatory is followed by another Mandatory.
    #[error("Mandatory is followed by another Mandatory")]
    Repeated,
    /// The option after Mandatory is not understood.
    #[error("option {kind} follows Mandatory and is not understood")]
    NotUnderstood {
        /// Its type.
        kind: u8,
        /// The first two bytes of its data, zero-filled.
        data: [u8; 2],
    },
}

impl MandatoryError {
    /// The Reset Code to answer with: Option Error for a misplaced Mandatory,
    /// Mandatory Error for an option not understood (RFC 4340 §5.8.2).
    pub fn reset_code(&self) -> ResetCode {
        match self {
            MandatoryError::AtEnd | MandatoryError::Repeated => ResetCode::OptionError,
            MandatoryError::NotUnderstood { .. } => ResetCode::MandatoryError,
        }
    }

    /// Reset Data 1-3: the offending option's type, then the first two bytes
    /// of its data (RFC 4340 §5.6, §5.8.2). For a misplaced Mandatory, the
    /// Mandatory type (1) and zeros.
    pub fn reset_data(&self) -> [u8; 3] {
        match *self {
            MandatoryError::AtEnd | MandatoryError::Repeated => [kind::MANDATORY, 0, 0],
            MandatoryError::NotUnderstood { kind, data: [a, b] } => [kind, a, b],
        }
    }
}

/// An ordered, bounded list of options (at most [`MAX_OPTIONS_LEN`] encoded
/// bytes), every one of which can be encoded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    items: Vec<DccpOption>,
    encoded_len: usize,
}

impl Options {
    /// An empty list.
    pub const fn new() -> Self {
        Options {
            items: Vec::new(),
            encoded_len: 0,
        }
    }

    /// Parses an options area. Offsets in errors count from `bytes[0]`.
    pub fn parse(bytes: &[u8]) -> Result<Options, OptionError> {
        Self::parse_at(bytes, 0)
    }

    /// Parses an options area that starts `base` bytes into the packet, so
    /// that error offsets count from the start of the packet.
    pub(crate) fn parse_at(bytes: &[u8], base: usize) -> Result<Options, OptionError> {
        if bytes.len() > MAX_OPTIONS_LEN {
            return Err(OptionError::TooLong {
                len: bytes.len(),
                max: MAX_OPTIONS_LEN,
            });
        }
        let mut items = Vec::new();
        let mut pos = 0;
        while let Some((&kind, rest)) = bytes.get(pos..).and_then(<[u8]>::split_first) {
            let offset = base + pos;
            let name = option_name(kind);
            if kind < 32 {
                // RFC 4340 §5.8: options 0-31 are a single byte.
                items.push(match kind {
                    kind::PADDING => DccpOption::Padding,
                    kind::MANDATORY => DccpOption::Mandatory,
                    kind::SLOW_RECEIVER => DccpOption::SlowReceiver,
                    _ => DccpOption::Unknown {
                        kind,
                        data: Vec::new(),
                    },
                });
                pos += 1;
                continue;
            }
            let Some(&length) = rest.first() else {
                return Err(OptionError::MissingLength { kind, name, offset });
            };
            if length < 2 {
                return Err(OptionError::LengthTooSmall {
                    kind,
                    name,
                    offset,
                    length,
                });
            }
            let available = bytes.len() - pos;
            let Some(data) = bytes.get(pos + 2..pos + usize::from(length)) else {
                return Err(OptionError::Overrun {
                    kind,
                    name,
                    offset,
                    length,
                    available,
                });
            };
            items.push(DccpOption::decode(kind, data, offset)?);
            pos += usize::from(length);
        }
        strip_trailing_padding(&mut items);
        let encoded_len = items.iter().map(DccpOption::encoded_len).sum();
        Ok(Options { items, encoded_len })
    }

    /// Appends an option, after checking that it can be encoded and that the
    /// list still fits in a header.
    pub fn push(&mut self, option: DccpOption) -> Result<(), OptionError> {
        option.validate()?;
        let len = self.encoded_len + option.encoded_len();
        if len > MAX_OPTIONS_LEN {
            return Err(OptionError::TooLong {
                len,
                max: MAX_OPTIONS_LEN,
            });
        }
        self.encoded_len = len;
        self.items.push(option);
        Ok(())
    }

    /// A list of `options`, each checked as by [`push`](Self::push).
    pub fn from_options(
        options: impl IntoIterator<Item = DccpOption>,
    ) -> Result<Options, OptionError> {
        let mut list = Options::new();
        for option in options {
            list.push(option)?;
        }
        Ok(list)
    }

    /// The options, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, DccpOption> {
        self.items.iter()
    }

    /// The options as a slice.
    pub fn as_slice(&self) -> &[DccpOption] {
        &self.items
    }

    /// The number of options.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The encoded size without the final padding.
    pub fn encoded_len(&self) -> usize {
        self.encoded_len
    }

    /// The encoded size padded to a multiple of 4 bytes: what the options
    /// add to the header.
    pub fn padded_len(&self) -> usize {
        self.encoded_len.next_multiple_of(4)
    }

    /// Writes the options and the Padding that fills them to a 32-bit
    /// boundary into the start of `buf`; returns the bytes written,
    /// [`padded_len`](Self::padded_len).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, OptionError> {
        self.check_encodable()?;
        let bytes = self.to_bytes();
        match buf.get_mut(..bytes.len()) {
            Some(dst) => {
                dst.copy_from_slice(&bytes);
                Ok(bytes.len())
            }
            None => Err(OptionError::TooLong {
                len: bytes.len(),
                max: buf.len(),
            }),
        }
    }

    /// Whether the list can be written without changing its meaning. A list
    /// that ends in Mandatory cannot, unless it ends exactly on a 32-bit
    /// boundary: the padding emit adds would become the option Mandatory
    /// applies to (RFC 4340 §5.8.2), so the packet would say something else.
    pub fn check_encodable(&self) -> Result<(), OptionError> {
        if self.items.last() == Some(&DccpOption::Mandatory) && self.encoded_len() % 4 != 0 {
            return Err(OptionError::Unencodable {
                kind: kind::MANDATORY,
                name: "Mandatory",
                reason: "a trailing Mandatory would apply to the padding after it".to_owned(),
            });
        }
        Ok(())
    }

    /// The encoded options, padded to a 32-bit boundary.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.padded_len());
        for option in &self.items {
            option.encode(&mut out);
        }
        // RFC 4340 §5.8.1: Padding options fill the header to a 32-bit boundary.
        out.resize(out.len().next_multiple_of(4), kind::PADDING);
        out
    }

    /// The first option of type `kind`.
    pub fn find(&self, kind: u8) -> Option<&DccpOption> {
        self.items.iter().find(|o| o.kind() == kind)
    }

    /// The first Timestamp value.
    pub fn timestamp(&self) -> Option<u32> {
        self.items.iter().find_map(|o| match o {
            DccpOption::Timestamp(t) => Some(*t),
            _ => None,
        })
    }

    /// The first Timestamp Echo: the echoed timestamp and the elapsed time.
    pub fn timestamp_echo(&self) -> Option<(u32, Option<ElapsedTime>)> {
        self.items.iter().find_map(|o| match o {
            DccpOption::TimestampEcho { timestamp, elapsed } => Some((*timestamp, *elapsed)),
            _ => None,
        })
    }

    /// The first Elapsed Time.
    pub fn elapsed_time(&self) -> Option<ElapsedTime> {
        self.items.iter().find_map(|o| match o {
            DccpOption::ElapsedTime(t) => Some(*t),
            _ => None,
        })
    }

    /// The first NDP Count.
    pub fn ndp_count(&self) -> Option<u64> {
        self.items.iter().find_map(|o| match o {
            DccpOption::NdpCount(n) => Some(*n),
            _ => None,
        })
    }

    /// The first Loss Event Rate.
    pub fn loss_event_rate(&self) -> Option<LossEventRate> {
        self.items.iter().find_map(|o| match o {
            DccpOption::LossEventRate(r) => Some(*r),
            _ => None,
        })
    }

    /// The first Receive Rate, in bytes per second.
    pub fn receive_rate(&self) -> Option<u32> {
        self.items.iter().find_map(|o| match o {
            DccpOption::ReceiveRate(r) => Some(*r),
            _ => None,
        })
    }

    /// The first Loss Intervals option.
    pub fn loss_intervals(&self) -> Option<&LossIntervals> {
        self.items.iter().find_map(|o| match o {
            DccpOption::LossIntervals(l) => Some(l),
            _ => None,
        })
    }

    /// The Ack Vector options, in order.
    pub fn ack_vectors(&self) -> impl Iterator<Item = &AckVector> {
        self.items.iter().filter_map(|o| match o {
            DccpOption::AckVector(v) => Some(v),
            _ => None,
        })
    }

    /// The cells of all Ack Vector options, concatenated in order (RFC 4340
    /// §11.4: a long vector is split over consecutive options).
    pub fn ack_vector_cells(&self) -> impl Iterator<Item = AckVectorCell> + '_ {
        self.ack_vectors().flat_map(AckVector::cells)
    }

    /// The Change and Confirm options, in order.
    pub fn feature_options(&self) -> impl Iterator<Item = &DccpOption> {
        self.items.iter().filter(|o| o.feature().is_some())
    }

    /// Applies RFC 4340 §5.8.2 to every Mandatory option: the option after it
    /// must exist, must not be Mandatory, and must satisfy `understood` (for
    /// example [`DccpOption::is_understood`], or a check that also knows the
    /// CCID in use).
    pub fn check_mandatory(
        &self,
        understood: impl Fn(&DccpOption) -> bool,
    ) -> Result<(), MandatoryError> {
        let mut iter = self.items.iter().peekable();
        while let Some(option) = iter.next() {
            if *option != DccpOption::Mandatory {
                continue;
            }
            match iter.peek() {
                None => return Err(MandatoryError::AtEnd),
                Some(DccpOption::Mandatory) => return Err(MandatoryError::Repeated),
                Some(next) if !understood(next) => {
                    let mut bytes = Vec::new();
                    next.encode(&mut bytes);
                    let skip = if next.kind() < 32 { 1 } else { 2 };
                    let data = bytes.get(skip..).unwrap_or_default();
                    return Err(MandatoryError::NotUnderstood {
                        kind: next.kind(),
                        data: [
                            data.first().copied().unwrap_or(0),
                            data.get(1).copied().unwrap_or(0),
                        ],
                    });
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// Drops the Padding after the last non-Padding option, keeping one if that
/// option is Mandatory (see the module documentation).
fn strip_trailing_padding(items: &mut Vec<DccpOption>) {
    let keep = match items.iter().rposition(|o| *o != DccpOption::Padding) {
        None => 0,
        Some(last) if items.get(last) == Some(&DccpOption::Mandatory) => {
            (last + 2).min(items.len())
        }
        Some(last) => last + 1,
    };
    items.truncate(keep);
}

impl<'a> IntoIterator for &'a Options {
    type Item = &'a DccpOption;
    type IntoIter = std::slice::Iter<'a, DccpOption>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}
