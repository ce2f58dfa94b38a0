//! Where the receiver puts the stream: an Annex B file, standard output,
//! or plain RTP over UDP with an SDP file (RFC 6184 §8.2.1) that ffplay,
//! VLC or GStreamer can open.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};

use fairstream_media::h264::incremental::ParameterSets;
use fairstream_media::stream::PAYLOAD_TYPE;

use super::assembler::Completed;
use crate::relay::{RelayBuffer, RelayFrame};

/// Where the received stream goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputSpec {
    /// An H.264 Annex B file.
    File(PathBuf),
    /// Annex B on standard output.
    Stdout,
    /// RTP over UDP to `to`, described by the SDP file `sdp`.
    Rtp {
        /// Where the RTP packets go.
        to: SocketAddr,
        /// The SDP file written for players.
        sdp: PathBuf,
    },
    /// The frames of a relay, for its downstream sender
    /// ([`crate::relay`]).
    Relay(RelayBuffer),
    /// A voice call: decoded to a WAV file and scored
    /// ([`super::VoiceOutput`]).
    Voice(super::VoiceOutput),
}

impl OutputSpec {
    /// `-`, `rtp://HOST:PORT` or a file name; `sdp` is the SDP file for
    /// an RTP output.
    pub fn parse(text: &str, sdp: &Path) -> Result<OutputSpec, String> {
        if text == "-" {
            return Ok(OutputSpec::Stdout);
        }
        if let Some(rest) = text.strip_prefix("rtp://") {
            let to: SocketAddr = rest.trim_end_matches('/').parse().map_err(|_| {
                format!(
                    "bad RTP output `{text}` (expected rtp://IP:PORT, e.g. rtp://127.0.0.1:5004)"
                )
            })?;
            if to.port() == 0 {
                return Err(format!("bad RTP output `{text}`: port 0"));
            }
            return Ok(OutputSpec::Rtp {
                to,
                sdp: sdp.to_path_buf(),
            });
        }
        if text.contains("://") {
            return Err(format!(
                "unknown output `{text}` (expected a file, - or rtp://IP:PORT)"
            ));
        }
        Ok(OutputSpec::File(PathBuf::from(text)))
    }
}

/// An open output.
#[derive(Debug)]
pub(super) enum Output {
    /// Annex B to a writer.
    AnnexB(BufWriter<Box<dyn WriteDebug>>),
    /// RTP over UDP.
    Rtp {
        /// The socket.
        socket: UdpSocket,
        /// The destination.
        to: SocketAddr,
        /// The SDP file.
        sdp: PathBuf,
        /// Whether the SDP carries the parameter sets yet.
        sdp_complete: bool,
    },
    /// Frames into a relay's buffer.
    Relay(RelayBuffer),
    /// None: a voice call's receiver writes its WAV file itself.
    Voice,
}

/// A writer that can be shown in `Debug` output.
pub(super) trait WriteDebug: Write + Send + std::fmt::Debug {}
impl<T: Write + Send + std::fmt::Debug> WriteDebug for T {}

impl Output {
    /// Opens the output (for RTP, writes a first SDP file).
    pub(super) fn open(spec: &OutputSpec) -> io::Result<Output> {
        match spec {
            OutputSpec::File(path) => {
                let file = File::create(path).map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
                })?;
                Ok(Output::AnnexB(BufWriter::new(Box::new(file))))
            }
            OutputSpec::Stdout => Ok(Output::AnnexB(BufWriter::new(Box::new(io::stdout())))),
            OutputSpec::Rtp { to, sdp } => {
                let any: SocketAddr = if to.is_ipv6() {
                    (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
                } else {
                    (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
                };
                let socket = UdpSocket::bind(any)?;
                write_sdp(sdp, *to, &ParameterSets::default())?;
                Ok(Output::Rtp {
                    socket,
                    to: *to,
                    sdp: sdp.clone(),
                    sdp_complete: false,
                })
            }
            OutputSpec::Relay(buffer) => Ok(Output::Relay(buffer.clone())),
            OutputSpec::Voice(_) => Ok(Output::Voice),
        }
    }

