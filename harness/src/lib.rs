//! conform.
