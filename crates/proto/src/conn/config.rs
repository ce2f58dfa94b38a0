//! The configuration of a DCCP connection, with defaults that name their RFC
//! constants.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use crate::cc::ccid2::Ccid2Config;
use crate::cc::fixed_rate::FixedRateConfig;
use crate::cc::tfrc::{SmallPacketConfig, TfrcConfig};
use crate::cc::tfrc_receiver::TfrcReceiverConfig;
use crate::wire::dccp::{ChecksumContext, PseudoHeader, PROTOCOL_DCCP};

/// A congestion control ID (RFC 4340 §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ccid {
    /// CCID 2: TCP-like congestion control (RFC 4341).
    Ccid2,
    /// CCID 3: TFRC (RFC 4342).
    Tfrc,
    /// CCID 4: TFRC-SP, the small-packet variant (RFC 5622).
    TfrcSp,
    /// CCID 248, from the range RFC 4340 §10/§19.5 leaves for experimental
    /// use (248-255), reserved here for MulTFRC (several TFRC flows' worth of
    /// rate in one connection).
    ///
    /// Status: it is negotiated only when it appears in
    /// [`ConnectionConfig::accepted_ccids`] (never by default). A
    /// half-connection using it runs the CCID 3 machinery; its sender's
    /// equation becomes the MulTFRC n-flow equation
    /// ([`MulTfrcEquation`](crate::cc::multfrc::MulTfrcEquation)) once the
    /// application sets n with
    /// [`Connection::set_tfrc_flows`](super::Connection::set_tfrc_flows), as
    /// the aggregate connection-count controller of a session does.
    MulTfrcExperimental,
    /// CCID 249, the next number of the experimental range (248-255,
    /// RFC 4340 §10/§19.5), used here for a fixed sending rate on a
    /// dedicated bearer (paper 003's proxy re-sends on one).
    ///
    /// Status: negotiated only when it appears in
    /// [`ConnectionConfig::accepted_ccids`] (never by default). The sender
    /// paces at [`ConnectionConfig::fixed_rate`]
    /// ([`FixedRateSender`](crate::cc::fixed_rate::FixedRateSender)) and
    /// ignores loss; the receiver is CCID 3's, so its feedback (RFC 4342
    /// §8) still gives the sender an RTT and the loss event rate to report.
    /// It has no congestion control: use it only where the path's capacity
    /// is reserved for the flow.
    FixedRateExperimental,
}

impl Ccid {
    /// The CCID for a wire value, if this implementation knows it.
    pub const fn from_number(number: u8) -> Option<Ccid> {
        match number {
            2 => Some(Ccid::Ccid2),
            3 => Some(Ccid::Tfrc),
            4 => Some(Ccid::TfrcSp),
            248 => Some(Ccid::MulTfrcExperimental),
            249 => Some(Ccid::FixedRateExperimental),
            _ => None,
        }
    }

    /// The wire value.
    pub const fn number(self) -> u8 {
        match self {
            Ccid::Ccid2 => 2,
            Ccid::Tfrc => 3,
            Ccid::TfrcSp => 4,
            Ccid::MulTfrcExperimental => 248,
            Ccid::FixedRateExperimental => 249,
        }
    }

    /// Whether the half-connection runs TFRC (CCID 3, 4 and the
    /// experimental MulTFRC), as opposed to the window control of CCID 2
    /// or the fixed rate of CCID 249.
    pub const fn is_tfrc(self) -> bool {
        !matches!(self, Ccid::Ccid2 | Ccid::FixedRateExperimental)
    }

    /// Whether the half-connection's receiver sends TFRC feedback (RFC 4342
    /// §8: Loss Event Rate, Receive Rate, Loss Intervals): every CCID but
    /// CCID 2, the fixed-rate CCID 249 included.
    pub const fn has_tfrc_feedback(self) -> bool {
        !matches!(self, Ccid::Ccid2)
    }
}

