//! Congestion response and recovery at the sender (paper 004 §2.3): η held
//! from the last congestion feedback, and δ stepping back to 1 after calm
//! feedbacks (eq. 5).

use super::equations::probe_share;
use super::Share;

/// Paper 004 §2.3: "δ is progressively increased in a sequence similar to
/// 1/8, 1/4, 1/2, 3/4, 7/8, 1".
///
/// The stepping rule (ours; the paper gives the sequence, not the pace): δ
/// is 0 from a congestion feedback on; the `calm_feedbacks`-th calm
/// feedback in a row (3, "over at least 3 feedback updates") sets it to 1/8,
/// and every calm feedback after that moves it one step on, up to 1, which
/// is the full stream again. One step per feedback, not per window, so that
/// every increase is seen by the receiver, which can call congestion before
/// the next; the receiver's feedback comes at least every T_fb = T_s/2, so
/// a full recovery takes at most 8·T_fb after the congestion ends. Any
/// congestion feedback sets δ back to 0.
pub const DELTA_SEQUENCE: [f64; 6] = [0.125, 0.25, 0.5, 0.75, 0.875, 1.0];

/// Where the sender is between congestion and the full stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Recovery {
    /// 0: δ = 0 (responding to congestion); k ≥ 1: δ = DELTA_SEQUENCE[k − 1].
    step: usize,
    /// Calm feedbacks in a row.
    calm: u32,
    /// η of the last congestion feedback.
    eta: Share,
    calm_needed: u32,
}

impl Recovery {
    /// The full stream (δ = 1), before any congestion.
    pub(super) fn new(calm_needed: u32) -> Recovery {
        Recovery {
            step: DELTA_SEQUENCE.len(),
            calm: 0,
            eta: Share::ONE,
            calm_needed: calm_needed.max(1),
        }
    }

    /// δ now: 0 after congestion, then the sequence's values.
    pub(super) fn delta(&self) -> Share {
        match self.step {
            0 => Share::ZERO,
            k => Share::new(DELTA_SEQUENCE[(k - 1).min(DELTA_SEQUENCE.len() - 1)]),
        }
    }

    /// η of the last congestion feedback (1 before any).
    pub(super) fn eta(&self) -> Share {
        self.eta
    }

    /// Calm feedbacks in a row.
    pub(super) fn calm(&self) -> u32 {
        self.calm
    }

    /// The share of each enhancement layer to send: eq. 5's δ + η(1 − δ),
    /// which is eq. 3's η at δ = 0 and the whole layer at δ = 1.
    pub(super) fn share(&self) -> Share {
        probe_share(self.delta(), self.eta)
    }

    /// A feedback reported congestion with this η: respond (eq. 3), reset δ.
    pub(super) fn on_congestion(&mut self, eta: Share) {
        self.step = 0;
        self.calm = 0;
        self.eta = eta;
    }

    /// A feedback found the buffer above T_c: after `calm_needed` in a row,
    /// one step of δ per feedback.
    pub(super) fn on_calm(&mut self) {
        self.calm = self.calm.saturating_add(1);
        if self.calm >= self.calm_needed && self.step < DELTA_SEQUENCE.len() {
            self.step += 1;
        }
    }

    /// A feedback neither congested nor above T_c: the calm run ends.
    pub(super) fn on_unsettled(&mut self) {
        self.calm = 0;
    }
}
