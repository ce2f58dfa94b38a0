//! Bad scenarios: every refusal names the file, the line and the key; no
//! input, however mangled, makes the parser panic.

use fairstream_sim::scenario::{Scenario, ScenarioError};
use proptest::prelude::*;

mod common;

use common::{assert_refused, replaced, BASE};

/// An extra flow appended after line 24, starting at line 25.
const EXTRA_FLOW: &str = r#"[[flow]]
name = "video"
from = "a"
to = "c"
transport = { cc = "cbr", rate = "1mbit" }
"#;

#[test]
fn base_is_valid() {
    let s = Scenario::from_str(BASE, "bad.toml").expect("BASE must parse");
    assert_eq!(s.links().len(), 2);
}

#[test]
fn unknown_key_is_named() {
    assert_refused(
        &replaced("delay = \"20ms\"", "delya = \"20ms\""),
        13,
        &["`link[0].delya`", "unknown field"],
    );
    assert_refused(
        &replaced("seed = 1", "seed = 1\nsed = 2"),
        4,
        &["`run.sed`"],
    );
}

#[test]
fn bad_unit_names_key_unit_and_accepted_units() {
    assert_refused(
        &replaced("rate = \"5mbit\"", "rate = \"5mbt\""),
        12,
        &["link[0]", "rate", "`mbt`", "kbit", "a–b"],
    );
    assert_refused(
        &replaced("delay = \"5ms\"", "delay = \"5 parsecs\""),
        19,
        &["link[1]", "delay", "parsecs", "ms"],
    );
    assert_refused(
        &replaced("duration = \"60s\"", "duration = \"60\""),
        2,
        &["run.duration", "unknown unit"],
    );
}

#[test]
fn missing_required_key_is_named() {
    // A missing key inside [[link]] is reported at that link's header.
    assert_refused(
        &replaced("delay = \"5ms\"\n", ""),
        16,
        &["`link[1]`", "missing field `delay`"],
    );
    assert_refused(
        &replaced("rate = \"2mbit\"\n", ""),
        17,
        &["link[1]", "rate", "missing"],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { packet_size = 100 }",
        ),
        24,
        &["flow[0].transport.cc", "missing"],
    );
}

#[test]
fn wrong_type_is_named() {
    assert_refused(
        &replaced("seed = 1", "seed = \"one\""),
        3,
        &["`run.seed`", "expected u64"],
    );
    assert_refused(&replaced("seed = 1", "seed = -1"), 3, &["seed"]);
    assert_refused(&replaced("rate = \"5mbit\"", "rate = 5"), 12, &["rate"]);
    assert_refused(
        &replaced("p = 0.02", "p = \"2%\""),
        15,
        &["link[0] (a–b).loss.p", "expected a number, found string"],
    );
}

#[test]
fn unknown_node_is_named() {
    assert_refused(
        &replaced("to = \"c\"", "to = \"d\""),
        23,
        &["flow[0].to", "\"d\"", "a, b, c"],
    );
    assert_refused(
        &replaced("between = [\"b\", \"c\"]", "between = [\"b\", \"x\"]"),
        17,
        &["link[1].between[1]", "\"x\""],
    );
}

#[test]
fn duplicate_names_are_refused() {
    assert_refused(
        &replaced("name = \"c\"", "name = \"b\""),
        9,
        &["node[2].name", "duplicate", "\"b\""],
    );
    assert_refused(
        &format!("{BASE}{EXTRA_FLOW}"),
        26,
        &["flow[1].name", "duplicate", "\"video\""],
    );
}

#[test]
fn self_links_and_duplicate_links_are_refused() {
    assert_refused(
        &replaced("between = [\"b\", \"c\"]", "between = [\"b\", \"b\"]"),
        17,
        &["link[1].between", "itself"],
    );
    assert_refused(
        &replaced("between = [\"b\", \"c\"]", "between = [\"b\", \"a\"]"),
        17,
        &["link[1].between", "already declared as link[0]"],
    );
    assert_refused(
        &replaced("between = [\"b\", \"c\"]", "between = [\"b\"]"),
        17,
        &["link[1].between", "exactly two"],
    );
}

