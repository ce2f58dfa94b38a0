use proptest::prelude::*;

use super::*;

/// Every feasible schedule for delay `w`, by depth-first search: the
/// smallest peak client buffer among them, or `None` if there is none.
fn brute_force_min_buffer(playout: &Playout, w: usize, rate: &RateConstraint) -> Option<u64> {
    fn go(
        playout: &Playout,
        w: usize,
        rate: &RateConstraint,
        j: usize,
        sent: u64,
        peak: u64,
        best: &mut Option<u64>,
    ) {
        let last = playout.frames() - 1 + w;
        if j > last {
            if sent == playout.total() {
                *best = Some(best.map_or(peak, |b| b.min(peak)));
            }
            return;
        }
        for step in 0..=rate.at(j) {
            let s = sent + step;
            if s > playout.total() {
                break;
            }
            let need = playout.at(j as i64 - w as i64);
            if s < need {
                continue;
            }
            go(playout, w, rate, j + 1, s, peak.max(s - need), best);
        }
    }
    let mut best = None;
    go(playout, w, rate, 0, 0, 0, &mut best);
    best
}

#[test]
fn a_hand_worked_example() {
    // Frames of 4, 1, 1, 4 bytes; 2 bytes a slot. D = 4, 5, 6, 10.
    let playout = Playout::from_frame_sizes(&[4, 1, 1, 4]).unwrap();
    let rate = RateConstraint::Fixed { bytes_per_slot: 2 };
    // w = 1: frame 0 (4 bytes) by the end of slot 1 needs 2 + 2: possible;
    // but frame 3 (D = 10) by slot 4 needs 10 bytes in 5 slots: exactly.
    assert!(latest_schedule(&playout, 0, &rate).is_none());
    let late = latest_schedule(&playout, 1, &rate).unwrap();
    assert_eq!(late.cumulative_bytes, [2, 4, 6, 8, 10]);
    assert_eq!(min_startup_delay(&playout, &rate), Ok(1));
    // Buffer peaks at the end of slot 3: 8 sent, 6 played (frames 0-2).
    assert_eq!(min_client_buffer(&playout, 1, &rate), Some(2));
    // With more delay the latest schedule waits and needs less buffer.
    // w = 3: backwards from D_3 = 10 at slot 6, 2 bytes a slot, never
    // below D_{j-3}: 10, 8, 6 (≥ D_1 = 5 at slot 4), 4 (= D_0 at slot 3),
    // 2, 0, 0.
    let late = latest_schedule(&playout, 3, &rate).unwrap();
    assert_eq!(late.cumulative_bytes, [0, 0, 2, 4, 6, 8, 10]);
    assert!(is_feasible(&playout, 3, &rate, &late));
    assert_eq!(min_client_buffer(&playout, 3, &rate), Some(2));
}

#[test]
fn errors_name_the_problem() {
    assert_eq!(Playout::from_frame_sizes(&[]), Err(ScheduleError::Empty));
    assert_eq!(
        Playout::from_frame_sizes(&[u64::MAX, 1]),
        Err(ScheduleError::Overflow)
    );
    let playout = Playout::from_frame_sizes(&[10, 10]).unwrap();
    let error =
        min_startup_delay(&playout, &RateConstraint::Fixed { bytes_per_slot: 0 }).unwrap_err();
    assert!(error.to_string().contains("less than the 20"), "{error}");
    assert!(min_startup_delay(&playout, &RateConstraint::Curve(vec![5, 5, 0])).is_err());
    // 15 bytes in slot 0 cover frame 0 at once and leave 5 for frame 1.
    assert_eq!(
        min_startup_delay(&playout, &RateConstraint::Curve(vec![15, 5, 0])),
        Ok(0)
    );
    assert_eq!(
        min_startup_delay(&playout, &RateConstraint::Curve(vec![5, 5, 10, 0])),
        Ok(1)
    );
    assert_eq!(
        min_startup_delay(&playout, &RateConstraint::Curve(vec![1, 1, 18, 0])),
        Ok(2)
    );
    assert_eq!(
        min_startup_delay(&playout, &RateConstraint::Curve(vec![])),
        Err(ScheduleError::EmptyCurve)
    );
}

#[test]
fn a_proxy_with_a_fast_wired_path_needs_little_buffer() {
    let sizes: Vec<u64> = (0..30)
        .map(|i| if i % 10 == 0 { 900 } else { 200 })
        .collect();
    let playout = Playout::from_frame_sizes(&sizes).unwrap();
    let wireless = RateConstraint::Fixed {
        bytes_per_slot: 300,
    };
    let fast = RateConstraint::Fixed {
        bytes_per_slot: 5000,
    };
    let plan = proxy_plan(&playout, &fast, &wireless).unwrap();
    let step1 = end_to_end_plan(&playout, &wireless).unwrap();
    assert_eq!(plan.startup_delay_slots, step1.startup_delay_slots);
    assert!(plan.client_buffer_bytes <= step1.client_buffer_bytes);
    assert!(is_feasible(
        &playout,
        plan.startup_delay_slots,
        &wireless,
        &plan.proxy_schedule
    ));
    // A bursty wired path makes the proxy hold the bursts.
    let bursty = RateConstraint::Curve(vec![0, 0, 0, 4000, 0, 0, 0, 4000, 100]);
    let slow = proxy_plan(&playout, &bursty, &wireless).unwrap();
    assert!(slow.startup_delay_slots >= step1.startup_delay_slots);
    assert!(
        slow.proxy_buffer_bytes > plan.proxy_buffer_bytes,
        "{} vs {}",
        slow.proxy_buffer_bytes,
        plan.proxy_buffer_bytes
    );
}

