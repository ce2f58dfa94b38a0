//! The TFRC receiver's loss history (RFC 5348 §5): loss detection with
//! NDUPACK ([`LossDetector`]), and the loss-interval history with its weighted
//! average ([`LossIntervalHistory`], [`average_loss_interval`]), optional
//! history discounting (§5.5) and the TFRC-SP interval rules (RFC 4828 §3).
//!
//! Grouping losses into loss events (§5.2) needs the RTT and, in DCCP, the
//! window counter; [`crate::cc::tfrc_receiver`] does it and feeds this module.
//!
//! Notation (RFC 5348 §5.4): I_0 is the open interval since the start of the
//! most recent loss event, I_1 … I_n the closed ones, newest first; n = 8.

mod detector;

use std::collections::VecDeque;
use std::time::Duration;

use crate::time::Instant;

pub use detector::{
    Arrival, ArrivalKind, LossDetector, LostRun, PacketMark, MAX_HELD_MARKS, MAX_NDUPACK, NDUPACK,
    REMEMBERED_LOST_RUNS,
};

/// RFC 5348 §5.4: "n = 8" loss intervals in the weighted average.
pub const DEFAULT_LOSS_INTERVALS: usize = 8;

/// The largest n accepted (larger values are clamped): the history then holds
/// n + 1 = 28 intervals, the most a DCCP Loss Intervals option can carry
/// (RFC 4342 §8.6: up to 28 records).
pub const MAX_LOSS_INTERVALS: usize = 27;

/// RFC 5348 §5.5: the floor of the general discount factor DF ("if (DF <
/// THRESHOLD) DF = THRESHOLD"), so that intervals from an earlier time of high
/// congestion are never discounted entirely. 0.5, the value of the RFC 3448
/// text and of the ns-2 reference receiver (`tfrc-sink.cc`, `min_ratio`).
pub const DISCOUNT_THRESHOLD: f64 = 0.5;

/// The weights w_0 … w_(n-1) of RFC 5348 §5.4: 1 for the newest half, then
/// decreasing linearly; for n = 8: 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2.
pub fn loss_interval_weights(n: usize) -> Vec<f64> {
    let half = n as f64 / 2.0;
    (0..n)
        .map(|i| {
            let i = i as f64;
            // RFC 5348 §5.4: "w_i = 1, for 0 <= i < n/2" and
            // "w_i = 2*(n-i)/(n+2), for n/2 <= i < n"
            if i < half {
                1.0
            } else {
                2.0 * (n as f64 - i) / (n as f64 + 2.0)
            }
        })
        .collect()
}

/// The sums of RFC 5348 §5.4 for one history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightedAverage {
    /// Σ I_i·w_i over the open interval and the closed ones but the oldest.
    pub i_tot0: f64,
    /// Σ I_i·w_(i-1) over the closed intervals.
    pub i_tot1: f64,
    /// Σ w_i over as many weights as there are closed intervals.
    pub w_tot: f64,
    /// I_mean = max(I_tot0, I_tot1) / W_tot.
    pub i_mean: f64,
}

impl WeightedAverage {
    /// p = 1 / I_mean, at most 1.
    pub fn loss_event_rate(&self) -> f64 {
        (1.0 / self.i_mean).min(1.0)
    }
}

/// RFC 5348 §5.4 for `lengths` = [I_0, I_1, …, I_k] (I_0 the open interval)
/// and the weights of [`loss_interval_weights`]; `None` without a closed
/// interval or with more than `weights.len()` of them.
///
/// ```text
/// I_tot0 = 0; I_tot1 = 0; W_tot = 0;
/// for (i = 0 to k-1) { I_tot0 = I_tot0 + (I_i * w_i); W_tot = W_tot + w_i; }
/// for (i = 1 to k)   { I_tot1 = I_tot1 + (I_i * w_(i-1)); }
/// I_tot = max(I_tot0, I_tot1); I_mean = I_tot/W_tot;
/// ```
///
/// With fewer than n closed intervals only the k that exist and their k
/// weights count.
pub fn average_loss_interval(lengths: &[f64], weights: &[f64]) -> Option<WeightedAverage> {
    let k = lengths.len().checked_sub(1)?;
    if k == 0 || k > weights.len() {
        return None;
    }
    let i_tot0: f64 = (0..k).map(|i| lengths[i] * weights[i]).sum();
    let i_tot1: f64 = (1..=k).map(|i| lengths[i] * weights[i - 1]).sum();
    let w_tot: f64 = weights[..k].iter().sum();
    Some(WeightedAverage {
        i_tot0,
        i_tot1,
        w_tot,
        i_mean: i_tot0.max(i_tot1) / w_tot,
    })
}

