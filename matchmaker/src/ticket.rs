//! The per-ticket rules of docs/searching.md, shared by ticket generation (API), the
//! simulator's scenario check and the cycle's re-check after a config
//! change (docs/game-modes.md, "Config changes").

use crate::codes::Code;
use crate::config::GameModeConfig;
use crate::search::Party;
use crate::validation::FieldError;

/// Longest `playerId` (characters), docs/searching.md.
pub const MAX_PLAYER_ID_CHARS: usize = 128;

/// Checks `playerId`: 1..=128 printable characters (docs/searching.md),
/// as [`is_printable_text`] reads them.
pub fn is_valid_player_id(player_id: &str) -> bool {
    is_printable_text(player_id, MAX_PLAYER_ID_CHARS)
}

/// Whether `text` is 1 to `max_chars` printable characters: a player id,
/// and the names a studio gives its projects and API keys.
///
/// Printable, as a player or a support agent would read it:
/// - no control characters, no invisible format characters (zero-width
///   space, byte-order mark, bidirectional overrides that make a text display
///   as another one), no line or paragraph separators, no unassigned or
///   surrogate code points;
/// - zero-width joiners and non-joiners only between two non-ASCII
///   characters, where emoji sequences and scripts such as Persian use them
///   (`admin` followed by a joiner would show as `admin`);
/// - at least one character that shows by itself: not only spaces,
///   combining marks, variation selectors or blank letters (Hangul fillers,
///   the blank braille pattern).
///
/// Categories from the Unicode Character Database (`unicode-properties`).
pub fn is_printable_text(text: &str, max_chars: usize) -> bool {
    if text.is_ascii() {
        return (1..=max_chars).contains(&text.len())
            && text.bytes().all(|b| !b.is_ascii_control())
            && text.bytes().any(|b| b != b' ');
    }
    let chars: Vec<char> = text.chars().collect();
    (1..=max_chars).contains(&chars.len())
        && chars.iter().all(|&c| is_printable(c))
        && chars.iter().any(|&c| shows_by_itself(c))
        && chars.iter().enumerate().all(|(i, &c)| {
            !is_joiner(c)
                || (i > 0 && joins(chars[i - 1]) && chars.get(i + 1).is_some_and(|&n| joins(n)))
        })
}

/// Zero-width non-joiner and joiner.
fn is_joiner(c: char) -> bool {
    matches!(c, '\u{200C}' | '\u{200D}')
}

/// What a joiner may stand between: a non-ASCII character that is neither
/// a joiner nor a space.
fn joins(c: char) -> bool {
    !c.is_ascii() && !is_joiner(c) && !c.is_whitespace()
}

/// Whether `c` may appear in a printable text (see [`is_printable_text`]).
fn is_printable(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    match c.general_category() {
        GeneralCategory::Format => is_joiner(c),
        GeneralCategory::Control
        | GeneralCategory::LineSeparator
        | GeneralCategory::ParagraphSeparator
        | GeneralCategory::Surrogate
        | GeneralCategory::Unassigned => false,
        _ => true,
    }
}

/// Whether `c` shows as something on its own: not a space, a mark (which
/// decorates the character before it, variation selectors included), a
/// joiner, or a letter drawn blank.
fn shows_by_itself(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    const BLANK: [char; 5] = ['\u{115F}', '\u{1160}', '\u{3164}', '\u{FFA0}', '\u{2800}'];
    !c.is_whitespace()
        && !is_joiner(c)
        && !BLANK.contains(&c)
        && !matches!(
            c.general_category(),
            GeneralCategory::NonspacingMark
                | GeneralCategory::SpacingMark
                | GeneralCategory::EnclosingMark
        )
}

