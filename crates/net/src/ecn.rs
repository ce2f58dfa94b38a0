//! ECN on real UDP sockets (RFC 3168 §5, RFC 4340 §12): datagrams leave with
//! the codepoint the connection chose ([`Transmit::ecn`]) and arrive with the
//! codepoint the path left in the IP header, read from the `IP_TOS` /
//! `IPV6_TCLASS` control message (`IP_RECVTOS` / `IPV6_RECVTCLASS`).
//!
//! The system calls are `quinn-udp`'s `sendmsg`/`recvmsg` with their control
//! messages (the workspace forbids unsafe code here). Its per-socket state is
//! made on a scratch socket of the same family, so that the options it would
//! set (non-blocking mode, Don't Fragment, UDP GRO, packet info) stay off the
//! real socket, which keeps its blocking reads with timeouts and IP
//! fragmentation; on the real socket only the reception of the TOS / Traffic
//! Class byte is turned on (`socket2`). Where the platform does not deliver
//! the codepoint, received datagrams read as Not-ECT.
//!
//! [`Transmit::ecn`]: fairstream_proto::conn::Transmit::ecn

use std::io::{self, IoSliceMut};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

use fairstream_proto::ecn::Ecn;
use quinn_udp::{EcnCodepoint, RecvMeta, Transmit, UdpSocketState};

/// The per-socket state for sending and receiving with ECN codepoints.
#[derive(Debug)]
pub struct EcnUdp {
    state: UdpSocketState,
}

impl EcnUdp {
    /// Prepares `socket`: asks the kernel for the TOS (IPv4) or Traffic
    /// Class (IPv6) byte of every datagram received, and changes nothing
    /// else about it.
    pub fn new(socket: &UdpSocket) -> io::Result<EcnUdp> {
        let local = socket.local_addr()?;
        let scratch_address: SocketAddr = if local.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        // The state holds no socket; the scratch socket only takes the
        // options quinn-udp sets, and is closed at once.
        let scratch = UdpSocket::bind(scratch_address)?;
        let state = UdpSocketState::new((&scratch).into())?;
        let sock = socket2::SockRef::from(socket);
        if local.is_ipv4() {
            sock.set_recv_tos_v4(true)?;
        } else {
            sock.set_recv_tclass_v6(true)?;
            // IPv4-mapped peers of a dual-stack socket: best effort.
            let _ = sock.set_recv_tos_v4(true);
        }
        Ok(EcnUdp { state })
    }

    /// Sends `bytes` to `to` with the ECN field set to `ecn`. Errors are the
    /// socket's, as `UdpSocket::send_to` reports them.
    pub fn send_to(
        &self,
        socket: &UdpSocket,
        bytes: &[u8],
        to: SocketAddr,
        ecn: Ecn,
    ) -> io::Result<usize> {
        let transmit = Transmit {
            destination: to,
            ecn: EcnCodepoint::from_bits(ecn.bits()),
            contents: bytes,
            segment_size: None,
            src_ip: None,
        };
        self.state.try_send(socket.into(), &transmit)?;
        Ok(bytes.len())
    }

    /// Receives once (blocking up to the socket's read timeout) into `buf`
    /// and calls `each` for every datagram read, with its source and ECN
    /// codepoint; returns how many there were. A datagram longer than `buf`
    /// is truncated, as by `recv_from`.
    pub fn recv(
        &self,
        socket: &UdpSocket,
        buf: &mut [u8],
        mut each: impl FnMut(SocketAddr, Ecn, &[u8]),
    ) -> io::Result<usize> {
        let mut meta = [RecvMeta::default()];
        let received = {
            let mut slices = [IoSliceMut::new(buf)];
            self.state.recv(socket.into(), &mut slices, &mut meta)?
        };
        let mut count = 0;
        for meta in meta.iter().take(received) {
            let ecn = meta.ecn.map_or(Ecn::NotEct, |c| Ecn::from_bits(c as u8));
            let filled = buf.get(..meta.len.min(buf.len())).unwrap_or_default();
            // Several datagrams of `stride` bytes each (the last one may be
            // shorter) if the socket coalesces them (UDP GRO, which is not
            // turned on here, but another owner of the socket may have).
            let stride = if meta.stride == 0 {
                filled.len().max(1)
            } else {
                meta.stride
            };
            for datagram in filled.chunks(stride) {
                each(meta.addr, ecn, datagram);
                count += 1;
            }
            if filled.is_empty() {
                // An empty datagram is a datagram.
                each(meta.addr, ecn, &[]);
                count += 1;
            }
        }
        Ok(count)
    }
}

