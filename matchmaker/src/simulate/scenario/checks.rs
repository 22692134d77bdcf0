//! A scenario's events checked as tickets are (docs/simulate.md, "Inline
//! events"; docs/searching.md): every failure of every event at once, in
//! the words `POST …/tickets` answers the same values with.

use super::arrival_attributes::parse_arrival_attributes;
use super::event::{EventError, RawEvent};
use super::{as_arrival_field, errors_within, Event, Scenario};
use crate::codes::Code;
use crate::rules::Owner;
use crate::ticket::check_ticket;
use crate::validation::FieldError;

impl Scenario {
    /// The inline events `raw` (`arrivals[i]`), each checked: its shape,
    /// then, when `check` (the modes are valid), the ticket rules and its
    /// `attributes` against the modes. Every failure is pushed to
    /// `errors`, on `arrivals[i]…`; a `null` or wrongly typed attribute is
    /// one failure of its attribute among the others, as on a ticket.
    pub(super) fn inline_events(
        &self,
        raw: Vec<RawEvent>,
        check: bool,
        errors: &mut Vec<FieldError>,
    ) -> Vec<Event> {
        let mut events = Vec::with_capacity(raw.len());
        for (i, e) in raw.into_iter().enumerate() {
            let failed = match e.into_event(self.game_mode.regions.as_ref()) {
                Ok((mut event, written)) if check => {
                    let mut failed = self.event_failures(&event, false, false);
                    if let Event::Arrival {
                        attributes,
                        player_id,
                        party,
                        ..
                    } = &mut event
                    {
                        let (values, bad) = parse_arrival_attributes(
                            &self.game_mode,
                            self.compare.as_ref(),
                            written,
                            Owner::new(player_id, party.as_ref()),
                        );
                        *attributes = values;
                        failed.extend(bad);
                    }
                    events.push(event);
                    failed
                }
                Ok(_) => Vec::new(),
                Err(EventError::Shape(message)) => {
                    vec![FieldError::new("", Code::ValidationError, message)]
                }
                Err(EventError::Fields(fields)) => fields,
            };
            errors.extend(errors_within(&format!("arrivals[{i}]"), failed));
        }
        events
    }

    /// Every failure of `event` but its attributes' (which
    /// [`super::arrival_attributes`] checks), each on a path inside it: its
    /// `at`, and an arrival's ticket rules (`csv`: named by a CSV's columns,
    /// see [`crate::simulate::arrivals_csv`]). A `recorded` arrival (a
    /// CSV's row, a mode's recording) is refused only for values no config
    /// takes: what the mode's config rules out ([`config_rules_out`]) is
    /// left to the run, which ends it at its first cycle with its code, on
    /// either side of a comparison (docs/simulate.md, "`arrivalsCsv`").
    pub(super) fn event_failures(
        &self,
        event: &Event,
        csv: bool,
        recorded: bool,
    ) -> Vec<FieldError> {
        let mut failed = Vec::new();
        if !event.at().is_finite() || event.at() < 0.0 {
            failed.push(FieldError::new(
                "at",
                Code::ValidationError,
                "at is a number of seconds >= 0",
            ));
        }
        if let Event::Arrival {
            player_id,
            mmr,
            party,
            latencies,
            ..
        } = event
        {
            // Every failure of the arrival, as a ticket lists them.
            failed.extend(
                [
                    check_ticket(&self.game_mode, player_id, party.as_ref()),
                    crate::attributes::check_matching(&self.game_mode, *mmr, latencies.as_ref()),
                ]
                .into_iter()
                .filter_map(Result::err)
                .filter(|e| !(recorded && config_rules_out(e.code)))
                .map(as_arrival_field)
                .map(|e| crate::simulate::arrivals_csv::as_column(e, csv)),
            );
        }
        failed
    }
}

/// Whether a ticket rule's failure `code` is the mode's config ruling a
/// search out (another config may take it) rather than a value no config
/// takes (`VALIDATION_ERROR`, `INVALID_PARTY`). A run ends such a search at
/// its first cycle with the code, as the server's re-check ends a live
/// search a changed config rules out (docs/game-modes.md, "Changing a
/// mode"): the one rule both sides of a comparison and a replay follow.
pub(crate) fn config_rules_out(code: Code) -> bool {
    matches!(
        code,
        Code::MmrRequired
            | Code::MmrOutOfRange
            | Code::PartiesNotEnabled
            | Code::PartyTooLarge
            | Code::LatenciesRequired
    )
}
