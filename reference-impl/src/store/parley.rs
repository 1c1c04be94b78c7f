//! Parley tables: threads, messages, events, claims.

/// Ordered schema migrations for Parley.
pub const MIGRATIONS: &[super::Migration] = &[];
