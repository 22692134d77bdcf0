//! One module per subcommand.

pub mod api;
pub mod dev;
pub mod logging;
pub mod migrate;
pub mod openapi;
pub mod runtime;
pub mod simulate;
pub mod worker;
