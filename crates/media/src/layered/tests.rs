use super::*;

fn share(eta: f64) -> Share {
    Share::new(eta)
}

fn frame(base_bytes: u64, enhancement: Enhancement) -> LayeredFrame {
    LayeredFrame::new(1, FrameType::P, Duration::ZERO, base_bytes, enhancement).unwrap()
}

#[test]
fn fgs_truncates_to_the_byte() {
    // A 1000-byte base and a 4000-byte FGS layer.
    let f = frame(1000, Enhancement::Fgs { bytes: 4000 });
    assert_eq!(f.total_bytes(), 5000);
    for (eta, kept) in [
        (0.0, 1000),
        (0.25, 2000),
        (1.0 / 3.0, 2333), // ⌊1333.33⌋
        (0.999_9, 4999),   // ⌊3999.6⌋
        (1.0, 5000),
    ] {
        assert_eq!(f.kept_bytes(share(eta)), kept, "η = {eta}");
    }
    let cut = f.truncated(share(0.25));
    assert_eq!(cut.enhancement(), &Enhancement::Fgs { bytes: 1000 });
    assert_eq!((cut.number(), cut.base_bytes()), (1, 1000));
}

#[test]
fn discrete_layers_are_kept_whole_lowest_first() {
    // An 800-byte base and layers of 200, 300 and 500 bytes (1000 in all).
    let f = frame(800, Enhancement::Layers(vec![200, 300, 500]));
    assert_eq!(f.total_bytes(), 1800);
    for (eta, kept, layers) in [
        (0.0, 800, vec![]),
        (0.199, 800, vec![]),             // 199 bytes: not even the first
        (0.2, 1000, vec![200]),           // exactly the first
        (0.49, 1000, vec![200]),          // 490: the second would need 500
        (0.5, 1300, vec![200, 300]),      // exactly two
        (0.99, 1300, vec![200, 300]),     // 990: never part of the third
        (1.0, 1800, vec![200, 300, 500]), // all
    ] {
        assert_eq!(f.kept_bytes(share(eta)), kept, "η = {eta}");
        assert_eq!(
            f.truncated(share(eta)).enhancement(),
            &Enhancement::Layers(layers),
            "η = {eta}"
        );
    }
    // The highest layer goes first even when a lower one is the largest.
    let f = frame(0, Enhancement::Layers(vec![500, 10]));
    assert_eq!(f.kept_bytes(share(0.99)), 500);
}

#[test]
fn no_share_keeps_exactly_the_base_and_all_keeps_everything() {
    for enhancement in [
        Enhancement::NONE,
        Enhancement::Fgs { bytes: 1 },
        Enhancement::Fgs {
            bytes: MAX_FRAME_BYTES - 7,
        },
        Enhancement::Layers(vec![]),
        Enhancement::Layers(vec![1; MAX_ENHANCEMENT_LAYERS]),
        Enhancement::Layers(vec![3, 1, 4, 1, 5]),
    ] {
        let f = frame(7, enhancement);
        assert_eq!(f.kept_bytes(Share::ZERO), 7);
        assert_eq!(f.kept_bytes(Share::ONE), f.total_bytes());
        assert_eq!(f.truncated(Share::ONE), f);
        assert_eq!(f.truncated(Share::ZERO).enhancement_bytes(), 0);
    }
}

#[test]
fn any_share_the_controller_gives_keeps_within_the_frame() {
    // The controller's Share clamps to [0, 1] and takes NaN as 0.
    let f = frame(100, Enhancement::Fgs { bytes: 50 });
    for (eta, kept) in [
        (f64::NAN, 100),
        (-0.5, 100),
        (f64::NEG_INFINITY, 100),
        (2.0, 150),
        (f64::INFINITY, 150),
    ] {
        assert_eq!(f.kept_bytes(Share::new(eta)), kept, "η = {eta}");
    }
    assert_eq!(share_of(Share::ONE, u64::MAX), u64::MAX);
    assert!(share_of(share(0.999), u64::MAX) < u64::MAX);
    assert_eq!(share_of(share(0.5), 3), 1);
}

