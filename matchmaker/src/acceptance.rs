//! Acceptance (match proposals): the `acceptance` block of a game mode and
//! the rule that closes a proposal.
//!
//! With `acceptance`, a group the cycle forms is first a proposal: every
//! member answers before `acceptBy`. [`close`] is the one place that says
//! what becomes of each member when a proposal ends, called by the pool
//! stores (through the same rule written in their scripts, checked by the
//! conformance suite) and by `simulate`:
//!
//! - everyone accepted: the proposal is the match;
//! - someone declined (or cancelled, or closed the socket), or the deadline
//!   passed with someone silent: the ones responsible fail
//!   (`MATCH_DECLINED` / `ACCEPTANCE_TIMEOUT`, or end as they ended), the
//!   other members of their parties fail with `PARTY_MEMBER_DECLINED` (a
//!   party is never split by a requeue), and every other party goes back to
//!   the pool with its original `queuedAt`. Only the ones responsible are
//!   cooled down;
//! - a member's search ended by the service (failed, or cancelled by its
//!   API instance stopping): nobody is responsible, and everyone else,
//!   its party too, goes back to the pool.

use crate::codes::Code;
use crate::config::GameModeConfig;
use serde::{Deserialize, Serialize};

/// Longest `timeoutSeconds` (seconds).
pub const MAX_TIMEOUT_SECONDS: f64 = 600.0;
/// Longest `declineCooldownSeconds` (seconds).
pub const MAX_COOLDOWN_SECONDS: f64 = 3600.0;

/// The `acceptance` block (docs/acceptance.md): a formed group is proposed
/// to its players, who accept or decline within `timeoutSeconds`;
/// `{"timeoutSeconds": 20, "declineCooldownSeconds": 60}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Acceptance {
    /// How long the players have to answer (seconds, 1..=600), counted
    /// from the moment the proposal is stored.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 600))]
    pub timeout_seconds: f64,
    /// How long a player who declined (or stayed silent, or cancelled) may
    /// not search again in this mode (seconds, 0..=3600; default 0).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 3600))]
    pub decline_cooldown_seconds: f64,
}

/// The `acceptance` rules, pushed into the caller's list of failures.
pub(crate) fn check_acceptance(config: &GameModeConfig, push: &mut impl FnMut(&str, Code, String)) {
    let Some(acceptance) = &config.acceptance else {
        return;
    };
    let timeout = acceptance.timeout_seconds;
    if !(1.0..=MAX_TIMEOUT_SECONDS).contains(&timeout) {
        push(
            "acceptance.timeoutSeconds",
            Code::ValidationError,
            format!("timeoutSeconds must be 1 to {MAX_TIMEOUT_SECONDS} seconds"),
        );
    }
    let cooldown = acceptance.decline_cooldown_seconds;
    if !(0.0..=MAX_COOLDOWN_SECONDS).contains(&cooldown) {
        push(
            "acceptance.declineCooldownSeconds",
            Code::ValidationError,
            format!("declineCooldownSeconds must be 0 to {MAX_COOLDOWN_SECONDS} seconds"),
        );
    }
}

/// One member's answer so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Answer {
    /// Not answered yet.
    Pending,
    /// Accepted.
    Accept,
    /// Declined.
    Decline,
    /// Its search ended while proposed (cancelled, socket closed, expired):
    /// counts as a decline.
    Gone,
    /// Its search was ended by the service (failed, e.g. its mode was
    /// disabled, or cancelled by its API instance stopping): ends the
    /// proposal, nobody is responsible for it, and its party is not
    /// dropped for it.
    Failed,
}

/// A member of a proposal, as [`close`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member<'a> {
    /// `tkt_…` id.
    pub ticket_id: &'a str,
    /// The party's id (a solo player's own ticket id will do).
    pub party: &'a str,
    /// Its answer so far.
    pub answer: Answer,
}

