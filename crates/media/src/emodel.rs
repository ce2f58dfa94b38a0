//! The ITU-T G.107 E-model: a voice call's transmission rating R and its MOS.
//!
//! Paper 002 scores its VoIP calls with "the E-Model defined in \[17\]", ITU-T
//! G.107 (03/2005), and maps R to MOS with its Table 2. This module is that
//! model in full: every input of G.107 §3.7 Table 1 is a field of
//! [`EModelInput`], whose `Default` is the table's default values, and
//! [`EModelInput::evaluate`] computes
//!
//! ```text
//! R = Ro − Is − Id − Ie,eff + A                        G.107 §3.1
//! ```
//!
//! with the basic signal-to-noise ratio Ro (§3.2), the simultaneous
//! impairments Is (§3.3), the delay impairments Id (§3.4), the effective
//! equipment impairment Ie,eff with packet loss and its burstiness (§3.5),
//! and the advantage factor A (§3.6). [`mos_from_r`] is G.107 Annex B.
//! Section numbers are those of G.107 (03/2005), the edition paper 002
//! cites; the 2011 and later editions number the same clauses 7.1–7.7.
//!
//! Codecs are G.113 Appendix I's planning values ([`Codec`]); a two-state
//! (Gilbert) loss model gives its burst ratio through [`GilbertLoss`].
//!
//! # Sources
//! The Recommendation's own text was not at hand here. The formulas were
//! checked against: the contents of G.107 (03/2005) and (04/2009), which
//! give the clause numbers; ITU-T's online E-model calculator pages
//! (`itu.int/ITU-T/studygroups/com12/emodel/`), for the inputs and their
//! meanings; and two open-source implementations read to compare, term by
//! term, with what is written here: `manucorporat/e-model` (Go, after G.107
//! 06/2015, which prints R = 93.206208 for Table 1's defaults) and a
//! JavaScript calculator with the TERVs (STMR < 9 dB) and Idtes
//! (STMR > 20 dB) cases. The burst ratio's definition and its Markov-model
//! form are McGowan's (the patent that introduced it, and G.107 §3.5), as
//! restated by Rachwalski & Papir, "Burst Ratio in Concatenated
//! Markov-based Channels", JTIT 2014. The Bpl and Ie values are those of
//! G.113 Appendix I as several implementations quote them (see [`Codec`]).
//!
//! # Range
//! G.107 Annex A: the model is a planning tool, verified for a limited
//! range of inputs; R outside [0, 100] is clipped only when it is turned
//! into a MOS. Inputs are checked for what the formulas need (finite
//! numbers, non-negative delays, loss in [0, 100] %, Bpl > 0, BurstR > 0,
//! qdu ≥ 1, Ie in [0, 95]) and a bad one is an [`EModelError`] that names
//! it.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// An E-model input that the formulas cannot take.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EModelError {
    /// The input is NaN or infinite.
    #[error("E-model input {name} is {value}, not a finite number")]
    NotFinite {
        /// The input's G.107 symbol.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// The input is a number outside the range the model takes.
    #[error("E-model input {name} = {value} is outside {range}")]
    OutOfRange {
        /// The input's G.107 symbol.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The range it must be in, written out.
        range: &'static str,
    },
}

