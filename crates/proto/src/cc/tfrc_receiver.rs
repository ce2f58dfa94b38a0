//! The TFRC receiver (RFC 5348 §5 and §6): loss detection, loss events, the
//! loss event rate p, the receive rate X_recv and the feedback schedule; with
//! DCCP's window-counter rule for loss events (CCID 3, RFC 4342 §10.2) and the
//! small-packet variant (TFRC-SP, RFC 4828 §3; CCID 4, RFC 5622).
//!
//! # Driver contract (sans-IO)
//!
//! Nothing here reads a clock: every call that depends on time takes `now`.
//! A driver
//! 1. calls [`TfrcReceiver::on_data_packet`] for every data packet that
//!    arrives (duplicates included: they are recognised and ignored);
//! 2. then calls [`TfrcReceiver::poll_feedback`] and sends what it returns;
//! 3. calls [`TfrcReceiver::poll_feedback`] again whenever `now` reaches
//!    [`TfrcReceiver::next_timeout`] (`None`: nothing to do until the next
//!    packet).
//!
//! Getters ([`TfrcReceiver::loss_event_rate`], [`TfrcReceiver::loss_intervals`],
//! …) never change state.
//!
//! # The round-trip time R
//!
//! R is the sender's estimate carried in data packets (RFC 5348 §3.2.1);
//! without one, it is estimated from DCCP window counters (RFC 4342 §8.1: the
//! counter grows by 4 per RTT). Until there is any estimate, RFC 5348 §6.3
//! applies: the receiver sends feedback for every data packet until one
//! arrives with an RTT estimate; and
//! [`TfrcReceiverConfig::default_rtt`] stands in for R where a number is
//! needed (grouping losses, the first loss interval).

mod events;
mod measure;

use std::time::Duration;

use crate::cc::equation::tfrc_loss_event_rate;
use crate::cc::loss_history::{
    ArrivalKind, AverageContext, LossDetector, LossInterval, LossIntervalHistory, LostRun,
    PacketMark, DEFAULT_LOSS_INTERVALS, MAX_LOSS_INTERVALS, MAX_NDUPACK, NDUPACK,
};
use crate::cc::TfrcFeedback;
use crate::time::Instant;
use crate::units::Rate;

use events::LossEvents;
use measure::{ReceiveRateMeter, RttTracker, MAX_RTT, MIN_RTT};

/// RFC 4340 §3.4: the RTT assumed while there is no estimate, 0.2 seconds.
pub const DEFAULT_RTT: Duration = Duration::from_millis(200);

/// RFC 4342 §10.2: a loss whose window counter is at most this far (mod 16)
/// from that of the current loss event's start belongs to that event (the
/// counter grows by 4 per round-trip time).
pub const WINDOW_COUNTER_LOSS_EVENT_DISTANCE: u8 = 4;

/// The packet size s used to turn the receive rate into the first loss
/// interval (RFC 5348 §6.3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FirstIntervalPacketSize {
    /// The mean size of the data packets received so far.
    #[default]
    MeanReceived,
    /// A fixed size in bytes (for example the sender's configured s, or the
    /// nominal 1460 bytes of TFRC-SP).
    Fixed(usize),
}

/// How losses are grouped into loss events (RFC 5348 §5.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossEventGrouping {
    /// By window counter (RFC 4342 §10.2) when both the current loss event
    /// and the new loss carry one, else by interpolated arrival times.
    #[default]
    Auto,
    /// Always by interpolated arrival times and R (RFC 5348 §5.2).
    Interpolation,
}

/// Configuration of a [`TfrcReceiver`]; `Default` is RFC 5348's receiver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TfrcReceiverConfig {
    /// Packets with higher sequence numbers that make a hole a loss:
    /// RFC 5348 §5.1 NDUPACK = 3.
    pub ndupack: u64,
    /// Loss intervals in the weighted average: RFC 5348 §5.4 n = 8.
    pub loss_intervals: usize,
    /// History discounting (RFC 5348 §5.5, optional): off.
    pub history_discounting: bool,
    /// TFRC-SP receiver rules (RFC 4828 §3, CCID 4 of RFC 5622): off.
    pub small_packet: bool,
    /// The s of the first loss interval (RFC 5348 §6.3.1): the mean received.
    pub first_interval_packet_size: FirstIntervalPacketSize,
    /// How losses are grouped into loss events: [`LossEventGrouping::Auto`].
    pub loss_event_grouping: LossEventGrouping,
    /// R while there is no estimate: [`DEFAULT_RTT`] (RFC 4340 §3.4).
    pub default_rtt: Duration,
    /// Experimental, off by default (`None`): also compute a second loss
    /// event rate, [`TfrcReceiver::congestion_loss_event_rate`], that
    /// leaves out the losses (not the marks) declared within this many
    /// round-trip times of a packet that arrived marked Congestion
    /// Experienced. A path that has just marked one of this connection's
    /// packets has a bottleneck that signals congestion by marking (RFC
    /// 3168 §5); a packet lost while it does so was most likely lost on a
    /// channel, not in that queue. p itself is RFC 5348's, always. See
    /// `docs/results/fairness.md` for what it does and where it is wrong.
    pub channel_loss_memory: Option<u32>,
}

