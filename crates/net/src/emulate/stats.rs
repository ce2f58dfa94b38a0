//! What the emulator has done so far, per direction.

use std::time::Duration;

use fairstream_sim::link::LinkStats;

/// The counters of one direction of the emulated link. Every datagram
/// received is, at any moment, exactly one of: sent, dropped by the queue,
/// lost on the channel, dropped because the delay line was full, undeliverable
/// (its client was forgotten or the socket refused it), or still inside.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DirectionStats {
    /// Datagrams that arrived at this direction's input socket.
    pub received_packets: u64,
    /// Their payload bytes.
    pub received_bytes: u64,
    /// Datagrams handed to the output socket without error.
    pub sent_packets: u64,
    /// Their payload bytes.
    pub sent_bytes: u64,
    /// Datagrams the queue refused (full, or RED's early drops).
    pub queue_drops: u64,
    /// Datagrams lost on the channel by the loss model.
    pub channel_losses: u64,
    /// Datagrams dropped while the link was cut
    /// ([`DirectionConfig::outages`](super::DirectionConfig::outages)).
    pub outage_drops: u64,
    /// Datagrams dropped because the delay line already held
    /// [`DirectionConfig::max_in_flight_bytes`](super::DirectionConfig::max_in_flight_bytes).
    pub overflow_drops: u64,
    /// Datagrams that had nowhere to go: their client was refused a place
    /// in the full client table (forward only; also counted in
    /// [`EmulatorStats::refused_datagrams`]), was forgotten while they
    /// crossed, or no upstream socket could be opened for it.
    pub unroutable: u64,
    /// Datagrams the operating system refused to send.
    pub send_errors: u64,
    /// Datagrams waiting in the queue now (not counting the one being
    /// serialised).
    pub queue_len_packets: usize,
    /// Bytes waiting in the queue now.
    pub queue_len_bytes: u64,
    /// Datagrams that finished crossing and wait out the propagation delay.
    pub in_flight_packets: usize,
    /// The largest lateness of a send: how long after the simulated arrival
    /// time the datagram actually left (timer and scheduling precision).
    pub lateness_max: Duration,
    /// The sum of the lateness of every send, for the mean.
    pub lateness_total: Duration,
    /// The simulator link's own counters; `None` when this direction has no
    /// capacity limit (it is then a lossy delay line).
    pub link: Option<LinkStats>,
}

impl DirectionStats {
    /// The mean lateness of a send (zero before the first).
    pub fn lateness_mean(&self) -> Duration {
        if self.sent_packets == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(self.lateness_total.as_secs_f64() / self.sent_packets as f64)
        }
    }
}

/// What the emulator has done since it was bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EmulatorStats {
    /// Time since the emulator was bound (its clock's reading).
    pub elapsed: Duration,
    /// Client → upstream.
    pub forward: DirectionStats,
    /// Upstream → client.
    pub backward: DirectionStats,
    /// Client addresses currently remembered.
    pub clients: usize,
    /// Clients never answered from upstream, displaced to make room for a
    /// new one ([`EmulatorConfig::stranger_grace`](super::EmulatorConfig::stranger_grace)).
    pub clients_evicted: u64,
    /// Clients forgotten because nothing crossed for them, either way, for
    /// [`EmulatorConfig::client_idle`](super::EmulatorConfig::client_idle).
    pub clients_expired: u64,
    /// Datagrams from new clients dropped because the table was full of
    /// clients that may not be displaced (answered ones, and strangers
    /// within their grace).
    pub refused_datagrams: u64,
    /// Threads receiving from upstream now: one per client remembered, and
    /// those of forgotten clients not yet ended. At most twice
    /// [`EmulatorConfig::max_clients`](super::EmulatorConfig::max_clients).
    pub upstream_threads: usize,
    /// The most of them at once.
    pub upstream_threads_max: usize,
}