    /// One RTP packet, in stream order (sent on for an RTP output).
    pub(super) fn rtp_packet(&mut self, packet: &[u8]) -> io::Result<()> {
        if let Output::Rtp { socket, to, .. } = self {
            match socket.send_to(packet, *to) {
                Ok(_) => {}
                // Nobody listening (yet): RTP over UDP just loses it.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// One access unit; returns the bytes written.
    pub(super) fn access_unit(
        &mut self,
        unit: Completed,
        parameter_sets: &ParameterSets,
    ) -> io::Result<u64> {
        match self {
            Output::AnnexB(writer) => {
                let mut written = 0;
                for nal in &unit.nal_units {
                    writer.write_all(&[0, 0, 0, 1])?;
                    writer.write_all(nal)?;
                    written += 4 + nal.len() as u64;
                }
                // Whole access units reach the file (or pipe) as they come:
                // a receiver that is killed leaves no NAL unit cut short.
                writer.flush()?;
                Ok(written)
            }
            Output::Rtp {
                to,
                sdp,
                sdp_complete,
                ..
            } => {
                if !*sdp_complete {
                    if let (Some(_), Some(_)) = parameter_sets.latest() {
                        write_sdp(sdp, *to, parameter_sets)?;
                        *sdp_complete = true;
                    }
                }
                Ok(0)
            }
            Output::Relay(buffer) => {
                let frame = RelayFrame {
                    // The extended timestamp counts from the first packet;
                    // modulo 2^32 it is an RTP timestamp again.
                    timestamp: unit.timestamp as u32,
                    frame_type: unit.kind.map(|k| k.0),
                    idr: unit.kind.is_some_and(|k| k.1),
                    nal_units: unit.nal_units,
                };
                let bytes = frame.bytes();
                buffer.push(frame);
                Ok(bytes)
            }
            Output::Voice => Ok(0),
        }
    }

    /// Flushes what is buffered.
    pub(super) fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::AnnexB(writer) => writer.flush(),
            Output::Rtp { .. } | Output::Relay(_) | Output::Voice => Ok(()),
        }
    }

    /// The relay buffer this output fills, if it is one.
    pub(super) fn relay(&self) -> Option<&RelayBuffer> {
        match self {
            Output::Relay(buffer) => Some(buffer),
            _ => None,
        }
    }
}

/// The SDP description of an RTP/H.264 stream sent to `to` (RFC 4566, RFC
/// 6184 §8.2.1: packetization-mode=1; the parameter sets once known).
pub fn sdp_text(to: SocketAddr, parameter_sets: &ParameterSets) -> String {
    let family = if to.is_ipv6() { "IP6" } else { "IP4" };
    let mut fmtp = String::from("packetization-mode=1");
    if let (Some(sps), Some(pps)) = parameter_sets.latest() {
        if let Some(profile) = sps.get(1..4) {
            fmtp.push_str(&format!(
                ";profile-level-id={:02x}{:02x}{:02x}",
                profile[0], profile[1], profile[2]
            ));
        }
        fmtp.push_str(&format!(
            ";sprop-parameter-sets={},{}",
            base64(sps),
            base64(pps)
        ));
    }
    format!(
        "v=0\r\no=- 0 0 IN {family} {ip}\r\ns=fairstream\r\nc=IN {family} {ip}\r\nt=0 0\r\nm=video {port} RTP/AVP {PAYLOAD_TYPE}\r\na=rtpmap:{PAYLOAD_TYPE} H264/90000\r\na=fmtp:{PAYLOAD_TYPE} {fmtp}\r\n",
        ip = to.ip(),
        port = to.port(),
    )
}

fn write_sdp(path: &Path, to: SocketAddr, parameter_sets: &ParameterSets) -> io::Result<()> {
    std::fs::write(path, sdp_text(to, parameter_sets))
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_vectors_of_rfc_4648() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn outputs_parse_and_refuse_nonsense() {
        let sdp = Path::new("x.sdp");
        assert_eq!(OutputSpec::parse("-", sdp).unwrap(), OutputSpec::Stdout);
        assert!(matches!(
            OutputSpec::parse("rtp://127.0.0.1:5004", sdp).unwrap(),
            OutputSpec::Rtp { .. }
        ));
        assert!(OutputSpec::parse("rtp://nowhere", sdp)
            .unwrap_err()
            .contains("rtp://nowhere"));
        assert!(OutputSpec::parse("udp://1.2.3.4:5", sdp)
            .unwrap_err()
            .contains("unknown output"));
    }

    #[test]
    fn each_access_unit_reaches_the_file_whole_as_it_is_written() {
        let path = std::env::temp_dir().join(format!(
            "fairstream-output-flush-{}.264",
            std::process::id()
        ));
        let mut output = Output::open(&OutputSpec::File(path.clone())).unwrap();
        let mut total = 0;
        for frame in 0..3u8 {
            let unit = Completed {
                timestamp: i64::from(frame) * 3600,
                nal_units: vec![vec![0x65, frame, 1, 2, 3], vec![0x01; 100]],
                kind: None,
            };
            total += output.access_unit(unit, &ParameterSets::default()).unwrap();
            // Nothing stays in a buffer: a receiver killed now leaves whole
            // NAL units behind.
            assert_eq!(std::fs::metadata(&path).unwrap().len(), total);
        }
        drop(output);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn sdp_names_the_payload_format() {
        let mut sets = ParameterSets::default();
        sets.observe(&[0x67, 0x42, 0xc0, 0x1e, 0x01]);
        sets.observe(&[0x68, 0xce, 0x3c, 0x80]);
        let text = sdp_text("127.0.0.1:5004".parse().unwrap(), &sets);
        assert!(text.contains("m=video 5004 RTP/AVP 96"), "{text}");
        assert!(text.contains("a=rtpmap:96 H264/90000"));
        assert!(text.contains("packetization-mode=1;profile-level-id=42c01e;sprop-parameter-sets=Z0LAHgE=,aM48gA=="), "{text}");
    }
}
