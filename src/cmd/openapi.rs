//! `matchplane openapi`: prints the OpenAPI document the API serves at
//! `/openapi.json` (the same that `openapi/openapi.json` snapshots).

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `matchplane openapi`.
#[derive(Args)]
pub struct OpenapiArgs {
    /// Write to this file instead of standard output.
    #[arg(long, env = "MATCHPLANE_OPENAPI_OUT")]
    pub out: Option<PathBuf>,
}

/// Prints or writes the document. Exit 1 when it cannot be written.
pub async fn run(args: OpenapiArgs) -> ExitCode {
    let json = match matchplane_api::openapi().to_pretty_json() {
        Ok(json) => json + "\n",
        Err(err) => {
            super::report_error(format_args!("cannot render the OpenAPI document: {err}"));
            return ExitCode::FAILURE;
        }
    };
    match args.out {
        Some(path) => match tokio::fs::write(&path, json).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                super::report_error(format_args!("cannot write {}: {err}", path.display()));
                ExitCode::FAILURE
            }
        },
        None => super::print_stdout(&json),
    }
}
