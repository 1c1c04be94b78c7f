//! SSP execution lifecycle rules (pure).
