//! The configuration: the paper's values, validation, the modes' names, and
//! the shares.

use super::*;

#[test]
fn the_configuration_names_the_papers_values_and_refuses_bad_ones() {
    let c = BufferConfig::default();
    assert_eq!(c.validate(), Ok(()));
    assert_eq!(c.window, ms(1000), "§2.3: 1 second of video data");
    assert_eq!(c.calm_feedbacks, 3, "§2.3: at least 3 feedback updates");
    assert_eq!(c.frames_per_window(), 25);
    assert_eq!(c.detection_threshold(false), c.congestion_threshold);
    assert_eq!(c.detection_threshold(true), c.loss_threshold);
    let bad = |change: fn(&mut BufferConfig)| {
        let mut config = BufferConfig::default();
        change(&mut config);
        let error = config.validate().unwrap_err();
        assert!(BufferReceiver::new(config).is_err());
        assert!(BufferSender::new(config).is_err());
        error
    };
    use BufferConfigError as E;
    assert!(matches!(
        bad(|c| c.congestion_threshold = c.preroll),
        E::CongestionThreshold { .. }
    ));
    assert!(matches!(
        bad(|c| c.loss_threshold = ms(900)),
        E::LossThreshold { .. }
    ));
    assert!(matches!(
        bad(|c| c.loss_threshold = c.preroll),
        E::LossThreshold { .. }
    ));
    assert!(matches!(
        bad(|c| c.frame_interval = Duration::ZERO),
        E::FrameInterval(_)
    ));
    assert!(matches!(bad(|c| c.preroll = ms(30)), E::Preroll { .. }));
    assert!(matches!(
        bad(|c| c.preroll = Duration::from_secs(100_000)),
        E::Preroll { .. }
    ));
    assert!(matches!(bad(|c| c.window = Duration::ZERO), E::Window(_)));
    assert!(matches!(
        bad(|c| c.window = Duration::from_secs(1000)),
        E::Window(_)
    ));
    assert!(matches!(
        bad(|c| c.measurement_interval = Duration::ZERO),
        E::MeasurementInterval
    ));
    assert!(matches!(
        bad(|c| c.occupancy_weight = 0.0),
        E::OccupancyWeight(_)
    ));
    assert!(matches!(
        bad(|c| c.occupancy_weight = 1.5),
        E::OccupancyWeight(_)
    ));
    assert!(matches!(
        bad(|c| c.occupancy_weight = f64::NAN),
        E::OccupancyWeight(_)
    ));
    assert!(matches!(
        bad(|c| c.min_feedback_interval = Duration::ZERO),
        E::MinFeedbackInterval { .. }
    ));
    assert!(matches!(
        bad(|c| c.min_feedback_interval = ms(1001)),
        E::MinFeedbackInterval { .. }
    ));
    assert!(matches!(bad(|c| c.calm_feedbacks = 0), E::CalmFeedbacks));
    assert!(matches!(
        bad(|c| c.max_make_up_share = 1.0),
        E::MakeUpShare(_)
    ));
    assert!(matches!(
        bad(|c| c.max_make_up_share = -0.1),
        E::MakeUpShare(_)
    ));
    assert!(matches!(
        bad(|c| c.base_lag_tolerance = ms(2001)),
        E::BaseLagTolerance(_)
    ));
    assert!(matches!(
        bad(|c| c.dry_buffer_grace = ms(2001)),
        E::DryBufferGrace(_)
    ));
    // T_loss = T_c is allowed (eq. 1's ≤).
    let equal = BufferConfig {
        loss_threshold: ms(1000),
        ..BufferConfig::default()
    };
    assert_eq!(equal.validate(), Ok(()));
    let error = bad(|c| c.loss_threshold = ms(2500)).to_string();
    assert!(error.contains("paper 004 eq. 1"), "{error}");
}

#[test]
fn modes_are_named_paper_and_tfrc_capped() {
    assert_eq!("paper".parse(), Ok(BufferMode::Paper));
    assert_eq!("tfrc-capped".parse(), Ok(BufferMode::TfrcCapped));
    assert_eq!(BufferMode::TfrcCapped.to_string(), "tfrc-capped");
    assert_eq!(BufferMode::default(), BufferMode::Paper);
    let error = "buffer".parse::<BufferMode>().unwrap_err();
    assert_eq!(error, UnknownBufferMode("buffer".into()));
    assert!(error.to_string().contains("`paper` or `tfrc-capped`"));
}

#[test]
fn shares_are_clamped_and_eq5_reduces_to_eq3_and_the_whole_layer() {
    assert_eq!(Share::new(1.5), Share::ONE);
    assert_eq!(Share::new(-2.0), Share::ZERO);
    assert_eq!(Share::new(f64::NAN), Share::ZERO);
    let e = Share::new(0.3);
    assert_eq!(probe_share(Share::ZERO, e), e);
    assert_eq!(probe_share(Share::ONE, e), Share::ONE);
    // δ = 1/2, η = 0.3: 0.5 + 0.3 · 0.5 = 0.65.
    assert!((probe_share(Share::new(0.5), e).get() - 0.65).abs() < 1e-15);
}
