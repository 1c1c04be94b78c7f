//! The MCP-layer checks: one table, one declaration per check (id, title, cited IDs, the
//! function that runs it), and the [`Check`] they all implement. Every check runs once, with its own connection pool and its own
//! session, in whichever era its rules belong to.

pub mod capability;
pub mod expect;
pub mod jsonrpc;
pub mod ladder;
pub mod lifecycle;
pub mod modern;
pub mod origin;
pub mod stdio;
pub mod tools;

use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use crate::engine::check::{Bindings, Check, CheckCtx, CheckOutcome};
use crate::engine::finding::Step;
use crate::engine::requirements::Catalogue;
use crate::engine::verdict::Verdict;
use crate::mcp::part::McpPart;
use crate::mcp::wire::Wire;

/// Runs one check's body on its wire and the pre-flight's part (`timeout`: the target's,
/// for checks that wait on a child process).
pub type Runner =
    for<'a> fn(&'a mut Wire, &'a McpPart, std::time::Duration) -> BoxFuture<'a, Step<()>>;

/// One check, declared once: id, title, cited requirement IDs (first = primary), and the
/// function that runs it. A new check is one row of [`table`] and its function.
#[derive(Clone, Copy)]
pub struct Decl {
    /// Stable id (`MCP-LC-1/initialize`).
    pub id: &'static str,
    /// One line.
    pub title: &'static str,
    /// Cited requirement IDs, the primary first.
    pub rules: &'static [&'static str],
    /// What runs.
    pub run: Runner,
}

/// A check body as a [`Runner`]: `async fn(&mut Wire, &McpPart)`, or one that also takes
/// the target's timeout (`runs!(f, timeout)`).
macro_rules! runs {
    ($f:path) => {
        runs!(@wrap |w, p, _timeout| $f(w, p))
    };
    ($f:path, timeout) => {
        runs!(@wrap |w, p, timeout| $f(w, p, timeout))
    };
    (@wrap |$w:ident, $p:ident, $t:ident| $call:expr) => {{
        fn run<'a>(
            $w: &'a mut Wire,
            $p: &'a McpPart,
            $t: std::time::Duration,
        ) -> BoxFuture<'a, Step<()>> {
            $call.boxed()
        }
        run as Runner
    }};
}

