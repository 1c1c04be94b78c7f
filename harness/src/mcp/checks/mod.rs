//! The MCP-layer checks: one table (id, title, cited IDs, what runs), and the [`Check`]
//! they all implement. Every check runs once, with its own connection pool and its own
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

/// What a check runs: each variant is the function of the same name in a submodule, and
/// [`table`] gives its title and rule.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    InitializeResult,
    Negotiation,
    OlderVersions,
    InitializeBadParams,
    Initialized202,
    BogusVersionHeader,
    AbsentVersionHeader,
    UnknownSession,
    DeleteSession,
    GetStream,
    Ping,
    MissingSession,
    ToolsList,
    BadCursor,
    UnknownTool,
    CallResult,
    Discover,
    ResultType,
    VersionMismatch,
    MethodMismatch,
    NameMismatch,
    UnsupportedVersion,
    MissingMeta,
    ModernUnknownMethods,
    NoSession,
    Unparsable,
    InvalidRequests,
    HugeId,
    Batch,
    UnknownMethod,
    Notification,
    DuplicateIds,
    ForeignOrigin,
    ForeignHost,
    AdvertisedServed,
    UnadvertisedRefused,
    StdioOnlyJsonRpc,
    StdioGarbage,
}

/// Every check: id, title, cited requirement IDs (first = primary), kind.
pub fn table() -> Vec<(&'static str, &'static str, &'static [&'static str], Kind)> {
    use Kind::*;
    vec![
        (
            "MCP-LC-1/initialize",
            "initialize answers protocolVersion, capabilities, serverInfo",
            &["MCP-LC-1"],
            InitializeResult,
        ),
        (
            "MCP-LC-2/negotiation",
            "version negotiation answers supported versions only, consistently",
            &["MCP-LC-2"],
            Negotiation,
        ),
        (
            "MCP-LC-3/older-versions",
            "2025-06-18 and 2025-03-26 clients are negotiated",
            &["MCP-LC-3"],
            OlderVersions,
        ),
        (
            "MCP-LC-4/initialize-bad-params",
            "initialize with missing or invalid params: -32602",
            &["MCP-LC-4"],
            InitializeBadParams,
        ),
        (
            "MCP-LC-5/initialized-202",
            "notifications/initialized: 202 with no body",
            &["MCP-LC-5"],
            Initialized202,
        ),
        (
            "MCP-LC-6/bogus-version-header",
            "invalid or unsupported MCP-Protocol-Version: 400",
            &["MCP-LC-6"],
            BogusVersionHeader,
        ),
        (
            "MCP-LC-7/absent-version-header",
            "no MCP-Protocol-Version header: still served",
            &["MCP-LC-7"],
            AbsentVersionHeader,
        ),
        (
            "MCP-LC-8/unknown-session",
            "a session id never issued: 404",
            &["MCP-LC-8"],
            UnknownSession,
        ),
        (
            "MCP-LC-9/delete-session",
            "DELETE terminates the session (then 404) or answers 405",
            &["MCP-LC-9", "MCP-LC-8"],
            DeleteSession,
        ),
        (
            "MCP-LC-10/get",
            "GET: an SSE stream or 405",
            &["MCP-LC-10"],
            GetStream,
        ),
        (
            "MCP-LC-11/ping",
            "ping: an empty result",
            &["MCP-LC-11"],
            Ping,
        ),
        (
            "MCP-LC-12/missing-session",
            "no session id where sessions are issued: 400",
            &["MCP-LC-12"],
            MissingSession,
        ),
        (
            "MCP-TL-1/list",
            "tools/list shapes, unique names, pagination",
            &["MCP-TL-1"],
            ToolsList,
        ),
        (
            "MCP-TL-2/bad-cursor",
            "tools/list with a cursor never issued: -32602",
            &["MCP-TL-2"],
            BadCursor,
        ),
        (
            "MCP-TL-3/unknown-tool",
            "tools/call of an unknown tool: -32602",
            &["MCP-TL-3"],
            UnknownTool,
        ),
        (
            "MCP-TL-4/call-result",
            "tools/call result: content, isError, structuredContent vs outputSchema",
            &["MCP-TL-4"],
            CallResult,
        ),
        (
            "MCP-MD-1/discover",
            "server/discover: supportedVersions and capabilities",
            &["MCP-MD-1"],
            Discover,
        ),
        (
            "MCP-MD-2/result-type",
            "2026-07-28 results carry resultType",
            &["MCP-MD-2"],
            ResultType,
        ),
        (
            "MCP-MD-3/version-header-mismatch",
            "MCP-Protocol-Version missing or unequal to _meta: 400 + -32020 (MCP26-1)",
            &["MCP-MD-3"],
            VersionMismatch,
        ),
        (
            "MCP-MD-4/method-header-mismatch",
            "Mcp-Method vs body mismatch: 400 + -32020 (MCP26-1)",
            &["MCP-MD-4"],
            MethodMismatch,
        ),
        (
            "MCP-MD-5/name-header-mismatch",
            "Mcp-Name vs body mismatch: 400 + -32020 (MCP26-1)",
            &["MCP-MD-5"],
            NameMismatch,
        ),
        (
            "MCP-MD-6/unsupported-version",
            "unsupported version: 400 + -32022 with data.supported (MCP26-2)",
            &["MCP-MD-6"],
            UnsupportedVersion,
        ),
        (
            "MCP-MD-7/missing-meta",
            "no _meta in a 2026-07-28 request: 400 + -32602 or -32020 (MCP26-4, MCP26-6)",
            &["MCP-MD-7"],
            MissingMeta,
        ),
        (
            "MCP-MD-8/unknown-methods",
            "unknown and removed methods: 404 + -32601 (MCP26-3)",
            &["MCP-MD-8"],
            ModernUnknownMethods,
        ),
        (
            "MCP-MD-9/no-session",
            "no Mcp-Session-Id in 2026-07-28",
            &["MCP-MD-9"],
            NoSession,
        ),
        (
            "MCP-RPC-1/unparsable",
            "unparsable and empty bodies: 4xx",
            &["MCP-RPC-1"],
            Unparsable,
        ),
        (
            "MCP-RPC-2/invalid-requests",
            "invalid request objects: -32600",
            &["MCP-RPC-2"],
            InvalidRequests,
        ),
        (
            "MCP-RPC-3/huge-id",
            "an id beyond 64 bits: echoed exactly or -32600",
            &["MCP-RPC-3"],
            HugeId,
        ),
        (
            "MCP-RPC-4/batch",
            "a JSON-RPC batch is refused",
            &["MCP-RPC-4"],
            Batch,
        ),
        (
            "MCP-RPC-5/unknown-method",
            "an unknown method: -32601",
            &["MCP-RPC-5"],
            UnknownMethod,
        ),
        (
            "MCP-RPC-6/notification",
            "a notification gets 202 or a 4xx, never a response",
            &["MCP-RPC-6"],
            Notification,
        ),
        (
            "MCP-RPC-7/duplicate-ids",
            "two requests in flight with one id are each answered",
            &["MCP-RPC-7"],
            DuplicateIds,
        ),
        (
            "MCP-OR-1/foreign-origin",
            "a foreign Origin: 403",
            &["MCP-OR-1"],
            ForeignOrigin,
        ),
        (
            "MCP-OR-2/foreign-host",
            "a foreign Host on loopback: 4xx",
            &["MCP-OR-2"],
            ForeignHost,
        ),
        (
            "MCP-CAP-1/advertised-served",
            "advertised capabilities are served",
            &["MCP-CAP-1"],
            AdvertisedServed,
        ),
        (
            "MCP-CAP-2/unadvertised-refused",
            "capabilities not advertised are refused with -32601",
            &["MCP-CAP-2"],
            UnadvertisedRefused,
        ),
        (
            "MCP-ST-1/stdout-only-jsonrpc",
            "stdio: stdout carries only JSON-RPC messages",
            &["MCP-ST-1"],
            StdioOnlyJsonRpc,
        ),
        (
            "MCP-ST-2/garbage-line",
            "stdio: a garbage line does not stop the server",
            &["MCP-ST-2"],
            StdioGarbage,
        ),
    ]
}

