//! The `bod = { … }` table of a link: its forward direction is the return
//! link of a bandwidth-on-demand satellite terminal
//! ([`crate::link::BodConfig`] documents the model and every default's
//! source).

use super::error::ScenarioError;
use super::fields::Fields;
use super::BodPoolSpec;
use crate::link::{BodConfig, BodGeometry, BodRequests, BOD_DEFAULT_MAX_RATE_BPS};
use fairstream_proto::units::Rate;

/// The geometries, for messages.
const GEOMETRIES: &str = "\"transparent\" (600 ms) or \"regenerative\" (300 ms)";

/// Validates `bod = { geometry?, max_rate?, superframe?, slot_bytes?,
/// request_grant_delay?, requests?, pool?, pool_rate? }`.
pub(super) fn bod_from_raw(
    mut fields: Fields<'_>,
) -> Result<(BodConfig, Option<BodPoolSpec>), ScenarioError> {
    let geometry = match fields.string("geometry")? {
        None | Some("regenerative") => BodGeometry::Regenerative,
        Some("transparent") => BodGeometry::Transparent,
        Some(other) => {
            return Err(fields.error(
                "geometry",
                format!("unknown geometry \"{other}\" (expected {GEOMETRIES})"),
            ))
        }
    };
    let preset = BodConfig::preset(geometry);
    let slot_bytes = match fields.bytes("slot_bytes")? {
        None => preset.slot_bytes,
        Some(bytes) if (1..=65_535).contains(&bytes.get()) => bytes.get() as u32,
        Some(bytes) => {
            return Err(fields.error(
                "slot_bytes",
                format!("a timeslot of {} bytes is outside 1..=65535", bytes.get()),
            ))
        }
    };
    let requests = match fields.string("requests")? {
        None | Some("both") => BodRequests::Both,
        Some("rate") => BodRequests::Rate,
        Some("volume") => BodRequests::Volume,
        Some(other) => {
            return Err(fields.error(
                "requests",
                format!("unknown requests \"{other}\" (expected \"both\", \"rate\" or \"volume\")"),
            ))
        }
    };
    let config = BodConfig {
        superframe: fields
            .optional_duration("superframe")?
            .unwrap_or(preset.superframe),
        max_rate: fields.optional_rate("max_rate")?.unwrap_or(preset.max_rate),
        slot_bytes,
        request_grant_delay: fields
            .optional_duration("request_grant_delay")?
            .unwrap_or(preset.request_grant_delay),
        requests,
    };
    let pool_rate = fields.optional_rate("pool_rate")?;
    let pool = match (fields.string("pool")?, pool_rate) {
        (None, None) => None,
        (None, Some(_)) => {
            return Err(fields.error("pool_rate", "pool_rate needs a `pool` to name"))
        }
        (Some(""), _) => return Err(fields.error("pool", "a pool's name cannot be empty")),
        (Some(name), rate) => Some(BodPoolSpec {
            name: name.to_owned(),
            rate: rate.unwrap_or(Rate::from_bits_per_sec(BOD_DEFAULT_MAX_RATE_BPS)),
        }),
    };
    if let Some(pool) = &pool {
        let shared = BodConfig {
            max_rate: pool.rate,
            ..config
        };
        if let Err(reason) = shared.check() {
            return Err(fields.error("pool_rate", reason));
        }
    }
    if let Err(reason) = config.check() {
        let key = match reason {
            r if r.contains("request-grant") => "request_grant_delay",
            r if r.contains("max_rate") => "max_rate",
            _ => "superframe",
        };
        return Err(fields.error(key, reason));
    }
    fields.finish("bod")?;
    Ok((config, pool))
}
