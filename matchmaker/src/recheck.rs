//! Re-check of a pool against the mode's current config (docs/game-modes.md, "Config
//! changes"), run at the start of every cycle.
//!
//! A search the config now rules out fails with its documented code, and so does
//! every other member of its party: a party that can never be complete
//! must not leave its other members waiting forever.

use crate::codes::Code;
use crate::config::GameModeConfig;
use crate::rules::parse::recheck_declared_row;
use crate::rules::search_columns::{RuleSpecs, SearchValues};
use crate::rules::AttributeValue;
use crate::search::Search;
use crate::ticket::check_ticket;
use arcstr::ArcStr;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// A search the cycle ended with an error (docs/game-modes.md, docs/searching.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedSearch {
    /// The search's ticket.
    pub ticket_id: ArcStr,
    /// Its player.
    pub player_id: ArcStr,
    /// Why: `GAME_MODE_DISABLED`, `PARTY_TOO_LARGE`, `PARTIES_NOT_ENABLED`,
    /// `MMR_REQUIRED`, `MMR_OUT_OF_RANGE`, `INVALID_PARTY`,
    /// `PLAYER_ALREADY_SEARCHING`, `LATENCIES_REQUIRED`, the declared
    /// attributes' codes, or `PARTY_INCOMPLETE` (a party that stayed
    /// incomplete, [`crate::party_timeout`]).
    pub code: Code,
    /// Human-readable detail.
    pub message: String,
}

/// Splits `pool` into the indices of searches still valid under `config`
/// and the searches that fail. Order of `pool` is kept for the valid ones.
pub fn recheck(config: &GameModeConfig, pool: &[Search]) -> (Vec<usize>, Vec<FailedSearch>) {
    let (valid, failed, _) = recheck_reading(config, pool, None);
    (valid, failed)
}

/// [`recheck`], reading as it goes every search's own values of the
/// mode's rules (`specs`, docs/rules.md "Cost") for the cycle's rule
/// table: each search's attributes are read once per cycle. Every search
/// whose values pass is read, member of a candidate or not (the table
/// reads only its candidates' searches).
pub fn recheck_reading<'v>(
    config: &'v GameModeConfig,
    pool: &'v [Search],
    specs: Option<&'v RuleSpecs<'v>>,
) -> (Vec<usize>, Vec<FailedSearch>, Option<SearchValues<'v>>) {
    let mut failed: Vec<FailedSearch> = Vec::new();
    let mut read = specs.map(|s| (s, SearchValues::new(config, s, pool.len())));
    let mut row: Row<'v> = SmallVec::new();
    if !config.enabled {
        failed.extend(pool.iter().map(|s| FailedSearch {
            ticket_id: s.ticket_id.clone(),
            player_id: s.player_id.clone(),
            code: Code::GameModeDisabled,
            message: format!("game mode {} is disabled", config.name),
        }));
        return (Vec::new(), failed, read.map(|(_, v)| v));
    }

    // First search of each player wins; a later duplicate is an error the
    // API should have prevented, never a second seat for the same player.
    let mut first_of_player: FxHashMap<&str, usize> = FxHashMap::default();
    first_of_player.reserve(pool.len());
    // First members list seen for each party id.
    let mut party_members: FxHashMap<&str, &[String]> = FxHashMap::default();
    let mut verdict: Vec<Option<(Code, String)>> = vec![None; pool.len()];
    let check = SearchCheck::new(config);

    for (i, search) in pool.iter().enumerate() {
        if first_of_player.insert(&search.player_id, i).is_some() {
            verdict[i] = Some((
                Code::PlayerAlreadySearching,
                "the player already has a live search in this mode".into(),
            ));
            continue;
        }
        let checked = check.reading(search, &mut row, |row| {
            if let Some((specs, values)) = read.as_mut() {
                values.push(specs, i, row, &search.player_id);
            }
        });
        if let Err(e) = checked {
            verdict[i] = Some((e.code, e.message));
            continue;
        }
        if let Some(party) = &search.party {
            let known = party_members.entry(&party.id).or_insert(&party.members);
            if *known != party.members.as_slice() {
                verdict[i] = Some((
                    Code::InvalidParty,
                    format!(
                        "party {} is listed with different members by its tickets",
                        party.id
                    ),
                ));
            }
        }
    }

    // A party whose members sent different values of a `string`
    // attribute, or share too few values for an `intersect` rule, can
    // never be matched (docs/rules.md#parties): it fails now.
    let mut party_failure: FxHashMap<&str, (Code, String)> = party_values_differ(config, pool);
    // A failed member fails its whole party, with the member's code; the
    // others' message names the member (a value it quotes is not theirs).
    for (i, search) in pool.iter().enumerate() {
        if let (Some((code, message)), Some(party)) = (&verdict[i], &search.party) {
            // A party listed with different members is the party's fault,
            // not this member's: its message names nobody.
            let named = match code {
                Code::PlayerAlreadySearching => continue,
                Code::InvalidParty => message.clone(),
                _ => format!("party member {}: {message}", search.player_id),
            };
            party_failure
                .entry(party.id.as_str())
                .or_insert_with(|| (*code, named));
        }
    }
    let mut valid = Vec::with_capacity(pool.len());
    for (i, search) in pool.iter().enumerate() {
        let party_verdict = search
            .party
            .as_ref()
            .and_then(|p| party_failure.get(p.id.as_str()));
        match verdict[i].clone().or_else(|| party_verdict.cloned()) {
            Some((code, message)) => {
                failed.push(FailedSearch {
                    ticket_id: search.ticket_id.clone(),
                    player_id: search.player_id.clone(),
                    code,
                    message,
                });
            }
            None => valid.push(i),
        }
    }
    (valid, failed, read.map(|(_, v)| v))
}

