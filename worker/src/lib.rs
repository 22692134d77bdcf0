//! matchplane-worker: placeholder until its issue lands.
