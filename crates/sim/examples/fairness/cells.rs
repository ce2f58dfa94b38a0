//! The cells of the fairness matrix (issue 11): scenario builders and the
//! measurement of one cell, shared by the `fairness` example and
//! `crates/sim/tests/fairness.rs`.

#![allow(dead_code, unreachable_pub, missing_docs)] // a module shared by an example and a test; each takes what it needs

use std::path::PathBuf;

use fairstream_sim::runner::Simulation;
use fairstream_sim::scenario::Scenario;

/// What every cell shares: the seed, the stream's controller, and where to
/// write the scenario files (if anywhere).
#[derive(Clone, Debug)]
pub struct Setup {
    /// The scenarios' seed.
    pub seed: u64,
    /// The stream's controller (`none`: one plain TFRC flow).
    pub controller: String,
    /// A folder for every cell's scenario files.
    pub dump: Option<PathBuf>,
    /// The TCP of the cross traffic (and of the flow that replaces the
    /// stream): `newreno` (the papers' baseline, no SACK), `newreno-sack`
    /// or `cubic` (RFC 9438 with HyStart++ and SACK, Linux's default).
    pub tcp: String,
}

/// The cross traffic's TCP names [`Setup::tcp`] takes.
pub const TCPS: [&str; 3] = ["newreno", "newreno-sack", "cubic"];

impl Setup {
    /// The transport table of a TCP flow (`ecn`: ECN-capable).
    fn tcp_transport(&self, ecn: bool) -> String {
        let cc = match self.tcp.as_str() {
            "cubic" => "cc = \"tcp-cubic\"",
            "newreno-sack" => "cc = \"tcp-newreno\", sack = true",
            _ => "cc = \"tcp-newreno\"",
        };
        let ecn = if ecn { ", ecn = true" } else { "" };
        format!("transport = {{ {cc}, min_rto = \"200ms\"{ecn} }}")
    }
}

/// Application payload of the stream's datagrams.
pub const PAYLOAD: f64 = 1460.0;
/// Wire bytes of one of the stream's packets: payload, 4 bytes of session
/// header, 16 of DCCP header and 28 of UDP/IP (the link overhead), as the
/// simulator counts them (1508 B; measured: a lossy 5 Mbit/s hop carried
/// 4,947 kbit/s of wire bits for 4,789 kbit/s of payload).
pub const WIRE: f64 = PAYLOAD + 48.0;

pub fn stream_transport(controller: &str) -> String {
    if controller == "none" {
        "transport = { cc = \"tfrc\" }".to_owned()
    } else {
        format!("transport = {{ cc = \"tfrc\", controller = \"{controller}\" }}")
    }
}

// ---------------------------------------------------------------- full ----

#[derive(Clone, Copy, Debug)]
pub enum Channel {
    Bernoulli,
    GilbertElliott,
    Trace(&'static str),
}

impl Channel {
    pub fn name(self) -> String {
        match self {
            Channel::Bernoulli => "Bernoulli".to_owned(),
            Channel::GilbertElliott => "Gilbert-Elliott".to_owned(),
            Channel::Trace(file) => format!("trace {file}"),
        }
    }

    /// The `loss` table of the hop, and its mean capacity in bit/s.
    pub fn loss(self, bw_bps: f64, p: f64) -> Result<(String, f64), String> {
        Ok(match self {
            Channel::Bernoulli => (
                format!("loss = {{ kind = \"bernoulli\", p = {p} }}"),
                bw_bps,
            ),
            Channel::GilbertElliott => {
                // Good state loses nothing, the bad state half its packets
                // and lasts 10 packets on average; the bad state's share
                // 2·p_w gives a mean loss of p_w.
                let bad_share = 2.0 * p;
                let p_bb = 0.9;
                let p_gb = bad_share * (1.0 - p_bb) / (1.0 - bad_share);
                (
                    format!(
                        "loss = {{ kind = \"gilbert-elliott\", p_good_good = {}, p_bad_bad = {p_bb}, loss_good = 0.0, loss_bad = 0.5 }}",
                        1.0 - p_gb
                    ),
                    bw_bps,
                )
            }
            Channel::Trace(file) => {
                let path = shared_trace(file);
                let mean = trace_mean_bps(&path)?;
                (
                    format!(
                        "loss = {{ kind = \"trace\", up = \"{}\", down = \"{}\" }}",
                        path.display(),
                        path.display()
                    ),
                    mean,
                )
            }
        })
    }
}

pub fn shared_trace(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/traces")
        .join(file)
}

/// A mahimahi trace's mean capacity: 1504 bytes per delivery opportunity
/// over its span.
pub fn trace_mean_bps(path: &PathBuf) -> Result<f64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (the traces are in ../shared/data beside the repository)",
            path.display()
        )
    })?;
    let stamps: Vec<u64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    match stamps.last() {
        Some(&last) if last > 0 => Ok(stamps.len() as f64 * 1504.0 * 8.0 / (last as f64 / 1000.0)),
        _ => Err(format!("{}: no delivery opportunities", path.display())),
    }
}

