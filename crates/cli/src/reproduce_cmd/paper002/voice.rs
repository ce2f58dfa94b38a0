//! Paper 002's Figs. 2 and 3: a VoIP call's R and MOS over DCCP CCID 4 on
//! the RRM link, against the delay and as the web traffic grows.

use anyhow::{Context as _, Result};
use fairstream_report::{Chart, Page, Table};

use super::super::compare::{verdict, Direction, Results};
use super::super::{Quick, Runner};
use super::runs_line;
use crate::sweep_cmd::plan::CASE_KEY;

/// `--quick` for Figs. 2 and 3: two seeds of 40 s (the full run: ten of
/// 120 s).
const QUICK_VOICE: Quick = Quick {
    seeds: 2,
    duration: "40s",
};

/// Fig. 2's cases: (name in the report, the sweep file's case).
const CODECS: [(&str, &str); 4] = [
    ("G.711", "\"g711\""),
    ("G.711 with VAD", "\"g711-vad\""),
    ("G.729", "\"g729\""),
    ("G.729 with VAD", "\"g729-vad\""),
];

/// Fig. 2's swept delay, as drawn (ms) and as the sweep file writes it.
const DELAY_KEY: &str = "link.terminal-callee.delay";
const DELAYS: [(f64, &str); 6] = [
    (50.0, "\"50ms\""),
    (100.0, "\"100ms\""),
    (150.0, "\"150ms\""),
    (200.0, "\"200ms\""),
    (250.0, "\"250ms\""),
    (300.0, "\"300ms\""),
];

/// Fig. 3's cases: (name in the report, the sweep file's case).
const LINKS: [(&str, &str); 6] = [
    ("RS 300 ms, no priority", "\"rs-fifo\""),
    ("RS 300 ms, CBQ", "\"rs-cbq\""),
    ("TS 600 ms, no priority", "\"ts-fifo\""),
    ("TS 600 ms, CBQ", "\"ts-cbq\""),
    ("RS 300 ms, CBQ, adaptive buffer", "\"rs-cbq-adaptive\""),
    ("TS 600 ms, CBQ, adaptive buffer", "\"ts-cbq-adaptive\""),
];

/// Fig. 3's swept web load, as drawn and as the sweep file writes it.
const WEB_KEY: &str = "flow.web.transport.sessions";
const WEB_USERS: [(f64, &str); 5] = [
    (5.0, "5"),
    (10.0, "10"),
    (20.0, "20"),
    (40.0, "40"),
    (80.0, "80"),
];

/// "Medium" perceived quality and better: R ≥ 70, MOS ≥ 3.6 (Table 2).
const MEDIUM_MOS: f64 = 3.6;