fn instance() -> impl Strategy<Value = (Vec<u64>, RateConstraint)> {
    let sizes = proptest::collection::vec(0u64..=4, 1..=5);
    let rate = prop_oneof![
        (1u64..=4).prop_map(|r| RateConstraint::Fixed { bytes_per_slot: r }),
        proptest::collection::vec(0u64..=4, 1..=6).prop_map(|mut v| {
            if let Some(last) = v.last_mut() {
                *last = (*last).max(1);
            }
            RateConstraint::Curve(v)
        }),
    ];
    (sizes, rate)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// w* is the smallest delay any schedule can meet, and x* the smallest
    /// peak buffer of any schedule at w*: checked by enumerating every
    /// schedule of small instances.
    #[test]
    fn w_star_and_x_star_are_minimal((sizes, rate) in instance()) {
        let playout = Playout::from_frame_sizes(&sizes).unwrap();
        let w = min_startup_delay(&playout, &rate).unwrap();
        prop_assert!(brute_force_min_buffer(&playout, w, &rate).is_some());
        if w > 0 {
            prop_assert!(brute_force_min_buffer(&playout, w - 1, &rate).is_none(), "w* = {w} is not minimal");
        }
        let x = min_client_buffer(&playout, w, &rate).unwrap();
        prop_assert_eq!(Some(x), brute_force_min_buffer(&playout, w, &rate));
    }

    /// S_late never underflows the client and never exceeds the rate, for
    /// any feasible delay; S_early never overflows its bound.
    #[test]
    fn latest_and_earliest_schedules_respect_their_bounds((sizes, rate) in instance(), extra in 0usize..4, buffer in 0u64..10) {
        let playout = Playout::from_frame_sizes(&sizes).unwrap();
        let w = min_startup_delay(&playout, &rate).unwrap() + extra;
        let late = latest_schedule(&playout, w, &rate).unwrap();
        prop_assert!(is_feasible(&playout, w, &rate, &late));
        let total = playout.total();
        let upper = |j: usize| playout.at(j as i64 - w as i64).saturating_add(buffer);
        let early = earliest_schedule(playout.frames() + w, &rate, |_| total, upper);
        let mut previous = 0;
        for (j, &s) in early.cumulative_bytes.iter().enumerate() {
            prop_assert!(s >= previous && s - previous <= rate.at(j));
            prop_assert!(s <= upper(j).max(previous));
            previous = s;
        }
    }

    /// The proxy plan's schedules respect both rates, never starve the
    /// client, never overflow its buffer x*, and the proxy never forwards
    /// what it has not received.
    #[test]
    fn the_proxy_plan_respects_both_bounds((sizes, wireless) in instance(), wired in proptest::collection::vec(0u64..=6, 1..=6)) {
        let playout = Playout::from_frame_sizes(&sizes).unwrap();
        let mut wired = wired;
        if let Some(last) = wired.last_mut() { *last = (*last).max(1); }
        let wired = RateConstraint::Curve(wired);
        let plan = proxy_plan(&playout, &wired, &wireless).unwrap();
        let w = plan.startup_delay_slots;
        prop_assert!(is_feasible(&playout, w, &wireless, &plan.proxy_schedule));
        prop_assert!(is_feasible(&playout, w, &wired, &plan.server_schedule));
        prop_assert!(client_buffer_peak(&playout, w, &plan.proxy_schedule) <= plan.client_buffer_bytes);
        for (s_in, s_out) in plan.server_schedule.cumulative_bytes.iter().zip(&plan.proxy_schedule.cumulative_bytes) {
            prop_assert!(s_out <= s_in);
            prop_assert!(s_in - s_out <= plan.proxy_buffer_bytes);
        }
        prop_assert!(w >= min_startup_delay(&playout, &wireless).unwrap());
    }

    /// Bad input never panics.
    #[test]
    fn any_input_is_an_answer_or_an_error(sizes in proptest::collection::vec(any::<u64>(), 0..4), rate in any::<u64>()) {
        if let Ok(playout) = Playout::from_frame_sizes(&sizes) {
            if playout.total() < 1 << 20 {
                let _ = min_startup_delay(&playout, &RateConstraint::Fixed { bytes_per_slot: rate.max(1) % 1024 + 1 });
            }
        }
    }
}
