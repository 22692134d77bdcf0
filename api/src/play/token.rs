//! Ticket tokens: `<projectId>.<ticketId>.<secret>`, the secret 32 random
//! bytes (256 bits) in URL-safe base64. The ids route the token to its
//! record (under the project's Redis hash tag); only the SHA-256 of the whole
//! token is stored, and it is compared in constant time.

use crate::credentials;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;

/// A token's routing parts (the secret is not kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRef {
    /// `prj_…`.
    pub project_id: String,
    /// `tkt_…`.
    pub ticket_id: String,
}

/// A new token for `ticket_id` of `project_id` from `rng`: a
/// cryptographically secure generator (`rand::thread_rng()` or `OsRng`).
pub fn generate(rng: &mut impl RngCore, project_id: &str, ticket_id: &str) -> String {
    let mut bytes = [0u8; 32];
    rng.fill_bytes(&mut bytes);
    format!("{project_id}.{ticket_id}.{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// Lower-case hex SHA-256 of a token.
pub fn hash(token: &str) -> String {
    credentials::hash(token)
}

/// The routing parts of a well-formed token; `None` for anything else.
pub fn parse(token: &str) -> Option<TokenRef> {
    let mut parts = token.split('.');
    let (project_id, ticket_id, secret) = (parts.next()?, parts.next()?, parts.next()?);
    let well_formed = parts.next().is_none()
        && project_id.starts_with("prj_")
        && ticket_id.starts_with("tkt_")
        && secret.len() >= 27
        && [project_id, ticket_id]
            .iter()
            .all(|p| p.len() <= 64 && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    well_formed.then(|| TokenRef {
        project_id: project_id.to_owned(),
        ticket_id: ticket_id.to_owned(),
    })
}

/// Whether `token` hashes to `stored_hash` (constant time).
pub fn matches(token: &str, stored_hash: &str) -> bool {
    credentials::constant_time_eq(&hash(token), stored_hash)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_token_routes_to_its_ticket_and_matches_only_its_hash() {
        let token = generate(&mut rand::rngs::OsRng, "prj_01ABC", "tkt_01XYZ");
        let r = parse(&token).unwrap();
        assert_eq!(r.project_id, "prj_01ABC");
        assert_eq!(r.ticket_id, "tkt_01XYZ");
        assert!(matches(&token, &hash(&token)));
        let other = generate(&mut rand::rngs::OsRng, "prj_01ABC", "tkt_01XYZ");
        assert!(!matches(&other, &hash(&token)));
        assert_eq!(parse("nope"), None);
        assert_eq!(parse("prj_a.tkt_b.short"), None);
        assert_eq!(parse(&format!("{token}.x")), None);
    }
}