/// Every input of the E-model, with G.107 §3.7 Table 1's defaults.
///
/// Loudness ratings and losses are in dB, noise in dBm0p (circuit noise),
/// dBmp (noise floor) and dB(A) (room noise), delays in milliseconds, the
/// packet-loss probability in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EModelInput {
    /// SLR, send loudness rating (dB).
    pub slr_db: f64,
    /// RLR, receive loudness rating (dB).
    pub rlr_db: f64,
    /// STMR, sidetone masking rating (dB).
    pub stmr_db: f64,
    /// LSTR, listener sidetone rating (dB); G.107 has LSTR = STMR + Dr.
    pub lstr_db: f64,
    /// Ds, D-value of the telephone's send side.
    pub ds: f64,
    /// Dr, D-value of the telephone's receive side. It enters the model only
    /// through LSTR = STMR + Dr (Table 1's 18 = 15 + 3), which is given as
    /// its own input; kept so that the table is whole.
    pub dr: f64,
    /// TELR, talker echo loudness rating (dB).
    pub telr_db: f64,
    /// WEPL, weighted echo path loss (dB).
    pub wepl_db: f64,
    /// T, mean one-way delay of the echo path (ms).
    pub t_ms: f64,
    /// Tr, round-trip delay in a 4-wire loop (ms).
    pub tr_ms: f64,
    /// Ta, absolute (mouth-to-ear) delay in echo-free connections (ms).
    pub ta_ms: f64,
    /// qdu, number of quantizing distortion units (≥ 1).
    pub qdu: f64,
    /// Ie, equipment impairment factor of the codec, in [0, 95].
    pub ie: f64,
    /// Bpl, packet-loss robustness factor of the codec (> 0).
    pub bpl: f64,
    /// Ppl, random packet-loss probability (%), in [0, 100].
    pub ppl_percent: f64,
    /// BurstR, the burst ratio: 1 for random loss, more for bursty loss.
    pub burst_ratio: f64,
    /// Nc, circuit noise referred to the 0 dBr point (dBm0p).
    pub nc_dbm0p: f64,
    /// Nfor, noise floor at the receive side (dBmp).
    pub nfor_dbmp: f64,
    /// Ps, room noise at the send side (dB(A)).
    pub ps_dba: f64,
    /// Pr, room noise at the receive side (dB(A)).
    pub pr_dba: f64,
    /// A, the advantage factor.
    pub a: f64,
}

impl Default for EModelInput {
    /// G.107 §3.7 Table 1, "Default values and permitted ranges for the
    /// parameters".
    fn default() -> Self {
        Self {
            slr_db: 8.0,
            rlr_db: 2.0,
            stmr_db: 15.0,
            lstr_db: 18.0,
            ds: 3.0,
            dr: 3.0,
            telr_db: 65.0,
            wepl_db: 110.0,
            t_ms: 0.0,
            tr_ms: 0.0,
            ta_ms: 0.0,
            qdu: 1.0,
            ie: 0.0,
            bpl: 1.0,
            ppl_percent: 0.0,
            burst_ratio: 1.0,
            nc_dbm0p: -70.0,
            nfor_dbmp: -64.0,
            ps_dba: 35.0,
            pr_dba: 35.0,
            a: 0.0,
        }
    }
}

/// R, its MOS and the terms it is made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    /// R, the transmission rating factor.
    pub r: f64,
    /// MOS (conversational, estimated) from R, G.107 Annex B.
    pub mos: f64,
    /// Ro, the basic signal-to-noise ratio (§3.2).
    pub ro: f64,
    /// Is, the simultaneous impairment factor (§3.3).
    pub is: f64,
    /// Id = Idte + Idle + Idd, the delay impairment factor (§3.4).
    pub id: f64,
    /// Idte, talker echo.
    pub idte: f64,
    /// Idle, listener echo.
    pub idle: f64,
    /// Idd, too-long absolute delay.
    pub idd: f64,
    /// Ie,eff, the effective equipment impairment factor (§3.5).
    pub ie_eff: f64,
    /// A, the advantage factor (§3.6).
    pub a: f64,
}

impl EModelInput {
    /// The input with a codec's Ie and Bpl (G.113 Appendix I).
    #[must_use]
    pub fn with_codec(self, codec: Codec) -> Self {
        Self {
            ie: codec.ie(),
            bpl: codec.bpl(),
            ..self
        }
    }

    /// The input for a one-way mouth-to-ear delay `ta_ms`, with the echo
    /// delays following it as in G.107's simplified use for a symmetric
    /// path: T = Ta (the talker's echo comes back over the same one-way
    /// path) and Tr = 2·Ta (the round trip of the 4-wire loop).
    #[must_use]
    pub fn with_mouth_to_ear_delay(self, ta_ms: f64) -> Self {
        Self {
            t_ms: ta_ms,
            tr_ms: 2.0 * ta_ms,
            ta_ms,
            ..self
        }
    }

