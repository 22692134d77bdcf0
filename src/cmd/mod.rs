//! One module per subcommand.

pub mod api;
pub mod dev;
pub mod limits;
pub mod logging;
pub mod migrate;
pub mod openapi;
pub mod runtime;
pub mod seconds;
pub mod simulate;
pub mod store_args;
pub mod worker;

/// Writes `text` to standard output. A reader that stopped early (`| head`)
/// is not an error: exit 0 without a word. Any other write error exits 1
/// with a message, never a panic.
pub fn print_stdout(text: &str) -> std::process::ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => std::process::ExitCode::SUCCESS,
        Err(err) => {
            report_error(format_args!("cannot write to standard output: {err}"));
            std::process::ExitCode::FAILURE
        }
    }
}

/// Writes `text` and a line break to standard output, or nothing when it
/// cannot be written: unlike `println!`, never a panic when the reader is
/// gone (a closed pipe), which would stop the task that printed.
pub fn say(text: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// Writes `text` and a line break to standard error, never a panic (see
/// [`say`]): a process whose standard error is a closed pipe still stops
/// with its own exit code.
pub fn say_err(text: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// A command's fatal error on standard error: `error: <message>` (see
/// [`say_err`]), or with `--log-format json` one JSON log line at level
/// `ERROR`, as the log lines before it, so that a log collector parses the
/// line that says why a process stopped.
pub fn report_error(message: impl std::fmt::Display) {
    if logging::is_json() {
        tracing::error!("{message}");
    } else {
        say_err(format_args!("error: {message}"));
    }
}

/// A secret setting given blank (`MATCHPLANE_OPERATOR_TOKEN=`, or spaces
/// only) is taken as not set (docs/configuration.md).
pub fn non_blank(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}
