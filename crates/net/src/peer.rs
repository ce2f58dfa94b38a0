//! The other end: how long it may stay silent before it counts as gone,
//! and what its control packets say about the stream.
//!
//! DCCP has no keep-alive, and a peer that vanishes without an ICMP error
//! (behind a NAT or a link emulator, a host that lost power, a path that
//! black-holes) sends nothing at all. While data flows, silence is
//! unusual: a TFRC receiver reports at least once per round-trip time
//! while data arrives (RFC 5348 §6.2), and a sender's data arrives at
//! least as often as its frames. Both ends therefore give up on a peer
//! that stays silent for the [`PeerTimeout`], with an error that says so
//! (issue 12): the sender once it has sent something that went
//! unanswered, the receiver once data has begun to arrive (never while it
//! waits for a sender to connect, nor while a connected sender has sent
//! nothing yet).
//!
//! The silence watch takes the time as a parameter, like the
//! protocol code: only the loops of [`crate::send`] and [`crate::recv`]
//! read the clock.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use fairstream_proto::conn::{ConnectionId, Endpoint};
use fairstream_proto::time::Instant;
use fairstream_proto::units::parse_duration;
use fairstream_proto::wire::dccp::{Packet, PacketType, ResetCode};

/// The automatic timeout is this many smoothed RTTs: twice TFRC's
/// no-feedback interval of 4 RTTs (RFC 5348 §4.4), so that a peer has
/// missed two whole feedback periods before it counts as gone.
pub const PEER_TIMEOUT_RTTS: u32 = 8;
/// The automatic timeout is never shorter than this: a burst of wireless
/// loss, a scheduling hiccup or a congested queue must not end a stream.
pub const MIN_AUTO_PEER_TIMEOUT: Duration = Duration::from_secs(4);
/// After an ICMP error says the peer's port is closed, the timeout is at
/// most this many smoothed RTTs: half the automatic one, so that a peer
/// that really went away is noticed sooner, while one that is still
/// there (the ICMP message was forged, or came from a stale path) answers
/// well within it (TFRC feedback comes once per RTT, RFC 5348 §6.2).
pub const HINTED_PEER_TIMEOUT_RTTS: u32 = PEER_TIMEOUT_RTTS / 2;
/// The shortened timeout is never below this, whatever the RTT.
pub const MIN_HINTED_PEER_TIMEOUT: Duration = Duration::from_secs(1);
/// The shortest timeout a URL may set (`peer_timeout=`).
pub const MIN_PEER_TIMEOUT: Duration = Duration::from_millis(100);
/// The longest timeout a URL may set (`peer_timeout=`): one hour.
pub const MAX_PEER_TIMEOUT: Duration = Duration::from_secs(3600);

/// How long a peer may stay silent (URL key `peer_timeout`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PeerTimeout {
    /// `auto`: [`PEER_TIMEOUT_RTTS`] smoothed RTTs, at least
    /// [`MIN_AUTO_PEER_TIMEOUT`] (4 s; also before an RTT is known).
    #[default]
    Auto,
    /// A fixed time, whatever the RTT.
    Fixed(Duration),
}

impl PeerTimeout {
    /// The timeout for a path whose (largest) smoothed RTT is `rtt`.
    pub fn for_rtt(self, rtt: Option<Duration>) -> Duration {
        match self {
            PeerTimeout::Auto => rtt
                .map_or(MIN_AUTO_PEER_TIMEOUT, |r| {
                    r.saturating_mul(PEER_TIMEOUT_RTTS)
                })
                .max(MIN_AUTO_PEER_TIMEOUT),
            PeerTimeout::Fixed(timeout) => timeout,
        }
    }

    /// The timeout once an ICMP error hinted that the peer is gone (RFC
    /// 1122 §4.2.3.9 and RFC 5927 §4: a port unreachable is a soft error
    /// for an open connection): [`HINTED_PEER_TIMEOUT_RTTS`] RTTs, at least
    /// [`MIN_HINTED_PEER_TIMEOUT`], and never longer than the usual one.
    pub fn hinted(self, rtt: Option<Duration>) -> Duration {
        let short = rtt
            .map_or(MIN_HINTED_PEER_TIMEOUT, |r| {
                r.saturating_mul(HINTED_PEER_TIMEOUT_RTTS)
            })
            .max(MIN_HINTED_PEER_TIMEOUT);
        short.min(self.for_rtt(rtt))
    }
}

impl fmt::Display for PeerTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerTimeout::Auto => f.write_str("auto"),
            PeerTimeout::Fixed(timeout) => write!(f, "{}s", timeout.as_secs_f64()),
        }
    }
}

impl FromStr for PeerTimeout {
    type Err = String;

    /// `auto`, or a duration in [`MIN_PEER_TIMEOUT`]..=[`MAX_PEER_TIMEOUT`]
    /// (`5s`, `1500ms`).
    fn from_str(text: &str) -> Result<PeerTimeout, String> {
        if text == "auto" {
            return Ok(PeerTimeout::Auto);
        }
        let expected = "expected auto or a duration from 100ms to 3600s, e.g. 5s";
        let timeout = parse_duration(text).map_err(|e| format!("{e}; {expected}"))?;
        if !(MIN_PEER_TIMEOUT..=MAX_PEER_TIMEOUT).contains(&timeout) {
            return Err(expected.into());
        }
        Ok(PeerTimeout::Fixed(timeout))
    }
}

