//! A retransmission timeout during a loss recovery whose first
//! retransmission was lost again: the sender went on sending new data until
//! the timer fired, so FlightSize (`SND.MAX − SND.UNA`) is several windows.
//! RFC 5681 §3.1 eq. 4 bounds ssthresh from above only ("no more than
//! max (FlightSize / 2, 2*SMSS)"); the timeout must not raise it above the
//! recovery's own target window.

use std::collections::HashMap;
use std::time::Duration;

use fairstream_proto::time::Instant;

use super::{config, Harness, MSS};
use crate::tcp::{CongestionControl, CubicConfig, Segment, TcpConfig};

/// Segment 30 is lost on its first transmission and on its fast
/// retransmission; the path has a 100 ms RTT and the RTO its 1 s floor.
/// Returns (ssthresh set at the entry into recovery, FlightSize just before
/// the timeout, ssthresh after it).
fn timeout_in_recovery(c: TcpConfig) -> (u64, u64, u64) {
    let mut sends: HashMap<u64, u32> = HashMap::new();
    let mut h = Harness::new(c, Duration::from_millis(100), |s: &Segment| {
        let n = sends.entry(s.seq).or_insert(0);
        *n += 1;
        s.seq == 30 * MSS && *n <= 2
    });
    h.keep_sent = false;
    let mut recovery_ssthresh = None;
    let mut flight_before = 0;
    while h.sender.timeouts() == 0 && h.now < Instant::from_millis(5_000) && h.step() {
        if recovery_ssthresh.is_none() && h.sender.fast_retransmits() == 1 {
            recovery_ssthresh = Some(h.sender.ssthresh());
        }
        if h.sender.timeouts() == 0 {
            // Just before the next event, which may be the timeout.
            flight_before = h.sender.bytes_in_flight();
        }
    }
    assert_eq!(h.sender.fast_retransmits(), 1);
    assert_eq!(h.sender.timeouts(), 1);
    let recovery_ssthresh = recovery_ssthresh.unwrap_or(0);
    (recovery_ssthresh, flight_before, h.sender.ssthresh())
}

/// 20 segments in congestion avoidance.
fn base(sack: bool) -> TcpConfig {
    TcpConfig {
        sack,
        ..config(20, Some(20))
    }
}

/// A timeout in a recovery whose FlightSize grew past three windows halves
/// the recovery's window (RFC 5681 eq. 4 on min(FlightSize, the window
/// without inflation)) rather than raising ssthresh.
fn assert_halves_the_recovery_window(config: TcpConfig) {
    let (recovery, flight, after) = timeout_in_recovery(config);
    // 21 segments outstanding at the third duplicate ACK: eq. 4 gives 10.5.
    assert!((10 * MSS..=11 * MSS).contains(&recovery), "{recovery}");
    assert!(
        flight > 3 * recovery,
        "flight {flight}, ssthresh {recovery}"
    );
    assert!(after <= recovery, "{after} > {recovery}");
    assert_eq!(after, recovery / 2);
}

#[test]
fn a_timeout_in_sack_recovery_with_a_lost_retransmission_does_not_raise_ssthresh() {
    // RFC 6675 NextSeg rule (2) kept sending new data, so FlightSize grew
    // well past the recovery's window (cwnd = ssthresh).
    assert_halves_the_recovery_window(base(true));
}

#[test]
fn a_timeout_in_newreno_recovery_with_inflation_does_not_raise_ssthresh() {
    // Each duplicate ACK inflated cwnd by one SMSS (RFC 6582 §3.2 step 3)
    // and let a new segment out, so FlightSize grew with it; the window
    // without inflation is the recovery's ssthresh.
    assert_halves_the_recovery_window(base(false));
}

#[test]
fn a_cubic_timeout_in_recovery_reduces_from_the_window_not_the_flight() {
    for sack in [true, false] {
        let c = TcpConfig {
            congestion_control: CongestionControl::Cubic(CubicConfig::default()),
            ..base(sack)
        };
        let (recovery, flight, after) = timeout_in_recovery(c);
        // RFC 9438 §4.6: ssthresh = flight_size·β, 14-15 segments.
        assert!(
            (14 * MSS..=15 * MSS).contains(&recovery),
            "sack {sack}: {recovery}"
        );
        assert!(flight > 2 * recovery, "sack {sack}: flight {flight}");
        // §4.8 "sets ssthresh using β_cubic": β·min(FlightSize, window)
        // with the window at the recovery's ssthresh (cwnd with SACK; the
        // target of the inflated window without).
        assert!(after < recovery, "sack {sack}: {after} >= {recovery}");
        assert_eq!(after, (recovery as f64 * 0.7) as u64, "sack {sack}");
    }
}
