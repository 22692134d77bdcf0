//! Ticket tokens: `<projectId>.<gameMode>.<ticketId>.<secret>`, the secret
//! 32 random bytes (256 bits) in URL-safe base64. The ids and the mode route
//! the token to its record and its pool, so a search starts without reading
//! anything else first; only the SHA-256 of the whole token is stored, and it
//! is compared in constant time.

use crate::credentials;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;

/// A token's routing parts (the secret is not kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRef {
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// `tkt_…`.
    pub ticket_id: String,
}

/// A new token for `ticket_id` of `project_id` in `game_mode` from `rng`: a
/// cryptographically secure generator (`rand::thread_rng()` or `OsRng`).
pub fn generate(
    rng: &mut impl RngCore,
    project_id: &str,
    game_mode: &str,
    ticket_id: &str,
) -> String {
    let mut bytes = [0u8; 32];
    rng.fill_bytes(&mut bytes);
    // Built in place (one allocation): this runs once per generated ticket.
    let mut token =
        String::with_capacity(project_id.len() + game_mode.len() + ticket_id.len() + 3 + 43);
    for part in [project_id, ".", game_mode, ".", ticket_id, "."] {
        token.push_str(part);
    }
    URL_SAFE_NO_PAD.encode_string(bytes, &mut token);
    token
}

/// Lower-case hex SHA-256 of a token.
pub fn hash(token: &str) -> String {
    credentials::hash(token)
}

/// The routing parts of a well-formed token; `None` for anything else.
pub fn parse(token: &str) -> Option<TokenRef> {
    let parts: Vec<&str> = token.splitn(5, '.').collect();
    let [project_id, game_mode, ticket_id, secret] = parts[..] else {
        return None;
    };
    let well_formed = project_id.starts_with("prj_")
        && ticket_id.starts_with("tkt_")
        && secret.len() >= 27
        && is_mode_name(game_mode)
        && [project_id, ticket_id]
            .iter()
            .all(|p| p.len() <= 64 && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    well_formed.then(|| TokenRef {
        project_id: project_id.to_owned(),
        game_mode: game_mode.to_owned(),
        ticket_id: ticket_id.to_owned(),
    })
}

/// `^[a-z0-9][a-z0-9_-]{0,62}$`: a game mode's name.
fn is_mode_name(name: &str) -> bool {
    let ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    name.len() <= 63
        && name.bytes().next().is_some_and(ok)
        && name.bytes().all(|b| ok(b) || b == b'_' || b == b'-')
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
    fn a_token_routes_to_its_ticket_and_mode_and_matches_only_its_hash() {
        let token = generate(
            &mut rand::rngs::OsRng,
            "prj_01ABC",
            "ranked-5v5",
            "tkt_01XYZ",
        );
        let r = parse(&token).unwrap();
        assert_eq!(r.project_id, "prj_01ABC");
        assert_eq!(r.game_mode, "ranked-5v5");
        assert_eq!(r.ticket_id, "tkt_01XYZ");
        assert!(matches(&token, &hash(&token)));
        let other = generate(
            &mut rand::rngs::OsRng,
            "prj_01ABC",
            "ranked-5v5",
            "tkt_01XYZ",
        );
        assert!(!matches(&other, &hash(&token)));
        assert_eq!(parse("nope"), None);
        assert_eq!(parse("prj_a.tkt_b.short"), None);
        assert_eq!(parse(&format!("{token}.x")), None);
        let secret = "A".repeat(43);
        for bad_mode in ["", "Ranked", "-x", "a b", &"a".repeat(64)] {
            assert_eq!(parse(&format!("prj_a.{bad_mode}.tkt_b.{secret}")), None);
        }
        assert!(parse(&format!("prj_a.{}.tkt_b.{secret}", "a".repeat(63))).is_some());
    }

    #[test]
    fn a_token_without_its_mode_is_refused() {
        // The three-part form `<projectId>.<ticketId>.<secret>` of earlier
        // releases: every such token has expired.
        let token = format!("prj_01ABC.tkt_01XYZ.{}", "A".repeat(43));
        assert_eq!(parse(&token), None);
    }
}
