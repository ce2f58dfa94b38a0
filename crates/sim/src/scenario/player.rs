//! The media table's player keys: `player = "drop" | "rebuffer"` and, with
//! `"rebuffer"`, `refill` (the rules are `fairstream_media::playout`'s).

use toml::Spanned;

use super::error::ScenarioError;
use super::fields::{duration_at, Fields};
use super::{PlayerSetting, SendMode};

/// Reads `player` and `refill` from a media table whose `mode` is `mode`.
pub(super) fn player_from_fields(
    fields: &mut Fields<'_>,
    mode: SendMode,
) -> Result<PlayerSetting, ScenarioError> {
    let player = match fields.string("player")? {
        None | Some("drop") => PlayerSetting::Drop,
        Some("rebuffer") => {
            let refill = match fields.string("refill")? {
                None => None,
                Some(text) => {
                    let key = fields.key("refill");
                    let span = fields
                        .optional("refill")
                        .map(Spanned::span)
                        .unwrap_or_default();
                    // Zero is allowed: resume as soon as the frame is complete.
                    Some(duration_at(fields.source(), text, span, &key, true)?)
                }
            };
            PlayerSetting::Rebuffer { refill }
        }
        Some(other) => {
            return Err(fields.error(
                "player",
                format!("unknown player \"{other}\" (expected \"drop\" or \"rebuffer\")"),
            ))
        }
    };
    if player == PlayerSetting::Drop && fields.optional("refill").is_some() {
        return Err(fields.error("refill", "`refill` applies to player = \"rebuffer\" only"));
    }
    if mode == SendMode::Live && player != PlayerSetting::Drop {
        // The live sender drops frames by fixed deadlines; a rebuffering
        // player would have waited for them.
        return Err(fields.error(
            "player",
            "live mode drops frames by deadlines that a rebuffering player would move: use \
             player = \"rebuffer\" with mode = \"on-demand\"",
        ));
    }
    Ok(player)
}