impl Default for TfrcReceiverConfig {
    fn default() -> Self {
        TfrcReceiverConfig {
            ndupack: NDUPACK,
            loss_intervals: DEFAULT_LOSS_INTERVALS,
            history_discounting: false,
            small_packet: false,
            first_interval_packet_size: FirstIntervalPacketSize::MeanReceived,
            loss_event_grouping: LossEventGrouping::Auto,
            default_rtt: DEFAULT_RTT,
            channel_loss_memory: None,
        }
    }
}

/// A receiver configuration value out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReceiverConfigError {
    /// NDUPACK must be in 1..=[`MAX_NDUPACK`].
    #[error("ndupack = {0} is outside 1..={max}", max = MAX_NDUPACK)]
    Ndupack(u64),
    /// n must be in 1..=[`MAX_LOSS_INTERVALS`].
    #[error("loss_intervals = {0} is outside 1..={max}", max = MAX_LOSS_INTERVALS)]
    LossIntervals(usize),
    /// A fixed packet size must be positive.
    #[error("first_interval_packet_size must be at least 1 byte")]
    ZeroPacketSize,
    /// The default RTT must be between 1 µs and 64 s.
    #[error("default_rtt = {0:?} is outside 1µs..=64s")]
    DefaultRtt(Duration),
    /// The channel-loss memory must be 1 to [`MAX_CHANNEL_LOSS_MEMORY`]
    /// round-trip times.
    #[error("channel_loss_memory = {0} is outside 1..={max}", max = MAX_CHANNEL_LOSS_MEMORY)]
    ChannelLossMemory(u32),
}

/// The longest [`TfrcReceiverConfig::channel_loss_memory`], in round-trip
/// times.
pub const MAX_CHANNEL_LOSS_MEMORY: u32 = 1024;

/// Recent runs of losses set aside from the congestion loss event rate,
/// remembered so that one of their packets arriving late is not taken back
/// from a loss event it was never in.
const SET_ASIDE_RUNS_KEPT: usize = 32;

impl TfrcReceiverConfig {
    /// Checks every value; [`TfrcReceiver::new`] clamps what this refuses.
    pub fn validate(&self) -> Result<(), ReceiverConfigError> {
        if !(1..=MAX_NDUPACK).contains(&self.ndupack) {
            return Err(ReceiverConfigError::Ndupack(self.ndupack));
        }
        if !(1..=MAX_LOSS_INTERVALS).contains(&self.loss_intervals) {
            return Err(ReceiverConfigError::LossIntervals(self.loss_intervals));
        }
        if self.first_interval_packet_size == FirstIntervalPacketSize::Fixed(0) {
            return Err(ReceiverConfigError::ZeroPacketSize);
        }
        if !(MIN_RTT..=MAX_RTT).contains(&self.default_rtt) {
            return Err(ReceiverConfigError::DefaultRtt(self.default_rtt));
        }
        if let Some(memory) = self.channel_loss_memory {
            if !(1..=MAX_CHANNEL_LOSS_MEMORY).contains(&memory) {
                return Err(ReceiverConfigError::ChannelLossMemory(memory));
            }
        }
        Ok(())
    }

    fn clamped(mut self) -> Self {
        self.ndupack = self.ndupack.clamp(1, MAX_NDUPACK);
        self.loss_intervals = self.loss_intervals.clamp(1, MAX_LOSS_INTERVALS);
        if self.first_interval_packet_size == FirstIntervalPacketSize::Fixed(0) {
            self.first_interval_packet_size = FirstIntervalPacketSize::Fixed(1);
        }
        self.default_rtt = self.default_rtt.clamp(MIN_RTT, MAX_RTT);
        self.channel_loss_memory = self
            .channel_loss_memory
            .map(|m| m.clamp(1, MAX_CHANNEL_LOSS_MEMORY));
        self
    }
}

