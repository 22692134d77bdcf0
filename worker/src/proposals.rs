//! Acceptance on the worker: a cycle's groups are held as proposals (fenced
//! by the lease, like a claim) and their players told `proposed`; the lease
//! holder's proposal sweep closes what is due (deadlines, and answers or
//! cancels whose closing nobody applied) by the core's rule
//! ([`matchplane_store::pool::settle`]) and tells the players.
//!
//! A made proposal's record goes to the outbox in the closing's own step,
//! so the record consumer stores the match, queues its one `match.made` and
//! tells everyone `matched`, as for a claim.

use crate::db_wait::Budget;
use crate::error::WorkerError;
use crate::modes::ModeConfig;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::ProposedMatch;
use matchplane_store::pool::{settle_excusing, ClaimOutcome, ModeKey, PoolStore, ProposalClaim};
use matchplane_store::tickets::{announce_settled, publish, StatusMessage};

/// Proposals one sweep closes at most (the rest waits half a second).
const SWEEP_LIMIT: usize = 2_000;

/// What holding a cycle's groups came to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Proposed {
    /// Groups held as proposals.
    pub held: usize,
    /// Groups refused because a search had gone.
    pub conflicts: usize,
    /// Whether the lease was lost (nothing was held).
    pub lost: bool,
}

/// Holds each group of `matches` as a proposal answerable until `now +
/// timeoutSeconds` of the mode's acceptance (none without one), stores its
/// row (within what is left of the cycle's `budget`: a row not stored is
/// stored with its made match), and tells its players `proposed`.
///
/// # Errors
/// A pool store failure, or a record that cannot be encoded.
pub async fn propose_all(
    ctx: &crate::tick::Ticker<'_>,
    mode: &ModeKey,
    config: &ModeConfig,
    token: u64,
    now: DateTime<Utc>,
    matches: &[ProposedMatch],
    budget: &Budget,
) -> Result<Proposed, WorkerError> {
    let (pool, db) = (ctx.pool, ctx.db);
    let mut report = Proposed::default();
    let Some(acceptance) = &config.config.acceptance else {
        return Ok(report);
    };
    if matches.is_empty() {
        return Ok(report);
    }
    let now_secs = now.timestamp_micros() as f64 / 1e6;
    let accept_by = now_secs + acceptance.timeout_seconds;
    let claims: Vec<ProposalClaim> = matches
        .iter()
        .map(|m| {
            let claim = crate::tick::claim_of(mode, config, now, m)?;
            let parties = m
                .teams
                .iter()
                .flat_map(|t| t.players.iter())
                .map(|p| p.party_id.as_ref().unwrap_or(&p.ticket_id).to_string())
                .collect();
            Ok(ProposalClaim {
                claim,
                parties,
                accept_by,
                cooldown_seconds: acceptance.decline_cooldown_seconds,
            })
        })
        .collect::<Result<_, WorkerError>>()?;
    let outcomes = pool.propose_many(mode, token, &claims).await?;
    // Stored (status `proposed`) before anyone is told (docs/acceptance.md).
    crate::match_status::store_proposed(db, mode, &claims, &outcomes, budget).await;
    // Rounded to the millisecond as every view of the proposal says it
    // (a socket's re-read, the REST poll): truncated, the two differed by
    // 1 ms for half the proposals.
    let by = matchplane_matchmaker::timestamp::from_unix_seconds(accept_by);
    for ((claim, m), outcome) in claims.iter().zip(matches).zip(outcomes) {
        match outcome {
            ClaimOutcome::Claimed { .. } => {
                report.held += 1;
                crate::metrics::proposed(mode);
                crate::metrics::quality(mode, m.mmr_spread, m.team_imbalance);
                let message = StatusMessage::Proposed {
                    match_id: claim.claim.match_id.clone(),
                    accept_by: by.clone(),
                    accept_in_seconds: acceptance.timeout_seconds,
                    teams: m
                        .teams
                        .iter()
                        .map(|t| t.players.iter().map(|p| p.player_id.to_string()).collect())
                        .collect(),
                    attributes: m.attributes.clone(),
                };
                for ticket in &claim.claim.ticket_ids {
                    publish(pool, ticket, &message).await;
                }
            }
            ClaimOutcome::Conflict { .. } => report.conflicts += 1,
            ClaimOutcome::LeaseLost => report.lost = true,
        }
    }
    Ok(report)
}

/// What a proposal sweep closed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    /// Proposals made into matches (their records are in the outbox).
    pub made: usize,
    /// Proposals cancelled.
    pub cancelled: usize,
}

/// Closes `mode`'s proposals due by `due_by` (`f64::INFINITY`: every open
/// one, e.g. a decline whose closing its API instance never applied) that
/// the rule ends at `now`, and tells their players. With `lapses`, a
/// timeout whose deadline fell in an outage of the store, or in the grace
/// after it ([`crate::lapse_grace`]), makes nobody responsible: the silent
/// go back to the pool, nobody cooled down (docs/acceptance.md).
///
/// # Errors
/// A pool store failure (what was closed stays closed).
pub async fn sweep(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    (now, due_by): (f64, f64),
    lapses: Option<&crate::lapse_grace::LapseGrace>,
) -> Result<Swept, WorkerError> {
    let asked = std::time::Instant::now();
    let open = pool
        .open_proposals(mode, due_by, SWEEP_LIMIT)
        .await
        .inspect_err(|_| {
            if let Some(lapses) = lapses {
                lapses.failed(mode);
            }
        })?;
    // A read that waited out a stall is an outage too (`answered`).
    let excused_from = lapses.map_or(f64::INFINITY, |l| {
        l.answered(mode, now, now + asked.elapsed().as_secs_f64());
        l.excused_from(mode, now)
    });
    let mut swept = Swept::default();
    for id in open {
        let Some(settled) = settle_excusing(pool, mode, &id, now, excused_from).await? else {
            continue;
        };
        if settled.made {
            swept.made += 1;
        } else {
            swept.cancelled += 1;
            announce_settled(pool, &settled).await;
        }
    }
    Ok(swept)
}
