//! A media flow's application ends: the sender that hands a stream's RTP
//! packets to the DCCP connection when the mode allows, and the receiver's
//! record of what arrived. The verdict comes from `fairstream-media`.

use std::sync::Arc;
use std::time::Duration;

use fairstream_media::bframes::{gop_trace, GopTraceConfig};
use fairstream_media::codec::EncoderSettings;
use fairstream_media::evalvid::{read_sender_trace, TraceFrame};
use fairstream_media::h264::FrameType;
use fairstream_media::layered::{fgs_trace, read_layered_trace, FgsTraceConfig, LayeredFrame};
use fairstream_media::playout::{live_frame_is_late, Playback, Player, StartupDelay};
use fairstream_media::stream::{
    evaluate_with_fec, evalvid_files, parity_dump, parity_packets, FecParams, MediaPacket,
    MediaReport, MediaStream, ParityPacket, Reception, SendTimes, StreamError, RTP_HEADER_BYTES,
};
use fairstream_proto::session::{DatagramMeta, FecTag};
use fairstream_proto::time::Instant;
use fairstream_proto::wire::rtp::RtpRepr;

use crate::scenario::{
    MediaConfig, MediaSourceConfig, PlayerSetting, SendMode, StartupDelaySetting,
};

/// The most packets a receiver records (a flow that is sent more is an
/// experiment error, and a peer cannot grow memory past this).
const RECEPTION_LIMIT: usize = 1 << 22;

