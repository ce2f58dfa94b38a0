//! Packet captures of a run: one pcap stream per link direction, holding
//! every packet that crossed it, stamped with its arrival time at the far
//! end (a capture at the receiving interface).
//!
//! Packets appear as Wireshark reads them (the form of the wire issue):
//! DCCP packets natively in IPv4 (protocol 33), with the native checksum
//! over the IPv4 pseudo-header filled in here (the simulated endpoints run
//! DCCP-UDP, RFC 6773, whose DCCP Checksum field is zero, and Wireshark has
//! no DCCP-in-UDP dissector); the TCP model's segments and ACKs as TCP headers with
//! zero-filled data; UDP sources as UDP datagrams. Node *i* has address
//! 10.0.0.(*i* + 1) ([`super::dccp::node_address`]).

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddrV4};

use fairstream_proto::capture::{PcapWriter, TcpHeader, IPPROTO_DCCP, TCP_FLAG_ACK, TCP_FLAG_PSH};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::dccp::{ChecksumContext, PseudoHeader};

use super::dccp::CLIENT_PORT_BASE;
use crate::network::{Body, Packet};

/// The TCP port of the simulator's TCP receivers and UDP sinks.
const SINK_PORT: u16 = 5001;
/// The UDP payload written for a datagram of an application source: zeros,
/// shared by every record.
static ZEROS: [u8; 65_535] = [0; 65_535];

/// Where each flow's packets come from and go to.
#[derive(Clone, Copy, Debug)]
pub(super) struct FlowAddresses {
    /// The sender's address.
    pub(super) from: Ipv4Addr,
    /// The receiver's address.
    pub(super) to: Ipv4Addr,
    /// The sender's port.
    pub(super) port: u16,
}

impl FlowAddresses {
    /// The addresses of the flow with `index` between two nodes.
    pub(super) fn new(index: usize, from: Ipv4Addr, to: Ipv4Addr) -> FlowAddresses {
        FlowAddresses {
            from,
            to,
            port: CLIENT_PORT_BASE + (index % 20_000) as u16,
        }
    }
}

/// The open captures: per link, per direction, a pcap writer.
pub(super) struct Captures {
    writers: Vec<[PcapWriter<Box<dyn Write>>; 2]>,
    /// The first write error; later packets are not written.
    error: Option<io::Error>,
    /// A DCCP packet's copy with its native checksum.
    native: Vec<u8>,
}

impl std::fmt::Debug for Captures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Captures")
            .field("links", &self.writers.len())
            .field("error", &self.error)
            .finish()
    }
}

impl Captures {
    /// Captures for the given writers (per link: forward, reverse).
    pub(super) fn new(writers: Vec<[PcapWriter<Box<dyn Write>>; 2]>) -> Captures {
        Captures {
            writers,
            error: None,
            native: Vec::new(),
        }
    }

    /// Writes `packet`, which reached the far end of (`link`, `direction`)
    /// at `at`.
    pub(super) fn record(
        &mut self,
        link: usize,
        direction: usize,
        at: Instant,
        packet: &Packet,
        addresses: &FlowAddresses,
    ) {
        if self.error.is_some() {
            return;
        }
        let Some(writer) = self
            .writers
            .get_mut(link)
            .and_then(|l| l.get_mut(direction))
        else {
            return;
        };
        if let Err(error) = write_packet(writer, at, packet, addresses, &mut self.native) {
            self.error = Some(error);
        }
    }

    /// Flushes every capture; the first error met, if any.
    pub(super) fn finish(self) -> io::Result<u64> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let mut packets = 0;
        for pair in self.writers {
            for writer in pair {
                packets += writer.packets();
                writer.into_inner()?;
            }
        }
        Ok(packets)
    }
}

fn write_packet(
    writer: &mut PcapWriter<Box<dyn Write>>,
    at: Instant,
    packet: &Packet,
    addresses: &FlowAddresses,
    native: &mut Vec<u8>,
) -> io::Result<()> {
    let (source, destination) = if packet.toward_receiver {
        (addresses.from, addresses.to)
    } else {
        (addresses.to, addresses.from)
    };
    let (source_port, destination_port) = if packet.toward_receiver {
        (addresses.port, SINK_PORT)
    } else {
        (SINK_PORT, addresses.port)
    };
    let source_socket = SocketAddrV4::new(source, source_port);
    let destination_socket = SocketAddrV4::new(destination, destination_port);
    match &packet.body {
        // DCCP packets carry their own ports.
        Body::Dccp { bytes, .. } => {
            native.clear();
            native.extend_from_slice(bytes);
            let context =
                ChecksumContext::PseudoHeader(PseudoHeader::native_v4(source, destination));
            // The endpoint wrote a whole header: only a packet it did not
            // write could fail here, and that one is captured as it is.
            if let Ok(mut dccp) = fairstream_proto::wire::dccp::Packet::new_checked(&mut native[..])
            {
                let _ = dccp.fill_checksum(&context);
            }
            writer.write_ipv4(at, source, destination, IPPROTO_DCCP, native)
        }
        Body::TcpSegment(segment) | Body::WebSegment { segment, .. } => writer.write_tcp(
            at,
            source_socket,
            destination_socket,
            TcpHeader {
                // Byte offsets from an initial sequence number of zero; the
                // handshake is not modelled, so data starts at 1.
                seq: (segment.seq as u32).wrapping_add(1),
                ack: 1,
                flags: TCP_FLAG_ACK | TCP_FLAG_PSH,
                window: u16::MAX,
            },
            usize::try_from(segment.len).unwrap_or(0),
        ),
        Body::TcpAck(ack) | Body::WebAck { ack, .. } => writer.write_tcp(
            at,
            source_socket,
            destination_socket,
            TcpHeader {
                seq: 1,
                ack: (ack.cumulative as u32).wrapping_add(1),
                flags: TCP_FLAG_ACK,
                window: u16::MAX,
            },
            0,
        ),
        Body::Datagram { size } => {
            let len = (*size as usize).min(ZEROS.len() - 8);
            writer.write_udp(at, source_socket, destination_socket, &ZEROS[..len])
        }
    }
}
