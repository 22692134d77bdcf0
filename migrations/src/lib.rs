//! # matchplane-migrations: the control-plane schema
//!
//! Every table of matchplane's durable store (SPEC 1: tenants, keys, tiers,
//! versioned game modes, matches, webhook deliveries and attempts, outbox
//! records kept as dead letters), as
//! sea-orm migrations that run on PostgreSQL and on SQLite alike.
//!
//! Migrations are written against table and column *names* ([`names`]), never
//! against the store's entities: an entity may change later, a migration that
//! already ran must not.
//!
//! [`migrate`] applies what is pending; [`pending`] counts it, so the API can
//! refuse to start on a database that is behind.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DatabaseConnection;

mod m20261130_000001_tenancy;
mod m20261130_000002_game_modes;
mod m20261130_000003_matches_webhooks;
mod m20261130_000004_cycle_stats;
mod m20261130_000010_ratings;
mod m20261130_000011_outbox_dead_letters;
mod m20261201_000001_a_older_webhook_secrets;
pub mod names;

/// The ordered list of matchplane's migrations.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261130_000001_tenancy::Migration),
            Box::new(m20261130_000002_game_modes::Migration),
            Box::new(m20261130_000003_matches_webhooks::Migration),
            Box::new(m20261130_000004_cycle_stats::Migration),
            Box::new(m20261130_000010_ratings::Migration),
            Box::new(m20261130_000011_outbox_dead_letters::Migration),
            Box::new(m20261201_000001_a_older_webhook_secrets::Migration),
        ]
    }
}

/// Applies every pending migration, in order.
///
/// # Errors
/// The database error of the first migration that fails; the migrations
/// before it stay applied.
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    Migrator::up(db, None).await
}

/// How many migrations this build knows that `db` has not applied yet.
///
/// # Errors
/// A database error while reading the migration table.
pub async fn pending(db: &DatabaseConnection) -> Result<usize, DbErr> {
    Ok(Migrator::get_pending_migrations(db).await?.len())
}
