//! SSP provider routes.
