//! Operations on the relay's frame buffer (`fairstream relay`'s proxy
//! buffer): the first two input bytes set its limit (in units of 64 bytes),
//! then each operation is a push of a frame (type, NAL unit count, then per
//! NAL unit its first byte and its length), a pop or the end of the stream.
//! It must never hold more bytes or NAL units than its limits, its figures
//! must account for every frame and byte (in = out + dropped + held), and
//! what it hands out must come in the order it was pushed.
#![no_main]

use fairstream_media::h264::FrameType;
use fairstream_net::relay::{Popped, RelayBuffer, RelayFrame};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((limit, mut rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let buffer = RelayBuffer::new(u64::from(u16::from_be_bytes(*limit)) * 64);
    let (mut pushed, mut bytes_in, mut bytes_out) = (0u32, 0u64, 0u64);
    let mut last_popped: Option<u32> = None;
    let mut ended = false;
    while let Some((&op, tail)) = rest.split_first() {
        rest = tail;
        match op % 4 {
            0 | 1 => {
                let Some(([kind, count], tail)) =
                    rest.split_first_chunk::<2>().map(|(h, t)| (*h, t))
                else {
                    break;
                };
                rest = tail;
                let mut nal_units = Vec::new();
                for _ in 0..count % 8 {
                    let Some(([first, hi, lo], tail)) =
                        rest.split_first_chunk::<3>().map(|(h, t)| (*h, t))
                    else {
                        break;
                    };
                    rest = tail;
                    // A NAL unit of the declared length: its header byte, then zeros.
                    let mut nal = vec![0; usize::from(u16::from_be_bytes([hi, lo]))];
                    if let Some(header) = nal.first_mut() {
                        *header = first;
                    }
                    nal_units.push(nal);
                }
                let frame = RelayFrame {
                    timestamp: pushed,
                    frame_type: [
                        None,
                        Some(FrameType::I),
                        Some(FrameType::P),
                        Some(FrameType::B),
                    ][usize::from(kind % 4)],
                    idr: kind & 4 != 0,
                    nal_units,
                };
                bytes_in += frame.bytes();
                pushed += 1;
                buffer.push(frame);
            }
            2 => match buffer.pop() {
                Popped::Frame(frame) => {
                    assert!(
                        last_popped.is_none_or(|t| t < frame.timestamp),
                        "out of order"
                    );
                    last_popped = Some(frame.timestamp);
                    bytes_out += frame.bytes();
                }
                Popped::Empty => assert!(!ended && buffer.figures().frames == 0),
                Popped::Ended => assert!(ended && buffer.figures().frames == 0),
            },
            _ => {
                buffer.end();
                ended = true;
            }
        }
        let f = buffer.figures();
        assert!(
            f.bytes <= f.limit_bytes && f.max_bytes <= f.limit_bytes,
            "{f:?}"
        );
        assert!(
            f.packets <= f.limit_packets && f.max_packets <= f.limit_packets,
            "{f:?}"
        );
        assert_eq!(f.frames_in, u64::from(pushed));
        assert_eq!(
            f.frames_in,
            f.frames_out + f.frames_dropped.total() + f.frames,
            "{f:?}"
        );
        assert_eq!(bytes_in, bytes_out + f.bytes_dropped + f.bytes, "{f:?}");
    }
});
