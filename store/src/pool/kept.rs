//! The searches one snapshot of a mode parsed, kept for the next
//! (docs/performance.md, "One worker cycle"): a search's pool entry is
//! written once when its search starts and never changes after, so a
//! worker that reads the mode's pool every cycle parses only the entries
//! new since its last read. Kept beside them, the matching core's
//! [`matchplane_matchmaker::RuleCache`] finds the same searches again.

use matchplane_matchmaker::Search;
use rustc_hash::FxHashMap;

/// The searches of one mode's last snapshot, by ticket id, each with the
/// pool entry it was parsed from (see the module's comment). Start with
/// [`KeptSearches::default`] and hand the same value to every
/// [`super::PoolReads::snapshot_kept`] of the mode.
#[derive(Debug, Default)]
pub struct KeptSearches {
    by_ticket: FxHashMap<String, (Box<str>, Search)>,
}

impl KeptSearches {
    /// How many searches are kept.
    pub fn len(&self) -> usize {
        self.by_ticket.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.by_ticket.is_empty()
    }

    /// Takes the kept search of `ticket_id` when it was parsed from
    /// exactly `entry`.
    pub(crate) fn take(&mut self, ticket_id: &str, entry: &str) -> Option<Search> {
        match self.by_ticket.remove(ticket_id) {
            Some((kept, search)) if *kept == *entry => Some(search),
            _ => None,
        }
    }

    /// Keeps `search`, parsed from `entry`, for the next snapshot.
    pub(crate) fn keep(&mut self, ticket_id: String, entry: String, search: Search) {
        self.by_ticket
            .insert(ticket_id, (entry.into_boxed_str(), search));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_taken_only_for_the_entry_it_was_parsed_from() {
        let search = Search::solo("tkt_1", "p1", 1500.0, 10.0);
        let mut kept = KeptSearches::default();
        kept.keep("tkt_1".into(), r#"{"a":1}"#.into(), search.clone());
        assert_eq!(kept.take("tkt_1", r#"{"a":2}"#), None, "a changed entry");
        assert!(kept.is_empty(), "a changed entry's search is dropped");
        kept.keep("tkt_1".into(), r#"{"a":1}"#.into(), search.clone());
        assert_eq!(kept.take("tkt_2", r#"{"a":1}"#), None, "another ticket");
        assert_eq!(kept.take("tkt_1", r#"{"a":1}"#), Some(search));
    }
}