/// What the receiver needs of one arriving data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataPacket {
    /// Its sequence number (one per data packet, increasing by one per packet
    /// sent; RFC 5348 §5.1).
    pub seq: u64,
    /// Its size in bytes (what X_recv counts).
    pub size_bytes: usize,
    /// The sender's timestamp, echoed as t_recvdata (RFC 5348 §3.2.1).
    pub send_time: Instant,
    /// The sender's current R, if the packet carries it (RFC 5348 §3.2.1).
    pub rtt_estimate: Option<Duration>,
    /// The DCCP window counter CCVal (0..=15; only the low 4 bits are used).
    pub window_counter: Option<u8>,
}

/// The newest arrival, for t_recvdata and t_delay.
#[derive(Clone, Copy, Debug)]
struct NewestArrival {
    send_time: Instant,
    arrival: Instant,
}

/// The second loss history of [`TfrcReceiverConfig::channel_loss_memory`].
#[derive(Clone, Debug)]
struct CongestionEvents {
    events: LossEvents,
    /// Its p as last computed.
    p: f64,
    /// When the last packet marked Congestion Experienced arrived.
    last_mark: Option<Instant>,
    /// Lost packets left out of it.
    set_aside: u64,
    /// The latest runs left out (first and last sequence number).
    recent: std::collections::VecDeque<(u64, u64)>,
}

/// The TFRC receiver. See the [module documentation](self) for the order in
/// which a driver calls it.
#[derive(Clone, Debug)]
pub struct TfrcReceiver {
    config: TfrcReceiverConfig,
    detector: LossDetector,
    /// Loss events of every loss and mark: p.
    events: LossEvents,
    /// With [`TfrcReceiverConfig::channel_loss_memory`]: the loss events
    /// without the losses taken for the channel's.
    congestion: Option<CongestionEvents>,
    rtt: RttTracker,
    meter: ReceiveRateMeter,
    received_packets: u64,
    /// Data packets that arrived marked Congestion Experienced (duplicates
    /// excluded).
    ce_marked: u64,
    received_bytes: u64,
    newest: Option<NewestArrival>,
    /// p as last computed.
    p: f64,
    data_since_feedback: bool,
    expedite_at: Option<Instant>,
    feedback_deadline: Option<Instant>,
}

impl TfrcReceiver {
    /// A receiver with `config`, its values clamped into range (see
    /// [`TfrcReceiverConfig::validate`] to refuse them instead). Nothing is
    /// timed before the first data packet (RFC 5348 §6.3), so `now` only
    /// marks the creation.
    pub fn new(config: TfrcReceiverConfig, now: Instant) -> Self {
        let _ = now;
        let config = config.clamped();
        let history =
            || LossIntervalHistory::new(config.loss_intervals, config.history_discounting);
        TfrcReceiver {
            detector: LossDetector::new(config.ndupack),
            events: LossEvents::new(history()),
            congestion: config.channel_loss_memory.map(|_| CongestionEvents {
                events: LossEvents::new(history()),
                p: 0.0,
                last_mark: None,
                set_aside: 0,
                recent: std::collections::VecDeque::new(),
            }),
            config,
            rtt: RttTracker::default(),
            meter: ReceiveRateMeter::default(),
            received_packets: 0,
            ce_marked: 0,
            received_bytes: 0,
            newest: None,
            p: 0.0,
            data_since_feedback: false,
            expedite_at: None,
            feedback_deadline: None,
        }
    }

    // --- getters ---

    /// The configuration in use (after clamping).
    pub fn config(&self) -> &TfrcReceiverConfig {
        &self.config
    }

