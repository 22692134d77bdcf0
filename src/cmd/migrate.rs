//! `matchplane migrate`: applies the control-plane migrations, or with
//! `--check` only reports how many are pending (exit 1 when any is).

use clap::Args;
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

/// Applies (or checks) the migrations. Exit 1 on a database error, or with
/// `--check` when migrations are pending.
pub async fn run(args: MigrateArgs) -> ExitCode {
    // A database out of reach fails in seconds, as `api` does, so that
    // `migrate --check` serves as a quick pre-flight (sqlx's own default
    // waited 30 s); a migration's statements themselves are not bounded.
    let timeouts = matchplane_store::db::DbTimeouts::default();
    let db = match matchplane_store::db::connect_with(&args.database_url, timeouts).await {
        Ok(db) => db,
        Err(err) => {
            eprintln!("error: cannot connect to the database: {err}");
            return ExitCode::FAILURE;
        }
    };
    let pending = match matchplane_migrations::pending(&db).await {
        Ok(n) => n,
        Err(err) => {
            eprintln!("error: cannot read the migration state: {err}");
            return ExitCode::FAILURE;
        }
    };
    if args.check {
        println!("{pending} migration(s) pending");
        return if pending == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    match matchplane_migrations::migrate(&db).await {
        Ok(()) => {
            println!("applied {pending} migration(s); the database is up to date");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: migration failed: {err}");
            ExitCode::FAILURE
        }
    }
}
