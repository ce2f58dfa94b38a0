//! The sender's repairs: retransmitting what the receiver asks for
//! ([`super::super::arq`]) and moving a dead connection's datagrams to the
//! others.

use std::time::Duration;

use super::{SenderSession, SessionEvent, MAX_HELD_REPORTS};
use crate::conn::{ConnectionId, State};
use crate::time::Instant;
use crate::wire::rtcp::{is_rtcp, GenericNack};

use super::{extend_pid, SESSION_SSRC};

/// The least pause of the application after which its last datagram is
/// probed while the session is open.
const TAIL_IDLE: Duration = Duration::from_secs(1);

/// The RTT assumed before a connection has measured one.
const RTT_BEFORE_SAMPLES: Duration = Duration::from_millis(100);

impl SenderSession {
    /// The mean smoothed RTT of the open connections, once one has it.
    pub(super) fn mean_rtt(&self) -> Option<Duration> {
        self.mean_rtt_where(|_| true)
    }

    /// The mean smoothed RTT of path `path`'s open connections.
    pub(super) fn mean_rtt_on(&self, path: usize) -> Option<Duration> {
        self.mean_rtt_where(|p| p == path)
    }

    fn mean_rtt_where(&self, on: impl Fn(usize) -> bool) -> Option<Duration> {
        let rtts: Vec<Duration> = self
            .conns
            .iter()
            .filter(|c| !c.closing && on(c.path))
            .filter_map(|c| self.endpoint.connection(c.id)?.rtt())
            .collect();
        (!rtts.is_empty()).then(|| rtts.iter().sum::<Duration>() / rtts.len() as u32)
    }

    /// [`mean_rtt`](Self::mean_rtt), or an assumed 100 ms before any.
    pub(super) fn session_rtt(&self) -> Duration {
        self.mean_rtt().unwrap_or(RTT_BEFORE_SAMPLES)
    }

    /// Reads what the receiver sent back on the connections: RTCP (RFC
    /// 5762 §4), of which the session acts on Generic NACKs and keeps the
    /// other packets for [`poll_report`](SenderSession::poll_report).
    /// Anything else is dropped.
    pub(super) fn read_feedback(&mut self, now: Instant) {
        let ids: Vec<ConnectionId> = self.conns.iter().map(|c| c.id).collect();
        for id in ids {
            while let Some(datagram) = self
                .endpoint
                .connection_mut(id)
                .and_then(|conn| conn.recv())
            {
                if !is_rtcp(&datagram) {
                    continue;
                }
                match GenericNack::parse(&datagram) {
                    Some(Ok(nack)) if nack.media_ssrc == SESSION_SSRC => {
                        self.handle_nack(now, &nack);
                    }
                    Some(_) => {}
                    None => self.hold_report(datagram),
                }
            }
        }
    }

    /// Keeps an RTCP packet for the application, dropping the oldest held
    /// beyond [`MAX_HELD_REPORTS`].
    fn hold_report(&mut self, datagram: Vec<u8>) {
        if self.reports.len() >= MAX_HELD_REPORTS {
            self.reports.pop_front();
            self.reports_dropped += 1;
        }
        self.reports.push_back(datagram);
    }

    /// Queues what a NACK asks for, if it can still arrive in time.
    fn handle_nack(&mut self, now: Instant, nack: &GenericNack) {
        self.arq_stats.nacks_received += 1;
        self.arq_stats.requested += nack.lost.len() as u64;
        if !self.config.arq.enabled {
            self.arq_stats.not_kept += nack.lost.len() as u64;
            return;
        }
        self.store.prune(now);
        let Some(newest) = self.store.newest() else {
            self.arq_stats.not_kept += nack.lost.len() as u64;
            return;
        };
        let rtt = self.session_rtt();
        for &pid in &nack.lost {
            let Some(seq) = extend_pid(pid, newest) else {
                self.arq_stats.not_kept += 1;
                continue;
            };
            self.request(now, seq, rtt, false);
        }
        self.dispatch(now);
    }

    /// Queues datagram `seq` for resending if it is kept, resendable, not
    /// resent within `rtt`, and can arrive before its deadline; whether it
    /// did. `failover`: the session resends it of its own accord (a dead or
    /// suspect connection's datagram, a tail probe), not at the receiver's
    /// request, so it is not checked against a crossing request nor counted
    /// among the requests' outcomes.
    fn request(&mut self, now: Instant, seq: u64, rtt: Duration, failover: bool) -> bool {
        let Some(stored) = self.store.get_mut(seq) else {
            if !failover {
                self.arq_stats.not_kept += 1;
            }
            return false;
        };
        if !stored.meta.retransmit {
            if !failover {
                self.arq_stats.not_kept += 1;
            }
            return false;
        }
        // A request that may have crossed the last retransmission: less
        // than an RTT since it left, counting the time it waited behind the
        // connection's queue (its depth at the connection's packet rate).
        let conn = stored.conn;
        let crossing = rtt + self.queue_delay(conn);
        let Some(stored) = self.store.get_mut(seq) else {
            return false;
        };
        if !failover
            && stored
                .last_resent
                .is_some_and(|at| now.saturating_duration_since(at) < crossing)
        {
            self.arq_stats.duplicate_requests += 1;
            return false;
        }
        // Only what can still arrive before its deadline: the one-way delay
        // is taken as half the RTT.
        if stored.meta.deadline.is_some_and(|d| now + rtt / 2 >= d) {
            self.arq_stats.too_late += 1;
            return false;
        }
        stored.last_resent = Some(now);
        self.resend.push(stored.meta.key, seq);
        true
    }