/// A UDP socket that sends and receives with ECN codepoints.
#[derive(Debug)]
pub struct EcnSocket {
    socket: UdpSocket,
    ecn: EcnUdp,
}

impl EcnSocket {
    /// Prepares `socket` as [`EcnUdp::new`] does.
    pub fn new(socket: UdpSocket) -> io::Result<EcnSocket> {
        let ecn = EcnUdp::new(&socket)?;
        Ok(EcnSocket { socket, ecn })
    }

    /// The socket, for everything else.
    pub fn socket(&self) -> &UdpSocket {
        &self.socket
    }

    /// Sends `bytes` to `to` with the ECN field set to `ecn`.
    pub fn send_to(&self, bytes: &[u8], to: SocketAddr, ecn: Ecn) -> io::Result<usize> {
        if ecn == Ecn::NotEct {
            return self.socket.send_to(bytes, to);
        }
        self.ecn.send_to(&self.socket, bytes, to, ecn)
    }

    /// Sends `bytes` on the connected socket with the ECN field set to
    /// `ecn`.
    pub fn send(&self, bytes: &[u8], ecn: Ecn) -> io::Result<usize> {
        if ecn == Ecn::NotEct {
            return self.socket.send(bytes);
        }
        let peer = self.socket.peer_addr()?;
        self.ecn.send_to(&self.socket, bytes, peer, ecn)
    }

    /// Receives as [`EcnUdp::recv`] does.
    pub fn recv(
        &self,
        buf: &mut [u8],
        each: impl FnMut(SocketAddr, Ecn, &[u8]),
    ) -> io::Result<usize> {
        self.ecn.recv(&self.socket, buf, each)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pair() -> (UdpSocket, EcnUdp, UdpSocket, EcnUdp) {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        b.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let a_ecn = EcnUdp::new(&a).unwrap();
        let b_ecn = EcnUdp::new(&b).unwrap();
        (a, a_ecn, b, b_ecn)
    }

    fn receive(socket: &UdpSocket, ecn: &EcnUdp) -> Vec<(Ecn, Vec<u8>)> {
        let mut buf = vec![0u8; 65_536];
        let mut got = Vec::new();
        ecn.recv(socket, &mut buf, |_, codepoint, bytes| {
            got.push((codepoint, bytes.to_vec()));
        })
        .unwrap();
        got
    }

    /// RFC 3168 §5 over loopback: each codepoint sent is the codepoint
    /// read, and the socket still blocks until the read timeout.
    #[test]
    fn every_codepoint_crosses_loopback() {
        let (a, a_ecn, b, b_ecn) = pair();
        let to = b.local_addr().unwrap();
        for codepoint in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            let bytes = [codepoint.bits(); 100];
            assert_eq!(a_ecn.send_to(&a, &bytes, to, codepoint).unwrap(), 100);
            let got = receive(&b, &b_ecn);
            assert_eq!(got, vec![(codepoint, bytes.to_vec())]);
        }
        // Plain sends (std) arrive Not-ECT.
        a.send_to(b"plain", to).unwrap();
        assert_eq!(receive(&b, &b_ecn), vec![(Ecn::NotEct, b"plain".to_vec())]);
        // The socket is left blocking: an empty socket times out.
        b.set_read_timeout(Some(Duration::from_millis(30))).unwrap();
        let mut buf = [0u8; 16];
        let error = b_ecn.recv(&b, &mut buf, |_, _, _| {}).unwrap_err();
        assert!(matches!(
            error.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ));
    }

    /// The same over IPv6 loopback (the Traffic Class byte), where the
    /// machine has it.
    #[test]
    fn codepoints_cross_ipv6_loopback() {
        let (Ok(a), Ok(b)) = (UdpSocket::bind("[::1]:0"), UdpSocket::bind("[::1]:0")) else {
            eprintln!("no IPv6 loopback here: skipped");
            return;
        };
        b.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let (a_ecn, b_ecn) = (EcnUdp::new(&a).unwrap(), EcnUdp::new(&b).unwrap());
        let to = b.local_addr().unwrap();
        for codepoint in [Ecn::Ect0, Ecn::Ce, Ecn::NotEct] {
            a_ecn.send_to(&a, b"six", to, codepoint).unwrap();
            assert_eq!(receive(&b, &b_ecn), vec![(codepoint, b"six".to_vec())]);
        }
    }
}
