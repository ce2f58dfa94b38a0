//! The JSON summary of a run (the shape `fairstream simulate` prints).

use fairstream_media::proxy::BufferFigures;
use serde::Serialize;

use fairstream_proto::time::Instant;

use fairstream_media::stream::MediaReport;

use super::bursts::BurstTally;
use super::flow::{CountTally, FlowState, BIN, SERIES_BIN};
use crate::network::NetworkLink;

/// What a run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// The seed of the run.
    pub seed: u64,
    /// Simulated seconds.
    pub sim_time_s: f64,
    /// Events the engine processed.
    pub events: u64,
    /// Whether every link direction accounts for every packet it was offered
    /// exactly once (delivered, dropped by the queue, lost on the channel or
    /// still inside).
    pub conservation_ok: bool,
    /// Every packet any host sent, and what became of it.
    pub packets: PacketAccounting,
    /// One entry per flow, in scenario order.
    pub flows: Vec<FlowSummary>,
    /// One entry per link direction, in scenario order, forward first.
    pub links: Vec<LinkSummary>,
}

/// The network-wide packet accounting (issue 4, validation 4): every packet
/// a host sent was delivered to its destination host, dropped by a queue,
/// lost on a channel, or is still in flight (inside a link direction, or
/// between the far end of one hop and the next), each counted once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PacketAccounting {
    /// Packets hosts handed to the network (both directions of every flow).
    pub created: u64,
    /// Packets that reached their destination host.
    pub delivered: u64,
    /// Packets dropped by a queue.
    pub queue_drops: u64,
    /// Packets lost on a channel.
    pub channel_losses: u64,
    /// Packets inside a link direction at the end (queued, in
    /// serialisation or propagating).
    pub in_links: u64,
    /// Packets that crossed a hop and had not yet been offered to the next
    /// one or handed to their host at the end.
    pub in_flight_between_links: u64,
}

impl PacketAccounting {
    /// Whether every packet created is accounted for exactly once.
    pub fn holds(&self) -> bool {
        self.created
            == self.delivered
                + self.queue_drops
                + self.channel_losses
                + self.in_links
                + self.in_flight_between_links
    }
}

/// What one flow achieved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSummary {
    /// The flow's name.
    pub name: String,
    /// Its transport, as in the scenario file (`"tcp-newreno"`, `"cbr"`…).
    pub cc: String,
    /// Payload bits of data packets that reached the receiver (TCP
    /// retransmitted duplicates included) per second of active time
    /// (`start` to `stop` or the end of the run).
    pub throughput_bps: f64,
    /// In-order payload bits handed to the receiving application per second
    /// of active time; equal to `throughput_bps` for UDP.
    pub goodput_bps: f64,
    /// Data packets sent (TCP retransmissions included).
    pub packets_sent: u64,
    /// Data packets of this flow dropped by a queue.
    pub packets_lost_congestion: u64,
    /// Data packets of this flow lost on a channel.
    pub packets_lost_channel: u64,
    /// Data packets lost (by a queue or on a channel) per data packet
    /// sent; `null` when none was sent.
    pub packet_loss_rate: Option<f64>,
    /// TCP: loss indications (fast retransmits and timeouts) per segment
    /// sent; `null` for flows without loss events.
    pub loss_event_rate: Option<f64>,
    /// TCP: the mean SRTT over the ACKs taken, seconds; `null` for UDP.
    pub mean_rtt_s: Option<f64>,
    /// TCP with ECN: CE-marked data segments the receiver took (RFC 3168
    /// §6.1.3). Absent for other flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_ce_received: Option<u64>,
    /// TCP with ECN: the sender's window reductions for ECN-Echo, at most
    /// one per window of data (RFC 3168 §6.1.2). Absent for other flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_window_reductions: Option<u64>,
    /// Mean one-way delay of data packets, sender host to receiver host.
    pub mean_one_way_delay_s: Option<f64>,
    /// Coefficient of variation of the received rate in 1 s bins, after
    /// the first 10 % of the run and within the flow's active time; `null`
    /// with fewer than two bins or no data.
    pub rate_cov: Option<f64>,
    /// The received rate in the same 1 s bins as `rate_cov`: mean,
    /// standard deviation, least and most (paper 004's Tables 1 and 2);
    /// `null` with fewer than two bins.
    pub rate_1s: Option<RateStats>,
    /// A multi-connection flow: the mean number of open connections (over
    /// the controller's RTT samples). Absent for single-connection flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections_mean: Option<f64>,
    /// The most connections open at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections_max: Option<usize>,
    /// A multi-connection flow, per connection count from one up to the
    /// most seen (element i is i + 1 connections; paper 001 Table 2): the
    /// share of the run's 100 ms series intervals that ended with that
    /// many open, and the data packets sent and lost in them. Absent for
    /// single-connection flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_connections: Option<Vec<ConnectionsShare>>,
    /// The most datagrams the receiver's reorder buffer held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_buffer_max_packets: Option<usize>,
    /// The longest a datagram waited in the reorder buffer, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_delay_max_s: Option<f64>,
    /// A bonded flow (`via`), per path in the order of its `via`: what it
    /// carried and whether it went down. Absent for other flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<PathOutcome>>,
    /// A session flow's retransmissions and failovers (`arq`). Absent for
    /// other flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arq: Option<ArqOutcome>,
    /// A media flow's verdict: frames shown and lost by type, PSNR, SSIM,
    /// MOS, start-up delay, stalls, delay. Absent for other flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<MediaOutcome>,
    /// A `cc = "buffer"` flow: what paper 004's controller did. Absent for
    /// other flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferOutcome>,
    /// The downstream leg of a flow through a proxy node: the proxy's
    /// buffer (its most bytes held is paper 003's y). Absent for other
    /// flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy: Option<BufferFigures>,
    /// A `cc = "web"` flow: its transfers. Absent for other flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<WebOutcome>,
    /// A voice flow's call: frames played, lost and late, delays, R and
    /// MOS. Absent for other flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voice: Option<VoiceOutcome>,
}