    /// Queues for resending what connection `id` was given since `since`
    /// (see [`request`](Self::request)); how many.
    fn resend_given(&mut self, now: Instant, id: ConnectionId, since: Instant) -> u64 {
        let rtt = self.session_rtt();
        let mut queued = 0;
        for seq in self.store.sent_on(id, since) {
            if self.request(now, seq, rtt, true) {
                queued += 1;
            }
        }
        queued
    }

    /// How long a datagram handed to connection `id` may wait before it
    /// leaves: the session's per-connection depth at its packet rate.
    fn queue_delay(&self, id: ConnectionId) -> Duration {
        let Some(conn) = self.endpoint.connection(id) else {
            return Duration::ZERO;
        };
        let rate = conn.allowed_rate().map_or(0.0, |r| r.bytes_per_sec());
        if rate <= 0.0 {
            return Duration::ZERO;
        }
        let bytes = (self.config.per_connection_depth.max(1) * conn.max_payload()) as f64;
        Duration::try_from_secs_f64(bytes / rate)
            .unwrap_or(Duration::ZERO)
            .min(Duration::from_secs(1))
    }

    /// Hands datagram `seq` again to connection `id`.
    pub(super) fn resend_now(&mut self, now: Instant, seq: u64, id: ConnectionId) {
        let Some(stored) = self.store.redispatch(seq, id, now) else {
            return;
        };
        if let Some(conn) = self.endpoint.connection_mut(id) {
            if conn.send_shared(&stored.datagram).is_ok() {
                self.arq_stats.retransmitted += 1;
            }
        }
        if let Some(c) = self.conns.iter_mut().find(|c| c.id == id) {
            c.unanswered_since.get_or_insert(now);
        }
    }

    /// When the tail-loss probe is due, if nothing followed the last
    /// datagram and no probe went yet: two RTTs after it once the
    /// application closed the session, otherwise after at least a second
    /// (a live source sends its next frame sooner, and a loss before it is
    /// found by the datagrams after it; probing at every pause between
    /// frames would resend each frame's last packet).
    pub(super) fn tail_probe_at(&self) -> Option<Instant> {
        if !self.config.arq.enabled || self.tail_probed || self.queued() > 0 {
            return None;
        }
        let (at, _) = self.last_dispatch?;
        let wait = 2 * self.session_rtt();
        Some(
            at + if self.closed {
                wait
            } else {
                wait.max(TAIL_IDLE)
            },
        )
    }

    /// Resends the last datagram once when the application has sent
    /// nothing after it for two RTTs: if it was lost, nothing after it can
    /// tell the receiver (RFC 8985 §7, the tail-loss probe, in spirit).
    pub(super) fn probe_tail(&mut self, now: Instant) {
        if self.tail_probe_at().is_none_or(|at| at > now) {
            return;
        }
        self.tail_probed = true;
        let Some((_, seq)) = self.last_dispatch else {
            return;
        };
        let rtt = self.session_rtt();
        if self.request(now, seq, rtt, true) {
            self.arq_stats.tail_probes += 1;
        }
        self.dispatch(now);
    }

    /// How long a connection given data may stay silent.
    pub(super) fn dead_after(&self, id: ConnectionId) -> Duration {
        let rtt = self
            .endpoint
            .connection(id)
            .and_then(|c| c.rtt())
            .unwrap_or(RTT_BEFORE_SAMPLES);
        (rtt * self.config.dead_after_rtts).max(self.config.dead_after_min)
    }

    /// When the next connection may be found dead.
    pub(super) fn next_dead_check(&self) -> Option<Instant> {
        if self.alive() < 2 {
            return None;
        }
        self.conns
            .iter()
            .filter(|c| !c.closing)
            .filter_map(|c| Some(c.unanswered_since? + self.dead_after(c.id)))
            .min()
    }

    /// When a bonded session's next connection may go suspect while another
    /// answers (see [`hedge`](Self::hedge)).
    pub(super) fn next_hedge(&self) -> Option<Instant> {
        if self.paths.len() < 2 || self.alive() < 2 {
            return None;
        }
        self.conns
            .iter()
            .filter(|c| !c.closing && !c.hedged)
            .filter_map(|c| Some(c.unanswered_since? + self.suspect_after(c.id)))
            .min()
    }

