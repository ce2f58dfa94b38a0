//! Congestion control: the rate controllers behind one trait.
//!
//! | controller | standard | module |
//! |---|---|---|
//! | TFRC sender | RFC 5348 §4 | [`tfrc`] |
//! | TFRC receiver (loss history, feedback) | RFC 5348 §5, §6 | [`loss_history`], [`tfrc_receiver`] |
//! | TFRC-SP (small packets, CCID 4) | RFC 4828, RFC 5622 | [`tfrc`] with [`tfrc::SmallPacketConfig`] |
//! | TCP-like window control (CCID 2) | RFC 4341 | [`ccid2`] |
//! | fixed rate for a dedicated bearer (experimental CCID 249) | paper 003 §1, §4 | [`fixed_rate`] |
//! | connection count of multi-connection TFRC (MULTFRC, E-MULTFRC, aggregate) | paper 001 eq. 6, paper 000 eq. 2 | [`multi`] |
//! | receiver-buffer control of scalable video (sender schedule, receiver buffer) | paper 004 §2 | [`buffer`] |
//!
//! Every controller is built from a `…Config` whose `Default` names the RFC
//! constants, and implements [`RateController`]. The throughput equations are
//! in [`equation`] (RFC 5348 §3.1) and [`multfrc`] (the n-flow MulTFRC equation
//! and paper 001's analysis helpers). [`rtt`] is RFC 6298's RTT estimator
//! and retransmission timeout, used by CCID 2 and the simulator's TCP.
//!
//! Nothing here reads a clock: every call takes `now`.

use std::fmt;
use std::time::Duration;

use crate::time::Instant;
use crate::units::Rate;

pub mod buffer;
pub mod ccid2;
pub mod equation;
pub mod fixed_rate;
pub mod loss_history;
pub mod multfrc;
pub mod multi;
pub mod rtt;
pub mod tfrc;
pub mod tfrc_receiver;

/// When the next packet may leave, as a controller sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendPermission {
    /// A packet may be sent now.
    Now,
    /// Pacing: the next packet may be sent at this time, not before.
    At(Instant),
    /// Window-based control: the window is full; wait for feedback (or a timeout).
    WindowFull,
}

/// Feedback a receiver returned, in the form the controller consumes.
#[derive(Clone, Debug, PartialEq)]
pub enum Feedback {
    /// TFRC feedback (RFC 5348 §6.2; in DCCP the options of RFC 4342 §8).
    Tfrc(TfrcFeedback),
    /// Acknowledgement state (RFC 4340 §11.4 Ack Vector), for CCID 2.
    Ack(AckFeedback),
}

/// The contents of one TFRC feedback packet (RFC 5348 §6.2).
#[derive(Clone, Debug, PartialEq)]
pub struct TfrcFeedback {
    /// The send time of the most recent data packet the receiver got
    /// (t_recvdata), echoed back; with the sender's own clock this gives the RTT.
    pub echoed_send_time: Instant,
    /// Time the receiver held that packet before sending this feedback (t_delay).
    pub receiver_delay: Duration,
    /// The rate at which the receiver got data over the last RTT (X_recv).
    pub receive_rate: Rate,
    /// The loss event rate p; zero when no loss has been seen.
    pub loss_event_rate: f64,
    /// The highest sequence number received when the feedback was sent.
    pub highest_seq: u64,
}

/// What one run of an Ack Vector says of a run of consecutive packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckState {
    /// Received (Ack Vector state 0).
    Received,
    /// Received with an ECN Congestion Experienced mark (state 1).
    ReceivedEcnMarked,
    /// Not yet received (state 3).
    NotReceived,
}

/// A run of `length` consecutive packets with the same state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRun {
    /// Their state.
    pub state: AckState,
    /// How many packets (at least one).
    pub length: u64,
}

/// Acknowledgement feedback for CCID 2 (RFC 4341 §5, RFC 4340 §11.4).
///
/// `runs` describe packets going *backwards* from `ack_number`: the first run
/// starts at `ack_number` and covers `ack_number`, `ack_number - 1`, …; sequence
/// numbers not covered by any run are unknown (not reported).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckFeedback {
    /// The acknowledgement number: the greatest sequence number received.
    pub ack_number: u64,
    /// The runs, newest first.
    pub runs: Vec<AckRun>,
}

/// The feedback was of a kind this controller does not use (a driver bug:
/// each CCID defines which feedback its receiver sends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{controller} cannot use {got} feedback")]
pub struct FeedbackMismatch {
    /// The controller's name.
    pub controller: &'static str,
    /// The kind of feedback given.
    pub got: &'static str,
}

impl Feedback {
    /// A short name of the feedback kind, for errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Feedback::Tfrc(_) => "TFRC",
            Feedback::Ack(_) => "Ack Vector",
        }
    }
}

/// A sender-side congestion controller.
///
/// The driver (a DCCP connection, the simulator, a test) calls, in order:
/// 1. [`permission`](Self::permission) before each packet, and sends only on
///    [`SendPermission::Now`];
/// 2. [`on_packet_sent`](Self::on_packet_sent) for each packet sent;
/// 3. [`on_application_limited`](Self::on_application_limited) when it was
///    allowed to send but had nothing to send;
/// 4. [`on_feedback`](Self::on_feedback) for each feedback received;
/// 5. [`on_timeout`](Self::on_timeout) whenever `now` reaches
///    [`next_timeout`](Self::next_timeout).
pub trait RateController: fmt::Debug + Send {
    /// A short name (`"tfrc"`, `"tfrc-sp"`, `"ccid2"`).
    fn name(&self) -> &'static str;

    /// May a packet of `size_bytes` be sent at `now`?
    fn permission(&mut self, now: Instant, size_bytes: usize) -> SendPermission;

    /// A data packet with sequence number `seq` and `size_bytes` bytes was sent.
    fn on_packet_sent(&mut self, now: Instant, seq: u64, size_bytes: usize);

    /// The sender was allowed to send at `now` but had no data (RFC 5348 §8.2).
    fn on_application_limited(&mut self, now: Instant);

    /// Feedback arrived from the receiver.
    fn on_feedback(&mut self, now: Instant, feedback: &Feedback) -> Result<(), FeedbackMismatch>;

    /// A timer the controller asked for has expired (or `now` is later).
    fn on_timeout(&mut self, now: Instant);

    /// The earliest time the controller needs [`on_timeout`](Self::on_timeout).
    fn next_timeout(&self) -> Option<Instant>;

    /// The rate the controller currently allows (TFRC's X; for a window
    /// controller, cwnd·s/R).
    fn allowed_rate(&self) -> Rate;

    /// The smoothed round-trip time, once there is a sample.
    fn rtt(&self) -> Option<Duration>;
}

/// A configuration that builds a controller (the quinn pattern: the config is
/// also the factory).
pub trait ControllerConfig: fmt::Debug + Send + Sync {
    /// A new controller, started at `now`.
    fn build(&self, now: Instant) -> Box<dyn RateController>;
}
