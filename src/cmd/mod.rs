//! One module per subcommand.

pub mod api;
pub mod dev;
pub mod limits;
pub mod logging;
pub mod migrate;
pub mod openapi;
pub mod runtime;
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
            eprintln!("error: cannot write to standard output: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}
