//! Parley HTTP binding (`/v1/...`).
