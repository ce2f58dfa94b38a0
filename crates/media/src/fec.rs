//! Packet-level forward error correction: Reed-Solomon RS(n, k) over blocks
//! of k packets (paper 001 used RS(56,50) and RS(61,50)), with the
//! `reed-solomon-erasure` crate's GF(2^8) codec.
//!
//! A block's k data packets become k equal-length shards: each is the
//! packet's length (two bytes, big-endian) then the packet, zero-padded to
//! the block's longest. The n − k parity shards are computed over them. A
//! receiver with any k of the n shards recovers every data packet; with
//! fewer it recovers none (the code is an erasure code: it never guesses).

use reed_solomon_erasure::galois_8::ReedSolomon;

/// The largest n the GF(2^8) codec allows.
pub const MAX_SHARDS: usize = 256;
/// Bytes of the length prefix of a data shard.
const LENGTH_PREFIX: usize = 2;

/// Why a code or a block was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FecError {
    /// Parameters outside 1 ≤ k < n ≤ 256.
    #[error("RS({n}, {k}) is not a code: need 1 <= k < n <= {MAX_SHARDS}")]
    BadCode {
        /// n.
        n: usize,
        /// k.
        k: usize,
    },
    /// A block of the wrong size.
    #[error("a block has {got} packets; RS(n, {k}) blocks have 1 to {k}")]
    BadBlock {
        /// Packets given.
        got: usize,
        /// k.
        k: usize,
    },
    /// A packet too long for the two-byte length prefix.
    #[error("a packet of {0} bytes is too long for FEC (at most 65535)")]
    PacketTooLong(usize),
    /// Fewer than k shards arrived.
    #[error("{received} of {n} shards arrived; at least {k} are needed")]
    TooManyLosses {
        /// Shards that arrived.
        received: usize,
        /// n.
        n: usize,
        /// k.
        k: usize,
    },
    /// Shards of different lengths, or the codec refused them.
    #[error("the shards are inconsistent: {0}")]
    Inconsistent(String),
}

/// An RS(n, k) code.
#[derive(Debug)]
pub struct FecCode {
    n: usize,
    k: usize,
    codec: ReedSolomon,
}

impl FecCode {
    /// RS(`n`, `k`): `k` data packets and `n − k` parity packets a block.
    pub fn new(n: usize, k: usize) -> Result<FecCode, FecError> {
        if k == 0 || k >= n || n > MAX_SHARDS {
            return Err(FecError::BadCode { n, k });
        }
        let codec = ReedSolomon::new(k, n - k).map_err(|_| FecError::BadCode { n, k })?;
        Ok(FecCode { n, k, codec })
    }

    /// n.
    pub fn n(&self) -> usize {
        self.n
    }

    /// k.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The parity packets of a block of up to k data packets (a short last
    /// block is completed with empty packets, which the receiver knows).
    pub fn encode(&self, block: &[&[u8]]) -> Result<Vec<Vec<u8>>, FecError> {
        if block.is_empty() || block.len() > self.k {
            return Err(FecError::BadBlock {
                got: block.len(),
                k: self.k,
            });
        }
        let longest = block.iter().map(|p| p.len()).max().unwrap_or(0);
        if longest > usize::from(u16::MAX) {
            return Err(FecError::PacketTooLong(longest));
        }
        let width = LENGTH_PREFIX + longest;
        let mut shards: Vec<Vec<u8>> = (0..self.n).map(|_| vec![0; width]).collect();
        for (shard, packet) in shards.iter_mut().zip(block) {
            shard[..LENGTH_PREFIX].copy_from_slice(&(packet.len() as u16).to_be_bytes());
            shard[LENGTH_PREFIX..LENGTH_PREFIX + packet.len()].copy_from_slice(packet);
        }
        self.codec
            .encode(&mut shards)
            .map_err(|e| FecError::Inconsistent(format!("{e:?}")))?;
        Ok(shards.split_off(self.k))
    }