/// What kind of interval a [`LossInterval`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalKind {
    /// I_0: from the start of the most recent loss event to the highest
    /// sequence number received.
    Open,
    /// Ended by the start of the next loss event.
    Closed,
    /// The synthetic first interval of RFC 5348 §6.3.1 (no loss event).
    Synthetic,
}

/// One loss interval: a loss event and the packets up to the next one
/// (RFC 5348 §5.3), with what a DCCP Loss Intervals option (RFC 4342 §8.6)
/// is built from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossInterval {
    kind: IntervalKind,
    start_seq: u64,
    start_time: Instant,
    start_window_counter: Option<u8>,
    length: u64,
    synthetic_length: f64,
    lost_packets: u64,
    last_lost_seq: u64,
    /// DF_i of RFC 5348 §5.5 (1 unless discounted).
    discount: f64,
}

impl LossInterval {
    /// Open, closed or synthetic.
    pub fn kind(&self) -> IntervalKind {
        self.kind
    }

    /// Whether this is I_0.
    pub fn is_open(&self) -> bool {
        self.kind == IntervalKind::Open
    }

    /// The first lost packet of the loss event that starts the interval
    /// (meaningless for the synthetic interval).
    pub fn start_seq(&self) -> u64 {
        self.start_seq
    }

    /// The nominal arrival time of that packet (RFC 5348 §5.2).
    pub fn start_time(&self) -> Instant {
        self.start_time
    }

    /// The window counter used for it (that of the last packet received
    /// before it), if packets carried window counters.
    pub fn start_window_counter(&self) -> Option<u8> {
        self.start_window_counter
    }

    /// Its length in packets (RFC 5348 §5.3): to the start of the next loss
    /// event when closed, to the highest sequence number received (inclusive)
    /// when open; the synthetic interval's 1/p rounded (at least 1). This is
    /// also the DCCP Data Length: every sequence number here is a data packet.
    pub fn length(&self) -> u64 {
        self.length
    }

    /// Packets lost in its loss event (TFRC-SP divides short intervals by it).
    pub fn lost_packets(&self) -> u64 {
        self.lost_packets
    }

    /// The last packet counted lost in its loss event.
    pub fn last_lost_seq(&self) -> u64 {
        self.last_lost_seq
    }

    /// The loss part of the interval: from its first lost packet to the last
    /// packet counted lost in the same loss event, inclusive (0 for the
    /// synthetic interval). RFC 4342 §8.6.1's Loss Length.
    pub fn loss_length(&self) -> u64 {
        if self.kind == IntervalKind::Synthetic {
            return 0;
        }
        (self.last_lost_seq - self.start_seq)
            .saturating_add(1)
            .min(self.length)
    }

    /// The rest of the interval, without loss: RFC 4342 §8.6.1's Lossless
    /// Length (`length() - loss_length()`).
    pub fn lossless_length(&self) -> u64 {
        self.length - self.loss_length()
    }

    /// The discount factor DF_i of RFC 5348 §5.5 (1 without discounting).
    pub fn discount(&self) -> f64 {
        self.discount
    }

    /// The length the weighted average uses, as a float (the synthetic
    /// interval is not rounded).
    fn exact_length(&self) -> f64 {
        match self.kind {
            IntervalKind::Synthetic => self.synthetic_length,
            _ => self.length as f64,
        }
    }
}

/// The start of a new loss event, as the caller determined it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossEventStart {
    /// Its first lost packet.
    pub seq: u64,
    /// That packet's nominal arrival time (RFC 5348 §5.2).
    pub time: Instant,
    /// The window counter attributed to it, if any.
    pub window_counter: Option<u8>,
    /// Packets of the event lost so far (at least 1).
    pub lost_packets: u64,
    /// The last of them.
    pub last_lost_seq: u64,
}

