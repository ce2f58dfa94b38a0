//! Option 196 of the experimental MulTFRC CCID 248: j, the mean number of
//! packets lost (or ECN-marked) per loss event, which the MulTFRC equation
//! takes beside p (draft-irtf-iccrg-multfrc).

use crate::wire::options::DccpOption;

/// Option 196 of the experimental MulTFRC CCID: j in thousandths of a
/// packet, four bytes.
pub(crate) fn encode_losses_per_event(j: f64) -> DccpOption {
    // `as` from f64 saturates; j is finite and at least one.
    let milli = (j * 1000.0).round() as u32;
    DccpOption::Unknown {
        kind: crate::wire::options::kind::MULTFRC_LOSSES_PER_EVENT,
        data: milli.to_be_bytes().to_vec(),
    }
}

/// j from option 196 of the experimental MulTFRC CCID, if present and well
/// formed (four bytes, at least one packet).
pub(crate) fn decode_losses_per_event(options: &crate::wire::options::Options) -> Option<f64> {
    options.iter().find_map(|o| match o {
        DccpOption::Unknown { kind, data }
            if *kind == crate::wire::options::kind::MULTFRC_LOSSES_PER_EVENT =>
        {
            let bytes: [u8; 4] = data.as_slice().try_into().ok()?;
            let j = f64::from(u32::from_be_bytes(bytes)) / 1000.0;
            (j >= 1.0).then_some(j)
        }
        _ => None,
    })
}

/// Option 197 of the experimental MulTFRC CCID: the data packets received
/// marked Congestion Experienced so far, modulo 2³², four bytes. The sender
/// learns from it that congestion, not channel loss, made some of p (the
/// adaptive connection-count controller cuts on it).
pub(crate) fn encode_ecn_marks(count: u64) -> DccpOption {
    DccpOption::Unknown {
        kind: crate::wire::options::kind::MULTFRC_ECN_MARKS,
        data: ((count & u64::from(u32::MAX)) as u32)
            .to_be_bytes()
            .to_vec(),
    }
}

/// The count of option 197, if present and four bytes long.
pub(crate) fn decode_ecn_marks(options: &crate::wire::options::Options) -> Option<u32> {
    options.iter().find_map(|o| match o {
        DccpOption::Unknown { kind, data }
            if *kind == crate::wire::options::kind::MULTFRC_ECN_MARKS =>
        {
            let bytes: [u8; 4] = data.as_slice().try_into().ok()?;
            Some(u32::from_be_bytes(bytes))
        }
        _ => None,
    })
}

/// Option 198 of the experimental MulTFRC CCID: the loss event rate
/// without the losses the receiver took for the channel's
/// (`TfrcReceiver::congestion_loss_event_rate`), in Loss Event Rate's
/// encoding (RFC 4342 §8.5: ⌈1/p⌉, four bytes).
pub(crate) fn encode_congestion_loss_event_rate(p: f64) -> DccpOption {
    let value = crate::wire::options::LossEventRate::from_p(p)
        .unwrap_or(crate::wire::options::LossEventRate::NO_LOSS);
    DccpOption::Unknown {
        kind: crate::wire::options::kind::MULTFRC_CONGESTION_LOSS_EVENT_RATE,
        data: value.0.to_be_bytes().to_vec(),
    }
}

/// p of option 198, if present and well formed (four bytes, not zero).
pub(crate) fn decode_congestion_loss_event_rate(
    options: &crate::wire::options::Options,
) -> Option<f64> {
    options.iter().find_map(|o| match o {
        DccpOption::Unknown { kind, data }
            if *kind == crate::wire::options::kind::MULTFRC_CONGESTION_LOSS_EVENT_RATE =>
        {
            let bytes: [u8; 4] = data.as_slice().try_into().ok()?;
            crate::wire::options::LossEventRate(u32::from_be_bytes(bytes)).p()
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::options::Options;

    /// Option 198 carries p as Loss Event Rate does; zero and malformed
    /// values are not used.
    #[test]
    fn congestion_loss_event_rate_option_round_trips() {
        for p in [0.0, 0.25, 0.001] {
            let mut options = Options::new();
            options.push(encode_congestion_loss_event_rate(p)).unwrap();
            let parsed = Options::parse(&options.to_bytes()).unwrap();
            let back = decode_congestion_loss_event_rate(&parsed).unwrap();
            assert!((back - p).abs() <= p * 1e-3, "{p} → {back}");
        }
        for data in [vec![0, 0, 0, 0], vec![0, 1]] {
            let mut bad = Options::new();
            bad.push(DccpOption::Unknown {
                kind: crate::wire::options::kind::MULTFRC_CONGESTION_LOSS_EVENT_RATE,
                data,
            })
            .unwrap();
            assert_eq!(decode_congestion_loss_event_rate(&bad), None);
        }
        assert_eq!(decode_congestion_loss_event_rate(&Options::new()), None);
    }

    /// Option 196 of the experimental MulTFRC CCID carries j in thousandths
    /// of a packet; a malformed or sub-one value is not used.
    #[test]
    fn losses_per_event_option_round_trips() {
        let mut options = Options::new();
        options.push(encode_losses_per_event(2.345)).unwrap();
        let parsed = Options::parse(&options.to_bytes()).unwrap();
        assert_eq!(decode_losses_per_event(&parsed), Some(2.345));
        let mut bad = Options::new();
        bad.push(DccpOption::Unknown {
            kind: crate::wire::options::kind::MULTFRC_LOSSES_PER_EVENT,
            data: vec![0, 0, 1],
        })
        .unwrap();
        assert_eq!(decode_losses_per_event(&bad), None);
        let mut small = Options::new();
        small.push(encode_losses_per_event(0.5)).unwrap();
        assert_eq!(decode_losses_per_event(&small), None);
    }

    /// Option 197 carries the count of CE-marked packets modulo 2³²; a
    /// count of the wrong length is not used.
    #[test]
    fn ecn_marks_option_round_trips_and_wraps() {
        let mut options = Options::new();
        options.push(encode_ecn_marks(7)).unwrap();
        options.push(encode_losses_per_event(1.5)).unwrap();
        let parsed = Options::parse(&options.to_bytes()).unwrap();
        assert_eq!(decode_ecn_marks(&parsed), Some(7));
        let mut wrapped = Options::new();
        wrapped
            .push(encode_ecn_marks(u64::from(u32::MAX) + 3))
            .unwrap();
        assert_eq!(decode_ecn_marks(&wrapped), Some(2));
        let mut bad = Options::new();
        bad.push(DccpOption::Unknown {
            kind: crate::wire::options::kind::MULTFRC_ECN_MARKS,
            data: vec![0, 1],
        })
        .unwrap();
        assert_eq!(decode_ecn_marks(&bad), None);
    }
}
