//! The client side of paper 004 (§2.1, §2.4): congestion detection from the
//! playout buffer (eq. 1), η (eq. 2) and the feedback schedule (eq. 6).
//! The driver contract is in the [parent module](super).

use std::time::Duration;

use crate::time::Instant;
use crate::units::Rate;

use super::equations::{eta, feedback_interval, frame_bits, Ewma, MeanFrameBits};
use super::playout::{FrameArrival, Playout, Step};
use super::{BufferConfig, BufferConfigError, BufferFeedback, FrameSizes, Share};

/// What the receiver is told of an arriving frame, or part of one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceivedFrame {
    /// The frame's number in the stream from 0; it is due `index` frame
    /// intervals after the first frame played (while playback runs without
    /// an underrun).
    pub index: u64,
    /// The bits of each layer that arrived in this part.
    pub received: FrameSizes,
    /// The frame's full sizes as encoded, when the driver knows them (from
    /// the trace, or carried in the packet); the receiver's B_av_size
    /// averages them. Taken from the frame's first part only.
    pub full: Option<FrameSizes>,
}

/// The receiver (see the [parent module](super)).
#[derive(Clone, Debug)]
pub struct BufferReceiver {
    config: BufferConfig,
    playout: Playout,
    last_now: Instant,
    /// B_av_obs.
    average: Ewma,
    /// The next measurement round; `None` before playback starts.
    next_sample: Option<Instant>,
    /// Full frame sizes the driver gave, for B_av_size.
    full_sizes: MeanFrameBits,
    /// Bits of the frames that left the buffer, for B_av_size when no full
    /// size is known.
    played_sizes: MeanFrameBits,
    last_loss: Option<Instant>,
    lost_packets: u64,
    /// The occupancy is at or below eq. 1's threshold now.
    congested_now: bool,
    /// It was at some time since the previous feedback.
    congested_since_feedback: bool,
    /// The last feedback reported congestion.
    reported_congested: bool,
    expedite_at: Option<Instant>,
    feedback_deadline: Option<Instant>,
    /// The current T_fb_k (also how long a loss counts as observed).
    interval: Duration,
    feedbacks_sent: u64,
    bits_since_feedback: u128,
    rate_since: Option<Instant>,
    late_frames: u64,
    refused_frames: u64,
}

impl BufferReceiver {
    /// A receiver with an empty buffer, or the first value `config` has out
    /// of range.
    pub fn new(config: BufferConfig) -> Result<BufferReceiver, BufferConfigError> {
        config.validate()?;
        Ok(BufferReceiver {
            playout: Playout::new(config.frame_interval, config.preroll_frames()),
            last_now: Instant::ZERO,
            average: Ewma::new(config.occupancy_weight),
            next_sample: None,
            full_sizes: MeanFrameBits::default(),
            played_sizes: MeanFrameBits::default(),
            last_loss: None,
            lost_packets: 0,
            congested_now: false,
            congested_since_feedback: false,
            reported_congested: false,
            expedite_at: None,
            feedback_deadline: None,
            interval: config.max_feedback_interval(),
            feedbacks_sent: 0,
            bits_since_feedback: 0,
            rate_since: None,
            late_frames: 0,
            refused_frames: 0,
            config,
        })
    }

    // --- getters ---

    /// The configuration.
    pub fn config(&self) -> &BufferConfig {
        &self.config
    }

    /// The media held, in time (as of the last call).
    pub fn occupancy(&self) -> Duration {
        self.playout.occupancy()
    }

    /// How long playback would last with nothing more arriving (as of the
    /// last call): until the end of the newest frame held, lost frames
    /// before it included. The deficit is T_s minus this.
    pub fn span(&self) -> Duration {
        self.playout.span(self.last_now)
    }

    /// The media held, in bits (as of the last call).
    pub fn occupancy_bits(&self) -> u128 {
        self.playout.occupancy_bits()
    }

    /// B_av_obs, the weighted average of the occupancy in bits; `None`
    /// before playback starts.
    pub fn average_occupancy_bits(&self) -> Option<f64> {
        self.average.value()
    }

    /// B_av_size as the receiver knows it: from the full sizes given, else
    /// from the frames played, else from the frames held; `None` before any.
    pub fn full_buffer_bits(&self) -> Option<f64> {
        let frames = self.config.frames_in_preroll();
        self.full_sizes
            .buffer_bits(frames)
            .or_else(|| self.played_sizes.buffer_bits(frames))
            .or_else(|| {
                let held = self.playout.held_frames();
                (held > 0).then(|| self.playout.occupancy_bits() as f64 / held as f64 * frames)
            })
    }

