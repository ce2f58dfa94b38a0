//! Loss events from declared losses (RFC 5348 §5.2, with DCCP's
//! window-counter rule of RFC 4342 §10.2): one loss-interval history and
//! the bookkeeping that groups losses into its events. The receiver keeps
//! one for p, and with [`TfrcReceiverConfig::channel_loss_memory`](super::TfrcReceiverConfig::channel_loss_memory)
//! a second that leaves out the losses it takes for the channel's.

use std::time::Duration;

use super::{counter_distance, LossEventGrouping, WINDOW_COUNTER_LOSS_EVENT_DISTANCE};
use crate::cc::loss_history::{
    Cancellation, LossDetector, LossEventStart, LossInterval, LossIntervalHistory, LostRun,
};

/// A loss-interval history and its grouping state.
#[derive(Clone, Debug)]
pub(super) struct LossEvents {
    pub(super) history: LossIntervalHistory,
    /// RFC 4342 §10.2: the lowest sequence number above the open loss event's
    /// start whose window counter was more than 4 past the event's; a loss
    /// sent after it starts a new event even if the counter wrapped.
    closing_seq: Option<u64>,
}

impl LossEvents {
    pub(super) fn new(history: LossIntervalHistory) -> LossEvents {
        LossEvents {
            history,
            closing_seq: None,
        }
    }

    /// A packet that had been declared lost arrived after all: its loss is
    /// taken back (RFC 5348 §5.1); whether that removed a loss event.
    pub(super) fn cancel(&mut self, seq: u64, detector: &LossDetector, highest: u64) -> bool {
        let cancellation = self.history.cancel_loss(seq, detector, highest);
        if cancellation == Cancellation::EventRemoved {
            // The reopened event's start is long past: any new loss after
            // it is a new event (RFC 4342 §10.2 closed).
            self.closing_seq = self.history.open().map(LossInterval::start_seq);
            return true;
        }
        false
    }

    /// RFC 4342 §10.2 bookkeeping: a packet above the open loss event's start
    /// whose window counter is more than 4 past the event's closes it.
    pub(super) fn note_window_counter(&mut self, seq: u64, counter: Option<u8>) {
        let (Some(counter), Some(open)) = (counter, self.history.open()) else {
            return;
        };
        let Some(start_counter) = open.start_window_counter() else {
            return;
        };
        if seq > open.start_seq()
            && counter_distance(start_counter, counter) > WINDOW_COUNTER_LOSS_EVENT_DISTANCE
        {
            self.closing_seq = Some(self.closing_seq.map_or(seq, |s| s.min(seq)));
        }
    }

    /// Groups a newly declared run of losses into loss events (RFC 5348
    /// §5.2); returns whether a new loss event started. `synthetic` is the
    /// first loss interval (RFC 5348 §6.3.1), used if this is the first.
    pub(super) fn on_lost_run(
        &mut self,
        run: &LostRun,
        highest: u64,
        rtt: Duration,
        grouping: LossEventGrouping,
        synthetic: impl Fn() -> f64,
    ) -> bool {
        let mut next = run.first_seq;
        let mut new_events = 0;
        loop {
            let boundary = self.next_event_start(run, next, rtt, grouping);
            // A run spanning more than n + 1 round-trip times of interpolated
            // arrivals would start more loss events than the history holds;
            // past that bound the rest of the run joins the last event.
            let room = new_events <= self.history.n() + 1;
            match boundary {
                Some(start) if room => {
                    if start > next {
                        self.history
                            .add_losses_to_open_event(start - next, start - 1);
                    }
                    let event = LossEventStart {
                        seq: start,
                        time: run.nominal_arrival(start),
                        window_counter: run.before.window_counter,
                        lost_packets: 1,
                        last_lost_seq: start,
                    };
                    if self.history.is_empty() {
                        self.history.start_first_event(event, synthetic(), highest);
                    } else {
                        self.history.start_event(event, highest);
                    }
                    self.closing_seq = None;
                    new_events += 1;
                    if start >= run.last_seq {
                        break;
                    }
                    next = start + 1;
                }
                _ => {
                    self.history
                        .add_losses_to_open_event(run.last_seq - next + 1, run.last_seq);
                    break;
                }
            }
        }
        new_events > 0
    }

    /// The first packet of `run` from `from` on that starts a new loss event,
    /// if any.
    fn next_event_start(
        &self,
        run: &LostRun,
        from: u64,
        rtt: Duration,
        grouping: LossEventGrouping,
    ) -> Option<u64> {
        let Some(open) = self.history.open() else {
            return Some(from);
        };
        match (
            grouping,
            open.start_window_counter(),
            run.before.window_counter,
        ) {
            (LossEventGrouping::Auto, Some(event_counter), Some(loss_counter)) => {
                // RFC 4342 §10.2: a lost packet belongs to the current loss
                // event while its window counter (that of the last packet
                // received before it) is at most 4 past the event's, and no
                // packet sent in between has already been more than 4 past.
                let closed = self.closing_seq.is_some_and(|seq| seq < from);
                let distance = counter_distance(event_counter, loss_counter);
                (closed || distance > WINDOW_COUNTER_LOSS_EVENT_DISTANCE).then_some(from)
            }
            _ => {
                // RFC 5348 §5.2: "If T_old + R >= T_new, then S_new is part
                // of the existing loss event. Otherwise, S_new is the first
                // packet of a new loss event."
                run.first_seq_after(open.start_time() + rtt)
                    .map(|seq| seq.max(from))
            }
        }
    }
}
