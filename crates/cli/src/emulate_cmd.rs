//! `fairstream emulate`: forward UDP between two addresses through the
//! simulator's link model, on the real clock (`fairstream_net::emulate`).
//!
//! ```text
//! fairstream emulate --listen 127.0.0.1:7000 --to 127.0.0.1:9000 --rate 2mbit --delay 40ms \
//!                    --queue 50 --loss ge:0.95,0.94,0.01,0.05
//! ```

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use fairstream_net::emulate::{
    self, DirectionConfig, DirectionStats, Emulator, EmulatorConfig, EmulatorStats,
};
use fairstream_proto::units::Rate;
use fairstream_sim::link::Capacity;
use fairstream_sim::loss::LossConfig;
use fairstream_sim::queue::QueueConfig;
use fairstream_sim::trace::Trace;
use serde::Serialize;

/// Arguments of `fairstream emulate`.
///
/// Every link option shapes the forward direction (client → --to) only,
/// unless its --back-… twin is given, with one exception: --delay is a
/// property of the path and applies both ways, so the round trip grows by
/// twice the delay, unless --back-delay says otherwise. Without --back-rate
/// or --trace-back the backward direction has no capacity limit and no queue;
/// without --back-loss it loses nothing.
#[derive(Debug, Args)]
pub(crate) struct EmulateArgs {
    /// Address to receive the clients' datagrams on (ADDR:PORT; port 0 picks a free one).
    #[arg(long, value_name = "ADDR:PORT", value_parser = parse_address)]
    listen: SocketAddr,

    /// Address to forward them to; its replies go back to the client they answer.
    #[arg(long, value_name = "ADDR:PORT", value_parser = parse_address)]
    to: SocketAddr,

    /// Forward capacity (2mbit, 250kbit, 125kB/s) [default: unlimited].
    #[arg(long, value_name = "RATE", value_parser = rate, conflicts_with = "trace_forward")]
    rate: Option<Rate>,

    /// Forward capacity from a mahimahi trace file (one millisecond offset a
    /// line, each a 1504-byte delivery opportunity; the trace loops).
    #[arg(long, value_name = "FILE")]
    trace_forward: Option<PathBuf>,

    /// One-way propagation delay (40ms), both directions unless --back-delay.
    #[arg(long, value_name = "DURATION", value_parser = delay, default_value = "0ms")]
    delay: Duration,

    /// Forward queue: packets (50), bytes (64kB) or RED (red:MIN_TH,MAX_TH,MAX_P or
    /// red:MIN_TH,MAX_TH,MAX_P,LIMIT; thresholds in packets) [default: 100 packets;
    /// needs --rate or --trace-forward].
    #[arg(long, value_name = "QUEUE", value_parser = queue)]
    queue: Option<QueueConfig>,

    /// Forward channel loss: none, 2% or 0.02 (Bernoulli), ge:p_good_good,p_bad_bad,loss_good,loss_bad
    /// (Gilbert-Elliott, e.g. ge:0.95,0.94,0.01,0.05).
    #[arg(long, value_name = "LOSS", value_parser = loss, default_value = "none")]
    loss: LossConfig,

    /// Backward capacity [default: unlimited].
    #[arg(long, value_name = "RATE", value_parser = rate, conflicts_with = "trace_back")]
    back_rate: Option<Rate>,

    /// Backward capacity from a mahimahi trace file.
    #[arg(long, value_name = "FILE")]
    trace_back: Option<PathBuf>,

    /// Backward one-way delay [default: --delay].
    #[arg(long, value_name = "DURATION", value_parser = delay)]
    back_delay: Option<Duration>,

    /// Backward queue, as --queue [default: 100 packets; needs --back-rate or --trace-back].
    #[arg(long, value_name = "QUEUE", value_parser = queue)]
    back_queue: Option<QueueConfig>,

    /// Backward channel loss, as --loss [default: none].
    #[arg(long, value_name = "LOSS", value_parser = loss)]
    back_loss: Option<LossConfig>,

    /// Cut the link, both directions, from START for LENGTH after the
    /// emulator started (10s+5s): every datagram is dropped meanwhile, as
    /// when a radio link goes. May be given more than once.
    #[arg(long, value_name = "START+LENGTH", value_parser = outage)]
    outage: Vec<emulate::Outage>,

    /// Header bytes counted on the link for every datagram, both directions
    /// (28: IPv4 + UDP).
    #[arg(long, value_name = "BYTES", default_value_t = 28)]
    overhead: u32,

    /// Seed of the loss models and RED.
    #[arg(long, value_name = "N", default_value_t = emulate::DEFAULT_SEED)]
    seed: u64,