impl fmt::Display for Ccid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CCID {}", self.number())
    }
}

/// How the DCCP Checksum field is written and checked (RFC 4340 §9; RFC 6773).
///
/// The addresses are the connection's own (`local`) and its peer's
/// (`remote`): packets sent use the pseudo-header (local → remote), packets
/// received (remote → local). IPv4 and IPv6 are separate variants so that a
/// mixed pair cannot be configured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ChecksumMode {
    /// DCCP-UDP (RFC 6773): the UDP checksum protects the datagram and the
    /// DCCP Checksum field is zero and not checked (the decision documented in
    /// [`crate::wire::dccp`]).
    #[default]
    UdpEncapsulated,
    /// Native DCCP over IPv4: the RFC 4340 §9 checksum over the IPv4
    /// pseudo-header with protocol 33, as Wireshark verifies it. Used to
    /// produce captures of in-memory sessions.
    NativeV4 {
        /// This endpoint's address.
        local: Ipv4Addr,
        /// The peer's address.
        remote: Ipv4Addr,
    },
    /// Native DCCP over IPv6 (next header 33).
    NativeV6 {
        /// This endpoint's address.
        local: Ipv6Addr,
        /// The peer's address.
        remote: Ipv6Addr,
    },
}

impl ChecksumMode {
    /// The checksum context for packets this endpoint sends.
    pub fn send_context(&self) -> ChecksumContext {
        match *self {
            ChecksumMode::UdpEncapsulated => ChecksumContext::UdpEncapsulated,
            ChecksumMode::NativeV4 { local, remote } => {
                ChecksumContext::PseudoHeader(PseudoHeader::native_v4(local, remote))
            }
            ChecksumMode::NativeV6 { local, remote } => {
                ChecksumContext::PseudoHeader(PseudoHeader::native_v6(local, remote))
            }
        }
    }

    /// The checksum context for packets this endpoint receives.
    pub fn receive_context(&self) -> ChecksumContext {
        match *self {
            ChecksumMode::UdpEncapsulated => ChecksumContext::UdpEncapsulated,
            ChecksumMode::NativeV4 { local, remote } => {
                ChecksumContext::PseudoHeader(PseudoHeader::V4 {
                    src: remote,
                    dst: local,
                    protocol: PROTOCOL_DCCP,
                })
            }
            ChecksumMode::NativeV6 { local, remote } => {
                ChecksumContext::PseudoHeader(PseudoHeader::native_v6(remote, local))
            }
        }
    }

    /// The same mode seen from the peer (local and remote swapped).
    pub fn reversed(&self) -> ChecksumMode {
        match *self {
            ChecksumMode::UdpEncapsulated => ChecksumMode::UdpEncapsulated,
            ChecksumMode::NativeV4 { local, remote } => ChecksumMode::NativeV4 {
                local: remote,
                remote: local,
            },
            ChecksumMode::NativeV6 { local, remote } => ChecksumMode::NativeV6 {
                local: remote,
                remote: local,
            },
        }
    }
}

/// RFC 4340 §7.5.2: Sequence Window values "MUST be at least 32".
pub const MIN_SEQUENCE_WINDOW: u64 = 32;
/// RFC 4340 §7.5.2: the largest Sequence Window, 2^46 − 1.
pub const MAX_SEQUENCE_WINDOW: u64 = (1 << 46) - 1;
/// RFC 4340 §7.5.2: the default Sequence Window, 100 packets.
pub const DEFAULT_SEQUENCE_WINDOW: u64 = 100;
/// The default Service Code for RTP video carried over DCCP: "RTPV"
/// (0x52545056). RFC 5762 registers one Service Code per kind of RTP stream
/// ("RTPA" audio, "RTPV" video, "RTPT" text, "RTPO" other); fairstream carries
/// video.
pub const SERVICE_CODE_RTP: u32 = u32::from_be_bytes(*b"RTPV");
/// RFC 4340 §8.1.2: Service Code 4294967295 is invalid.
pub const INVALID_SERVICE_CODE: u32 = u32::MAX;
/// The bytes of header and options a data packet may need besides the
/// application data: a DCCP-DataAck header with 48-bit numbers (24 bytes)
/// plus an NDP Count option padded to 8 bytes.
pub const DATA_PACKET_OVERHEAD: usize = 32;

