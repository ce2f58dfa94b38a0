//! The configuration of a CCID 2 sender, with the RFC constants.

use std::time::Duration;

use super::Ccid2Sender;
use crate::cc::{ControllerConfig, RateController};
use crate::time::Instant;

/// RFC 4341 §5: "The NUMDUPACK parameter is set to three, as is currently the
/// case in TCP."
pub const NUMDUPACK: u32 = 3;

/// RFC 4340 §11.3: "New connections start with Ack Ratio 2 for both endpoints";
/// RFC 4341 §6: "The default Ack Ratio is two".
pub const DEFAULT_ACK_RATIO: u16 = 2;

/// The largest NUMDUPACK accepted (the loss detectors keep that many numbers).
pub const MAX_NUMDUPACK: u32 = 64;

/// How the congestion window grows in slow start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlowStartIncrease {
    /// RFC 4341 §5: "the congestion window is increased by one packet for
    /// every two newly acknowledged data packets with Ack Vector State 0 (not
    /// ECN-marked), up to a maximum of Ack Ratio/2 packets per
    /// acknowledgement" (Ack Ratio/2 rounded up, so that Ack Ratio 1 still
    /// grows). cwnd grows by half per round trip, as TCP's does with delayed acks.
    #[default]
    Rfc4341,
    /// One packet per newly acknowledged data packet, with no per-ack limit:
    /// cwnd doubles per round trip, as TCP's does without delayed acks. Not
    /// RFC 4341; for comparisons.
    PerAckedPacket,
}

/// What is wrong with a [`Ccid2Config`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Ccid2ConfigError {
    /// A count or size that must be positive is zero.
    #[error("CCID 2 option {name} must be at least 1")]
    Zero {
        /// The option's name.
        name: &'static str,
    },
    /// NUMDUPACK is above [`MAX_NUMDUPACK`].
    #[error("CCID 2 numdupack = {0} is above the maximum {MAX_NUMDUPACK}")]
    NumDupAckTooLarge(u32),
    /// The minimum RTO is above the maximum.
    #[error("CCID 2 min_rto {min:?} is above max_rto {max:?}")]
    RtoRange {
        /// The minimum.
        min: Duration,
        /// The maximum.
        max: Duration,
    },
    /// Fewer packets may be tracked than the window may hold.
    #[error("CCID 2 max_tracked_packets = {tracked} is below max_window = {window}")]
    TrackedBelowWindow {
        /// `max_tracked_packets`.
        tracked: usize,
        /// `max_window`.
        window: u32,
    },
}

/// The configuration of a CCID 2 sender; `Default` names the RFC constants.
///
/// It is also the factory ([`ControllerConfig`]). [`build`](ControllerConfig::build)
/// cannot fail, so it brings out-of-range values into range; call
/// [`validate`](Ccid2Config::validate) first to report them instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ccid2Config {
    /// The packet size s (the MSS) in bytes, for the initial window and
    /// [`allowed_rate`](RateController::allowed_rate).
    pub segment_size: usize,
    /// The initial window in packets; `None`: RFC 4341 §5 "initialized to at
    /// most four packets for new connections, following the rules from
    /// \[RFC3390\]" — min(4·s, max(2·s, 4380 bytes)) / s.
    pub initial_window: Option<u32>,
    /// The largest cwnd in packets (bounds the per-packet state).
    pub max_window: u32,
    /// Packets acknowledged after a hole before it counts as lost (RFC 4341 §5).
    pub numdupack: u32,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: Duration,
    /// The smallest RTO. RFC 6298 §2.4: "Whenever RTO is computed, if it is
    /// less than 1 second, then the RTO SHOULD be rounded up to 1 second." RFC
    /// 4341 §5 relaxes it: "Because DCCP does not retransmit data, DCCP does not
    /// require TCP's recommended minimum timeout of one second."
    pub min_rto: Duration,
    /// The largest RTO, with backoff (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// The clock granularity G of RFC 6298 §2 (RTO ≥ SRTT + G).
    pub clock_granularity: Duration,
    /// The RTT assumed for [`allowed_rate`](RateController::allowed_rate) and
    /// the Ack Ratio's once-per-RTT limit before the first sample (RFC 4340
    /// §3.4 default: 0.2 s).
    pub initial_rtt: Duration,
    /// The Ack Ratio to start with (RFC 4340 §11.3: 2), within RFC 4341 §6.1.2's
    /// constraints for the initial window.
    pub initial_ack_ratio: u16,
    /// Use RFC 4341 §6.1.2's "except that Ack Ratio 2 is always acceptable".
    /// Off by default: with cwnd = 1 it stalls the connection until a timeout.
    pub ack_ratio_two_always_acceptable: bool,
    /// How cwnd grows in slow start.
    pub slow_start: SlowStartIncrease,
    /// RFC 4341 §5.1 / RFC 5681 §4.1: restart from min(cwnd, initial window)
    /// after an idle period longer than the RTO.
    pub restart_after_idle: bool,
    /// The most packets whose state is kept; beyond it the oldest is dropped
    /// (forgotten, no longer in pipe). Must be at least `max_window`.
    pub max_tracked_packets: usize,
}

