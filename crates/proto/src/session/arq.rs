//! Retransmission within the deadline (ARQ) for a session, NAK-based as
//! SRT and RIST do it and as paper 003 put "a simple retransmission
//! mechanism on top of TFRC".
//!
//! - The receiver names the datagrams it is certain it lost (every
//!   connection has delivered a later one, and [`NDUPACK`] later datagrams
//!   have arrived) in an RTCP Generic NACK (RFC 4585 §6.2.1), sent back on
//!   one of the session's DCCP connections as data (RFC 5762 §4 carries
//!   RTCP on the same connection as RTP); it asks again after an RTT while
//!   the datagram is still missing and the reorder buffer still waits.
//!   The NACK's packet IDs are the low 16 bits of the session sequence
//!   numbers, and its media SSRC is [`SESSION_SSRC`]: the session, not one
//!   RTP source, is what is numbered (a deviation from RFC 4585, where PIDs
//!   are RTP sequence numbers, so that FEC parity and every connection's
//!   datagrams share one numbering).
//! - The sender keeps what it sent (`SentStore`, bounded in bytes and by
//!   the datagrams' deadlines) and queues a retransmission only if the
//!   datagram may be retransmitted (FEC parity is not), was not resent
//!   within the last RTT, and can still arrive before its deadline (now +
//!   srtt/2 < deadline). Retransmissions go ahead of new data, I frames
//!   first, through the connections' own congestion control: they are not
//!   extra bandwidth.
//!
//! [`NDUPACK`]: super::reorder::NDUPACK

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use crate::buffers::{BufferPool, Shared};
use crate::conn::ConnectionId;
use crate::time::Instant;

/// The media SSRC of the session's NACKs ("FSES").
pub const SESSION_SSRC: u32 = 0x4653_4553;

/// Whether and how a session retransmits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArqConfig {
    /// The receiver asks for lost datagrams and the sender resends them.
    /// Default on.
    pub enabled: bool,
    /// The most bytes the sender keeps for resending: the sent datagrams
    /// and its record of each. Default 16 MiB.
    pub store_bytes: usize,
}

impl Default for ArqConfig {
    fn default() -> Self {
        ArqConfig {
            enabled: true,
            store_bytes: 16 << 20,
        }
    }
}

/// What the sender did with retransmission requests and dead connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderArqStats {
    /// NACK packets received.
    pub nacks_received: u64,
    /// Sequence numbers they asked for (with repeats).
    pub requested: u64,
    /// Datagrams handed again to a connection after a request.
    pub retransmitted: u64,
    /// Requests refused because the datagram could no longer arrive before
    /// its deadline.
    pub too_late: u64,
    /// Requests for datagrams no longer (or never) kept, or not to be
    /// resent (FEC parity).
    pub not_kept: u64,
    /// Requests ignored because the same datagram was resent less than an
    /// RTT ago.
    pub duplicate_requests: u64,
    /// Connections declared dead (no answer for a few RTTs) and replaced.
    pub dead_connections: u64,
    /// Datagrams resent because their connection died.
    pub failover_resent: u64,
    /// Datagrams a bonded session resent on the other paths because their
    /// connection went suspect (silent for three RTTs while another path
    /// answered), before it could be found dead.
    pub suspect_resent: u64,
    /// Tail-loss probes: the last datagram resent once after two RTTs of
    /// silence from the application (a loss at the very end has nothing
    /// after it for the receiver to notice it by; RFC 8985 §7's probe).
    pub tail_probes: u64,
}

/// What the receiver asked for and got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverArqStats {
    /// NACK packets sent.
    pub nacks_sent: u64,
    /// Distinct sequence numbers asked for.
    pub requested: u64,
    /// Requests repeated after an RTT.
    pub repeated: u64,
    /// Asked-for datagrams that arrived in time (before the reorder buffer
    /// gave them up).
    pub recovered: u64,
    /// Asked-for datagrams given up before they came.
    pub too_late: u64,
    /// Lost datagrams not asked for because their FEC block arrived with
    /// at least k of its n datagrams (FEC rebuilds them), or because they
    /// were parity.
    pub left_to_fec: u64,
}

