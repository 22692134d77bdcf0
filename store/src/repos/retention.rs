//! Retention (docs/api-keys.md, docs/deployment.md#scaling): the statements that delete a project's rows
//! older than its tier's `retentionDays`, one small batch per call, for the
//! worker's pruning loop (`matchplane_worker::retention`), which paces
//! them.
//!
//! Each call reads one batch of ids (at most `batch`, oldest first, an
//! index range scan on `(project_id, created_at)`) in its own statement,
//! then deletes those rows and their children by id in one short
//! transaction: row locks only, on rows nothing else writes any more, held
//! for the few milliseconds of the deletes. The read comes before the
//! transaction so that on SQLite the transaction's first statement is a
//! write (a read-then-write transaction could fail to upgrade its lock when
//! another connection wrote in between). A row deleted in between (its
//! project deleted) is simply not counted.
//!
//! What goes with a match: its seated tickets (`match_tickets`), its
//! backfill requests and their fills, its webhook deliveries and their
//! attempts. Deliveries are also pruned by their own age (a delivery is
//! never older than its match, so this deletes no delivery of a kept
//! match), and so are applied rating results (a result is never older than
//! its match, and a pruned match can no longer be reported).

use crate::entities::{
    backfill, backfill_fill, match_, match_ticket, rating_result, webhook_attempt, webhook_delivery,
};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Expr, Query};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, TransactionTrait,
};

/// One project and its tier's `retentionDays`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRetention {
    /// The project's id.
    pub project_id: String,
    /// Its tier's `retentionDays` (at least 1).
    pub retention_days: u32,
}

/// Every project with its tier's `retentionDays`, by project id.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn projects<C: ConnectionTrait>(db: &C) -> Result<Vec<ProjectRetention>, StoreError> {
    let (projects, tiers) = (Alias::new("projects"), Alias::new("tiers"));
    let select = Query::select()
        .column((projects.clone(), Alias::new("id")))
        .column((tiers.clone(), Alias::new("retention_days")))
        .from(projects.clone())
        .inner_join(
            tiers.clone(),
            Expr::col((tiers.clone(), Alias::new("name")))
                .equals((projects.clone(), Alias::new("tier"))),
        )
        .order_by((projects, Alias::new("id")), sea_orm::Order::Asc)
        .to_owned();
    let backend = db.get_database_backend();
    db.query_all(backend.build(&select))
        .await?
        .iter()
        .map(|row| {
            let days: i32 = row.try_get("", "retention_days")?;
            Ok(ProjectRetention {
                project_id: row.try_get("", "id")?,
                retention_days: u32::try_from(days.max(1)).unwrap_or(1),
            })
        })
        .collect()
}

/// Rows one call deleted, per table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// `matches`.
    pub matches: u64,
    /// `match_tickets`.
    pub match_tickets: u64,
    /// `backfills`.
    pub backfills: u64,
    /// `backfill_fills`.
    pub backfill_fills: u64,
    /// `webhook_deliveries`.
    pub deliveries: u64,
    /// `webhook_attempts`.
    pub attempts: u64,
    /// `rating_results`.
    pub rating_results: u64,
}

impl Pruned {
    /// Every row, all tables.
    pub fn total(&self) -> u64 {
        self.matches
            + self.match_tickets
            + self.backfills
            + self.backfill_fills
            + self.deliveries
            + self.attempts
            + self.rating_results
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Pruned) {
        self.matches += other.matches;
        self.match_tickets += other.match_tickets;
        self.backfills += other.backfills;
        self.backfill_fills += other.backfill_fills;
        self.deliveries += other.deliveries;
        self.attempts += other.attempts;
        self.rating_results += other.rating_results;
    }

