//! The URL parser's tests.

use super::*;
use fairstream_proto::cc::buffer::BufferMode;

#[test]
fn parses_a_full_sender_url() {
    let url: DccpUrl =
        "dccp://127.0.0.1:9000?cc=tfrc-sp&conns=4&controller=e-multfrc&policy=gop-interleave&start_offset=0.25s&max_packet=1000"
            .parse()
            .unwrap();
    assert_eq!(url.host.as_deref(), Some("127.0.0.1"));
    assert_eq!(url.port, 9000);
    let t = &url.transport;
    assert_eq!(t.cc, Ccid::TfrcSp);
    assert_eq!(t.conns, 4);
    assert_eq!(t.controller, Controller::EMultfrc);
    assert_eq!(t.policy, SplitPolicy::GopInterleave);
    assert_eq!(t.start_offset, Duration::from_millis(250));
    assert_eq!(t.max_packet, 1000);
    assert_eq!(url.target().unwrap().port(), 9000);
    assert_eq!(url.fec, None);
    let fec: DccpUrl = "dccp://h:1?fec=24,20".parse().unwrap();
    assert_eq!(fec.fec, Some(FecParams { n: 24, k: 20 }));
    let any: DccpUrl = "dccp://127.0.0.1:0".parse().unwrap();
    assert_eq!(any.listen_address().unwrap().port(), 0);
    let error = any.target().unwrap_err().to_string();
    assert!(error.contains("bad port `0`"), "{error}");
}

#[test]
fn listening_urls() {
    let url: DccpUrl = "dccp://:9000".parse().unwrap();
    assert_eq!(url.host, None);
    assert_eq!(url.listen_address().unwrap().port(), 9000);
    assert!(matches!(url.target(), Err(UrlError::NoHost(_))));
    let v6: DccpUrl = "dccp://[::1]:9000".parse().unwrap();
    assert_eq!(v6.host.as_deref(), Some("::1"));
    assert!(v6.target().unwrap().is_ipv6());
    let with_conns: DccpUrl = "dccp://:9000?conns=2".parse().unwrap();
    let error = with_conns.listen_address().unwrap_err().to_string();
    assert!(error.contains("`conns`"), "{error}");
}

