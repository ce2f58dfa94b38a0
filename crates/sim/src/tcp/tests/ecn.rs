//! RFC 3168 §6.1: the receiver's ECN-Echo and the sender's reaction.

use std::time::Duration;

use fairstream_proto::ecn::Ecn;
use fairstream_proto::time::Instant;

use super::{config, MSS};
use crate::tcp::{Ack, Segment, TcpConfig, TcpReceiver, TcpSender};

fn ecn_config() -> TcpConfig {
    TcpConfig {
        ecn: true,
        ..config(10, None)
    }
}

fn segment(index: u64, cwr: bool) -> Segment {
    Segment {
        seq: index * MSS,
        len: MSS,
        is_retransmission: false,
        sent_at: Instant::ZERO,
        cwr,
    }
}

fn ece(cumulative: u64) -> Ack {
    Ack {
        cumulative,
        ece: true,
        sack: None,
    }
}

#[test]
fn receiver_echoes_ce_until_cwr() {
    let mut receiver = TcpReceiver::new(ecn_config()).unwrap();
    let now = Instant::from_millis(1);
    let ack = |r: &mut TcpReceiver, i: u64, cwr: bool, ecn: Ecn| {
        r.on_segment_ecn(now, &segment(i, cwr), ecn).unwrap()
    };
    assert!(!ack(&mut receiver, 0, false, Ecn::Ect0).ece);
    // RFC 3168 §6.1.3: a CE segment sets ECE on the ACK, and on every ACK
    // after it ...
    assert!(ack(&mut receiver, 1, false, Ecn::Ce).ece);
    assert!(ack(&mut receiver, 2, false, Ecn::Ect0).ece);
    assert!(ack(&mut receiver, 3, false, Ecn::Ect0).ece);
    // ... until a CWR segment arrives.
    assert!(!ack(&mut receiver, 4, true, Ecn::Ect0).ece);
    assert!(!ack(&mut receiver, 5, false, Ecn::Ect0).ece);
    // A CWR segment that is itself CE starts a new echo.
    assert!(ack(&mut receiver, 6, true, Ecn::Ce).ece);
    assert_eq!(receiver.ce_received(), 2);
    // §6.1.5: CE on a duplicate outside the window is ignored.
    let mut fresh = TcpReceiver::new(ecn_config()).unwrap();
    ack(&mut fresh, 0, false, Ecn::Ect0);
    assert!(!ack(&mut fresh, 0, false, Ecn::Ce).ece);
    assert_eq!(fresh.ce_received(), 0);
    // A receiver without ECN never echoes.
    let mut plain = TcpReceiver::new(config(10, None)).unwrap();
    let plain_ack = plain.on_segment_ecn(now, &segment(0, false), Ecn::Ce);
    assert!(!plain_ack.unwrap().ece);
}

#[test]
fn sender_halves_once_per_window_without_retransmitting_and_sets_cwr_once() {
    let mut sender = TcpSender::new(ecn_config(), Instant::ZERO).unwrap();
    let now = Instant::from_millis(1);
    let first: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(Instant::ZERO)).collect();
    assert_eq!(first.len(), 10);
    assert!(first.iter().all(|s| !s.cwr && !s.is_retransmission));
    let cwnd = sender.cwnd();
    // The first ACK echoes CE: ssthresh = FlightSize/2 (the 10 segments in
    // flight when the echo arrives), cwnd = ssthresh, no retransmission.
    sender.on_ack(now, &ece(MSS));
    assert_eq!(sender.ssthresh(), 5 * MSS);
    assert_eq!(sender.cwnd(), 5 * MSS);
    assert!(sender.cwnd() < cwnd);
    assert_eq!((sender.ecn_reductions(), sender.retransmissions()), (1, 0));
    // Further ECEs from the same window change nothing, and do not grow cwnd.
    for i in 2..=7 {
        sender.on_ack(now, &ece(i * MSS));
    }
    assert_eq!(sender.ecn_reductions(), 1);
    assert_eq!(sender.cwnd(), 5 * MSS);
    // The window has room again: the next new segment carries CWR, the one
    // after it does not.
    let next: Vec<Segment> = std::iter::from_fn(|| sender.poll_transmit(now)).collect();
    assert!(!next.is_empty());
    assert!(next[0].cwr && !next[0].is_retransmission);
    assert!(next[1..].iter().all(|s| !s.cwr), "{next:?}");
    assert_eq!(next[0].seq, 10 * MSS, "new data, not a retransmission");
    // Once the data outstanding at the reduction is acknowledged, a new ECE
    // reduces again.
    let later = now + Duration::from_millis(100);
    sender.on_ack(later, &Ack::new(10 * MSS));
    sender.on_ack(later, &ece(11 * MSS));
    assert_eq!(sender.ecn_reductions(), 2);
    assert_eq!(sender.ece_acks(), 8);
    assert_eq!(sender.retransmissions(), 0);
}

#[test]
fn sender_without_ecn_ignores_ece() {
    let mut sender = TcpSender::new(config(10, None), Instant::ZERO).unwrap();
    while sender.poll_transmit(Instant::ZERO).is_some() {}
    let cwnd = sender.cwnd();
    sender.on_ack(Instant::from_millis(1), &ece(MSS));
    assert!(sender.cwnd() > cwnd);
    assert_eq!(sender.ecn_reductions(), 0);
}
