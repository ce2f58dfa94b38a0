//! The emulator's client table as a policy, without sockets or threads:
//! which client addresses keep a place, which one a newcomer may displace,
//! and when one is forgotten for idleness. Time is a parameter (STYLE.md
//! rule 1), so the policy is tested with explicit times;
//! [`super::clients`] attaches a socket and a thread to each place.
//!
//! The model is a NAT's connection tracking under a flood of new flows:
//! Linux's conntrack never early-drops a flow that has seen a reply, and
//! lets the unanswered ones go first. Here:
//!
//! - A client is **answered** once a datagram has come back from upstream
//!   for it: datagrams have then crossed both ways. An answered client is
//!   never displaced by a newcomer; it leaves the table only when idle.
//! - A client is **idle** when nothing has crossed for it, either way, for
//!   [`TablePolicy::idle`]. An idle client is forgotten (expired), answered
//!   or not.
//! - A **stranger** (a client nothing has come back for yet) may be
//!   displaced by a newcomer once it has held its place for
//!   [`TablePolicy::stranger_grace`], long enough for an answer to come
//!   back; the one heard from least recently goes first.
//! - Displacements are spread out: at most one every
//!   `stranger_grace / capacity`, so that each place changes hands at most
//!   once per grace period and the sockets and threads a flood makes the
//!   caller open come one at a time, not in bursts.
//! - A newcomer that finds the table full, with no client idle and no
//!   stranger it may displace now, is **refused**: the caller drops its
//!   datagram.
//!
//! So a flood from many source ports (issue 13) takes only the places of
//! strangers, each for at least the grace period, and never the place of a
//! client that is being answered. A refusal costs a hash look-up and a
//! comparison: after a full scan finds nothing to free, the table remembers
//! when the first place could free and refuses without looking until then.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use fairstream_proto::time::Instant;

/// How the table chooses (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TablePolicy {
    /// The most clients remembered at once (at least 1).
    pub(crate) capacity: usize,
    /// A client with nothing crossing for it, either way, for this long is
    /// forgotten.
    pub(crate) idle: Duration,
    /// How long a stranger keeps its place against newcomers.
    pub(crate) stranger_grace: Duration,
}

impl TablePolicy {
    /// The shortest time between two displacements.
    fn displacement_interval(&self) -> Duration {
        let capacity = u32::try_from(self.capacity).unwrap_or(u32::MAX).max(1);
        self.stranger_grace / capacity
    }
}

/// One remembered client and its resource.
#[derive(Debug)]
struct Entry<R> {
    resource: R,
    /// When it was given its place.
    admitted: Instant,
    /// When a datagram last came from it.
    last_heard: Instant,
    /// When a datagram last crossed for it, either way.
    last_active: Instant,
    /// Whether a datagram has come back from upstream for it.
    answered: bool,
}

impl<R> Entry<R> {
    fn idle_at(&self, now: Instant, idle: Duration) -> bool {
        now.saturating_duration_since(self.last_active) >= idle
    }

    fn displaceable_at(&self, now: Instant, grace: Duration) -> bool {
        !self.answered && now.saturating_duration_since(self.admitted) >= grace
    }

    /// When this client becomes idle.
    fn idle_from(&self, policy: &TablePolicy) -> Instant {
        self.last_active + policy.idle
    }

    /// When this client's grace ends, if it is a stranger.
    fn displaceable_from(&self, policy: &TablePolicy) -> Option<Instant> {
        (!self.answered).then(|| self.admitted + policy.stranger_grace)
    }
}

/// The bounded table of clients, each with a resource `R`.
#[derive(Debug)]
pub(crate) struct ClientTable<R> {
    policy: TablePolicy,
    entries: HashMap<SocketAddr, Entry<R>>,
    /// Set when a newcomer was refused: no place can be freed before this
    /// time. It stays a lower bound while clients are only heard or
    /// answered (both only delay a departure), and is cleared when one
    /// leaves.
    full_until: Option<Instant>,
    /// No stranger is displaced before this time.
    next_displacement: Instant,
    expired: u64,
    displaced: u64,
}

impl<R> ClientTable<R> {
    /// An empty table.
    pub(crate) fn new(policy: TablePolicy) -> ClientTable<R> {
        ClientTable {
            policy: TablePolicy {
                capacity: policy.capacity.max(1),
                ..policy
            },
            entries: HashMap::new(),
            full_until: None,
            next_displacement: Instant::ZERO,
            expired: 0,
            displaced: 0,
        }
    }

