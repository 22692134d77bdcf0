//! The virtual-time loop of docs/simulate.md.

use super::proposals::SimAnswer;
use super::report::{Ended, Report, SimulatedMatch, SimulatedPlayer, Stats};
use super::scenario::{Event, Scenario};
use super::stats::{Percentiles, Spread};
use crate::acceptance::Fate;
use crate::cycle::ProposedMatch;
use crate::search::Search;
use arcstr::ArcStr;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashSet};

/// Runs `scenario`: cycles at `t = k * matchmakingCycleDurationSeconds`,
/// k = 1, 2, … while `t <= until`; events with `at <= t` are applied before
/// that cycle in time order; a search older than `ticketTtlSeconds` expires.
/// Deterministic: the same scenario gives the same report.
pub fn run(scenario: &Scenario) -> Report {
    run_inner(scenario, &mut || true, true).0
}

/// The simulation stopped before `until` because its caller's budget ran
/// out ([`run_bounded`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stopped {
    /// Virtual time of the last cycle run (seconds).
    pub at: f64,
}

/// [`run`], asking `keep_going` before each cycle: the first `false` stops
/// the run (a server bounds a simulation's cost with it; the core itself
/// reads no clock).
///
/// # Errors
/// [`Stopped`] when `keep_going` said `false` before the last cycle.
pub fn run_bounded(
    scenario: &Scenario,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<Report, Stopped> {
    match run_inner(scenario, keep_going, true) {
        (report, None) => Ok(report),
        (_, Some(stopped)) => Err(stopped),
    }
}

/// The run; `skip_idle` jumps over the cycles that have nothing to do (an
/// empty pool, nothing open), which gives the same report as running them.
fn run_inner(
    scenario: &Scenario,
    keep_going: &mut dyn FnMut() -> bool,
    skip_idle: bool,
) -> (Report, Option<Stopped>) {
    let config = &scenario.game_mode;
    let step = config.matchmaking_cycle_duration_seconds;
    let ttl = f64::from(config.ticket_ttl_seconds);
    let mut rng = ChaCha8Rng::seed_from_u64(scenario.seed);
    let mut pool: Vec<Search> = Vec::new();
    let mut incomplete = crate::party_timeout::IncompleteParties::new();
    let mut next_event = 0;
    let mut tickets = 0u64;
    let mut refused = 0;
    let mut matches = Vec::new();
    let mut waits = Vec::new();
    let mut roles = super::roles::RoleTally::default();
    let mut ended = Vec::new();
    // When each search that expired or failed unmatched was queued (not
    // a player's own cancel or decline).
    let mut stranded: Vec<f64> = Vec::new();
    let mut failed_now: HashSet<ArcStr> = HashSet::new();
    let mut reasons = BTreeMap::new();
    // Each arrival's `data`, passed to its seat in the match.
    let mut data_of: std::collections::HashMap<String, serde_json::Value> =
        std::collections::HashMap::new();

    let mut stopped = None;
    let mut backfiller = super::backfills::Backfiller::default();
    // With `acceptance`: the open proposals, and each search's answer.
    let mut proposer = super::proposals::Proposer::default();
    let mut answers: std::collections::HashMap<ArcStr, SimAnswer> =
        std::collections::HashMap::new();

    // Whether the mode's matching is held (`hold` events).
    let mut held = false;
    let mut k = 1u64;
    loop {
        // Nothing waits, nothing is open: the cycles before the next
        // event's would change nothing, so they are not run (a replay of a
        // week with a few hours of traffic runs those hours' cycles).
        if skip_idle
            && step > 0.0
            && pool.is_empty()
            && incomplete.is_empty()
            && proposer.is_idle()
            && !backfiller.any_open()
        {
            match scenario.events.get(next_event) {
                Some(ev) => k = k.max(first_cycle_at_or_after(ev.at(), step)),
                None => break,
            }
        }
        let t = k as f64 * step;
        if step <= 0.0 || t > scenario.until + 1e-9 {
            break;
        }
        if !keep_going() {
            stopped = Some(Stopped { at: t - step });
            break;
        }
        k += 1;
        // The players searching, for this tick's arrivals to ask in one
        // lookup (a scan of the pool per arrival made a long run
        // quadratic); built only when an event is due.
        let mut searching: Option<rustc_hash::FxHashSet<ArcStr>> = None;
        while let Some(ev) = scenario.events.get(next_event).filter(|e| e.at() <= t) {
            next_event += 1;
            let searching =
                searching.get_or_insert_with(|| pool.iter().map(|s| s.player_id.clone()).collect());
            match ev {
                Event::Arrival {
                    at,
                    player_id,
                    mmr,
                    ping_ms,
                    party,
                    latencies,
                    data,
                    answer,
                    attributes,
                } => {
                    if searching.contains(player_id.as_str())
                        || proposer.holds(player_id)
                        || proposer.refuses(player_id, *at)
                    {
                        refused += 1;
                        continue;
                    }
                    tickets += 1;
                    let ticket_id: ArcStr = format!("tkt_{tickets}").into();
                    if let Some(answer) = answer {
                        answers.insert(ticket_id.clone(), *answer);
                    }
                    let player: ArcStr = player_id.as_str().into();
                    searching.insert(player.clone());
                    pool.push(Search {
                        ticket_id,
                        player_id: player,
                        party: party.clone(),
                        mmr: *mmr,
                        ping_ms: *ping_ms,
                        latencies: latencies.clone(),
                        queued_at: *at,
                        attributes: std::sync::Arc::new(attributes.clone()),
                    });
                    if let Some(d) = data {
                        data_of.insert(player_id.clone(), d.clone());
                    }
                }
                Event::Cancel { at, player_id } => {
                    if !proposer.cancel(player_id, *at) {
                        pool.retain(|s| s.player_id != *player_id);
                        searching.remove(player_id.as_str());
                    }
                }
                Event::Leave { at, players } => backfiller.leave(config, players, *at),
                Event::Hold { held: now_held, .. } => held = *now_held,
            }
        }
        for closed in proposer.close_due(t) {
            let mut made = false;
            // Members matched, by ticket: when each was queued.
            let seated: std::collections::HashMap<ArcStr, f64> = closed
                .members
                .iter()
                .filter(|(_, fate)| matches!(fate, Fate::Matched))
                .map(|(s, _)| (s.ticket_id.clone(), s.queued_at))
                .collect();
            for (search, fate) in closed.members {
                match fate {
                    Fate::Matched => {
                        waits.push(closed.at - search.queued_at);
                        made = true;
                    }
                    Fate::Requeued => pool.push(search),
                    // A decline (or a party member's) is the players'
                    // own end, as a cancel: not counted as stranded.
                    Fate::Fails { code, .. } => ended.push(Ended {
                        player_id: search.player_id.to_string(),
                        at: closed.at,
                        code: code.into(),
                        message: None,
                    }),
                    Fate::AlreadyEnded { .. } => {}
                }
            }
            if made {
                roles.matched(&closed.proposed, |ticket, _| {
                    seated.get(ticket).map(|queued| closed.at - queued)
                });
                matches.push(simulated(closed.at, &closed.proposed, &data_of));
                backfiller.matched(&closed.proposed);
            }
        }
        pool.retain(|s| {
            let alive = t - s.queued_at < ttl;
            if !alive {
                stranded.push(s.queued_at);
                ended.push(Ended {
                    player_id: s.player_id.to_string(),
                    at: t,
                    code: "EXPIRED".into(),
                    message: None,
                });
            }
            alive
        });

        let open = backfiller.open_at(t);
        // A held mode's cycle forms nothing, fills its backfills
        // (docs/game-modes.md#holding-matching).
        let both = if held {
            crate::hold::run_held_cycle_with_backfills(config, &pool, &open, t)
        } else {
            crate::backfill::run_cycle_with_backfills(config, &pool, &open, t, &mut rng)
        };
        let mut outcome = both.cycle;
        // A party left incomplete fails after its timeout, as on the worker.
        incomplete.settle(config, t, &mut outcome);
        let mut gone: HashSet<ArcStr> = HashSet::new();
        for fill in &both.fills {
            for team in &fill.teams {
                for p in &team.players {
                    waits.push(p.wait_seconds);
                    gone.insert(p.ticket_id.clone());
                }
            }
        }
        backfiller.filled(&both.fills, t);
        // A proposal's members by ticket: one lookup each, not a scan of
        // the pool (which may hold many thousands) per member.
        let mut by_ticket: rustc_hash::FxHashMap<&str, &Search> = Default::default();
        if config.acceptance.is_some() && !outcome.matches.is_empty() {
            for s in &pool {
                by_ticket.entry(s.ticket_id.as_str()).or_insert(s);
            }
        }
        for m in &outcome.matches {
            if let Some(acceptance) = &config.acceptance {
                let members = m
                    .ticket_ids()
                    .into_iter()
                    .filter_map(|id| by_ticket.get(id).copied())
                    .map(|s| {
                        (
                            s.clone(),
                            answers.get(&s.ticket_id).copied().unwrap_or_default(),
                        )
                    })
                    .collect();
                proposer.propose(acceptance, m.clone(), members, t);
                for team in &m.teams {
                    gone.extend(team.players.iter().map(|p| p.ticket_id.clone()));
                }
                continue;
            }
            for team in &m.teams {
                for p in &team.players {
                    waits.push(p.wait_seconds);
                    gone.insert(p.ticket_id.clone());
                }
            }
            roles.matched(m, |_, wait| Some(wait));
            matches.push(simulated(t, m, &data_of));
            backfiller.matched(m);
        }
        for f in &outcome.failed {
            gone.insert(f.ticket_id.clone());
            failed_now.insert(f.ticket_id.clone());
            ended.push(Ended {
                player_id: f.player_id.to_string(),
                at: t,
                code: f.code.as_str().into(),
                message: Some(f.message.clone()),
            });
        }
        pool.retain(|s| {
            if failed_now.contains(&s.ticket_id) {
                stranded.push(s.queued_at);
            }
            !gone.contains(&s.ticket_id)
        });
        failed_now.clear();
        reasons = outcome
            .waiting
            .into_iter()
            .map(|w| (w.player_id.to_string(), w.status()))
            .collect();
    }

    // Searches still held by open proposals are still waiting.
    let (proposals, acceptance, held) = proposer.finish();
    pool.extend(held);
    // A match without MMRs has no spread: it is left out, not counted 0.
    let spreads: Vec<f64> = matches
        .iter()
        .filter_map(|m: &SimulatedMatch| m.mmr_spread)
        .collect();
    let imbalances: Vec<f64> = matches.iter().filter_map(|m| m.team_imbalance).collect();
    let unmatched: Vec<String> = pool.iter().map(|s| s.player_id.to_string()).collect();
    let waiting: HashSet<&String> = unmatched.iter().collect();
    reasons.retain(|player, _| waiting.contains(player));
    // Every player the run did not serve counts until its end: those
    // still waiting, and those whose search expired or failed unmatched (a
    // config that lets players expire strands them, and must not look
    // faster for it). A player's own cancel is not counted.
    let mut all_waits = waits.clone();
    all_waits.extend(
        pool.iter()
            .map(|s| s.queued_at)
            .chain(stranded.iter().copied())
            .map(|queued_at| (scenario.until - queued_at).max(0.0)),
    );
    let (backfills, backfill_stats) = backfiller.finish();
    let report = Report {
        backfills,
        stats: Stats {
            backfill: (backfill_stats.backfills > 0).then_some(backfill_stats),
            matches: matches.len(),
            matched_players: waits.len(),
            still_waiting: pool.len(),
            wait_seconds: Percentiles::of(&waits),
            wait_seconds_all: Percentiles::of(&all_waits),
            mmr_spread: Spread::of(&spreads),
            team_imbalance: Spread::of(&imbalances),
            acceptance: config.acceptance.is_some().then_some(acceptance),
            roles: roles.finish(),
        },
        proposals,
        matches,
        unmatched,
        unmatched_reasons: reasons,
        ended,
        refused_arrivals: refused,
        // Arrivals left after the last cycle (docs/simulate.md, "Timing").
        not_simulated: scenario.events[next_event..]
            .iter()
            .filter(|e| matches!(e, Event::Arrival { .. }))
            .count(),
    };
    (report, stopped)
}

/// The report's view of a match made at `at`.
fn simulated(
    at: f64,
    m: &ProposedMatch,
    data_of: &std::collections::HashMap<String, serde_json::Value>,
) -> SimulatedMatch {
    let mut players = Vec::new();
    let mut teams = Vec::with_capacity(m.teams.len());
    for team in &m.teams {
        let mut ids: Vec<Option<String>> = Vec::with_capacity(team.players.len());
        for p in &team.players {
            ids.push(Some(p.player_id.to_string()));
            players.push(SimulatedPlayer {
                player_id: Some(p.player_id.to_string()),
                team: team.index,
                bot: false,
                mmr: p.mmr,
                // To the match's region with `regions`, else the ping.
                latency_ms: if m.region.is_some() {
                    p.latency_ms
                } else {
                    p.ping_ms
                },
                data: data_of.get(p.player_id.as_str()).cloned(),
                role: p.role.as_ref().map(ToString::to_string),
            });
        }
        for bot in 0..team.bots as usize {
            ids.push(None);
            players.push(SimulatedPlayer {
                player_id: None,
                team: team.index,
                bot: true,
                mmr: m.bot_mmr,
                latency_ms: None,
                data: None,
                role: team.bot_roles.get(bot).map(ToString::to_string),
            });
        }
        teams.push(ids);
    }
    let mean_mmr: Vec<Option<f64>> = m.teams.iter().map(|team| team.mean_mmr).collect();
    // Without any MMR (FIFO, a mode without MMRs) there is no spread.
    let rated = |value: f64| mean_mmr.iter().any(Option::is_some).then_some(value);
    SimulatedMatch {
        at,
        teams,
        mmr_spread: rated(m.mmr_spread),
        team_imbalance: rated(m.team_imbalance),
        mean_mmr,
        players,
        match_shape: m.match_shape.clone(),
        seats_open: m.seats_open.clone(),
        region: m.region.as_ref().map(|r| r.to_string()),
        attributes: m.attributes.clone(),
    }
}

/// The first cycle `k` (`t = k * step`, k >= 1) that applies an event
/// at `at` (`at <= t`), computed as the loop computes `t`.
fn first_cycle_at_or_after(at: f64, step: f64) -> u64 {
    // Beyond 2^52 cycles a float no longer counts them one by one (an
    // arrival at 1e300 s, `--rate 1e-300`): no run reaches such a cycle.
    const EXACT: f64 = (1u64 << 52) as f64;
    let cycles = at / step;
    if cycles.is_nan() || cycles >= EXACT {
        return u64::MAX;
    }
    let mut k = cycles.ceil().max(1.0) as u64;
    while k > 1 && (k - 1) as f64 * step >= at {
        k -= 1;
    }
    while (k as f64) * step < at {
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests;
