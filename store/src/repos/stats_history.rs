//! The stats history of each game mode: one row per mode per minute with
//! searches or matches ([`crate::entities::mode_stats_minute`]), merged
//! after each cycle of that minute by the worker that ran it, read by the
//! history route as minutes to add up into longer buckets, and pruned past
//! [`RETENTION_DAYS`] in batches.
//!
//! Only the mode's lease holder writes a mode's rows, so the merge is a read
//! then a write; a worker that takes the lease over mid-minute reads the
//! row its predecessor left and goes on from it.
//!
//! Besides counts and histograms a minute keeps, per rule over attributes
//! (docs/rules.md), the candidates it turned away, added up over the
//! minute's cycles like the other counts (a rule renamed meanwhile keeps
//! its old name's count under the old name). In modes with `composition`
//! it keeps, per role seat, the players matched in it and their waits
//! (docs/rules.md, "Role waits"), merged the same way.

use crate::entities::mode_stats_minute::{self, Entity as Minutes};
use crate::repos::StoreError;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use matchplane_matchmaker::histogram::{Histogram, SPREAD_BOUNDS, WAIT_BOUNDS};
use matchplane_matchmaker::role_waits::RoleWaits;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::BTreeMap;

/// Days a minute is kept.
pub const RETENTION_DAYS: i64 = 14;

/// Minutes one read returns at most (14 days of one mode).
pub const MAX_MINUTES: u64 = (RETENTION_DAYS * 24 * 60) as u64;

/// The one way into a project's rows.
fn scoped(project_id: &str) -> sea_orm::Select<Minutes> {
    Minutes::find().filter(mode_stats_minute::Column::ProjectId.eq(project_id))
}

/// What one cycle (or a whole minute) adds to a minute.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Cycles.
    pub cycles: i64,
    /// Pool sizes, added up.
    pub searching_sum: i64,
    /// Largest pool.
    pub searching_max: i64,
    /// Matches.
    pub matches: i64,
    /// Players seated in them.
    pub matched_players: i64,
    /// Matched players' waits (seconds), over [`WAIT_BOUNDS`].
    pub waits: Histogram,
    /// Matches' MMR spreads, over [`SPREAD_BOUNDS`].
    pub spreads: Histogram,
    /// Proposals opened.
    pub proposals: i64,
    /// Proposals declined or timed out.
    pub declines: i64,
    /// Per rule name, the candidates the rule turned away (each cycle's
    /// distinct candidates, added up over cycles); rules that turned
    /// nobody away are left out.
    pub rule_turned_away: BTreeMap<String, i64>,
    /// Per role seat (docs/rules.md, "Role waits"), the players matched in
    /// it and their waits; empty without `composition`.
    pub roles: RoleWaits,
}

impl Default for Figures {
    fn default() -> Self {
        Self {
            cycles: 0,
            searching_sum: 0,
            searching_max: 0,
            matches: 0,
            matched_players: 0,
            waits: Histogram::new(WAIT_BOUNDS),
            spreads: Histogram::new(SPREAD_BOUNDS),
            proposals: 0,
            declines: 0,
            rule_turned_away: BTreeMap::new(),
            roles: RoleWaits::default(),
        }
    }
}

impl Figures {
    /// One cycle's figures: its pool size, and each match's players' waits
    /// and MMR spread.
    pub fn of_cycle<'a>(
        searching: usize,
        matches: impl IntoIterator<Item = (&'a [f64], Option<f64>)>,
    ) -> Self {
        let mut figures = Self {
            cycles: 1,
            searching_sum: searching as i64,
            searching_max: searching as i64,
            ..Self::default()
        };
        for (waits, spread) in matches {
            figures.matches += 1;
            figures.matched_players += waits.len() as i64;
            for wait in waits {
                figures.waits.add(WAIT_BOUNDS, *wait);
            }
            if let Some(spread) = spread {
                figures.spreads.add(SPREAD_BOUNDS, spread);
            }
        }
        figures
    }

