//! `cc=buffer`: paper 004's receiver-buffer controller (issue 15) in a URL,
//! its keys and the keys that do not go with it.

use fairstream_proto::cc::buffer::{BufferConfig, BufferConfigError};
use fairstream_proto::conn::Ccid;
use fairstream_proto::units::parse_duration;

use super::{bad, DccpUrl, UrlError};

/// The keys of the controller, given only with `cc=buffer`.
pub(super) const BUFFER_KEYS: [&str; 4] =
    ["mode", "preroll", "congestion_threshold", "loss_threshold"];

/// The keys that do not go with `cc=buffer`, and why.
const NOT_WITH_BUFFER: [(&str, &str); 8] = [
    ("conns", ONE_CONNECTION),
    ("paths", ONE_CONNECTION),
    ("controller", ONE_CONNECTION),
    ("policy", ONE_CONNECTION),
    ("start_offset", ONE_CONNECTION),
    ("rtt_min_lifetime", ONE_CONNECTION),
    (
        "rate",
        "the controller sets the rate (mode=paper), under TFRC's (mode=tfrc-capped)",
    ),
    (
        "fec",
        "the controller sheds enhancement frames rather than adding parity",
    ),
];

const ONE_CONNECTION: &str = "paper 004's controller streams over one connection";

impl DccpUrl {
    /// Sets one of [`BUFFER_KEYS`]; `false` for another key.
    pub(super) fn set_buffer_key(&mut self, key: &str, value: &str) -> Result<bool, UrlError> {
        if !BUFFER_KEYS.contains(&key) {
            return Ok(false);
        }
        let config = self.buffer.get_or_insert_with(BufferConfig::default);
        let duration = || parse_duration(value).map_err(|e| bad(key, value, e.to_string()));
        match key {
            "mode" => config.mode = value.parse().map_err(|e| bad(key, value, format!("{e}")))?,
            "preroll" => config.preroll = duration()?,
            "congestion_threshold" => config.congestion_threshold = duration()?,
            _ => config.loss_threshold = duration()?,
        }
        Ok(true)
    }

    /// Checks a parsed URL's `cc=buffer` and its keys: the controller's keys
    /// only with it, none of [`NOT_WITH_BUFFER`] nor `arq=on` with it, and
    /// thresholds the controller accepts; sets the CCID the mode runs on
    /// (`paper`: the fixed-rate CCID 249, which the sender drives without
    /// pacing, as the simulator does; `tfrc-capped`: CCID 3).
    pub(super) fn finish_buffer(&mut self, cc_buffer: bool) -> Result<(), UrlError> {
        let given = |k: &str| self.keys.iter().any(|key| key == k);
        if !cc_buffer {
            if let Some(key) = BUFFER_KEYS.iter().find(|k| given(k)) {
                return Err(self.buffer_key_error(key, "applies only with cc=buffer"));
            }
            self.buffer = None;
            return Ok(());
        }
        if let Some((key, why)) = NOT_WITH_BUFFER.iter().find(|(k, _)| given(k)) {
            return Err(self.buffer_key_error(key, &format!("does not go with cc=buffer: {why}")));
        }
        if self.arq == Some(true) {
            return Err(self.buffer_key_error(
                "arq",
                "=on does not go with cc=buffer: the controller sheds what the path cannot \
                 carry rather than resending it",
            ));
        }
        self.arq = Some(false);
        let config = self.buffer.get_or_insert_with(BufferConfig::default);
        // The defaults follow a pre-roll given: T_c = T_s/2 and T_loss =
        // 3·T_s/4 (1 s and 1.5 s of the default 2 s), and the grace, the
        // tolerance and the least feedback interval no longer than it allows.
        let t_s = config.preroll;
        if !given("congestion_threshold") {
            config.congestion_threshold = t_s / 2;
        }
        if !given("loss_threshold") {
            config.loss_threshold = t_s * 3 / 4;
        }
        config.base_lag_tolerance = config.base_lag_tolerance.min(t_s);
        config.dry_buffer_grace = config.dry_buffer_grace.min(t_s);
        config.min_feedback_interval = config.min_feedback_interval.min(t_s / 2);
        let config = *config;
        config
            .validate()
            .map_err(|error| threshold_error(&config, error))?;
        // Both modes pace their own schedule on CCID 249 (as the
        // simulator does); `tfrc-capped` plans each window under RFC 5348's
        // equation for what CCID 249's receiver (CCID 3's) reports.
        self.transport.cc = Ccid::FixedRateExperimental;
        Ok(())
    }

    fn buffer_key_error(&self, key: &str, reason: &str) -> UrlError {
        UrlError::BufferKey {
            url: self.text.clone(),
            key: key.to_owned(),
            reason: reason.to_owned(),
        }
    }
}

/// A threshold the controller refuses, named by its key.
fn threshold_error(config: &BufferConfig, error: BufferConfigError) -> UrlError {
    let (key, value) = match error {
        BufferConfigError::CongestionThreshold { t_c, .. } => ("congestion_threshold", t_c),
        BufferConfigError::LossThreshold { t_loss, .. } => ("loss_threshold", t_loss),
        // The only other values the URL sets.
        _ => ("preroll", config.preroll),
    };
    UrlError::BadValue {
        key: key.to_owned(),
        value: format!("{value:?}"),
        reason: error.to_string(),
    }
}
