//! Test helpers: a scripted receiver, an independent verifier, fixtures,
//! and a delivery run to its end.

pub mod fixtures;
pub mod receiver;
pub mod run;
pub mod verify;