async fn run_kind(kind: Kind, w: &mut Wire, p: &McpPart, timeout: std::time::Duration) -> Step<()> {
    use Kind::*;
    match kind {
        InitializeResult => lifecycle::initialize_result(w, p).await,
        Negotiation => lifecycle::negotiation(w, p).await,
        OlderVersions => lifecycle::older_versions(w, p).await,
        InitializeBadParams => lifecycle::initialize_bad_params(w, p).await,
        Initialized202 => lifecycle::initialized_202(w, p).await,
        BogusVersionHeader => lifecycle::bogus_version_header(w, p).await,
        AbsentVersionHeader => lifecycle::absent_version_header(w, p).await,
        UnknownSession => lifecycle::unknown_session(w, p).await,
        DeleteSession => lifecycle::delete_session(w, p).await,
        GetStream => lifecycle::get_stream(w, p).await,
        Ping => lifecycle::ping(w, p).await,
        MissingSession => lifecycle::missing_session(w, p).await,
        ToolsList => tools::list(w, p).await,
        BadCursor => tools::bad_cursor(w, p).await,
        UnknownTool => tools::unknown_tool(w, p).await,
        CallResult => tools::call_result(w, p).await,
        Discover => modern::discover(w, p).await,
        ResultType => modern::result_type(w, p).await,
        VersionMismatch => modern::version_mismatch(w, p).await,
        MethodMismatch => modern::method_mismatch(w, p).await,
        NameMismatch => modern::name_mismatch(w, p).await,
        UnsupportedVersion => modern::unsupported_version(w, p).await,
        MissingMeta => modern::missing_meta(w, p).await,
        ModernUnknownMethods => modern::unknown_methods(w, p).await,
        NoSession => modern::no_session(w, p).await,
        Unparsable => jsonrpc::unparsable(w, p).await,
        InvalidRequests => jsonrpc::invalid_requests(w, p).await,
        HugeId => jsonrpc::huge_id(w, p).await,
        Batch => jsonrpc::batch(w, p).await,
        UnknownMethod => jsonrpc::unknown_method(w, p).await,
        Notification => jsonrpc::notification(w, p).await,
        DuplicateIds => jsonrpc::duplicate_ids(w, p).await,
        ForeignOrigin => origin::foreign_origin(w, p).await,
        ForeignHost => origin::foreign_host(w, p).await,
        AdvertisedServed => capability::advertised_served(w, p).await,
        UnadvertisedRefused => capability::unadvertised_refused(w, p).await,
        StdioOnlyJsonRpc => stdio::only_jsonrpc(w, p, timeout).await,
        StdioGarbage => stdio::survives_garbage(w, p, timeout).await,
    }
}