/// Why a media flow could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum MediaSetupError {
    /// The source file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] fairstream_media::evalvid::TraceError),
    /// The stream could not be built.
    #[error(transparent)]
    Stream(#[from] StreamError),
    /// The synthetic FGS trace could not be made.
    #[error(transparent)]
    Fgs(#[from] fairstream_media::layered::FgsTraceError),
    /// The synthetic B-frame trace could not be made.
    #[error(transparent)]
    Ibbp(#[from] fairstream_media::bframes::GopTraceError),
    /// The layered trace could not be read.
    #[error(transparent)]
    Layered(#[from] fairstream_media::layered::LayeredTraceError),
    /// More frames asked for than the file has.
    #[error("{path} has {available} frames; {asked} were asked for")]
    TooFewFrames {
        /// The file.
        path: String,
        /// Frames in it.
        available: usize,
        /// Frames asked for.
        asked: u64,
    },
}

/// The frames of a layered source (`"fgs"` or a `.lt` trace); `None` for
/// other sources. `active` is the flow's active time (the default length of
/// a synthetic trace), `seed` the seed of a synthetic trace's sizes.
pub(super) fn layered_frames(
    config: &MediaConfig,
    active: Duration,
    seed: u64,
) -> Option<Result<Vec<LayeredFrame>, MediaSetupError>> {
    let default_frames = (active.as_secs_f64() * config.fps).ceil().max(1.0) as u64;
    match &config.source {
        MediaSourceConfig::Fgs {
            base_rate,
            total_rate,
            gop,
        } => {
            let frames = config.frames.unwrap_or(default_frames);
            let trace = FgsTraceConfig {
                fps: config.fps,
                frames: usize::try_from(frames).unwrap_or(usize::MAX),
                base_rate: *base_rate,
                total_rate: *total_rate,
                gop: usize::try_from(*gop).unwrap_or(usize::MAX),
                seed,
                ..FgsTraceConfig::default()
            };
            Some(fgs_trace(&trace).map_err(MediaSetupError::from))
        }
        MediaSourceConfig::LayeredTrace(path) => Some(
            read_layered_trace(path)
                .map_err(MediaSetupError::from)
                .and_then(|frames| {
                    let written = path.display().to_string();
                    match config.frames {
                        Some(asked) if asked as usize > frames.len() => {
                            Err(MediaSetupError::TooFewFrames {
                                path: written,
                                available: frames.len(),
                                asked,
                            })
                        }
                        Some(asked) => Ok(frames.into_iter().take(asked as usize).collect()),
                        None => Ok(frames),
                    }
                }),
        ),
        _ => None,
    }
}

/// Builds the stream a flow sends. `active` is the flow's active time (the
/// default length of generated content); `seed` draws a synthetic layered
/// trace, whose frames a DCCP media flow sends whole, each in as many
/// packets of `packet_size` bytes (RTP header included) as it needs.
pub(super) fn build_stream(
    config: &MediaConfig,
    active: Duration,
    seed: u64,
    packet_size: usize,
) -> Result<MediaStream, MediaSetupError> {
    let default_frames = (active.as_secs_f64() * config.fps).ceil().max(1.0) as u64;
    if let Some(frames) = layered_frames(config, active, seed) {
        // The RTP payload a packet carries (a zero-length payload is
        // refused by the packetizer).
        let payload = packet_size.saturating_sub(RTP_HEADER_BYTES).max(1) as u64;
        let trace: Vec<TraceFrame> = frames?
            .iter()
            .map(|frame| TraceFrame {
                number: frame.number(),
                frame_type: frame.frame_type(),
                size_bytes: frame.total_bytes(),
                packets: u32::try_from(frame.total_bytes().div_ceil(payload))
                    .unwrap_or(u32::MAX)
                    .max(1),
                send_time_s: frame.time().as_secs_f64(),
            })
            .collect();
        return Ok(MediaStream::from_trace(&trace, config.fps)?);
    }
    match &config.source {
        MediaSourceConfig::Generated {
            width,
            height,
            gop,
            bitrate,
            slice_max,
        } => {
            let frames = config.frames.unwrap_or(default_frames);
            let settings = EncoderSettings {
                bitrate_bps: bitrate.bits_per_sec().min(f64::from(u32::MAX)) as u32,
                fps: config.fps as f32,
                gop: *gop,
                slice_max_bytes: Some(u32::try_from(slice_max.get()).unwrap_or(u32::MAX)),
            };
            Ok(MediaStream::generated(
                *width,
                *height,
                usize::try_from(frames).unwrap_or(usize::MAX),
                settings,
            )?)
        }
        MediaSourceConfig::H264File(path) => {
            let bytes = std::fs::read(path).map_err(|source| MediaSetupError::Read {
                path: path.display().to_string(),
                source,
            })?;
            let stream = MediaStream::from_annex_b(&bytes, config.fps)?;
            truncated(stream, config.frames, &path.display().to_string())
        }
        MediaSourceConfig::Ibbp {
            gop,
            b_frames,
            mean_rate,
        } => {
            let trace = gop_trace(&GopTraceConfig {
                frames: config.frames.unwrap_or(default_frames),
                fps: config.fps,
                gop: *gop,
                b_frames: *b_frames,
                mean_rate_bps: mean_rate.bits_per_sec(),
                // One clip for every run, as the paper's.
                ..GopTraceConfig::default()
            })?;
            Ok(MediaStream::from_trace(&trace, config.fps)?)
        }
        MediaSourceConfig::EvalVidTrace(path) => {
            let trace = read_sender_trace(path)?;
            let stream = MediaStream::from_trace(&trace, config.fps)?;
            truncated(stream, config.frames, &path.display().to_string())
        }
        // Taken above.
        MediaSourceConfig::Fgs { .. } | MediaSourceConfig::LayeredTrace(_) => {
            Ok(MediaStream::from_trace(&[], config.fps)?)
        }
    }
}

fn truncated(
    stream: MediaStream,
    frames: Option<u64>,
    path: &str,
) -> Result<MediaStream, MediaSetupError> {
    match frames {
        Some(asked) if asked as usize > stream.frames().len() => {
            Err(MediaSetupError::TooFewFrames {
                path: path.to_owned(),
                available: stream.frames().len(),
                asked,
            })
        }
        Some(asked) => Ok(stream.truncated(asked as usize)),
        None => Ok(stream),
    }
}

/// The sender and receiver applications of a media flow.
#[derive(Debug)]
pub(super) struct MediaApp {
    stream: Arc<MediaStream>,
    packets: Vec<MediaPacket>,
    next: usize,
    start: Instant,
    mode: SendMode,
    startup: StartupDelaySetting,
    player: PlayerSetting,
    sent: SendTimes,
    reception: Reception,
    fec: Option<FecParams>,
    parity: Vec<ParityPacket>,
    /// The next parity packet to send.
    next_parity: usize,
    /// The GOP of each frame (a new one at every I frame).
    frame_gop: Vec<u64>,
    /// What the session is told of the packet
    /// [`next_packet`](Self::next_packet) returned last.
    last_meta: DatagramMeta,
}

impl MediaApp {
    /// A media flow sending `stream` in packets of at most `packet_size`
    /// bytes, from `start`.
    pub(super) fn new(
        stream: MediaStream,
        packet_size: usize,
        config: &MediaConfig,
        start: Instant,
    ) -> Result<MediaApp, MediaSetupError> {
        let packets = stream.packetize(packet_size)?;
        let fec = config.fec.map(|(n, k)| FecParams {
            n: usize::from(n),
            k: usize::from(k),
        });
        let parity = match fec {
            Some(fec) => parity_packets(&packets, fec)?,
            None => Vec::new(),
        };
        let mut gop = 0u64;
        let frame_gop = stream
            .frames()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i > 0 && f.frame_type == FrameType::I {
                    gop += 1;
                }
                gop
            })
            .collect();
        Ok(MediaApp {
            frame_gop,
            last_meta: DatagramMeta::gop(0),
            stream: Arc::new(stream),
            packets,
            next: 0,
            start,
            mode: config.mode,
            startup: config.startup_delay,
            player: config.player,
            sent: SendTimes::new(),
            reception: Reception::new(),
            fec,
            parity,
            next_parity: 0,
        })
    }

    /// Whether frames are released at their frame times (and dropped when
    /// late).
    pub(super) fn is_live(&self) -> bool {
        self.mode == SendMode::Live
    }

    /// When frame `index` may be sent.
    fn release(&self, frame: usize) -> Instant {
        match self.mode {
            SendMode::OnDemand => self.start,
            SendMode::Live => {
                self.start + Duration::from_secs_f64(frame as f64 / self.stream.fps())
            }
        }
    }

    /// The next packet to send at `now`, if one is due: live frames that can
    /// no longer arrive in time (`one_way` is the sender's estimate of the
    /// path's one-way delay) are skipped, P and B frames as soon as they
    /// would be late, I frames only once their deadline has passed.
    pub(super) fn next_packet(&mut self, now: Instant, one_way: Duration) -> Option<&[u8]> {
        // Parity follows the last data packet of its block.
        let done = self
            .next
            .checked_sub(1)
            .and_then(|i| self.packets.get(i))
            .map(|p| p.id);
        if let Some(parity) = self.parity.get(self.next_parity) {
            if done.is_some_and(|id| id >= parity.after) {
                self.next_parity += 1;
                let after = usize::try_from(parity.after).unwrap_or(usize::MAX);
                let frame = self.packets.get(after).map_or(0, |p| p.frame);
                // Parity repairs what it can; it is not resent itself.
                let index = usize::from(parity.index);
                self.last_meta = DatagramMeta {
                    retransmit: false,
                    fec: self.fec_tag(self.fec.map_or(0, |f| f.k) + index),
                    ..self.meta_of(frame)
                };
                return self
                    .parity
                    .get(self.next_parity - 1)
                    .map(|p| p.bytes.as_slice());
            }
        }
        loop {
            let packet = self.packets.get(self.next)?;
            let frame = packet.frame;
            if self.release(frame) > now {
                return None;
            }
            if let (SendMode::Live, StartupDelaySetting::Fixed(delay)) = (self.mode, self.startup) {
                let deadline =
                    self.start + delay + Duration::from_secs_f64(frame as f64 / self.stream.fps());
                let frame_type = self
                    .stream
                    .frames()
                    .get(frame)
                    .map_or(FrameType::P, |f| f.frame_type);
                if live_frame_is_late(frame_type, now, one_way, deadline) {
                    // Drop the rest of this frame.
                    while self
                        .packets
                        .get(self.next)
                        .is_some_and(|p| p.frame == frame)
                    {
                        self.next += 1;
                    }
                    continue;
                }
            }
            self.sent.insert(packet.id, now.as_secs_f64());
            let index = self
                .fec
                .map_or(0, |f| (packet.id % f.k.max(1) as u64) as usize);
            self.last_meta = DatagramMeta {
                fec: self.fec_tag(index),
                ..self.meta_of(frame)
            };
            self.next += 1;
            return Some(&packet.bytes);
        }
    }

    /// What the session is told of the packet
    /// [`next_packet`](Self::next_packet) returned last: its GOP (for
    /// GOP-interleaved splitting), its frame's deadline (with a fixed
    /// start-up delay and the drop player), whether it is of an I frame, and whether it may be
    /// resent.
    pub(super) fn last_meta(&self) -> DatagramMeta {
        self.last_meta
    }

    /// The FEC tag of the datagram at `index` of its block, on demand
    /// (where every packet of a block is sent, so that a block's datagrams
    /// are consecutive in the session; a live sender may drop some).
    fn fec_tag(&self, index: usize) -> Option<FecTag> {
        let fec = self.fec.filter(|_| self.mode == SendMode::OnDemand)?;
        Some(FecTag {
            index: u8::try_from(index).ok()?,
            k: u8::try_from(fec.k).ok()?,
            n: u8::try_from(fec.n).ok()?,
        })
    }

    fn meta_of(&self, frame: usize) -> DatagramMeta {
        let deadline = match self.startup {
            // A rebuffering player moves its deadlines by its pauses, so
            // none is known when the packet is sent.
            StartupDelaySetting::Fixed(_) if self.player != PlayerSetting::Drop => None,
            StartupDelaySetting::Fixed(delay) => {
                Some(self.start + delay + Duration::from_secs_f64(frame as f64 / self.stream.fps()))
            }
            StartupDelaySetting::Auto => None,
        };
        DatagramMeta {
            gop: self.frame_gop.get(frame).copied().unwrap_or(0),
            deadline,
            key: self
                .stream
                .frames()
                .get(frame)
                .is_some_and(|f| f.frame_type == FrameType::I),
            retransmit: true,
            playout: Some(Duration::from_secs_f64(frame as f64 / self.stream.fps())),
            fec: None,
        }
    }

    /// When the next packet becomes due, if it is not yet.
    pub(super) fn next_release(&self, now: Instant) -> Option<Instant> {
        let packet = self.packets.get(self.next)?;
        let release = self.release(packet.frame);
        (release > now).then_some(release)
    }

    /// The type of the frame an RTP packet of this stream belongs to;
    /// `None` for what is not one of its packets.
    pub(super) fn frame_type_of(&self, packet: &[u8]) -> Option<FrameType> {
        let index = self.frame_of_packet(packet)?;
        self.stream.frames().get(index).map(|f| f.frame_type)
    }

    /// The frame of an RTP packet of this stream, from its timestamp
    /// (frame i has `rtp_timestamp(i, fps)`); `None` for what is no RTP
    /// packet.
    fn frame_of_packet(&self, packet: &[u8]) -> Option<usize> {
        let timestamp = f64::from(RtpRepr::parse_bytes(packet).ok()?.timestamp);
        Some((timestamp * self.stream.fps() / 90_000.0).round() as usize)
    }

    /// What a session is told of an RTP packet of this stream that a proxy
    /// forwards: its frame's GOP, deadline, key and playout time, found from
    /// its timestamp (a packet of no frame of the stream counts as the
    /// first frame's).
    pub(super) fn meta_of_packet(&self, packet: &[u8]) -> DatagramMeta {
        let frame = self
            .frame_of_packet(packet)
            .unwrap_or(0)
            .min(self.stream.frames().len().saturating_sub(1));
        self.meta_of(frame)
    }

    /// A datagram reached the receiving application at `now`.
    pub(super) fn on_received(&mut self, now: Instant, bytes: &[u8]) {
        self.reception
            .on_datagram(now.as_secs_f64(), bytes, RECEPTION_LIMIT);
    }

    /// The verdict: playout (with the scenario's player model) and
    /// quality.
    pub(super) fn report(&self) -> Result<MediaReport, StreamError> {
        let startup = match self.startup {
            StartupDelaySetting::Auto => StartupDelay::Auto,
            StartupDelaySetting::Fixed(delay) => StartupDelay::Fixed(delay.as_secs_f64()),
        };
        let (player, refill_s) = match self.player {
            PlayerSetting::Drop => (Player::Drop, None),
            PlayerSetting::Rebuffer { refill } => {
                (Player::Rebuffer, refill.map(|r| r.as_secs_f64()))
            }
        };
        let playback = Playback {
            startup,
            player,
            refill_s,
        };
        evaluate_with_fec(
            &self.stream,
            &self.packets,
            &self.sent,
            &self.reception,
            playback,
            self.fec,
        )
    }

    /// When each packet was sent.
    pub(super) fn send_times(&self) -> &SendTimes {
        &self.sent
    }

    /// The downstream leg of a proxy sent nothing of its own: its packets
    /// were sent when the upstream sender sent them (`sent`), so that
    /// delays and start-up run from the server.
    pub(super) fn adopt_send_times(&mut self, sent: SendTimes) {
        self.sent = sent;
    }

    /// The stream that was sent, as Annex B (empty without payload).
    pub(super) fn video(&self) -> Vec<u8> {
        self.stream.annex_b()
    }

    /// EvalVid's st, sd and rd files of the run.
    pub(super) fn evalvid_files(&self) -> (String, String, String) {
        evalvid_files(&self.stream, &self.packets, &self.sent, &self.reception)
    }

    /// The FEC code the flow used, if any.
    pub(super) fn fec(&self) -> Option<FecParams> {
        self.fec
    }

    /// The receiver dump of the parity packets that arrived (empty without
    /// FEC).
    pub(super) fn parity_dump(&self) -> String {
        parity_dump(&self.reception, self.fec)
    }

    /// The per-frame table: type, size, packets, arrival, deadline, whether
    /// it was shown, and its quality, as CSV.
    pub(super) fn frames_csv(&self, report: &MediaReport) -> String {
        use std::fmt::Write as _;
        let mut out = String::from(
            "frame,type,size_bytes,packets_sent,packets_on_time,last_arrival_s,deadline_s,displayed,psnr_db,ssim\n",
        );
        let field = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
        for (i, frame) in self.stream.frames().iter().enumerate() {
            let playout = report.playout.frames.get(i);
            let quality = report.frame_quality.get(i);
            let _ = writeln!(
                out,
                "{i},{},{},{},{},{},{},{},{},{}",
                frame.frame_type.letter(),
                frame.size_bytes,
                playout.map_or(0, |p| p.packets_sent),
                playout.map_or(0, |p| p.packets_on_time),
                field(playout.and_then(|p| p.last_arrival_s)),
                field(playout.map(|p| p.deadline_s)),
                playout.is_some_and(|p| p.displayed),
                field(quality.map(|q| q.psnr_db)),
                field(quality.map(|q| q.ssim)),
            );
        }
        out
    }
}