#[test]
fn frames_go_to_the_controller_in_bits() {
    let f = frame(1000, Enhancement::Layers(vec![200, 300]));
    let sizes = f.sizes();
    assert_eq!((sizes.base_bits, sizes.enhancement_bits), (8000, 4000));
    // The controller's eq. 3 before rounding agrees with ours on whole
    // bytes: at η = 0.5 an FGS frame is cut at ⌊η · F_enh⌋.
    let fgs = frame(1000, Enhancement::Fgs { bytes: 4001 });
    let bits = fairstream_proto::cc::buffer::scheduled_bits(&[fgs.sizes()], share(0.5));
    assert_eq!(bits, 8.0 * (1000.0 + 2000.5));
    assert_eq!(scheduled_bytes(&[fgs], share(0.5)), 1000 + 2000);
}

#[test]
fn scheduled_bytes_are_paper_004_eq_3() {
    // D_txn = Σ (F_base + η F_enh) over the window.
    let frames = [
        frame(1000, Enhancement::Fgs { bytes: 4000 }),
        frame(500, Enhancement::Fgs { bytes: 1000 }),
        frame(800, Enhancement::Layers(vec![200, 300, 500])),
    ];
    assert_eq!(scheduled_bytes(&frames, Share::ZERO), 2300);
    assert_eq!(
        scheduled_bytes(&frames, share(0.5)),
        2300 + 2000 + 500 + 500
    );
    assert_eq!(scheduled_bytes(&frames, Share::ONE), 8300);
    assert_eq!(scheduled_bytes(&[], Share::ONE), 0);
}

#[test]
fn frames_beyond_the_bounds_are_refused() {
    let new =
        |base, enhancement| LayeredFrame::new(9, FrameType::I, Duration::ZERO, base, enhancement);
    assert!(new(MAX_FRAME_BYTES, Enhancement::NONE).is_ok());
    assert_eq!(
        new(MAX_FRAME_BYTES, Enhancement::Fgs { bytes: 1 }),
        Err(LayeredError::FrameTooLarge {
            number: 9,
            bytes: MAX_FRAME_BYTES + 1
        })
    );
    assert_eq!(
        new(1, Enhancement::Layers(vec![u64::MAX, u64::MAX])),
        Err(LayeredError::FrameTooLarge {
            number: 9,
            bytes: u64::MAX
        })
    );
    assert_eq!(
        new(1, Enhancement::Layers(vec![1; MAX_ENHANCEMENT_LAYERS + 1])),
        Err(LayeredError::TooManyLayers {
            number: 9,
            layers: MAX_ENHANCEMENT_LAYERS + 1
        })
    );
    assert_eq!(
        new(1, Enhancement::Layers(vec![5, 0, 5])),
        Err(LayeredError::EmptyLayer {
            number: 9,
            layer: 2
        })
    );
    let late = LayeredFrame::new(
        9,
        FrameType::P,
        MAX_FRAME_TIME + Duration::from_nanos(1),
        1,
        Enhancement::NONE,
    );
    assert!(matches!(late, Err(LayeredError::BadTime { number: 9, .. })));
}

#[test]
fn a_frame_follows_a_lower_number_at_the_same_time_or_later() {
    let at = |number, ms| {
        LayeredFrame::new(
            number,
            FrameType::P,
            Duration::from_millis(ms),
            1,
            Enhancement::NONE,
        )
        .unwrap()
    };
    assert_eq!(at(2, 40).follows(&at(1, 0)), Ok(()));
    assert_eq!(at(5, 40).follows(&at(1, 40)), Ok(()));
    assert_eq!(
        at(1, 40).follows(&at(1, 0)),
        Err(LayeredError::NumberNotIncreasing {
            previous: 1,
            number: 1
        })
    );
    let error = at(2, 0).follows(&at(1, 40)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "frame 2: time 0 s is before the previous frame's 0.04 s"
    );
}

#[test]
fn enhancements_print_as_the_trace_writes_them() {
    assert_eq!(Enhancement::Fgs { bytes: 12 }.to_string(), "fgs:12");
    assert_eq!(Enhancement::Layers(vec![3, 4]).to_string(), "layers:3,4");
    assert_eq!(Enhancement::Layers(vec![]).to_string(), "layers:");
}