#[test]
fn errors_name_the_problem() {
    let cases = [
        ("http://x:1", "not a dccp:// URL"),
        ("dccp://host", "bad port ``"),
        ("dccp://host:99999", "bad port `99999`"),
        ("dccp://host:9?cc=tcp", "bad value `tcp` for `cc`"),
        ("dccp://host:9?conns=0", "bad value `0` for `conns`"),
        ("dccp://host:9?conns=65", "bad value `65` for `conns`"),
        ("dccp://host:9?controller=x", "for `controller`"),
        ("dccp://host:9?policy=x", "for `policy`"),
        ("dccp://host:9?start_offset=5", "for `start_offset`"),
        ("dccp://host:9?colour=red", "unknown option `colour`"),
        ("dccp://host:9?fec=20,20", "bad value `20,20` for `fec`"),
        ("dccp://host:9?fec=20,0", "bad value `20,0` for `fec`"),
        ("dccp://host:9?fec=256,250", "bad value `256,250` for `fec`"),
        ("dccp://host:9?fec=24", "bad value `24` for `fec`"),
        ("dccp://host:9?fec=a,b", "bad value `a,b` for `fec`"),
        ("dccp://host:9?cc=tfrc&cc=ccid2", "`cc` given twice"),
    ];
    for (text, expected) in cases {
        let error = text.parse::<DccpUrl>().unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
}

#[test]
fn fixed_rate_urls() {
    let url: DccpUrl = "dccp://127.0.0.1:9001?cc=fixed&rate=64kbit"
        .parse()
        .unwrap();
    assert_eq!(url.transport.ccid(), Ccid::FixedRateExperimental);
    assert_eq!(url.transport.rate.unwrap().bits_per_sec(), 64e3);
    assert_eq!(url.transport.controller, Controller::Fixed);
    assert!(url.target().is_ok());
    for (text, bits) in [("2mbit", 2e6), ("1gbit", 1e9), ("1.5Mbps", 1.5e6)] {
        let url: DccpUrl = format!("dccp://h:1?rate={text}&cc=fixed").parse().unwrap();
        assert_eq!(url.transport.rate.unwrap().bits_per_sec(), bits);
    }
    // With several connections each paces at the rate; a policy key
    // does not bring in a TFRC connection-count controller.
    let url: DccpUrl = "dccp://h:1?cc=fixed&rate=1mbit&policy=gop-interleave"
        .parse()
        .unwrap();
    assert_eq!(url.transport.controller, Controller::Fixed);
    // A listener names the CCID alone: the rate is the sender's.
    let listener: DccpUrl = "dccp://:9001?cc=fixed".parse().unwrap();
    assert_eq!(listener.transport.cc, Ccid::FixedRateExperimental);
    assert!(listener.listen_address().is_ok());
    let with_rate: DccpUrl = "dccp://:9001?cc=fixed&rate=1mbit".parse().unwrap();
    let error = with_rate.listen_address().unwrap_err().to_string();
    assert!(error.contains("`rate`"), "{error}");
}

#[test]
fn fixed_rate_errors_name_the_problem() {
    let missing: DccpUrl = "dccp://h:1?cc=fixed".parse().unwrap();
    let error = missing.target().unwrap_err().to_string();
    assert!(error.contains("without a rate"), "{error}");
    let cases = [
        ("dccp://h:1?rate=64kbit", "applies only with cc=fixed"),
        (
            "dccp://h:1?cc=tfrc&rate=64kbit",
            "applies only with cc=fixed",
        ),
        ("dccp://h:1?cc=fixed&rate=64", "bad value `64` for `rate`"),
        ("dccp://h:1?cc=fixed&rate=2furlongs", "furlongs"),
        ("dccp://h:1?cc=fixed&rate=0mbit", "above zero"),
        ("dccp://h:1?cc=fixed&rate=-1mbit", "for `rate`"),
        (
            "dccp://h:1?cc=fixed&rate=1mbit&controller=aggregate",
            "only controller=fixed",
        ),
        (
            "dccp://h:1?cc=fixed&rate=1mbit&rate=2mbit",
            "`rate` given twice",
        ),
    ];
    for (text, expected) in cases {
        let error = text.parse::<DccpUrl>().unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
}

#[test]
fn aggregate_runs_the_experimental_ccid() {
    let url: DccpUrl = "dccp://h:1?controller=aggregate&conns=2".parse().unwrap();
    assert_eq!(url.transport.ccid(), Ccid::MulTfrcExperimental);
    assert!(matches!(
        url.transport.count(),
        ConnectionCountConfig::Aggregate(_)
    ));
}

#[test]
fn the_default_controller_is_the_simulators() {
    let plain: DccpUrl = "dccp://h:1".parse().unwrap();
    assert_eq!(plain.transport.controller, Controller::Fixed);
    assert_eq!(plain.transport.conns, 1);
    let counted: DccpUrl = "dccp://h:1?conns=4".parse().unwrap();
    assert_eq!(counted.transport.controller, Controller::Fixed);
    let split: DccpUrl = "dccp://h:1?policy=gop-interleave".parse().unwrap();
    assert_eq!(split.transport.controller, Controller::Adaptive);
    let named: DccpUrl = "dccp://h:1?controller=adaptive".parse().unwrap();
    assert_eq!(
        named.transport.count(),
        ConnectionCountConfig::Adaptive(AdaptiveConfig::default())
    );
    assert_eq!(named.transport.ccid(), Ccid::MulTfrcExperimental);
}

#[test]
fn peer_timeouts_on_both_kinds_of_url() {
    let plain: DccpUrl = "dccp://h:1".parse().unwrap();
    assert_eq!(plain.peer_timeout, PeerTimeout::Auto);
    let sender: DccpUrl = "dccp://h:1?peer_timeout=2s".parse().unwrap();
    assert_eq!(
        sender.peer_timeout,
        PeerTimeout::Fixed(Duration::from_secs(2))
    );
    let listener: DccpUrl = "dccp://:9000?peer_timeout=auto".parse().unwrap();
    assert_eq!(listener.peer_timeout, PeerTimeout::Auto);
    assert!(listener.listen_address().is_ok());
    for (text, expected) in [
        (
            "dccp://h:1?peer_timeout=0s",
            "bad value `0s` for `peer_timeout`",
        ),
        (
            "dccp://h:1?peer_timeout=5",
            "bad value `5` for `peer_timeout`",
        ),
        (
            "dccp://h:1?peer_timeout=",
            "bad value `` for `peer_timeout`",
        ),
        ("dccp://:1?peer_timeout=2h", "from 100ms to 3600s"),
    ] {
        let error = text.parse::<DccpUrl>().unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
}

#[test]
fn a_fixed_rate_beyond_the_maximum_is_refused() {
    let error = "dccp://h:1?cc=fixed&rate=1e30bit"
        .parse::<DccpUrl>()
        .unwrap_err()
        .to_string();
    assert!(error.contains("100 Gbit/s"), "{error}");
}

#[test]
fn a_passphrase_is_parsed_decoded_and_never_shown() {
    let url: DccpUrl = "dccp://127.0.0.1:9000?passphrase=correct%20horse%26battery&conns=2"
        .parse()
        .unwrap();
    let expected: Passphrase = "correct horse&battery".parse().unwrap();
    assert_eq!(url.passphrase, Some(expected));
    assert_eq!(
        url.to_string(),
        "dccp://127.0.0.1:9000?passphrase=***&conns=2"
    );
    assert!(!format!("{url:?}").contains("horse"));
    let listener: DccpUrl = "dccp://:9000?passphrase=0123456789".parse().unwrap();
    assert!(listener.listen_address().is_ok());
    assert!(listener.passphrase.is_some());
    // Errors name the problem, never the secret.
    for (text, expect) in [
        ("dccp://h:1?passphrase=short", "at least 10 bytes"),
        ("dccp://h:1?passphrase=secret%zzsecret", "%-escape"),
        (
            "dccp://h:1?passphrase=0123456789&passphrase=0123456789",
            "twice",
        ),
        ("dccp://h:1?passphrase=0123456789&bogus=1", "unknown option"),
        ("dccp://h:x?passphrase=0123456789", "bad port"),
    ] {
        let error = text.parse::<DccpUrl>().unwrap_err().to_string();
        assert!(error.contains(expect), "{text}: {error}");
        assert!(!error.contains("0123456789"), "{error}");
        assert!(!error.contains("secret"), "{error}");
    }
    let long = format!("dccp://h:1?passphrase={}", "x".repeat(80));
    let error = long.parse::<DccpUrl>().unwrap_err().to_string();
    assert!(error.contains("79"), "{error}");
}

#[test]
fn buffer_urls_choose_the_ccid_by_mode_and_scale_the_thresholds() {
    let paper: DccpUrl = "dccp://127.0.0.1:9000?cc=buffer".parse().unwrap();
    let config = paper.buffer.unwrap();
    assert_eq!(config, BufferConfig::default());
    assert_eq!(paper.transport.ccid(), Ccid::FixedRateExperimental);
    assert_eq!(paper.arq, Some(false));
    assert!(
        paper.target().is_ok(),
        "CCID 249 needs no rate with cc=buffer"
    );
    let capped: DccpUrl = "dccp://:9000?mode=tfrc-capped&cc=buffer&preroll=4s"
        .parse()
        .unwrap();
    assert_eq!(capped.transport.ccid(), Ccid::FixedRateExperimental);
    assert!(capped.listen_address().is_ok());
    let config = capped.buffer.unwrap();
    assert_eq!(config.mode, BufferMode::TfrcCapped);
    assert_eq!(config.preroll, Duration::from_secs(4));
    assert_eq!(config.congestion_threshold, Duration::from_secs(2));
    assert_eq!(config.loss_threshold, Duration::from_secs(3));
    let short: DccpUrl = "dccp://h:1?cc=buffer&preroll=500ms&loss_threshold=400ms"
        .parse()
        .unwrap();
    let config = short.buffer.unwrap();
    assert_eq!(config.congestion_threshold, Duration::from_millis(250));
    assert_eq!(config.loss_threshold, Duration::from_millis(400));
    assert!(config.validate().is_ok());
    let plain: DccpUrl = "dccp://h:1?cc=tfrc".parse().unwrap();
    assert_eq!(plain.buffer, None);
}

#[test]
fn buffer_url_errors_name_the_key() {
    let cases = [
        (
            "dccp://h:1?mode=paper",
            "option `mode`",
            "applies only with cc=buffer",
        ),
        (
            "dccp://h:1?cc=tfrc&preroll=2s",
            "option `preroll`",
            "only with cc=buffer",
        ),
        (
            "dccp://h:1?cc=buffer&conns=4",
            "option `conns`",
            "one connection",
        ),
        (
            "dccp://h:1?controller=multfrc&cc=buffer",
            "option `controller`",
            "cc=buffer",
        ),
        (
            "dccp://h:1?cc=buffer&rate=1mbit",
            "option `rate`",
            "does not go with cc=buffer",
        ),
        ("dccp://h:1?cc=buffer&fec=24,20", "option `fec`", "parity"),
        (
            "dccp://h:1?cc=buffer&arq=on",
            "option `arq`",
            "=on does not go",
        ),
        (
            "dccp://h:1?cc=buffer&mode=fast",
            "bad value `fast` for `mode`",
            "tfrc-capped",
        ),
        ("dccp://h:1?cc=buffer&preroll=soon", "for `preroll`", ""),
        (
            "dccp://h:1?cc=buffer&congestion_threshold=3s",
            "bad value `3s` for `congestion_threshold`",
            "below the preroll",
        ),
        (
            "dccp://h:1?cc=buffer&loss_threshold=500ms",
            "bad value `500ms` for `loss_threshold`",
            "eq. 1",
        ),
        ("dccp://h:1?cc=buffer&preroll=0s", "for `preroll`", "frames"),
    ];
    for (text, first, second) in cases {
        let error = text.parse::<DccpUrl>().unwrap_err().to_string();
        assert!(
            error.contains(first) && error.contains(second),
            "{text}: {error}"
        );
    }
    // arq=off is what cc=buffer does anyway.
    assert!("dccp://h:1?cc=buffer&arq=off".parse::<DccpUrl>().is_ok());
    let listener: DccpUrl = "dccp://:9000?cc=buffer&mode=paper".parse().unwrap();
    assert!(listener.listen_address().is_ok());
}

#[test]
fn bonded_urls_list_their_paths_and_errors_name_the_key() {
    let url: DccpUrl =
        "dccp://127.0.0.1:9001?paths=127.0.0.1:9002,127.0.0.1:9003@127.0.0.1&bind=dev:lo"
            .parse()
            .unwrap();
    let targets = url.path_targets().unwrap();
    assert_eq!(targets.len(), 3);
    assert_eq!(targets[0].0.port(), 9001);
    assert_eq!(targets[0].1, Some(LocalBind::Device("lo".into())));
    assert_eq!(targets[1], ("127.0.0.1:9002".parse().unwrap(), None));
    assert_eq!(
        targets[2].1,
        Some(LocalBind::Address("127.0.0.1:0".parse().unwrap()))
    );
    for (bad, says) in [
        ("dccp://h:1?paths=", "`paths`"),
        ("dccp://h:1?paths=h", "HOST:PORT"),
        ("dccp://h:1?bind=nowhere", "`bind`"),
        ("dccp://h:1?cc=buffer&paths=h:2", "one connection"),
        ("dccp://h:1?duplicate=key", "needs paths="),
        ("dccp://h:1?shared=all", "needs paths="),
        ("dccp://h:1?paths=h:2&shared=0+2", "path 2 does not exist"),
        ("dccp://h:1?paths=h:2,h:3&shared=0+1,1+2", "two groups"),
        ("dccp://h:1?paths=h:2&shared=0", "one path"),
        ("dccp://h:1?paths=h:2&duplicate=all", "key or off"),
    ] {
        let error = bad.parse::<DccpUrl>().unwrap_err().to_string();
        assert!(error.contains(says), "{bad}: {error}");
    }
    let shared: DccpUrl = "dccp://h:1?shared=0+2&paths=h:2,h:3".parse().unwrap();
    assert_eq!(shared.shared_groups(), vec![Some(0), None, Some(0)]);
    let all: DccpUrl = "dccp://h:1?paths=h:2&shared=all".parse().unwrap();
    assert_eq!(all.shared_groups(), vec![Some(0), Some(0)]);
    // A listener takes no paths: the sender's addresses find it.
    let listening: DccpUrl = "dccp://:9000?paths=h:2".parse().unwrap();
    let error = listening.listen_address().unwrap_err().to_string();
    assert!(error.contains("`paths`"), "{error}");
}