/// What [`LossIntervalHistory::average`] needs besides the history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AverageContext {
    /// The current time.
    pub now: Instant,
    /// The round-trip time R.
    pub rtt: Duration,
    /// Apply the TFRC-SP rules (RFC 4828 §3).
    pub small_packet: bool,
}

/// What happened when a late packet cancelled a declared loss (see
/// [`LossIntervalHistory::cancel_loss`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancellation {
    /// The packet was not counted in any remembered loss event.
    NotCounted,
    /// One loss fewer in the loss event that counted it; the interval
    /// boundaries did not change.
    Uncounted,
    /// The first lost packet of the open interval's loss event arrived: the
    /// event now starts at the next packet still lost, and I_1 grew by as much
    /// as I_0 shrank.
    StartMoved,
    /// The open interval's loss event lost its only remaining loss: the event
    /// is removed and I_1 is open again (after the first event, the history
    /// is empty again).
    EventRemoved,
}

/// Interval lengths for the average, newest first (no allocation per packet).
type Lengths = [f64; MAX_LOSS_INTERVALS + 1];

/// The bounded history of loss intervals: I_0 and up to n closed ones
/// (the synthetic first interval counting as one).
#[derive(Clone, Debug)]
pub struct LossIntervalHistory {
    weights: Vec<f64>,
    discounting: bool,
    /// Newest first: `intervals[0]` is I_0 once there has been a loss event.
    intervals: VecDeque<LossInterval>,
}

impl LossIntervalHistory {
    /// A history averaging `n` intervals (clamped to
    /// `1..=`[`MAX_LOSS_INTERVALS`]; RFC 5348 uses [`DEFAULT_LOSS_INTERVALS`]),
    /// with history discounting (RFC 5348 §5.5) if `discounting`.
    pub fn new(n: usize, discounting: bool) -> Self {
        let n = n.clamp(1, MAX_LOSS_INTERVALS);
        LossIntervalHistory {
            weights: loss_interval_weights(n),
            discounting,
            intervals: VecDeque::with_capacity(n + 1),
        }
    }

    /// n, the number of intervals averaged.
    pub fn n(&self) -> usize {
        self.weights.len()
    }

