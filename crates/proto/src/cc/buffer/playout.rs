//! The receiver's playout buffer as the controller models it: frames held
//! from their first arriving bit until they are due, pre-roll to T_s before
//! playback starts and after an underrun, and the occupancy in time and in
//! bits (paper 004 §2: "buffer occupancy is measured both in terms of media
//! temporal length and media size in bits").
//!
//! Only a *decodable* frame counts in the occupancy in time: one whose base
//! layer has arrived whole (when the driver gave its size; without it,
//! every frame held). A frame missing part of its base layer cannot be
//! shown (§2.2: "any data dropped from this layer would result in a highly
//! distorted picture"), so the packet losses that cost frames lower the
//! temporal occupancy, as eq. 1's T_loss asks; the bits held count every
//! bit.
//!
//! Playback runs on the receiver's clock: when it (re)starts at `anchor`
//! with frame `anchor_index`, frame k is due at
//! `anchor + (k − anchor_index) · frame_interval`. Time advances in steps
//! ([`Playout::next_event`], [`Playout::step`]) so that the receiver can
//! take its measurements between them; a step either plays the first frame
//! held (skipping the missing ones before it) or, with nothing held when a
//! frame is due, is an underrun, and playback waits for T_s again.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::time::Instant;

use super::{MAX_FRAMES_AHEAD, MAX_HELD_FRAMES};

/// What became of an arriving frame (or part of one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameArrival {
    /// It is in the buffer (a first part, or a later part of a frame held).
    Buffered,
    /// It was due already (or played, or skipped): not buffered.
    Late,
    /// Too far ahead ([`MAX_FRAMES_AHEAD`]) or the buffer holds
    /// [`MAX_HELD_FRAMES`] frames: not buffered.
    OutOfRange,
}

/// What one step of playback did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// A decodable frame held of this many bits was due and left the
    /// buffer.
    Played(u128),
    /// A frame held without its whole base layer was due: it left the
    /// buffer unplayed, and decodable frames are still held.
    Skipped,
    /// A frame was due and no decodable frame was held: playback waits for
    /// T_s again.
    Underrun,
}

/// What the buffer holds of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Held {
    /// Every bit of the frame that arrived.
    bits: u128,
    /// The bits of its base layer that arrived.
    base_bits: u128,
    /// Its whole base layer, when the driver said.
    base_needed: Option<u128>,
}

impl Held {
    fn decodable(&self) -> bool {
        self.base_needed
            .is_none_or(|needed| self.base_bits >= needed)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for T_s of media: at the start, and after an underrun.
    Prerolling,
    /// Frame k is due at `anchor + (k − anchor_index) · frame_interval`.
    Playing { anchor: Instant, anchor_index: u64 },
}

/// The playout buffer (see the [module](self) documentation).
#[derive(Clone, Debug)]
pub(super) struct Playout {
    frame_interval: Duration,
    preroll_frames: u64,
    /// Frame index → what arrived of it, for the frames held.
    held: BTreeMap<u64, Held>,
    held_bits: u128,
    /// How many of the frames held are decodable.
    decodable: u64,
    /// Frames that were due without their whole base layer.
    undecodable: u64,
    state: State,
    /// Every frame below this was played, skipped or given up.
    cursor: u64,
    started: bool,
    underruns: u64,
}

impl Playout {
    /// An empty buffer that starts playback once the frames held span
    /// `preroll_frames` frames (missing ones included) with at least one
    /// decodable.
    pub(super) fn new(frame_interval: Duration, preroll_frames: u64) -> Playout {
        Playout {
            frame_interval,
            preroll_frames: preroll_frames.max(1),
            held: BTreeMap::new(),
            held_bits: 0,
            decodable: 0,
            undecodable: 0,
            state: State::Prerolling,
            cursor: 0,
            started: false,
            underruns: 0,
        }
    }

    /// Playback has started at least once.
    pub(super) fn started(&self) -> bool {
        self.started
    }

    /// Playback runs now (not pre-rolling).
    pub(super) fn playing(&self) -> bool {
        matches!(self.state, State::Playing { .. })
    }

    /// Underruns so far.
    pub(super) fn underruns(&self) -> u64 {
        self.underruns
    }

    /// Frames held, decodable or not.
    pub(super) fn held_frames(&self) -> usize {
        self.held.len()
    }

    /// Frames that were due without their whole base layer.
    pub(super) fn undecodable_frames(&self) -> u64 {
        self.undecodable
    }

    /// The occupancy in time: decodable frames held × the frame interval.
    pub(super) fn occupancy(&self) -> Duration {
        frames_duration(self.frame_interval, self.decodable)
    }

    /// The occupancy in bits.
    pub(super) fn occupancy_bits(&self) -> u128 {
        self.held_bits
    }

    /// How long playback would last from `now` with nothing more arriving:
    /// until the end of the newest frame held, missing frames included
    /// (they are skipped, not waited for). While pre-rolling, the media
    /// time from the first frame held to the end of the newest.
    pub(super) fn span(&self, now: Instant) -> Duration {
        let (Some((&first, _)), Some((&newest, _))) =
            (self.held.first_key_value(), self.held.last_key_value())
        else {
            return Duration::ZERO;
        };
        let after = newest.saturating_add(1);
        match self.due(after) {
            Some(end) => end.saturating_duration_since(now),
            None => frames_duration(self.frame_interval, after - first),
        }
    }

