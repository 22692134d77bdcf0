//! `matchplane`: the one binary. CLI only; every subcommand calls a crate.
fn main() {}
