//! Test helpers: a scripted receiver, an independent verifier, fixtures.

pub mod fixtures;
pub mod receiver;
pub mod verify;