#[derive(Clone, Debug)]
pub struct FullCell {
    pub bw_mbit: f64,
    pub p: f64,
    pub rtt_ms: u64,
    pub channel: Channel,
    pub duration_s: u64,
}

impl FullCell {
    pub fn scenario(&self, setup: &Setup) -> Result<(String, f64), String> {
        let bw = self.bw_mbit * 1e6;
        let hop_delay = (self.rtt_ms as f64 / 4.0).min(5.0);
        let wired_delay = self.rtt_ms as f64 / 2.0 - hop_delay;
        let (loss, capacity) = self.channel.loss(bw, self.p)?;
        // The hop's buffer: one BDP at its (mean) capacity, at least 20
        // packets.
        let bdp = (capacity * self.rtt_ms as f64 / 1000.0 / 8.0 / WIRE).ceil() as u64;
        let rate = match self.channel {
            Channel::Trace(_) => String::new(),
            _ => format!("rate = \"{}kbit\"\n", (bw / 1e3).round()),
        };
        let text = format!(
            "[run]\nduration = \"{}s\"\nseed = {}\n\
             [[node]]\nname = \"server\"\n[[node]]\nname = \"bs\"\n[[node]]\nname = \"client\"\n\
             [[link]]\nbetween = [\"server\", \"bs\"]\nrate = \"1gbit\"\ndelay = \"{wired_delay}ms\"\n\
             queue = {{ kind = \"droptail\", packets = 10000 }}\n\
             [[link]]\nbetween = [\"bs\", \"client\"]\n{rate}delay = \"{hop_delay}ms\"\n\
             queue = {{ kind = \"droptail\", packets = {} }}\n{loss}\n\
             [[flow]]\nname = \"stream\"\nfrom = \"server\"\nto = \"client\"\n{}\n",
            self.duration_s,
            setup.seed,
            bdp.max(20),
            stream_transport(&setup.controller)
        );
        let ideal = match self.channel {
            Channel::Trace(_) => capacity * PAYLOAD / WIRE,
            _ => capacity * (1.0 - self.p) * PAYLOAD / WIRE,
        };
        Ok((text, ideal))
    }
}

#[derive(Clone, Debug, Default)]
pub struct FullResult {
    pub share: f64,
    pub reach_s: Option<f64>,
    pub congestion_loss: f64,
    pub n_mean: Option<f64>,
}

pub fn run_full(cell: &FullCell, setup: &Setup) -> Result<FullResult, String> {
    let (text, ideal) = cell.scenario(setup)?;
    dump(
        setup,
        &format!(
            "full-{}-{}mbit-{}-{}ms.toml",
            cell.channel.name().replace(' ', "-"),
            cell.bw_mbit,
            cell.p,
            cell.rtt_ms
        ),
        &text,
    )?;
    let scenario = Scenario::from_str(&text, "full.toml").map_err(|e| e.to_string())?;
    let mut sim = Simulation::new(&scenario).map_err(|e| e.to_string())?;
    let summary = sim.run();
    let rows = &sim.series().flows[0].rows;
    let half = cell.duration_s as f64 / 2.0;
    let late: Vec<f64> = rows
        .iter()
        .filter(|r| r.time_s > half)
        .map(|r| r.throughput_bps)
        .collect();
    let goodput = late.iter().sum::<f64>() / late.len().max(1) as f64;
    // The first time a 5 s moving mean reaches 0.9 of the ideal.
    let window = 50;
    let reach_s = rows.windows(window).find_map(|w| {
        let mean = w.iter().map(|r| r.throughput_bps).sum::<f64>() / window as f64;
        (mean >= 0.9 * ideal).then(|| w[window - 1].time_s)
    });
    let flow = &summary.flows[0];
    let n: Vec<f64> = rows
        .iter()
        .filter(|r| r.time_s > half)
        .filter_map(|r| r.connections)
        .collect();
    Ok(FullResult {
        share: goodput / ideal,
        reach_s,
        congestion_loss: flow.packets_lost_congestion as f64 / flow.packets_sent.max(1) as f64,
        n_mean: (!n.is_empty()).then(|| n.iter().sum::<f64>() / n.len() as f64),
    })
}

// ---------------------------------------------------------------- fair ----

