//! `matchplane`: the one binary. CLI only: each subcommand parses its
//! arguments (every flag has an environment variable) and calls a crate.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cmd;

/// Multi-tenant matchmaking control plane.
#[derive(Parser)]
#[command(name = "matchplane", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the real matching core in virtual time over a scenario (SPEC 8).
    Simulate(cmd::simulate::SimulateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Simulate(args) => cmd::simulate::run(&args),
    }
}
