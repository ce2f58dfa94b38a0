//! Packet captures in the pcap format, for Wireshark and tshark.
//!
//! fairstream's packets never touch a real interface in the simulator or in
//! tests, so this module writes them into a pcap file itself: each packet is
//! wrapped in an IPv4 header (link type `LINKTYPE_RAW`), with nanosecond
//! timestamps taken from virtual time. DCCP packets can be written natively
//! (IP protocol 33), which is how Wireshark dissects DCCP; Wireshark 4.0 has no
//! dissector for DCCP inside UDP (RFC 6773). UDP datagrams (plain RTP, or DCCP-UDP
//! as it travels) are written with a UDP header.
//!
//! The writer is generic over [`std::io::Write`]; it reads no clock.

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddrV4};

use crate::time::Instant;
use crate::wire::checksum::{checksum, Accumulator};

/// IP protocol number of DCCP (RFC 4340 §19.1).
pub const IPPROTO_DCCP: u8 = 33;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
/// TCP header flag ACK (RFC 9293 §3.1).
pub const TCP_FLAG_ACK: u8 = 0x10;
/// TCP header flag PSH.
pub const TCP_FLAG_PSH: u8 = 0x08;

/// pcap magic for nanosecond timestamps.
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each record starts with an IPv4 or IPv6 header.
const LINKTYPE_RAW: u32 = 101;
const SNAPLEN: u32 = 65_535;
const IPV4_HEADER_LEN: usize = 20;
const UDP_HEADER_LEN: usize = 8;
const TCP_HEADER_LEN: usize = 20;

/// The fields of a TCP header that [`PcapWriter::write_tcp`] fills in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Flags ([`TCP_FLAG_ACK`], [`TCP_FLAG_PSH`], ...).
    pub flags: u8,
    /// Receive window.
    pub window: u16,
}

