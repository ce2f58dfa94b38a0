//! The E-model against numbers worked by hand from the G.107 formulas.

use proptest::prelude::*;

use super::*;

fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance
}

#[test]
fn table_1_defaults_give_r_93_2() {
    // Worked by hand with Table 1's defaults:
    //   Nfo = −64 + 2 = −62; Pre = 35 + 10 lg(1 + 10^−0.8) = 35.639;
    //   Nor = 2 − 121 + 35.639 + 0.008·0.639² = −83.358;
    //   OLR = 10; Nos = 35 − 8 − 3 − 100 + 0.004·(35 − 10 − 3 − 14)² = −75.744;
    //   No = 10 lg(10^−7 + 10^−7.574 + 10^−8.336 + 10^−6.2) = −61.179;
    //   Ro = 15 − 1.5(8 − 61.179) = 94.769.
    //   Xolr = 10 + 0.2(64 − 61.179 − 2) = 10.164, Iolr = 20(1.2925 − 1.2705) = 0.440;
    //   STMRo = 15.000 (T = 0), Ist = 12.0002 − 28.0009 − 13.0000 + 29 = −0.001;
    //   Q = 37, G = 93.030, Y = −5.209, Z = −0.792, Iq = 15 lg 1.16129 = 0.974;
    //   Is = 1.413. Idte = 0 (1 − e^0 = 0); Rle = 1228.5,
    //   Idle = −566.866 + √(566.866² + 169) = 0.149; Idd = 0; Ie,eff = 0.
    //   R = 94.769 − 1.413 − 0.149 = 93.207, "the well-known 93.2".
    let rating = EModelInput::default().evaluate().unwrap();
    assert!(close(rating.r, 93.2, 0.05), "{rating:?}");
    assert!(close(rating.ro, 94.769, 0.001), "{rating:?}");
    assert!(close(rating.is, 1.413, 0.001), "{rating:?}");
    assert!(close(rating.idle, 0.149, 0.001), "{rating:?}");
    assert_eq!(rating.idte, 0.0);
    assert_eq!(rating.idd, 0.0);
    assert_eq!(rating.ie_eff, 0.0);
    assert!(close(
        rating.id,
        rating.idte + rating.idle + rating.idd,
        1e-12
    ));
    assert!(close(
        rating.r,
        rating.ro - rating.is - rating.id - rating.ie_eff + rating.a,
        1e-12
    ));
    // MOS at R = 93.207: 1 + 3.262 + 93.207·33.207·6.793·7e-6 = 4.41.
    assert!(close(rating.mos, 4.41, 0.005), "{rating:?}");
}

#[test]
fn idd_is_zero_up_to_100_ms_and_grows_after() {
    assert_eq!(absolute_delay_impairment(0.0), 0.0);
    assert_eq!(absolute_delay_impairment(100.0), 0.0);
    // Ta = 150: X = lg 1.5 / lg 2 = 0.58496; X⁶ = 0.040066, (1.040066)^(1/6) = 1.006569;
    // (X/3)⁶ = 5.496e-5, (1 + 5.496e-5)^(1/6) = 1.0000092;
    // Idd = 25(1.006569 − 3.0000275 + 2) = 0.1635.
    assert!(close(absolute_delay_impairment(150.0), 0.1635, 0.0005));
    // Ta = 400: X = 2; 65^(1/6) = 2.005175; (1 + (2/3)⁶)^(1/6) = 1.087791^(1/6) = 1.014124;
    // Idd = 25(2.005175 − 3.042371 + 2) = 24.070.
    assert!(close(absolute_delay_impairment(400.0), 24.070, 0.001));
}

