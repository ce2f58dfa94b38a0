//! Lists of records inside an RTCP packet (report blocks, SDES chunks and
//! items), parsed lazily from the wire or borrowed from a slice to emit.

use std::fmt;
use std::marker::PhantomData;

use super::{put, RtcpError};

/// An element of an [`ItemList`]: a record that RTCP repeats inside a packet.
pub trait WireItem<'a>: Sized + Clone {
    /// Decodes one element from the front of `bytes` and returns it with the
    /// rest, or `None` when `bytes` does not start with a whole element.
    fn decode(bytes: &'a [u8]) -> Option<(Self, &'a [u8])>;
    /// Bytes the element takes on the wire.
    fn wire_len(&self) -> usize;
    /// Checks that the element can be written.
    fn validate(&self) -> Result<(), RtcpError>;
    /// Writes the element at the start of `buffer` (at least
    /// [`WireItem::wire_len`] bytes, and the element validated).
    fn encode(&self, buffer: &mut [u8]);
}

/// A list of RTCP records: either parsed (borrowing the validated wire bytes
/// and decoding while iterating) or built to be emitted (borrowing a slice).
/// Two lists are equal when they hold equal elements, whichever form.
#[derive(Clone, Copy)]
pub struct ItemList<'a, T> {
    inner: ListInner<'a, T>,
}

#[derive(Clone, Copy)]
enum ListInner<'a, T> {
    Wire(&'a [u8]),
    Slice(&'a [T]),
}

impl<'a, T> ItemList<'a, T> {
    /// A list to emit.
    pub const fn from_slice(items: &'a [T]) -> Self {
        ItemList {
            inner: ListInner::Slice(items),
        }
    }

    /// An empty list.
    pub const fn empty() -> Self {
        ItemList {
            inner: ListInner::Slice(&[]),
        }
    }

    /// A list over wire bytes that hold only whole elements (checked by the
    /// caller).
    pub(super) fn from_wire(bytes: &'a [u8]) -> Self {
        ItemList {
            inner: ListInner::Wire(bytes),
        }
    }
}

impl<'a, T: WireItem<'a>> ItemList<'a, T> {
    /// The elements, in order.
    pub fn iter(&self) -> ItemIter<'a, T> {
        match self.inner {
            ListInner::Wire(bytes) => ItemIter {
                inner: IterInner::Wire(bytes, PhantomData),
            },
            ListInner::Slice(items) => ItemIter {
                inner: IterInner::Slice(items.iter()),
            },
        }
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        match self.inner {
            ListInner::Wire(_) => self.iter().count(),
            ListInner::Slice(items) => items.len(),
        }
    }

    /// True when there is no element.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    pub(super) fn wire_len(&self) -> usize {
        match self.inner {
            ListInner::Wire(bytes) => bytes.len(),
            ListInner::Slice(items) => items.iter().map(WireItem::wire_len).sum(),
        }
    }

    pub(super) fn validate(&self) -> Result<(), RtcpError> {
        match self.inner {
            ListInner::Wire(_) => Ok(()),
            ListInner::Slice(items) => items.iter().try_for_each(WireItem::validate),
        }
    }

    /// Writes the elements at the start of `buffer` (long enough, validated).
    pub(super) fn encode(&self, buffer: &mut [u8]) -> usize {
        match self.inner {
            ListInner::Wire(bytes) => {
                put(buffer, 0, bytes);
                bytes.len()
            }
            ListInner::Slice(items) => {
                let mut at = 0;
                for item in items {
                    if let Some(target) = buffer.get_mut(at..) {
                        item.encode(target);
                    }
                    at += item.wire_len();
                }
                at
            }
        }
    }
}

impl<'a, T: WireItem<'a>> IntoIterator for &ItemList<'a, T> {
    type Item = T;
    type IntoIter = ItemIter<'a, T>;
    fn into_iter(self) -> ItemIter<'a, T> {
        self.iter()
    }
}

impl<'a, T: WireItem<'a> + PartialEq> PartialEq for ItemList<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl<'a, T: WireItem<'a> + Eq> Eq for ItemList<'a, T> {}

impl<'a, T: WireItem<'a> + fmt::Debug> fmt::Debug for ItemList<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Iterator over an [`ItemList`].
#[derive(Clone, Debug)]
pub struct ItemIter<'a, T> {
    inner: IterInner<'a, T>,
}

#[derive(Clone, Debug)]
enum IterInner<'a, T> {
    Wire(&'a [u8], PhantomData<T>),
    Slice(std::slice::Iter<'a, T>),
}

impl<'a, T: WireItem<'a>> Iterator for ItemIter<'a, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        match &mut self.inner {
            IterInner::Wire(bytes, _) => {
                let (item, rest) = T::decode(bytes)?;
                *bytes = rest;
                Some(item)
            }
            IterInner::Slice(items) => items.next().cloned(),
        }
    }
}

/// Splits `count` whole elements off the front of `bytes` and returns the
/// rest, or the index of the first element that is not whole.
pub(super) fn split_list<'a, T: WireItem<'a>>(
    bytes: &'a [u8],
    count: usize,
) -> Result<&'a [u8], usize> {
    let mut rest = bytes;
    for index in 0..count {
        let (_, after) = T::decode(rest).ok_or(index)?;
        rest = after;
    }
    Ok(rest)
}