    /// In a bonded session, resends on the other paths what a connection
    /// that went suspect (silent for three RTTs after data, at least
    /// 150 ms) was given since its `reach_back`, once a silence, while a
    /// connection of another path answers: a cut path's datagrams in
    /// flight reach the receiver a few hundred milliseconds before the
    /// connection is found dead (at least 500 ms), which is what keeps a
    /// player with a second of buffer from running dry at the cut (issue
    /// 19). A path that was only slow costs one RTT's worth of duplicates,
    /// which the receiver drops; the resends take the other connections'
    /// allowed rates like any datagram, so no path gets more than TFRC
    /// allows.
    fn hedge(&mut self, now: Instant) {
        if self.paths.len() < 2 {
            return;
        }
        let suspects: Vec<(usize, ConnectionId, Instant)> = self
            .conns
            .iter()
            .filter(|c| !c.closing && !c.hedged && self.suspect(now, c.id))
            .map(|c| (c.path, c.id, c.reach_back))
            .collect();
        for (path, id, reach_back) in suspects {
            // Looked at once a silence: with no other path answering there
            // is nowhere to resend to, and the failover decides later.
            if let Some(c) = self.conns.iter_mut().find(|c| c.id == id) {
                c.hedged = true;
            }
            let other_answers = self
                .conns_in(|state| state == State::Open)
                .any(|c| c.path != path && !self.suspect(now, c.id));
            if !other_answers {
                continue;
            }
            self.arq_stats.suspect_resent += self.resend_given(now, id, reach_back);
        }
    }

    /// Open connections not closing.
    fn alive(&self) -> usize {
        self.conns_in(|state| state == State::Open).count()
    }

    /// Notes what each connection heard, and fails over from one that has
    /// been silent too long while others remain.
    pub(super) fn watch_connections(&mut self, now: Instant) {
        for index in 0..self.conns.len() {
            let Some(conn) = self.endpoint.connection(self.conns[index].id) else {
                continue;
            };
            let heard = conn.packets_received();
            let waiting = conn.send_queue_len() > 0;
            let rtt = conn.rtt().unwrap_or(RTT_BEFORE_SAMPLES);
            let c = &mut self.conns[index];
            if heard > c.heard {
                c.heard = heard;
                // Its answer may report losses of up to two RTTs before it.
                // The point never moves back (an RTT that grew would move
                // it back), so that what the store let go of stays out of
                // a failover's reach.
                c.reach_back = c.reach_back.max(before(now, 2 * rtt));
                c.unanswered_since = waiting.then_some(now);
                c.hedged = false;
            }
        }
        if self.alive() < 2 {
            return;
        }
        self.hedge(now);
        let dead: Vec<(ConnectionId, Instant)> = self
            .conns
            .iter()
            .filter(|c| !c.closing)
            .filter(|c| {
                c.unanswered_since.is_some_and(|since| {
                    now.saturating_duration_since(since) >= self.dead_after(c.id)
                })
            })
            .map(|c| (c.id, c.reach_back))
            .collect();
        for (id, reach_back) in dead {
            if self.alive() < 2 {
                break;
            }
            self.fail_over(now, id, reach_back);
        }
    }

    /// Resets dead connection `id` and resends, on the others, what it was
    /// given since `since`: two RTTs before it last answered (its last
    /// answer may have reported losses of that time; what was delivered is
    /// a duplicate the receiver drops).
    fn fail_over(&mut self, now: Instant, id: ConnectionId, since: Instant) {
        if let Some(conn) = self.endpoint.connection_mut(id) {
            conn.abort(now);
        }
        self.conns.retain(|c| c.id != id);
        self.arq_stats.dead_connections += 1;
        self.events.push_back(SessionEvent::ConnectionLost {
            port: id.local_port,
        });
        self.arq_stats.failover_resent += self.resend_given(now, id, since);
    }

    /// Lets go of the stored datagrams no repair can resend any more:
    /// those past their deadline (a request refuses them), and, with
    /// retransmission off, those out of a failover's reach, each
    /// connection's in the order it was given them: given to a connection
    /// that is gone or closing, or before its `reach_back`, and not
    /// waiting to be resent. Runs after every datagram or timeout the
    /// session handles, so that the store holds about two RTTs and a
    /// feedback interval of each connection's sending, not the whole
    /// stream up to its byte bound.
    pub(super) fn prune_store(&mut self, now: Instant) {
        self.store.prune(now);
        let conns = &self.conns;
        let resend = &self.resend;
        self.store.let_go_unreachable(
            |id| {
                conns
                    .iter()
                    .find(|c| c.id == id && !c.closing)
                    .map(|c| c.reach_back)
            },
            |seq| resend.contains(seq),
        );
    }
}

/// `at` less `span`, or the origin.
fn before(at: Instant, span: Duration) -> Instant {
    Instant::from_nanos(
        at.as_nanos()
            .saturating_sub(u64::try_from(span.as_nanos()).unwrap_or(u64::MAX)),
    )
}