#[test]
fn ie_eff_for_g711_with_random_and_bursty_loss() {
    // G.711 without concealment (Ie 0, Bpl 4.3), 2 % random loss (BurstR 1):
    // 95·2/(2/1 + 4.3) = 190/6.3 = 30.159.
    let g711 = EModelInput::default().with_codec(Codec::G711);
    let random = EModelInput {
        ppl_percent: 2.0,
        ..g711
    };
    let rating = random.evaluate().unwrap();
    assert!(close(rating.ie_eff, 30.159, 0.001), "{rating:?}");
    // Bursty, BurstR 2: 95·2/(2/2 + 4.3) = 190/5.3 = 35.849.
    let bursty = EModelInput {
        burst_ratio: 2.0,
        ..random
    };
    let bursty_rating = bursty.evaluate().unwrap();
    assert!(close(bursty_rating.ie_eff, 35.849, 0.001));
    assert!(bursty_rating.r < rating.r);
    // With concealment (Bpl 25.1): 190/27.1 = 7.011.
    assert!(close(
        effective_equipment_impairment(0.0, Codec::G711Plc.bpl(), 2.0, 1.0),
        7.011,
        0.001
    ));
    // G.729A + VAD (Ie 11, Bpl 19): 11 + 84·2/(2 + 19) = 11 + 8 = 19.
    assert!(close(
        effective_equipment_impairment(11.0, 19.0, 2.0, 1.0),
        19.0,
        1e-12
    ));
    // No loss: Ie,eff is the codec's Ie.
    assert_eq!(effective_equipment_impairment(11.0, 19.0, 0.0, 3.0), 11.0);
}

#[test]
fn mos_against_paper_002_table_2() {
    // G.107 Annex B: MOS = 1 + 0.035R + R(R − 60)(100 − R)·7·10⁻⁶.
    //   R 90: 1 + 3.15 + 90·30·10·7e-6  = 4.15 + 0.189 = 4.339 → 4.34 (Table 2: 4.34, reproduced)
    //   R 80: 1 + 2.8  + 80·20·20·7e-6  = 3.8  + 0.224 = 4.024 → 4.02 (Table 2: 4.03, NOT reproduced)
    //   R 70: 1 + 2.45 + 70·10·30·7e-6  = 3.45 + 0.147 = 3.597 → 3.6  (Table 2: 3.6, reproduced)
    //   R 60: 1 + 2.1  + 0              = 3.1           → 3.1  (Table 2: 3.1, reproduced)
    //   R 50: 1 + 1.75 − 50·10·50·7e-6  = 2.75 − 0.175 = 2.575 → 2.58 rounding half up
    //         (Table 2: 2.58, reproduced to within half its last digit)
    let reproduced = [(90.0, 4.34), (70.0, 3.6), (60.0, 3.1), (50.0, 2.58)];
    for (r, paper) in reproduced {
        let mos = mos_from_r(r);
        // Half a unit in the paper's last (second) decimal, and float noise.
        assert!(
            close(mos, paper, 0.005 + 1e-9),
            "R {r}: {mos} against {paper}"
        );
    }
    assert!(close(mos_from_r(90.0), 4.339, 1e-9));
    assert!(close(mos_from_r(70.0), 3.597, 1e-9));
    assert!(close(mos_from_r(60.0), 3.1, 1e-9));
    assert!(close(mos_from_r(50.0), 2.575, 1e-9));
    // R 80: the formula gives 4.024, 0.006 below the paper's 4.03.
    let mos80 = mos_from_r(80.0);
    assert!(close(mos80, 4.024, 1e-9), "{mos80}");
    assert!((mos80 - 4.03).abs() > 0.005);
    // The ends of the scale.
    assert_eq!(mos_from_r(-5.0), 1.0);
    assert_eq!(mos_from_r(0.0), 1.0);
    // Annex B's polynomial dips below 1 for 0 < R < 6.5 (R 3: 1 + 0.105
    // − 3·57·97·7e-6 = 0.9889); MOS is kept at 1 there.
    assert_eq!(mos_from_r(3.0), 1.0);
    assert!(close(
        mos_from_r(7.0),
        1.0 + 0.245 - 7.0 * 53.0 * 93.0 * 7e-6,
        1e-12
    ));
    assert!(close(mos_from_r(100.0), 4.5, 1e-12));
    assert_eq!(mos_from_r(120.0), 4.5);
}