/// What the application tells the session about a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatagramMeta {
    /// Its group of pictures (for [`SplitPolicy::GopInterleave`]).
    ///
    /// [`SplitPolicy::GopInterleave`]: super::SplitPolicy::GopInterleave
    pub gop: u64,
    /// When it must have arrived to be of use; `None`: no deadline.
    pub deadline: Option<Instant>,
    /// It belongs to a frame others depend on (an I frame):
    /// retransmissions of such datagrams go first.
    pub key: bool,
    /// It may be resent (FEC parity is not: ARQ repairs what FEC could
    /// not).
    pub retransmit: bool,
    /// Its place on the media timeline (its frame's presentation time from
    /// the stream's first frame), sent in the header so that the receiver
    /// knows its deadline: the playout delay after the first datagram's
    /// arrival, plus this less the first datagram's.
    pub playout: Option<Duration>,
    /// Its place in a packet-level FEC block, sent in the header so that
    /// the receiver leaves to FEC the losses FEC will rebuild and asks only
    /// for the rest.
    pub fec: Option<super::FecTag>,
}

impl DatagramMeta {
    /// A datagram of GOP `gop`, no deadline, resendable.
    pub fn gop(gop: u64) -> DatagramMeta {
        DatagramMeta {
            gop,
            deadline: None,
            key: false,
            retransmit: true,
            playout: None,
            fec: None,
        }
    }
}

/// One sent datagram, kept for resending.
#[derive(Clone, Debug)]
pub(super) struct Stored {
    pub(super) datagram: Shared,
    pub(super) meta: DatagramMeta,
    /// The connection it was handed to, and when.
    pub(super) conn: ConnectionId,
    pub(super) dispatched: Instant,
    pub(super) last_resent: Option<Instant>,
}

/// The sender's record of what it sent, by extended session sequence
/// number; bounded in bytes, and what is past its deadline is let go.
/// With retransmission off it also lists what each connection was handed,
/// in order, so that what a failover can no longer reach goes too
/// ([`let_go_unreachable`](Self::let_go_unreachable)).
///
/// The datagrams are kept in a ring indexed by sequence number (they are
/// sent nearly in order), so that keeping, finding and letting go of one
/// costs O(1); a datagram let go out of order leaves an empty slot until
/// the slots before it go. Every slot, empty or not, counts its own size
/// against the byte bound, so neither small datagrams nor one held at the
/// front (by a connection that went quiet) make the ring grow without
/// bound.
#[derive(Debug, Default)]
pub(super) struct SentStore {
    /// Slot i holds datagram `base + i`; the first and last slots are
    /// never empty.
    slots: VecDeque<Option<Stored>>,
    base: u64,
    /// The bytes of the datagrams kept.
    bytes: usize,
    limit_bytes: usize,
    /// Per connection, (when, sequence number) of each datagram handed to
    /// it, oldest first; `None` when the store does not prune so. A record
    /// whose entry went or moved to another connection is stale and
    /// skipped.
    handed: Option<Vec<Handed>>,
    /// The buffers of datagrams let go, for the next ones sent.
    spare: BufferPool<Shared>,
}

/// What one slot of the ring counts against the byte bound, beside its
/// datagram's bytes.
const SLOT_BYTES: usize = std::mem::size_of::<Option<Stored>>();

/// What one connection was handed: (when, sequence number), oldest first.
#[derive(Debug)]
struct Handed {
    conn: ConnectionId,
    records: VecDeque<(Instant, u64)>,
}

impl SentStore {
    /// A store of at most `limit_bytes`; `by_connection`: list each
    /// connection's datagrams for [`let_go_unreachable`](Self::let_go_unreachable).
    pub(super) fn new(limit_bytes: usize, by_connection: bool) -> SentStore {
        SentStore {
            slots: VecDeque::new(),
            base: 0,
            bytes: 0,
            limit_bytes,
            handed: by_connection.then(Vec::new),
            spare: BufferPool::default(),
        }
    }

