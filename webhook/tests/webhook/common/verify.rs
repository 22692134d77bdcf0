//! A receiver-side verifier written from the published scheme, sharing no
//! code with `matchplane_webhook::sign` (HMAC is built here from SHA-256).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

/// HMAC-SHA256 per RFC 2104, on a 64-byte block.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let ipad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let opad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let inner = Sha256::new()
        .chain_update(&ipad)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(&opad)
        .chain_update(inner)
        .finalize()
        .into()
}

/// Why a webhook does not verify.
#[derive(Debug, PartialEq, Eq)]
pub enum Rejected {
    Missing,
    TooOld,
    BadSignature,
}

/// Verifies like a studio would: timestamp within `tolerance_secs` of
/// `now_unix`, and one of the space-separated `v1,` signatures equal to
/// HMAC(key, "<id>.<ts>.<body>") over the body bytes as given.
pub fn verify(
    secret: &str,
    id: &str,
    timestamp: &str,
    signatures: &str,
    body: &[u8],
    now_unix: i64,
    tolerance_secs: i64,
) -> Result<(), Rejected> {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").ok_or(Rejected::Missing)?)
        .map_err(|_| Rejected::Missing)?;
    let ts: i64 = timestamp.parse().map_err(|_| Rejected::Missing)?;
    if (now_unix - ts).abs() > tolerance_secs {
        return Err(Rejected::TooOld);
    }
    let mut signed = Vec::new();
    signed.extend_from_slice(id.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(timestamp.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(body);
    let expected = STANDARD.encode(hmac_sha256(&key, &signed));
    let found = signatures
        .split(' ')
        .filter_map(|part| part.strip_prefix("v1,"))
        .any(|candidate| candidate == expected);
    if found {
        Ok(())
    } else {
        Err(Rejected::BadSignature)
    }
}

#[test]
fn the_independent_verifier_accepts_the_published_example() {
    let body = br#"{"test": 2432232314}"#;
    let ok = verify(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "1614265330",
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
        body,
        1_614_265_330,
        300,
    );
    assert_eq!(ok, Ok(()));
}
