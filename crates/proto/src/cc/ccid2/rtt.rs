//! The round-trip time estimator and retransmission timeout of RFC 6298 §2,
//! which RFC 4341 §5 uses for CCID 2's transmit timeouts.

use std::time::Duration;

/// RFC 6298 §2: SRTT, RTTVAR and RTO, with the RTO clamped to
/// `[min_rto, max_rto]` and backed off on expiry.
#[derive(Clone, Debug)]
pub(super) struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    clock_granularity: Duration,
}

impl RttEstimator {
    /// An estimator with no sample yet; `initial_rto` is used until the first one.
    pub(super) fn new(
        initial_rto: Duration,
        min_rto: Duration,
        max_rto: Duration,
        clock_granularity: Duration,
    ) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            // RFC 6298 §2.1: "Until a round-trip time (RTT) measurement has been
            // made for a segment sent between the sender and receiver, the
            // sender SHOULD set RTO <- 1 second" (the configured initial RTO).
            rto: initial_rto.clamp(min_rto, max_rto),
            min_rto,
            max_rto,
            clock_granularity,
        }
    }

    /// The smoothed round-trip time, once there is a sample.
    pub(super) fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// The round-trip time variation (zero before the first sample).
    pub(super) fn rttvar(&self) -> Duration {
        self.rttvar
    }

    /// The current retransmission timeout, including any backoff.
    pub(super) fn rto(&self) -> Duration {
        self.rto
    }

    /// Feeds one measurement R.
    pub(super) fn on_sample(&mut self, r: Duration) {
        match self.srtt {
            None => {
                // RFC 6298 §2.2: "SRTT <- R, RTTVAR <- R/2".
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // RFC 6298 §2.3, alpha = 1/8, beta = 1/4, RTTVAR updated first
                // with the old SRTT: "RTTVAR <- (1 - beta) * RTTVAR + beta *
                // |SRTT - R'|" and "SRTT <- (1 - alpha) * SRTT + alpha * R'".
                let deviation = srtt.abs_diff(r);
                self.rttvar = self.rttvar.saturating_mul(3) / 4 + deviation / 4;
                self.srtt = Some(srtt.saturating_mul(7) / 8 + r / 8);
            }
        }
        self.rto = self.computed_rto();
    }

    /// RFC 6298 §5.5: "The host MUST set RTO <- RTO * 2 ('back off the timer')",
    /// capped at the maximum (RFC 6298 §2.5 allows one of at least 60 s).
    pub(super) fn back_off(&mut self) {
        self.rto = self.rto.saturating_mul(2).min(self.max_rto);
    }

    fn computed_rto(&self) -> Duration {
        let srtt = self.srtt.unwrap_or(Duration::ZERO);
        // RFC 6298 §2.2/§2.3: "RTO <- SRTT + max (G, K*RTTVAR)" with K = 4.
        let variation = self.rttvar.saturating_mul(4).max(self.clock_granularity);
        // RFC 6298 §2.4 (minimum) and §2.5 (maximum).
        srtt.saturating_add(variation)
            .clamp(self.min_rto, self.max_rto)
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