/// Every check, in report order.
pub fn table() -> Vec<Decl> {
    vec![
        Decl {
            id: "MCP-LC-1/initialize",
            title: "initialize answers protocolVersion, capabilities, serverInfo",
            rules: &["MCP-LC-1"],
            run: runs!(lifecycle::initialize_result),
        },
        Decl {
            id: "MCP-LC-2/negotiation",
            title: "version negotiation answers supported versions only, consistently",
            rules: &["MCP-LC-2"],
            run: runs!(lifecycle::negotiation),
        },
        Decl {
            id: "MCP-LC-3/older-versions",
            title: "2025-06-18 and 2025-03-26 clients are negotiated",
            rules: &["MCP-LC-3"],
            run: runs!(lifecycle::older_versions),
        },
        Decl {
            id: "MCP-LC-4/initialize-bad-params",
            title: "initialize with missing or invalid params: -32602",
            rules: &["MCP-LC-4"],
            run: runs!(lifecycle::initialize_bad_params),
        },
        Decl {
            id: "MCP-LC-5/initialized-202",
            title: "notifications/initialized: 202 with no body",
            rules: &["MCP-LC-5"],
            run: runs!(lifecycle::initialized_202),
        },
        Decl {
            id: "MCP-LC-6/bogus-version-header",
            title: "invalid or unsupported MCP-Protocol-Version: 400",
            rules: &["MCP-LC-6"],
            run: runs!(lifecycle::bogus_version_header),
        },
        Decl {
            id: "MCP-LC-7/absent-version-header",
            title: "no MCP-Protocol-Version header: still served",
            rules: &["MCP-LC-7"],
            run: runs!(lifecycle::absent_version_header),
        },
        Decl {
            id: "MCP-LC-8/unknown-session",
            title: "a session id never issued: 404",
            rules: &["MCP-LC-8"],
            run: runs!(lifecycle::unknown_session),
        },
        Decl {
            id: "MCP-LC-9/delete-session",
            title: "DELETE terminates the session (then 404) or answers 405",
            rules: &["MCP-LC-9", "MCP-LC-8"],
            run: runs!(lifecycle::delete_session),
        },
        Decl {
            id: "MCP-LC-10/get",
            title: "GET: an SSE stream or 405",
            rules: &["MCP-LC-10"],
            run: runs!(lifecycle::get_stream),
        },
        Decl {
            id: "MCP-LC-11/ping",
            title: "ping: an empty result",
            rules: &["MCP-LC-11"],
            run: runs!(lifecycle::ping),
        },
        Decl {
            id: "MCP-LC-12/missing-session",
            title: "no session id where sessions are issued: 400",
            rules: &["MCP-LC-12"],
            run: runs!(lifecycle::missing_session),
        },
        Decl {
            id: "MCP-TL-1/list",
            title: "tools/list shapes, unique names, pagination",
            rules: &["MCP-TL-1"],
            run: runs!(tools::list),
        },
        Decl {
            id: "MCP-TL-2/bad-cursor",
            title: "tools/list with a cursor never issued: -32602",
            rules: &["MCP-TL-2"],
            run: runs!(tools::bad_cursor),
        },
        Decl {
            id: "MCP-TL-3/unknown-tool",
            title: "tools/call of an unknown tool: -32602",
            rules: &["MCP-TL-3"],
            run: runs!(tools::unknown_tool),
        },
        Decl {
            id: "MCP-TL-4/call-result",
            title: "tools/call result: content, isError, structuredContent vs outputSchema",
            rules: &["MCP-TL-4"],
            run: runs!(tools::call_result),
        },
        Decl {
            id: "MCP-MD-1/discover",
            title: "server/discover: supportedVersions and capabilities",
            rules: &["MCP-MD-1"],
            run: runs!(modern::discover),
        },
        Decl {
            id: "MCP-MD-2/result-type",
            title: "2026-07-28 results carry resultType",
            rules: &["MCP-MD-2"],
            run: runs!(modern::result_type),
        },
        Decl {
            id: "MCP-MD-3/version-header-mismatch",
            title: "MCP-Protocol-Version missing or unequal to _meta: 400 + -32020 (MCP26-1)",
            rules: &["MCP-MD-3"],
            run: runs!(modern::version_mismatch),
        },
        Decl {
            id: "MCP-MD-4/method-header-mismatch",
            title: "Mcp-Method vs body mismatch: 400 + -32020 (MCP26-1)",
            rules: &["MCP-MD-4"],
            run: runs!(modern::method_mismatch),
        },
        Decl {
            id: "MCP-MD-5/name-header-mismatch",
            title: "Mcp-Name vs body mismatch: 400 + -32020 (MCP26-1)",
            rules: &["MCP-MD-5"],
            run: runs!(modern::name_mismatch),
        },
        Decl {
            id: "MCP-MD-6/unsupported-version",
            title: "unsupported version: 400 + -32022 with data.supported (MCP26-2)",
            rules: &["MCP-MD-6"],
            run: runs!(modern::unsupported_version),
        },
        Decl {
            id: "MCP-MD-7/missing-meta",
            title: "no _meta in a 2026-07-28 request: 400 + -32602 or -32020 (MCP26-4, MCP26-6)",
            rules: &["MCP-MD-7"],
            run: runs!(modern::missing_meta),
        },
        Decl {
            id: "MCP-MD-8/unknown-methods",
            title: "unknown and removed methods: 404 + -32601 (MCP26-3)",
            rules: &["MCP-MD-8"],
            run: runs!(modern::unknown_methods),
        },
        Decl {
            id: "MCP-MD-9/no-session",
            title: "no Mcp-Session-Id in 2026-07-28",
            rules: &["MCP-MD-9"],
            run: runs!(modern::no_session),
        },
        Decl {
            id: "MCP-RPC-1/unparsable",
            title: "unparsable and empty bodies: 4xx",
            rules: &["MCP-RPC-1"],
            run: runs!(jsonrpc::unparsable),
        },
        Decl {
            id: "MCP-RPC-2/invalid-requests",
            title: "invalid request objects: -32600",
            rules: &["MCP-RPC-2"],
            run: runs!(jsonrpc::invalid_requests),
        },
        Decl {
            id: "MCP-RPC-3/huge-id",
            title: "an id beyond 64 bits: echoed exactly or -32600",
            rules: &["MCP-RPC-3"],
            run: runs!(jsonrpc::huge_id),
        },
        Decl {
            id: "MCP-RPC-4/batch",
            title: "a JSON-RPC batch is refused",
            rules: &["MCP-RPC-4"],
            run: runs!(jsonrpc::batch),
        },
        Decl {
            id: "MCP-RPC-5/unknown-method",
            title: "an unknown method: -32601",
            rules: &["MCP-RPC-5"],
            run: runs!(jsonrpc::unknown_method),
        },
        Decl {
            id: "MCP-RPC-6/notification",
            title: "a notification gets 202 or a 4xx, never a response",
            rules: &["MCP-RPC-6"],
            run: runs!(jsonrpc::notification),
        },
        Decl {
            id: "MCP-RPC-7/duplicate-ids",
            title: "two requests in flight with one id are each answered",
            rules: &["MCP-RPC-7"],
            run: runs!(jsonrpc::duplicate_ids),
        },
        Decl {
            id: "MCP-OR-1/foreign-origin",
            title: "a foreign Origin: 403",
            rules: &["MCP-OR-1"],
            run: runs!(origin::foreign_origin),
        },
        Decl {
            id: "MCP-OR-2/foreign-host",
            title: "a foreign Host on loopback: 4xx",
            rules: &["MCP-OR-2"],
            run: runs!(origin::foreign_host),
        },
        Decl {
            id: "MCP-CAP-1/advertised-served",
            title: "advertised capabilities are served",
            rules: &["MCP-CAP-1"],
            run: runs!(capability::advertised_served),
        },
        Decl {
            id: "MCP-CAP-2/unadvertised-refused",
            title: "capabilities not advertised are refused with -32601",
            rules: &["MCP-CAP-2"],
            run: runs!(capability::unadvertised_refused),
        },
        Decl {
            id: "MCP-ST-1/stdout-only-jsonrpc",
            title: "stdio: stdout carries only JSON-RPC messages",
            rules: &["MCP-ST-1"],
            run: runs!(stdio::only_jsonrpc, timeout),
        },
        Decl {
            id: "MCP-ST-2/garbage-line",
            title: "stdio: a garbage line does not stop the server",
            rules: &["MCP-ST-2"],
            run: runs!(stdio::survives_garbage, timeout),
        },
    ]
}

