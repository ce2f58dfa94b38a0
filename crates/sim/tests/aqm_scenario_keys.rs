//! The AQM and ECN keys of scenario files: `kind = "codel"` and
//! `"fq-codel"` queues, RED's and TCP's `ecn`. Valid tables get the RFC
//! defaults; bad ones are refused with the file, the line and the key.

use std::time::Duration;

use fairstream_sim::scenario::{QueueConfig, Scenario, Transport};

mod common;

use common::{assert_refused, replaced};

#[test]
fn aqm_queues_and_tcp_ecn_parse_with_rfc_defaults() {
    use fairstream_sim::queue::{CoDelConfig, FqCoDelConfig, Limit};
    let text = r#"
        [run]
        duration = "1s"
        [[node]]
        name = "a"
        [[node]]
        name = "b"
        [[node]]
        name = "c"
        [[node]]
        name = "d"
        [[link]]
        between = ["a", "b"]
        rate = "1mbit"
        delay = "1ms"
        queue = { kind = "codel" }
        [[link]]
        between = ["b", "c"]
        rate = "1mbit"
        delay = "1ms"
        queue = { kind = "fq-codel" }
        [[link]]
        between = ["c", "d"]
        rate = "1mbit"
        delay = "1ms"
        queue = { kind = "codel", target = "2ms", interval = "50ms", packets = 300, ecn = true }
        [[link]]
        between = ["a", "d"]
        rate = "1mbit"
        delay = "1ms"
        queue = { kind = "fq-codel", flows = 16, quantum = 300, target = "1ms", interval = "20ms", packets = 500, ecn = false }
        [[flow]]
        name = "tcp"
        from = "a"
        to = "b"
        transport = { cc = "tcp-newreno", ecn = true }
        [[flow]]
        name = "plain"
        from = "a"
        to = "b"
        transport = { cc = "tcp-newreno" }
    "#;
    let s = Scenario::from_str(text, "aqm.toml").expect("parses");
    // RFC 8289 §5.3: 5 ms and 100 ms; Linux's 1000 packets; no ECN.
    assert_eq!(
        s.links()[0].queue,
        QueueConfig::CoDel(CoDelConfig::default())
    );
    // RFC 8290 §5.2: 1024 flows, 1514-byte quantum, 10240 packets, ECN on.
    let QueueConfig::FqCoDel(fq) = s.links()[1].queue else {
        panic!("FQ-CoDel expected")
    };
    assert_eq!(fq, FqCoDelConfig::default());
    assert_eq!(
        (fq.flows, fq.quantum_bytes, fq.limit_packets, fq.ecn),
        (1024, 1514, 10240, true)
    );
    assert_eq!(
        (fq.target, fq.interval),
        (Duration::from_millis(5), Duration::from_millis(100))
    );
    assert_eq!(
        s.links()[2].queue,
        QueueConfig::CoDel(CoDelConfig {
            target: Duration::from_millis(2),
            interval: Duration::from_millis(50),
            limit: Limit::Packets(300),
            ecn: true,
            ..CoDelConfig::default()
        })
    );
    assert_eq!(
        s.links()[3].queue,
        QueueConfig::FqCoDel(FqCoDelConfig {
            flows: 16,
            quantum_bytes: 300,
            limit_packets: 500,
            target: Duration::from_millis(1),
            interval: Duration::from_millis(20),
            ecn: false,
        })
    );
    assert!(matches!(
        s.flows()[0].transport,
        Transport::TcpNewReno { ecn: true, .. }
    ));
    assert!(matches!(
        s.flows()[1].transport,
        Transport::TcpNewReno { ecn: false, .. }
    ));
}

#[test]
fn aqm_and_ecn_keys_are_checked() {
    let queue = |table: &str| replaced("{ kind = \"droptail\", packets = 50 }", table);
    assert_refused(
        &queue("{ kind = \"codel\", target = \"0ms\" }"),
        14,
        &["queue.target", "greater than zero"],
    );
    assert_refused(
        &queue("{ kind = \"codel\", target = \"200ms\" }"),
        14,
        &["queue.target", "below interval"],
    );
    assert_refused(
        &queue("{ kind = \"codel\", interval = \"soon\" }"),
        14,
        &["queue.interval"],
    );
    assert_refused(
        &queue("{ kind = \"codel\", packets = 0 }"),
        14,
        &["queue.packets", "whole number"],
    );
    assert_refused(
        &queue("{ kind = \"codel\", quantum = 1514 }"),
        14,
        &["queue.quantum", "unknown key `quantum`", "target"],
    );
    assert_refused(
        &queue("{ kind = \"codel\", ecn = \"yes\" }"),
        14,
        &["queue.ecn", "true or false"],
    );
    assert_refused(
        &queue("{ kind = \"fq-codel\", flows = 0 }"),
        14,
        &["queue.flows", "flow queues"],
    );
    assert_refused(
        &queue("{ kind = \"fq-codel\", quantum = -5 }"),
        14,
        &["queue.quantum", "bytes"],
    );
    assert_refused(
        &queue("{ kind = \"fq-codel\", limit_packets = 100 }"),
        14,
        &["queue.limit_packets", "unknown key", "packets"],
    );
    assert_refused(
        &queue("{ kind = \"red\", min_th = 5, max_th = 15, max_p = 0.1, ecn = 1 }"),
        14,
        &["queue.ecn", "true or false"],
    );
    assert_refused(
        &queue("{ kind = \"pie\" }"),
        14,
        &["queue.kind", "\"pie\"", "fq-codel"],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"tcp-newreno\", ecn = \"on\" }",
        ),
        24,
        &["flow[0].transport.ecn", "true or false"],
    );
    // DCCP's ECN is not a scenario key yet.
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"tfrc\", ecn = true }",
        ),
        24,
        &["flow[0].transport.ecn", "unknown key `ecn`"],
    );
}