    /// Checks that every input is a number the formulas can take.
    pub fn validate(&self) -> Result<(), EModelError> {
        let finite = [
            ("SLR", self.slr_db),
            ("RLR", self.rlr_db),
            ("STMR", self.stmr_db),
            ("LSTR", self.lstr_db),
            ("Ds", self.ds),
            ("Dr", self.dr),
            ("TELR", self.telr_db),
            ("WEPL", self.wepl_db),
            ("Nc", self.nc_dbm0p),
            ("Nfor", self.nfor_dbmp),
            ("Ps", self.ps_dba),
            ("Pr", self.pr_dba),
            ("A", self.a),
        ];
        for (name, value) in finite {
            check(name, value, "", |_| true)?;
        }
        for (name, value) in [("T", self.t_ms), ("Tr", self.tr_ms), ("Ta", self.ta_ms)] {
            check(name, value, "[0, ∞) ms", |v| v >= 0.0)?;
        }
        check("qdu", self.qdu, "[1, ∞)", |v| v >= 1.0)?;
        check("Ie", self.ie, "[0, 95]", |v| (0.0..=95.0).contains(&v))?;
        check("Bpl", self.bpl, "(0, ∞)", |v| v > 0.0)?;
        check("Ppl", self.ppl_percent, "[0, 100] %", |v| {
            (0.0..=100.0).contains(&v)
        })?;
        check("BurstR", self.burst_ratio, "(0, ∞)", |v| v > 0.0)?;
        Ok(())
    }

    /// R, its MOS and its terms: G.107 §3.1–3.6 and Annex B.
    pub fn evaluate(&self) -> Result<Rating, EModelError> {
        self.validate()?;
        let no = self.total_noise();
        let ro = basic_signal_to_noise(self.slr_db, no);
        let simultaneous = self.simultaneous(ro, no);
        let is = simultaneous.iolr + simultaneous.ist + simultaneous.iq; // §3.3, Is = Iolr + Ist + Iq
        let idte = self.talker_echo(no, simultaneous.ist);
        let idle = listener_echo(ro, self.wepl_db, self.tr_ms);
        let idd = absolute_delay_impairment(self.ta_ms);
        let id = idte + idle + idd; // §3.4, Id = Idte + Idle + Idd
        let ie_eff =
            effective_equipment_impairment(self.ie, self.bpl, self.ppl_percent, self.burst_ratio);
        let r = ro - is - id - ie_eff + self.a; // §3.1
        Ok(Rating {
            r,
            mos: mos_from_r(r),
            ro,
            is,
            id,
            idte,
            idle,
            idd,
            ie_eff,
            a: self.a,
        })
    }

    /// G.107 §3.2: No, the noise sources added up at the 0 dBr point (dBm0p).
    fn total_noise(&self) -> f64 {
        let olr = self.slr_db + self.rlr_db; // §3.2, OLR = SLR + RLR
                                             // §3.2, Nos: room noise at the send side, referred to the 0 dBr point.
        let nos = self.ps_dba - self.slr_db - self.ds - 100.0
            + 0.004 * (self.ps_dba - olr - self.ds - 14.0).powi(2);
        // §3.2, Pre: the room noise at the receive side as the listener's
        // sidetone path raises it.
        let pre = self.pr_dba + 10.0 * (1.0 + 10f64.powf((10.0 - self.lstr_db) / 10.0)).log10();
        // §3.2, Nor: room noise at the receive side, referred to 0 dBr.
        let nor = self.rlr_db - 121.0 + pre + 0.008 * (pre - 35.0).powi(2);
        // §3.2, Nfo = Nfor + RLR: the noise floor at the receive side.
        let nfo = self.nfor_dbmp + self.rlr_db;
        // §3.2, No = 10 lg(10^(Nc/10) + 10^(Nos/10) + 10^(Nor/10) + 10^(Nfo/10)).
        10.0 * [self.nc_dbm0p, nos, nor, nfo]
            .iter()
            .map(|n| 10f64.powf(n / 10.0))
            .sum::<f64>()
            .log10()
    }