/// One MCP-layer check.
pub struct McpCheck {
    id: &'static str,
    title: &'static str,
    requirements: Vec<String>,
    /// A cited rule is required: a violation fails (otherwise it warns).
    must: bool,
    kind: Kind,
}

/// Every MCP-layer check, levels taken from `catalogue`.
pub fn checks(catalogue: &Catalogue) -> Vec<Arc<dyn Check>> {
    table()
        .into_iter()
        .map(|(id, title, reqs, kind)| {
            let requirements: Vec<String> = reqs.iter().map(|r| (*r).to_string()).collect();
            let must = catalogue.any_required(&requirements[..1]);
            Arc::new(McpCheck {
                id,
                title,
                requirements,
                must,
                kind,
            }) as Arc<dyn Check>
        })
        .collect()
}

impl Check for McpCheck {
    fn id(&self) -> &str {
        self.id
    }
    fn title(&self) -> &str {
        self.title
    }
    fn requirements(&self) -> &[String] {
        &self.requirements
    }
    fn area(&self) -> &str {
        self.id.split('-').nth(1).map_or("mcp", |a| match a {
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
            "MCP-layer check ({:?}) in harness/src/mcp/checks/, against the target's MCP endpoint",
            self.kind
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
            let result = run_kind(self.kind, &mut wire, part, ctx.target.timeout).await;
            crate::engine::finding::outcome(
                self.id,
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
