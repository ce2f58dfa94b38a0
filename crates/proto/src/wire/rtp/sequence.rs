//! Sequence numbers: 16-bit wrap-around arithmetic, and the per-source
//! bookkeeping of RFC 3550 Appendix A.1 (validity, extended numbers) and A.3
//! (loss counts for reception reports).

/// How far `to` is ahead of `from` in 16-bit sequence space: positive when
/// `to` comes later, negative when earlier (serial number arithmetic,
/// RFC 1982). Exactly half the space apart reads as −32768.
pub fn sequence_delta(from: u16, to: u16) -> i16 {
    to.wrapping_sub(from) as i16
}

/// True when `a` comes before `b` in 16-bit sequence space with wrap-around
/// (65535 precedes 0). Neither precedes the other when they are exactly
/// 32768 apart.
pub fn sequence_precedes(a: u16, b: u16) -> bool {
    sequence_delta(a, b) > 0
}

/// The number of distinct 16-bit sequence numbers (RTP_SEQ_MOD in Appendix A.1).
const SEQ_MOD: u64 = 1 << 16;

/// The constants of the RFC 3550 Appendix A.1 validity check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SequenceTrackerConfig {
    /// A forward jump smaller than this is a gap (lost packets), not a
    /// restart. RFC 3550 A.1: `MAX_DROPOUT = 3000`.
    pub max_dropout: u16,
    /// A packet less than this far behind the highest is late or duplicated;
    /// further behind, it is a jump. RFC 3550 A.1: `MAX_MISORDER = 100`.
    pub max_misorder: u16,
    /// Sequential packets needed before a new source is valid. RFC 3550 A.1:
    /// `MIN_SEQUENTIAL = 2`. Values below 1 act as 1.
    pub min_sequential: u16,
}

impl Default for SequenceTrackerConfig {
    fn default() -> Self {
        SequenceTrackerConfig {
            max_dropout: 3000,
            max_misorder: 100,
            min_sequential: 2,
        }
    }
}

/// What [`SequenceTracker::update`] made of one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SequenceUpdate {
    /// Valid and counted as received; `extended` is this packet's extended
    /// sequence number (behind the highest one for a late packet).
    Valid {
        /// The 64-bit extended sequence number of this packet.
        extended: u64,
    },
    /// The source restarted its numbering (two sequential packets after a
    /// large jump): counting started over from this packet.
    Restarted {
        /// The packet's new extended sequence number (cycle count reset).
        extended: u64,
    },
    /// The source is still on probation (fewer than `min_sequential`
    /// sequential packets seen); the packet is not counted.
    Probation,
    /// A jump too large to be loss or reordering; the packet is not counted
    /// unless the next packet follows it (then the tracker restarts).
    LargeJump,
    /// A late packet from before the first valid one: A.1 counts it as
    /// received, but it has no extended sequence number.
    PrecedesStart,
}

/// Per-source sequence-number state of RFC 3550 Appendix A.1, with the loss
/// counts of Appendix A.3.
///
/// Feed it every packet's sequence number in arrival order. The extended
/// numbers are 64-bit (A.1 keeps a 32-bit cycle count); a receiver report
/// carries the low 32 bits of [`SequenceTracker::extended_max`].
#[derive(Clone, Debug)]
pub struct SequenceTracker {
    config: SequenceTrackerConfig,
    started: bool,
    max_seq: u16,
    /// Wrap count shifted left by 16 (A.1's `cycles`).
    cycles: u64,
    base_seq: u16,
    /// The sequence number that would confirm a restart after a large jump.
    bad_seq: Option<u16>,
    probation: u16,
    received: u64,
    expected_prior: u64,
    received_prior: u64,
}

impl SequenceTracker {
    /// A tracker that has seen no packet yet.
    pub fn new(config: SequenceTrackerConfig) -> Self {
        SequenceTracker {
            config,
            started: false,
            max_seq: 0,
            cycles: 0,
            base_seq: 0,
            bad_seq: None,
            probation: 0,
            received: 0,
            expected_prior: 0,
            received_prior: 0,
        }
    }

    fn min_sequential(&self) -> u16 {
        self.config.min_sequential.max(1)
    }

    /// A.1 `init_seq`.
    fn init(&mut self, seq: u16) {
        self.base_seq = seq;
        self.max_seq = seq;
        self.bad_seq = None;
        self.cycles = 0;
        self.received = 0;
        self.received_prior = 0;
        self.expected_prior = 0;
    }

