//! matchplane-api: placeholder until its issue lands.
