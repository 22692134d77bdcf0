//! The players a scenario's inline `cancel` and `leave` events name
//! (docs/simulate.md, "Inline events"): each must have arrived before the
//! event, in the order the events are applied (by `at`, then as written);
//! otherwise the event would do nothing, unseen, and a misspelt id is said,
//! not dropped. A recording's cancel rows are not checked: its window may
//! begin after a search it ends had started.

use super::{Event, ScenarioError};
use crate::codes::Code;
use crate::validation::FieldError;
use std::collections::HashSet;

/// Where an event comes from, for [`unarrived`].
#[derive(Clone, Copy)]
enum Origin {
    /// The scenario's `arrivals`, numbered as written (`arrivals[i]`).
    Inline(usize),
    /// The scenario's `arrivals`, sorted already (their order as written
    /// lost): named by kind and time.
    InlineSorted,
    /// Arrivals added later (a CSV, a replay): their arrivals count, their
    /// cancels are not checked.
    Added,
}

/// The players an event names, each with the field naming it inside the
/// event (`cancel`, `leave[j]`).
fn named(event: &Event) -> Vec<(String, &str)> {
    match event {
        Event::Cancel { player_id, .. } => vec![("cancel".to_owned(), player_id.as_str())],
        Event::Leave { players, .. } => players
            .iter()
            .enumerate()
            .map(|(j, p)| (format!("leave[{j}]"), p.as_str()))
            .collect(),
        Event::Arrival { .. } | Event::Hold { .. } => Vec::new(),
    }
}

/// Every player an inline cancel or leave of `events` names without an
/// arrival applied before it: `VALIDATION_ERROR` on `arrivals[i].cancel`
/// or `arrivals[i].leave[j]` (on `arrivals` for [`Origin::InlineSorted`]).
/// `events` are taken in the order they are applied: a stable sort by `at`
/// (an event whose `at` is not a number is refused elsewhere).
fn unarrived(events: &[(Origin, &Event)]) -> Vec<FieldError> {
    let mut order: Vec<&(Origin, &Event)> = events.iter().collect();
    order.sort_by(|a, b| a.1.at().total_cmp(&b.1.at()));
    let mut arrived: HashSet<&str> = HashSet::new();
    let mut errors = Vec::new();
    for (origin, event) in order {
        if let Event::Arrival { player_id, .. } = event {
            arrived.insert(player_id.as_str());
            continue;
        }
        if matches!(origin, Origin::Added) {
            continue;
        }
        let kind = if matches!(event, Event::Cancel { .. }) {
            "cancel"
        } else {
            "leave"
        };
        for (inner, player) in named(event) {
            if arrived.contains(player) {
                continue;
            }
            let (field, message) = match origin {
                Origin::Inline(i) => (
                    format!("arrivals[{i}].{inner}"),
                    format!(
                        "no arrival of {player:?} comes before this {kind}: it names a player of the scenario's arrivals"
                    ),
                ),
                Origin::InlineSorted | Origin::Added => (
                    "arrivals".to_owned(),
                    format!(
                        "the {kind} at {} names {player:?}, with no arrival before it: it names a player of the scenario's arrivals",
                        event.at()
                    ),
                ),
            };
            errors.push(FieldError::new(field, Code::ValidationError, message));
        }
    }
    errors
}

/// [`unarrived`] over a scenario's inline `events`, as written.
pub(super) fn unarrived_inline(events: &[Event]) -> Vec<FieldError> {
    let inline: Vec<(Origin, &Event)> = events
        .iter()
        .enumerate()
        .map(|(i, e)| (Origin::Inline(i), e))
        .collect();
    unarrived(&inline)
}

/// [`unarrived`] over a scenario's inline `events` (sorted already) with
/// the arrivals of `added` (a CSV's rows) among them.
pub(super) fn unarrived_with_added(events: &[Event], added: &[Event]) -> Vec<FieldError> {
    let merged: Vec<(Origin, &Event)> = events
        .iter()
        .map(|e| (Origin::InlineSorted, e))
        .chain(added.iter().map(|e| (Origin::Added, e)))
        .collect();
    unarrived(&merged)
}

/// `added` failing with `more` too: every failure at once.
///
/// # Errors
/// `added`'s failures then `more`, or `more` alone when not empty.
pub(super) fn also_failing(
    added: Result<(), ScenarioError>,
    more: Vec<FieldError>,
) -> Result<(), ScenarioError> {
    match added {
        Err(ScenarioError(mut failed)) => {
            failed.extend(more);
            Err(ScenarioError(failed))
        }
        Ok(()) if more.is_empty() => Ok(()),
        Ok(()) => Err(ScenarioError(more)),
    }
}
