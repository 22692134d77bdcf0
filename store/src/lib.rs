//! matchplane-store: placeholder until its issue lands.