/// What became of a voice flow's call (paper 002 §IV.B), scored with the
/// ITU-T G.107 E-model. Counts are of the call's frames whose playout time
/// came before the end of the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VoiceOutcome {
    /// The E-model codec (`g711`, `g711-plc`, `g729`).
    pub codec: String,
    /// Voice activity detection on.
    pub vad: bool,
    /// When the call started (the allowed rate reached the codec's),
    /// seconds; `null` if it never did.
    pub call_start_s: Option<f64>,
    /// Frames made before the call started, sent as probes, not scored.
    pub probe_frames: u64,
    /// Of those, the ones dropped at the sender.
    pub probe_drops: u64,
    /// The call's frames.
    pub frames: u64,
    /// Frames that reached the listener, late ones included.
    pub received: u64,
    /// Frames played: arrived by their playout time.
    pub played: u64,
    /// Frames that arrived after their playout time.
    pub late: u64,
    /// Frames that never arrived (lost on the way or dropped at the
    /// sender).
    pub lost: u64,
    /// Of those, the ones dropped at the sender (transmit buffer full).
    pub sender_drops: u64,
    /// Ppl: the frames not played (lost or late) in percent of the call's.
    pub loss_percent: f64,
    /// BurstR of the frames not played (G.107 §3.5; 1 when none was).
    pub burst_ratio: f64,
    /// Mean one-way delay of the frames received, capture to arrival
    /// (the sender's queue included), seconds.
    pub mean_network_delay_s: Option<f64>,
    /// The de-jitter buffer, seconds.
    pub jitter_buffer_s: f64,
    /// The codec's delay (20 ms of speech plus look-ahead), seconds.
    pub codec_delay_s: f64,
    /// Ta, mouth to ear: the codec's delay plus the first frame's one-way
    /// delay plus the de-jitter buffer, seconds; `null` if nothing arrived.
    pub mouth_to_ear_s: Option<f64>,
    /// R, G.107's transmission rating; `null` if nothing arrived.
    pub r: Option<f64>,
    /// MOS from R (G.107 Annex B).
    pub mos: Option<f64>,
}

/// What a `cc = "web"` flow's transfers did.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WebOutcome {
    /// Transfers started.
    pub transfers_started: u64,
    /// Transfers whose last byte was acknowledged.
    pub transfers_completed: u64,
    /// Their bytes.
    pub bytes_completed: u64,
    /// Their mean completion time, first segment sent to last byte
    /// acknowledged, seconds; `null` before the first.
    pub mean_completion_time_s: Option<f64>,
}

