//! A model of a player at the receiver: it starts once `prebuffer` of
//! media has arrived, plays in real time, stalls when it reaches the end
//! of what arrived and starts again once `prebuffer` is buffered anew.
//! It gives the buffer level, the start-up delay and the stalls a viewer
//! would have seen (the frames written to the output are not delayed by
//! it).

use std::time::Duration;

use fairstream_proto::time::Instant;

/// The player's state and counters.
#[derive(Clone, Debug)]
pub(super) struct Player {
    prebuffer: f64,
    first_arrival: Option<Instant>,
    /// Media time (s) up to which frames have arrived.
    arrived_until: f64,
    /// While playing: the wall time and the media position at the start.
    playing: Option<(Instant, f64)>,
    /// Where playback stands when it is not playing.
    paused_at: f64,
    stall_started: Option<Instant>,
    /// Start-up delay, seconds, once playback started.
    pub(super) startup_delay_s: Option<f64>,
    /// Stalls after playback started.
    pub(super) stalls: u64,
    /// Time spent stalled.
    pub(super) stall_time: Duration,
    /// The longest stall.
    pub(super) stall_max: Duration,
}

impl Player {
    /// A player that buffers `prebuffer` before playing.
    pub(super) fn new(prebuffer: Duration) -> Player {
        Player {
            prebuffer: prebuffer.as_secs_f64(),
            first_arrival: None,
            arrived_until: 0.0,
            playing: None,
            paused_at: 0.0,
            stall_started: None,
            startup_delay_s: None,
            stalls: 0,
            stall_time: Duration::ZERO,
            stall_max: Duration::ZERO,
        }
    }

    /// A frame covering media time up to `until_s` arrived at `now`.
    pub(super) fn on_frame(&mut self, now: Instant, until_s: f64) {
        self.first_arrival.get_or_insert(now);
        self.arrived_until = self.arrived_until.max(until_s);
        self.tick(now, false);
    }

    /// The media position at `now`.
    fn position(&self, now: Instant) -> f64 {
        match self.playing {
            Some((wall, media)) => media + (now - wall).as_secs_f64(),
            None => self.paused_at,
        }
    }

    /// Advances the model to `now`; `ended`: nothing more will arrive.
    pub(super) fn tick(&mut self, now: Instant, ended: bool) {
        if let Some((wall, media)) = self.playing {
            if self.position(now) > self.arrived_until && !ended {
                // Ran dry when the position reached the end of the media.
                // Timestamps come from the peer: no value may panic here.
                let ahead = Duration::try_from_secs_f64((self.arrived_until - media).max(0.0))
                    .unwrap_or(Duration::MAX);
                let dry = wall + ahead;
                self.playing = None;
                self.paused_at = self.arrived_until;
                self.stalls += 1;
                self.stall_started = Some(dry);
            }
        }
        if ended && self.playing.is_none() && self.arrived_until <= self.paused_at {
            // Ran dry at the end of what arrived and nothing came after: the
            // end of the stream, not a stall.
            if self.stall_started.take().is_some() {
                self.stalls = self.stalls.saturating_sub(1);
            }
        }
        if self.playing.is_none() && self.first_arrival.is_some() {
            let buffered = self.arrived_until - self.paused_at;
            if buffered >= self.prebuffer || (ended && buffered > 0.0) {
                self.playing = Some((now, self.paused_at));
                if let Some(first) = self
                    .first_arrival
                    .filter(|_| self.startup_delay_s.is_none())
                {
                    self.startup_delay_s = Some((now - first).as_secs_f64());
                }
                if let Some(since) = self.stall_started.take() {
                    self.stall_time += now - since;
                    self.stall_max = self.stall_max.max(now - since);
                }
            }
        }
    }

    /// Seconds of media buffered ahead of the position at `now`.
    pub(super) fn buffer_s(&self, now: Instant) -> f64 {
        (self.arrived_until - self.position(now)).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_dry_at_the_end_of_the_stream_is_no_stall() {
        let mut player = Player::new(Duration::from_millis(200));
        let t = |ms: u64| Instant::from_millis(ms);
        for i in 0..25u64 {
            player.on_frame(t(40 * i), 0.04 * (i + 1) as f64);
        }
        // The last frame played out before the receiver knew the stream
        // had ended.
        player.tick(t(3000), false);
        assert_eq!(player.stalls, 1);
        player.tick(t(3500), true);
        assert_eq!(player.stalls, 0);
        assert_eq!(player.stall_time, Duration::ZERO);
    }

    #[test]
    fn starts_after_the_prebuffer_and_counts_a_stall() {
        let mut player = Player::new(Duration::from_millis(500));
        let t = |ms: u64| Instant::from_millis(ms);
        // 40 ms frames arriving every 40 ms from t = 100 ms.
        for i in 0..20u64 {
            player.on_frame(t(100 + 40 * i), 0.04 * (i + 1) as f64);
        }
        let startup = player.startup_delay_s.unwrap();
        assert!((startup - 0.44).abs() < 0.05, "{startup}");
        // Nothing for two seconds: the buffer runs dry once.
        player.tick(t(3000), false);
        assert_eq!(player.stalls, 1);
        assert!(player.buffer_s(t(3000)) == 0.0);
        // Frames again: playback resumes after another prebuffer.
        for i in 20..40u64 {
            player.on_frame(t(3000 + 10 * (i - 20)), 0.04 * (i + 1) as f64);
        }
        assert!(player.stall_time > Duration::from_secs(1));
        assert_eq!(player.stall_max, player.stall_time);
    }
}
