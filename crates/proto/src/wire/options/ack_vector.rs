//! The Ack Vector option (RFC 4340 §11.4) and its conversion to the feedback
//! a CCID 2 sender consumes.

use crate::cc::{AckFeedback, AckRun, AckState};
use crate::wire::dccp::SeqNum;

/// The state of a run of packets in an Ack Vector cell (RFC 4340 §11.4: 0
/// Received, 1 Received ECN Marked, 2 Reserved, 3 Not Yet Received).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AckVectorState {
    /// State 0: received.
    Received,
    /// State 1: received with an ECN Congestion Experienced mark.
    ReceivedEcnMarked,
    /// State 2: reserved; a receiver cannot interpret the run.
    Reserved,
    /// State 3: not yet received.
    NotReceived,
}

impl AckVectorState {
    /// The state in the two high bits of a cell byte.
    pub const fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0 => AckVectorState::Received,
            1 => AckVectorState::ReceivedEcnMarked,
            2 => AckVectorState::Reserved,
            _ => AckVectorState::NotReceived,
        }
    }

    /// The two-bit code.
    pub const fn bits(self) -> u8 {
        match self {
            AckVectorState::Received => 0,
            AckVectorState::ReceivedEcnMarked => 1,
            AckVectorState::Reserved => 2,
            AckVectorState::NotReceived => 3,
        }
    }

    /// The congestion controller's view of the state; `None` for the
    /// reserved state.
    pub const fn ack_state(self) -> Option<AckState> {
        match self {
            AckVectorState::Received => Some(AckState::Received),
            AckVectorState::ReceivedEcnMarked => Some(AckState::ReceivedEcnMarked),
            AckVectorState::Reserved => None,
            AckVectorState::NotReceived => Some(AckState::NotReceived),
        }
    }
}

/// One Ack Vector cell: a two-bit state and a six-bit run length (RFC 4340
/// §11.4); the run covers run length + 1 consecutive packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AckVectorCell {
    /// The state of every packet in the run.
    pub state: AckVectorState,
    /// The number of packets in the run minus one, 0-63.
    pub run_length: u8,
}

impl AckVectorCell {
    /// The largest run length a cell can hold.
    pub const MAX_RUN_LENGTH: u8 = 63;

    /// Decodes a cell byte.
    pub const fn from_byte(byte: u8) -> Self {
        AckVectorCell {
            state: AckVectorState::from_bits(byte >> 6),
            run_length: byte & 0x3F,
        }
    }

    /// Encodes the cell (a run length above 63 is cut to its low six bits;
    /// [`AckVector::from_cells`] rejects such cells instead).
    pub const fn to_byte(self) -> u8 {
        (self.state.bits() << 6) | (self.run_length & 0x3F)
    }

    /// How many packets the run covers (run length + 1).
    pub const fn packets(self) -> u64 {
        self.run_length as u64 + 1
    }
}

/// What was wrong with Ack Vector cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AckVectorError {
    /// A run length does not fit in six bits.
    #[error("Ack Vector cell {index}: run length {run_length} exceeds 63")]
    RunLengthTooLong {
        /// The cell's position.
        index: usize,
        /// The run length given.
        run_length: u8,
    },
    /// More cells than one option can carry.
    #[error("Ack Vector has {count} cells; one option carries at most 253")]
    TooManyCells {
        /// The number of cells given.
        count: usize,
    },
    /// A cell has the reserved state 2, which has no meaning to convert.
    #[error("Ack Vector cell {index} has the reserved state 2")]
    ReservedState {
        /// The cell's position.
        index: usize,
    },
}

/// The cells of one Ack Vector option, with its ECN nonce echo (option 38
/// echoes nonce 0, option 39 nonce 1; RFC 4340 §11.4).
///
/// At most [`AckVector::MAX_CELLS`] cells: an option's length byte counts the
/// type and length bytes too. Longer vectors are sent as several consecutive
/// options; [`Options::ack_vector_cells`](super::Options::ack_vector_cells)
/// concatenates them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AckVector {
    nonce: bool,
    cells: Vec<u8>,
}

impl AckVector {
    /// The most cells one option can carry.
    pub const MAX_CELLS: usize = 253;

    /// An Ack Vector with no cells.
    pub fn empty() -> AckVector {
        AckVector {
            nonce: false,
            cells: Vec::new(),
        }
    }

    /// An Ack Vector from `(state, run length)` cells, newest first (the first
    /// cell starts at the packet's Acknowledgement Number).
    pub fn from_cells(
        nonce: bool,
        cells: &[(AckVectorState, u8)],
    ) -> Result<AckVector, AckVectorError> {
        if cells.len() > Self::MAX_CELLS {
            return Err(AckVectorError::TooManyCells { count: cells.len() });
        }
        let mut bytes = Vec::with_capacity(cells.len());
        for (index, &(state, run_length)) in cells.iter().enumerate() {
            if run_length > AckVectorCell::MAX_RUN_LENGTH {
                return Err(AckVectorError::RunLengthTooLong { index, run_length });
            }
            bytes.push(AckVectorCell { state, run_length }.to_byte());
        }
        Ok(AckVector {
            nonce,
            cells: bytes,
        })
    }

    /// An Ack Vector from raw cell bytes, as they appear on the wire.
    pub fn from_bytes(nonce: bool, bytes: &[u8]) -> Result<AckVector, AckVectorError> {
        if bytes.len() > Self::MAX_CELLS {
            return Err(AckVectorError::TooManyCells { count: bytes.len() });
        }
        Ok(AckVector {
            nonce,
            cells: bytes.to_vec(),
        })
    }

    /// The ECN nonce echo: `false` for option 38, `true` for option 39.
    pub fn nonce(&self) -> bool {
        self.nonce
    }

    /// The cells, newest first.
    pub fn cells(&self) -> impl Iterator<Item = AckVectorCell> + '_ {
        self.cells.iter().map(|&b| AckVectorCell::from_byte(b))
    }

    /// The raw cell bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.cells
    }

    /// The number of cells.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether there are no cells.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }
}

/// Converts Ack Vector cells into the feedback a CCID 2 sender consumes.
///
/// RFC 4340 §11.4: the first cell describes the packet named by the
/// Acknowledgement Number and the `run_length` packets before it; each later
/// cell continues further back. Each cell becomes one [`AckRun`] of
/// `run_length + 1` packets. A cell with the reserved state 2 is an error
/// naming its position, since its meaning is unknown.
pub fn ack_vector_to_feedback(
    ack_number: SeqNum,
    cells: impl IntoIterator<Item = AckVectorCell>,
) -> Result<AckFeedback, AckVectorError> {
    let runs = cells
        .into_iter()
        .enumerate()
        .map(|(index, cell)| match cell.state.ack_state() {
            Some(state) => Ok(AckRun {
                state,
                length: cell.packets(),
            }),
            None => Err(AckVectorError::ReservedState { index }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(AckFeedback {
        ack_number: ack_number.value(),
        runs,
    })
}