    /// Records a dispatched datagram; the oldest go when over the bound.
    pub(super) fn insert(&mut self, seq: u64, stored: Stored) {
        if self.limit_bytes == 0 {
            // Kept nowhere: the connection that shares it frees it once
            // sent. (Handing the connection a copy instead, so that this
            // buffer came back for the next datagram, saved 1.6 % of the
            // instructions and cost 12 % more L2 misses: slower.)
            return;
        }
        // A datagram further from those kept than the bound holds slots
        // for starts the ring afresh (the others would go anyway).
        let span = match self.newest() {
            Some(newest) => seq.max(newest) - seq.min(self.base) + 1,
            None => 1,
        };
        if self.slots.is_empty() || span.saturating_mul(SLOT_BYTES as u64) > self.limit_bytes as u64
        {
            self.clear();
            self.base = seq;
        }
        self.record(stored.conn, stored.dispatched, seq);
        self.bytes += stored.datagram.len();
        while seq < self.base {
            self.slots.push_front(None);
            self.base -= 1;
        }
        let index = (seq - self.base) as usize;
        if index >= self.slots.len() {
            self.slots.resize_with(index + 1, || None);
        }
        if let Some(old) = self
            .slots
            .get_mut(index)
            .and_then(|slot| slot.replace(stored))
        {
            self.let_go(old);
        }
        while self.bytes + self.slots.len() * SLOT_BYTES > self.limit_bytes {
            if !self.pop_first() {
                break;
            }
        }
    }

    /// Lets go of every datagram.
    fn clear(&mut self) {
        while self.pop_first() {}
    }

    /// Lets go of the oldest datagram; whether there was one.
    fn pop_first(&mut self) -> bool {
        while let Some(slot) = self.slots.pop_front() {
            self.base += 1;
            if let Some(old) = slot {
                self.let_go(old);
                self.trim();
                return true;
            }
        }
        false
    }

    /// Drops the empty slots at both ends.
    fn trim(&mut self) {
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        while matches!(self.slots.back(), Some(None)) {
            self.slots.pop_back();
        }
    }

    /// Takes datagram `seq` out of its slot and lets go of it.
    fn let_go_seq(&mut self, seq: u64) {
        let taken = self
            .index(seq)
            .and_then(|index| self.slots.get_mut(index))
            .and_then(Option::take);
        if let Some(old) = taken {
            self.let_go(old);
        }
    }

    fn slot(&self, seq: u64) -> Option<&Stored> {
        self.slots.get(self.index(seq)?)?.as_ref()
    }

    /// The slot of datagram `seq`, if the ring reaches that far back.
    fn index(&self, seq: u64) -> Option<usize> {
        usize::try_from(seq.checked_sub(self.base)?).ok()
    }

    /// Lets go of a datagram taken out of its slot, keeping its buffer for
    /// the next one sent. What is let go comes in bursts (a round trip's
    /// datagrams when an answer arrives) and is taken back one datagram at
    /// a time, so the spares may be as many as the slots the store still
    /// has: they never outnumber the datagrams it held at its fullest.
    fn let_go(&mut self, old: Stored) {
        self.bytes -= old.datagram.len();
        self.spare.give_within(old.datagram, self.slots.len());
    }

    /// An empty buffer for a new datagram: one a datagram let go left, if
    /// any.
    pub(super) fn buffer(&mut self) -> Shared {
        self.spare.take()
    }

    fn record(&mut self, conn: ConnectionId, at: Instant, seq: u64) {
        let Some(handed) = &mut self.handed else {
            return;
        };
        // A session has a few connections: a list beats a map.
        match handed.iter_mut().find(|h| h.conn == conn) {
            Some(h) => h.records.push_back((at, seq)),
            None => handed.push(Handed {
                conn,
                records: VecDeque::from([(at, seq)]),
            }),
        }
    }

