//! The harness's two transports as bindings a protocol may declare: [`HTTP`] (plain HTTP
//! routes, the harness's HTTP client) and [`MCP`] (MCP tools over Streamable HTTP, its MCP
//! client). The engine knows neither: it plans over the [`Binding`] ids a protocol declares,
//! and a protocol reached over these transports maps each id to its [`TransportKind`] here.

use crate::engine::binding::{self, Binding};
use crate::transport::TransportKind;

/// Plain HTTP routes.
pub const HTTP: Binding = Binding::new("http");
/// MCP tools over Streamable HTTP.
pub const MCP: Binding = Binding::new("mcp");
/// Both, in the order a run takes them.
pub const BOTH: [Binding; 2] = [HTTP, MCP];

/// The transports of the bindings `selected` takes (a run's `--transport` choice, see
/// `binding::selection`; empty = both), in [`BOTH`]'s order.
pub fn kinds(selected: &[Binding]) -> Vec<TransportKind> {
    BOTH.iter()
        .filter(|b| binding::selects(selected, **b))
        .filter_map(|b| kind(*b))
        .collect()
}

/// The transport of a binding (`None`: not one of these two).
pub fn kind(binding: Binding) -> Option<TransportKind> {
    if binding == HTTP {
        Some(TransportKind::Http)
    } else if binding == MCP {
        Some(TransportKind::Mcp)
    } else {
        None
    }
}

/// The binding of a transport.
impl From<TransportKind> for Binding {
    fn from(kind: TransportKind) -> Self {
        match kind {
            TransportKind::Http => HTTP,
            TransportKind::Mcp => MCP,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each transport's binding maps back to it, and a foreign binding to none.
    #[test]
    fn bindings_and_transports_map_both_ways() {
        for k in [TransportKind::Http, TransportKind::Mcp] {
            assert_eq!(kind(Binding::from(k)), Some(k));
            assert_eq!(Binding::from(k).as_str(), k.as_str());
        }
        assert_eq!(kind(Binding::new("alpha")), None);
    }
}