/// A flow's received rate over 1 s bins, bits/s.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RateStats {
    /// The bins counted.
    pub bins: usize,
    /// Their mean.
    pub mean_bps: f64,
    /// Their standard deviation (population, over the bins).
    pub sd_bps: f64,
    /// The least bin.
    pub min_bps: f64,
    /// The most.
    pub max_bps: f64,
}

/// What a `cc = "buffer"` flow's controller did (paper 004).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferOutcome {
    /// `paper` or `tfrc-capped`.
    pub mode: String,
    /// Smoothing windows planned.
    pub windows: u64,
    /// Windows that carried the base layer alone.
    pub base_only_windows: u64,
    /// Windows the TCP-friendly cap lowered (`tfrc-capped`).
    pub capped_windows: u64,
    /// The enhancement bytes planned over those the frames planned had.
    pub enhancement_share: Option<f64>,
    /// Reports the receiver sent.
    pub feedbacks_sent: u64,
    /// Reports the sender took.
    pub feedbacks_received: u64,
    /// Reports that said congestion (eq. 1).
    pub congestion_feedbacks: u64,
    /// The mean occupancy the reports gave, seconds of media.
    pub occupancy_mean_s: Option<f64>,
    /// Times the receiver's buffer was empty when a frame was due.
    pub underruns: u64,
    /// Frames that arrived after they were due.
    pub late_frames: u64,
    /// Data packets the receiver found missing.
    pub lost_packets: u64,
    /// 1 when the sender cut the stream off, else 0 (a number, so that a
    /// sweep can add it up).
    pub cut_offs: u64,
    /// Why the sender cut the stream off, if it did (paper 004 §2.2: the
    /// base layer no longer fits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The time a multi-connection flow spent with one connection count, and
/// its losses then.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ConnectionsShare {
    /// The connection count.
    pub connections: usize,
    /// The share of the series intervals (0-1) that ended with this count.
    pub time_share: f64,
    /// Data packets sent in those intervals.
    pub packets_sent: u64,
    /// Data packets lost in those intervals (queue or channel).
    pub packets_lost: u64,
    /// `packets_lost / packets_sent`; `null` when none was sent.
    pub packet_loss_rate: Option<f64>,
    /// Loss bursts (maximal runs of the flow's data packets lost in
    /// sending order) that ended with this count open.
    pub bursts: u64,
    /// Their mean length in packets; `null` without a burst.
    pub burst_mean: Option<f64>,
    /// The standard deviation of their lengths.
    pub burst_sd: Option<f64>,
    /// The longest.
    pub burst_max: Option<u64>,
}

/// One path of a bonded flow (issue 19).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathOutcome {
    /// The node it goes through (its `via`).
    pub via: String,
    /// Payload bits of the flow's data packets that arrived on it, per
    /// second of the flow's active time.
    pub throughput_bps: f64,
    /// Its share of the flow's `throughput_bps`; `null` when nothing
    /// arrived.
    pub share: Option<f64>,
    /// When the sender found it dead (no connection of it answering) and
    /// moved its data to the others, seconds from the start of the run.
    pub down_at_s: Vec<f64>,
    /// When it answered again after that, seconds.
    pub up_at_s: Vec<f64>,
}

/// What retransmission did in a session flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ArqOutcome {
    /// Distinct datagrams the receiver asked for.
    pub requested: u64,
    /// Of those, the ones that came before the receiver gave them up.
    pub recovered: u64,
    /// Of those, the ones given up before they came.
    pub too_late: u64,
    /// Lost datagrams not asked for because FEC rebuilds them (their block
    /// came with at least k datagrams) or because they were parity.
    pub left_to_fec: u64,
    /// Datagrams the sender resent (after requests and failovers).
    pub retransmitted: u64,
    /// Requests the sender refused: the datagram could no longer arrive
    /// before its deadline.
    pub refused_late: u64,
    /// Connections found dead and replaced.
    pub dead_connections: u64,
}

/// What became of a media flow's video.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MediaOutcome {
    /// The verdict.
    Report(Box<MediaReport>),
    /// The verdict could not be reached (the decoder failed).
    Error {
        /// What went wrong.
        error: String,
    },
}