#[test]
fn unreachable_flow_endpoint_is_refused() {
    let text = format!(
        "{BASE}[[node]]\nname = \"d\"\n{}",
        EXTRA_FLOW
            .replace("video", "x")
            .replace("to = \"c\"", "to = \"d\"")
    );
    assert_refused(&text, 30, &["flow[1].to", "no path", "\"a\"", "\"d\""]);
    assert_refused(
        &replaced("to = \"c\"", "to = \"a\""),
        23,
        &["flow[0].to", "itself"],
    );
}

#[test]
fn probabilities_outside_unit_interval_are_refused() {
    assert_refused(
        &replaced("p = 0.02", "p = 1.5"),
        15,
        &["link[0] (a–b).loss.p", "outside [0, 1]"],
    );
    assert_refused(
        &replaced(
            "loss = { kind = \"bernoulli\", p = 0.02 }",
            "loss = { kind = \"gilbert-elliott\", p_good_good = 0.9, p_bad_bad = -0.1, loss_good = 0, loss_bad = 1 }",
        ),
        15,
        &["loss.p_bad_bad", "outside [0, 1]"],
    );
}

#[test]
fn inverted_red_thresholds_are_refused() {
    assert_refused(
        &replaced(
            "{ kind = \"droptail\", packets = 50 }",
            "{ kind = \"red\", min_th = 20, max_th = 10, max_p = 0.1 }",
        ),
        14,
        &["queue.max_th", "greater than min_th"],
    );
    assert_refused(
        &replaced(
            "{ kind = \"droptail\", packets = 50 }",
            "{ kind = \"red\", min_th = 2, max_th = 10, max_p = 0 }",
        ),
        14,
        &["queue.max_p"],
    );
}

#[test]
fn zero_and_negative_quantities_are_refused() {
    assert_refused(
        &replaced("duration = \"60s\"", "duration = \"0s\""),
        2,
        &["run.duration", "greater than zero"],
    );
    assert_refused(
        &replaced("rate = \"5mbit\"", "rate = \"0mbit\""),
        12,
        &["link[0] (a–b).rate", "greater than zero"],
    );
    assert_refused(
        &replaced("delay = \"20ms\"", "delay = \"-5ms\""),
        13,
        &["link[0] (a–b).delay", "negative"],
    );
    assert_refused(
        &replaced("packets = 50", "packets = 0"),
        14,
        &["queue.packets"],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"onoff\", rate = \"1mbit\", on = \"0s\", off = \"1s\", packet_size = 100 }",
        ),
        24,
        &["flow[0].transport.on", "greater than zero"],
    );
    assert_refused(
        &replaced("to = \"c\"", "to = \"c\"\nstart = \"5s\"\nstop = \"5s\""),
        25,
        &["flow[0].stop", "not after its start"],
    );
}

#[test]
fn kind_specific_keys_are_checked() {
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"cubic\" }",
        ),
        24,
        &["flow[0].transport.cc", "\"cubic\"", "tcp-newreno"],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"tfrc\", mss = 1000 }",
        ),
        24,
        &[
            "flow[0].transport.mss",
            "unknown key `mss`",
            "packet_size",
            "rate",
        ],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"tfrc\", rate = \"1 parsec\" }",
        ),
        24,
        &["flow[0].transport.rate"],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"tcp-newreno\", sack = \"yes\" }",
        ),
        24,
        &["flow[0].transport.sack"],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"tcp-newreno\", min_rto = \"0ms\" }",
        ),
        24,
        &["flow[0].transport.min_rto", "greater than zero"],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"cbr\" }",
        ),
        24,
        &["flow[0].transport.rate", "missing"],
    );
    assert_refused(
        &replaced("packets = 50", "packets = 50, bytes = 1000"),
        14,
        &["queue.bytes", "not both"],
    );
    assert_refused(
        &replaced("kind = \"droptail\"", "kind = \"fifo\""),
        14,
        &["queue.kind", "\"fifo\""],
    );
}