    /// The policy in force.
    pub(crate) fn policy(&self) -> TablePolicy {
        self.policy
    }

    /// Notes a datagram from `client` at `now`; whether it has a place.
    pub(crate) fn heard(&mut self, client: SocketAddr, now: Instant) -> bool {
        match self.entries.get_mut(&client) {
            Some(entry) => {
                entry.last_heard = entry.last_heard.max(now);
                entry.last_active = entry.last_active.max(now);
                true
            }
            None => false,
        }
    }

    /// Notes a datagram from upstream for `client` at `now`: the client is
    /// answered from now on.
    pub(crate) fn answered(&mut self, client: SocketAddr, now: Instant) {
        if let Some(entry) = self.entries.get_mut(&client) {
            entry.answered = true;
            entry.last_active = entry.last_active.max(now);
        }
    }

    /// Whether a newcomer arriving at `now` can have a place: there is a
    /// free one, or one is freed by forgetting the idle clients or, failing
    /// that, by displacing the stranger past its grace heard from least
    /// recently (if the last displacement was long enough ago). The
    /// resources of the clients forgotten go to `retire`.
    pub(crate) fn make_room(&mut self, now: Instant, retire: &mut impl FnMut(R)) -> bool {
        if self.entries.len() < self.policy.capacity {
            return true;
        }
        if self.full_until.is_some_and(|until| now < until) {
            return false;
        }
        if self.expire(now, retire) > 0 {
            return true;
        }
        if now >= self.next_displacement {
            let stranger = self
                .entries
                .iter()
                .filter(|(_, entry)| entry.displaceable_at(now, self.policy.stranger_grace))
                .min_by_key(|(address, entry)| (entry.last_heard, entry.admitted, **address))
                .map(|(address, _)| *address);
            if let Some(entry) = stranger.and_then(|address| self.entries.remove(&address)) {
                retire(entry.resource);
                self.displaced += 1;
                self.full_until = None;
                self.next_displacement = now + self.policy.displacement_interval();
                return true;
            }
        }
        let policy = self.policy;
        let idle = self.entries.values().map(|e| e.idle_from(&policy)).min();
        let displaceable = self
            .entries
            .values()
            .filter_map(|e| e.displaceable_from(&policy))
            .min()
            .map(|at| at.max(self.next_displacement));
        self.full_until = match (idle, displaceable) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        false
    }

    /// Gives `client` a place from `now` with `resource`. The caller has
    /// made room ([`ClientTable::make_room`]); a client already known keeps
    /// its place and `resource` is handed back.
    pub(crate) fn insert(&mut self, client: SocketAddr, resource: R, now: Instant) -> Option<R> {
        if self.entries.contains_key(&client) {
            return Some(resource);
        }
        self.entries.insert(
            client,
            Entry {
                resource,
                admitted: now,
                last_heard: now,
                last_active: now,
                answered: false,
            },
        );
        None
    }

    /// Forgets every client idle at `now`, handing its resource to
    /// `retire`; how many.
    pub(crate) fn expire(&mut self, now: Instant, retire: &mut impl FnMut(R)) -> usize {
        let idle = self.policy.idle;
        let expired: Vec<SocketAddr> = self
            .entries
            .iter()
            .filter(|(_, entry)| entry.idle_at(now, idle))
            .map(|(address, _)| *address)
            .collect();
        for address in &expired {
            if let Some(entry) = self.entries.remove(address) {
                retire(entry.resource);
            }
        }
        if !expired.is_empty() {
            self.expired += expired.len() as u64;
            self.full_until = None;
        }
        expired.len()
    }

    /// The resource of `client`, if it has a place.
    pub(crate) fn get(&self, client: SocketAddr) -> Option<&R> {
        self.entries.get(&client).map(|entry| &entry.resource)
    }

    /// Whether `client` has a place and has been answered.
    #[cfg(test)]
    pub(crate) fn is_answered(&self, client: SocketAddr) -> bool {
        self.entries
            .get(&client)
            .is_some_and(|entry| entry.answered)
    }

    /// Clients remembered now.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Clients forgotten so far for idleness.
    pub(crate) fn expired(&self) -> u64 {
        self.expired
    }

    /// Strangers displaced so far by newcomers.
    pub(crate) fn displaced(&self) -> u64 {
        self.displaced
    }