    /// Paper 004 eq. 2: η = B_av_obs / B_av_size in [0, 1]; 1 before
    /// playback starts.
    pub fn eta(&self) -> Share {
        match (self.average.value(), self.full_buffer_bits()) {
            (Some(average), Some(full)) => eta(average, full),
            _ => Share::ONE,
        }
    }

    /// Losses count as observed at `now`: one was reported within the
    /// current feedback interval T_fb_k.
    pub fn losses_observed(&self, now: Instant) -> bool {
        self.last_loss
            .is_some_and(|loss| loss <= now && now - loss <= self.interval)
    }

    /// Eq. 1's threshold as of the last call: T_loss while losses are
    /// observed, T_c otherwise.
    pub fn detection_threshold(&self) -> Duration {
        self.config
            .detection_threshold(self.losses_observed(self.last_now))
    }

    /// The occupancy is at or below eq. 1's threshold (as of the last call;
    /// never before playback first starts).
    pub fn is_congested(&self) -> bool {
        self.congested_now
    }

    /// Playback runs (not pre-rolling).
    pub fn is_playing(&self) -> bool {
        self.playout.playing()
    }

    /// Underruns: times a frame was due and the buffer held no decodable
    /// frame.
    pub fn underruns(&self) -> u64 {
        self.playout.underruns()
    }

    /// Frames that were due without their whole base layer (not shown).
    pub fn undecodable_frames(&self) -> u64 {
        self.playout.undecodable_frames()
    }

    /// Frames held now, decodable or not (at most
    /// [`MAX_HELD_FRAMES`](super::MAX_HELD_FRAMES)).
    pub fn held_frames(&self) -> usize {
        self.playout.held_frames()
    }

    /// Frame arrivals that came after the frame was due.
    pub fn late_frames(&self) -> u64 {
        self.late_frames
    }

    /// Frame arrivals refused as out of range.
    pub fn refused_frames(&self) -> u64 {
        self.refused_frames
    }

    /// Packets the driver reported lost.
    pub fn lost_packets(&self) -> u64 {
        self.lost_packets
    }

    /// The current feedback interval T_fb_k (eq. 6); T_fb before the first
    /// feedback.
    pub fn feedback_interval(&self) -> Duration {
        self.interval
    }

