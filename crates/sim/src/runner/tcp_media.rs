//! A media flow over TCP: paper 003's "RTP tunnelled over TCP". Each RTP
//! packet of the stream is written to the TCP byte stream behind RFC 4571's
//! two-byte length (§2: "a 16-bit unsigned integer LENGTH field, coded in
//! network byte order (big-endian)" before each packet), and reaches the
//! receiving application when the in-order data has covered its last byte:
//! TCP retransmits whatever was lost, so packets arrive late instead of
//! not at all, and the player judges them by their deadlines.
//!
//! The sender's socket buffer is [`SEND_BUFFER_BYTES`]: packets are written
//! while the unacknowledged data stays below it, so a live stream's frames
//! wait in the application (where late ones are skipped, as over DCCP)
//! rather than in an unbounded socket.

use std::collections::VecDeque;
use std::time::Duration;

use fairstream_proto::time::Instant;

use super::media::MediaApp;
use super::relay::SharedRelay;
use crate::tcp::{TcpReceiver, TcpSender};

/// RFC 4571 §2's framing: two bytes of length before each packet.
pub(super) const FRAMING_BYTES: usize = 2;
/// The sender's socket buffer: unacknowledged bytes it holds at most
/// (Linux's default `tcp_wmem`, 16 KiB, grows by autotuning; 64 KiB is
/// the size of a classic socket buffer and of TCP's window without
/// scaling).
pub(super) const SEND_BUFFER_BYTES: u64 = 64 * 1024;

/// The media application of a TCP flow and the packets in the byte stream.
#[derive(Debug)]
pub(super) struct TcpMedia {
    pub(super) app: MediaApp,
    /// Packets written and not yet delivered: the stream offset one past
    /// their last byte, and the packet.
    in_stream: VecDeque<(u64, Vec<u8>)>,
    /// The upstream leg of a proxy: what the receiver takes goes here too.
    pub(super) relay_out: Option<SharedRelay>,
}

impl TcpMedia {
    pub(super) fn new(app: MediaApp) -> TcpMedia {
        TcpMedia {
            app,
            in_stream: VecDeque::new(),
            relay_out: None,
        }
    }

    /// Writes the packets due at `now` into `sender`'s stream while its
    /// socket buffer has room.
    pub(super) fn feed(&mut self, now: Instant, sender: &mut TcpSender) {
        let one_way = sender.srtt().map_or(Duration::ZERO, |rtt| rtt / 2);
        while sender.bytes_written() - sender.bytes_acked().min(sender.bytes_written())
            < SEND_BUFFER_BYTES
        {
            let Some(packet) = self.app.next_packet(now, one_way) else {
                return;
            };
            let framed = (packet.len() + FRAMING_BYTES) as u64;
            let packet = packet.to_vec();
            sender.append(framed);
            self.in_stream.push_back((sender.bytes_written(), packet));
        }
    }

    /// Hands the application every packet the in-order data delivered by
    /// `receiver` now covers.
    pub(super) fn deliver(&mut self, now: Instant, receiver: &TcpReceiver) {
        let delivered = receiver.bytes_delivered();
        while let Some((end, _)) = self.in_stream.front() {
            if *end > delivered {
                return;
            }
            if let Some((_, packet)) = self.in_stream.pop_front() {
                self.app.on_received(now, &packet);
                if let Some(relay) = &self.relay_out {
                    relay.forward(&self.app, packet);
                }
            }
        }
    }

    /// When the next packet becomes due while the socket buffer has room.
    pub(super) fn next_release(&self, now: Instant) -> Option<Instant> {
        self.app.next_release(now)
    }
}
