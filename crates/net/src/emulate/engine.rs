//! The emulator's event loop: one thread that owns both link directions,
//! takes stamped arrivals from the receiver threads, runs the links on the
//! real clock and sends what has crossed.
//!
//! Each turn: run both directions up to now; send every datagram whose
//! arrival time has come; publish the counters; then wait for the next
//! arrival or the next deadline (a transmission ending, a trace opportunity,
//! a datagram's arrival time), whichever is first. Waiting blocks on the
//! channel until `spin` before the deadline and then polls it, yielding the
//! processor, until the deadline: a blocked thread wakes some tens of
//! microseconds late (Linux's default timer slack alone is 50 µs), which at
//! 20 Mbit/s is a tenth of a packet time.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use fairstream_proto::time::Instant;

use crate::ecn::EcnSocket;

use super::clients::{Clients, UpstreamError};
use super::clock::Clock;
use super::direction::{Datagram, Direction};
use super::receive::{Arrival, Origin, ReceiverContext, CHANNEL_CAPACITY, RECEIVE_POLL};
use super::stats::EmulatorStats;

/// The longest the engine sleeps without looking at its stop flag.
const IDLE_POLL: Duration = RECEIVE_POLL;

/// Arrivals handled in one turn before the links run again, at most.
const BATCH: usize = 256;

/// How often the counters are published while running.
const PUBLISH_INTERVAL: Duration = Duration::from_millis(1);

/// How often idle clients are looked for (and ended receiver threads
/// joined): a client is forgotten at most this much (and one
/// [`IDLE_POLL`]) after its idle time.
const SWEEP_INTERVAL: Duration = Duration::from_millis(100);

/// Everything the loop owns.
pub(crate) struct Engine {
    pub(crate) clock: Clock,
    pub(crate) listen: Arc<EcnSocket>,
    pub(crate) forward: Direction,
    pub(crate) backward: Direction,
    pub(crate) clients: Clients,
    pub(crate) spin: Duration,
}

impl Engine {
    /// Runs until `stop` is set; `publish` is given the counters about every
    /// millisecond while there is traffic. Returns the final counters.
    pub(crate) fn run(
        mut self,
        stop: &AtomicBool,
        publish: &mut dyn FnMut(&EmulatorStats),
    ) -> io::Result<EmulatorStats> {
        let shutdown = Arc::new(AtomicBool::new(false));
        let (sender, receiver) = sync_channel(CHANNEL_CAPACITY);
        let receivers = ReceiverContext {
            clock: self.clock,
            sender,
            shutdown: Arc::clone(&shutdown),
        };
        let listener = receivers.spawn(Arc::clone(&self.listen), None, Arc::clone(&shutdown))?;
        let mut published_at: Option<Instant> = None;
        let mut swept_at = self.clock.now();
        while !stop.load(Ordering::Relaxed) {
            let now = self.clock.now();
            self.forward.advance(now);
            self.backward.advance(now);
            self.send_due(now);
            if now >= swept_at + SWEEP_INTERVAL {
                self.clients.sweep(now);
                swept_at = now;
            }
            if published_at.is_none_or(|at| now >= at + PUBLISH_INTERVAL) {
                publish(&self.stats());
                published_at = Some(now);
            }
            let deadline = match (self.forward.next_deadline(), self.backward.next_deadline()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if let Some(arrival) = self.wait(&receiver, deadline) {
                self.handle(arrival, &receivers);
                for arrival in receiver.try_iter().take(BATCH) {
                    self.handle(arrival, &receivers);
                }
            }
        }
        // Close the channel before joining, so that no receiver stays blocked
        // handing over a datagram.
        shutdown.store(true, Ordering::Relaxed);
        drop(receiver);
        drop(receivers);
        let stats = self.stats();
        publish(&stats);
        // The listener does not panic; if it did there is nothing to undo.
        let _ = listener.join();
        self.clients.close();
        Ok(stats)
    }

    /// The counters now.
    pub(crate) fn stats(&self) -> EmulatorStats {
        EmulatorStats {
            elapsed: Duration::from_nanos(self.clock.now().as_nanos()),
            forward: self.forward.stats(),
            backward: self.backward.stats(),
            clients: self.clients.len(),
            clients_evicted: self.clients.evicted(),
            clients_expired: self.clients.expired(),
            refused_datagrams: self.clients.refused(),
            upstream_threads: self.clients.threads(),
            upstream_threads_max: self.clients.threads_max(),
        }
    }

    fn handle(&mut self, arrival: Arrival, receivers: &ReceiverContext) {
        match arrival.origin {
            Origin::Client(client) => {
                match self.clients.arrived(client, arrival.at, receivers) {
                    Ok(true) => self.forward.offer(
                        arrival.at,
                        Datagram {
                            client,
                            payload: arrival.payload,
                            ecn: arrival.ecn,
                        },
                    ),
                    // Refused a place in the full table, or no upstream
                    // socket could be opened for it.
                    Ok(false) | Err(_) => {
                        self.forward.count_unroutable_arrival(arrival.payload.len());
                    }
                }
            }
            Origin::Upstream(client) => {
                self.clients.answered(client, arrival.at);
                self.backward.offer(
                    arrival.at,
                    Datagram {
                        client,
                        payload: arrival.payload,
                        ecn: arrival.ecn,
                    },
                );
            }
        }
    }

    /// Sends every datagram whose arrival time is at or before `now`.
    fn send_due(&mut self, now: Instant) {
        while let Some(delivery) = self.forward.pop_due(now) {
            let datagram = delivery.packet;
            match self
                .clients
                .send_upstream(datagram.client, &datagram.payload, datagram.ecn)
            {
                Ok(()) => {
                    let sent_at = self.clock.now();
                    self.forward
                        .count_sent(delivery.at, sent_at, datagram.payload.len());
                }
                Err(UpstreamError::Unknown) => self.forward.count_unroutable(),
                Err(UpstreamError::Io) => self.forward.count_send_error(),
            }
        }
        while let Some(delivery) = self.backward.pop_due(now) {
            let datagram = delivery.packet;
            match self
                .listen
                .send_to(&datagram.payload, datagram.client, datagram.ecn)
            {
                Ok(_) => {
                    let sent_at = self.clock.now();
                    self.backward
                        .count_sent(delivery.at, sent_at, datagram.payload.len());
                }
                Err(_) => self.backward.count_send_error(),
            }
        }
    }

    /// Waits for an arrival until `deadline` (at most [`IDLE_POLL`]):
    /// blocking until `spin` before it, then polling.
    fn wait(&self, receiver: &Receiver<Arrival>, deadline: Option<Instant>) -> Option<Arrival> {
        let now = self.clock.now();
        let left = match deadline {
            None => IDLE_POLL,
            Some(deadline) => deadline.saturating_duration_since(now),
        };
        if left > self.spin {
            // A timeout (or a closed channel) returns to the loop, which
            // looks at the stop flag and the deadline again.
            return receiver
                .recv_timeout((left - self.spin).min(IDLE_POLL))
                .ok();
        }
        // The last stretch before a deadline.
        loop {
            if let Ok(arrival) = receiver.try_recv() {
                return Some(arrival);
            }
            if deadline.is_none_or(|deadline| self.clock.now() >= deadline) {
                return None;
            }
            thread::yield_now();
        }
    }
}