/// One MCP-layer check.
pub struct McpCheck {
    decl: Decl,
    requirements: Vec<String>,
    /// A cited rule is required: a violation fails (otherwise it warns).
    must: bool,
}

/// Every MCP-layer check, levels taken from `catalogue`.
pub fn checks(catalogue: &Catalogue) -> Vec<Arc<dyn Check>> {
    table()
        .into_iter()
        .map(|decl| {
            let requirements: Vec<String> = decl.rules.iter().map(|r| (*r).to_string()).collect();
            let must = catalogue.any_required(&requirements[..1]);
            Arc::new(McpCheck {
                decl,
                requirements,
                must,
            }) as Arc<dyn Check>
        })
        .collect()
}

impl Check for McpCheck {
    fn id(&self) -> &str {
        self.decl.id
    }
    fn title(&self) -> &str {
        self.decl.title
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        self.decl.id.split('-').nth(1).map_or("mcp", |a| match a {
            "LC" => "lifecycle",
            "TL" => "tools",
            "MD" => "stateless era",
            "RPC" => "json-rpc",
            "OR" => "origin",
            "CAP" => "capabilities",
            "ST" => "stdio",
            _ => "mcp",
        })
    }
    fn bindings(&self) -> Bindings {
        Bindings::Once
    }
    fn describe(&self) -> Option<String> {
        Some(format!(
            "MCP-layer check {} (its row in harness/src/mcp/checks/mod.rs names the function), against the target's MCP endpoint",
            self.decl.id
        ))
    }
    fn run<'a>(&'a self, ctx: &'a CheckCtx) -> BoxFuture<'a, CheckOutcome> {
        async move {
            let Some(part) = ctx.target.part::<McpPart>() else {
                return CheckOutcome::verdict(Verdict::not_offered(
                    "the MCP pre-flight did not run",
                ));
            };
            // Its own pool: a DELETE or a refused Host must not poison another check's connections.
            let client = match ctx.target.client.renewed() {
                Ok(c) => c,
                Err(e) => {
                    return CheckOutcome::verdict(Verdict::HarnessError {
                        message: e.to_string(),
                    });
                }
            };
            let mut wire = Wire::new(client, &part.url, part.profile.token.clone());
            let result = (self.decl.run)(&mut wire, part, ctx.target.timeout).await;
            crate::engine::check::CheckOutcome::scripted(
                self.decl.id,
                &self.requirements,
                self.must,
                result,
                &wire.warnings,
                wire.exchanges,
            )
        }
        .boxed()
    }
}