/// What becomes of a member of a closed proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Matched: everyone accepted.
    Matched,
    /// Back in the pool with its original `queuedAt`.
    Requeued,
    /// Fails with this code (`MATCH_DECLINED`, `ACCEPTANCE_TIMEOUT` or
    /// `PARTY_MEMBER_DECLINED`); cooled down when `cooled`.
    Fails {
        /// The search's code.
        code: &'static str,
        /// Whether this player is responsible (and so cooled down).
        cooled: bool,
    },
    /// Its search had already ended (cancelled, expired: cooled down when
    /// `cooled`; failed by the service: not).
    AlreadyEnded {
        /// Whether this player is responsible (and so cooled down).
        cooled: bool,
    },
}

/// Whether a proposal is over at `now`, and if so each member's fate (in
/// the members' order); `None` while it stays open.
///
/// It closes as soon as anyone declined or left (the silent ones are then
/// not responsible: they go back to the pool), or at `accept_by` with
/// someone silent (those are responsible), or once everyone accepted.
pub fn close(members: &[Member<'_>], accept_by: f64, now: f64) -> Option<Vec<Fate>> {
    let refused = |a: Answer| matches!(a, Answer::Decline | Answer::Gone | Answer::Failed);
    let any_refused = members.iter().any(|m| refused(m.answer));
    if !any_refused && members.iter().all(|m| m.answer == Answer::Accept) {
        return Some(vec![Fate::Matched; members.len()]);
    }
    let timed_out = !any_refused && now >= accept_by;
    if !any_refused && !timed_out {
        return None;
    }
    // Who is responsible: decliners and leavers, or (at the deadline) the
    // silent. A search ended by the service makes nobody responsible, and
    // its party goes back to the pool (waiting for that member to search
    // again, docs/game-modes.md "Parties"): a rolling restart is nobody's
    // decline (docs/acceptance.md, "How a proposal ends").
    let responsible = |m: &Member<'_>| match m.answer {
        Answer::Decline | Answer::Gone => true,
        Answer::Pending => timed_out,
        Answer::Accept | Answer::Failed => false,
    };
    let dropped: std::collections::HashSet<&str> = members
        .iter()
        .filter(|m| responsible(m))
        .map(|m| m.party)
        .collect();
    Some(
        members
            .iter()
            .map(|m| match m.answer {
                Answer::Gone => Fate::AlreadyEnded { cooled: true },
                Answer::Failed => Fate::AlreadyEnded { cooled: false },
                Answer::Decline => Fate::Fails {
                    code: crate::Code::MatchDeclined.as_str(),
                    cooled: true,
                },
                Answer::Pending if timed_out => Fate::Fails {
                    code: crate::Code::AcceptanceTimeout.as_str(),
                    cooled: true,
                },
                _ if dropped.contains(m.party) => Fate::Fails {
                    code: crate::Code::PartyMemberDeclined.as_str(),
                    cooled: false,
                },
                _ => Fate::Requeued,
            })
            .collect(),
    )
}