    /// These figures with a cycle's per-rule counts (a
    /// `CycleOutcome::rule_turned_away`); the rules that turned nobody away
    /// are left out.
    pub fn with_rules<'a>(
        mut self,
        turned_away: impl IntoIterator<Item = (&'a String, &'a u32)>,
    ) -> Self {
        for (rule, count) in turned_away {
            if *count > 0 {
                *self.rule_turned_away.entry(rule.clone()).or_insert(0) += i64::from(*count);
            }
        }
        self
    }

    /// These figures with `roles` added (the claimed matches' players by
    /// role seat, [`RoleWaits::add_match`]).
    pub fn with_roles(mut self, roles: &RoleWaits) -> Self {
        self.roles.merge(roles);
        self
    }

    /// Whether there is nothing to keep (no searches, no matches, no
    /// proposals): an idle cycle writes no row.
    pub fn is_idle(&self) -> bool {
        self.searching_max == 0
            && self.matches == 0
            && self.proposals == 0
            && self.declines == 0
            && self.rule_turned_away.is_empty()
            && self.roles.is_empty()
    }

    /// Adds `other` to these figures.
    pub fn merge(&mut self, other: &Figures) {
        self.cycles += other.cycles;
        self.searching_sum += other.searching_sum;
        self.searching_max = self.searching_max.max(other.searching_max);
        self.matches += other.matches;
        self.matched_players += other.matched_players;
        self.waits.merge(&other.waits);
        self.spreads.merge(&other.spreads);
        self.proposals += other.proposals;
        self.declines += other.declines;
        for (rule, count) in &other.rule_turned_away {
            *self.rule_turned_away.entry(rule.clone()).or_insert(0) += count;
        }
        self.roles.merge(&other.roles);
    }

    /// The figures a stored minute holds (a histogram or per-rule counts
    /// that do not parse count as empty: they are the console's, never
    /// worth failing a read).
    pub fn of_row(row: &mode_stats_minute::Model) -> Self {
        let histogram = |json: &str, bounds: &[f64]| {
            serde_json::from_str::<Vec<u64>>(json)
                .map(|counts| Histogram::from_counts(bounds, counts))
                .unwrap_or_else(|_| Histogram::new(bounds))
        };
        Self {
            cycles: row.cycles,
            searching_sum: row.searching_sum,
            searching_max: row.searching_max,
            matches: row.matches,
            matched_players: row.matched_players,
            waits: histogram(&row.wait_histogram, WAIT_BOUNDS),
            spreads: histogram(&row.spread_histogram, SPREAD_BOUNDS),
            proposals: row.proposals,
            declines: row.declines,
            rule_turned_away: row
                .rule_turned_away
                .as_deref()
                .and_then(|json| serde_json::from_str(json).ok())
                .unwrap_or_default(),
            roles: row
                .role_stats
                .as_deref()
                .and_then(|json| serde_json::from_str::<RoleWaits>(json).ok())
                .map(RoleWaits::normalized)
                .unwrap_or_default(),
        }
    }
}

/// The start of the minute `at` falls in.
pub fn minute_of(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(TimeDelta::minutes(1)).unwrap_or(at)
}