/// A voice sweep's table: a row per case and value of `key`, with R, MOS,
/// loss, delay and the calls that started.
fn voice_table(
    results: &Results<'_>,
    page: &mut Page,
    cases: &[(&str, &str)],
    (column, key, values): (&str, &str, &[(f64, &str)]),
) -> Result<()> {
    let mut rows = Vec::new();
    for (name, case) in cases {
        for (_, value) in values {
            let point = results.point(&[(CASE_KEY, case), (key, value)])?;
            let (started, seeds) = results.present(point, "call_start_s")?;
            rows.push(vec![
                (*name).to_owned(),
                value.trim_matches('"').to_owned(),
                results.stat(point, "r")?.show(1.0, 1),
                results.stat(point, "mos")?.show(1.0, 2),
                results
                    .stat_given(point, "loss_percent", "call_start_s")?
                    .show(1.0, 1),
                results.stat(point, "mean_delay_s")?.show(1e3, 0),
                results.stat(point, "mouth_to_ear_s")?.show(1e3, 0),
                format!("{started} of {seeds}"),
            ]);
        }
    }
    page.table(Table {
        header: [
            "call",
            column,
            "R",
            "MOS",
            "frames not played (%)",
            "mean network delay (ms)",
            "mouth to ear (ms)",
            "calls started",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    });
    Ok(())
}

/// The mean MOS of `case` over `values` of `key` (each point's mean), and
/// the values at which it is at least [`MEDIUM_MOS`].
fn mos_over(
    results: &Results<'_>,
    case: &str,
    key: &str,
    values: &[(f64, &str)],
) -> Result<(f64, Vec<f64>)> {
    let mut sum = 0.0;
    let mut counted = 0.0;
    let mut medium = Vec::new();
    for (x, value) in values {
        let mos = results
            .stat(results.point(&[(CASE_KEY, case), (key, value)])?, "mos")?
            .mean;
        if mos.is_finite() {
            sum += mos;
            counted += 1.0;
            if mos >= MEDIUM_MOS {
                medium.push(*x);
            }
        }
    }
    Ok((sum / counted, medium))
}

/// The paragraph on R's noise that Figs. 2 and 3 share.
const R_NOTE: &str =
    "R is the mean over the seeds of each call's R with its 95 % confidence interval, MOS the \
     same of each call's MOS; G.107's R has no lower bound (a call with most of its frames late \
     scores far below 0), so a single bad call can drag a cell's mean R down by hundreds, \
     while its MOS stops at 1. The verdicts below use MOS for that reason (MOS ≥ 3.6 is R ≥ 70, \
     Table 2's \"medium\"). A call that never started (paper 002's rule: it starts when CCID 4's \
     allowed rate reaches the codec's) has no R: `calls started` says how many did.";

/// Fig. 2: R against the network delay, two codecs with and without VAD.
pub(super) fn fig2(context: &Runner, page: &mut Page) -> Result<()> {
    page.heading(2, "Fig. 2: R scores against the network delay");
    let plan = context.plan("sweeps/paper002/fig2.toml", QUICK_VOICE)?;
    page.paragraph(&format!(
        "One call over DCCP CCID 4 beside background web traffic (10 users), the link's \
         propagation delay 50-300 ms each way, G.711 and G.729 with and without VAD (talk \
         spurts of 1.0 s and silences of 1.5 s on average), a 5-frame transmit buffer, a 60 ms \
         de-jitter buffer. {} {R_NOTE}",
        runs_line(
            context,
            plan.seeds.len(),
            &Runner::duration(&plan),
            "ten seeds of 120 s"
        )
    ));
    let outcome = context.run("fig2", &plan)?;
    let results = Results {
        plan: &plan,
        outcome: &outcome,
    };
    voice_table(&results, page, &CODECS, ("delay", DELAY_KEY, &DELAYS))?;
    for (file, metric, label) in [("fig2-r", "r", "R"), ("fig2-mos", "mos", "MOS")] {
        let mut chart = Chart::new(
            &format!("Fig. 2: {label} against the network delay"),
            "one-way propagation delay (ms)",
            label,
        );
        for (name, case) in CODECS {
            chart = chart.series(results.curve(
                name,
                metric,
                (DELAY_KEY, &DELAYS),
                &[(CASE_KEY, case)],
                1.0,
            )?);
        }
        page.chart(file, chart);
    }

    page.heading(3, "The paper's claims, checked");
    let mut claims = Vec::new();
    for (plain, vad) in [(CODECS[0], CODECS[1]), (CODECS[2], CODECS[3])] {
        let (plain_mos, medium) = mos_over(&results, plain.1, DELAY_KEY, &DELAYS)?;
        let (vad_mos, _) = mos_over(&results, vad.1, DELAY_KEY, &DELAYS)?;
        let shown: Vec<String> = medium.iter().map(|d| format!("{d:.0}")).collect();
        claims.push(format!(
            "\"Even with increased delays, medium perceived quality could be achieved without \
             VAD\", {}: ours reaches MOS ≥ 3.6 at {} of the {} delays ({}): {}.",
            plain.0,
            medium.len(),
            DELAYS.len(),
            if shown.is_empty() {
                "none".to_owned()
            } else {
                format!("{} ms", shown.join(", "))
            },
            verdict(medium.len() == DELAYS.len())
        ));
        claims.push(format!(
            "\"When VAD is employed ... leading to a poor perceived quality\", {}: ours averages \
             MOS {vad_mos:.2} with VAD against {plain_mos:.2} without, over the delays: {}.",
            plain.0,
            verdict(Direction::of(plain_mos, vad_mos, 0.02) == Direction::Down)
        ));
    }
    page.list(&claims);
    let g711 = results.point(&[(CASE_KEY, CODECS[0].1), (DELAY_KEY, DELAYS[0].1)])?;
    let g729 = results.point(&[(CASE_KEY, CODECS[2].1), (DELAY_KEY, DELAYS[0].1)])?;
    page.paragraph(&format!(
        "Where ours differ, and why. At {delay} ms of propagation delay, G.711's mean network \
         delay is {mean} ms: the call's frames queue behind the web transfers in the 50-packet \
         FIFO (50 packets of 1500 bytes take 300 ms at 2 Mbit/s) on a link whose grants follow \
         the queue 300 ms late. Its mouth-to-ear delay, {ta} ms, is later still: the listener's \
         fixed playout point is the first frame's delay plus the 60 ms de-jitter buffer, and \
         the first frames wait for capacity the terminal has not yet been granted. A \
         mouth-to-ear delay of 450-500 ms alone costs G.107's R 35-39 points (its Id; \
         `fairstream emodel --codec g711 --delay 450ms` gives R 58.2 without a loss), and frames \
         later than the playout point count as lost. The paper gives neither its de-jitter \
         buffer, nor its playout rule, nor its web load, and they decide Ta and how many frames \
         come too late. G.729 beside G.711 at {delay} ms: MOS {g729_mos} against {g711_mos}, \
         {g729_loss} % of its frames not played, {g729_drops} frames a call dropped by the \
         sender's 5-frame buffer (G.711: {g711_drops}). CCID 4 keeps a call of 20-byte frames \
         at the rate it sends through loss (RFC 4828's header allowance scales the equation's \
         rate, not the receive limit; before that fix 82 % of G.729's frames at 50 ms went \
         unplayed, nearly all dropped at the sender).",
        delay = DELAYS[0].0,
        mean = results.stat(g711, "mean_delay_s")?.show(1e3, 0),
        ta = results.stat(g711, "mouth_to_ear_s")?.show(1e3, 0),
        g729_loss = results
            .stat_given(g729, "loss_percent", "call_start_s")?
            .show(1.0, 1),
        g729_drops = results.stat(g729, "sender_drops")?.show(1.0, 0),
        g711_drops = results.stat(g711, "sender_drops")?.show(1.0, 0),
        g729_mos = results.stat(g729, "mos")?.show(1.0, 2),
        g711_mos = results.stat(g711, "mos")?.show(1.0, 2),
    ));
    Ok(())
}

/// Fig. 3: R at 300 ms (RS) and 600 ms (TS), without and with CBQ, as the
/// web traffic grows.
pub(super) fn fig3(context: &Runner, page: &mut Page) -> Result<()> {
    page.heading(2, "Fig. 3: R scores with and without priority queueing");
    let plan = context.plan("sweeps/paper002/fig3.toml", QUICK_VOICE)?;
    page.paragraph(&format!(
        "A G.711 call without VAD over DCCP CCID 4, the link at 300 ms with the regenerative \
         satellite's 300 ms request-grant delay (RS) or at 600 ms with the transparent one's \
         600 ms (TS), its queue one FIFO (\"no priority\") or strict priority for the call \
         (CBQ), beside 5-80 web users. {} {R_NOTE}",
        runs_line(
            context,
            plan.seeds.len(),
            &Runner::duration(&plan),
            "ten seeds of 120 s"
        )
    ));
    let outcome = context.run("fig3", &plan)?;
    let results = Results {
        plan: &plan,
        outcome: &outcome,
    };
    voice_table(&results, page, &LINKS, ("web users", WEB_KEY, &WEB_USERS))?;
    for (file, metric, label) in [("fig3-r", "r", "R"), ("fig3-mos", "mos", "MOS")] {
        let mut chart = Chart::new(
            &format!("Fig. 3: {label} of a G.711 call as the web traffic grows"),
            "web users",
            label,
        );
        for (name, case) in LINKS {
            chart = chart.series(results.curve(
                name,
                metric,
                (WEB_KEY, &WEB_USERS),
                &[(CASE_KEY, case)],
                1.0,
            )?);
        }
        page.chart(file, chart);
    }

    page.heading(3, "The paper's claims, checked");
    let mos = |case: usize| -> Result<(f64, Vec<f64>)> {
        let (_, name) = LINKS.get(case).context("a link case")?;
        mos_over(&results, name, WEB_KEY, &WEB_USERS)
    };
    let (rs_fifo, rs_cbq, ts_fifo, ts_cbq) = (mos(0)?.0, mos(1)?.0, mos(2)?.0, mos(3)?.0);
    let (rs_adaptive, ts_adaptive) = (mos(4)?.0, mos(5)?.0);
    // The lightest and the heaviest web load at which a call started.
    let at_ends = |case: usize| -> Result<Ends> {
        let (_, name) = LINKS.get(case).context("a link case")?;
        let mut scored = Vec::new();
        for (users, value) in WEB_USERS {
            let point = results.point(&[(CASE_KEY, name), (WEB_KEY, value)])?;
            let mos = results.stat(point, "mos")?.mean;
            if mos.is_finite() {
                scored.push((users, mos));
            }
        }
        Ok(Ends {
            first: scored.first().copied(),
            last: scored.last().copied(),
        })
    };
    let (rs_fifo_ends, ts_fifo_ends) = (at_ends(0)?, at_ends(2)?);
    let (rs_cbq_ends, ts_cbq_ends) = (at_ends(1)?, at_ends(3)?);
    let lower = |a: f64, b: f64| {
        a.is_finite() && b.is_finite() && Direction::of(a, b, 0.02) == Direction::Down
    };
    let not_lower = |a: f64, b: f64| {
        a.is_finite() && b.is_finite() && Direction::of(a, b, 0.02) != Direction::Down
    };
    page.list(&[
        format!(
            "\"the effect of a 600 ms propagation (TS) delay ... evident from the low R Scores \
             when compared to the case for 300 ms case (RS)\": ours averages MOS {ts_fifo:.2} \
             (TS) against {rs_fifo:.2} (RS) without priority and {ts_cbq:.2} against \
             {rs_cbq:.2} with CBQ: {}.",
            verdict(lower(rs_fifo, ts_fifo) && lower(rs_cbq, ts_cbq))
        ),
        format!(
            "\"The QoS-aware approach is advantageous\": ours averages MOS {rs_cbq:.2} with CBQ \
             against {rs_fifo:.2} without at RS, {ts_cbq:.2} against {ts_fifo:.2} at TS: {}.",
            verdict(lower(rs_cbq, rs_fifo) && lower(ts_cbq, ts_fifo))
        ),
        format!(
            "\"The voice quality decreases with increasing background web traffic\" (no \
             priority): ours goes from {} at RS, {} at TS: {}.",
            rs_fifo_ends.show(),
            ts_fifo_ends.show(),
            verdict(rs_fifo_ends.falls(&lower) && ts_fifo_ends.falls(&lower))
        ),
        format!(
            "\"Priority queuing allows voice traffic to take priority ... reducing the delay \
             seen by the higher priority VoIP traffic\" as the traffic grows (CBQ keeps its \
             quality): ours goes from {} at RS, {} at TS: {}.",
            rs_cbq_ends.show(),
            ts_cbq_ends.show(),
            verdict(rs_cbq_ends.falls(&not_lower) && ts_cbq_ends.falls(&not_lower))
        ),
    ]);
    page.paragraph(
        "Where ours differ, and why: G.107 itself puts a ceiling on R at these delays. A G.711 \
         call that loses nothing scores R 62.3 at a mouth-to-ear delay of 400 ms and 47.4 at \
         650 ms (`fairstream emodel --codec g711 --delay 400ms`, then `--delay 650ms`): \
         Table 2's \"low\" at best over RS, below its \"poor\" over TS, whatever the queue \
         does. Our calls' playout points lie above the mean network delay (the first frames wait \
         for grants), and without priority the call's frames share the FIFO with the web \
         transfers, so what the web load makes late is lost; the paper gives no web load, and \
         ours in users is a guess at its scale. That more web users raise the call's quality \
         under CBQ is the paper's own explanation: more traffic, larger requests, more slots \
         granted, less waiting for the call's frames.",
    );
    page.paragraph(&format!(
        "Beyond the paper: the fixed buffer keeps the wait of the call's first frames for the \
         whole call. With the listener's adaptive de-jitter buffer instead (Ramjee et al. 1994, \
         algorithm 1: each talk spurt plays at the smoothed delay plus four times its smoothed \
         variation), CBQ's calls average MOS {rs_adaptive:.2} at RS and {ts_adaptive:.2} at TS \
         over the web loads (fixed buffer: {rs_cbq:.2} and {ts_cbq:.2}). Without VAD a call \
         is one talk spurt, so the adaptive playout point is set once, from the delays seen \
         before the first frame plays: the call plays earlier (the mouth-to-ear column) and \
         more of its frames arrive after their playout time (frames not played)."
    ));
    Ok(())
}

/// A case's MOS at the lightest and the heaviest web load at which a call
/// started: (web users, MOS).
struct Ends {
    first: Option<(f64, f64)>,
    last: Option<(f64, f64)>,
}

impl Ends {
    /// "MOS 1.58 at 5 users to 1.00 at 80 (no call started at 40, 80)".
    fn show(&self) -> String {
        let heaviest = WEB_USERS[WEB_USERS.len() - 1].0;
        match (self.first, self.last) {
            (Some((a, mos_a)), Some((b, mos_b))) => {
                let mut text = format!("MOS {mos_a:.2} at {a:.0} users to {mos_b:.2} at {b:.0}");
                if b < heaviest {
                    text.push_str(&format!(" (no call started above {b:.0} users)"));
                }
                text
            }
            _ => "no call that started".to_owned(),
        }
    }

    /// Whether `test` holds from the first to the last; false when fewer
    /// than two loads scored a call.
    fn falls(&self, test: &dyn Fn(f64, f64) -> bool) -> bool {
        match (self.first, self.last) {
            (Some((a, mos_a)), Some((b, mos_b))) if a < b => test(mos_a, mos_b),
            _ => false,
        }
    }
}
