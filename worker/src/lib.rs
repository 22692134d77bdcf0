//! matchplane-worker: the worker side of matchplane. For now it holds the
//! signed match-made webhooks of SPEC 6 ([`webhook`]).

pub mod webhook;