/// The configuration of a [`Connection`](super::Connection). `Default` gives
/// RFC 4340's values where it names one; the others are documented choices.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectionConfig {
    /// The preferred CCID for both half-connections (first in the preference
    /// lists this endpoint sends). Default: CCID 3.
    pub ccid: Ccid,
    /// The CCIDs this endpoint accepts, in preference order, after `ccid`.
    /// Default: 3, 2, 4. The server's list decides (RFC 4340 §6.3.1).
    pub accepted_ccids: Vec<Ccid>,
    /// The Service Code (RFC 4340 §8.1.2) a client asks for and a server
    /// accepts. Default: "RTPV" ([`SERVICE_CODE_RTP`], RFC 5762).
    pub service_code: u32,
    /// This endpoint's Sequence Window feature (RFC 4340 §7.5.2), 32 ..
    /// 2^46 − 1; the peer validates this endpoint's sequence numbers with it.
    /// Default 100.
    pub sequence_window: u64,
    /// How long a client keeps retransmitting Requests (and a PARTOPEN client
    /// Acks) before giving up with [`Event::HandshakeTimeout`](super::Event).
    /// RFC 4340 §8.1.1 gives "3 minutes, for example"; default 10 s.
    pub handshake_timeout: Duration,
    /// The first Request (and Close/CloseReq) retransmission. RFC 4340 §8.1.1:
    /// "The first retransmission should occur after approximately one second".
    pub initial_retransmit: Duration,
    /// The longest retransmission interval. RFC 4340 §8.1.1: "backing off to
    /// not less than one packet every 64 seconds". Default 64 s.
    pub max_retransmit_interval: Duration,
    /// The PARTOPEN Ack timer (RFC 4340 §8.1.5: "a roughly 200-millisecond
    /// timer"), backed off exponentially.
    pub partopen_ack_interval: Duration,
    /// How long a closing endpoint retransmits Close or CloseReq before it
    /// gives up and closes without the peer's answer. Default 10 s (a choice:
    /// RFC 4340 §8.3 asks only for retransmission with backoff).
    pub close_timeout: Duration,
    /// The largest DCCP packet this endpoint sends with application data,
    /// header included; the application data limit is this minus
    /// [`DATA_PACKET_OVERHEAD`]. Default 1400.
    pub max_packet_size: usize,
    /// Datagrams the send queue holds; beyond it [`send`](super::Connection::send)
    /// fails with [`SendError::QueueFull`](super::SendError). Default 256.
    pub send_queue_packets: usize,
    /// Datagrams the receive queue holds; when full the oldest is dropped and
    /// counted ([`Event::DatagramsDropped`](super::Event)). Default 256.
    pub recv_queue_packets: usize,
    /// The Maximum Segment Lifetime; TIMEWAIT lasts 2·MSL. RFC 4340 §8.3
    /// uses an MSL of 2 minutes; tests and simulations may use less.
    pub msl: Duration,
    /// The least time between two Syncs sent in reply to invalid packets.
    /// RFC 4340 §7.5.4 asks that such Syncs be rate-limited; the default of
    /// 1/8 s (at most eight per second) is Linux's.
    pub sync_rate_limit: Duration,
    /// How the DCCP checksum is written and checked. Default: UDP-encapsulated.
    pub checksum: ChecksumMode,
    /// The TFRC sender of CCID 3 (and the base of CCID 4, which adds
    /// [`SmallPacketConfig::CCID4`] when `small_packet` is `None`).
    pub tfrc: TfrcConfig,
    /// The TFRC receiver of CCID 3 (CCID 4 turns on `small_packet`).
    pub tfrc_receiver: TfrcReceiverConfig,
    /// The CCID 2 sender.
    pub ccid2: Ccid2Config,
    /// The sender of the experimental fixed-rate CCID 249. Default: 64
    /// kbit/s ([`FixedRateConfig::default`]).
    pub fixed_rate: FixedRateConfig,
    /// A CCID 2 receiver acknowledges every Ack Ratio data packets; this
    /// timer acknowledges data that waited longer. Default 20 ms (a choice).
    pub ccid2_ack_delay: Duration,
    /// Explicit Congestion Notification (RFC 4340 §12). `true` (the default,
    /// RFC 4340 §12.1: "DCCP endpoints are ECN-aware by default"): data
    /// packets leave ECT(0) while the peer agrees, and CE marks on received
    /// data count as congestion. `false` announces ECN Incapable = 1, for a
    /// driver that cannot read the ECN bits of received datagrams; then
    /// neither endpoint sends ECN-Capable packets.
    pub ecn: bool,
    /// A client pads its Requests with Padding options (RFC 4340 §5.8.1)
    /// to at least this many bytes, so that a server using Init Cookies
    /// (which answers nothing larger than what it got, RFC 4340 §8.1.4's
    /// reason for cookies) can answer. Default 0: no padding.
    pub request_min_len: usize,
    /// Application data a client's Requests carry (RFC 4340 §8.1.1: "Each
    /// new DCCP-Request MUST ... contain the same Service Code and
    /// application data as the original"). A bonded sender puts its
    /// session token here, so that a receiver knows the session's other
    /// paths ([`crate::session::PathToken`]). Default: none.
    pub request_data: Vec<u8>,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            ccid: Ccid::Tfrc,
            accepted_ccids: vec![Ccid::Tfrc, Ccid::Ccid2, Ccid::TfrcSp],
            service_code: SERVICE_CODE_RTP,
            sequence_window: DEFAULT_SEQUENCE_WINDOW,
            handshake_timeout: Duration::from_secs(10),
            initial_retransmit: Duration::from_secs(1),
            max_retransmit_interval: Duration::from_secs(64),
            partopen_ack_interval: Duration::from_millis(200),
            close_timeout: Duration::from_secs(10),
            max_packet_size: 1400,
            send_queue_packets: 256,
            recv_queue_packets: 256,
            msl: Duration::from_secs(120),
            sync_rate_limit: Duration::from_millis(125),
            checksum: ChecksumMode::UdpEncapsulated,
            tfrc: TfrcConfig::default(),
            tfrc_receiver: TfrcReceiverConfig::default(),
            ccid2: Ccid2Config::default(),
            fixed_rate: FixedRateConfig::default(),
            ccid2_ack_delay: Duration::from_millis(20),
            ecn: true,
            request_min_len: 0,
            request_data: Vec::new(),
        }
    }
}

