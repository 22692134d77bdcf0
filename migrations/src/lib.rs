//! # matchplane-migrations: the control-plane schema
//!
//! Every table of matchplane's durable store (docs/deployment.md: tenants, keys, tiers,
//! versioned game modes, matches, webhook deliveries and attempts, outbox
//! records kept as dead letters), as
//! sea-orm migrations that run on PostgreSQL and on SQLite alike.
//!
//! Migrations are written against table and column *names* ([`names`]), never
//! against the store's entities: an entity may change later, a migration that
//! already ran must not.
//!
//! A migration's name (the version recorded in [`MIGRATION_TABLE`]) is its
//! file's name: renaming a file that already ran would make it run again.
//! Newer migrations build their statements with `ops` and sea-orm's own
//! column helpers (`sea_orm_migration::schema`); the first six, already
//! applied everywhere, are left as they were written.
//!
//! [`migrate`] applies what is pending; [`pending`] counts it, so the API can
//! refuse to start on a database that is behind; [`unknown`] names the
//! applied migrations this build does not know (a database ahead of it).

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseConnection};

mod m20261130_000001_tenancy;
mod m20261130_000002_game_modes;
mod m20261130_000003_matches_webhooks;
mod m20261130_000004_cycle_stats;
mod m20261130_000010_ratings;
mod m20261130_000011_outbox_dead_letters;
mod m20261201_000001_a_older_webhook_secrets;
mod m20261201_000012_d_key_scopes;
mod m20261201_000013_d_idempotency_keys;
mod m20261201_000051_e_webhook_health;
mod m20261201_000052_e_max_pending_tickets;
mod m20261201_000061_f_delivery_fencing;
mod m20261201_000062_f_match_shape;
mod m20261201_000071_g_regions;
mod m20261201_000072_g_lease_epochs;
mod m20261201_000081_h_match_tickets;
mod m20261201_000082_h_match_ticket_data;
mod m20261201_000101_j_backfills;
mod m20261201_000111_k_stats_history;
mod m20261201_000112_k_pool_summary;
mod m20261201_000121_l_backfill_figures;
mod m20261201_000131_m_search_recordings;
mod m20261201_000141_n_match_status;
mod m20261201_000151_p_player_search_scope;
mod m20261201_000171_r_retention_days;
mod m20261201_000172_r_retention_pruning;
mod m20261202_000181_s_game_modes_updated;
mod m20261203_000191_t_project_webhooks;
mod m20261203_000192_t_rule_columns;
mod m20261203_000193_t_hold_and_period;
mod m20261203_000194_t_rule_stats;
mod m20261203_000195_t_role_stats;
mod m20261203_000196_t_backfill_open_roles;
mod m20261205_000197_u_match_list_indexes;
mod m20261206_000198_v_instance_keys;
mod m20261207_000199_w_refusal_addresses;
mod m20261208_000200_x_idempotency_location;
mod m20261209_000201_y_match_ticket_seatings;
mod m20261210_000202_z_proposed_index;
pub mod names;
mod ops;

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
            Box::new(m20261201_000012_d_key_scopes::Migration),
            Box::new(m20261201_000013_d_idempotency_keys::Migration),
            Box::new(m20261201_000051_e_webhook_health::Migration),
            Box::new(m20261201_000052_e_max_pending_tickets::Migration),
            Box::new(m20261201_000061_f_delivery_fencing::Migration),
            Box::new(m20261201_000062_f_match_shape::Migration),
            Box::new(m20261201_000071_g_regions::Migration),
            Box::new(m20261201_000072_g_lease_epochs::Migration),
            Box::new(m20261201_000081_h_match_tickets::Migration),
            Box::new(m20261201_000082_h_match_ticket_data::Migration),
            Box::new(m20261201_000101_j_backfills::Migration),
            Box::new(m20261201_000111_k_stats_history::Migration),
            Box::new(m20261201_000112_k_pool_summary::Migration),
            Box::new(m20261201_000121_l_backfill_figures::Migration),
            Box::new(m20261201_000131_m_search_recordings::Migration),
            Box::new(m20261201_000141_n_match_status::Migration),
            Box::new(m20261201_000151_p_player_search_scope::Migration),
            Box::new(m20261201_000171_r_retention_days::Migration),
            Box::new(m20261201_000172_r_retention_pruning::Migration),
            Box::new(m20261202_000181_s_game_modes_updated::Migration),
            Box::new(m20261203_000191_t_project_webhooks::Migration),
            Box::new(m20261203_000192_t_rule_columns::Migration),
            Box::new(m20261203_000193_t_hold_and_period::Migration),
            Box::new(m20261203_000194_t_rule_stats::Migration),
            Box::new(m20261203_000195_t_role_stats::Migration),
            Box::new(m20261203_000196_t_backfill_open_roles::Migration),
            Box::new(m20261205_000197_u_match_list_indexes::Migration),
            Box::new(m20261206_000198_v_instance_keys::Migration),
            Box::new(m20261207_000199_w_refusal_addresses::Migration),
            Box::new(m20261208_000200_x_idempotency_location::Migration),
            Box::new(m20261209_000201_y_match_ticket_seatings::Migration),
            Box::new(m20261210_000202_z_proposed_index::Migration),
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

/// The table where applied migrations are recorded.
pub const MIGRATION_TABLE: &str = "seaql_migrations";

/// How many migrations this build knows that `db` has not applied yet.
/// Only reads: on a database never migrated (no [`MIGRATION_TABLE`]) every
/// migration is pending and nothing is created (sea-orm's own pending
/// check creates the table first).
///
/// # Errors
/// A database error while reading the migration table.
pub async fn pending(db: &DatabaseConnection) -> Result<usize, DbErr> {
    let applied = applied(db).await?;
    Ok(Migrator::migrations()
        .iter()
        .filter(|m| !applied.contains(m.name()))
        .count())
}

/// The migrations `db` has applied that this build does not know, in
/// order: the schema is newer than the binary (one rolled back after a
/// newer version migrated the database). Only reads, as [`pending`].
///
/// # Errors
/// A database error while reading the migration table.
pub async fn unknown(db: &DatabaseConnection) -> Result<Vec<String>, DbErr> {
    let known: std::collections::HashSet<String> = Migrator::migrations()
        .iter()
        .map(|m| m.name().to_owned())
        .collect();
    let mut unknown: Vec<String> = applied(db)
        .await?
        .into_iter()
        .filter(|version| !known.contains(version))
        .collect();
    unknown.sort();
    Ok(unknown)
}

/// The versions recorded in [`MIGRATION_TABLE`]; none when it is missing.
async fn applied(db: &DatabaseConnection) -> Result<std::collections::HashSet<String>, DbErr> {
    if !SchemaManager::new(db).has_table(MIGRATION_TABLE).await? {
        return Ok(std::collections::HashSet::new());
    }
    let select = Query::select()
        .column(Alias::new("version"))
        .from(Alias::new(MIGRATION_TABLE))
        .to_owned();
    let backend = db.get_database_backend();
    db.query_all(backend.build(&select))
        .await?
        .iter()
        .map(|row| row.try_get::<String>("", "version"))
        .collect()
}