/// A search's values of the declared attributes, in name order.
type Row<'s> = SmallVec<[Option<&'s AttributeValue>; 8]>;

/// What the re-check asks of each search on its own, whatever else waits
/// (docs/game-modes.md, "Changing a mode"): its player and party under
/// `parties` (`check_ticket`), `mmr` and `latencies` under the algorithm
/// and `regions`, its declared values under the declarations and the
/// `intersect` rules' floors, its role list under `composition`. Compiled
/// once per config. The cycle runs it over its pool ([`recheck`]); a
/// search start runs it over the ticket's search, so a ticket the config
/// now rules out is refused with the code the cycle would fail it with.
/// (What depends on the other searches, a duplicate player or a party
/// whose members disagree, is the cycle's alone.)
pub struct SearchCheck<'c> {
    config: &'c GameModeConfig,
    /// The declarations in name order as one array, walked beside each
    /// search's values (a tree's walk cost more than the check itself).
    declared: Option<Vec<(&'c String, &'c crate::rules::Declaration)>>,
    /// Sets too small for an `intersect` rule as it is now.
    floors: crate::rules::reachable::Floors<'c>,
    /// The composition compiled once for every search's role list.
    role_lists: Option<crate::roles::RoleLists<'c>>,
}

impl<'c> SearchCheck<'c> {
    /// The checks of `config`.
    pub fn new(config: &'c GameModeConfig) -> Self {
        Self {
            config,
            declared: config.attributes.as_ref().map(|d| d.iter().collect()),
            floors: crate::rules::reachable::Floors::of(config),
            role_lists: crate::roles::RoleLists::of(config),
        }
    }

    /// Checks `search`.
    ///
    /// # Errors
    /// The first rule it fails, with the code a cycle fails it with
    /// (`PARTIES_NOT_ENABLED`, `PARTY_TOO_LARGE`, `INVALID_PARTY`,
    /// `MMR_REQUIRED`, `MMR_OUT_OF_RANGE`, `LATENCIES_REQUIRED`,
    /// `ATTRIBUTE_REQUIRED`, `ATTRIBUTE_NOT_ALLOWED`, `VALIDATION_ERROR`)
    /// and the field it names.
    pub fn check(&self, search: &Search) -> Result<(), crate::validation::FieldError> {
        self.reading(search, &mut SmallVec::new(), |_| {})
    }

    /// [`SearchCheck::check`], handing `read` the search's values of the
    /// declarations (in name order) once they pass, before its role list
    /// is checked; `row` is the buffer they are read into.
    fn reading<'s>(
        &self,
        search: &'s Search,
        row: &mut Row<'s>,
        read: impl FnOnce(&[Option<&'s AttributeValue>]),
    ) -> Result<(), crate::validation::FieldError>
    where
        'c: 's,
    {
        let config = self.config;
        check_ticket(config, &search.player_id, search.party.as_ref())?;
        crate::attributes::check_matching(config, search.mmr, search.latencies.as_ref())?;
        if let Some(declarations) = self.declared.as_ref() {
            row.clear();
            let declarations = declarations.iter().copied();
            recheck_declared_row(&search.attributes, declarations, &mut |v| row.push(v))?;
            self.floors.check_row(row)?;
            read(row);
        }
        // A role list the changed composition refuses, as any value the
        // changed declarations refuse.
        let Some(lists) = self.role_lists.as_ref() else {
            return Ok(());
        };
        lists.check(config, &search.attributes).map_err(|e| {
            // Worded as the other values the changed declarations refuse.
            let name = e.field.strip_prefix("attributes.").unwrap_or(&e.field);
            let message = format!(
                "the game mode's declarations no longer allow attribute {name}: {}",
                e.message
            );
            crate::validation::FieldError::new(e.field.clone(), Code::AttributeNotAllowed, message)
        })
    }
}

/// `PARTY_ATTRIBUTES_DIFFER` for each party whose searching members sent
/// different values of a declared `string` attribute, or share too few
/// values for an `intersect` rule ([`party_sets_too_small`]): either way
/// the party could never be matched.
fn party_values_differ<'a>(
    config: &'a GameModeConfig,
    pool: &'a [Search],
) -> FxHashMap<&'a str, (Code, String)> {
    let mut out = FxHashMap::default();
    let Some(declarations) = &config.attributes else {
        return out;
    };
    party_sets_too_small(config, declarations, pool, &mut out);
    party_roles_unseatable(config, pool, &mut out);
    let strings: Vec<(&String, &crate::rules::Declaration)> = declarations
        .iter()
        .filter(|(_, d)| matches!(d, crate::rules::Declaration::String { .. }))
        .collect();
    if strings.is_empty() {
        return out;
    }
    let mut first: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, search) in pool.iter().enumerate() {
        let Some(party) = search.party.as_ref().filter(|p| p.members.len() > 1) else {
            continue;
        };
        let j = *first.entry(party.id.as_str()).or_insert(i);
        if j == i || out.contains_key(party.id.as_str()) {
            continue;
        }
        for (name, declaration) in &strings {
            let a = crate::rules::value::effective(declaration, pool[j].attributes.get(*name));
            let b = crate::rules::value::effective(declaration, search.attributes.get(*name));
            if a != b {
                out.insert(
                    party.id.as_str(),
                    (
                        Code::PartyAttributesDiffer,
                        format!(
                            "party {} sent different values of attribute {name}: its members must agree",
                            party.id
                        ),
                    ),
                );
                break;
            }
        }
    }
    out
}

