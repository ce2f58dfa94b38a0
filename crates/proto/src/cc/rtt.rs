//! The round-trip time estimator and retransmission timeout of RFC 6298,
//! shared by CCID 2 (RFC 4341 §5 uses it for transmit timeouts) and by the
//! simulator's TCP NewReno model.

use std::time::Duration;

/// SRTT, RTTVAR and RTO per RFC 6298 §2, with exponential backoff (§5.5).
///
/// Karn's rule (RFC 6298 §3: "RTT samples MUST NOT be made using segments
/// that were retransmitted") is the caller's job: only feed samples from
/// segments sent once.
#[derive(Clone, Debug, PartialEq)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    /// RTO computed from the samples, before backoff.
    base_rto: Duration,
    /// Number of doublings applied since the last sample.
    backoff: u32,
    min_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
    samples: u64,
    sample_sum: Duration,
}

impl RttEstimator {
    /// An estimator with no sample yet (RFC 6298 §2.1: RTO = `initial_rto`).
    pub fn new(
        initial_rto: Duration,
        min_rto: Duration,
        max_rto: Duration,
        granularity: Duration,
    ) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            // RFC 6298 §2.1: "Until a round-trip time (RTT) measurement has
            // been made ... the sender SHOULD set RTO <- 1 second" (the
            // configured initial RTO, kept within the bounds).
            base_rto: initial_rto.clamp(min_rto, max_rto.max(min_rto)),
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
            samples: 0,
            sample_sum: Duration::ZERO,
        }
    }

    /// Takes one RTT measurement R and clears any backoff.
    pub fn on_sample(&mut self, rtt: Duration) {
        match self.srtt {
            // RFC 6298 §2.2: "SRTT <- R, RTTVAR <- R/2"
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            // RFC 6298 §2.3: "RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|
            //                 SRTT <- (1 - alpha) * SRTT + alpha * R'"
            // with alpha = 1/8, beta = 1/4; RTTVAR is updated first.
            Some(srtt) => {
                let delta = srtt.abs_diff(rtt);
                self.rttvar = self.rttvar.saturating_mul(3) / 4 + delta / 4;
                self.srtt = Some(srtt.saturating_mul(7) / 8 + rtt / 8);
            }
        }
        let srtt = self.srtt.unwrap_or(rtt);
        // RFC 6298 §2.2/2.3: "RTO <- SRTT + max (G, K*RTTVAR)", K = 4
        let rto = srtt.saturating_add(self.granularity.max(self.rttvar.saturating_mul(4)));
        // RFC 6298 §2.4 (minimum) and §2.5 (maximum).
        self.base_rto = rto.clamp(self.min_rto, self.max_rto);
        // A new sample ends the backoff (Karn's algorithm, RFC 6298 §5 note).
        self.backoff = 0;
        self.samples += 1;
        self.sample_sum = self.sample_sum.saturating_add(rtt);
    }

    /// RFC 6298 §5.5: "The host MUST set RTO <- RTO * 2 ("back off the
    /// timer")", bounded by the maximum (§2.5).
    pub fn back_off(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff = self.backoff.saturating_add(1);
        }
    }

    /// The current RTO, backoff included.
    pub fn rto(&self) -> Duration {
        let factor = 1u32.checked_shl(self.backoff.min(31)).unwrap_or(u32::MAX);
        self.base_rto.saturating_mul(factor).min(self.max_rto)
    }

    /// The smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// The RTT variation estimate.
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }

    /// How many times the RTO has been doubled since the last sample.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Number of RTT samples taken.
    pub fn sample_count(&self) -> u64 {
        self.samples
    }

    /// Mean of all RTT samples, once there is one.
    pub fn mean_sample(&self) -> Option<Duration> {
        // Precision loss in the division is irrelevant for a mean.
        (self.samples > 0)
            .then(|| Duration::from_secs_f64(self.sample_sum.as_secs_f64() / self.samples as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimator() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
            Duration::from_millis(1),
        )
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = estimator();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        // 100 ms + 4·50 ms.
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn later_samples_use_alpha_and_beta() {
        let mut e = estimator();
        e.on_sample(Duration::from_millis(100));
        e.on_sample(Duration::from_millis(200));
        // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5 ms; SRTT = 7/8·100 + 1/8·200 = 112.5 ms.
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(112_500 + 250_000));
    }

    #[test]
    fn rto_is_clamped_and_backs_off_to_the_maximum() {
        let mut e = estimator();
        e.on_sample(Duration::from_millis(1));
        assert_eq!(e.rto(), Duration::from_millis(200), "minimum RTO");
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(400));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60), "maximum RTO");
        // A new sample recomputes the RTO without the backoff (RFC 6298 §5.7).
        e.on_sample(Duration::from_millis(1));
        assert_eq!(e.rto(), Duration::from_millis(200));
    }

    #[test]
    fn clock_granularity_bounds_the_variation_term() {
        let mut e = RttEstimator::new(
            Duration::from_secs(1),
            Duration::ZERO,
            Duration::from_secs(60),
            Duration::from_millis(10),
        );
        for _ in 0..200 {
            e.on_sample(Duration::from_millis(50));
        }
        // RTTVAR decays towards zero; G = 10 ms keeps RTO above SRTT.
        assert_eq!(e.rto(), Duration::from_millis(60));
    }
}
