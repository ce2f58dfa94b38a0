//! The `tdd = { … }` table of a link: the link joins a subscriber station
//! (`between[0]`) to a WiMAX base station (`between[1]`) over a TDD air
//! interface whose uplink is the forward direction and whose downlink the
//! reverse ([`crate::link::TddConfig`] documents the model and every
//! default's source). The link's `rate` is the PHY rate of both subframes.

use std::time::Duration;

use std::collections::BTreeMap;

use toml::Spanned;

use super::error::{ScenarioError, Source};
use super::fields::Fields;
use super::raw::RawScenario;
use super::{Capacity, Link, NodeId};
use crate::link::{TddConfig, MAX_TDD_GRANT_LAG};
use fairstream_proto::units::Rate;

/// Validates `tdd = { cell?, frame?, dl_ul?, dl_overhead?, ul_overhead?,
/// grant_lag? }` for a link whose PHY rate is `rate`; the cell's name
/// comes back when given.
pub(super) fn tdd_from_raw(
    mut fields: Fields<'_>,
    rate: Rate,
) -> Result<(TddConfig, Option<String>), ScenarioError> {
    let preset = TddConfig::default();
    let frame = fields.optional_duration("frame")?.unwrap_or(preset.frame);
    if frame < Duration::from_micros(2_500) || frame > Duration::from_millis(20) {
        return Err(fields.error(
            "frame",
            format!(
                "a TDD frame of {} ms is outside 2.5 to 20 ms (IEEE 802.16e-2005 §8.4.5.2)",
                frame.as_secs_f64() * 1e3
            ),
        ));
    }
    let (dl_share, ul_share) = match fields.string("dl_ul")? {
        None => (preset.dl_share, preset.ul_share),
        Some(text) => parse_ratio(text).ok_or_else(|| {
            fields.error(
                "dl_ul",
                format!("\"{text}\" is not a DL:UL split such as \"1:3\" (two whole numbers 1-64)"),
            )
        })?,
    };
    let grant_lag = match fields.number("grant_lag")? {
        None => preset.grant_lag,
        Some(n) if n >= 1.0 && n <= f64::from(MAX_TDD_GRANT_LAG) && n.fract() == 0.0 => n as u32,
        Some(n) => {
            return Err(fields.error(
                "grant_lag",
                format!("{n} is not a whole number of frames in 1..={MAX_TDD_GRANT_LAG}"),
            ))
        }
    };
    let config = TddConfig {
        frame,
        dl_share,
        ul_share,
        rate,
        dl_overhead: fields
            .optional_duration("dl_overhead")?
            .unwrap_or(preset.dl_overhead),
        ul_overhead: fields
            .optional_duration("ul_overhead")?
            .unwrap_or(preset.ul_overhead),
        grant_lag,
    };
    let cell = match fields.string("cell")? {
        None => None,
        Some("") => return Err(fields.error("cell", "a cell's name cannot be empty")),
        Some(name) => Some(name.to_owned()),
    };
    if let Err(reason) = config.check() {
        let key = match reason {
            r if r.contains("DL overhead") => "dl_overhead",
            r if r.contains("UL overhead") => "ul_overhead",
            _ => "frame",
        };
        return Err(fields.error(key, reason));
    }
    fields.finish("tdd")?;
    Ok((config, cell))
}

/// The stations of one cell must name the same base station (their
/// links' `between[1]`) and the same frame, which are the BS's.
pub(super) fn check_cells(
    source: Source<'_>,
    raw: &RawScenario,
    links: &[Link],
) -> Result<(), ScenarioError> {
    let mut first: BTreeMap<&str, (usize, TddConfig, NodeId)> = BTreeMap::new();
    for (index, link) in links.iter().enumerate() {
        let Capacity::Tdd {
            config,
            cell: Some(cell),
        } = &link.capacity
        else {
            continue;
        };
        let Some(&(other, shared, base)) = first.get(cell.as_str()) else {
            first.insert(cell, (index, *config, link.between[1]));
            continue;
        };
        let problem = if base != link.between[1] {
            Some((
                "cell",
                format!(
                    "the stations of cell \"{cell}\" must name the same base station (the \
                     second node of `between`), and link[{other}] names another"
                ),
            ))
        } else {
            [
                ("rate", shared.rate != config.rate),
                ("frame", shared.frame != config.frame),
                (
                    "dl_ul",
                    (shared.dl_share, shared.ul_share) != (config.dl_share, config.ul_share),
                ),
                ("dl_overhead", shared.dl_overhead != config.dl_overhead),
                ("ul_overhead", shared.ul_overhead != config.ul_overhead),
                ("grant_lag", shared.grant_lag != config.grant_lag),
            ]
            .into_iter()
            .find(|(_, differs)| *differs)
            .map(|(key, _)| {
                (
                    key,
                    format!(
                        "the stations of cell \"{cell}\" must agree on `{key}` (the base \
                         station's), and link[{other}] gives another"
                    ),
                )
            })
        };
        if let Some((key, message)) = problem {
            let span = raw.link[index]
                .get_ref()
                .tdd
                .as_ref()
                .map_or_else(|| raw.link[index].span(), Spanned::span);
            let path = if key == "rate" {
                format!("link[{index}].rate")
            } else {
                format!("link[{index}].tdd.{key}")
            };
            return Err(source.invalid(span, path, message));
        }
    }
    Ok(())
}

/// `"1:3"` as (1, 3); each part 1-64.
fn parse_ratio(text: &str) -> Option<(u32, u32)> {
    let (dl, ul) = text.split_once(':')?;
    let part = |t: &str| {
        t.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=64).contains(n))
    };
    Some((part(dl)?, part(ul)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_two_small_whole_numbers() {
        assert_eq!(parse_ratio("1:3"), Some((1, 3)));
        assert_eq!(parse_ratio(" 2 : 1 "), Some((2, 1)));
        assert_eq!(parse_ratio("0:3"), None);
        assert_eq!(parse_ratio("1/3"), None);
        assert_eq!(parse_ratio("1:3:1"), None);
    }
}