    /// A.1 `update_seq` for one arriving packet.
    pub fn update(&mut self, seq: u16) -> SequenceUpdate {
        if !self.started {
            // RFC 3550 A.1: for a new source "init_seq(s, seq); s->max_seq =
            // seq - 1; s->probation = MIN_SEQUENTIAL;".
            self.started = true;
            self.init(seq);
            self.max_seq = seq.wrapping_sub(1);
            self.probation = self.min_sequential();
        }
        let udelta = seq.wrapping_sub(self.max_seq);
        if self.probation > 0 {
            // A.1: "packet is in sequence"
            if seq == self.max_seq.wrapping_add(1) {
                self.probation -= 1;
                self.max_seq = seq;
                if self.probation == 0 {
                    self.init(seq);
                    self.received += 1;
                    return SequenceUpdate::Valid {
                        extended: u64::from(seq),
                    };
                }
            } else {
                self.probation = self.min_sequential() - 1;
                self.max_seq = seq;
            }
            return SequenceUpdate::Probation;
        }
        if udelta < self.config.max_dropout {
            // A.1: "in order, with permissible gap"
            if seq < self.max_seq {
                // "Sequence number wrapped - count another 64K cycle."
                self.cycles += SEQ_MOD;
            }
            self.max_seq = seq;
            self.received += 1;
            SequenceUpdate::Valid {
                extended: self.extended_max(),
            }
        } else if u64::from(udelta) <= SEQ_MOD - u64::from(self.config.max_misorder) {
            // A.1: "the sequence number made a very large jump"
            if self.bad_seq == Some(seq) {
                // "Two sequential packets -- assume that the other side
                // restarted without telling us so just re-sync".
                self.init(seq);
                self.received += 1;
                SequenceUpdate::Restarted {
                    extended: u64::from(seq),
                }
            } else {
                self.bad_seq = Some(seq.wrapping_add(1));
                SequenceUpdate::LargeJump
            }
        } else {
            // A.1: "duplicate or reordered packet" -- still counted.
            self.received += 1;
            let behind = u64::from(self.max_seq.wrapping_sub(seq));
            match self.extended_max().checked_sub(behind) {
                Some(extended) => SequenceUpdate::Valid { extended },
                None => SequenceUpdate::PrecedesStart,
            }
        }
    }

    /// True once the source has passed probation.
    pub fn is_valid(&self) -> bool {
        self.started && self.probation == 0
    }

    /// The highest extended sequence number received (A.1: `cycles +
    /// max_seq`). Meaningless before [`SequenceTracker::is_valid`].
    pub fn extended_max(&self) -> u64 {
        self.cycles + u64::from(self.max_seq)
    }

    /// Packets received since the source became valid, late and duplicate
    /// ones included (A.3's `received`).
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Packets expected (A.3: `extended_max - base_seq + 1`); 0 on probation.
    pub fn expected(&self) -> u64 {
        if !self.is_valid() {
            return 0;
        }
        (self.extended_max() + 1).saturating_sub(u64::from(self.base_seq))
    }

    /// Cumulative loss (A.3: `expected - received`); negative when duplicates
    /// outnumber losses.
    pub fn cumulative_lost(&self) -> i64 {
        let expected = i64::try_from(self.expected()).unwrap_or(i64::MAX);
        let received = i64::try_from(self.received).unwrap_or(i64::MAX);
        expected.saturating_sub(received)
    }

    /// The fraction lost since the previous call, as the 8-bit fixed-point
    /// number a report block carries (A.3), and starts a new interval.
    pub fn take_fraction_lost(&mut self) -> u8 {
        let expected = self.expected();
        let expected_interval = expected.saturating_sub(self.expected_prior);
        self.expected_prior = expected;
        let received_interval = self.received.saturating_sub(self.received_prior);
        self.received_prior = self.received;
        // A.3: "if (expected_interval == 0 || lost_interval <= 0) fraction = 0;
        // else fraction = (lost_interval << 8) / expected_interval;"
        if expected_interval == 0 || received_interval >= expected_interval {
            return 0;
        }
        let lost_interval = expected_interval - received_interval;
        // lost_interval < expected_interval, so the quotient is below 256.
        u8::try_from(lost_interval.saturating_mul(256) / expected_interval).unwrap_or(u8::MAX)
    }
}

impl Default for SequenceTracker {
    fn default() -> Self {
        SequenceTracker::new(SequenceTrackerConfig::default())
    }
}
