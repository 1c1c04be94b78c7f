//! SSP provider: schema, demo skills, executions.
