//! Claiming a cycle's matches (docs/architecture.md): in chunks, each
//! chunk one atomic `claim_many` under the lease's fencing token, with the
//! match's record written to the outbox in the same step.

use crate::error::WorkerError;
use crate::modes::ModeConfig;
use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};
use matchplane_matchmaker::role_waits::RoleWaits;
use matchplane_matchmaker::ProposedMatch;
use matchplane_store::pool::{Claim, ClaimOutcome, ModeKey, PoolStore};
use matchplane_webhook::{MatchIdentity, MatchMade};

pub(super) enum Claimed {
    /// Claimed: the players' waits, the match's MMR spread, and its
    /// players by role seat (empty without `composition`; docs/rules.md,
    /// "Role waits").
    Yes(Vec<f64>, f64, RoleWaits),
    Conflict,
    LeaseLost,
}

/// Matches per `claim_many` call: the worker encodes one chunk's records
/// while Redis runs the previous chunk's script.
const CLAIM_CHUNK: usize = 200;

/// `claim_many` calls in flight: enough to keep Redis busy while the next
/// chunk is encoded; more only queue behind one another in Redis.
const CLAIM_CHUNKS_IN_FLIGHT: usize = 4;

pub(super) async fn claim_all(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    config: &ModeConfig,
    token: u64,
    now: DateTime<Utc>,
    matches: &[ProposedMatch],
) -> Vec<Result<Claimed, WorkerError>> {
    let chunks: Vec<_> = matches
        .chunks(CLAIM_CHUNK)
        .map(|chunk| claim_chunk(pool, mode, config, token, now, chunk))
        .collect();
    let results: Vec<Vec<Result<Claimed, WorkerError>>> = stream::iter(chunks)
        .buffer_unordered(CLAIM_CHUNKS_IN_FLIGHT)
        .collect()
        .await;
    results.into_iter().flatten().collect()
}

/// Claims a chunk of matches in one `claim_many`: each match's record (the
/// exact `match.made` body) goes to the outbox with its claim.
async fn claim_chunk(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    config: &ModeConfig,
    token: u64,
    now: DateTime<Utc>,
    chunk: &[ProposedMatch],
) -> Vec<Result<Claimed, WorkerError>> {
    let claims: Result<Vec<Claim>, WorkerError> = chunk
        .iter()
        .map(|proposed| claim_of(mode, config, now, proposed))
        .collect();
    let claims = match claims {
        Ok(claims) => claims,
        Err(e) => return vec![Err(e)],
    };
    let outcomes = pool.claim_many(mode, token, &claims).await;
    if let Ok(outcomes) = &outcomes {
        // `backfill.auto`: a claimed match with open seats opens its backfill.
        for (claim, outcome) in claims.iter().zip(outcomes) {
            if matches!(outcome, ClaimOutcome::Claimed { .. }) {
                if let Err(err) = crate::backfill::open_auto(pool, mode, config, claim).await {
                    tracing::warn!(game_mode = %mode.mode, error = %err, "opening an automatic backfill failed");
                }
            }
        }
    }
    match outcomes {
        Ok(outcomes) => chunk
            .iter()
            .zip(outcomes)
            .map(|(proposed, outcome)| {
                Ok(match outcome {
                    ClaimOutcome::Claimed { .. } => {
                        crate::metrics::quality(mode, proposed.mmr_spread, proposed.team_imbalance);
                        Claimed::Yes(
                            proposed
                                .teams
                                .iter()
                                .flat_map(|t| t.players.iter().map(|p| p.wait_seconds))
                                .collect(),
                            proposed.mmr_spread,
                            RoleWaits::of_matches([proposed]),
                        )
                    }
                    ClaimOutcome::Conflict { .. } => Claimed::Conflict,
                    ClaimOutcome::LeaseLost => Claimed::LeaseLost,
                })
            })
            .collect(),
        Err(e) => vec![Err(e.into())],
    }
}

/// The claim of one match, with its record (also a proposal's).
pub(crate) fn claim_of(
    mode: &ModeKey,
    config: &ModeConfig,
    now: DateTime<Utc>,
    proposed: &ProposedMatch,
) -> Result<Claim, WorkerError> {
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let mut body = MatchMade::new(
        MatchIdentity {
            match_id: match_id.clone(),
            project_id: mode.project_id.clone(),
            game_mode: mode.mode.clone(),
            game_mode_version: config.version,
            created_at: now,
        },
        proposed,
    );
    body.backfill_id = crate::backfill::auto_id(config, proposed);
    let record_json = crate::record::encode(body)?;
    Ok(Claim::of_teams(match_id, &proposed.teams, record_json))
}