#[test]
fn multi_connection_keys_are_checked() {
    let transport = |keys: &str| {
        replaced(
            "transport = { cc = \"tfrc\" }",
            &format!("transport = {{ cc = \"tfrc\", {keys} }}"),
        )
    };
    assert_refused(
        &transport("conns = 0"),
        24,
        &["flow[0].transport.conns", "1..=64"],
    );
    assert_refused(&transport("conns = 2.5"), 24, &["flow[0].transport.conns"]);
    assert_refused(
        &transport("controller = \"magic\""),
        24,
        &["flow[0].transport.controller", "\"magic\"", "adaptive"],
    );
    assert_refused(
        &transport("gamma = 20"),
        24,
        &["flow[0].transport.gamma", "[0, 10]"],
    );
    assert_refused(
        &transport("queue_packets = -1"),
        24,
        &["flow[0].transport.queue_packets", "[0, 1000]"],
    );
    assert_refused(
        &transport("startup = 1"),
        24,
        &["flow[0].transport.startup"],
    );
    assert_refused(
        &transport("policy = \"random\""),
        24,
        &["flow[0].transport.policy", "gop-interleave"],
    );
    assert_refused(
        &transport("start_offset = \"soon\""),
        24,
        &["flow[0].transport.start_offset"],
    );
    assert_refused(
        &transport("rtt_min_lifetime = \"0s\""),
        24,
        &["flow[0].transport.rtt_min_lifetime"],
    );
    // Only DCCP transports take them.
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"tcp-newreno\", conns = 2 }",
        ),
        24,
        &["flow[0].transport.conns", "unknown key"],
    );
    assert_refused(
        &replaced(
            "delay = \"20ms\"",
            "delay = \"20ms\"\ndelay_change = { at = \"5s\" }",
        ),
        14,
        &["delay_change", "`delay`"],
    );
}

#[test]
fn media_tables_are_checked() {
    let media = |table: &str| format!("{BASE}media = {table}\n");
    assert_refused(
        &media("{ trace = \"x.trace\" }"),
        25,
        &["flow[0].media.source", "missing required key `source`"],
    );
    assert_refused(
        &media("{ source = \"generated\", fsp = 25 }"),
        25,
        &["flow[0].media.fsp", "unknown key `fsp`", "fps"],
    );
    assert_refused(
        &media("{ source = \"clip.mp4\" }"),
        25,
        &["flow[0].media.source", "clip.mp4", ".264"],
    );
    assert_refused(
        &media("{ source = \"generated\", mode = \"live\" }"),
        25,
        &["flow[0].media.mode", "fixed `startup_delay`"],
    );
    assert_refused(
        &media("{ source = \"generated\", mode = \"broadcast\" }"),
        25,
        &["flow[0].media.mode", "\"broadcast\""],
    );
    assert_refused(
        &media("{ source = \"generated\", startup_delay = \"soon\" }"),
        25,
        &["flow[0].media.startup_delay"],
    );
    assert_refused(
        &media("{ source = \"generated\", player = \"freeze\" }"),
        25,
        &["flow[0].media.player", "\"freeze\"", "\"rebuffer\""],
    );
    assert_refused(
        &media("{ source = \"generated\", player = \"rebuffer\", refill = \"lots\" }"),
        25,
        &["flow[0].media.refill"],
    );
    assert_refused(
        &media("{ source = \"generated\", refill = \"1s\" }"),
        25,
        &["flow[0].media.refill", "player = \"rebuffer\""],
    );
    assert_refused(
        &media("{ source = \"generated\", player = \"drop\", refill = \"1s\" }"),
        25,
        &["flow[0].media.refill"],
    );
    assert_refused(
        &media(
            "{ source = \"generated\", mode = \"live\", startup_delay = \"2s\", \
             player = \"rebuffer\" }",
        ),
        25,
        &["flow[0].media.player", "on-demand"],
    );
    assert_refused(
        &media("{ source = \"generated\", width = 351 }"),
        25,
        &["flow[0].media.width", "even"],
    );
    assert_refused(
        &media("{ source = \"clip.264\", gop = 12 }"),
        25,
        &["flow[0].media.gop", "generated"],
    );
    assert_refused(
        &media("{ source = \"generated\", fps = 0 }"),
        25,
        &["flow[0].media.fps"],
    );
    assert_refused(
        &replaced(
            "transport = { cc = \"tfrc\" }",
            "transport = { cc = \"cbr\", rate = \"1mbit\" }\nmedia = { source = \"generated\" }",
        ),
        25,
        &["flow[0].media", "DCCP transport", "RTP over TCP", "not cbr"],
    );
}

#[test]
fn toml_syntax_errors_point_at_the_line() {
    assert_refused(&replaced("rate = \"5mbit\"", "rate = \"5mbit"), 12, &[]);
    assert_refused(&replaced("[[flow]]", "[[flow]"), 20, &[]);
}