/// Writes packets into a pcap stream.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    identification: u16,
    packets: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Starts a capture: writes the pcap global header.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut header = Vec::with_capacity(24);
        header.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        header.extend_from_slice(&2u16.to_le_bytes()); // version major
        header.extend_from_slice(&4u16.to_le_bytes()); // version minor
        header.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        header.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        header.extend_from_slice(&SNAPLEN.to_le_bytes());
        header.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter {
            out,
            identification: 0,
            packets: 0,
        })
    }

    /// How many packets have been written.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Writes `payload` (a transport packet, e.g. a whole DCCP packet with
    /// its checksum already computed for this view) inside an IPv4 header.
    pub fn write_ipv4(
        &mut self,
        at: Instant,
        source: Ipv4Addr,
        destination: Ipv4Addr,
        protocol: u8,
        payload: &[u8],
    ) -> io::Result<()> {
        let total = IPV4_HEADER_LEN + payload.len();
        let total_u16 = u16::try_from(total)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "packet too long for IPv4"))?;
        let mut ip = [0u8; IPV4_HEADER_LEN];
        ip[0] = 0x45; // version 4, IHL 5
        ip[2..4].copy_from_slice(&total_u16.to_be_bytes());
        ip[4..6].copy_from_slice(&self.identification.to_be_bytes());
        ip[6] = 0x40; // don't fragment
        ip[8] = 64; // TTL
        ip[9] = protocol;
        ip[12..16].copy_from_slice(&source.octets());
        ip[16..20].copy_from_slice(&destination.octets());
        let header_checksum = checksum(&ip);
        ip[10..12].copy_from_slice(&header_checksum.to_be_bytes());
        self.identification = self.identification.wrapping_add(1);
        self.record(at, &[&ip, payload], total)
    }

    /// Writes a UDP datagram (with a correct UDP checksum) inside IPv4.
    pub fn write_udp(
        &mut self,
        at: Instant,
        source: SocketAddrV4,
        destination: SocketAddrV4,
        payload: &[u8],
    ) -> io::Result<()> {
        let length = u16::try_from(UDP_HEADER_LEN + payload.len()).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "datagram too long for UDP")
        })?;
        let mut datagram = Vec::with_capacity(usize::from(length));
        datagram.extend_from_slice(&source.port().to_be_bytes());
        datagram.extend_from_slice(&destination.port().to_be_bytes());
        datagram.extend_from_slice(&length.to_be_bytes());
        datagram.extend_from_slice(&[0, 0]);
        datagram.extend_from_slice(payload);
        let mut sum = Accumulator::new();
        add_pseudo_header(
            &mut sum,
            *source.ip(),
            *destination.ip(),
            IPPROTO_UDP,
            length,
        );
        let udp_checksum = match sum.add_bytes(&datagram).checksum() {
            0 => 0xffff, // RFC 768: a computed zero is sent as all ones
            c => c,
        };
        datagram[6..8].copy_from_slice(&udp_checksum.to_be_bytes());
        self.write_ipv4(at, *source.ip(), *destination.ip(), IPPROTO_UDP, &datagram)
    }

    /// Writes a TCP segment with a 20-byte header (no options, a correct
    /// checksum) and `payload_len` zero bytes of data inside IPv4: the form
    /// in which the simulator's TCP model, which carries no bytes, appears in
    /// captures.
    pub fn write_tcp(
        &mut self,
        at: Instant,
        source: SocketAddrV4,
        destination: SocketAddrV4,
        header: TcpHeader,
        payload_len: usize,
    ) -> io::Result<()> {
        let length = u16::try_from(TCP_HEADER_LEN + payload_len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "segment too long"))?;
        let mut segment = vec![0u8; usize::from(length)];
        segment[0..2].copy_from_slice(&source.port().to_be_bytes());
        segment[2..4].copy_from_slice(&destination.port().to_be_bytes());
        segment[4..8].copy_from_slice(&header.seq.to_be_bytes());
        segment[8..12].copy_from_slice(&header.ack.to_be_bytes());
        segment[12] = ((TCP_HEADER_LEN / 4) as u8) << 4; // data offset in words
        segment[13] = header.flags;
        segment[14..16].copy_from_slice(&header.window.to_be_bytes());
        let mut sum = Accumulator::new();
        add_pseudo_header(
            &mut sum,
            *source.ip(),
            *destination.ip(),
            IPPROTO_TCP,
            length,
        );
        let tcp_checksum = sum.add_bytes(&segment).checksum();
        segment[16..18].copy_from_slice(&tcp_checksum.to_be_bytes());
        self.write_ipv4(at, *source.ip(), *destination.ip(), IPPROTO_TCP, &segment)
    }

    fn record(&mut self, at: Instant, parts: &[&[u8]], length: usize) -> io::Result<()> {
        let nanos = at.as_nanos();
        let seconds = u32::try_from(nanos / 1_000_000_000).unwrap_or(u32::MAX);
        let fraction = (nanos % 1_000_000_000) as u32;
        let length = u32::try_from(length).unwrap_or(u32::MAX);
        let mut header = [0u8; 16];
        header[0..4].copy_from_slice(&seconds.to_le_bytes());
        header[4..8].copy_from_slice(&fraction.to_le_bytes());
        header[8..12].copy_from_slice(&length.min(SNAPLEN).to_le_bytes());
        header[12..16].copy_from_slice(&length.to_le_bytes());
        self.out.write_all(&header)?;
        let mut remaining = SNAPLEN as usize;
        for part in parts {
            let take = part.len().min(remaining);
            self.out.write_all(&part[..take])?;
            remaining -= take;
        }
        self.packets += 1;
        Ok(())
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Adds an IPv4 pseudo-header (source, destination, zero, protocol, length)
/// to a checksum.
fn add_pseudo_header(
    sum: &mut Accumulator,
    source: Ipv4Addr,
    destination: Ipv4Addr,
    protocol: u8,
    length: u16,
) {
    sum.add_bytes(&source.octets())
        .add_bytes(&destination.octets())
        .add_u16(u16::from(protocol))
        .add_u16(length);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_segments_carry_a_checksum_that_verifies() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let a = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 40_000);
        let b = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 80);
        let header = TcpHeader {
            seq: 1000,
            ack: 1,
            flags: TCP_FLAG_ACK | TCP_FLAG_PSH,
            window: 65_535,
        };
        w.write_tcp(Instant::ZERO, a, b, header, 100).unwrap();
        let bytes = w.into_inner().unwrap();
        let ip = &bytes[24 + 16..];
        assert_eq!(ip[9], IPPROTO_TCP);
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 20 + 20 + 100);
        let segment = &ip[20..];
        assert_eq!(u32::from_be_bytes(segment[4..8].try_into().unwrap()), 1000);
        assert_eq!(segment[12] >> 4, 5);
        // Summing the pseudo-header and the segment, checksum included, gives
        // zero (all ones before the complement) when the checksum is right.
        let mut sum = Accumulator::new();
        add_pseudo_header(&mut sum, *a.ip(), *b.ip(), IPPROTO_TCP, 120);
        assert_eq!(sum.add_bytes(segment).checksum(), 0);
        let mut broken = segment.to_vec();
        broken[30] ^= 1;
        let mut sum = Accumulator::new();
        add_pseudo_header(&mut sum, *a.ip(), *b.ip(), IPPROTO_TCP, 120);
        assert_ne!(sum.add_bytes(&broken).checksum(), 0);
    }

    #[test]
    fn writes_global_header_and_an_ipv4_record() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let a = Ipv4Addr::new(10, 0, 0, 1);
        let b = Ipv4Addr::new(10, 0, 0, 2);
        w.write_ipv4(
            Instant::from_nanos(1_500_000_123),
            a,
            b,
            IPPROTO_DCCP,
            &[1, 2, 3, 4],
        )
        .unwrap();
        assert_eq!(w.packets(), 1);
        let bytes = w.into_inner().unwrap();
        assert_eq!(&bytes[0..4], &MAGIC_NANOS.to_le_bytes());
        assert_eq!(&bytes[20..24], &LINKTYPE_RAW.to_le_bytes());
        let record = &bytes[24..];
        assert_eq!(u32::from_le_bytes(record[0..4].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_le_bytes(record[4..8].try_into().unwrap()),
            500_000_123
        );
        assert_eq!(u32::from_le_bytes(record[8..12].try_into().unwrap()), 24);
        let ip = &record[16..36];
        assert_eq!(ip[0], 0x45);
        assert_eq!(ip[9], IPPROTO_DCCP);
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 24);
        assert_eq!(checksum(ip), 0, "IPv4 header checksum verifies");
        assert_eq!(&record[36..], &[1, 2, 3, 4]);
    }

    #[test]
    fn udp_checksum_verifies() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let a = SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), 5004);
        let b = SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 2), 5006);
        w.write_udp(Instant::ZERO, a, b, b"hello").unwrap();
        let bytes = w.into_inner().unwrap();
        let udp = &bytes[24 + 16 + 20..];
        assert_eq!(udp.len(), 13);
        let mut sum = Accumulator::new();
        add_pseudo_header(&mut sum, *a.ip(), *b.ip(), IPPROTO_UDP, 13);
        assert_eq!(sum.add_bytes(udp).checksum(), 0);
    }
}