/// Adds `figures` to the minute of `at` of mode `game_mode`; an idle
/// `figures` writes nothing.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn record<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    at: DateTime<Utc>,
    figures: &Figures,
) -> Result<(), StoreError> {
    if figures.is_idle() {
        return Ok(());
    }
    let minute = minute_of(at);
    let mut merged = scoped(project_id)
        .filter(mode_stats_minute::Column::GameMode.eq(game_mode))
        .filter(mode_stats_minute::Column::Minute.eq(minute))
        .one(db)
        .await?
        .map(|row| Figures::of_row(&row))
        .unwrap_or_default();
    merged.merge(figures);
    let json = |h: &Histogram| serde_json::to_string(h.counts()).unwrap_or_else(|_| "[]".into());
    let row = mode_stats_minute::Model {
        project_id: project_id.to_owned(),
        game_mode: game_mode.to_owned(),
        minute,
        cycles: merged.cycles,
        searching_sum: merged.searching_sum,
        searching_max: merged.searching_max,
        matches: merged.matches,
        matched_players: merged.matched_players,
        wait_histogram: json(&merged.waits),
        spread_histogram: json(&merged.spreads),
        proposals: merged.proposals,
        declines: merged.declines,
        rule_turned_away: (!merged.rule_turned_away.is_empty())
            .then(|| serde_json::to_string(&merged.rule_turned_away).ok())
            .flatten(),
        role_stats: (!merged.roles.is_empty())
            .then(|| serde_json::to_string(&merged.roles).ok())
            .flatten(),
        updated_at: at,
    };
    use mode_stats_minute::Column as C;
    let active: mode_stats_minute::ActiveModel = row.into();
    Minutes::insert(active)
        .on_conflict(
            OnConflict::columns([C::ProjectId, C::GameMode, C::Minute])
                .update_columns([
                    C::Cycles,
                    C::SearchingSum,
                    C::SearchingMax,
                    C::Matches,
                    C::MatchedPlayers,
                    C::WaitHistogram,
                    C::SpreadHistogram,
                    C::Proposals,
                    C::Declines,
                    C::RuleTurnedAway,
                    C::RoleStats,
                    C::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// The stored minutes of mode `game_mode` starting in `from..to`, oldest
/// first, at most [`MAX_MINUTES`].
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn minutes<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<mode_stats_minute::Model>, StoreError> {
    Ok(scoped(project_id)
        .filter(mode_stats_minute::Column::GameMode.eq(game_mode))
        .filter(mode_stats_minute::Column::Minute.gte(from))
        .filter(mode_stats_minute::Column::Minute.lt(to))
        .order_by_asc(mode_stats_minute::Column::Minute)
        .limit(MAX_MINUTES)
        .all(db)
        .await?)
}

/// Forgets every stored minute of mode `game_mode` (the mode is deleted:
/// a mode created again under its name is a new mode).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn forget<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
) -> Result<(), StoreError> {
    Minutes::delete_many()
        .filter(mode_stats_minute::Column::ProjectId.eq(project_id))
        .filter(mode_stats_minute::Column::GameMode.eq(game_mode))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes at most `batch` of the oldest minutes (any project) that
/// started before `before`; returns how many. Called until it returns
/// less than `batch`, a pass never holds a long lock.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn prune<C: ConnectionTrait>(
    db: &C,
    before: DateTime<Utc>,
    batch: u64,
) -> Result<u64, StoreError> {
    use mode_stats_minute::Column as C;
    let oldest: Vec<(String, String, DateTime<Utc>)> = Minutes::find()
        .select_only()
        .columns([C::ProjectId, C::GameMode, C::Minute])
        .filter(C::Minute.lt(before))
        .order_by_asc(C::Minute)
        .limit(batch)
        .into_tuple()
        .all(db)
        .await?;
    // The batch's rows of each mode are exactly that mode's rows up to its
    // newest minute in the batch (minutes are unique per mode).
    let mut newest: BTreeMap<(String, String), DateTime<Utc>> = BTreeMap::new();
    for (project_id, game_mode, minute) in oldest {
        let entry = newest.entry((project_id, game_mode)).or_insert(minute);
        *entry = (*entry).max(minute);
    }
    let mut deleted = 0;
    for ((project_id, game_mode), up_to) in newest {
        deleted += Minutes::delete_many()
            .filter(C::ProjectId.eq(project_id))
            .filter(C::GameMode.eq(game_mode))
            .filter(C::Minute.lte(up_to))
            .filter(C::Minute.lt(before))
            .exec(db)
            .await?
            .rows_affected;
    }
    Ok(deleted)
}