#[test]
fn g729_over_a_satellite_hop() {
    // G.729A + VAD, Ta = 300 ms (paper 002's regenerative satellite), 1 % loss.
    // Idd(300): X = lg 3/lg 2 = 1.58496, X⁶ = 15.853, 16.853^(1/6) = 1.60120;
    // (X/3)⁶ = 0.021746, 1.021746^(1/6) = 1.003592; Idd = 25(1.60120 − 3.010776 + 2) = 14.761.
    // Ie,eff = 11 + 84·1/(1 + 19) = 15.2.
    let input = EModelInput::default()
        .with_codec(Codec::G729)
        .with_mouth_to_ear_delay(300.0);
    let input = EModelInput {
        ppl_percent: 1.0,
        ..input
    };
    let rating = input.evaluate().unwrap();
    assert!(close(rating.idd, 14.761, 0.001), "{rating:?}");
    assert!(close(rating.ie_eff, 15.2, 1e-9), "{rating:?}");
    assert_eq!(input.t_ms, 300.0);
    assert_eq!(input.tr_ms, 600.0);
    // Echo at T = 300 with TELR 65 dB adds a few points on top of Idd.
    assert!(rating.idte > 0.0 && rating.idte < 10.0, "{rating:?}");
    assert!(rating.r < 93.2 - 15.2 - 14.761, "{rating:?}");
}

#[test]
fn idte_is_slightly_negative_below_5_ms() {
    // G.107 §3.4 as written: with TELR 65 dB the bracket of Idte is negative
    // for a very short echo path. T = 1: TERV = 65 − 40 lg(1.1/1.00667)
    // + 6e^−0.3 = 67.90, Re = 214.76, Roe − Re = −119.99,
    // −60.00 + √(3599.6 + 100) − 1 = −0.17, times (1 − e^−1) = −0.11.
    // So R rises by about 0.1 from T = 0 to 1 ms and falls again after; the
    // model is monotone in delay only from about 5 ms, where the bracket
    // turns positive. No clamp is added: the formula is kept as written.
    let at = |ta: f64| {
        EModelInput::default()
            .with_mouth_to_ear_delay(ta)
            .evaluate()
            .unwrap()
    };
    assert!(close(at(1.0).idte, -0.11, 0.01), "{:?}", at(1.0));
    assert!(at(5.0).idte > 0.0, "{:?}", at(5.0));
    for ta in [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0] {
        assert!(close(at(ta).r, 93.2, 0.2), "Ta {ta}: {:?}", at(ta));
    }
}

#[test]
fn gilbert_burst_ratio() {
    // p + q = 1 is Bernoulli loss: BurstR 1, Ppl = p.
    let random = GilbertLoss::new(0.02, 0.98).unwrap();
    assert!(close(random.burst_ratio(), 1.0, 1e-12));
    assert!(close(random.loss_percent(), 2.0, 1e-12));
    // Bursts of 1/q = 4 packets on average; p = 0.01, q = 0.25:
    // BurstR = 1/0.26 = 3.846; Ppl = 100·0.01/0.26 = 3.846 %.
    let bursty = GilbertLoss::new(0.01, 0.25).unwrap();
    assert!(close(bursty.burst_ratio(), 3.846, 0.001));
    assert!(close(bursty.loss_percent(), 3.846, 0.001));
    assert!(matches!(
        GilbertLoss::new(0.1, 0.0),
        Err(EModelError::OutOfRange { name: "q", .. })
    ));
    assert!(matches!(
        GilbertLoss::new(f64::NAN, 0.5),
        Err(EModelError::NotFinite { name: "p", .. })
    ));
    assert!(GilbertLoss::new(1.5, 0.5).is_err());
}