    /// `(table, rows)` for each table, in a fixed order (metric labels).
    pub fn by_table(&self) -> [(&'static str, u64); 7] {
        [
            ("matches", self.matches),
            ("match_tickets", self.match_tickets),
            ("backfills", self.backfills),
            ("backfill_fills", self.backfill_fills),
            ("webhook_deliveries", self.deliveries),
            ("webhook_attempts", self.attempts),
            ("rating_results", self.rating_results),
        ]
    }
}

/// The ids of up to `batch` of `project_id`'s rows of `E` created before
/// `before`, oldest first: `[id, project id, created at]` are `E`'s
/// columns (an index range scan on the project and the creation time).
async fn oldest_ids<E: EntityTrait>(
    db: &DatabaseConnection,
    [id, project, created]: [E::Column; 3],
    project_id: &str,
    before: DateTime<Utc>,
    batch: u64,
) -> Result<Vec<String>, StoreError> {
    Ok(E::find()
        .select_only()
        .column(id)
        .filter(project.eq(project_id))
        .filter(created.lt(before))
        .order_by_asc(created)
        .limit(batch)
        .into_tuple()
        .all(db)
        .await?)
}

/// Deletes up to `batch` of `project_id`'s matches created before
/// `before` (oldest first) with everything that belongs to them. The
/// batch was full when `matches == batch`.
///
/// # Errors
/// [`StoreError::Db`] on a database failure; the batch's transaction is
/// rolled back (nothing of it is deleted).
pub async fn prune_matches(
    db: &DatabaseConnection,
    project_id: &str,
    before: DateTime<Utc>,
    batch: u64,
) -> Result<Pruned, StoreError> {
    use match_::Column as M;
    let ids = oldest_ids::<match_::Entity>(
        db,
        [M::Id, M::ProjectId, M::CreatedAt],
        project_id,
        before,
        batch,
    )
    .await?;
    if ids.is_empty() {
        return Ok(Pruned::default());
    }
    let txn = db.begin().await?;
    let deliveries = Query::select()
        .column(webhook_delivery::Column::Id)
        .from(webhook_delivery::Entity)
        .and_where(webhook_delivery::Column::MatchId.is_in(ids.iter().cloned()))
        .to_owned();
    let attempts = webhook_attempt::Entity::delete_many()
        .filter(webhook_attempt::Column::DeliveryId.in_subquery(deliveries))
        .exec(&txn)
        .await?
        .rows_affected;
    let deliveries = webhook_delivery::Entity::delete_many()
        .filter(webhook_delivery::Column::MatchId.is_in(ids.iter().cloned()))
        .exec(&txn)
        .await?
        .rows_affected;
    let match_tickets = match_ticket::Entity::delete_many()
        .filter(match_ticket::Column::MatchId.is_in(ids.iter().cloned()))
        .exec(&txn)
        .await?
        .rows_affected;
    let backfills_of = Query::select()
        .column(backfill::Column::Id)
        .from(backfill::Entity)
        .and_where(backfill::Column::ProjectId.eq(project_id))
        .and_where(backfill::Column::MatchId.is_in(ids.iter().cloned()))
        .to_owned();
    let backfill_fills = backfill_fill::Entity::delete_many()
        .filter(backfill_fill::Column::BackfillId.in_subquery(backfills_of))
        .exec(&txn)
        .await?
        .rows_affected;
    let backfills = backfill::Entity::delete_many()
        .filter(backfill::Column::ProjectId.eq(project_id))
        .filter(backfill::Column::MatchId.is_in(ids.iter().cloned()))
        .exec(&txn)
        .await?
        .rows_affected;
    let matches = match_::Entity::delete_many()
        .filter(M::Id.is_in(ids))
        .exec(&txn)
        .await?
        .rows_affected;
    txn.commit().await?;
    Ok(Pruned {
        matches,
        match_tickets,
        backfills,
        backfill_fills,
        deliveries,
        attempts,
        ..Pruned::default()
    })
}

/// Deletes up to `batch` of `project_id`'s webhook deliveries created
/// before `before` (oldest first) with their attempts. The batch was full
/// when `deliveries == batch`.
///
/// # Errors
/// As [`prune_matches`].
pub async fn prune_deliveries(
    db: &DatabaseConnection,
    project_id: &str,
    before: DateTime<Utc>,
    batch: u64,
) -> Result<Pruned, StoreError> {
    use webhook_delivery::Column as D;
    let ids = oldest_ids::<webhook_delivery::Entity>(
        db,
        [D::Id, D::ProjectId, D::CreatedAt],
        project_id,
        before,
        batch,
    )
    .await?;
    if ids.is_empty() {
        return Ok(Pruned::default());
    }
    let txn = db.begin().await?;
    let attempts = webhook_attempt::Entity::delete_many()
        .filter(webhook_attempt::Column::DeliveryId.is_in(ids.iter().cloned()))
        .exec(&txn)
        .await?
        .rows_affected;
    let deliveries = webhook_delivery::Entity::delete_many()
        .filter(D::Id.is_in(ids))
        .exec(&txn)
        .await?
        .rows_affected;
    txn.commit().await?;
    Ok(Pruned {
        deliveries,
        attempts,
        ..Pruned::default()
    })
}

/// Deletes up to `batch` of `project_id`'s applied rating results recorded
/// before `before` (oldest first), in one statement. The batch was full
/// when `rating_results == batch`.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn prune_rating_results(
    db: &DatabaseConnection,
    project_id: &str,
    before: DateTime<Utc>,
    batch: u64,
) -> Result<Pruned, StoreError> {
    use rating_result::Column as R;
    let oldest = Query::select()
        .columns([R::GameModeId, R::MatchId])
        .from(rating_result::Entity)
        .and_where(R::ProjectId.eq(project_id))
        .and_where(R::CreatedAt.lt(before))
        .order_by(R::CreatedAt, sea_orm::Order::Asc)
        .limit(batch)
        .to_owned();
    let rating_results = rating_result::Entity::delete_many()
        .filter(
            Expr::tuple([
                Expr::col(R::GameModeId).into(),
                Expr::col(R::MatchId).into(),
            ])
            .in_subquery(oldest),
        )
        .exec(db)
        .await?
        .rows_affected;
    Ok(Pruned {
        rating_results,
        ..Pruned::default()
    })
}
