//! The sender's packet-level FEC (`fec=n,k` in the URL): RS(n, k) over
//! each run of k RTP packets handed to the session, in the simulator's
//! wire format ([`fairstream_media::stream::parity_rtp_packet`]).
//!
//! Blocks are made of the packets actually sent: the RTP sequence number
//! counts them from 0 (frames dropped before sending leave no gap), so
//! block b is always the packets numbered b·k .. b·k + k and the n − k
//! parity packets follow its last one.

use fairstream_media::fec::FecCode;
use fairstream_media::stream::{parity_rtp_packet, FecParams, ParityHeader, PARITY_OVERHEAD};
use fairstream_proto::session::{DatagramMeta, FecTag};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::rtp::RtpRepr;

use super::{Run, SendError, SendReport};

/// The largest data packet when the session takes `max` bytes: with FEC,
/// a parity packet (longer than its block's packets) must fit too.
pub(super) fn media_datagram(max: usize, fec: Option<FecParams>) -> usize {
    max.saturating_sub(fec.map_or(0, |_| PARITY_OVERHEAD))
}

/// The share of the session's target bitrate left to the media: k/n, or
/// less when the parity measured so far took more (a parity packet is as
/// long as its block's longest packet, so blocks of short packets cost
/// more than (n − k)/n of the bytes).
pub(super) fn media_share(fec: Option<FecParams>, report: &SendReport) -> f64 {
    let Some(fec) = fec else {
        return 1.0;
    };
    let nominal = fec.k as f64 / fec.n as f64;
    match report.fec_overhead {
        // After a few blocks the measure is worth more than the nominal.
        Some(overhead) if report.fec_parity_sent >= 8 * (fec.n - fec.k) as u64 => {
            nominal.min(1.0 - overhead).max(0.1)
        }
        _ => nominal,
    }
}

/// Builds parity packets over the packets sent.
#[derive(Debug)]
pub(super) struct FecEncoder {
    code: FecCode,
    params: FecParams,
    block: Vec<Vec<u8>>,
    number: u32,
    sequence: u16,
}

impl FecEncoder {
    /// RS(n, k), validated again (the URL already did).
    pub(super) fn new(params: FecParams) -> Result<FecEncoder, SendError> {
        if params.n > usize::from(u8::MAX) {
            return Err(SendError::Config(format!(
                "fec={},{}: n is at most 255",
                params.n, params.k
            )));
        }
        let code = FecCode::new(params.n, params.k)
            .map_err(|e| SendError::Config(format!("fec={},{}: {e}", params.n, params.k)))?;
        Ok(FecEncoder {
            code,
            params,
            block: Vec::with_capacity(params.k),
            number: 0,
            sequence: 0,
        })
    }

    /// The FEC tag of the next packet pushed: its index in the block.
    pub(super) fn next_tag(&self) -> Option<FecTag> {
        self.tag(self.block.len())
    }

    /// The tag of the datagram at `index` of a block (parity from k).
    fn tag(&self, index: usize) -> Option<FecTag> {
        Some(FecTag {
            index: u8::try_from(index).ok()?,
            k: u8::try_from(self.params.k).ok()?,
            n: u8::try_from(self.params.n).ok()?,
        })
    }

    /// Takes the next packet sent; returns the block's parity packets when
    /// it was the block's last.
    pub(super) fn push(&mut self, packet: &[u8]) -> Result<Vec<Vec<u8>>, SendError> {
        self.block.push(packet.to_vec());
        if self.block.len() < self.params.k {
            return Ok(Vec::new());
        }
        let error = |reason: String| SendError::Source {
            source_name: "fec".into(),
            reason,
        };
        let block = std::mem::take(&mut self.block);
        let refs: Vec<&[u8]> = block.iter().map(Vec::as_slice).collect();
        let shards = self.code.encode(&refs).map_err(|e| error(e.to_string()))?;
        let timestamp = block
            .last()
            .and_then(|p| RtpRepr::parse_bytes(p).ok())
            .map_or(0, |r| r.timestamp);
        let mut parity = Vec::with_capacity(shards.len());
        for (index, shard) in shards.iter().enumerate() {
            let header = ParityHeader {
                block: self.number,
                index: index as u8,
                k: self.params.k as u8,
                n: self.params.n as u8,
            };
            parity.push(
                parity_rtp_packet(header, self.sequence, timestamp, shard)
                    .map_err(|e| error(e.to_string()))?,
            );
            self.sequence = self.sequence.wrapping_add(1);
        }
        self.number = self.number.wrapping_add(1);
        Ok(parity)
    }
}

impl Run {
    /// The share of the target bitrate the encoder gets ([`media_share`]).
    pub(super) fn media_share(&self) -> f64 {
        media_share(self.sender.config.url.fec, &self.report)
    }

    /// Hands a packet just sent to the FEC encoder and sends the parity
    /// packets of a block it completed (a parity packet the session
    /// refuses is counted and lost, as on the link).
    pub(super) fn protect(&mut self, now: Instant, packet: &[u8], meta: DatagramMeta) {
        let Some(encoder) = self.fec.as_mut() else {
            return;
        };
        let parity = match encoder.push(packet) {
            Ok(parity) => parity,
            Err(_) => {
                self.report.fec_parity_dropped += 1;
                return;
            }
        };
        let k = encoder.params.k;
        let tags: Vec<Option<FecTag>> = (0..parity.len()).map(|i| encoder.tag(k + i)).collect();
        for (packet, fec) in parity.into_iter().zip(tags) {
            match self
                .session
                .send_with(now, &packet, DatagramMeta { fec, ..meta })
            {
                Ok(()) => {
                    self.report.fec_parity_sent += 1;
                    self.report.fec_parity_bytes += packet.len() as u64;
                }
                Err(_) => self.report.fec_parity_dropped += 1,
            }
        }
        let total = self.report.bytes_sent + self.report.fec_parity_bytes;
        self.report.fec_overhead =
            (total > 0).then(|| self.report.fec_parity_bytes as f64 / total as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_follows_every_kth_packet() {
        let mut encoder = FecEncoder::new(FecParams { n: 6, k: 4 }).unwrap();
        let packet = |seq: u16| {
            let mut p = vec![0x80, 96, 0, 0, 0, 0, 0, 9, 1, 2, 3, 4, 0x65];
            p[2..4].copy_from_slice(&seq.to_be_bytes());
            p
        };
        for seq in 0..3 {
            assert!(encoder.push(&packet(seq)).unwrap().is_empty());
        }
        let parity = encoder.push(&packet(3)).unwrap();
        assert_eq!(parity.len(), 2);
        let rtp = RtpRepr::parse_bytes(&parity[1]).unwrap();
        assert_eq!(rtp.timestamp, 9);
        let (header, _) = fairstream_media::stream::parse_parity(rtp.payload).unwrap();
        assert_eq!(
            (header.block, header.index, header.k, header.n),
            (0, 1, 4, 6)
        );
        assert!(FecEncoder::new(FecParams { n: 300, k: 20 }).is_err());
        assert!(FecEncoder::new(FecParams { n: 4, k: 4 }).is_err());
    }
}
