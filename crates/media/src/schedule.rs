//! Smoothing schedules for stored video (paper 003 §3): the latest schedule
//! S_late, the earliest S_early, the minimum start-up delay w*, the minimum
//! client buffer x*, and the proxy case's buffer y'.
//!
//! **The model, made exact** (paper 003 states it loosely; this is the
//! usual cumulative-curve model of smoothing, Salehi et al. 1996):
//! - Time runs in slots (frame periods unless told otherwise), numbered
//!   from 0. `D_m` is the bytes of frames 0..=m (`D_-1 = 0`): the playout
//!   vector.
//! - With a start-up delay of `w` slots the client plays frame `m` in slot
//!   `m + w`, so it must hold `D_{j−w}` bytes by the end of slot `j`.
//! - A schedule `S_j` is the bytes sent by the end of slot `j` (`S_-1 = 0`);
//!   at most `R_j` bytes leave in slot `j` (a fixed rate, or a per-slot
//!   curve whose last value repeats). Transfer is taken as instant within
//!   the slot (the propagation delay adds to `w` outside this model).
//! - The client buffer at the end of slot `j` is `S_j − D_{j−w}`.
//!
//! Then (§3.1): `S_late` sends as late as the rate allows —
//! `S_late_j = max(D_{j−w}, S_late_{j+1} − R_{j+1})` from the last slot
//! `j = N + w` (where it is `D_N`) backwards — and it is feasible exactly
//! when it needs nothing before slot 0 (`S_late_0 ≤ R_0`). `w*` is the
//! smallest feasible `w`, and `x* = max_j (S_late_j − D_{j−w})`, since the
//! latest schedule holds the least data at every slot.
//!
//! The proxy case (§3.2): step 1 computes `w*` and `x*` for the wireless
//! hop (proxy to client, rate `r`) as if the proxy held the whole video.
//! Step 2 schedules the proxy's sending as early as possible subject to the
//! upper bound `U_j = D_{j−w} + x*` (paper 003's `min{D_{k−w*} + x*, R_k}`:
//! the client's buffer and the rate) and to what the server can have sent
//! it by then, and the server's sending as late as
//! its rate `R_j` allows while keeping the proxy supplied. The proxy buffer
//! is `y' = max_j (S_in_j − S_out_j)`, the least the proxy must hold for
//! that delay and client buffer. When the server's path is too slow for
//! `w*` (it cannot keep ahead of the latest proxy schedule), `w` grows
//! until it can; the delay reported is that `w`, and the client buffer the
//! latest schedule's peak for it (`x*` when `w = w*`). (The paper names the server's schedule
//! S_early'; its text leaves which side the bound applies to open, and this
//! reading is the one whose y' is a minimum.)

use serde::Serialize;

/// Why schedules cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// No frames.
    #[error("the playout vector is empty: no frames")]
    Empty,
    /// The total size does not fit 64 bits.
    #[error("the frame sizes add up to more than 2^64 bytes")]
    Overflow,
    /// A rate of zero bytes in every slot from some point on: the stream
    /// can never be delivered.
    #[error("the rate constraint delivers {deliverable} bytes in all, less than the {needed} the video needs")]
    NeverDelivered {
        /// Bytes the constraint ever allows.
        deliverable: u64,
        /// Bytes of the video.
        needed: u64,
    },
    /// A rate curve with no slots.
    #[error("the rate curve has no slots")]
    EmptyCurve,
}

/// The playout vector: cumulative bytes the client consumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Playout {
    cumulative: Vec<u64>,
}

impl Playout {
    /// The playout vector of frames of these sizes, one frame a slot.
    pub fn from_frame_sizes(sizes: &[u64]) -> Result<Playout, ScheduleError> {
        if sizes.is_empty() {
            return Err(ScheduleError::Empty);
        }
        let mut cumulative = Vec::with_capacity(sizes.len());
        let mut total = 0u64;
        for &size in sizes {
            total = total.checked_add(size).ok_or(ScheduleError::Overflow)?;
            cumulative.push(total);
        }
        Ok(Playout { cumulative })
    }

    /// `D_0 … D_N`.
    pub fn cumulative(&self) -> &[u64] {
        &self.cumulative
    }

    /// `D_m` for any `m` (0 before the first frame, `D_N` after the last).
    fn at(&self, m: i64) -> u64 {
        if m < 0 {
            0
        } else {
            self.cumulative
                .get(m as usize)
                .copied()
                .unwrap_or_else(|| self.total())
        }
    }

    /// `D_N`, the bytes of the whole video.
    pub fn total(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }

    /// Slots of frames, `N + 1`.
    pub fn frames(&self) -> usize {
        self.cumulative.len()
    }
}

