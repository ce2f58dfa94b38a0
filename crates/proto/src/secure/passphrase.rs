//! The shared secret a user types: a passphrase of 10 to 79 bytes.

use std::fmt;
use std::str::FromStr;

use zeroize::Zeroizing;

use super::{MAX_PASSPHRASE_LEN, MIN_PASSPHRASE_LEN};

/// A passphrase both ends know, from which [`MasterKey`](super::MasterKey)
/// is derived.
///
/// Its length is 10 to 79 bytes of UTF-8 ([`MIN_PASSPHRASE_LEN`],
/// [`MAX_PASSPHRASE_LEN`]): the bounds SRT's `passphrase` option has, so a
/// passphrase that works with SRT tools works here. The text is wiped from
/// memory when the value is dropped, and neither `Debug` nor any other trait
/// shows it. Clones are wiped alike.
#[derive(Clone)]
pub struct Passphrase {
    text: Zeroizing<String>,
}

impl Passphrase {
    /// A passphrase, checked for length. Takes the `String` by value so that
    /// no copy outlives this value; on an error the text is wiped too.
    pub fn new(text: String) -> Result<Passphrase, PassphraseError> {
        let text = Zeroizing::new(text);
        let len = text.len();
        if len < MIN_PASSPHRASE_LEN {
            return Err(PassphraseError::TooShort { len });
        }
        if len > MAX_PASSPHRASE_LEN {
            return Err(PassphraseError::TooLong { len });
        }
        Ok(Passphrase { text })
    }

    /// A passphrase read from a file: one trailing line ending (`\n` or
    /// `\r\n`), which editors add, is not part of it. Anything else,
    /// including other white space, is.
    pub fn from_file_contents(contents: &str) -> Result<Passphrase, PassphraseError> {
        let line = contents
            .strip_suffix("\r\n")
            .or_else(|| contents.strip_suffix('\n'))
            .unwrap_or(contents);
        Passphrase::new(line.to_owned())
    }

    /// The passphrase's bytes, for the key derivation.
    pub(super) fn as_bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }
}

impl FromStr for Passphrase {
    type Err = PassphraseError;

    /// The passphrase exactly as given (for a URL's `passphrase=` value).
    fn from_str(text: &str) -> Result<Passphrase, PassphraseError> {
        Passphrase::new(text.to_owned())
    }
}

/// Equality for configurations that hold a passphrase (two URLs asking for
/// the same one); not for checking a secret an attacker sends.
impl PartialEq for Passphrase {
    fn eq(&self, other: &Passphrase) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Passphrase {}

impl fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Passphrase(<redacted>)")
    }
}

/// Why a passphrase was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PassphraseError {
    /// Fewer than [`MIN_PASSPHRASE_LEN`] bytes.
    #[error(
        "the passphrase is {len} bytes long; it must be at least {MIN_PASSPHRASE_LEN} bytes \
         (use a longer one: every byte makes guessing it harder)"
    )]
    TooShort {
        /// Its length in bytes.
        len: usize,
    },
    /// More than [`MAX_PASSPHRASE_LEN`] bytes.
    #[error(
        "the passphrase is {len} bytes long; it must be at most {MAX_PASSPHRASE_LEN} bytes \
         (the limit SRT tools have too)"
    )]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
}