    /// Client addresses remembered at once (each gets its own upstream socket
    /// and thread). A newcomer never displaces a client the upstream has
    /// answered; it takes the place of an idle client, or of one that no
    /// answer has come back for within a second, or its datagrams are dropped.
    #[arg(long, value_name = "N", default_value_t = emulate::DEFAULT_MAX_CLIENTS,
          value_parser = max_clients)]
    max_clients: usize,

    /// Forget a client when nothing has crossed for it, either way, for this
    /// long (1s to 24h).
    #[arg(long, value_name = "DURATION", value_parser = client_idle, default_value = "60s")]
    client_idle: Duration,

    /// Interval of the live statistics on stderr.
    #[arg(long, value_name = "INTERVAL", value_parser = positive_duration, default_value = "1s")]
    stats: Duration,

    /// No live statistics and no summary on stderr.
    #[arg(long)]
    quiet: bool,

    /// Also write the statistics, one JSON object a line, to FILE (`-`:
    /// standard output).
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,

    /// Stop after this long [default: until Ctrl-C or SIGTERM].
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    duration: Option<Duration>,
}

fn parse_address(text: &str) -> Result<SocketAddr, String> {
    let mut addresses = text
        .to_socket_addrs()
        .map_err(|e| format!("`{text}` is not an ADDR:PORT address: {e}"))?;
    addresses
        .next()
        .ok_or_else(|| format!("`{text}` resolves to no address"))
}

/// The most clients with an upstream socket and a thread each.
const MAX_CLIENTS_LIMIT: usize = 4096;

fn max_clients(text: &str) -> Result<usize, String> {
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_CLIENTS_LIMIT).contains(n))
        .ok_or_else(|| format!("`{text}` must be a whole number from 1 to {MAX_CLIENTS_LIMIT}"))
}

fn rate(text: &str) -> Result<Rate, String> {
    emulate::parse_rate(text).map_err(|e| e.to_string())
}

fn delay(text: &str) -> Result<Duration, String> {
    emulate::parse_delay(text).map_err(|e| e.to_string())
}

fn positive_duration(text: &str) -> Result<Duration, String> {
    emulate::parse_positive_duration(text).map_err(|e| e.to_string())
}

fn client_idle(text: &str) -> Result<Duration, String> {
    emulate::parse_client_idle(text).map_err(|e| e.to_string())
}

fn queue(text: &str) -> Result<QueueConfig, String> {
    emulate::parse_queue(text).map_err(|e| e.to_string())
}

fn loss(text: &str) -> Result<LossConfig, String> {
    emulate::parse_loss(text).map_err(|e| e.to_string())
}

fn outage(text: &str) -> Result<emulate::Outage, String> {
    emulate::parse_outage(text).map_err(|e| e.to_string())
}

/// The capacity from a rate or a trace file (named by `option` in errors).
fn capacity(
    rate: Option<Rate>,
    trace: Option<&PathBuf>,
    option: &str,
) -> anyhow::Result<Option<Capacity>> {
    Ok(match (rate, trace) {
        (Some(rate), _) => Some(Capacity::Fixed(rate)),
        (None, Some(path)) => Some(Capacity::Trace(
            Trace::from_file(path).with_context(|| format!("{option} {}", path.display()))?,
        )),
        (None, None) => None,
    })
}

/// The emulator's configuration from the arguments.
fn config(args: &EmulateArgs) -> anyhow::Result<EmulatorConfig> {
    let forward_capacity = capacity(args.rate, args.trace_forward.as_ref(), "--trace-forward")?;
    let back_capacity = capacity(args.back_rate, args.trace_back.as_ref(), "--trace-back")?;
    if forward_capacity.is_none() && args.queue.is_some() {
        bail!("--queue needs a capacity to queue behind: give --rate or --trace-forward");
    }
    if back_capacity.is_none() && args.back_queue.is_some() {
        bail!("--back-queue needs a capacity to queue behind: give --back-rate or --trace-back");
    }
    let mut config = EmulatorConfig::new(args.listen, args.to);
    config.forward = DirectionConfig {
        capacity: forward_capacity,
        delay: args.delay,
        overhead_bytes: args.overhead,
        queue: args.queue.unwrap_or(emulate::DEFAULT_QUEUE),
        loss: args.loss,
        outages: args.outage.clone(),
        ..DirectionConfig::default()
    };
    config.backward = DirectionConfig {
        capacity: back_capacity,
        delay: args.back_delay.unwrap_or(args.delay),
        overhead_bytes: args.overhead,
        queue: args.back_queue.unwrap_or(emulate::DEFAULT_QUEUE),
        loss: args.back_loss.unwrap_or(LossConfig::None),
        outages: args.outage.clone(),
        ..DirectionConfig::default()
    };
    config.seed = args.seed;
    config.max_clients = args.max_clients;
    config.client_idle = args.client_idle;
    Ok(config)
}

