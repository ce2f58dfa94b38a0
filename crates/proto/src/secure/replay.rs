//! The anti-replay window of one direction (RFC 4303 §3.4.3).

use super::REPLAY_WINDOW;

/// Words in the bitmap.
const WORDS: usize = (REPLAY_WINDOW / 64) as usize;

/// Why the window refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// The packet was already accepted.
    Replayed,
    /// The packet is [`REPLAY_WINDOW`] or more packets older than the newest
    /// one accepted.
    TooOld {
        /// The newest accepted position.
        highest: u64,
    },
}

/// A sliding window over packet positions (the distance of a sequence
/// number from the direction's ISS, so positions only grow), as IPsec's
/// anti-replay service keeps one.
///
/// RFC 4303 §3.4.3: "Duplicates are rejected through the use of a sliding
/// receive window"; the check is made before the integrity check, and "the
/// receive window is updated only if the integrity verification succeeds".
/// [`check`](Self::check) and [`accept`](Self::accept) are those two steps.
///
/// The bitmap is a ring indexed by position modulo [`REPLAY_WINDOW`] (the
/// layout of RFC 6479): a bit is cleared when the window slides past it, so
/// memory is constant and a slide costs at most one pass over the bitmap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ReplayWindow {
    highest: Option<u64>,
    bits: [u64; WORDS],
}

impl ReplayWindow {
    /// An empty window: any first position is accepted.
    pub(super) const fn new() -> ReplayWindow {
        ReplayWindow {
            highest: None,
            bits: [0; WORDS],
        }
    }

    /// The newest accepted position.
    pub(super) const fn highest(&self) -> Option<u64> {
        self.highest
    }

    /// The oldest position the window could still accept.
    pub(super) fn low_edge(&self) -> u64 {
        self.highest
            .map_or(0, |highest| highest.saturating_sub(REPLAY_WINDOW - 1))
    }

    fn slot(position: u64) -> (usize, u64) {
        let index = position % REPLAY_WINDOW;
        // index < REPLAY_WINDOW, so index / 64 < WORDS.
        ((index / 64) as usize, 1 << (index % 64))
    }

    fn is_set(&self, position: u64) -> bool {
        let (word, mask) = Self::slot(position);
        self.bits.get(word).is_some_and(|w| w & mask != 0)
    }

    fn set(&mut self, position: u64, value: bool) {
        let (word, mask) = Self::slot(position);
        if let Some(w) = self.bits.get_mut(word) {
            if value {
                *w |= mask;
            } else {
                *w &= !mask;
            }
        }
    }

    /// Whether a packet at `position` may be accepted: it is newer than any
    /// so far, or inside the window and not yet seen.
    pub(super) fn check(&self, position: u64) -> Result<(), Refusal> {
        let Some(highest) = self.highest else {
            return Ok(());
        };
        if position > highest {
            return Ok(());
        }
        if highest - position >= REPLAY_WINDOW {
            return Err(Refusal::TooOld { highest });
        }
        if self.is_set(position) {
            return Err(Refusal::Replayed);
        }
        Ok(())
    }

    /// Records `position` as received, sliding the window forward if it is
    /// the newest. Call only after [`check`](Self::check) passed and the
    /// packet authenticated.
    pub(super) fn accept(&mut self, position: u64) {
        match self.highest {
            Some(highest) if position <= highest => {}
            Some(highest) if position - highest < REPLAY_WINDOW => {
                // Forget the positions the window slides over.
                for stale in highest + 1..position {
                    self.set(stale, false);
                }
                self.highest = Some(position);
            }
            _ => {
                self.bits = [0; WORDS];
                self.highest = Some(position);
            }
        }
        self.set(position, true);
    }
}