    /// G.107 §3.3: the impairments that come with the voice signal.
    fn simultaneous(&self, ro: f64, no: f64) -> Simultaneous {
        let olr = self.slr_db + self.rlr_db; // §3.2, OLR = SLR + RLR
                                             // §3.3, Iolr: too-low overall loudness.
        let xolr = olr + 0.2 * (64.0 + no - self.rlr_db);
        let iolr = 20.0 * ((1.0 + (xolr / 8.0).powi(8)).powf(1.0 / 8.0) - xolr / 8.0);
        // §3.3, Ist: non-optimum sidetone, from STMRo, which adds the
        // talker's echo to the sidetone.
        let stmro = -10.0
            * (10f64.powf(-self.stmr_db / 10.0)
                + (-self.t_ms / 4.0).exp() * 10f64.powf(-self.telr_db / 10.0))
            .log10();
        let ist = 12.0 * (1.0 + ((stmro - 13.0) / 6.0).powi(8)).powf(1.0 / 8.0)
            - 28.0 * (1.0 + ((stmro + 1.0) / 19.4).powi(35)).powf(1.0 / 35.0)
            - 13.0 * (1.0 + ((stmro - 3.0) / 33.0).powi(13)).powf(1.0 / 13.0)
            + 29.0;
        // §3.3, Iq: quantizing distortion, Iq = 15 lg(1 + 10^Y + 10^Z) with
        // Q = 37 − 15 lg(qdu), G = 1.07 + 0.258 Q + 0.0602 Q²,
        // Y = (Ro − 100)/15 + 46/8.4 − G/9 and Z = 46/30 − G/40.
        let q = 37.0 - 15.0 * self.qdu.log10();
        let g = 1.07 + 0.258 * q + 0.0602 * q * q;
        let y = (ro - 100.0) / 15.0 + 46.0 / 8.4 - g / 9.0;
        let z = 46.0 / 30.0 - g / 40.0;
        let iq = 15.0 * (1.0 + 10f64.powf(y) + 10f64.powf(z)).log10();
        Simultaneous { iolr, ist, iq }
    }

    /// G.107 §3.4: Idte, the talker-echo impairment.
    fn talker_echo(&self, no: f64, ist: f64) -> f64 {
        let t = self.t_ms;
        // §3.4, Roe = −1.5(No − RLR).
        let roe = -1.5 * (no - self.rlr_db);
        // §3.4, TERV = TELR − 40 lg((1 + T/10)/(1 + T/150)) + 6 e^(−0.3 T²);
        // "for values of STMR < 9 dB", TERVs = TERV + Ist/2 takes its place.
        let terv = self.telr_db - 40.0 * ((1.0 + t / 10.0) / (1.0 + t / 150.0)).log10()
            + 6.0 * (-0.3 * t * t).exp();
        let terv = if self.stmr_db < 9.0 {
            terv + ist / 2.0
        } else {
            terv
        };
        // §3.4, Re = 80 + 2.5(TERV − 14).
        let re = 80.0 + 2.5 * (terv - 14.0);
        // §3.4, Idte = [(Roe − Re)/2 + √((Roe − Re)²/4 + 100) − 1](1 − e^(−T)).
        let idte = ((roe - re) / 2.0 + ((roe - re).powi(2) / 4.0 + 100.0).sqrt() - 1.0)
            * (1.0 - (-t).exp());
        // §3.4, "for values of STMR > 20 dB", Idtes = √(Idte² + Ist²).
        if self.stmr_db > 20.0 {
            (idte * idte + ist * ist).sqrt()
        } else {
            idte
        }
    }
}

/// The three parts of Is, G.107 §3.3.
struct Simultaneous {
    iolr: f64,
    ist: f64,
    iq: f64,
}

/// G.107 §3.2, Ro = 15 − 1.5(SLR + No).
fn basic_signal_to_noise(slr_db: f64, no: f64) -> f64 {
    15.0 - 1.5 * (slr_db + no)
}

/// G.107 §3.4, Idle = (Ro − Rle)/2 + √((Ro − Rle)²/4 + 169), with
/// Rle = 10.5(WEPL + 7)(Tr + 1)^(−1/4): the listener-echo impairment.
fn listener_echo(ro: f64, wepl_db: f64, tr_ms: f64) -> f64 {
    let rle = 10.5 * (wepl_db + 7.0) * (tr_ms + 1.0).powf(-0.25);
    (ro - rle) / 2.0 + ((ro - rle).powi(2) / 4.0 + 169.0).sqrt()
}