#[derive(Clone, Copy, Debug)]
pub enum QueueKind {
    DropTail10,
    Bdp1,
    Bdp4,
    Red,
    RedEcn,
    Codel,
    CodelEcn,
    FqCodel,
}

impl QueueKind {
    pub const ALL: [QueueKind; 8] = [
        QueueKind::DropTail10,
        QueueKind::Bdp1,
        QueueKind::Bdp4,
        QueueKind::Red,
        QueueKind::RedEcn,
        QueueKind::Codel,
        QueueKind::CodelEcn,
        QueueKind::FqCodel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            QueueKind::DropTail10 => "drop-tail 10",
            QueueKind::Bdp1 => "drop-tail 1 BDP",
            QueueKind::Bdp4 => "drop-tail 4 BDP",
            QueueKind::Red => "RED",
            QueueKind::RedEcn => "RED+ECN",
            QueueKind::Codel => "CoDel",
            QueueKind::CodelEcn => "CoDel+ECN",
            QueueKind::FqCodel => "FQ-CoDel",
        }
    }

    pub fn ecn(self) -> bool {
        matches!(self, QueueKind::RedEcn | QueueKind::CodelEcn)
    }

    /// The bottleneck's `queue` table for a BDP of `bdp` packets.
    pub fn table(self, bdp: u64) -> String {
        // RED: Floyd's thresholds for the BDP (min_th a quarter of it, at
        // least 5; max_th three times min_th), gentle, 4 BDP of buffer.
        let min_th = (bdp / 4).max(5);
        let red = |ecn: bool| {
            format!(
                "{{ kind = \"red\", min_th = {min_th}, max_th = {}, max_p = 0.1, gentle = true, limit_packets = {}{} }}",
                3 * min_th,
                (4 * bdp).max(4 * min_th),
                if ecn { ", ecn = true" } else { "" }
            )
        };
        match self {
            QueueKind::DropTail10 => "{ kind = \"droptail\", packets = 10 }".to_owned(),
            QueueKind::Bdp1 => format!("{{ kind = \"droptail\", packets = {} }}", bdp.max(2)),
            QueueKind::Bdp4 => format!("{{ kind = \"droptail\", packets = {} }}", 4 * bdp.max(2)),
            QueueKind::Red => red(false),
            QueueKind::RedEcn => red(true),
            QueueKind::Codel => "{ kind = \"codel\" }".to_owned(),
            QueueKind::CodelEcn => "{ kind = \"codel\", ecn = true }".to_owned(),
            QueueKind::FqCodel => "{ kind = \"fq-codel\" }".to_owned(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FairCell {
    pub bottleneck_mbit: u64,
    pub queue: QueueKind,
    pub tcp: usize,
    pub rtt_ms: u64,
    pub duration_s: u64,
}

impl FairCell {
    /// The dumbbell with `tcp` NewReno flows and the stream (or, with
    /// `stream` false, one more NewReno flow in its place). `lossy`: the
    /// stream's own last hop after the bottleneck (rate in Mbit/s, loss).
    pub fn scenario(&self, setup: &Setup, stream: bool, lossy: Option<(f64, f64)>) -> String {
        let bw = self.bottleneck_mbit as f64 * 1e6;
        let access = 1.0;
        let bottleneck_delay = self.rtt_ms as f64 / 2.0 - 2.0 * access;
        let bdp = (bw * self.rtt_ms as f64 / 1000.0 / 8.0 / 1500.0).ceil() as u64;
        let tcp = setup.tcp_transport(self.queue.ecn());
        let mut text = format!(
            "[run]\nduration = \"{}s\"\nseed = {}\n\
             [[node]]\nname = \"left\"\n[[node]]\nname = \"right\"\n[[node]]\nname = \"sink\"\n\
             [[node]]\nname = \"server\"\n[[node]]\nname = \"client\"\n\
             [[link]]\nbetween = [\"left\", \"right\"]\nrate = \"{}mbit\"\ndelay = \"{bottleneck_delay}ms\"\n\
             queue = {}\n\
             [[link]]\nbetween = [\"right\", \"sink\"]\nrate = \"10gbit\"\ndelay = \"{access}ms\"\n\
             [[link]]\nbetween = [\"server\", \"left\"]\nrate = \"10gbit\"\ndelay = \"{access}ms\"\n",
            self.duration_s,
            setup.seed,
            self.bottleneck_mbit,
            self.queue.table(bdp)
        );
        text.push_str(&match lossy {
            Some((rate, p)) => format!(
                "[[link]]\nbetween = [\"right\", \"client\"]\nrate = \"{}kbit\"\ndelay = \"{access}ms\"\n\
                 queue = {{ kind = \"droptail\", packets = 100 }}\nloss = {{ kind = \"bernoulli\", p = {p} }}\n",
                (rate * 1e3).round()
            ),
            None => format!(
                "[[link]]\nbetween = [\"right\", \"client\"]\nrate = \"10gbit\"\ndelay = \"{access}ms\"\n"
            ),
        });
        if stream {
            text.push_str(&format!(
                "[[flow]]\nname = \"stream\"\nfrom = \"server\"\nto = \"client\"\n{}\n",
                stream_transport(&setup.controller)
            ));
        } else {
            text.push_str(&format!(
                "[[flow]]\nname = \"extra-tcp\"\nfrom = \"server\"\nto = \"client\"\n{tcp}\n"
            ));
        }
        for i in 0..self.tcp {
            text.push_str(&format!(
                "[[node]]\nname = \"src{i}\"\n\
                 [[link]]\nbetween = [\"src{i}\", \"left\"]\nrate = \"10gbit\"\ndelay = \"{access}ms\"\n\
                 [[flow]]\nname = \"tcp{i}\"\nfrom = \"src{i}\"\nto = \"sink\"\nstart = \"{}ms\"\n\
                 {tcp}\n",
                100 * (i + 1)
            ));
        }
        text
    }
}

#[derive(Clone, Debug, Default)]
pub struct FairResult {
    pub ratio: f64,
    pub harm: f64,
    /// With a lossy hop after the wire: the stream's goodput over what it
    /// could have had, the smaller of the hop's B_w(1 − p_w) × payload
    /// share and the wire's fair share C/(N + 1) × 1460/1500.
    pub fill: Option<f64>,
    pub stream_mbit: f64,
    pub tcp_mbit: f64,
    pub n_mean: Option<f64>,
}

/// Mean payload throughput of each flow over the last half, bit/s.
pub fn late_goodputs(text: &str, duration_s: u64) -> Result<(Vec<f64>, Option<f64>), String> {
    let scenario = Scenario::from_str(text, "fair.toml").map_err(|e| e.to_string())?;
    let mut sim = Simulation::new(&scenario).map_err(|e| e.to_string())?;
    sim.run();
    let half = duration_s as f64 / 2.0;
    let mut n = None;
    let goodputs = sim
        .series()
        .flows
        .iter()
        .enumerate()
        .map(|(i, flow)| {
            let late: Vec<_> = flow.rows.iter().filter(|r| r.time_s > half).collect();
            if i == 0 {
                let ns: Vec<f64> = late.iter().filter_map(|r| r.connections).collect();
                n = (!ns.is_empty()).then(|| ns.iter().sum::<f64>() / ns.len() as f64);
            }
            late.iter().map(|r| r.throughput_bps).sum::<f64>() / late.len().max(1) as f64
        })
        .collect();
    Ok((goodputs, n))
}

pub fn run_fair(
    cell: &FairCell,
    setup: &Setup,
    lossy: Option<(f64, f64)>,
) -> Result<FairResult, String> {
    let name = format!(
        "{}-{}mbit-{}-{}tcp-{}ms{}",
        if lossy.is_some() { "both" } else { "fair" },
        cell.bottleneck_mbit,
        cell.queue.name().replace(' ', "-"),
        cell.tcp,
        cell.rtt_ms,
        lossy.map_or(String::new(), |(rate, p)| format!("-hop-{rate}mbit-{p}"))
    );
    let text = cell.scenario(setup, true, lossy);
    dump(setup, &format!("{name}.toml"), &text)?;
    let (with_stream, n_mean) = late_goodputs(&text, cell.duration_s)?;
    let text = cell.scenario(setup, false, lossy);
    dump(setup, &format!("{name}-baseline.toml"), &text)?;
    let (baseline, _) = late_goodputs(&text, cell.duration_s)?;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let tcp_with = mean(&with_stream[1..]);
    let tcp_without = mean(&baseline[1..]);
    let fill = lossy.map(|(rate, p)| {
        let hop = rate * 1e6 * (1.0 - p) * PAYLOAD / WIRE;
        let fair_share =
            cell.bottleneck_mbit as f64 * 1e6 / (cell.tcp as f64 + 1.0) * PAYLOAD / 1500.0;
        with_stream[0] / hop.min(fair_share)
    });
    Ok(FairResult {
        ratio: with_stream[0] / tcp_with,
        harm: 1.0 - tcp_with / tcp_without,
        fill,
        stream_mbit: with_stream[0] / 1e6,
        tcp_mbit: tcp_with / 1e6,
        n_mean,
    })
}

/// Writes a cell's scenario into `--dump DIR`, if asked.
pub fn dump(setup: &Setup, name: &str, text: &str) -> Result<(), String> {
    let Some(dir) = &setup.dump else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
}