/// How many bytes may be sent in each slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateConstraint {
    /// The same in every slot.
    Fixed {
        /// Bytes per slot.
        bytes_per_slot: u64,
    },
    /// One value per slot; the last repeats for ever.
    Curve(Vec<u64>),
}

impl RateConstraint {
    /// `R_j`.
    pub fn at(&self, slot: usize) -> u64 {
        match self {
            RateConstraint::Fixed { bytes_per_slot } => *bytes_per_slot,
            RateConstraint::Curve(values) => {
                values.get(slot).or(values.last()).copied().unwrap_or(0)
            }
        }
    }

    fn check(&self, needed: u64) -> Result<(), ScheduleError> {
        let tail = match self {
            RateConstraint::Fixed { bytes_per_slot } => *bytes_per_slot,
            RateConstraint::Curve(values) => *values.last().ok_or(ScheduleError::EmptyCurve)?,
        };
        if tail > 0 {
            return Ok(());
        }
        let deliverable = match self {
            RateConstraint::Fixed { .. } => 0,
            RateConstraint::Curve(values) => values.iter().fold(0u64, |a, v| a.saturating_add(*v)),
        };
        if deliverable < needed {
            return Err(ScheduleError::NeverDelivered {
                deliverable,
                needed,
            });
        }
        Ok(())
    }

    /// A bound on the start-up delay: enough slots for the rate to move the
    /// whole video even if nothing could be sent early.
    fn delay_bound(&self, playout: &Playout) -> usize {
        let needed = playout.total();
        let mut sent = 0u64;
        let mut slot = 0usize;
        while sent < needed && slot < 1 << 26 {
            sent = sent.saturating_add(self.at(slot));
            slot += 1;
        }
        slot + 1
    }
}

/// A cumulative schedule: bytes sent by the end of each slot, from slot 0.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// `S_0 … S_{N+w}`.
    pub cumulative_bytes: Vec<u64>,
}

/// The latest schedule for start-up delay `w`; `None` when it would have
/// to send before slot 0 (the delay is too short for the rate).
pub fn latest_schedule(playout: &Playout, w: usize, rate: &RateConstraint) -> Option<Schedule> {
    let last = playout.frames() - 1 + w;
    let mut schedule = vec![0u64; last + 1];
    schedule[last] = playout.total();
    for j in (0..last).rev() {
        let needed = playout.at(j as i64 - w as i64);
        schedule[j] = needed.max(schedule[j + 1].saturating_sub(rate.at(j + 1)));
    }
    (schedule[0] <= rate.at(0)).then_some(Schedule {
        cumulative_bytes: schedule,
    })
}

/// The earliest schedule: each slot sends as much as the rate, the data
/// available by then (`available(j)`, cumulative) and the upper bound
/// (`upper(j)`, cumulative) allow, over `slots` slots.
pub fn earliest_schedule(
    slots: usize,
    rate: &RateConstraint,
    available: impl Fn(usize) -> u64,
    upper: impl Fn(usize) -> u64,
) -> Schedule {
    let mut schedule = Vec::with_capacity(slots);
    let mut sent = 0u64;
    for j in 0..slots {
        sent = sent
            .saturating_add(rate.at(j))
            .min(available(j))
            .min(upper(j))
            .max(sent);
        schedule.push(sent);
    }
    Schedule {
        cumulative_bytes: schedule,
    }
}

/// `w*`: the smallest start-up delay, in slots, with a feasible schedule.
pub fn min_startup_delay(playout: &Playout, rate: &RateConstraint) -> Result<usize, ScheduleError> {
    rate.check(playout.total())?;
    let bound = rate.delay_bound(playout);
    (0..=bound)
        .find(|&w| latest_schedule(playout, w, rate).is_some())
        .ok_or(ScheduleError::NeverDelivered {
            deliverable: 0,
            needed: playout.total(),
        })
}

/// `x*` for start-up delay `w`: the smallest client buffer of any feasible
/// schedule; `None` if `w` is too short.
pub fn min_client_buffer(playout: &Playout, w: usize, rate: &RateConstraint) -> Option<u64> {
    let schedule = latest_schedule(playout, w, rate)?;
    Some(client_buffer_peak(playout, w, &schedule))
}

/// The largest client buffer occupancy of `schedule` with delay `w`.
pub fn client_buffer_peak(playout: &Playout, w: usize, schedule: &Schedule) -> u64 {
    schedule
        .cumulative_bytes
        .iter()
        .enumerate()
        .map(|(j, &s)| s.saturating_sub(playout.at(j as i64 - w as i64)))
        .max()
        .unwrap_or(0)
}

