//! `matchplane`: the one binary. CLI only: each subcommand parses its
//! arguments (every flag has an environment variable) and calls a crate.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cmd;

/// mimalloc instead of the system allocator: the API's hot path (ticket
/// generation) allocates per request, and glibc's malloc cost about a fifth of
/// its CPU under load (api/README.md, "Benchmark").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Multi-tenant matchmaking control plane.
#[derive(Parser)]
#[command(name = "matchplane", version, about)]
struct Cli {
    /// Log format: `human` (default) or `json`.
    #[arg(
        long,
        global = true,
        env = "MATCHPLANE_LOG_FORMAT",
        value_enum,
        default_value = "human"
    )]
    log_format: cmd::logging::LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// API and worker in one process on the embedded default (SQLite file,
    /// in-process pools): the laptop command.
    Dev(cmd::dev::DevArgs),
    /// Serve the control-plane REST API.
    Api(cmd::api::ApiArgs),
    /// Apply the database migrations (or `--check` how many are pending).
    Migrate(cmd::migrate::MigrateArgs),
    /// Print the OpenAPI document of the API.
    Openapi(cmd::openapi::OpenapiArgs),
    /// Run the real matching core in virtual time over a scenario (docs/simulate.md).
    Simulate(cmd::simulate::SimulateArgs),
    /// Run the per-mode matchmaking cycles and webhook delivery.
    Worker(cmd::worker::WorkerArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cmd::logging::init(cli.log_format);
    match cli.command {
        Command::Dev(args) => cmd::runtime::block_on(cmd::dev::run(args)),
        Command::Api(args) => cmd::runtime::block_on(cmd::api::run(args)),
        Command::Migrate(args) => cmd::runtime::block_on(cmd::migrate::run(args)),
        Command::Openapi(args) => cmd::runtime::block_on(cmd::openapi::run(args)),
        Command::Simulate(args) => cmd::simulate::run(&args),
        Command::Worker(args) => cmd::runtime::block_on(cmd::worker::run(args)),
    }
}
