//! `matchplane migrate`: applies the control-plane migrations, or with
//! `--check` only reports how many are pending (exit 1 when any is). A
//! database with migrations this build does not know (a newer version
//! migrated it) fails both, naming them (docs/configuration.md).

use clap::Args;
use sea_orm::DatabaseConnection;
use std::process::ExitCode;

/// Arguments of `matchplane migrate`.
#[derive(Args)]
pub struct MigrateArgs {
    /// Control-plane database: `postgres://…` or `sqlite://file.db`.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    /// Only report pending migrations; change nothing.
    #[arg(long)]
    pub check: bool,
}

/// What to say of the applied migrations this build does not know.
fn unknown_message(unknown: &[String]) -> String {
    format!(
        "the database has {} migration(s) this build of matchplane does not know ({}): \
         it was migrated by a newer version",
        unknown.len(),
        unknown.join(", ")
    )
}

/// Logs a warning when `db` has migrations this build does not know: `api`
/// and `worker` still start (during a rolling upgrade the older replicas
/// run on the newer schema), but an operator who rolled the binary back is
/// told. A failed read is left to the start-up's own migration check.
pub async fn warn_of_unknown(db: &DatabaseConnection) {
    if let Ok(unknown) = matchplane_migrations::unknown(db).await {
        if !unknown.is_empty() {
            tracing::warn!(migrations = ?unknown, "{}", unknown_message(&unknown));
        }
    }
}

/// Applies (or checks) the migrations. Exit 1 on a database error, when the
/// database has migrations this build does not know, or with `--check`
/// when migrations are pending.
pub async fn run(args: MigrateArgs) -> ExitCode {
    // A database out of reach fails in seconds, as `api` does, so that
    // `migrate --check` serves as a quick pre-flight (sqlx's own default
    // waited 30 s); a migration's statements themselves are not bounded.
    let timeouts = matchplane_store::db::DbTimeouts::default();
    // `--check` changes nothing: an SQLite file that is not there is not
    // created (opened read-write, never created), and the check fails.
    let url = match args.check && args.database_url.starts_with("sqlite:") {
        true if !args.database_url.contains("mode=") => {
            let sep = if args.database_url.contains('?') {
                '&'
            } else {
                '?'
            };
            format!("{}{sep}mode=rw", args.database_url)
        }
        _ => args.database_url.clone(),
    };
    let db = match matchplane_store::db::connect_with(&url, timeouts).await {
        Ok(db) => db,
        Err(err) => {
            super::report_error(format_args!("cannot connect to the database: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let state = async {
        Ok::<_, sea_orm::DbErr>((
            matchplane_migrations::pending(&db).await?,
            matchplane_migrations::unknown(&db).await?,
        ))
    };
    let (pending, unknown) = match state.await {
        Ok(state) => state,
        Err(err) => {
            super::report_error(format_args!("cannot read the migration state: {err}"));
            return ExitCode::FAILURE;
        }
    };
    if !unknown.is_empty() {
        super::report_error(unknown_message(&unknown));
        return ExitCode::FAILURE;
    }
    if args.check {
        super::say(format_args!("{pending} migration(s) pending"));
        return if pending == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    match matchplane_migrations::migrate(&db).await {
        Ok(()) => {
            super::say(format_args!(
                "applied {pending} migration(s); the database is up to date"
            ));
            ExitCode::SUCCESS
        }
        Err(err) => {
            super::report_error(format_args!("migration failed: {err}"));
            ExitCode::FAILURE
        }
    }
}