/// Whether `schedule` meets the rate, never lets the client run dry with
/// delay `w`, and sends the whole video.
pub fn is_feasible(
    playout: &Playout,
    w: usize,
    rate: &RateConstraint,
    schedule: &Schedule,
) -> bool {
    let mut previous = 0u64;
    for (j, &s) in schedule.cumulative_bytes.iter().enumerate() {
        if s < previous || s - previous > rate.at(j) || s < playout.at(j as i64 - w as i64) {
            return false;
        }
        previous = s;
    }
    previous == playout.total()
}

/// The end-to-end case: `w*`, `x*` and the latest schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EndToEndPlan {
    /// `w*`, slots.
    pub startup_delay_slots: usize,
    /// `x*`, bytes.
    pub client_buffer_bytes: u64,
    /// `S_late` for `w*`.
    pub schedule: Schedule,
}

/// Paper 003 §3.1.
pub fn end_to_end_plan(
    playout: &Playout,
    rate: &RateConstraint,
) -> Result<EndToEndPlan, ScheduleError> {
    let w = min_startup_delay(playout, rate)?;
    let schedule = latest_schedule(playout, w, rate).ok_or(ScheduleError::NeverDelivered {
        deliverable: 0,
        needed: playout.total(),
    })?;
    Ok(EndToEndPlan {
        startup_delay_slots: w,
        client_buffer_bytes: client_buffer_peak(playout, w, &schedule),
        schedule,
    })
}

/// The proxy case: the delay, both buffers and both schedules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProxyPlan {
    /// The end-to-end start-up delay, slots (step 1's `w*`, grown if the
    /// server's path cannot keep up).
    pub startup_delay_slots: usize,
    /// `x*`, bytes.
    pub client_buffer_bytes: u64,
    /// `y'`, bytes.
    pub proxy_buffer_bytes: u64,
    /// Server to proxy (`S_early'`).
    pub server_schedule: Schedule,
    /// Proxy to client.
    pub proxy_schedule: Schedule,
}

/// Paper 003 §3.2's two steps: `server_rate` on the shared path to the
/// proxy, `proxy_rate` on the dedicated hop to the client.
pub fn proxy_plan(
    playout: &Playout,
    server_rate: &RateConstraint,
    proxy_rate: &RateConstraint,
) -> Result<ProxyPlan, ScheduleError> {
    server_rate.check(playout.total())?;
    let step1 = end_to_end_plan(playout, proxy_rate)?;
    let bound = step1.startup_delay_slots
        + server_rate.delay_bound(playout)
        + proxy_rate.delay_bound(playout);
    let total = playout.total();
    for w in step1.startup_delay_slots..=bound {
        let slots = playout.frames() + w;
        // What the server can have delivered by each slot.
        let supply = earliest_schedule(slots, server_rate, |_| total, |_| total);
        // The latest proxy schedule is the least any feasible one sends by
        // every slot: if the server cannot keep ahead of it, nothing can.
        let Some(late) = latest_schedule(playout, w, proxy_rate) else {
            continue;
        };
        if late
            .cumulative_bytes
            .iter()
            .zip(&supply.cumulative_bytes)
            .any(|(need, can)| need > can)
        {
            continue;
        }
        // x(w): at w* this is x*; a longer delay may need a little more.
        let x = client_buffer_peak(playout, w, &late);
        let upper = |j: usize| playout.at(j as i64 - w as i64).saturating_add(x);
        // The proxy sends as early as the client's buffer and the data it
        // can have received allow...
        let proxy = earliest_schedule(
            slots,
            proxy_rate,
            |j| supply.cumulative_bytes.get(j).copied().unwrap_or(total),
            upper,
        );
        if !is_feasible(playout, w, proxy_rate, &proxy) {
            continue;
        }
        // ...and the server as late as its rate allows while keeping the
        // proxy supplied: the least the proxy must hold.
        let mut server = vec![0u64; slots];
        server[slots - 1] = total;
        for j in (0..slots - 1).rev() {
            server[j] =
                proxy.cumulative_bytes[j].max(server[j + 1].saturating_sub(server_rate.at(j + 1)));
        }
        if server[0] > server_rate.at(0) {
            continue;
        }
        let proxy_buffer = server
            .iter()
            .zip(&proxy.cumulative_bytes)
            .map(|(a, b)| a.saturating_sub(*b))
            .max()
            .unwrap_or(0);
        return Ok(ProxyPlan {
            startup_delay_slots: w,
            client_buffer_bytes: client_buffer_peak(playout, w, &proxy),
            proxy_buffer_bytes: proxy_buffer,
            server_schedule: Schedule {
                cumulative_bytes: server,
            },
            proxy_schedule: proxy,
        });
    }
    Err(ScheduleError::NeverDelivered {
        deliverable: 0,
        needed: playout.total(),
    })
}

#[cfg(test)]
mod tests;