impl ConnectionConfig {
    /// The CCID preference list this endpoint sends and reconciles with:
    /// `ccid` first, then `accepted_ccids`, without repeats.
    pub fn ccid_preferences(&self) -> Vec<u8> {
        let mut list = vec![self.ccid.number()];
        for ccid in &self.accepted_ccids {
            if !list.contains(&ccid.number()) {
                list.push(ccid.number());
            }
        }
        list
    }

    /// The application data limit of one packet.
    pub fn max_payload(&self) -> usize {
        self.max_packet_size.saturating_sub(DATA_PACKET_OVERHEAD)
    }

    /// The Sequence Window this endpoint announces, brought into RFC 4340
    /// §7.5.2's range.
    pub(crate) fn clamped_sequence_window(&self) -> u64 {
        self.sequence_window
            .clamp(MIN_SEQUENCE_WINDOW, MAX_SEQUENCE_WINDOW)
    }

    /// The TFRC sender configuration for `ccid`.
    pub(crate) fn tfrc_sender_config(&self, ccid: Ccid) -> TfrcConfig {
        let mut config = self.tfrc.clone();
        if ccid == Ccid::TfrcSp && config.small_packet.is_none() {
            // RFC 5622 §5: CCID 4 uses TFRC-SP with a header size of 36.
            config.small_packet = Some(SmallPacketConfig::CCID4);
        }
        config
    }