/// Idd, the impairment of a too-long absolute delay Ta (ms), G.107 §3.4:
/// 0 for Ta ≤ 100 ms, else 25{(1 + X⁶)^(1/6) − 3(1 + (X/3)⁶)^(1/6) + 2}
/// with X = lg(Ta/100)/lg 2.
///
/// Ta must be a finite number ≥ 0 (as [`EModelInput::validate`] checks);
/// NaN gives NaN.
pub fn absolute_delay_impairment(ta_ms: f64) -> f64 {
    if ta_ms <= 100.0 {
        return 0.0;
    }
    let x = (ta_ms / 100.0).log10() / 2f64.log10();
    25.0 * ((1.0 + x.powi(6)).powf(1.0 / 6.0) - 3.0 * (1.0 + (x / 3.0).powi(6)).powf(1.0 / 6.0)
        + 2.0)
}

/// Ie,eff = Ie + (95 − Ie)·Ppl/(Ppl/BurstR + Bpl), G.107 §3.5: the codec's
/// impairment Ie raised by packet loss Ppl (%), less for a codec robust to
/// loss (larger Bpl), more for bursty loss (BurstR > 1).
///
/// The inputs are those [`EModelInput::validate`] accepts; others give a
/// meaningless number, not a panic.
pub fn effective_equipment_impairment(
    ie: f64,
    bpl: f64,
    ppl_percent: f64,
    burst_ratio: f64,
) -> f64 {
    ie + (95.0 - ie) * ppl_percent / (ppl_percent / burst_ratio + bpl)
}

/// MOS from R, G.107 Annex B: 1 for R < 0, 4.5 for R > 100, else
/// 1 + 0.035R + R(R − 60)(100 − R)·7·10⁻⁶. NaN gives NaN.
///
/// Ours: the polynomial dips below 1 for 0 < R < 6.5 (to 0.989 near
/// R = 3), below the MOS scale's floor; there the MOS is 1, as for R < 0.
pub fn mos_from_r(r: f64) -> f64 {
    if r < 0.0 {
        1.0
    } else if r > 100.0 {
        4.5
    } else {
        (1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6).max(1.0)
    }
}

/// A two-state Markov (Gilbert) packet-loss model: a "found" and a "lost"
/// state, with p the probability of going from found to lost and q the
/// probability of going from lost to found.
///
/// G.107 §3.5 defines the burst ratio as
///
/// ```text
/// BurstR = (average length of observed bursts in an arrival sequence)
///        / (average length of bursts expected for the network under "random" loss)
/// ```
///
/// and, for loss that follows this model, BurstR = 1/(p + q): bursts last
/// 1/q packets on average, and random (Bernoulli) loss at the same rate
/// Ppl = p/(p + q) has bursts of 1/(1 − Ppl) = (p + q)/q packets. Random
/// loss is the case p + q = 1 (BurstR = 1); sticky loss, p + q < 1, has
/// BurstR > 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GilbertLoss {
    p: f64,
    q: f64,
}

impl GilbertLoss {
    /// The model with p = P(found → lost) in [0, 1] and q = P(lost → found)
    /// in (0, 1]: q = 0 would never leave the lost state.
    pub fn new(p: f64, q: f64) -> Result<Self, EModelError> {
        check("p", p, "[0, 1]", |v| (0.0..=1.0).contains(&v))?;
        check("q", q, "(0, 1]", |v| v > 0.0 && v <= 1.0)?;
        Ok(Self { p, q })
    }

    /// BurstR = 1/(p + q), G.107 §3.5.
    pub fn burst_ratio(&self) -> f64 {
        1.0 / (self.p + self.q)
    }

    /// Ppl = 100·p/(p + q) %, the stationary probability of the lost state.
    pub fn loss_percent(&self) -> f64 {
        100.0 * self.p / (self.p + self.q)
    }
}

/// A loss pattern as it is observed: packets in sequence order, each
/// received or lost, and from it Ppl and the burst ratio G.107 §3.5
/// defines,
///
/// ```text
/// BurstR = (average length of observed bursts in an arrival sequence)
///        / (average length of bursts expected for the network under "random" loss)
/// ```
///
/// A burst is a maximal run of lost packets. Under random (Bernoulli) loss
/// of probability Ppl a burst lasts 1/(1 − Ppl) packets on average, so with
/// `lost` packets in `bursts` bursts out of `packets`,
/// BurstR = (lost/bursts)·(1 − lost/packets). For a pattern drawn from a
/// [`GilbertLoss`] it tends to that model's 1/(p + q).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LossPattern {
    packets: u64,
    lost: u64,
    bursts: u64,
    previous_lost: bool,
}