#[test]
fn bad_inputs_are_errors_naming_the_input() {
    let base = EModelInput::default();
    let cases = [
        (
            EModelInput {
                ta_ms: -1.0,
                ..base
            },
            "Ta",
        ),
        (EModelInput { t_ms: -0.5, ..base }, "T"),
        (
            EModelInput {
                tr_ms: -2.0,
                ..base
            },
            "Tr",
        ),
        (
            EModelInput {
                ppl_percent: -0.1,
                ..base
            },
            "Ppl",
        ),
        (
            EModelInput {
                ppl_percent: 100.5,
                ..base
            },
            "Ppl",
        ),
        (
            EModelInput {
                burst_ratio: 0.0,
                ..base
            },
            "BurstR",
        ),
        (EModelInput { bpl: 0.0, ..base }, "Bpl"),
        (EModelInput { ie: 96.0, ..base }, "Ie"),
        (EModelInput { qdu: 0.5, ..base }, "qdu"),
    ];
    for (input, name) in cases {
        match input.evaluate() {
            Err(EModelError::OutOfRange { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let nan = EModelInput {
        ppl_percent: f64::NAN,
        ..base
    };
    let error = nan.evaluate().unwrap_err();
    assert!(matches!(error, EModelError::NotFinite { name: "Ppl", .. }));
    assert!(error.to_string().contains("Ppl"), "{error}");
    let infinite = EModelInput {
        slr_db: f64::INFINITY,
        ..base
    };
    assert!(matches!(
        infinite.evaluate(),
        Err(EModelError::NotFinite { name: "SLR", .. })
    ));
    let message = EModelInput {
        ta_ms: -1.0,
        ..base
    }
    .evaluate()
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("Ta") && message.contains("-1"),
        "{message}"
    );
    // The edges are in range.
    for ppl_percent in [0.0, 100.0] {
        assert!(EModelInput {
            ppl_percent,
            ..base
        }
        .evaluate()
        .is_ok());
    }
}

#[test]
fn codecs_parse_by_name() {
    for codec in Codec::ALL {
        assert_eq!(codec.name().parse::<Codec>(), Ok(codec));
        assert_eq!(codec.to_string(), codec.name());
    }
    assert_eq!("G711-PLC".parse::<Codec>(), Ok(Codec::G711Plc));
    assert_eq!(Codec::G711.bpl(), 4.3);
    assert_eq!(Codec::G711Plc.bpl(), 25.1);
    assert_eq!((Codec::G729.ie(), Codec::G729.bpl()), (11.0, 19.0));
    let error = "g722".parse::<Codec>().unwrap_err();
    assert!(error.to_string().contains("`g722`"), "{error}");
}

fn codec() -> impl Strategy<Value = Codec> {
    prop::sample::select(Codec::ALL.to_vec())
}

proptest! {
    /// More delay never raises R (loss and codec fixed), from 5 ms on; below,
    /// see `idte_is_slightly_negative_below_5_ms`.
    #[test]
    fn r_falls_as_delay_rises(
        codec in codec(),
        ppl in 0.0..20.0f64,
        ta in 5.0..800.0f64,
        more in 0.0..400.0f64,
    ) {
        let at = |ta: f64| {
            EModelInput { ppl_percent: ppl, ..EModelInput::default().with_codec(codec) }
                .with_mouth_to_ear_delay(ta)
                .evaluate()
                .unwrap()
                .r
        };
        prop_assert!(at(ta + more) <= at(ta) + 1e-9, "{} > {}", at(ta + more), at(ta));
    }

    /// More loss, or burstier loss, never raises R (delay and codec fixed).
    #[test]
    fn r_falls_as_loss_rises(
        codec in codec(),
        ta in 0.0..600.0f64,
        ppl in 0.0..50.0f64,
        more in 0.0..50.0f64,
        burst in 1.0..5.0f64,
        more_burst in 0.0..5.0f64,
    ) {
        let at = |ppl_percent: f64, burst_ratio: f64| {
            EModelInput { ppl_percent, burst_ratio, ..EModelInput::default().with_codec(codec) }
                .with_mouth_to_ear_delay(ta)
                .evaluate()
                .unwrap()
                .r
        };
        prop_assert!(at(ppl + more, burst) <= at(ppl, burst) + 1e-9);
        prop_assert!(at(ppl, burst + more_burst) <= at(ppl, burst) + 1e-9);
    }

    /// MOS stays in [1, 4.5], whatever R is.
    #[test]
    fn mos_is_between_1_and_4_5(r in prop_oneof![-20.0..120.0f64, -1e6..1e6f64]) {
        let mos = mos_from_r(r);
        prop_assert!((1.0..=4.5).contains(&mos), "R {r}: MOS {mos}");
    }

    /// Any valid call evaluates to a finite R and a MOS in [1, 4.5].
    #[test]
    fn valid_calls_give_finite_ratings(
        codec in codec(),
        ta in 0.0..2000.0f64,
        ppl in 0.0..=100.0f64,
        burst in 0.1..20.0f64,
    ) {
        let input = EModelInput {
            ppl_percent: ppl,
            burst_ratio: burst,
            ..EModelInput::default().with_codec(codec)
        }
        .with_mouth_to_ear_delay(ta);
        let rating = input.evaluate().unwrap();
        prop_assert!(rating.r.is_finite());
        prop_assert!((1.0..=4.5).contains(&rating.mos));
    }
}

#[test]
fn loss_pattern_burst_ratio() {
    // Random-looking loss: every fourth packet, bursts of one. Ppl = 25 %,
    // random bursts last 1/(1 − 0.25) = 4/3, so BurstR = 1 · 0.75.
    let mut spread = LossPattern::new();
    for i in 0..400 {
        spread.push(i % 4 == 3);
    }
    assert_eq!(
        (spread.packets(), spread.lost(), spread.bursts()),
        (400, 100, 100)
    );
    assert!(close(spread.loss_percent(), 25.0, 1e-12));
    assert!(close(spread.burst_ratio(), 0.75, 1e-12));
    // The same loss in bursts of ten: BurstR = 10 · 0.75 = 7.5.
    let mut bursty = LossPattern::new();
    for i in 0..400 {
        bursty.push(i % 40 >= 30);
    }
    assert_eq!(bursty.bursts(), 10);
    assert!(close(bursty.burst_ratio(), 7.5, 1e-12));
    // Nothing or everything lost: 1.
    let mut none = LossPattern::new();
    none.push(false);
    assert_eq!(none.burst_ratio(), 1.0);
    let mut all = LossPattern::new();
    all.push(true);
    all.push(true);
    assert_eq!(all.burst_ratio(), 1.0);
    assert_eq!(LossPattern::new().loss_percent(), 0.0);
}

#[test]
fn loss_pattern_of_a_gilbert_chain_has_its_burst_ratio() {
    // p = 0.02, q = 0.3: BurstR = 1/0.32 = 3.125, Ppl = 6.25 %. A fixed
    // linear congruential sequence drives the chain (no global RNG).
    let model = GilbertLoss::new(0.02, 0.3).unwrap();
    let mut state: u64 = 12345;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut pattern = LossPattern::new();
    let mut lost = false;
    for _ in 0..400_000 {
        lost = if lost {
            uniform() >= 0.3
        } else {
            uniform() < 0.02
        };
        pattern.push(lost);
    }
    assert!(
        close(pattern.burst_ratio(), model.burst_ratio(), 0.1),
        "{}",
        pattern.burst_ratio()
    );
    assert!(
        close(pattern.loss_percent(), model.loss_percent(), 0.3),
        "{}",
        pattern.loss_percent()
    );
}
