//! `webhook_deliveries.lock_token` and `webhook_deliveries.attempts_before_run`.
//!
//! `lock_token` names the claim that holds a delivery: every write of an
//! attempt (its start, the lock's renewal, its end) compares it, so a worker
//! whose lock ran out cannot write over the one that took the delivery on.
//! `attempts_before_run` is the attempt count when the current run began (a
//! redelivery starts a new run without resetting the count, so the count
//! always equals the attempts listed): the retry schedule counts from it.

use sea_orm_migration::prelude::*;

pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum WebhookDeliveries {
    Table,
    LockToken,
    AttemptsBeforeRun,
}

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000061_f_delivery_fencing"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one at a time.
        manager
            .alter_table(
                Table::alter()
                    .table(WebhookDeliveries::Table)
                    .add_column(ColumnDef::new(WebhookDeliveries::LockToken).string().null())
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(WebhookDeliveries::Table)
                    .add_column(
                        ColumnDef::new(WebhookDeliveries::AttemptsBeforeRun)
                            .integer()
                            .not_null()
                            .default(0),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            WebhookDeliveries::LockToken,
            WebhookDeliveries::AttemptsBeforeRun,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(WebhookDeliveries::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
