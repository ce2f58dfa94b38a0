//! `fairstream relay`: paper 003's proxy over real sockets
//! (`fairstream_net::relay`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use fairstream_net::relay::{RelayConfig, RelayError, MIN_BUFFER_BYTES};
use fairstream_proto::units::{Bytes, UnitError};

use crate::stream_cmd::{apply_passphrase_file, parse_positive_duration, parse_url, StatsArgs};

/// `fairstream relay`.
#[derive(Debug, Args)]
pub(crate) struct RelayArgs {
    /// Where the upstream sender connects: dccp://:PORT (or
    /// dccp://ADDRESS:PORT), options cc, max_packet, peer_timeout, arq and
    /// passphrase
    /// (as for recv: the upstream sender counts as gone, and the buffer is
    /// drained downstream, when silent this long once its data began;
    /// auto, the default, is 8 smoothed RTTs, at least 4 s; arq, on by
    /// default, asks the sender again for what was lost)
    listen: String,
    /// Where the stream goes on, with the downstream transport: any
    /// sender URL, e.g. dccp://HOST:PORT?cc=tfrc&conns=4 (peer_timeout and
    /// passphrase as for send; each side may have its own passphrase)
    downstream: String,
    /// The proxy buffer between the two sides (8MB, 512kB, 16MiB); when
    /// full, the oldest P and B frames are dropped first
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = parse_buffer)]
    buffer: u64,
    /// Stop after this long
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    duration: Option<Duration>,
    /// Give up when no downstream connection opened within this
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_positive_duration)]
    handshake_timeout: Duration,
    /// Read the passphrase from this file (one line) for both sides, rather
    /// than passphrase= in the URLs (which other users can see in the
    /// process list); a URL with its own passphrase= is an error then
    #[arg(long, value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
    #[command(flatten)]
    stats: StatsArgs,
}

fn parse_buffer(text: &str) -> Result<u64, String> {
    let bytes: Bytes = text.parse().map_err(|e: UnitError| e.to_string())?;
    if bytes.0 < MIN_BUFFER_BYTES {
        return Err(format!(
            "`{text}` is smaller than the least buffer, {MIN_BUFFER_BYTES} bytes (64KiB)"
        ));
    }
    Ok(bytes.0)
}

/// Runs `fairstream relay`.
pub(crate) fn run(args: &RelayArgs) -> Result<()> {
    let mut listen = parse_url(&args.listen).context("the listening URL")?;
    let mut downstream = parse_url(&args.downstream).context("the downstream URL")?;
    let file = args.passphrase_file.as_deref();
    apply_passphrase_file(&mut listen, file, "the listening URL")?;
    apply_passphrase_file(&mut downstream, file, "the downstream URL")?;
    let mut config = RelayConfig::new(listen, downstream);
    config.buffer_bytes = args.buffer;
    config.duration = args.duration;
    config.handshake_timeout = args.handshake_timeout;
    config.stats = args.stats.config();
    let stats_to_stdout = config.stats.to_stdout();
    let stop = fairstream_net::signal::stop_on_signal().map_err(anyhow::Error::msg)?;
    let result = fairstream_net::relay::run(config, stop);
    // A relay whose upstream stream failed has a summary too, before the
    // error.
    let report = match &result {
        Ok(report) => Some(report),
        Err(RelayError::UpstreamStream { report, .. }) => Some(report.as_ref()),
        Err(_) => None,
    };
    if let Some(report) = report {
        let line = serde_json::to_string(report).context("summary")?;
        crate::stream_cmd::print_summary(&line, stats_to_stdout);
    }
    result?;
    Ok(())
}