/// Adds to `out` each party whose searching members' role lists no step
/// of the composition can seat together (docs/rules.md, "Parties"): three
/// tank players kept together where a team has at most two tank seats.
fn party_roles_unseatable<'a>(
    config: &'a GameModeConfig,
    pool: &'a [Search],
    out: &mut FxHashMap<&'a str, (Code, String)>,
) {
    let (Some(c), Some(lists)) = (&config.composition, crate::roles::RoleLists::of(config)) else {
        return;
    };
    let mut masks: FxHashMap<&str, SmallVec<[u64; 4]>> = FxHashMap::default();
    for search in pool {
        let Some(party) = search.party.as_ref().filter(|p| p.members.len() > 1) else {
            continue;
        };
        let mask = crate::rules::value::ticket_set(config, &search.attributes, &c.attribute)
            .map_or(0, |items| lists.mask(items));
        masks.entry(party.id.as_str()).or_default().push(mask);
    }
    for (party, masks) in masks {
        if !out.contains_key(party) && !lists.ever_seated(&masks) {
            out.insert(
                party,
                (
                    Code::PartyAttributesDiffer,
                    format!(
                        "party {party}: no step of composition seats all its members together by their `{}` lists (for example, more of them list only one role than a team has seats of it)",
                        c.attribute
                    ),
                ),
            );
        }
    }
}

/// Adds to `out` each party whose searching members share fewer values of
/// an `intersect` rule's set (`party` `intersection`) than the lowest
/// `minOverlap` the rule relaxes to (docs/rules.md#parties).
fn party_sets_too_small<'a>(
    config: &'a GameModeConfig,
    declarations: &'a crate::rules::Declarations,
    pool: &'a [Search],
    out: &mut FxHashMap<&'a str, (Code, String)>,
) {
    use crate::rules::declare::SetParty;
    use crate::rules::Declaration;
    // Each such rule: its attribute, declaration, lowest `minOverlap` and name.
    let floors: Vec<(&str, &Declaration, u32, &str)> =
        crate::rules::reachable::intersect_floors(config)
            .filter_map(|(attribute, lowest, rule)| {
                let d = declarations.get(attribute)?;
                matches!(
                    d,
                    Declaration::StringSet {
                        party: SetParty::Intersection,
                        ..
                    }
                )
                .then_some((attribute, d, lowest, rule))
            })
            .collect();
    if floors.is_empty() {
        return;
    }
    // Per party, each rule's values every member so far shares (bits of
    // the declared values).
    let mut shared: FxHashMap<&str, Vec<u64>> = FxHashMap::default();
    for search in pool {
        let Some(party) = search.party.as_ref().filter(|p| p.members.len() > 1) else {
            continue;
        };
        if out.contains_key(party.id.as_str()) {
            continue;
        }
        let bits = shared
            .entry(party.id.as_str())
            .or_insert_with(|| vec![u64::MAX; floors.len()]);
        for ((attribute, declaration, lowest, rule), bits) in floors.iter().zip(bits) {
            // A member without a value fails on its own (`ATTRIBUTE_REQUIRED`).
            let Some(own) =
                crate::rules::value::effective(declaration, search.attributes.get(*attribute))
            else {
                continue;
            };
            let names = declaration.values().unwrap_or_default();
            *bits &= crate::rules::table::set_bits(names, Some(&own));
            let count = bits.count_ones();
            if count < *lowest {
                let message = format!(
                    "party {}'s members share {count} value(s) of attribute {attribute}, \
                     but rule {rule} needs at least {lowest}: its members must share them",
                    party.id
                );
                out.insert(party.id.as_str(), (Code::PartyAttributesDiffer, message));
                break;
            }
        }
    }
}