    /// True until the first loss event.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    /// The intervals, newest (I_0) first; at most n + 1.
    pub fn intervals(&self) -> impl ExactSizeIterator<Item = &LossInterval> + '_ {
        self.intervals.iter()
    }

    /// I_0, once there has been a loss event.
    pub fn open(&self) -> Option<&LossInterval> {
        self.intervals.front().filter(|i| i.is_open())
    }

    /// Records the first loss event: the synthetic interval of RFC 5348
    /// §6.3.1 (`synthetic_length` = 1/p, at least 1) becomes I_1 and the event
    /// opens I_0. Replaces any previous content.
    pub fn start_first_event(
        &mut self,
        event: LossEventStart,
        synthetic_length: f64,
        highest_seq: u64,
    ) {
        let synthetic_length = if synthetic_length.is_finite() {
            synthetic_length.max(1.0)
        } else {
            1.0
        };
        self.intervals.clear();
        self.intervals.push_front(LossInterval {
            kind: IntervalKind::Synthetic,
            start_seq: event.seq,
            start_time: event.time,
            start_window_counter: None,
            // Saturating float-to-int conversion.
            length: synthetic_length.round() as u64,
            synthetic_length,
            lost_packets: 0,
            last_lost_seq: event.seq,
            discount: 1.0,
        });
        self.intervals.push_front(open_interval(event, highest_seq));
    }

    /// Records a new loss event after the first (RFC 5348 §5.3): I_0 is
    /// closed at the event's first lost packet and the event opens a new I_0;
    /// the oldest interval beyond n + 1 is forgotten. With discounting, the
    /// general discount factor of the moment is folded into the older
    /// intervals' DF_i (§5.5). Without a previous event, this starts a history
    /// without the synthetic interval.
    pub fn start_event(&mut self, event: LossEventStart, highest_seq: u64) {
        if self.discounting {
            let df = self.general_discount(&self.lengths(None));
            // RFC 5348 §5.5: at a new loss event the general DF of the moment
            // is folded into the DF_i of the intervals it discounted, those
            // older than I_0; the closing I_0 starts undiscounted (as in the
            // ns-2 reference receiver). DF here is computed from the lengths
            // without TFRC-SP's division.
            for interval in self.intervals.iter_mut().skip(1) {
                interval.discount *= df;
            }
        }
        if let Some(open) = self.intervals.front_mut().filter(|i| i.is_open()) {
            open.kind = IntervalKind::Closed;
            // RFC 5348 §5.3: an interval starting at S_A, followed by one
            // starting at S_B, holds S_B - S_A packets.
            open.length = event.seq.saturating_sub(open.start_seq).max(1);
        }
        self.intervals.push_front(open_interval(event, highest_seq));
        self.intervals.truncate(self.n() + 1);
    }

    /// Adds `count` losses ending at `last_lost_seq` to the open interval's
    /// loss event.
    pub fn add_losses_to_open_event(&mut self, count: u64, last_lost_seq: u64) {
        if let Some(open) = self.intervals.front_mut().filter(|i| i.is_open()) {
            open.lost_packets = open.lost_packets.saturating_add(count);
            open.last_lost_seq = open.last_lost_seq.max(last_lost_seq);
        }
    }

    /// The highest sequence number received is now `highest_seq`: I_0 extends
    /// to it (RFC 5348 §5.3).
    pub fn set_highest(&mut self, highest_seq: u64) {
        if let Some(open) = self.intervals.front_mut().filter(|i| i.is_open()) {
            open.length = open_length(open.start_seq, highest_seq);
        }
    }

    /// A late packet `seq` cancelled a declared loss (RFC 5348 §5.1: "the
    /// late packet can fill the hole in the TFRC reception record, and the
    /// receiver can recalculate the loss event rate"); `detector` has already
    /// taken the packet and tells which packets are still lost.
    ///
    /// What changes:
    /// - in the open interval's loss event, the loss is un-counted; if it was
    ///   the event's first lost packet the event starts at the next packet of
    ///   the event still lost (I_1 grows, I_0 shrinks); if it was the event's
    ///   only remaining loss the event is removed and I_1 is open again (the
    ///   first event removed leaves an empty history: p = 0);
    /// - in a closed interval's loss event, only the loss count drops (for
    ///   TFRC-SP and the Loss Intervals option): a closed interval's
    ///   boundaries are final, as the later loss events were grouped and
    ///   measured from them.
    pub fn cancel_loss(
        &mut self,
        seq: u64,
        detector: &LossDetector,
        highest_seq: u64,
    ) -> Cancellation {
        let Some(index) = self.intervals.iter().position(|interval| {
            interval.kind != IntervalKind::Synthetic
                && (interval.start_seq..=interval.last_lost_seq).contains(&seq)
        }) else {
            return Cancellation::NotCounted;
        };
        let interval = &mut self.intervals[index];
        if interval.lost_packets == 0 {
            return Cancellation::NotCounted;
        }
        interval.lost_packets -= 1;
        if seq == interval.last_lost_seq && seq != interval.start_seq {
            interval.last_lost_seq = detector
                .last_lost_in(interval.start_seq, seq - 1)
                .unwrap_or(interval.start_seq);
        }
        if seq != interval.start_seq || !interval.is_open() {
            return Cancellation::Uncounted;
        }
        let next = seq
            .checked_add(1)
            .and_then(|from| detector.first_lost_in(from, interval.last_lost_seq));
        match next {
            Some((next, run)) if interval.lost_packets > 0 => {
                interval.start_seq = next;
                interval.start_time = run.nominal_arrival(next);
                interval.start_window_counter = run.before.window_counter;
                interval.length = open_length(next, highest_seq);
                if let Some(previous) = self.intervals.get_mut(1) {
                    if previous.kind == IntervalKind::Closed {
                        previous.length = next.saturating_sub(previous.start_seq).max(1);
                    }
                }
                Cancellation::StartMoved
            }
            _ => {
                self.intervals.pop_front();
                match self.intervals.front_mut() {
                    Some(previous) if previous.kind == IntervalKind::Closed => {
                        previous.kind = IntervalKind::Open;
                        previous.length = open_length(previous.start_seq, highest_seq);
                    }
                    // Only the synthetic interval is left: no loss event at all.
                    _ => self.intervals.clear(),
                }
                Cancellation::EventRemoved
            }
        }
    }

    /// The interval lengths the average uses, with the TFRC-SP adjustment of
    /// short closed intervals when `small_packet` gives (R, true).
    fn lengths(&self, small_packet: Option<Duration>) -> Lengths {
        let mut lengths = [0.0; MAX_LOSS_INTERVALS + 1];
        // The start of the next newer interval, which ends this one.
        let mut newer_start: Option<Instant> = None;
        let adjusted = self.intervals.iter().map(|interval| {
            let mut length = interval.exact_length();
            // RFC 4828 §3 (loss event rate): "for a short loss interval
            // with N packets, including K lost or marked packets, the loss
            // interval length is calculated as N/K, instead of as N",
            // short meaning less than two round-trip times long.
            if let (Some(rtt), Some(end)) = (small_packet, newer_start) {
                let short = end.saturating_duration_since(interval.start_time) < rtt * 2;
                if short && interval.kind == IntervalKind::Closed && interval.lost_packets > 0 {
                    length /= interval.lost_packets as f64;
                }
            }
            newer_start = Some(interval.start_time);
            length
        });
        for (slot, length) in lengths.iter_mut().zip(adjusted) {
            *slot = length;
        }
        lengths
    }

    /// The general discount factor DF of RFC 5348 §5.5 for these lengths.
    fn general_discount(&self, lengths: &Lengths) -> f64 {
        let k = self.intervals.len().saturating_sub(1).min(self.n());
        if !self.discounting || k == 0 {
            return 1.0;
        }
        // "the receiver computes the weighted average I_mean of the loss
        // intervals I_1, ..., I_n" with weights w_(i-1)*DF_i.
        let (i_tot, w_tot) = self.closed_sums(lengths, k);
        let i_mean = i_tot / w_tot;
        // "if (I_0 > 2 * I_mean) { DF = 2 * I_mean/I_0; if (DF < THRESHOLD)
        // DF = THRESHOLD; } else DF = 1;"
        if lengths[0] > 2.0 * i_mean {
            (2.0 * i_mean / lengths[0]).max(DISCOUNT_THRESHOLD)
        } else {
            1.0
        }
    }

    /// I_tot1 and W_tot1 (RFC 5348 §5.4): the weighted sum of the `k` closed
    /// intervals I_1..I_k and of their weights, each with its §5.5 discount
    /// factor DF_i (1 without discounting).
    fn closed_sums(&self, lengths: &[f64], k: usize) -> (f64, f64) {
        self.intervals
            .iter()
            .zip(lengths)
            .skip(1)
            .zip(&self.weights)
            .take(k)
            .fold(
                (0.0, 0.0),
                |(i_tot, w_tot), ((interval, length), weight)| {
                    let w = weight * interval.discount;
                    (i_tot + length * w, w_tot + w)
                },
            )
    }

    /// j, the mean number of packets lost per loss event, which the
    /// MulTFRC equation takes beside p (draft-irtf-iccrg-multfrc): the lost
    /// packets of the n newest loss events (the open interval's first),
    /// weighted as the loss intervals are (RFC 5348 §5.4); the synthetic
    /// interval, which has no loss event, is left out. `None` before the
    /// first loss event.
    pub fn mean_lost_packets(&self) -> Option<f64> {
        let (sum, weight) = self
            .intervals
            .iter()
            .filter(|i| i.kind != IntervalKind::Synthetic && i.lost_packets > 0)
            .zip(&self.weights)
            .fold((0.0, 0.0), |(sum, weight), (interval, w)| {
                (sum + interval.lost_packets as f64 * w, weight + w)
            });
        (weight > 0.0).then(|| (sum / weight).max(1.0))
    }

    /// The average loss interval I_mean (RFC 5348 §5.4, with §5.5 and
    /// RFC 4828 §3 when configured); `None` before the first loss event.
    pub fn average(&self, context: AverageContext) -> Option<f64> {
        let k = self.intervals.len().checked_sub(1)?.min(self.n());
        if k == 0 {
            return None;
        }
        if !context.small_packet {
            return Some(self.plain_average(k));
        }
        Some(self.average_of(&self.lengths(Some(context.rtt)), k, context))
    }

    /// [`average`](Self::average) over `lengths` (I_0 first) and `k` ≥ 1
    /// closed intervals.
    fn average_of(&self, lengths: &Lengths, k: usize, context: AverageContext) -> f64 {
        let df = self.general_discount(lengths);
        // RFC 5348 §5.4 sums, with §5.5's factors: DF_i on every closed
        // interval and the general DF on those older than I_0 in I_tot0 (on
        // I_0 as well it would cancel out of the ratio). Without discounting
        // every factor is 1 and W_tot0 = W_tot1 = W_tot.
        let (i_tot0, w_tot0) = self
            .intervals
            .iter()
            .zip(lengths)
            .zip(&self.weights)
            .take(k)
            .skip(1)
            .fold(
                (lengths[0] * self.weights[0], self.weights[0]),
                |(i_tot, w_tot), ((interval, length), weight)| {
                    let w = weight * interval.discount * df;
                    (i_tot + length * w, w_tot + w)
                },
            );
        let (i_tot1, w_tot1) = self.closed_sums(lengths, k);
        let mean1 = i_tot1 / w_tot1;
        // RFC 4828 §3 (TFRC-SP): the open interval I_0 is taken into account
        // only once it is at least two round-trip times long; until then the
        // average is that of the closed intervals alone (I_tot1).
        let open_is_young = context.small_packet
            && context
                .now
                .saturating_duration_since(self.intervals[0].start_time)
                < context.rtt * 2;
        if open_is_young {
            mean1
        } else {
            (i_tot0 / w_tot0).max(mean1)
        }
    }

    /// [`average`](Self::average) without TFRC-SP (every interval at its
    /// exact length, I_0 always counted), over `k` ≥ 1 closed intervals:
    /// the same sums in the same order, read from the intervals directly
    /// rather than from a copied array of lengths (this runs on every data
    /// packet the receiver gets).
    fn plain_average(&self, k: usize) -> f64 {
        let (i_tot1, w_tot1) = self
            .intervals
            .iter()
            .skip(1)
            .zip(&self.weights)
            .take(k)
            .fold((0.0, 0.0), |(i_tot, w_tot), (interval, weight)| {
                let w = weight * interval.discount;
                (i_tot + interval.exact_length() * w, w_tot + w)
            });
        let l0 = self
            .intervals
            .front()
            .map_or(0.0, LossInterval::exact_length);
        let df = if self.discounting {
            let i_mean = i_tot1 / w_tot1;
            if l0 > 2.0 * i_mean {
                (2.0 * i_mean / l0).max(DISCOUNT_THRESHOLD)
            } else {
                1.0
            }
        } else {
            1.0
        };
        let w0 = self.weights[0];
        let (i_tot0, w_tot0) = self
            .intervals
            .iter()
            .zip(&self.weights)
            .take(k)
            .skip(1)
            .fold((l0 * w0, w0), |(i_tot, w_tot), (interval, weight)| {
                let w = weight * interval.discount * df;
                (i_tot + interval.exact_length() * w, w_tot + w)
            });
        (i_tot0 / w_tot0).max(i_tot1 / w_tot1)
    }

    /// The loss event rate p = 1/I_mean (RFC 5348 §5.4), in [0, 1]; 0 before
    /// the first loss event.
    pub fn loss_event_rate(&self, context: AverageContext) -> f64 {
        match self.average(context) {
            Some(i_mean) if i_mean > 0.0 => (1.0 / i_mean).min(1.0),
            Some(_) => 1.0,
            None => 0.0,
        }
    }
}

fn open_length(start_seq: u64, highest_seq: u64) -> u64 {
    highest_seq.saturating_sub(start_seq).saturating_add(1)
}

fn open_interval(event: LossEventStart, highest_seq: u64) -> LossInterval {
    LossInterval {
        kind: IntervalKind::Open,
        start_seq: event.seq,
        start_time: event.time,
        start_window_counter: event.window_counter,
        length: open_length(event.seq, highest_seq),
        synthetic_length: 0.0,
        lost_packets: event.lost_packets.max(1),
        last_lost_seq: event.last_lost_seq.max(event.seq),
        discount: 1.0,
    }
}

#[cfg(test)]
mod tests;