    /// Datagram `seq` was handed again, to `conn` at `at`.
    pub(super) fn redispatch(
        &mut self,
        seq: u64,
        conn: ConnectionId,
        at: Instant,
    ) -> Option<&Stored> {
        let stored = self.get_mut(seq)?;
        stored.conn = conn;
        stored.dispatched = at;
        self.record(conn, at, seq);
        self.slot(seq)
    }

    /// Lets go of the datagrams at the front whose deadline has passed.
    pub(super) fn prune(&mut self, now: Instant) {
        while let Some(Some(first)) = self.slots.front() {
            if first.meta.deadline.is_none_or(|d| d >= now) {
                break;
            }
            self.pop_first();
        }
    }

    /// Lets go of what each connection was handed before `reach(conn)`
    /// (all of it when `None`: the connection is gone), except the
    /// datagrams `pending` names; a no-op unless the store lists by
    /// connection. Each record is looked at once: amortised O(1) a
    /// datagram, and a connection that went quiet holds back only its own.
    pub(super) fn let_go_unreachable(
        &mut self,
        reach: impl Fn(ConnectionId) -> Option<Instant>,
        pending: impl Fn(u64) -> bool,
    ) {
        let Some(mut handed) = self.handed.take() else {
            return;
        };
        handed.retain_mut(|Handed { conn, records }| {
            let before = reach(*conn);
            while let Some(&(at, seq)) = records.front() {
                if before.is_some_and(|b| at >= b) {
                    break;
                }
                records.pop_front();
                let current = self
                    .slot(seq)
                    .is_some_and(|s| s.conn == *conn && s.dispatched == at);
                if current && !pending(seq) {
                    self.let_go_seq(seq);
                }
            }
            before.is_some()
        });
        self.handed = Some(handed);
        self.trim();
    }

    pub(super) fn get_mut(&mut self, seq: u64) -> Option<&mut Stored> {
        let index = self.index(seq)?;
        self.slots.get_mut(index)?.as_mut()
    }

    /// The datagrams handed to `conn` at or after `since`.
    pub(super) fn sent_on(&self, conn: ConnectionId, since: Instant) -> Vec<u64> {
        (self.base..)
            .zip(&self.slots)
            .filter_map(|(seq, slot)| Some((seq, slot.as_ref()?)))
            .filter(|(_, s)| s.conn == conn && s.dispatched >= since)
            .map(|(seq, _)| seq)
            .collect()
    }

    /// The highest sequence number kept.
    pub(super) fn newest(&self) -> Option<u64> {
        (!self.slots.is_empty()).then(|| self.base + self.slots.len() as u64 - 1)
    }

    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// The sequence number nearest below or at `newest` whose low 16 bits are
/// `pid` (a NACK names numbers modulo 2¹⁶).
pub(super) fn extend_pid(pid: u16, newest: u64) -> Option<u64> {
    newest.checked_sub(u64::from((newest as u16).wrapping_sub(pid)))
}

/// Retransmissions waiting for a connection: key datagrams first, then by
/// sequence number.
#[derive(Debug, Default)]
pub(super) struct ResendQueue {
    queue: VecDeque<(bool, u64)>,
}

impl ResendQueue {
    pub(super) fn push(&mut self, key: bool, seq: u64) {
        if self.contains(seq) {
            return;
        }
        let at = self
            .queue
            .iter()
            .position(|(k, s)| (!k && key) || (*k == key && *s > seq))
            .unwrap_or(self.queue.len());
        self.queue.insert(at, (key, seq));
    }

    pub(super) fn contains(&self, seq: u64) -> bool {
        self.queue.iter().any(|(_, s)| *s == seq)
    }

    pub(super) fn pop(&mut self) -> Option<u64> {
        self.queue.pop_front().map(|(_, seq)| seq)
    }

    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }
}

/// The receiver's requests in flight: when each was last asked for.
#[derive(Debug, Default)]
pub(super) struct NakTracker {
    asked: BTreeMap<u64, Instant>,
    pub(super) stats: ReceiverArqStats,
}