    /// When [`poll_feedback`](Self::poll_feedback) should next be called:
    /// the feedback deadline, or earlier the time at which the buffer would
    /// fall to eq. 1's threshold if nothing more arrived (with
    /// [`BufferConfig::feedback_on_congestion`]). `None` before playback
    /// starts: no feedback is due until then.
    pub fn next_timeout(&self) -> Option<Instant> {
        if !self.playout.started() {
            return None;
        }
        let mut next = match (self.expedite_at, self.feedback_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if self.config.feedback_on_congestion && !self.congested_now && !self.reported_congested {
            let fi = self.config.frame_interval.as_nanos().max(1);
            let frames = self.detection_threshold().as_nanos() / fi;
            let frames = u64::try_from(frames).unwrap_or(u64::MAX);
            if let Some(at) = self.playout.falls_to(frames) {
                next = Some(next.map_or(at, |n| n.min(at)));
            }
        }
        next
    }

    // --- inputs ---

    /// A frame, or part of one, arrived at `now`.
    pub fn on_frame(&mut self, now: Instant, frame: &ReceivedFrame) -> FrameArrival {
        let now = self.advance(now);
        let bits = frame_bits(frame.received);
        // The receive rate counts what the network delivered, late or not.
        self.bits_since_feedback = self.bits_since_feedback.saturating_add(bits);
        self.rate_since.get_or_insert(now);
        let was_started = self.playout.started();
        let base_bits = u128::from(frame.received.base_bits);
        let base_needed = frame.full.map(|full| u128::from(full.base_bits));
        let (arrival, first_part) =
            self.playout
                .insert(now, frame.index, (bits, base_bits), base_needed);
        match arrival {
            FrameArrival::Buffered => {
                if let (true, Some(full)) = (first_part, frame.full) {
                    self.full_sizes.add(frame_bits(full));
                }
            }
            FrameArrival::Late => self.late_frames = self.late_frames.saturating_add(1),
            FrameArrival::OutOfRange => {
                self.refused_frames = self.refused_frames.saturating_add(1);
            }
        }
        if !was_started && self.playout.started() {
            // The measurement rounds and the feedback start with playback;
            // the first feedback tells the sender that it has started.
            self.next_sample = Some(now);
            self.sample_until(now, true);
            self.expedite_at = Some(now);
        }
        self.observe(now);
        arrival
    }

    /// The driver's loss detector declared `lost_packets` packets of the
    /// stream lost at `now`: losses count as observed for the next T_fb_k
    /// (eq. 1's T_loss applies).
    pub fn on_loss(&mut self, now: Instant, lost_packets: u64) {
        let now = self.advance(now);
        self.last_loss = Some(now);
        self.lost_packets = self.lost_packets.saturating_add(lost_packets);
        self.observe(now);
    }

    // --- outputs ---

    /// The feedback due at `now`, if any: at the start of playback, then
    /// every T_fb_k = max(η·T_fb, the floor) (eq. 6), and at once when
    /// congestion begins. Nothing before playback starts.
    pub fn poll_feedback(&mut self, now: Instant) -> Option<BufferFeedback> {
        let now = self.advance(now);
        if !self.playout.started() {
            return None;
        }
        let due = self.expedite_at.is_some_and(|at| at <= now)
            || self.feedback_deadline.is_some_and(|at| at <= now);
        if !due {
            return None;
        }
        let eta_now = self.eta();
        let occupancy = self.playout.occupancy();
        let span = self.playout.span(now);
        let receive_rate = match self.rate_since.map(|since| now - since) {
            Some(elapsed) if !elapsed.is_zero() => {
                Rate::from_bits_per_sec(self.bits_since_feedback as f64 / elapsed.as_secs_f64())
            }
            _ => Rate::ZERO,
        };
        let feedback = BufferFeedback {
            seq: self.feedbacks_sent,
            average_occupancy_bits: to_u64(self.average.value().unwrap_or(0.0)),
            full_buffer_bits: to_u64(self.full_buffer_bits().unwrap_or(0.0)),
            occupancy,
            span,
            eta: eta_now,
            congested: self.congested_since_feedback || self.congested_now,
            losses_observed: self.losses_observed(now),
            deficit: self.config.preroll.saturating_sub(span),
            underruns: self.playout.underruns(),
            receive_rate,
        };
        // Paper 004 eq. 6: T_fb_k = η·T_fb, T_fb = T_s/2 (§2.4), with a floor.
        self.interval = feedback_interval(
            eta_now,
            self.config.max_feedback_interval(),
            self.config.min_feedback_interval,
        );
        self.feedbacks_sent = self.feedbacks_sent.saturating_add(1);
        self.feedback_deadline = Some(now + self.interval);
        self.expedite_at = None;
        self.reported_congested = feedback.congested;
        self.congested_since_feedback = self.congested_now;
        self.bits_since_feedback = 0;
        self.rate_since = Some(now);
        Some(feedback)
    }

    // --- internals ---

    /// Plays out and measures up to `now` (or the latest time seen).
    fn advance(&mut self, now: Instant) -> Instant {
        let now = now.max(self.last_now);
        self.last_now = now;
        // At most one step per frame held, plus one underrun: bounded.
        while let Some(at) = self.playout.next_event().filter(|&at| at <= now) {
            // Rounds before the step see the buffer as it was.
            self.sample_until(at, false);
            if let Some(Step::Played(bits)) = self.playout.step() {
                self.played_sizes.add(bits);
            }
            self.observe(at);
        }
        self.sample_until(now, true);
        now
    }

    /// Takes the measurement rounds due up to `limit` (`inclusive`, or
    /// before it) with the occupancy as it is now.
    fn sample_until(&mut self, limit: Instant, inclusive: bool) {
        let Some(next) = self.next_sample else {
            return;
        };
        if next > limit || (!inclusive && next == limit) {
            return;
        }
        let round = self.config.measurement_interval.as_nanos().max(1);
        let span = u128::from(limit.as_nanos() - next.as_nanos());
        let mut rounds = span / round + 1;
        if !inclusive && span % round == 0 {
            rounds -= 1;
        }
        self.average
            .update_repeated(self.playout.occupancy_bits() as f64, clamp_u64(rounds));
        let next = u128::from(next.as_nanos()) + rounds * round;
        self.next_sample = Some(Instant::from_nanos(clamp_u64(next)));
    }

    /// Paper 004 eq. 1 at `at`: congestion while the occupancy is at or
    /// below T_c, or T_loss while losses are observed.
    fn observe(&mut self, at: Instant) {
        if !self.playout.started() {
            return;
        }
        let threshold = self.config.detection_threshold(self.losses_observed(at));
        let congested = self.playout.occupancy() <= threshold;
        // The onset as the sender knows it: after a feedback without
        // congestion (not each time an arrival lifts the buffer over the
        // threshold for a frame's time).
        if congested && !self.reported_congested && self.config.feedback_on_congestion {
            self.expedite_at.get_or_insert(at);
        }
        self.congested_now = congested;
        self.congested_since_feedback |= congested;
    }
}

fn clamp_u64(value: u128) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

fn to_u64(bits: f64) -> u64 {
    // `as` saturates and maps NaN to zero.
    bits.round() as u64
}
