//! The one vocabulary of the search-end metrics, shared by the API and the
//! worker (each counts the ends it makes, under the same family names, so
//! a dashboard sums them across processes): the families' names, how a
//! search ended, and the closed set of codes a failed search is counted
//! under. See docs/operations.md, 'Metrics'.
//!
//! The label values are closed sets: [`failure_label`] maps any code
//! outside [`FAILURE_CODES`] to `OTHER`, so no caller can grow a family.

use matchplane_matchmaker::Code;

/// Counter: searches ended, by `outcome` ([`OUTCOMES`]).
pub const SEARCHES_ENDED: &str = "matchplane_searches_ended_total";
/// Counter: searches ended `failed`, by `code` ([`FAILURE_CODES`]).
pub const SEARCHES_FAILED: &str = "matchplane_searches_failed_total";

/// Outcome: the search was matched (a claim took it into a match, or its
/// proposal was made).
pub const MATCHED: &str = "matched";
/// Outcome: its ticket's time ran out, its REST polls lapsed or its socket
/// stopped answering Pings.
pub const EXPIRED: &str = "expired";
/// Outcome: the client or the studio cancelled it.
pub const CANCELLED: &str = "cancelled";
/// Outcome: the service ended it with a code ([`SEARCHES_FAILED`] says
/// which).
pub const FAILED: &str = "failed";

/// Every `outcome` of [`SEARCHES_ENDED`].
pub const OUTCOMES: [&str; 4] = [MATCHED, EXPIRED, CANCELLED, FAILED];

/// The `code` a failure outside the known ones is counted under.
pub const OTHER: &str = "OTHER";

/// Every `code` of [`SEARCHES_FAILED`]: the codes the cycle's re-check of a
/// changed config fails a search with, a deleted or disabled mode's, a REST
/// search's whose mode now needs a socket, acceptance's timeout, and
/// [`OTHER`].
pub const FAILURE_CODES: [&str; 13] = [
    Code::GameModeDisabled.as_str(),
    Code::PlayerAlreadySearching.as_str(),
    Code::ValidationError.as_str(),
    Code::MmrRequired.as_str(),
    Code::MmrOutOfRange.as_str(),
    Code::PartiesNotEnabled.as_str(),
    Code::PartyTooLarge.as_str(),
    Code::InvalidParty.as_str(),
    Code::LatenciesRequired.as_str(),
    Code::PingRequiresWebsocket.as_str(),
    Code::AcceptanceTimeout.as_str(),
    Code::Internal.as_str(),
    OTHER,
];

/// The label `code` is counted under: itself when in [`FAILURE_CODES`],
/// else [`OTHER`].
pub fn failure_label(code: &str) -> &'static str {
    FAILURE_CODES
        .iter()
        .find(|known| **known == code)
        .copied()
        .unwrap_or(OTHER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use matchplane_matchmaker::Code;

    #[test]
    fn every_code_the_recheck_fails_with_has_its_own_label() {
        for code in [
            Code::GameModeDisabled,
            Code::PlayerAlreadySearching,
            Code::ValidationError,
            Code::MmrRequired,
            Code::MmrOutOfRange,
            Code::PartiesNotEnabled,
            Code::PartyTooLarge,
            Code::InvalidParty,
            Code::LatenciesRequired,
            Code::PingRequiresWebsocket,
        ] {
            assert_eq!(failure_label(code.as_str()), code.as_str());
        }
        assert_eq!(failure_label("ACCEPTANCE_TIMEOUT"), "ACCEPTANCE_TIMEOUT");
        assert_eq!(failure_label("made up"), OTHER);
    }
}