/// The most requests the receiver tracks (a sender cannot make it track
/// more by skipping numbers: the reorder buffer's scan is bounded too).
const MAX_TRACKED: usize = 1 << 16;

impl NakTracker {
    /// Of `gaps` (certainly lost, oldest first), those to ask for now:
    /// never asked, or asked at least `rtt` ago. A request due for a repeat
    /// whose gap is no longer certain (its lanes went quiet) waits another
    /// RTT, so that [`next_repeat`](Self::next_repeat) is never in the past.
    pub(super) fn due(&mut self, now: Instant, gaps: &[u64], rtt: Duration) -> Vec<u64> {
        for (seq, last) in &mut self.asked {
            if now.saturating_duration_since(*last) >= rtt && gaps.binary_search(seq).is_err() {
                *last = now;
            }
        }
        let mut due = Vec::new();
        for &seq in gaps {
            let room = self.asked.len() < MAX_TRACKED;
            match self.asked.get_mut(&seq) {
                Some(last) if now.saturating_duration_since(*last) >= rtt => {
                    *last = now;
                    self.stats.repeated += 1;
                    due.push(seq);
                }
                Some(_) => {}
                None if room => {
                    self.asked.insert(seq, now);
                    self.stats.requested += 1;
                    due.push(seq);
                }
                None => {}
            }
        }
        due
    }

    /// Whether `seq` was asked for and has not come.
    pub(super) fn is_asked(&self, seq: u64) -> bool {
        self.asked.contains_key(&seq)
    }

    /// A datagram arrived: if it was asked for, it is recovered.
    pub(super) fn arrived(&mut self, seq: u64) {
        if self.asked.remove(&seq).is_some() {
            self.stats.recovered += 1;
        }
    }

    /// Everything below `next` was released or given up: what was asked
    /// for and is still tracked there came too late.
    pub(super) fn released_below(&mut self, next: u64) {
        while let Some(entry) = self.asked.first_entry() {
            if *entry.key() >= next {
                break;
            }
            entry.remove();
            self.stats.too_late += 1;
        }
    }