/// Checks who a ticket is for: `player_id` and `party` in `config`.
/// Returns the first failure, with the field and the code
/// (`VALIDATION_ERROR`, `PARTIES_NOT_ENABLED`, `PARTY_TOO_LARGE`,
/// `INVALID_PARTY`). Its attributes are [`crate::Attributes`]'.
///
/// Mode existence and enablement (`GAME_MODE_NOT_FOUND`,
/// `GAME_MODE_DISABLED`) are the caller's, which knows the project.
///
/// # Errors
/// The failed rule as a [`FieldError`].
pub fn check_ticket(
    config: &GameModeConfig,
    player_id: &str,
    party: Option<&Party>,
) -> Result<(), FieldError> {
    if !is_valid_player_id(player_id) {
        return Err(FieldError::new(
            "playerId",
            Code::ValidationError,
            format!("playerId must be 1 to {MAX_PLAYER_ID_CHARS} printable characters"),
        ));
    }
    if let Some(party) = party {
        check_party(config, player_id, party)?;
    }
    Ok(())
}

fn check_party(config: &GameModeConfig, player_id: &str, party: &Party) -> Result<(), FieldError> {
    if party.id.is_empty() || party.id.chars().count() > MAX_PLAYER_ID_CHARS {
        return Err(FieldError::new(
            "party.id",
            Code::InvalidParty,
            "party.id must be 1 to 128 characters",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for member in &party.members {
        if !is_valid_player_id(member) {
            return Err(FieldError::new(
                "party.members",
                Code::InvalidParty,
                "every member must be a valid, non-empty player id",
            ));
        }
        if !seen.insert(member.as_str()) {
            return Err(FieldError::new(
                "party.members",
                Code::InvalidParty,
                format!("member {member} is listed twice"),
            ));
        }
    }
    if !seen.contains(player_id) {
        return Err(FieldError::new(
            "party.members",
            Code::InvalidParty,
            "playerId must be one of party.members",
        ));
    }
    let size = party.members.len();
    if size > 1 && !config.parties.allow_parties {
        return Err(FieldError::new(
            "party",
            Code::PartiesNotEnabled,
            format!("game mode {} does not allow parties", config.name),
        ));
    }
    if size > config.parties.max_size as usize {
        return Err(FieldError::new(
            "party.members",
            Code::PartyTooLarge,
            format!(
                "a party of {size} exceeds maxSize {}",
                config.parties.max_size
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_ids_that_show_as_something_are_valid() {
        for id in [
            "p1",
            "Zoë🎮",
            " padded ",
            "a b",
            "玩家",
            // Emoji and scripts joined by zero-width joiners.
            "👨\u{200D}👩\u{200D}👧",
            "می\u{200C}خواهم",
            "❤\u{FE0F}\u{200D}🔥",
            "e\u{0301}",
            &"x".repeat(MAX_PLAYER_ID_CHARS),
            &"é".repeat(MAX_PLAYER_ID_CHARS),
        ] {
            assert!(is_valid_player_id(id), "{id:?}");
        }
    }

    #[test]
    fn blank_invisible_or_oversized_player_ids_are_refused() {
        for id in [
            "",
            " ",
            "   ",
            "\u{3000}",
            "\u{00A0}\u{2003}",
            "tab\there",
            "line\u{2028}break",
            "para\u{2029}graph",
            "\u{200B}",
            "zero\u{200B}width",
            "\u{FEFF}bom",
            // "admin" shown right to left.
            "\u{202E}nimda",
            "isolate\u{2066}d",
            "\u{E0001}tag",
            "unassigned\u{0378}",
            "del\u{7F}",
            // Joiners alone, at an end, or between ASCII letters.
            "\u{200D}",
            "\u{200C}",
            "\u{200D}\u{200D}\u{200D}",
            "admin\u{200D}",
            "\u{200D}admin",
            "ad\u{200D}min",
            "🎮\u{200D}",
            // Nothing that shows by itself.
            "\u{FE0F}",
            "\u{0301}",
            "\u{3164}",
            "\u{2800}",
            "\u{3164}\u{3164}",
            &"x".repeat(MAX_PLAYER_ID_CHARS + 1),
            &"é".repeat(MAX_PLAYER_ID_CHARS + 1),
        ] {
            assert!(!is_valid_player_id(id), "{id:?}");
        }
    }
}
