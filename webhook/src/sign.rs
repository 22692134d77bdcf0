//! Standard Webhooks signing (docs/webhook-events.md).
//!
//! ```text
//! webhook-id:        <id>             stable across retries
//! webhook-timestamp: <unix seconds>   of this attempt, so every retry is signed afresh
//! webhook-signature: v1,<base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>"))>
//! ```
//! `key` is the base64-decoded part of the secret after `whsec_`. The body is
//! the exact bytes put on the wire: a receiver must verify the raw bytes it
//! received, never a re-serialisation. After a rotation every rotated-out
//! secret keeps signing for its own 24 hours (which secrets sign is the
//! store's rule, `matchplane_store::repos::webhook_secrets`); the header then
//! carries one signature per secret, separated by spaces.
//!
//! Time and randomness are inputs here: the caller passes the timestamp and
//! the random source.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// Prefix of every webhook secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// Random bytes in a generated secret's key.
pub const SECRET_KEY_BYTES: usize = 32;

/// Why a string is not a usable webhook secret. Never carries the secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// The secret does not start with `whsec_`.
    #[error("a webhook secret starts with `whsec_`")]
    Prefix,
    /// The part after `whsec_` is not standard base64.
    #[error("the webhook secret's key is not valid base64")]
    Base64,
    /// The decoded key is empty.
    #[error("the webhook secret's key is empty")]
    Empty,
    /// The key cannot key an HMAC (not expected for HMAC-SHA256).
    #[error("the webhook secret's key is not a valid HMAC key")]
    Key,
}

/// A parsed webhook secret: the HMAC key decoded from `whsec_<base64>`.
///
/// `Debug` prints no key material, so a secret can sit in logged structs.
#[derive(Clone)]
pub struct Secret {
    key: Vec<u8>,
    mac: Hmac<Sha256>,
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Secret {}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    /// Parses `whsec_<base64 key>`.
    ///
    /// # Errors
    /// [`SecretError`] when the prefix is missing, the key is not base64 or is empty.
    pub fn parse(raw: &str) -> Result<Self, SecretError> {
        let encoded = raw.strip_prefix(SECRET_PREFIX).ok_or(SecretError::Prefix)?;
        let key = STANDARD
            .decode(encoded.trim())
            .map_err(|_| SecretError::Base64)?;
        if key.is_empty() {
            return Err(SecretError::Empty);
        }
        let mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| SecretError::Key)?;
        Ok(Self { key, mac })
    }

    /// `v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>` under this key.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut mac = self.mac.clone();
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// Generates a new secret, `whsec_` + base64 of [`SECRET_KEY_BYTES`] random bytes.
/// The caller chooses the random source (a CSPRNG such as `rand::rngs::OsRng`
/// in production).
pub fn generate_secret<R: RngCore + ?Sized>(rng: &mut R) -> String {
    let mut key = [0u8; SECRET_KEY_BYTES];
    rng.fill_bytes(&mut key);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// The `webhook-signature` header value: one `v1,…` signature per secret,
/// space-separated, in the order given (docs/webhook-events.md). `timestamp` is the unix
/// seconds sent as `webhook-timestamp` with this very attempt.
pub fn signature_header(secrets: &[Secret], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign(id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    /// The example published with the Standard Webhooks libraries.
    #[test]
    fn matches_the_published_example() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let signature = secret.sign(
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn several_secrets_give_space_separated_signatures() {
        let a = Secret::parse(&generate_secret(&mut StdRng::seed_from_u64(1))).unwrap();
        let b = Secret::parse(&generate_secret(&mut StdRng::seed_from_u64(2))).unwrap();
        let header = signature_header(&[a.clone(), b.clone()], "mat_1", 10, b"{}");
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(
            parts,
            [a.sign("mat_1", 10, b"{}"), b.sign("mat_1", 10, b"{}")]
        );
        assert_ne!(parts[0], parts[1]);
    }

    #[test]
    fn generated_secrets_parse_and_differ() {
        let mut rng = StdRng::seed_from_u64(7);
        let one = generate_secret(&mut rng);
        let two = generate_secret(&mut rng);
        assert!(one.starts_with("whsec_"));
        assert_ne!(one, two);
        assert_eq!(Secret::parse(&one).unwrap().key.len(), SECRET_KEY_BYTES);
    }

    #[test]
    fn refuses_malformed_secrets_without_echoing_them() {
        assert_eq!(Secret::parse("abc"), Err(SecretError::Prefix));
        assert_eq!(Secret::parse("whsec_!!!"), Err(SecretError::Base64));
        assert_eq!(Secret::parse("whsec_"), Err(SecretError::Empty));
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
    }
}
