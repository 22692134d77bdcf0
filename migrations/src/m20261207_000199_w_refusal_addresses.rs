//! Stored webhook errors no longer say what a host name resolved to
//! (docs/webhooks.md, "Which URLs are accepted"). Before, a refused
//! delivery's error read `refused: the host is or resolves to a non-public
//! address (10.0.0.5)`, also when `10.0.0.5` was what the installation's
//! resolver gave for a name; that text is kept in the attempt log
//! (`webhook_attempts.error`) and as a webhook's last error
//! (`webhook_health.last_error`), both shown to the tenant. Such a text no
//! longer tells whether the address was written in the URL or resolved, so
//! its address is removed. Nothing to undo on the way down.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum WebhookAttempts {
    Table,
    Error,
}

/// Table and column names of this migration.
#[derive(DeriveIden, Clone, Copy)]
enum WebhookHealth {
    Table,
    LastError,
}

/// The stored error, as this migration finds it, up to its address.
const OLD: &str = "refused: the host is or resolves to a non-public address";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let pattern = format!("{OLD} (%");
        for (table, column) in [
            (
                WebhookAttempts::Table.into_iden(),
                WebhookAttempts::Error.into_iden(),
            ),
            (
                WebhookHealth::Table.into_iden(),
                WebhookHealth::LastError.into_iden(),
            ),
        ] {
            manager
                .exec_stmt(
                    Query::update()
                        .table(table)
                        .value(column.clone(), OLD)
                        .and_where(Expr::col(column).like(pattern.as_str()))
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Ok(())
    }
}
