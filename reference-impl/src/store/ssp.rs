//! SSP tables: executions.

/// Ordered schema migrations for the SSP provider.
pub const MIGRATIONS: &[super::Migration] = &[];
