//! The async runtime of the server subcommands, made once at start-up.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

/// How long tasks still running when a subcommand returns (a
/// reconnection to a store that stopped answering, a blocking read) may
/// hold the process's exit.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Runs an async subcommand on a multi-threaded tokio runtime; once it
/// returns, the process exits within [`SHUTDOWN_GRACE`].
pub fn block_on(command: impl Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => {
            let code = runtime.block_on(command);
            runtime.shutdown_timeout(SHUTDOWN_GRACE);
            code
        }
        Err(err) => {
            super::report_error(format_args!("cannot start the async runtime: {err}"));
            ExitCode::FAILURE
        }
    }
}

/// Completes on Ctrl-C or (on Unix) SIGTERM: the shutdown signal of servers.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