    /// The loss event rate p as last computed (at the last packet or
    /// feedback); 0.0 before any loss.
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }

    /// The round-trip time the receiver works with, once it has one.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt.get()
    }

    /// The highest sequence number received.
    pub fn highest_seq(&self) -> Option<u64> {
        self.detector.highest().map(|mark| mark.seq)
    }

    /// Data packets that arrived marked Congestion Experienced (RFC 3168),
    /// duplicates excluded.
    pub fn ce_marked(&self) -> u64 {
        self.ce_marked
    }

    /// The mean size of the data packets received (duplicates excluded).
    pub fn mean_packet_size(&self) -> Option<f64> {
        (self.received_packets > 0)
            .then(|| self.received_bytes as f64 / self.received_packets as f64)
    }

    /// The loss intervals, newest (the open I_0) first: at most n + 1 of them,
    /// n + 1 ≤ 28, each with the lossless length, loss length and data length
    /// a DCCP Loss Intervals option (RFC 4342 §8.6) reports. Empty before the
    /// first loss event.
    pub fn loss_intervals(&self) -> impl ExactSizeIterator<Item = &LossInterval> + '_ {
        self.events.history.intervals()
    }

    /// j, the mean number of packets lost per loss event over the loss
    /// history ([`LossIntervalHistory::mean_lost_packets`]); `None` before
    /// the first loss event.
    pub fn mean_lost_packets(&self) -> Option<f64> {
        self.events.history.mean_lost_packets()
    }

    /// The loss-interval history.
    pub fn loss_history(&self) -> &LossIntervalHistory {
        &self.events.history
    }

    /// With [`TfrcReceiverConfig::channel_loss_memory`]: the loss event
    /// rate of the marks and of the losses not taken for the channel's, as
    /// last computed; `None` when that is off.
    pub fn congestion_loss_event_rate(&self) -> Option<f64> {
        self.congestion.as_ref().map(|c| c.p)
    }

    /// With [`TfrcReceiverConfig::channel_loss_memory`]: the lost packets
    /// left out of [`congestion_loss_event_rate`](Self::congestion_loss_event_rate)
    /// (0 when that is off).
    pub fn losses_set_aside(&self) -> u64 {
        self.congestion.as_ref().map_or(0, |c| c.set_aside)
    }

    /// The loss detector.
    pub fn loss_detector(&self) -> &LossDetector {
        &self.detector
    }

    /// When [`poll_feedback`](Self::poll_feedback) should next be called;
    /// `None` when no data packet arrived since the last feedback (RFC 5348
    /// §6.2: then no feedback is due whatever the time).
    pub fn next_timeout(&self) -> Option<Instant> {
        if !self.data_since_feedback {
            return None;
        }
        match (self.expedite_at, self.feedback_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // --- inputs ---

    /// A data packet arrived at `now` (RFC 5348 §6.1).
    pub fn on_data_packet(&mut self, now: Instant, packet: &DataPacket) {
        self.on_data_packet_ecn(now, packet, false);
    }

    /// A data packet arrived at `now`, marked Congestion Experienced if
    /// `ce_marked`. RFC 5348 §5 measures loss events from lost or marked
    /// packets alike; RFC 4342 §9 applies it to CCID 3.
    /// A marked packet is counted in the loss history as a lost one (it
    /// starts or joins a loss event, and counts in j), and everything else
    /// about it (X_recv, R) is that of a packet received.
    pub fn on_data_packet_ecn(&mut self, now: Instant, packet: &DataPacket, ce_marked: bool) {
        let counter = packet.window_counter.map(|c| c & 0x0F);
        let arrival = self.detector.on_packet_ecn(
            PacketMark {
                seq: packet.seq,
                arrival: now,
                window_counter: counter,
            },
            ce_marked,
        );
        // RFC 5348 §5.1: a duplicate says nothing new; it is not even data
        // "received since the previous feedback" (§6.2).
        if arrival.kind == ArrivalKind::Duplicate {
            return;
        }
        if !self.data_since_feedback {
            self.catch_up_feedback_timer(now);
        }
        self.data_since_feedback = true;
        self.newest = Some(NewestArrival {
            send_time: packet.send_time,
            arrival: now,
        });
        let size = u64::try_from(packet.size_bytes).unwrap_or(u64::MAX);
        self.received_packets = self.received_packets.saturating_add(1);
        if ce_marked {
            self.ce_marked = self.ce_marked.saturating_add(1);
        }
        self.received_bytes = self.received_bytes.saturating_add(size);
        self.meter.on_bytes(now, size);
        if let Some(rtt) = packet.rtt_estimate {
            self.rtt.on_carried(rtt);
        }
        if let (ArrivalKind::First | ArrivalKind::Newest, Some(c)) = (arrival.kind, counter) {
            self.rtt.on_window_counter(c, now);
        }
        self.events.note_window_counter(packet.seq, counter);
        if let Some(c) = &mut self.congestion {
            c.events.note_window_counter(packet.seq, counter);
        }

        // RFC 5348 §6.3: "Prepare and send a feedback packet" on the first.
        let mut expedite = arrival.kind == ArrivalKind::First;
        let highest = self.highest_seq().unwrap_or(packet.seq);
        // A marked packet whose loss was declared stays counted.
        if arrival.kind == ArrivalKind::Recovered && !ce_marked {
            // RFC 5348 §6: feedback also "whenever an out-of-order data
            // packet is received that removes a loss event from the
            // history".
            expedite |= self.events.cancel(packet.seq, &self.detector, highest);
            if let Some(c) = &mut self.congestion {
                let set_aside = c
                    .recent
                    .iter()
                    .any(|&(first, last)| (first..=last).contains(&packet.seq));
                if !set_aside {
                    c.events.cancel(packet.seq, &self.detector, highest);
                }
            }
        }
        if ce_marked {
            if let Some(c) = &mut self.congestion {
                c.last_mark = Some(now);
            }
        }
        let rtt = self.rtt_or_default();
        let grouping = self.config.loss_event_grouping;
        if !arrival.newly_lost.is_empty() {
            // Only the first loss event needs the synthetic interval (and
            // its inverse of the equation): asked for then.
            let mean_size = self.mean_packet_size();
            let (config, meter) = (&self.config, &self.meter);
            let synthetic = || first_interval_length(config, meter, mean_size, now, rtt);
            for run in &arrival.newly_lost {
                // RFC 5348 §6: feedback "whenever a new loss event is
                // detected without waiting for the end of an RTT".
                expedite |= self
                    .events
                    .on_lost_run(run, highest, rtt, grouping, synthetic);
            }
        }
        self.on_lost_runs_for_congestion(now, &arrival.newly_lost, highest);
        self.events.history.set_highest(highest);
        if let Some(c) = &mut self.congestion {
            c.events.history.set_highest(highest);
        }

        // RFC 5348 §6.1: "2) Let p_prev = p. 3) Calculate p as in Section 5.
        // 4) If p > p_prev, cause the feedback timer to expire".
        let p_prev = self.p;
        self.p = self.compute_p(now);
        expedite |= self.p > p_prev;
        self.update_congestion_p(now);
        // RFC 5348 §6.3: without an RTT estimate, feedback for every packet.
        expedite |= self.rtt.get().is_none();
        if expedite {
            self.expedite_at = Some(self.expedite_at.map_or(now, |at| at.min(now)));
        }
    }

    // --- outputs ---

    /// The feedback due at `now`, if any (RFC 5348 §6.2): at the first
    /// packet, once per R while data arrives, at once when §6.1 expedites it,
    /// and never when no data packet arrived since the previous one.
    pub fn poll_feedback(&mut self, now: Instant) -> Option<TfrcFeedback> {
        if !self.data_since_feedback {
            return None;
        }
        let due = self.expedite_at.is_some_and(|at| at <= now)
            || self.feedback_deadline.is_some_and(|at| at <= now);
        let newest = self.newest?;
        let highest_seq = self.highest_seq()?;
        if !due {
            return None;
        }
        let rtt = self.rtt_or_default();
        // RFC 5348 §6.2: "1) Calculate the average loss event rate".
        self.p = self.compute_p(now);
        self.update_congestion_p(now);
        // "2) Calculate the measured receive rate, X_recv".
        let receive_rate = self.meter.rate(now, rtt);
        self.meter.restart(now, rtt);
        // "4) Restart the feedback timer to expire after R_m seconds."
        self.feedback_deadline = Some(now + rtt);
        self.expedite_at = None;
        self.data_since_feedback = false;
        // "3) Prepare and send a feedback packet containing the information
        // described in Section 3.2.2".
        Some(TfrcFeedback {
            echoed_send_time: newest.send_time,
            receiver_delay: now.saturating_duration_since(newest.arrival),
            receive_rate,
            loss_event_rate: self.p,
            highest_seq,
        })
    }

    // --- internals ---

    fn rtt_or_default(&self) -> Duration {
        self.rtt.get().unwrap_or(self.config.default_rtt)
    }

    fn compute_p(&self, now: Instant) -> f64 {
        self.events.history.loss_event_rate(AverageContext {
            now,
            rtt: self.rtt_or_default(),
            small_packet: self.config.small_packet,
        })
    }

    /// RFC 5348 §6.2: "If no data packets have been received since the last
    /// feedback was sent, no feedback packet is sent, and the feedback timer
    /// is restarted to expire after R_m seconds." Done lazily: when data
    /// arrives after such quiet expiries, the deadline moves on by whole
    /// periods of R to the first at or after `now`.
    fn catch_up_feedback_timer(&mut self, now: Instant) {
        let Some(deadline) = self.feedback_deadline else {
            return;
        };
        if deadline >= now {
            return;
        }
        let period = u128::from(duration_nanos(self.rtt_or_default()).max(1));
        let late = u128::from(now.as_nanos() - deadline.as_nanos());
        let advance = late.div_ceil(period) * period;
        let next = u128::from(deadline.as_nanos()) + advance;
        self.feedback_deadline = Some(Instant::from_nanos(u64::try_from(next).unwrap_or(u64::MAX)));
    }

    /// Feeds the runs of [`TfrcReceiverConfig::channel_loss_memory`]'s
    /// second history: marks always, losses only while no mark arrived
    /// within the memory.
    fn on_lost_runs_for_congestion(&mut self, now: Instant, runs: &[LostRun], highest: u64) {
        let (Some(memory), false) = (self.config.channel_loss_memory, runs.is_empty()) else {
            return;
        };
        let rtt = self.rtt_or_default();
        let grouping = self.config.loss_event_grouping;
        let mean_size = self.mean_packet_size();
        let (config, meter) = (&self.config, &self.meter);
        let synthetic = || first_interval_length(config, meter, mean_size, now, rtt);
        let Some(c) = &mut self.congestion else {
            return;
        };
        let marking = c
            .last_mark
            .is_some_and(|mark| now.saturating_duration_since(mark) <= rtt.saturating_mul(memory));
        for run in runs {
            if marking && !run.is_marked() {
                c.set_aside = c.set_aside.saturating_add(run.last_seq - run.first_seq + 1);
                if c.recent.len() >= SET_ASIDE_RUNS_KEPT {
                    c.recent.pop_front();
                }
                c.recent.push_back((run.first_seq, run.last_seq));
                continue;
            }
            c.events.on_lost_run(run, highest, rtt, grouping, synthetic);
        }
    }

    /// Recomputes the second history's p.
    fn update_congestion_p(&mut self, now: Instant) {
        let context = AverageContext {
            now,
            rtt: self.rtt_or_default(),
            small_packet: self.config.small_packet,
        };
        if let Some(c) = &mut self.congestion {
            c.p = c.events.history.loss_event_rate(context);
        }
    }
}

/// RFC 5348 §6.3.1: the synthetic first loss interval 1/p, for the p at
/// which the throughput equation gives the receive rate of the last RTT
/// (`mean_size`: the mean size of the packets received).
fn first_interval_length(
    config: &TfrcReceiverConfig,
    meter: &ReceiveRateMeter,
    mean_size: Option<f64>,
    now: Instant,
    rtt: Duration,
) -> f64 {
    let s = match config.first_interval_packet_size {
        FirstIntervalPacketSize::MeanReceived => mean_size.unwrap_or(1.0),
        FirstIntervalPacketSize::Fixed(size) => size as f64,
    };
    1.0 / first_interval_loss_event_rate(meter.rate(now, rtt), s, rtt)
}

/// RFC 5348 §6.3.1: the loss event rate p ∈ (0, 1] at which the throughput
/// equation (b = 1, t_RTO = 4R) gives `x_recv` for packet size `s` bytes and
/// round-trip time `rtt`; the first loss interval is 1/p.
///
/// Exact (the equation's inverse, not a ±5 % search). A receive rate too low
/// for any p gives p = 1; no measurable rate (zero, as when every packet came
/// at one instant) is taken as one packet per RTT, the least the receiver
/// saw; `s` below 1 byte counts as 1 and `rtt` below 1 µs as 1 µs.
pub fn first_interval_loss_event_rate(x_recv: Rate, s: f64, rtt: Duration) -> f64 {
    let s = if s.is_finite() && s >= 1.0 { s } else { 1.0 };
    let rtt = rtt.max(MIN_RTT);
    let x = x_recv.bytes_per_sec();
    let x = if x > 0.0 && x.is_finite() {
        x
    } else {
        s / rtt.as_secs_f64()
    };
    match tfrc_loss_event_rate(Rate::from_bytes_per_sec(x), s, rtt) {
        Ok(p) if p > 0.0 => p.min(1.0),
        // Underflow at absurd rates: the smallest positive p.
        Ok(_) => f64::MIN_POSITIVE,
        // Below the rate of p = 1 (the only error left after the checks).
        Err(_) => 1.0,
    }
}

/// (b - a) mod 16: how far window counter `b` is past `a`.
fn counter_distance(a: u8, b: u8) -> u8 {
    b.wrapping_sub(a) & 0x0F
}

fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
