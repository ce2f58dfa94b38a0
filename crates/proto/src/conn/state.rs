//! Connection states (RFC 4340 §8.4) and roles.

use std::fmt;

/// The state of a connection (RFC 4340 §8.4). LISTEN is the
/// [`Endpoint`](super::Endpoint)'s business, not a connection's.
///
/// The order is the RFC's, so that §8.5's comparisons (`S.state >= OPEN`,
/// `S.state < CLOSEREQ`) read as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    /// A client that sent a Request and waits for the Response.
    Request,
    /// A server that received a Request and sent a Response.
    Respond,
    /// A client that received the Response and acknowledged it; it may send
    /// data (on DataAck) but waits for a packet from the server.
    PartOpen,
    /// The data transfer state.
    Open,
    /// A server that sent a CloseReq and waits for the client's Close.
    CloseReq,
    /// An endpoint that sent a Close and waits for the Reset(Closed).
    Closing,
    /// The endpoint that received the final Reset waits 2·MSL for stray
    /// packets (RFC 4340 §8.3).
    TimeWait,
    /// Nothing left: the connection may be dropped.
    Closed,
}

impl State {
    /// The RFC's name of the state.
    pub const fn name(self) -> &'static str {
        match self {
            State::Request => "REQUEST",
            State::Respond => "RESPOND",
            State::PartOpen => "PARTOPEN",
            State::Open => "OPEN",
            State::CloseReq => "CLOSEREQ",
            State::Closing => "CLOSING",
            State::TimeWait => "TIMEWAIT",
            State::Closed => "CLOSED",
        }
    }

    /// Whether application data can still be queued for sending.
    pub const fn can_send(self) -> bool {
        matches!(
            self,
            State::Request | State::Respond | State::PartOpen | State::Open
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The endpoint that sent the Request.
    Client,
    /// The endpoint that answered it.
    Server,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_ordered_as_in_rfc_4340() {
        assert!(State::Request < State::Respond);
        assert!(State::PartOpen < State::Open);
        assert!(State::Open < State::CloseReq);
        assert!(State::CloseReq < State::Closing);
        assert!(State::Closing < State::TimeWait);
        assert_eq!(State::PartOpen.to_string(), "PARTOPEN");
    }
}