#[test]
fn missing_file_is_a_read_error() {
    let err = Scenario::from_file("/nonexistent/fairstream.toml").expect_err("missing");
    assert!(matches!(err, ScenarioError::Read { .. }));
    assert!(err.to_string().contains("/nonexistent/fairstream.toml"));
}

/// One way to damage a scenario.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    ReplaceChar(usize, char),
    InsertChar(usize, char),
    DeleteChar(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop::sample::select(vec![
        '"', '=', '[', ']', '{', '}', ',', '.', '-', '0', '9', 'x', ' ', '\n', '#', 'é', '\'',
    ]);
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), interesting.clone()).prop_map(|(i, c)| Mutation::ReplaceChar(i, c)),
        (any::<usize>(), interesting).prop_map(|(i, c)| Mutation::InsertChar(i, c)),
        any::<usize>().prop_map(Mutation::DeleteChar),
    ]
}

fn apply(text: &str, mutation: &Mutation) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut chars: Vec<char> = text.chars().collect();
    match *mutation {
        Mutation::DeleteLine(i) | Mutation::DuplicateLine(i) if lines.is_empty() => {
            let _ = i;
            text.to_owned()
        }
        Mutation::DeleteLine(i) => {
            let i = i % lines.len();
            let kept: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, l)| *l)
                .collect();
            kept.join("\n")
        }
        Mutation::DuplicateLine(i) => {
            let i = i % lines.len();
            let mut out: Vec<&str> = lines.clone();
            out.insert(i, lines[i]);
            out.join("\n")
        }
        Mutation::ReplaceChar(i, c) if !chars.is_empty() => {
            let i = i % chars.len();
            chars[i] = c;
            chars.into_iter().collect()
        }
        Mutation::InsertChar(i, c) => {
            let i = i % (chars.len() + 1);
            chars.insert(i, c);
            chars.into_iter().collect()
        }
        Mutation::DeleteChar(i) if !chars.is_empty() => {
            chars.remove(i % chars.len());
            chars.into_iter().collect()
        }
        Mutation::ReplaceChar(..) | Mutation::DeleteChar(_) => text.to_owned(),
    }
}

const SEEDS: [&str; 3] = [
    BASE,
    include_str!("../../../experiments/examples/wireless-last-hop.toml"),
    include_str!("../../../experiments/examples/cbr-over-lossy-link.toml"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Mangled scenarios are accepted or refused, never a panic, and a
    /// refusal always names the file and a line.
    #[test]
    fn mutations_never_panic(
        seed in 0..SEEDS.len(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let mut text = SEEDS[seed].to_owned();
        for m in &mutations {
            text = apply(&text, m);
        }
        if let Err(e) = Scenario::from_str(&text, "mutant.toml") {
            let message = e.to_string();
            prop_assert!(message.starts_with("mutant.toml, line "), "{}", message);
        }
    }
}

#[test]
fn missing_run_table_is_named() {
    assert_refused("", 1, &["missing field `run`"]);
    assert_refused("[[node]]\nname = \"a\"\n", 1, &["missing field `run`"]);
}

/// Absurd values are refused at parse time with the maximum (issue 13: a
/// link rate of `1e30bit` ran forever and grew memory without bound).
#[test]
fn values_beyond_the_documented_maxima_are_refused() {
    assert_refused(
        &replaced("rate = \"5mbit\"", "rate = \"1e30bit\""),
        12,
        &["link[0]", "rate", "100 Gbit/s"],
    );
    assert_refused(
        &replaced("duration = \"60s\"", "duration = \"25h\""),
        2,
        &["run.duration", "one day"],
    );
    assert_refused(
        &replaced("packets = 50", "packets = 1000000000000"),
        14,
        &["packets", "maximum"],
    );
    // RED's limit, given or the default 2·max_th (the `scenario` fuzz
    // target's regression input).
    let red = |keys: &str| {
        replaced(
            "kind = \"droptail\", packets = 50",
            &format!("kind = \"red\", min_th = 5, max_p = 0.1, {keys}"),
        )
    };
    assert_refused(
        &red("max_th = 15, limit_packets = 1000000000"),
        14,
        &["limit_packets", "maximum"],
    );
    assert_refused(&red("max_th = 1e9"), 14, &["limit_packets", "maximum"]);
    assert!(Scenario::from_str(&red("max_th = 8000000"), "ok.toml").is_ok());
}
