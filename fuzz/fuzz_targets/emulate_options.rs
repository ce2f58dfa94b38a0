//! Any UTF-8 text as each of `fairstream emulate`'s option values (rate,
//! delay, duration, loss model, queue): the parsers must not panic, and
//! what they accept must lie within the bounds of `fairstream_sim::limits`
//! (a queue of packets: no more than 1 GiB of the largest datagrams) and
//! build the simulator's element it configures.
#![no_main]

use fairstream_net::emulate::{
    parse_delay, parse_loss, parse_positive_duration, parse_queue, parse_rate,
};
use fairstream_proto::time::Instant;
use fairstream_sim::limits::{MAX_DURATION, MAX_QUEUE_BYTES, MAX_RATE_BPS};
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::{Limit, Queue, QueueConfig, SimPacket};
use fairstream_sim::scenario::MAX_PACKET_SIZE;
use libfuzzer_sys::fuzz_target;

/// A stand-in packet to build a queue with.
struct Packet;

impl SimPacket for Packet {
    fn size_bytes(&self) -> u32 {
        1
    }
}

fn check_limit(limit: Limit, text: &str) {
    match limit {
        Limit::Packets(n) => {
            let most = MAX_QUEUE_BYTES / MAX_PACKET_SIZE.get();
            assert!(
                n >= 1 && n as u64 <= most,
                "{text:?}: a queue of {n} packets"
            );
        }
        Limit::Bytes(n) => assert!(
            n >= 1 && n <= MAX_QUEUE_BYTES,
            "{text:?}: a queue of {n} bytes"
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(rate) = parse_rate(text) {
        let bits = rate.bits_per_sec();
        assert!(bits > 0.0 && bits <= MAX_RATE_BPS, "{text:?}: {bits} bit/s");
    }
    if let Ok(delay) = parse_delay(text) {
        assert!(delay <= MAX_DURATION, "{text:?}: {delay:?}");
    }
    if let Ok(duration) = parse_positive_duration(text) {
        assert!(
            !duration.is_zero() && duration <= MAX_DURATION,
            "{text:?}: {duration:?}"
        );
    }
    if let Ok(loss) = parse_loss(text) {
        let probabilities = match loss {
            LossConfig::None => vec![],
            LossConfig::Bernoulli { p } => vec![p],
            LossConfig::GilbertElliott {
                p_good_good,
                p_bad_bad,
                loss_good,
                loss_bad,
            } => {
                vec![p_good_good, p_bad_bad, loss_good, loss_bad]
            }
        };
        for p in probabilities {
            assert!((0.0..=1.0).contains(&p), "{text:?}: {loss:?}");
        }
    }
    if let Ok(queue) = parse_queue(text) {
        match queue {
            QueueConfig::DropTail { limit } | QueueConfig::Red { limit, .. } => {
                check_limit(limit, text)
            }
            other => panic!("{text:?}: an emulator queue of kind {other:?}"),
        }
        Queue::<Packet>::new(queue, Instant::ZERO).expect("an accepted queue builds");
    }
});