    /// Every resource still in the table, which is emptied.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = R> + '_ {
        self.entries.drain().map(|(_, entry)| entry.resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: TablePolicy = TablePolicy {
        capacity: 3,
        idle: Duration::from_secs(60),
        stranger_grace: Duration::from_secs(1),
    };

    fn port(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn at(millis: u64) -> Instant {
        Instant::from_millis(millis)
    }

    /// A datagram from `client` at `now`, the way the emulator handles one:
    /// known, admitted (with the port as its resource) or refused. Returns
    /// whether it has a place and the resources retired to make room.
    fn arrive(table: &mut ClientTable<u16>, client: u16, now: Instant) -> (bool, Vec<u16>) {
        if table.heard(port(client), now) {
            return (true, Vec::new());
        }
        let mut retired = Vec::new();
        if !table.make_room(now, &mut |resource| retired.push(resource)) {
            return (false, retired);
        }
        assert!(table.insert(port(client), client, now).is_none());
        (true, retired)
    }

    #[test]
    fn an_answered_client_is_never_displaced_by_newcomers() {
        let mut table = ClientTable::new(POLICY);
        assert_eq!(arrive(&mut table, 1, at(0)), (true, vec![]));
        table.answered(port(1), at(10));
        // Two strangers fill the table; then newcomers from ever new ports,
        // for 50 s, every 10 ms (5,000 of them).
        assert!(arrive(&mut table, 2, at(20)).0);
        assert!(arrive(&mut table, 3, at(30)).0);
        let mut admitted = 0;
        for step in 0..5000u64 {
            let now = at(100 + 10 * step);
            let (placed, retired) = arrive(&mut table, 1000 + step as u16, now);
            assert!(!retired.contains(&1), "the answered client went at {now}");
            admitted += usize::from(placed);
            // The real client keeps talking, once a second.
            if step % 100 == 0 {
                assert!(table.heard(port(1), now));
                table.answered(port(1), now);
            }
        }
        assert!(table.is_answered(port(1)));
        // Each stranger's place changed hands at most once per grace
        // period: two places, 50 s, 1 s of grace.
        assert!(admitted <= 2 * 51, "{admitted} newcomers admitted");
        assert_eq!(table.displaced(), admitted as u64);
        assert_eq!(table.len(), 3);
    }

    #[test]
    fn a_table_of_answered_clients_refuses_newcomers_until_one_is_idle() {
        let mut table = ClientTable::new(POLICY);
        for client in 1..=3 {
            assert!(arrive(&mut table, client, at(0)).0);
            table.answered(port(client), at(5));
        }
        // Clients 1 and 2 keep talking until 30 s; client 3 falls silent.
        for second in 1..=30 {
            table.heard(port(1), at(second * 1000));
            table.answered(port(2), at(second * 1000));
        }
        assert_eq!(arrive(&mut table, 4, at(30_000)), (false, vec![]));
        assert_eq!(arrive(&mut table, 4, at(60_004)), (false, vec![]));
        // 60 s after client 3 was last answered (at 5 ms) it is idle; its
        // place goes to the newcomer.
        assert_eq!(arrive(&mut table, 4, at(60_005)), (true, vec![3]));
        assert_eq!((table.expired(), table.displaced()), (1, 0));
        assert!(table.get(port(3)).is_none());
        assert_eq!(table.get(port(4)), Some(&4));
    }

    #[test]
    fn strangers_past_their_grace_make_room_least_recently_heard_first() {
        let mut table = ClientTable::new(POLICY);
        assert!(arrive(&mut table, 1, at(0)).0);
        assert!(arrive(&mut table, 2, at(100)).0);
        assert!(arrive(&mut table, 3, at(200)).0);
        table.answered(port(2), at(300));
        // Within the grace of both strangers: refused.
        assert_eq!(arrive(&mut table, 4, at(900)), (false, vec![]));
        // Stranger 1 is heard again; at 1.25 s both strangers are past
        // their grace, and 3 is the one heard from least recently.
        assert!(table.heard(port(1), at(1_100)));
        assert_eq!(arrive(&mut table, 4, at(1_250)), (true, vec![3]));
        // Then 1, a third of the grace later (capacity 3); the answered
        // client 2 never.
        assert_eq!(arrive(&mut table, 5, at(1_582)), (false, vec![]));
        assert_eq!(arrive(&mut table, 5, at(1_584)), (true, vec![1]));
        // Newcomers 4 and 5 have their own grace now.
        assert_eq!(arrive(&mut table, 6, at(1_700)), (false, vec![]));
        assert_eq!(table.displaced(), 2);
        assert!(table.is_answered(port(2)));
    }

    #[test]
    fn a_stranger_answered_within_its_grace_keeps_its_place() {
        let mut table = ClientTable::new(POLICY);
        for client in 1..=3 {
            assert!(arrive(&mut table, client, at(0)).0);
        }
        // The answer to stranger 2 comes 40 ms after its first datagram.
        table.answered(port(2), at(40));
        assert_eq!(arrive(&mut table, 4, at(5_000)), (true, vec![1]));
        assert_eq!(arrive(&mut table, 5, at(5_400)), (true, vec![3]));
        assert_eq!(arrive(&mut table, 6, at(10_000)), (true, vec![4]));
        assert!(table.get(port(2)).is_some());
    }

    #[test]
    fn displacements_are_spread_over_the_grace_period() {
        let mut table = ClientTable::new(TablePolicy {
            capacity: 4,
            ..POLICY
        });
        for client in 1..=4 {
            assert!(arrive(&mut table, client, at(0)).0);
        }
        // Every stranger is past its grace from 1 s; a newcomer every
        // millisecond takes a place at most every 250 ms (1 s / 4).
        let admitted: Vec<u64> = (1_000..3_000u64)
            .filter(|&millis| arrive(&mut table, millis as u16, at(millis)).0)
            .collect();
        assert_eq!(
            admitted,
            [1_000, 1_250, 1_500, 1_750, 2_000, 2_250, 2_500, 2_750]
        );
        assert_eq!(table.displaced(), 8);
    }

    #[test]
    fn idle_clients_are_forgotten_without_pressure() {
        let mut table = ClientTable::new(POLICY);
        assert!(arrive(&mut table, 1, at(0)).0);
        assert!(arrive(&mut table, 2, at(0)).0);
        table.answered(port(2), at(30_000));
        let mut retired = Vec::new();
        assert_eq!(table.expire(at(59_999), &mut |r| retired.push(r)), 0);
        // Client 1 was last heard at 0; client 2 last answered at 30 s.
        assert_eq!(table.expire(at(60_000), &mut |r| retired.push(r)), 1);
        assert_eq!(retired, [1]);
        assert_eq!(table.expire(at(90_000), &mut |r| retired.push(r)), 1);
        assert_eq!(retired, [1, 2]);
        assert_eq!((table.len(), table.expired()), (0, 2));
        // A forgotten client that comes back is a newcomer again.
        assert_eq!(arrive(&mut table, 1, at(90_001)), (true, vec![]));
        assert!(!table.is_answered(port(1)));
    }

    #[test]
    fn a_refusal_is_remembered_until_a_place_could_free() {
        let mut table = ClientTable::new(POLICY);
        for client in 1..=3 {
            assert!(arrive(&mut table, client, at(0)).0);
        }
        table.answered(port(1), at(0));
        table.answered(port(2), at(0));
        // Stranger 3's grace ends at 1 s: refused until then, admitted then,
        // however late the arrivals come and whatever happens meanwhile.
        assert!(!arrive(&mut table, 4, at(10)).0);
        assert_eq!(table.full_until, Some(at(1_000)));
        assert!(table.heard(port(3), at(500)));
        assert!(!arrive(&mut table, 4, at(999)).0);
        assert_eq!(arrive(&mut table, 4, at(1_000)), (true, vec![3]));
        assert_eq!(table.full_until, None);
    }

    #[test]
    fn arrivals_out_of_order_never_move_a_client_back_in_time() {
        let mut table = ClientTable::new(POLICY);
        assert!(arrive(&mut table, 1, at(1_000)).0);
        // Stamped earlier by another thread, handled later.
        assert!(table.heard(port(1), at(500)));
        table.answered(port(1), at(400));
        let mut retired = Vec::new();
        assert_eq!(table.expire(at(60_999), &mut |r| retired.push(r)), 0);
        assert_eq!(table.expire(at(61_000), &mut |r| retired.push(r)), 1);
    }

    #[test]
    fn a_table_of_one_holds_its_answered_client() {
        let mut table = ClientTable::new(TablePolicy {
            capacity: 0,
            ..POLICY
        });
        assert_eq!(table.policy().capacity, 1);
        assert!(arrive(&mut table, 1, at(0)).0);
        table.answered(port(1), at(1));
        assert!(!arrive(&mut table, 2, at(30_000)).0);
        assert_eq!(arrive(&mut table, 2, at(60_001)), (true, vec![1]));
    }
}