/// One direction's line of statistics over an interval.
#[derive(Debug, Serialize)]
struct DirectionReport {
    received_packets: u64,
    sent_packets: u64,
    sent_bytes: u64,
    queue_drops: u64,
    channel_losses: u64,
    outage_drops: u64,
    overflow_drops: u64,
    unroutable: u64,
    send_errors: u64,
    queue_packets: usize,
    queue_bytes: u64,
    in_flight_packets: usize,
    /// Payload bits sent per second over the last interval.
    throughput_bits_per_s: f64,
    lateness_mean_us: f64,
    lateness_max_us: f64,
}

impl DirectionReport {
    fn new(now: &DirectionStats, before: &DirectionStats, interval: Duration) -> DirectionReport {
        let seconds = interval.as_secs_f64();
        let bytes = now.sent_bytes.saturating_sub(before.sent_bytes) as f64;
        DirectionReport {
            received_packets: now.received_packets,
            sent_packets: now.sent_packets,
            sent_bytes: now.sent_bytes,
            queue_drops: now.queue_drops,
            channel_losses: now.channel_losses,
            outage_drops: now.outage_drops,
            overflow_drops: now.overflow_drops,
            unroutable: now.unroutable,
            send_errors: now.send_errors,
            queue_packets: now.queue_len_packets,
            queue_bytes: now.queue_len_bytes,
            in_flight_packets: now.in_flight_packets,
            throughput_bits_per_s: if seconds > 0.0 {
                8.0 * bytes / seconds
            } else {
                0.0
            },
            lateness_mean_us: now.lateness_mean().as_secs_f64() * 1e6,
            lateness_max_us: now.lateness_max.as_secs_f64() * 1e6,
        }
    }

    fn line(&self) -> String {
        format!(
            "in {} out {} {} queue {} pkt drops {} lost {}{}",
            self.received_packets,
            self.sent_packets,
            Rate::from_bits_per_sec(self.throughput_bits_per_s),
            self.queue_packets,
            self.queue_drops + self.overflow_drops,
            self.channel_losses,
            if self.outage_drops > 0 {
                format!(" cut {}", self.outage_drops)
            } else {
                String::new()
            },
        )
    }
}

/// One line of statistics.
#[derive(Debug, Serialize)]
struct Report {
    elapsed_s: f64,
    forward: DirectionReport,
    backward: DirectionReport,
    clients: usize,
    clients_evicted: u64,
    clients_expired: u64,
    refused_datagrams: u64,
    upstream_threads: usize,
    upstream_threads_max: usize,
}

impl Report {
    fn new(now: &EmulatorStats, before: &EmulatorStats) -> Report {
        let interval = now.elapsed.saturating_sub(before.elapsed);
        Report {
            elapsed_s: now.elapsed.as_secs_f64(),
            forward: DirectionReport::new(&now.forward, &before.forward, interval),
            backward: DirectionReport::new(&now.backward, &before.backward, interval),
            clients: now.clients,
            clients_evicted: now.clients_evicted,
            clients_expired: now.clients_expired,
            refused_datagrams: now.refused_datagrams,
            upstream_threads: now.upstream_threads,
            upstream_threads_max: now.upstream_threads_max,
        }
    }

    /// The client table's counters, for the summary.
    fn clients_line(&self) -> String {
        format!(
            "{} now, {} expired idle, {} never answered displaced, {} datagrams of newcomers \
             refused; {} upstream threads at most",
            self.clients,
            self.clients_expired,
            self.clients_evicted,
            self.refused_datagrams,
            self.upstream_threads_max,
        )
    }
}

/// Where the statistics go.
struct Output {
    quiet: bool,
    json: Option<BufWriter<Box<dyn Write>>>,
    last: EmulatorStats,
}

impl Output {
    /// Writes the statistics of the interval that ends `now`; on stderr too
    /// if `live`.
    fn report(&mut self, now: EmulatorStats, live: bool) -> anyhow::Result<()> {
        let report = Report::new(&now, &self.last);
        self.last = now;
        if live && !self.quiet {
            eprintln!(
                "[{:7.1}s] forward: {} | backward: {}",
                report.elapsed_s,
                report.forward.line(),
                report.backward.line()
            );
        }
        if let Some(json) = &mut self.json {
            serde_json::to_writer(&mut *json, &report)?;
            writeln!(json)?;
            json.flush()?;
        }
        Ok(())
    }
}

/// How often the main thread looks at the clock, the signals and the
/// emulator while it runs.
const TICK: Duration = Duration::from_millis(20);