/// The largest smoothed RTT of `endpoint`'s connections (the handshake's
/// sample until the CCID has one).
pub(crate) fn largest_rtt(endpoint: &Endpoint) -> Option<Duration> {
    endpoint
        .connection_ids()
        .filter_map(|id| endpoint.connection(id))
        .filter_map(|c| c.stats().rtt)
        .max()
}

/// Measures how long a peer has left something unanswered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SilenceWatch {
    /// Since when an answer is due (`None`: nothing is).
    waiting_since: Option<Instant>,
}

impl SilenceWatch {
    /// Something the peer should answer happened at `now` (a packet sent;
    /// for a receiver, the last packet heard): the silence counts from the
    /// first such time after the peer was last heard.
    pub(crate) fn expect(&mut self, now: Instant) {
        self.waiting_since.get_or_insert(now);
    }

    /// The peer was heard: nothing is due.
    pub(crate) fn heard(&mut self) {
        self.waiting_since = None;
    }

    /// How long the peer has been silent with an answer due, if that is
    /// `timeout` or longer.
    pub(crate) fn expired(&self, now: Instant, timeout: Duration) -> Option<Duration> {
        let silence = now.saturating_duration_since(self.waiting_since?);
        (silence >= timeout).then_some(silence)
    }
}

/// What a control packet from the peer says about the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PeerSignal {
    /// Reset(Too Busy) (RFC 4340 §5.6, code 9): the receiver serves
    /// another sender.
    Busy,
    /// A CloseReq on this connection: the receiver ends the stream (RFC
    /// 4340 §8.3).
    CloseRequest(ConnectionId),
}

/// Reads the type (and a Reset's code) of a datagram before the session
/// takes it. A driver acts on the signal only once the connection accepted
/// the packet (its sequence-number checks passed), so a forged packet
/// cannot end a stream.
pub(crate) fn peek_signal(bytes: &[u8]) -> Option<PeerSignal> {
    let packet = Packet::new_checked(bytes).ok()?;
    match packet.packet_type().ok()? {
        PacketType::Reset => match packet.reset()? {
            (ResetCode::TooBusy, _) => Some(PeerSignal::Busy),
            _ => None,
        },
        PacketType::CloseReq => Some(PeerSignal::CloseRequest(ConnectionId {
            local_port: packet.dst_port(),
            remote_port: packet.src_port(),
        })),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn the_automatic_timeout_is_eight_rtts_and_at_least_four_seconds() {
        let auto = PeerTimeout::Auto;
        assert_eq!(auto.for_rtt(None), Duration::from_secs(4));
        assert_eq!(
            auto.for_rtt(Some(Duration::from_millis(100))),
            Duration::from_secs(4)
        );
        assert_eq!(
            auto.for_rtt(Some(Duration::from_secs(1))),
            Duration::from_secs(8)
        );
        let fixed = PeerTimeout::Fixed(Duration::from_millis(1500));
        assert_eq!(
            fixed.for_rtt(Some(Duration::from_secs(1))),
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn an_icmp_hint_halves_the_timeout_but_never_below_a_second() {
        let auto = PeerTimeout::Auto;
        assert_eq!(auto.hinted(None), Duration::from_secs(1));
        assert_eq!(
            auto.hinted(Some(Duration::from_millis(100))),
            Duration::from_secs(1)
        );
        assert_eq!(
            auto.hinted(Some(Duration::from_secs(1))),
            Duration::from_secs(4)
        );
        // A fixed timeout shorter than the hinted one stays as it is.
        let short = PeerTimeout::Fixed(Duration::from_millis(300));
        assert_eq!(short.hinted(None), Duration::from_millis(300));
    }

    #[test]
    fn timeouts_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!("auto".parse(), Ok(PeerTimeout::Auto));
        assert_eq!("5s".parse(), Ok(PeerTimeout::Fixed(Duration::from_secs(5))));
        assert_eq!(
            "250ms".parse(),
            Ok(PeerTimeout::Fixed(Duration::from_millis(250)))
        );
        for bad in ["0s", "50ms", "2h", "soon", "5", ""] {
            let error = bad.parse::<PeerTimeout>().unwrap_err();
            assert!(
                error.contains("expected auto or a duration"),
                "{bad}: {error}"
            );
        }
        assert_eq!(PeerTimeout::Auto.to_string(), "auto");
        assert_eq!(
            PeerTimeout::Fixed(Duration::from_millis(2500)).to_string(),
            "2.5s"
        );
    }

    #[test]
    fn silence_counts_from_the_first_unanswered_packet() {
        let mut watch = SilenceWatch::default();
        let timeout = Duration::from_secs(4);
        // Nothing sent: never expired.
        assert_eq!(watch.expired(at(60_000), timeout), None);
        watch.expect(at(1_000));
        watch.expect(at(2_000));
        assert_eq!(watch.expired(at(4_999), timeout), None);
        assert_eq!(
            watch.expired(at(5_000), timeout),
            Some(Duration::from_secs(4))
        );
        watch.heard();
        assert_eq!(watch.expired(at(9_000), timeout), None);
        watch.expect(at(9_000));
        assert_eq!(watch.expired(at(12_000), timeout), None);
        // A clock that went back is not silence.
        assert_eq!(watch.expired(at(1), timeout), None);
    }
}