/// What one link direction did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkSummary {
    /// `a-b`, the link's ends as in `between`.
    pub name: String,
    /// `a->b`: which way this entry's packets cross.
    pub direction: String,
    /// Share of the capacity used over the run.
    pub utilization: f64,
    /// Packets offered to the queue.
    pub packets_offered: u64,
    /// Packets that reached the far end.
    pub packets_delivered: u64,
    /// Packets the queue dropped (refused, or dropped later by CoDel or
    /// FQ-CoDel).
    pub queue_drops: u64,
    /// Packets the queue marked CE instead of dropping them (RFC 3168 §5);
    /// they are not drops and count among the delivered or lost.
    pub ce_marked: u64,
    /// Packets lost on the channel.
    pub channel_losses: u64,
    /// Packets still queued, in transmission or propagating at the end.
    pub packets_in_flight: u64,
    /// Whether the four counts above add up to `packets_offered`.
    pub conservation_ok: bool,
    /// A bandwidth-on-demand direction: its requests and grants. Absent
    /// for other link directions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bod: Option<BodOutcome>,
    /// A WiMAX TDD station's direction: its frames and grants. Absent for
    /// other link directions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tdd: Option<TddOutcome>,
}

/// What a WiMAX TDD station's direction asked for and was granted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TddOutcome {
    /// The cell it belongs to.
    pub cell: String,
    /// `"uplink"` or `"downlink"`.
    pub subframe: &'static str,
    /// Frames counted.
    pub frames: u64,
    /// Bytes requested.
    pub bytes_requested: u64,
    /// Bytes granted.
    pub bytes_granted: u64,
    /// Granted bytes that carried data.
    pub bytes_used: u64,
    /// The mean capacity granted, bits/s (wire bytes).
    pub granted_rate_bps: f64,
}

/// The pool a bandwidth-on-demand terminal shares (the same in the entry
/// of each of its terminals).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BodPoolOutcome {
    /// Its name.
    pub name: String,
    /// Superframes for which any terminal asked.
    pub superframes: u64,
    /// Of them, those whose requests together exceeded the pool.
    pub contended: u64,
    /// Timeslots its terminals requested (each after its own cap).
    pub slots_requested: u64,
    /// Timeslots it granted.
    pub slots_granted: u64,
    /// Its timeslots a superframe.
    pub max_slots: u32,
}

/// What a bandwidth-on-demand terminal asked for and was granted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BodOutcome {
    /// Superframes counted.
    pub superframes: u64,
    /// Timeslots requested (before the cap at the maximum).
    pub slots_requested: u64,
    /// Timeslots granted.
    pub slots_granted: u64,
    /// Granted timeslots that carried bytes.
    pub slots_used: u64,
    /// The most timeslots granted for one superframe.
    pub max_slots_granted: u32,
    /// The mean capacity granted, bits/s (wire bytes).
    pub granted_rate_bps: f64,
    /// The pool the terminal shares, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<BodPoolOutcome>,
}