/// Runs `fairstream emulate`.
pub(crate) fn run(args: &EmulateArgs) -> anyhow::Result<()> {
    let config = config(args)?;
    let json = match &args.stats_json {
        Some(path) if path.as_os_str() == "-" => {
            Some(BufWriter::new(Box::new(std::io::stdout()) as Box<dyn Write>))
        }
        Some(path) => Some(BufWriter::new(Box::new(
            File::create(path)
                .with_context(|| format!("--stats-json: cannot create {}", path.display()))?,
        ) as Box<dyn Write>)),
        None => None,
    };
    // The first Ctrl-C or SIGTERM stops the emulator; a second exits at once.
    let interrupted = fairstream_net::signal::stop_on_signal().map_err(anyhow::Error::msg)?;
    let emulator = Emulator::bind(config)?;
    if !args.quiet {
        eprintln!(
            "emulate: listening on {}, forwarding to {}",
            emulator.local_addr(),
            args.to
        );
    }
    let handle = emulator.spawn()?;
    let mut output = Output {
        quiet: args.quiet,
        json,
        last: handle.stats(),
    };
    let mut next_report = args.stats;
    loop {
        thread::sleep(TICK);
        let stats = handle.stats();
        if interrupted.load(Ordering::Relaxed)
            || !handle.is_running()
            || args.duration.is_some_and(|d| stats.elapsed >= d)
        {
            break;
        }
        if stats.elapsed >= next_report {
            output.report(stats, true)?;
            while next_report <= stats.elapsed {
                next_report += args.stats;
            }
        }
    }
    let total = handle.stop()?;
    output.report(total, false)?;
    if !args.quiet {
        let summary = Report::new(&total, &EmulatorStats::default());
        eprintln!(
            "emulate: total over {:.1}s: forward: {} | backward: {}",
            summary.elapsed_s,
            summary.forward.line(),
            summary.backward.line()
        );
        eprintln!("emulate: clients: {}", summary.clients_line());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use fairstream_sim::queue::Limit;

    use super::*;

    #[derive(Debug, Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: EmulateArgs,
    }

    fn configured(extra: &[&str]) -> EmulatorConfig {
        let base = ["emulate", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:9"];
        let wrapper = Wrapper::try_parse_from(base.iter().chain(extra)).unwrap();
        config(&wrapper.args).unwrap()
    }

    #[test]
    fn forward_options_leave_the_backward_direction_unlimited_but_delayed() {
        let config = configured(&[
            "--rate", "2mbit", "--delay", "40ms", "--queue", "50", "--loss", "2%",
        ]);
        assert_eq!(
            config.forward.capacity,
            Some(Capacity::Fixed(Rate::from_bits_per_sec(2e6)))
        );
        assert_eq!(config.forward.delay, Duration::from_millis(40));
        assert_eq!(
            config.forward.queue,
            QueueConfig::DropTail {
                limit: Limit::Packets(50)
            }
        );
        assert_eq!(config.forward.loss, LossConfig::Bernoulli { p: 0.02 });
        assert_eq!(config.backward.capacity, None);
        assert_eq!(config.backward.delay, Duration::from_millis(40));
        assert_eq!(config.backward.loss, LossConfig::None);
        assert_eq!((config.seed, config.forward.overhead_bytes), (1, 28));
        assert_eq!(config.client_idle, emulate::DEFAULT_CLIENT_IDLE);
    }

    #[test]
    fn client_idle_is_parsed_within_its_range() {
        let config = configured(&["--client-idle", "5min", "--max-clients", "8"]);
        assert_eq!(config.client_idle, Duration::from_secs(300));
        assert_eq!(config.max_clients, 8);
        let base = ["emulate", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:9"];
        for bad in ["500ms", "2d", "60"] {
            let extra = ["--client-idle", bad];
            let error = Wrapper::try_parse_from(base.iter().chain(&extra))
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("--client-idle") && error.contains(bad),
                "{error}"
            );
        }
    }

    #[test]
    fn back_twins_shape_the_backward_direction() {
        let config = configured(&[
            "--delay",
            "40ms",
            "--back-rate",
            "250kbit",
            "--back-delay",
            "5ms",
            "--back-queue",
            "16kB",
            "--back-loss",
            "ge:0.95,0.94,0.01,0.05",
            "--seed",
            "7",
        ]);
        assert_eq!(config.forward.capacity, None);
        assert_eq!(config.forward.loss, LossConfig::None);
        assert_eq!(
            config.backward.capacity,
            Some(Capacity::Fixed(Rate::from_bits_per_sec(250e3)))
        );
        assert_eq!(config.backward.delay, Duration::from_millis(5));
        assert_eq!(
            config.backward.queue,
            QueueConfig::DropTail {
                limit: Limit::Bytes(16_000)
            }
        );
        assert_eq!(config.backward.loss, LossConfig::PAPER_000);
        assert_eq!(config.seed, 7);
    }
}
