//! Fixture documents shared by tests and benches.

use serde_json::Value;

/// The seed §3.6 weather descriptor, verbatim.
pub(crate) const WEATHER: &str = include_str!("../fixtures/ssp/weather-descriptor.json");

/// [`WEATHER`] parsed.
pub(crate) fn weather() -> Value {
    serde_json::from_str(WEATHER).expect("fixture is JSON")
}
