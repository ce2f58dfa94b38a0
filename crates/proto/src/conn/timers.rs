//! The connection's timers: an enum and a table of deadlines, never callbacks.

use crate::time::Instant;

/// A connection timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// Retransmission of the handshake or close packet the state calls for:
    /// Request (REQUEST, RFC 4340 §8.1.1), Ack (PARTOPEN, §8.1.5), Close
    /// (CLOSING) or CloseReq (CLOSEREQ, §8.3).
    Retransmit,
    /// Giving up: the handshake (REQUEST, PARTOPEN) or the close (CLOSING,
    /// CLOSEREQ) took longer than configured.
    GiveUp,
    /// The sending CCID's timer (TFRC nofeedback timer, CCID 2 RTO).
    CcidSender,
    /// The sending CCID's pacing: the next packet may leave at this time.
    Pacing,
    /// The receiving CCID's feedback timer (TFRC feedback, CCID 2 delayed Ack).
    CcidReceiver,
    /// Retransmission of unconfirmed Change options (RFC 4340 §6.6.3).
    FeatureRetransmit,
    /// The end of TIMEWAIT (2·MSL, RFC 4340 §8.3).
    TimeWait,
    /// Until this time, Syncs in reply to invalid packets are suppressed
    /// (RFC 4340 §7.5.4 rate limit). Expiry needs no action, so it never
    /// asks for a wake-up.
    SyncRateLimit,
}

impl Timer {
    /// Every timer, in table order.
    pub const ALL: [Timer; 8] = [
        Timer::Retransmit,
        Timer::GiveUp,
        Timer::CcidSender,
        Timer::Pacing,
        Timer::CcidReceiver,
        Timer::FeatureRetransmit,
        Timer::TimeWait,
        Timer::SyncRateLimit,
    ];

    const fn index(self) -> usize {
        match self {
            Timer::Retransmit => 0,
            Timer::GiveUp => 1,
            Timer::CcidSender => 2,
            Timer::Pacing => 3,
            Timer::CcidReceiver => 4,
            Timer::FeatureRetransmit => 5,
            Timer::TimeWait => 6,
            Timer::SyncRateLimit => 7,
        }
    }

    /// Whether expiry needs a call to `handle_timeout`.
    const fn wakes(self) -> bool {
        !matches!(self, Timer::SyncRateLimit)
    }
}

/// One deadline per [`Timer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerTable {
    deadlines: [Option<Instant>; 8],
}

impl TimerTable {
    /// The deadline of `timer`, if set.
    pub fn get(&self, timer: Timer) -> Option<Instant> {
        self.deadlines.get(timer.index()).copied().flatten()
    }

    /// Sets (or with `None` stops) `timer`.
    pub fn set(&mut self, timer: Timer, deadline: Option<Instant>) {
        if let Some(slot) = self.deadlines.get_mut(timer.index()) {
            *slot = deadline;
        }
    }

    /// Stops `timer`.
    pub fn stop(&mut self, timer: Timer) {
        self.set(timer, None);
    }

    /// Stops every timer.
    pub fn stop_all(&mut self) {
        self.deadlines = [None; 8];
    }

    /// Whether `timer` is set and due at `now`.
    pub fn is_due(&self, timer: Timer, now: Instant) -> bool {
        self.get(timer).is_some_and(|at| at <= now)
    }

    /// The earliest deadline of a timer that needs a wake-up.
    pub fn next(&self) -> Option<Instant> {
        // One pass over the table, without a lookup a timer: the driver
        // asks on every wake-up, of every connection.
        let mut next: Option<Instant> = None;
        for (timer, deadline) in Timer::ALL.iter().zip(&self.deadlines) {
            if let Some(at) = *deadline {
                if timer.wakes() && next.is_none_or(|n| at < n) {
                    next = Some(at);
                }
            }
        }
        next
    }

    /// The timers due at `now` that need action, in table order.
    pub fn expired(&self, now: Instant) -> impl Iterator<Item = Timer> + '_ {
        Timer::ALL
            .into_iter()
            .filter(move |&t| t.wakes() && self.is_due(t, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_the_earliest_waking_deadline() {
        let mut table = TimerTable::default();
        assert_eq!(table.next(), None);
        table.set(Timer::SyncRateLimit, Some(Instant::from_millis(1)));
        assert_eq!(table.next(), None, "the Sync rate limit never wakes");
        table.set(Timer::TimeWait, Some(Instant::from_millis(30)));
        table.set(Timer::Retransmit, Some(Instant::from_millis(20)));
        assert_eq!(table.next(), Some(Instant::from_millis(20)));
        let due: Vec<_> = table.expired(Instant::from_millis(25)).collect();
        assert_eq!(due, vec![Timer::Retransmit]);
        table.stop(Timer::Retransmit);
        assert_eq!(table.next(), Some(Instant::from_millis(30)));
        table.stop_all();
        assert_eq!(table.next(), None);
    }
}
