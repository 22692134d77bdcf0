//! matchplane-migrations: placeholder until its issue lands.
