//! API key material (docs/api-keys.md): `mp_sk_` + 32 random bytes (256 bits) in
//! URL-safe base64, stored only as SHA-256 hex plus a visible prefix.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Every API key starts with this.
pub const KEY_PREFIX: &str = "mp_sk_";
/// How many characters of a key are kept visible (`mp_sk_` + 6).
pub const VISIBLE_PREFIX_LEN: usize = KEY_PREFIX.len() + 6;

/// A freshly generated key: shown once, then only `hash` and `prefix` remain.
#[derive(Debug)]
pub struct GeneratedKey {
    /// The whole key, to show the caller exactly once.
    pub plaintext: String,
    /// Its visible prefix.
    pub prefix: String,
    /// Lower-case hex SHA-256 of `plaintext`.
    pub hash: String,
}

/// Generates a key from `rng` (pass `rand::rngs::OsRng` in production).
pub fn generate(rng: &mut impl RngCore) -> GeneratedKey {
    let mut bytes = [0u8; 32];
    rng.fill_bytes(&mut bytes);
    let plaintext = format!("{KEY_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes));
    GeneratedKey {
        prefix: plaintext[..VISIBLE_PREFIX_LEN].to_owned(),
        hash: hash(&plaintext),
        plaintext,
    }
}

/// Lower-case hex SHA-256 of a key.
pub fn hash(key: &str) -> String {
    // Into a stack buffer with encode_to_slice: this runs for every
    // generated ticket and every search start (the token), and both a
    // format! per byte and hex::encode (which collects chars one by one,
    // 1 % of the ticket route's CPU) showed in its profile.
    let digest = digest(key);
    let mut hex = [0u8; 64];
    // Hex digits are ASCII: `from_utf8` checks them in a few words, where
    // `from_utf8_lossy` walked them in chunks.
    match hex::encode_to_slice(digest, &mut hex).map(|()| std::str::from_utf8(&hex)) {
        Ok(Ok(text)) => text.to_owned(),
        // Not reached: 32 bytes always fit 64 hex digits.
        _ => hex::encode(digest),
    }
}

/// SHA-256 of a presented credential: what the key caches are keyed by
/// (never the plaintext); the database keeps its hex form ([`hash`]).
pub type CredentialDigest = [u8; 32];

/// The digest of a credential.
pub fn digest(credential: &str) -> CredentialDigest {
    Sha256::digest(credential.as_bytes()).into()
}

/// Compares two secrets in time independent of where they differ (both are
/// hashed first, so their lengths leak nothing either).
pub fn constant_time_eq(a: &str, b: &str) -> bool {
    digests_equal(&digest(a), &digest(b))
}

/// Compares two SHA-256 digests in time independent of where they differ
/// (`subtle`).
pub fn digests_equal(a: &CredentialDigest, b: &CredentialDigest) -> bool {
    a.ct_eq(b).into()
}

/// A webhook signing secret: `whsec_` + base64 of 32 random bytes (docs/game-modes.md).
pub fn webhook_secret(rng: &mut impl RngCore) -> String {
    let mut bytes = [0u8; 32];
    rng.fill_bytes(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// What a secret looks like outside create and rotate responses.
pub const MASKED_SECRET: &str = "whsec_********";

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn keys_have_enough_randomness_and_hash_stably() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let key = generate(&mut rng);
        assert!(key.plaintext.starts_with(KEY_PREFIX));
        assert_eq!(key.plaintext.len(), KEY_PREFIX.len() + 43);
        assert_eq!(key.hash, hash(&key.plaintext));
        assert_eq!(key.hash.len(), 64);
        // FIPS 180-2's example: lower-case hex of SHA-256("abc").
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(key.plaintext.starts_with(&key.prefix));
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        let secret = webhook_secret(&mut rng);
        assert!(secret.starts_with("whsec_"));
        assert_eq!(secret.len(), 6 + 44);
    }
}