    /// When the oldest request may be repeated.
    pub(super) fn next_repeat(&self, rtt: Duration) -> Option<Instant> {
        self.asked.values().min().map(|at| *at + rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn pids_extend_below_the_newest() {
        assert_eq!(extend_pid(5, 70_000), Some(65_541));
        assert_eq!(extend_pid(4_464, 70_000), Some(70_000));
        assert_eq!(extend_pid(4_465, 70_000), Some(4_465));
        assert_eq!(extend_pid(10, 5), None);
    }

    #[test]
    fn key_datagrams_are_resent_first() {
        let mut queue = ResendQueue::default();
        queue.push(false, 7);
        queue.push(true, 9);
        queue.push(false, 3);
        queue.push(true, 4);
        queue.push(false, 3);
        let order: Vec<u64> = std::iter::from_fn(|| queue.pop()).collect();
        assert_eq!(order, [4, 9, 3, 7]);
    }

    #[test]
    fn the_store_is_bounded_in_bytes_and_by_deadline() {
        let conn = ConnectionId {
            local_port: 1,
            remote_port: 2,
        };
        // Room for two datagrams of 100 bytes and their slots, not three.
        let mut store = SentStore::new(2 * (100 + SLOT_BYTES) + 50, false);
        for seq in 0..3u64 {
            store.insert(
                seq,
                Stored {
                    datagram: Shared::new(vec![0; 100]),
                    meta: DatagramMeta {
                        deadline: Some(at(100 * (seq + 1))),
                        ..DatagramMeta::gop(0)
                    },
                    conn,
                    dispatched: at(seq),
                    last_resent: None,
                },
            );
        }
        assert!(
            store.get_mut(0).is_none(),
            "over 250 bytes: the oldest went"
        );
        assert_eq!(store.bytes(), 200);
        store.prune(at(250));
        assert!(store.get_mut(1).is_none(), "past its deadline");
        assert!(store.get_mut(2).is_some());
        assert_eq!(store.sent_on(conn, at(2)), [2]);
    }

    #[test]
    fn datagrams_kept_out_of_order_are_found_in_order() {
        let conn = ConnectionId {
            local_port: 1,
            remote_port: 2,
        };
        let mut store = SentStore::new(1 << 20, false);
        // GOP-interleaved dealing hands datagrams over out of order: one
        // below the first kept grows the ring at its front.
        for seq in [5u64, 3, 9] {
            store.insert(
                seq,
                Stored {
                    datagram: Shared::new(vec![0; 10]),
                    meta: DatagramMeta::gop(0),
                    conn,
                    dispatched: at(seq),
                    last_resent: None,
                },
            );
        }
        assert_eq!(store.sent_on(conn, at(0)), [3, 5, 9]);
        assert_eq!(store.newest(), Some(9));
        assert_eq!(store.bytes(), 30);
        assert!(store.get_mut(4).is_none() && store.get_mut(2).is_none());
        store.prune(at(100));
        assert_eq!(store.sent_on(conn, at(0)), [3, 5, 9], "no deadline: kept");
    }

    #[test]
    fn what_a_failover_cannot_reach_goes_connection_by_connection() {
        let conn = |port| ConnectionId {
            local_port: port,
            remote_port: 9,
        };
        let mut store = SentStore::new(1 << 20, true);
        // Datagrams 0..6 alternately on connections 1 and 2, at 0..6 ms.
        for seq in 0..6u64 {
            store.insert(
                seq,
                Stored {
                    datagram: Shared::new(vec![0; 10]),
                    meta: DatagramMeta::gop(0),
                    conn: conn(1 + (seq % 2) as u16),
                    dispatched: at(seq),
                    last_resent: None,
                },
            );
        }
        // Datagram 1 (connection 2) resent on connection 1 at 10 ms.
        assert!(store.redispatch(1, conn(1), at(10)).is_some());
        // Connection 1 reaches back to 3 ms, connection 2 only to 0 ms:
        // 0 and 2 go, though older than 3 (still of use on connection 2).
        store.let_go_unreachable(
            |c| Some(if c == conn(1) { at(3) } else { at(0) }),
            |_| false,
        );
        let kept: Vec<u64> = (0..6).filter(|s| store.get_mut(*s).is_some()).collect();
        assert_eq!(kept, [1, 3, 4, 5]);
        assert_eq!(store.bytes(), 40);
        // Connection 2 is gone: its datagrams go, but for one waiting to
        // be resent; 1 was moved to connection 1 and stays.
        store.let_go_unreachable(|c| (c == conn(1)).then_some(at(3)), |seq| seq == 5);
        let kept: Vec<u64> = (0..6).filter(|s| store.get_mut(*s).is_some()).collect();
        assert_eq!(kept, [1, 4, 5]);
        // Connection 1 heard from later: what it had goes.
        store.let_go_unreachable(|_| Some(at(11)), |_| false);
        assert_eq!(store.bytes(), 10, "only 5, waiting to be resent");
    }

    #[test]
    fn requests_repeat_after_an_rtt_and_are_counted() {
        let mut naks = NakTracker::default();
        let rtt = Duration::from_millis(100);
        assert_eq!(naks.due(at(0), &[1, 2], rtt), [1, 2]);
        assert!(naks.due(at(50), &[1, 2], rtt).is_empty());
        assert_eq!(naks.next_repeat(rtt), Some(at(100)));
        naks.arrived(2);
        assert_eq!(naks.due(at(100), &[1], rtt), [1]);
        // 3 asked, then no longer certain: its repeat moves on.
        assert_eq!(naks.due(at(120), &[1, 3], rtt), [3]);
        assert!(naks.due(at(230), &[], rtt).is_empty());
        assert_eq!(naks.next_repeat(rtt), Some(at(330)));
        naks.released_below(5);
        assert_eq!(
            naks.stats,
            ReceiverArqStats {
                nacks_sent: 0,
                requested: 3,
                repeated: 1,
                recovered: 1,
                too_late: 2,
                left_to_fec: 0,
            }
        );
    }
}
