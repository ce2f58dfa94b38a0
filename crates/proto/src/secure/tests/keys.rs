//! Passphrases, the master key, and a known-answer vector for the whole
//! derivation and packet format.

use super::*;

#[test]
fn passphrase_length_bounds() {
    for len in [0, 1, MIN_PASSPHRASE_LEN - 1] {
        assert_eq!(
            Passphrase::new("x".repeat(len)).map(|_| ()),
            Err(PassphraseError::TooShort { len })
        );
    }
    for len in [MIN_PASSPHRASE_LEN, 40, MAX_PASSPHRASE_LEN] {
        assert!(Passphrase::new("x".repeat(len)).is_ok(), "{len}");
    }
    for len in [MAX_PASSPHRASE_LEN + 1, 1000] {
        assert_eq!(
            Passphrase::new("x".repeat(len)).map(|_| ()),
            Err(PassphraseError::TooLong { len })
        );
    }
    // Bytes, not characters: five two-byte characters are ten bytes.
    assert!(Passphrase::new("ééééé".to_owned()).is_ok());
    assert_eq!(
        Passphrase::new("éééé".to_owned()).map(|_| ()),
        Err(PassphraseError::TooShort { len: 8 })
    );
    assert_eq!(
        "short".parse::<Passphrase>().map(|_| ()),
        Err(PassphraseError::TooShort { len: 5 })
    );
}

#[test]
fn passphrase_errors_say_what_to_do() {
    let short = PassphraseError::TooShort { len: 4 }.to_string();
    assert!(
        short.contains("4 bytes") && short.contains("at least 10"),
        "{short}"
    );
    let long = PassphraseError::TooLong { len: 80 }.to_string();
    assert!(
        long.contains("80 bytes") && long.contains("at most 79"),
        "{long}"
    );
}

#[test]
fn passphrase_from_a_file_loses_one_line_ending() {
    let bytes = |contents: &str| {
        Passphrase::from_file_contents(contents)
            .map(|p| p.as_bytes().to_vec())
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        bytes(&format!("{PASSPHRASE}\n")),
        Ok(PASSPHRASE.as_bytes().to_vec())
    );
    assert_eq!(
        bytes(&format!("{PASSPHRASE}\r\n")),
        Ok(PASSPHRASE.as_bytes().to_vec())
    );
    assert_eq!(bytes(PASSPHRASE), Ok(PASSPHRASE.as_bytes().to_vec()));
    // Only one, and nothing else is trimmed.
    assert_eq!(
        bytes(&format!("{PASSPHRASE}\n\n")),
        Ok(format!("{PASSPHRASE}\n").into_bytes())
    );
    assert_eq!(
        bytes(&format!(" {PASSPHRASE} \n")),
        Ok(format!(" {PASSPHRASE} ").into_bytes())
    );
    // Ten bytes with the newline, nine without.
    assert_eq!(
        Passphrase::from_file_contents("123456789\n").map(|_| ()),
        Err(PassphraseError::TooShort { len: 9 })
    );
}

#[test]
fn secrets_do_not_show_in_debug() {
    let text = format!("{:?} {:?} {:?}", passphrase(), master(), pair().0);
    assert!(!text.contains("horse"), "{text}");
    assert!(text.contains("redacted"), "{text}");
}

#[test]
fn master_key_depends_on_passphrase_and_salt() {
    let seal_with = |master: &MasterKey| {
        let mut keys = keys_with(master, Role::Client);
        sealed(keys.sealer(), &data(From::Client, 1, b"same"), &UDP)
    };
    let reference = seal_with(master());
    // The same inputs give the same key (no hidden randomness).
    assert_eq!(
        seal_with(&MasterKey::derive(&passphrase(), &SALT)),
        reference
    );
    let mut salt = SALT;
    salt[0] ^= 0x80;
    assert_ne!(
        seal_with(&MasterKey::derive(&passphrase(), &salt)),
        reference
    );
}

/// The whole chain pinned: passphrase and salt → Argon2id → HKDF → the
/// listener's sealed Response and the client's first sealed DataAck, byte
/// for byte. A change to any parameter, label, field order, nonce layout,
/// or to the associated data breaks it, and with it compatibility with
/// every deployed peer.
///
/// The expected bytes were computed by this code and checked against an
/// independent implementation (Python's `cryptography`: Argon2id, HKDF
/// expand and ChaCha20-Poly1305 from the description in
/// `docs/security.md`), which produced the same bytes.
#[test]
fn known_answer() {
    let (mut client, mut server) = pair();
    let mut response = packet(
        From::Server,
        0,
        PacketKind::Response {
            ack: SeqNum::new(CLIENT_ISS),
            service_code: 0x5254_5056,
        },
        Options::new(),
        &[],
        &UDP,
    );
    server
        .sealer()
        .seal_response(&mut response, &SALT, &UDP)
        .expect("seals");
    let data_ack = packet(
        From::Client,
        1,
        PacketKind::DataAck {
            ack: SeqNum::new(SERVER_ISS),
        },
        Options::new(),
        b"fairstream",
        &UDP,
    );
    let first = sealed(client.sealer(), &data_ack, &UDP);
    assert_eq!(
        (hex(&response), hex(&first)),
        (
            EXPECTED_RESPONSE.to_owned(),
            EXPECTED_FIRST_DATA_ACK.to_owned()
        )
    );
}

/// Server port 5004 → client port 40000, Data Offset 7, CCVal 3, Checksum 0
/// (DCCP-UDP), Response with X = 1, seq = server ISS, ack = client ISS,
/// Service Code "RTPV"; then the salt in clear and the 16-byte tag.
const EXPECTED_RESPONSE: &str = concat!(
    "138c9c40073000000300fedcba98765400000123456789ab52545056",
    "6661697273747265616d2073616c7421",
    "dbbb14fd16996837af59e6f046dc8760",
);
/// Client → server DataAck, seq = client ISS + 1, ack = server ISS; then
/// "fairstream" encrypted (10 bytes) and the tag.
const EXPECTED_FIRST_DATA_ACK: &str = concat!(
    "9c40138c0630000009000123456789ac0000fedcba987654",
    "41d2ceda69988436cd19",
    "c25eb23b7864c0eb3e3f0d825634abfb",
);
