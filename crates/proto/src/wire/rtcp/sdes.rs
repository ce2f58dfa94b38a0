//! Source description packets (RFC 3550 §6.5).

use super::list::{ItemList, WireItem};
use super::{put, RtcpError};

/// SDES item type CNAME (RFC 3550 §6.5.1).
pub const SDES_CNAME: u8 = 1;

/// One SDES item (RFC 3550 §6.5): type, and a value of up to 255 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdesItem<'a> {
    /// The item type (1 CNAME, 2 NAME, … 8 PRIV); never 0.
    pub kind: u8,
    /// The value (UTF-8 text for the standard types).
    pub value: &'a [u8],
}

impl<'a> WireItem<'a> for SdesItem<'a> {
    fn decode(bytes: &'a [u8]) -> Option<(Self, &'a [u8])> {
        let (&kind, rest) = bytes.split_first()?;
        if kind == 0 {
            return None;
        }
        let (&len, rest) = rest.split_first()?;
        let value = rest.get(..usize::from(len))?;
        let rest = rest.get(usize::from(len)..)?;
        Some((SdesItem { kind, value }, rest))
    }

    fn wire_len(&self) -> usize {
        2 + self.value.len()
    }

    fn validate(&self) -> Result<(), RtcpError> {
        if self.kind == 0 {
            return Err(RtcpError::SdesItemTypeZero);
        }
        if self.value.len() > 255 {
            return Err(RtcpError::SdesItemTooLong {
                len: self.value.len(),
            });
        }
        Ok(())
    }

    fn encode(&self, buffer: &mut [u8]) {
        // Validated: the length fits a byte.
        put(buffer, 0, &[self.kind, self.value.len() as u8]);
        put(buffer, 2, self.value);
    }
}

/// One SDES chunk: a source and its items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdesChunk<'a> {
    /// The SSRC or CSRC described.
    pub ssrc: u32,
    /// Its items (without the terminating null item).
    pub items: ItemList<'a, SdesItem<'a>>,
}

impl<'a> SdesChunk<'a> {
    /// The CNAME item's value, if the chunk has one.
    pub fn cname(&self) -> Option<&'a [u8]> {
        self.items
            .iter()
            .find(|item| item.kind == SDES_CNAME)
            .map(|item| item.value)
    }
}

impl<'a> WireItem<'a> for SdesChunk<'a> {
    fn decode(bytes: &'a [u8]) -> Option<(Self, &'a [u8])> {
        let ssrc = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?);
        let mut end = 4;
        // RFC 3550 §6.5: "The list of items in each chunk MUST be terminated
        // by one or more null octets, the first of which is interpreted as an
        // item type of zero to denote the end of the list."
        while *bytes.get(end)? != 0 {
            let len = *bytes.get(end + 1)?;
            end += 2 + usize::from(len);
        }
        let items = bytes.get(4..end)?;
        // "additional null octets MUST be included if needed to pad until the
        // next 32-bit boundary" (chunks start on one).
        let chunk_len = (end + 1).div_ceil(4) * 4;
        let rest = bytes.get(chunk_len..)?;
        Some((
            SdesChunk {
                ssrc,
                items: ItemList::from_wire(items),
            },
            rest,
        ))
    }

    fn wire_len(&self) -> usize {
        (4 + self.items.wire_len() + 1).div_ceil(4) * 4
    }

    fn validate(&self) -> Result<(), RtcpError> {
        self.items.validate()
    }

    fn encode(&self, buffer: &mut [u8]) {
        put(buffer, 0, &self.ssrc.to_be_bytes());
        let items_len = buffer
            .get_mut(4..)
            .map_or(0, |target| self.items.encode(target));
        if let Some(nulls) = buffer.get_mut(4 + items_len..self.wire_len()) {
            nulls.fill(0);
        }
    }
}

/// A source description (RFC 3550 §6.5, PT 202).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceDescription<'a> {
    /// The chunks (at most 31).
    pub chunks: ItemList<'a, SdesChunk<'a>>,
}

impl<'a> SourceDescription<'a> {
    /// The CNAME of `ssrc`, if one of the chunks gives it.
    pub fn cname(&self, ssrc: u32) -> Option<&'a [u8]> {
        self.chunks
            .iter()
            .find(|chunk| chunk.ssrc == ssrc)
            .and_then(|chunk| chunk.cname())
    }
}