    /// The TFRC receiver configuration for `ccid`.
    pub(crate) fn tfrc_receiver_config(&self, ccid: Ccid) -> TfrcReceiverConfig {
        let mut config = self.tfrc_receiver;
        if ccid == Ccid::TfrcSp {
            // RFC 5622 §6: the CCID 4 receiver follows TFRC-SP's rules.
            config.small_packet = true;
        }
        if ccid == Ccid::MulTfrcExperimental && config.channel_loss_memory.is_none() {
            // The experimental CCID 248 also reports the loss event rate
            // without the losses of a marking path (its option 198); its
            // sender uses it only when asked (the adaptive controller).
            config.channel_loss_memory = Some(CHANNEL_LOSS_MEMORY_RTTS);
        }
        config
    }
}

/// How long, in round-trip times, a CE mark makes the CCID 248 receiver
/// take losses for the channel's (`TfrcReceiverConfig::channel_loss_memory`).
/// Measured on the fairness matrix's two CoDel+ECN *both* cells (fill of
/// the 5 Mbit/s and the 1 Mbit/s hop): 8 RTTs 0.72 and 0.89, 16 RTTs 0.92
/// and 0.90, 32 RTTs 1.03 and 0.95, 64 RTTs 1.08 and 0.96
/// (`docs/results/fairness.md`). Marks come only now and then at a fair
/// share, and a shorter memory lets the hop's losses between them count.
pub(crate) const CHANNEL_LOSS_MEMORY_RTTS: u32 = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferences_put_the_preferred_ccid_first_without_repeats() {
        let config = ConnectionConfig {
            ccid: Ccid::Ccid2,
            ..ConnectionConfig::default()
        };
        assert_eq!(config.ccid_preferences(), vec![2, 3, 4]);
        assert_eq!(
            ConnectionConfig::default().ccid_preferences(),
            vec![3, 2, 4]
        );
    }

    #[test]
    fn ccid_numbers_round_trip() {
        for ccid in [
            Ccid::Ccid2,
            Ccid::Tfrc,
            Ccid::TfrcSp,
            Ccid::MulTfrcExperimental,
            Ccid::FixedRateExperimental,
        ] {
            assert_eq!(Ccid::from_number(ccid.number()), Some(ccid));
        }
        assert_eq!(Ccid::from_number(1), None);
        assert_eq!(Ccid::Tfrc.to_string(), "CCID 3");
    }

    #[test]
    fn native_checksum_contexts_swap_addresses() {
        let a = Ipv4Addr::new(10, 0, 0, 1);
        let b = Ipv4Addr::new(10, 0, 0, 2);
        let mode = ChecksumMode::NativeV4 {
            local: a,
            remote: b,
        };
        assert_eq!(
            mode.send_context(),
            ChecksumContext::PseudoHeader(PseudoHeader::native_v4(a, b))
        );
        assert_eq!(
            mode.receive_context(),
            ChecksumContext::PseudoHeader(PseudoHeader::native_v4(b, a))
        );
        assert_eq!(mode.reversed().send_context(), mode.receive_context());
    }

    #[test]
    fn ccid4_turns_on_the_small_packet_variant() {
        let config = ConnectionConfig::default();
        assert!(config.tfrc_sender_config(Ccid::Tfrc).small_packet.is_none());
        assert_eq!(
            config.tfrc_sender_config(Ccid::TfrcSp).small_packet,
            Some(SmallPacketConfig::CCID4)
        );
        assert!(config.tfrc_receiver_config(Ccid::TfrcSp).small_packet);
        assert!(!config.tfrc_receiver_config(Ccid::Tfrc).small_packet);
    }
}
