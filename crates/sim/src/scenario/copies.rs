//! `count = N` on a `[[flow]]`: N copies of the flow, named `NAME-1` …
//! `NAME-N`, each starting `stagger` after the one before (paper 002
//! §IV.A's "gradually increasing the number of UDP flows, up to a total
//! of 50 flows" is one flow with a `count` a sweep varies).

use std::time::Duration;

use super::error::ScenarioError;
use super::error::Source;
use super::fields::duration_at;
use super::raw::RawFlow;
use super::Flow;

/// The most copies one `[[flow]]` may make.
pub const MAX_FLOW_COPIES: i64 = 10_000;

/// The flows `[[flow]]` number `index` stands for: `flow` itself without
/// `count`, else its copies.
pub(super) fn copies(
    source: Source<'_>,
    index: usize,
    raw: &RawFlow,
    flow: Flow,
    run_duration: Duration,
) -> Result<Vec<Flow>, ScenarioError> {
    let path = format!("flow[{index}]");
    let stagger = match &raw.stagger {
        None => Duration::ZERO,
        Some(text) => duration_at(
            source,
            text.get_ref(),
            text.span(),
            &format!("{path}.stagger"),
            true,
        )?,
    };
    let Some(count) = &raw.count else {
        if let Some(text) = &raw.stagger {
            return Err(source.invalid(
                text.span(),
                format!("{path}.stagger"),
                "`stagger` spaces the copies of a flow: give `count` too",
            ));
        }
        return Ok(vec![flow]);
    };
    let n = *count.get_ref();
    if !(1..=MAX_FLOW_COPIES).contains(&n) {
        return Err(source.invalid(
            count.span(),
            format!("{path}.count"),
            format!("{n} copies is outside 1..={MAX_FLOW_COPIES}"),
        ));
    }
    let mut flows = Vec::new();
    for i in 0..n {
        let offset = u32::try_from(i)
            .ok()
            .and_then(|i| stagger.checked_mul(i))
            .unwrap_or(Duration::MAX);
        let start = flow.start.saturating_add(offset);
        let latest = start.saturating_add(flow.start_jitter);
        let stop_ok = flow.stop.is_none_or(|stop| latest < stop);
        if latest >= run_duration || !stop_ok {
            let span = raw.stagger.as_ref().map_or(count.span(), |s| s.span());
            return Err(source.invalid(
                span,
                format!("{path}.stagger"),
                format!(
                    "copy {} of flow \"{}\" could start at {latest:?}, after its stop or the \
                     end of the run",
                    i + 1,
                    flow.name
                ),
            ));
        }
        flows.push(Flow {
            name: format!("{}-{}", flow.name, i + 1),
            start,
            ..flow.clone()
        });
    }
    Ok(flows)
}