/// The summary of `flow` for a run that ended at `end`.
pub(super) fn flow_summary(
    flow: &FlowState,
    end: Instant,
    media: Option<MediaOutcome>,
) -> FlowSummary {
    let active_s = flow
        .stop
        .min(end)
        .saturating_duration_since(flow.start)
        .as_secs_f64();
    let per_second = |bytes: u64| {
        if active_s > 0.0 {
            bytes as f64 * 8.0 / active_s
        } else {
            0.0
        }
    };
    let stats = &flow.stats;
    FlowSummary {
        name: flow.name.clone(),
        cc: flow.cc.to_owned(),
        throughput_bps: per_second(stats.bytes_received),
        goodput_bps: per_second(flow.goodput_bytes()),
        packets_sent: stats.packets_sent,
        packets_lost_congestion: stats.queue_drops,
        packets_lost_channel: stats.channel_losses,
        packet_loss_rate: ratio(stats.queue_drops + stats.channel_losses, stats.packets_sent),
        loss_event_rate: flow.loss_event_rate(),
        mean_rtt_s: flow.mean_rtt_s(),
        ecn_ce_received: flow.ecn_counts().map(|(marks, _)| marks),
        ecn_window_reductions: flow.ecn_counts().map(|(_, reductions)| reductions),
        mean_one_way_delay_s: (stats.delay_samples > 0)
            .then(|| stats.delay_sum_s / stats.delay_samples as f64),
        rate_cov: rate_stats(flow, end).map(|stats| stats.sd_bps / stats.mean_bps),
        rate_1s: rate_stats(flow, end),
        connections_mean: flow
            .session()
            .and_then(|s| s.sender().mean_open_connections()),
        connections_max: flow.session().map(|s| s.sender().max_open_connections()),
        by_connections: flow
            .loss_runs
            .as_ref()
            .map(|runs| by_connections(&stats.by_connections, runs.tallies())),
        reorder_buffer_max_packets: flow
            .session()
            .map(|s| s.receiver().stats().reorder.max_held),
        reorder_delay_max_s: flow
            .session()
            .map(|s| s.receiver().stats().reorder.max_delay.as_secs_f64()),
        paths: flow.session().filter(|_| !flow.via.is_empty()).map(|s| {
            flow.via
                .iter()
                .enumerate()
                .map(|(path, via)| {
                    let bytes: u64 = stats.path_bins.get(path).map_or(0, |b| b.iter().sum());
                    let seconds = |times: &[Instant]| -> Vec<f64> {
                        times.iter().map(|t| t.as_secs_f64()).collect()
                    };
                    let (down_at_s, up_at_s) = s
                        .stats
                        .path_changes
                        .get(path)
                        .map(|(down, up)| (seconds(down), seconds(up)))
                        .unwrap_or_default();
                    PathOutcome {
                        via: via.clone(),
                        throughput_bps: per_second(bytes),
                        share: ratio(bytes, stats.bytes_received),
                        down_at_s,
                        up_at_s,
                    }
                })
                .collect()
        }),
        arq: flow.session().map(|s| {
            let received = s.receiver().stats().arq;
            let sent = s.sender().arq_stats();
            ArqOutcome {
                requested: received.requested,
                recovered: received.recovered,
                too_late: received.too_late,
                left_to_fec: received.left_to_fec,
                retransmitted: sent.retransmitted,
                refused_late: sent.too_late,
                dead_connections: sent.dead_connections,
            }
        }),
        media,
        web: flow.web().map(|web| {
            let stats = &web.stats;
            WebOutcome {
                transfers_started: stats.transfers_started,
                transfers_completed: stats.transfers_completed,
                bytes_completed: stats.bytes_completed,
                mean_completion_time_s: (stats.transfers_completed > 0)
                    .then(|| stats.completion_sum_s / stats.transfers_completed as f64),
            }
        }),
        voice: flow.voice().map(|app| app.outcome(end)),
        proxy: flow.proxy_figures(),
        buffer: flow.layered().map(|app| {
            let stats = &app.stats;
            let receiver = app.receiver();
            BufferOutcome {
                mode: app.config().mode.name().to_owned(),
                windows: stats.windows,
                base_only_windows: stats.base_only_windows,
                capped_windows: stats.capped_windows,
                enhancement_share: app.enhancement_share(),
                feedbacks_sent: stats.feedbacks_sent,
                feedbacks_received: stats.feedbacks_received,
                congestion_feedbacks: stats.congestion_feedbacks,
                occupancy_mean_s: (stats.feedbacks_sent > 0)
                    .then(|| stats.occupancy_sum_s / stats.feedbacks_sent as f64),
                underruns: receiver.underruns(),
                late_frames: receiver.late_frames(),
                lost_packets: receiver.lost_packets(),
                cut_offs: u64::from(stats.stop.is_some()),
                stopped: stats.stop.map(|reason| reason.to_string()),
            }
        }),
    }
}

/// `part / whole`, `None` when `whole` is zero.
fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The tallies as shares of the intervals counted, with the bursts.
fn by_connections(tallies: &[CountTally], bursts: &[BurstTally]) -> Vec<ConnectionsShare> {
    let intervals: u64 = tallies.iter().map(|t| t.intervals).sum();
    (0..tallies.len().max(bursts.len()))
        .map(|i| {
            let t = tallies.get(i).copied().unwrap_or_default();
            let b = bursts.get(i).copied().unwrap_or_default();
            let burst = b.stats();
            ConnectionsShare {
                connections: i + 1,
                time_share: ratio(t.intervals, intervals).unwrap_or(0.0),
                packets_sent: t.packets_sent,
                packets_lost: t.packets_lost,
                packet_loss_rate: ratio(t.packets_lost, t.packets_sent),
                bursts: b.bursts,
                burst_mean: burst.map(|(mean, _, _)| mean),
                burst_sd: burst.map(|(_, sd, _)| sd),
                burst_max: burst.map(|(_, _, longest)| longest),
            }
        })
        .collect()
}