    /// Recovers a block's data packets from what arrived: `data[i]` is data
    /// packet i if it arrived (`blank` data packets a short block never had
    /// count as arrived and empty), `parity[j]` parity packet j.
    pub fn recover(
        &self,
        data: &[Option<Vec<u8>>],
        parity: &[Option<Vec<u8>>],
    ) -> Result<Vec<Vec<u8>>, FecError> {
        if data.len() != self.k || parity.len() != self.n - self.k {
            return Err(FecError::Inconsistent(format!(
                "{} data and {} parity slots for RS({}, {})",
                data.len(),
                parity.len(),
                self.n,
                self.k
            )));
        }
        let received = data.iter().chain(parity).filter(|s| s.is_some()).count();
        if received < self.k {
            return Err(FecError::TooManyLosses {
                received,
                n: self.n,
                k: self.k,
            });
        }
        if data.iter().all(Option::is_some) {
            return Ok(data.iter().flatten().cloned().collect());
        }
        let width = parity
            .iter()
            .flatten()
            .map(Vec::len)
            .next()
            .ok_or_else(|| FecError::Inconsistent("no parity shard".into()))?;
        let mut shards: Vec<Option<Vec<u8>>> = Vec::with_capacity(self.n);
        for packet in data {
            shards.push(match packet {
                Some(p) if p.len() + LENGTH_PREFIX <= width => {
                    let mut shard = vec![0; width];
                    shard[..LENGTH_PREFIX].copy_from_slice(&(p.len() as u16).to_be_bytes());
                    shard[LENGTH_PREFIX..LENGTH_PREFIX + p.len()].copy_from_slice(p);
                    Some(shard)
                }
                Some(p) => {
                    return Err(FecError::Inconsistent(format!(
                        "a data packet of {} bytes in a block of {width}-byte shards",
                        p.len()
                    )))
                }
                None => None,
            });
        }
        for shard in parity {
            if shard.as_ref().is_some_and(|s| s.len() != width) {
                return Err(FecError::Inconsistent(
                    "parity shards of different lengths".into(),
                ));
            }
            shards.push(shard.clone());
        }
        self.codec
            .reconstruct_data(&mut shards)
            .map_err(|e| FecError::Inconsistent(format!("{e:?}")))?;
        shards
            .into_iter()
            .take(self.k)
            .map(|shard| {
                let shard =
                    shard.ok_or_else(|| FecError::Inconsistent("not reconstructed".into()))?;
                let len = usize::from(u16::from_be_bytes([shard[0], shard[1]]));
                shard
                    .get(LENGTH_PREFIX..LENGTH_PREFIX + len)
                    .map(<[u8]>::to_vec)
                    .ok_or_else(|| FecError::Inconsistent(format!("length {len} beyond the shard")))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn block(k: usize, seed: u64) -> Vec<Vec<u8>> {
        (0..k)
            .map(|i| {
                let len = ((seed as usize + i * 37) % 900) + 1;
                (0..len)
                    .map(|b| (b as u64 * 31 + i as u64 + seed) as u8)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn rs_56_50_recovers_six_losses_and_not_seven() {
        let code = FecCode::new(56, 50).unwrap();
        let packets = block(50, 3);
        let refs: Vec<&[u8]> = packets.iter().map(Vec::as_slice).collect();
        let parity = code.encode(&refs).unwrap();
        assert_eq!(parity.len(), 6);
        let mut data: Vec<Option<Vec<u8>>> = packets.iter().cloned().map(Some).collect();
        for i in [0, 7, 13, 20, 33, 49] {
            data[i] = None;
        }
        let parity: Vec<Option<Vec<u8>>> = parity.into_iter().map(Some).collect();
        assert_eq!(code.recover(&data, &parity).unwrap(), packets);
        data[1] = None;
        assert_eq!(
            code.recover(&data, &parity),
            Err(FecError::TooManyLosses {
                received: 49,
                n: 56,
                k: 50
            })
        );
    }

    #[test]
    fn bad_codes_and_blocks_are_refused() {
        assert!(FecCode::new(50, 50).is_err());
        assert!(FecCode::new(300, 250).is_err());
        assert!(FecCode::new(5, 0).is_err());
        let code = FecCode::new(4, 2).unwrap();
        assert!(matches!(code.encode(&[]), Err(FecError::BadBlock { .. })));
        let big = vec![0u8; 70_000];
        assert!(matches!(
            code.encode(&[&big]),
            Err(FecError::PacketTooLong(_))
        ));
        assert!(code.recover(&[None], &[None, None]).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every block with at most n − k losses is recovered exactly; no
        /// block with more is.
        #[test]
        fn recovers_exactly_up_to_n_minus_k_losses(
            k in 1usize..12,
            parity in 1usize..6,
            seed in any::<u64>(),
            lost in proptest::collection::vec(any::<bool>(), 17),
            short in 0usize..3,
        ) {
            let n = k + parity;
            let code = FecCode::new(n, k).unwrap();
            // A short last block: fewer packets, the rest known empty.
            let real = k.saturating_sub(short).max(1);
            let packets = block(real, seed);
            let refs: Vec<&[u8]> = packets.iter().map(Vec::as_slice).collect();
            let parity_packets = code.encode(&refs).unwrap();
            let mut data: Vec<Option<Vec<u8>>> = (0..k)
                .map(|i| Some(packets.get(i).cloned().unwrap_or_default()))
                .collect();
            let mut parity_in: Vec<Option<Vec<u8>>> = parity_packets.into_iter().map(Some).collect();
            let mut losses = 0;
            for (i, slot) in data.iter_mut().take(real).chain(parity_in.iter_mut()).enumerate() {
                if lost[i % lost.len()] {
                    *slot = None;
                    losses += 1;
                }
            }
            let result = code.recover(&data, &parity_in);
            if losses <= n - k {
                let recovered = result.unwrap();
                prop_assert_eq!(&recovered[..real], &packets[..]);
            } else {
                let is_too_many = matches!(result, Err(FecError::TooManyLosses { .. }));
                prop_assert!(is_too_many);
            }
        }
    }
}
