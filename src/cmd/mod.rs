//! One module per subcommand.

pub mod simulate;