    /// When the next step is due, while playing: the first frame held, or,
    /// with none, the next frame (an underrun unless one arrives before).
    pub(super) fn next_event(&self) -> Option<Instant> {
        let index = match self.held.keys().next() {
            Some(&first) => first,
            None => self.cursor,
        };
        self.due(index)
    }

    /// When the decodable frames held would fall to `frames` if nothing
    /// more arrived: the due time of the frame whose playing leaves that
    /// many. `None` when not playing or already at or below.
    pub(super) fn falls_to(&self, frames: u64) -> Option<Instant> {
        if self.decodable <= frames {
            return None;
        }
        let position = usize::try_from(self.decodable - frames - 1).ok()?;
        let (&index, _) = self
            .held
            .iter()
            .filter(|(_, held)| held.decodable())
            .nth(position)?;
        self.due(index)
    }

    /// Takes the step due at [`next_event`](Self::next_event).
    pub(super) fn step(&mut self) -> Option<Step> {
        if !self.playing() {
            return None;
        }
        match self.held.pop_first() {
            Some((index, held)) => {
                // Saturating: the sum saturates before its parts can.
                self.held_bits = self.held_bits.saturating_sub(held.bits);
                self.cursor = index.saturating_add(1);
                if held.decodable() {
                    self.decodable = self.decodable.saturating_sub(1);
                    Some(Step::Played(held.bits))
                } else {
                    self.undecodable = self.undecodable.saturating_add(1);
                    if self.decodable == 0 {
                        Some(self.underrun())
                    } else {
                        Some(Step::Skipped)
                    }
                }
            }
            // Nothing held when frame `cursor` is due.
            None => Some(self.underrun()),
        }
    }

    /// No decodable frame held when one is due: wait for T_s again.
    fn underrun(&mut self) -> Step {
        self.underruns = self.underruns.saturating_add(1);
        self.state = State::Prerolling;
        Step::Underrun
    }

    /// `bits` of frame `index` arrived at `now` (after every step due by
    /// `now` was taken), `base_bits` of them its base layer's;
    /// `base_needed` is its whole base layer, when known (taken from the
    /// frame's first part). Returns what became of it and whether it was
    /// the frame's first part.
    pub(super) fn insert(
        &mut self,
        now: Instant,
        index: u64,
        (bits, base_bits): (u128, u128),
        base_needed: Option<u128>,
    ) -> (FrameArrival, bool) {
        let late = index < self.cursor || self.due(index).is_some_and(|due| due <= now);
        if late {
            return (FrameArrival::Late, false);
        }
        if index - self.cursor >= MAX_FRAMES_AHEAD {
            return (FrameArrival::OutOfRange, false);
        }
        let first = !self.held.contains_key(&index);
        if first && self.held.len() >= MAX_HELD_FRAMES {
            return (FrameArrival::OutOfRange, false);
        }
        let entry = self.held.entry(index).or_insert(Held {
            base_needed,
            ..Held::default()
        });
        let was_decodable = !first && entry.decodable();
        entry.bits = entry.bits.saturating_add(bits);
        entry.base_bits = entry.base_bits.saturating_add(base_bits);
        if entry.decodable() && !was_decodable {
            self.decodable = self.decodable.saturating_add(1);
        }
        self.held_bits = self.held_bits.saturating_add(bits);
        if !self.playing() && self.decodable > 0 && self.span_frames() >= self.preroll_frames {
            // Paper 004 §2: "the client determines the temporal length of
            // media to be pre-buffered before play starts".
            let first_held = self.held.keys().next().copied().unwrap_or(index);
            self.state = State::Playing {
                anchor: now,
                anchor_index: first_held,
            };
            self.cursor = first_held;
            self.started = true;
        }
        (FrameArrival::Buffered, first)
    }

    /// The frames from the first held to the newest, missing ones
    /// included: the media time buffered.
    fn span_frames(&self) -> u64 {
        match (self.held.first_key_value(), self.held.last_key_value()) {
            (Some((&first, _)), Some((&newest, _))) => newest - first + 1,
            _ => 0,
        }
    }

    /// When frame `index` is due; `None` while pre-rolling.
    fn due(&self, index: u64) -> Option<Instant> {
        let State::Playing {
            anchor,
            anchor_index,
        } = self.state
        else {
            return None;
        };
        let frames = index.saturating_sub(anchor_index);
        let offset = self.frame_interval.as_nanos() * u128::from(frames);
        let at = u128::from(anchor.as_nanos()) + offset;
        Some(Instant::from_nanos(u64::try_from(at).unwrap_or(u64::MAX)))
    }
}

/// `frames` × `interval`, saturating.
pub(super) fn frames_duration(interval: Duration, frames: u64) -> Duration {
    let nanos = interval.as_nanos() * u128::from(frames);
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}