impl Default for Ccid2Config {
    fn default() -> Self {
        Ccid2Config {
            segment_size: 1460,
            initial_window: None,
            max_window: 65_536,
            numdupack: NUMDUPACK,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            clock_granularity: Duration::from_millis(1),
            initial_rtt: Duration::from_millis(200),
            initial_ack_ratio: DEFAULT_ACK_RATIO,
            ack_ratio_two_always_acceptable: false,
            slow_start: SlowStartIncrease::Rfc4341,
            restart_after_idle: true,
            max_tracked_packets: 2 * 65_536,
        }
    }
}

impl Ccid2Config {
    /// Checks the options, naming the first that is out of range.
    pub fn validate(&self) -> Result<(), Ccid2ConfigError> {
        let zero = |name| Err(Ccid2ConfigError::Zero { name });
        if self.segment_size == 0 {
            return zero("segment_size");
        }
        if self.initial_window == Some(0) {
            return zero("initial_window");
        }
        if self.max_window == 0 {
            return zero("max_window");
        }
        if self.numdupack == 0 {
            return zero("numdupack");
        }
        if self.initial_ack_ratio == 0 {
            return zero("initial_ack_ratio");
        }
        if self.numdupack > MAX_NUMDUPACK {
            return Err(Ccid2ConfigError::NumDupAckTooLarge(self.numdupack));
        }
        if self.min_rto > self.max_rto {
            return Err(Ccid2ConfigError::RtoRange {
                min: self.min_rto,
                max: self.max_rto,
            });
        }
        if self.max_tracked_packets < self.max_window as usize {
            return Err(Ccid2ConfigError::TrackedBelowWindow {
                tracked: self.max_tracked_packets,
                window: self.max_window,
            });
        }
        Ok(())
    }

    /// The initial window in packets: the configured one, or RFC 3390's
    /// min(4·s, max(2·s, 4380 bytes)) in whole packets, within `max_window`.
    pub fn initial_window_packets(&self) -> u32 {
        let window = self.initial_window.unwrap_or_else(|| {
            let s = self.segment_size.max(1);
            // RFC 3390 §1: "min (4*MSS, max (2*MSS, 4380 bytes))".
            let bytes = (4 * s).min((2 * s).max(4380));
            u32::try_from(bytes / s).unwrap_or(4)
        });
        window.clamp(1, self.max_window.max(1))
    }

    /// A copy with every option brought into range.
    pub(super) fn sanitized(&self) -> Ccid2Config {
        let mut c = self.clone();
        c.segment_size = c.segment_size.max(1);
        c.max_window = c.max_window.max(1);
        c.numdupack = c.numdupack.clamp(1, MAX_NUMDUPACK);
        c.initial_ack_ratio = c.initial_ack_ratio.max(1);
        c.max_rto = c.max_rto.max(c.min_rto);
        c.max_tracked_packets = c.max_tracked_packets.max(c.max_window as usize);
        c
    }
}

impl ControllerConfig for Ccid2Config {
    fn build(&self, now: Instant) -> Box<dyn RateController> {
        Box::new(Ccid2Sender::new(self, now))
    }
}