impl LossPattern {
    /// An empty pattern.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next packet in sequence order: `lost` or received.
    pub fn push(&mut self, lost: bool) {
        self.packets += 1;
        if lost {
            self.lost += 1;
            if !self.previous_lost {
                self.bursts += 1;
            }
        }
        self.previous_lost = lost;
    }

    /// Packets seen.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Packets lost.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Bursts (maximal runs of lost packets).
    pub fn bursts(&self) -> u64 {
        self.bursts
    }

    /// Ppl, the share of the packets lost in percent; 0 without packets.
    pub fn loss_percent(&self) -> f64 {
        if self.packets == 0 {
            0.0
        } else {
            100.0 * self.lost as f64 / self.packets as f64
        }
    }

    /// BurstR of the pattern. Ours: 1 when nothing or everything was lost,
    /// where the ratio says nothing (no burst to measure, or one burst as
    /// long as the sequence against random bursts of unbounded length).
    pub fn burst_ratio(&self) -> f64 {
        if self.lost == 0 || self.lost == self.packets {
            return 1.0;
        }
        let observed = self.lost as f64 / self.bursts as f64;
        observed * (1.0 - self.lost as f64 / self.packets as f64)
    }
}

/// Codecs with their G.113 Appendix I planning values: Ie from Table I.1
/// ("Provisional planning values for the equipment impairment factor Ie")
/// and Bpl from Table I.3 ("Provisional planning values for the
/// packet-loss robustness factor Bpl", G.113 (11/2007)), which gives
/// G.711 with 10 ms packets without and with G.711 Appendix I's packet-loss
/// concealment, and G.729A with VAD (G.729 Annex B) at 20 ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// G.711 (64 kbit/s PCM) without packet-loss concealment: Ie 0, Bpl 4.3.
    G711,
    /// G.711 with G.711 Appendix I concealment: Ie 0, Bpl 25.1.
    G711Plc,
    /// G.729A + VAD (8 kbit/s CS-ACELP, 20 ms packets): Ie 11, Bpl 19.0.
    G729,
}

impl Codec {
    /// Every codec, in the order the command line lists them.
    pub const ALL: [Codec; 3] = [Codec::G711, Codec::G711Plc, Codec::G729];

    /// Ie, G.113 Appendix I Table I.1.
    pub fn ie(self) -> f64 {
        match self {
            Codec::G711 | Codec::G711Plc => 0.0,
            Codec::G729 => 11.0,
        }
    }

    /// Bpl, G.113 Appendix I Table I.3.
    pub fn bpl(self) -> f64 {
        match self {
            Codec::G711 => 4.3,
            Codec::G711Plc => 25.1,
            Codec::G729 => 19.0,
        }
    }

    /// The name `FromStr` takes: `g711`, `g711-plc` or `g729`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::G711 => "g711",
            Codec::G711Plc => "g711-plc",
            Codec::G729 => "g729",
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A codec name that is none of [`Codec::ALL`]'s.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown codec `{0}` (expected g711, g711-plc or g729)")]
pub struct UnknownCodec(pub String);

impl FromStr for Codec {
    type Err = UnknownCodec;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase();
        Codec::ALL
            .into_iter()
            .find(|codec| codec.name() == wanted)
            .ok_or_else(|| UnknownCodec(text.to_owned()))
    }
}

/// `Ok` if `value` is finite and `in_range` holds, else the error naming it.
fn check(
    name: &'static str,
    value: f64,
    range: &'static str,
    in_range: impl Fn(f64) -> bool,
) -> Result<(), EModelError> {
    if !value.is_finite() {
        Err(EModelError::NotFinite { name, value })
    } else if in_range(value) {
        Ok(())
    } else {
        Err(EModelError::OutOfRange { name, value, range })
    }
}

#[cfg(test)]
mod tests;