/// The received rate in the 1 s bins that lie wholly after the first 10 %
/// of the run and within the flow's active time; `None` with fewer than two
/// bins or no data.
fn rate_stats(flow: &FlowState, end: Instant) -> Option<RateStats> {
    let bin_s = BIN.as_secs_f64();
    let from = (end.as_secs_f64() * 0.1).max(flow.start.as_secs_f64());
    let to = flow.stop.min(end).as_secs_f64();
    let first = (from / bin_s).ceil() as usize;
    let last = (to / bin_s).floor() as usize;
    if last < first + 2 {
        return None;
    }
    let per_bin = (BIN.as_nanos() / SERIES_BIN.as_nanos()) as usize;
    let values: Vec<f64> = (first..last)
        .map(|i| {
            let bins = &flow.stats.bins;
            bins.iter().skip(i * per_bin).take(per_bin).sum::<u64>() as f64 * 8.0 / bin_s
        })
        .collect();
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    Some(RateStats {
        bins: values.len(),
        mean_bps: mean,
        sd_bps: variance.sqrt(),
        min_bps: values.iter().copied().fold(f64::INFINITY, f64::min),
        max_bps: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The summaries of both directions of `link` at `end`.
pub(super) fn link_summaries(link: &NetworkLink, end: Instant) -> [LinkSummary; 2] {
    let [a, b] = &link.ends;
    let names = [format!("{a}->{b}"), format!("{b}->{a}")];
    let [forward, reverse] = &link.directions;
    let [forward_name, reverse_name] = names;
    [(forward, forward_name), (reverse, reverse_name)].map(|(direction, name)| {
        let accounting = direction.conservation();
        LinkSummary {
            name: link.name.clone(),
            direction: name,
            utilization: direction.utilisation(end),
            packets_offered: accounting.offered,
            packets_delivered: accounting.delivered,
            queue_drops: accounting.queue_drops,
            ce_marked: direction.stats().ce_marked,
            channel_losses: accounting.channel_losses,
            packets_in_flight: accounting.in_link,
            conservation_ok: accounting.holds(),
            tdd: direction.tdd_stats().zip(direction.tdd_cell()).map(
                |(stats, (cell, subframe))| {
                    let cell = crate::link::lock_cell(cell);
                    let seconds = cell.config().frame.as_secs_f64() * stats.frames as f64;
                    TddOutcome {
                        cell: cell.name().to_owned(),
                        subframe: match subframe {
                            crate::link::Subframe::Uplink => "uplink",
                            crate::link::Subframe::Downlink => "downlink",
                        },
                        frames: stats.frames,
                        bytes_requested: stats.bytes_requested,
                        bytes_granted: stats.bytes_granted,
                        bytes_used: stats.bytes_used,
                        granted_rate_bps: if seconds > 0.0 {
                            stats.bytes_granted as f64 * 8.0 / seconds
                        } else {
                            0.0
                        },
                    }
                },
            ),
            bod: direction
                .bod_config()
                .zip(direction.bod_stats())
                .map(|(config, stats)| BodOutcome {
                    superframes: stats.superframes,
                    slots_requested: stats.slots_requested,
                    slots_granted: stats.slots_granted,
                    slots_used: stats.slots_used,
                    max_slots_granted: stats.max_slots_granted,
                    granted_rate_bps: config.granted_rate_bps(&stats),
                    pool: direction.bod_pool().map(|pool| {
                        let pool = crate::link::lock_pool(pool);
                        let stats = pool.stats();
                        BodPoolOutcome {
                            name: pool.name().to_owned(),
                            superframes: stats.superframes,
                            contended: stats.contended,
                            slots_requested: stats.slots_requested,
                            slots_granted: stats.slots_granted,
                            max_slots: pool.max_slots(),
                        }
                    }),
                }),
        }
    })
}