/// A timeout the service caused (docs/acceptance.md, "How a proposal
/// ends"): `acceptBy` passed while the worker could not reach its store, so
/// an answer sent in time may never have arrived. Nobody is responsible for
/// the silence: the silent and their parties go back to the pool, wait
/// kept, nobody cooled down. A proposal someone declined or left keeps its
/// fates.
pub fn excuse_silence(fates: &mut [Fate]) {
    let declined = fates.iter().any(|f| {
        matches!(f, Fate::Fails { code, .. } if *code == crate::Code::MatchDeclined.as_str())
            || matches!(f, Fate::AlreadyEnded { cooled: true })
    });
    if declined {
        return;
    }
    let silent = [
        crate::Code::AcceptanceTimeout.as_str(),
        crate::Code::PartyMemberDeclined.as_str(),
    ];
    for fate in fates {
        if matches!(fate, Fate::Fails { code, .. } if silent.contains(code)) {
            *fate = Fate::Requeued;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excused_timeout_requeues_the_silent_and_their_parties() {
        let members = [
            m("a", "pa", Answer::Accept),
            m("b", "pb", Answer::Pending),
            m("b2", "pb", Answer::Accept),
        ];
        let mut fates = close(&members, 10.0, 11.0).unwrap();
        assert!(matches!(fates[1], Fate::Fails { cooled: true, .. }));
        excuse_silence(&mut fates);
        assert_eq!(fates, vec![Fate::Requeued; 3]);
        // A decline is no timeout: its fates stand.
        let members = [m("a", "pa", Answer::Decline), m("b", "pb", Answer::Pending)];
        let mut fates = close(&members, 10.0, 11.0).unwrap();
        let before = fates.clone();
        excuse_silence(&mut fates);
        assert_eq!(fates, before);
    }

    fn m(ticket_id: &'static str, party: &'static str, answer: Answer) -> Member<'static> {
        Member {
            ticket_id,
            party,
            answer,
        }
    }

    fn mode(acceptance: &str) -> GameModeConfig {
        serde_json::from_str(&format!(
            r#"{{"name": "m", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
                "algorithm": {{"type": "fifo"}}, "acceptance": {acceptance}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn every_broken_acceptance_rule_is_listed() {
        let tier = crate::Tier::enterprise();
        let errors = crate::validate(
            &mode(r#"{"timeoutSeconds": 0, "declineCooldownSeconds": 3601}"#),
            &tier,
        )
        .unwrap_err();
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "acceptance.timeoutSeconds",
                "acceptance.declineCooldownSeconds"
            ]
        );
        let errors = crate::validate(&mode(r#"{"timeoutSeconds": 601}"#), &tier).unwrap_err();
        assert_eq!(errors.0.len(), 1);
        assert!(crate::validate(
            &mode(r#"{"timeoutSeconds": 600, "declineCooldownSeconds": 3600}"#),
            &tier
        )
        .is_ok());
        assert!(crate::validate(&mode(r#"{"timeoutSeconds": 1}"#), &tier).is_ok());
        assert!(
            serde_json::from_str::<Acceptance>(r#"{"timeoutSeconds": 5, "extra": 1}"#).is_err()
        );
    }

    #[test]
    fn open_until_everyone_accepts_or_the_deadline() {
        let members = [m("a", "a", Answer::Accept), m("b", "b", Answer::Pending)];
        assert_eq!(close(&members, 10.0, 9.9), None);
        let all = [m("a", "a", Answer::Accept), m("b", "b", Answer::Accept)];
        assert_eq!(close(&all, 10.0, 1.0), Some(vec![Fate::Matched; 2]));
    }

    #[test]
    fn a_party_members_decline_drops_the_whole_party_and_nobody_else() {
        let members = [
            m("a1", "pa", Answer::Decline),
            m("a2", "pa", Answer::Accept),
            m("b", "b", Answer::Accept),
            m("c", "c", Answer::Pending),
        ];
        let fates = close(&members, 10.0, 1.0).unwrap();
        assert_eq!(
            fates,
            vec![
                Fate::Fails {
                    code: crate::Code::MatchDeclined.as_str(),
                    cooled: true
                },
                Fate::Fails {
                    code: crate::Code::PartyMemberDeclined.as_str(),
                    cooled: false
                },
                Fate::Requeued,
                Fate::Requeued,
            ]
        );
    }

    #[test]
    fn the_deadline_fails_the_silent_and_requeues_who_accepted() {
        let members = [m("a", "a", Answer::Accept), m("b", "b", Answer::Pending)];
        let fates = close(&members, 10.0, 10.0).unwrap();
        assert_eq!(
            fates,
            vec![
                Fate::Requeued,
                Fate::Fails {
                    code: crate::Code::AcceptanceTimeout.as_str(),
                    cooled: true
                }
            ]
        );
    }

    #[test]
    fn a_search_ended_by_the_service_drops_nobody_from_the_pool() {
        let members = [
            m("a1", "pa", Answer::Failed),
            m("a2", "pa", Answer::Accept),
            m("b", "b", Answer::Pending),
        ];
        let fates = close(&members, 10.0, 1.0).unwrap();
        assert_eq!(
            fates,
            vec![
                Fate::AlreadyEnded { cooled: false },
                Fate::Requeued,
                Fate::Requeued
            ]
        );
    }

    #[test]
    fn a_search_failed_by_the_service_cools_nobody_down() {
        let members = [m("a", "a", Answer::Failed), m("b", "b", Answer::Accept)];
        let fates = close(&members, 10.0, 1.0).unwrap();
        assert_eq!(
            fates,
            vec![Fate::AlreadyEnded { cooled: false }, Fate::Requeued]
        );
    }
}
