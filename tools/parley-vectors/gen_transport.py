from dsl import *
from gen_shapes import raw

OPS = {
    "get_manifest": ("GET", "/v1/manifest"), "whoami": ("GET", "/v1/whoami"), "post": ("POST", "/v1/messages"),
    "read_thread": ("GET", "/v1/threads/{thread}"), "list_events": ("GET", "/v1/threads/{thread}/events"),
    "inbox": ("GET", "/v1/inbox"), "mark": ("POST", "/v1/threads/{thread}/state"),
    "reopen": ("POST", "/v1/threads/{thread}/reopen"), "read_claim": ("GET", "/v1/claims/{claim}"),
}
REASONS = ["invalid_body", "body_too_long", "kind_unknown", "thread_required", "evidence_required", "evidence_invalid",
           "token_missing", "token_invalid", "token_right_missing", "thread_authority_missing", "self_attest",
           "thread_not_found", "message_not_found", "claim_not_found", "not_found", "method_not_allowed",
           "invalid_transition", "thread_locked", "self_reply", "payload_too_large", "unsupported_media_type", "rate_limited"]
# PV-TR-3 `Content-Type: application/json`; media types are case-insensitive (RFC 9110 §8.3.1)
# and may carry parameters (`; charset=utf-8`).
JSON_CT = {"content-type": {"$regex": "(?i)^application/json"}}
# Attempts per quota probe: the target profile's `limited` role must have a whoami quota below
# 50 (checked at pre-flight), so 50 attempts exceed it whatever quota it declares (PV-TR-5: "a
# token row may set a lower one"); the reference's 5/min is not assumed.
QUOTA_PROBE = 50
# PV-TR-5 "429 rate_limited with Retry-After": RFC 9110 §10.2.3 allows delay-seconds or an
# HTTP-date (IMF-fixdate).
RETRY_AFTER = rx("^([0-9]+|[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT)$")


def V(vid, reqs, title, steps_fn, area="transport", **kw):
    CUR["id"] = vid
    return vector(area, vid, reqs, title, steps_fn(), **kw)


# ================================================================ manifest (PV-MF)
V("manifest/core-members", ["PV-MF-1"],
  "get_manifest returns parley \"1\", a SemVer version, limits, kinds, states, profiles, operations, reasons and identity.realm",
  lambda: [manifest("anonymous", {
      "parley": "1",
      "version": rx(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"),
      "limits": {"$type": "object"}, "kinds": {"$any": True}, "states": {"$type": "object"},
      "profiles": {"$type": "array"}, "operations": {"$one_of": [{"$type": "array"}, {"$type": "object"}]},
      "reasons": {"$type": "array"},
      "identity": {"realm": {"$type": "string"}}})], area="manifest")
# The seed fixes the 500 ("un corps d'au plus 500 caractères"); the other values are the
# target's own (PV-MF-2). The evidence limits belong to the dialectic profile: a server without
# it has no evidence to limit, so they are asked of servers listing the profile only.
V("manifest/limits", ["PV-MF-1", "PV-MF-2", "PV-EN-2"],
  "The manifest's limits declare every core limit of §2, and body_max_chars is the seed's 500",
  # PV-MF-2: "A server MUST declare body_max_chars 500 [...] a declared other value fails PV-MF-2."
  lambda: [on(manifest("anonymous", {"limits": {"body_max_chars": 500}}), "PV-MF-2"),
           manifest("anonymous", {"limits": {
      "extension_pattern": {"$type": "string"}, "request_max_bytes": {"$type": "integer"},
      "inbox_limit_default": {"$type": "integer"}, "inbox_limit_max": {"$type": "integer"},
      "provenance_max_chars": {"$type": "integer"}, "writes_per_minute": {"$type": "integer"}}})], area="manifest")
V("manifest/limits-dialectic", ["PV-MF-1", "PV-MF-2", "PV-DI-1"],
  "With the dialectic profile, the manifest's limits declare evidence_max and evidence_ref_max_chars",
  lambda: [manifest("anonymous", {"limits": {
      "evidence_max": {"$type": "integer"}, "evidence_ref_max_chars": {"$type": "integer"}}})],
  area="manifest", needs=["dialectic"])
V("manifest/states", ["PV-MF-1", "PV-ST-1", "PV-ST-3"],
  "The manifest lists the forward states in order and the three lateral states",
  lambda: [manifest("anonymous", {"states": {"forward": ["open", "answered", "decided", "closed"],
                                             "lateral": {"$one_of": [["deferred", "obsolete", "rejected"],
                                                                     {"$contains": ["deferred", "obsolete", "rejected"], }]}}})],
  area="manifest")
# PV-MF-1: `reasons` lists "every refusal reason the server can emit" — not every reason of
# §10: the dialectic reasons only when the profile is on, and unsupported_media_type only from
# a server that answers 415 (a SHOULD, PV-RS-4).
DIALECTIC_REASONS = ["evidence_required", "evidence_invalid", "self_attest", "claim_not_found"]
V("manifest/reasons", ["PV-MF-1"],
  "The manifest's reasons list every core refusal reason of §10",
  lambda: [manifest("anonymous", {"reasons": {"$contains": [
      r for r in REASONS if r not in DIALECTIC_REASONS and r != "unsupported_media_type"]}})], area="manifest")
V("manifest/reasons-dialectic", ["PV-MF-1", "PV-DI-1"],
  "With the dialectic profile, the manifest's reasons list the profile's refusal reasons too",
  lambda: [manifest("anonymous", {"reasons": {"$contains": DIALECTIC_REASONS}})], area="manifest", needs=["dialectic"])
V("manifest/reasons-415", ["PV-MF-1", "PV-RS-4"],
  "The manifest's reasons list unsupported_media_type (emitted by a server answering 415)",
  lambda: [manifest("anonymous", {"reasons": {"$contains": ["unsupported_media_type"]}})], area="manifest",
  advisory="PV-MF-1 asks for the reasons 'the server can emit' and 415 is a SHOULD (PV-RS-4): a server that never "
            "answers 415 rightly omits unsupported_media_type")
def operations_matcher(entries):
    """PV-MF-1: `operations` is "the table above, machine-readable": an array of rows naming
    their operation (`name`, or `operation` as the §1 table's column is headed), or an object
    keyed by operation. `entries` maps an operation to the matcher of its row's bindings."""
    return {"$one_of": [
        {"$contains": [{"$one_of": [dict({"name": n}, **m), dict({"operation": n}, **m)]} for n, m in entries.items()]},
        dict(entries),
    ]}


# PV-MF-1: `operations` is "the table above, machine-readable" — which operations, and that
# each names its MCP tool and HTTP route; not the JSON shape of a binding, nor the tool names
# or routes themselves (the preamble: the harness adapts to "operation routes ... a
# third-party server declares"). PV-TR-1a: neither binding null.
V("manifest/operations", ["PV-MF-1", "PV-TR-1a"],
  "The manifest's operations name the eight core operations, each with an MCP tool and an HTTP route (neither null), in any machine-readable shape",
  lambda: [manifest("anonymous", {"operations": operations_matcher(
      {n: {"mcp": tool_binding(), "http": http_binding(m)} for n, (m, _) in OPS.items() if n != "read_claim"})})],
  area="manifest")
V("manifest/operations-reference-routes", ["PV-TR-1a", "PV-TR-3"],
  "The HTTP routes declared for the nine operations are those of the §1 table",
  lambda: [manifest("anonymous", {"operations": operations_matcher(
      {n: {"http": {"$one_of": [{"method": m, "path": p}, f"{m} {p}"]}} for n, (m, p) in OPS.items() if n != "read_claim"})})],
  area="manifest",
  advisory="the §1 routes are the reference binding's; the preamble of parley-v1.md has the harness adapt to the "
            "operation routes a third-party server declares, so other routes are legal (reported for information)")
V("manifest/dialectic-profile", ["PV-MF-1", "PV-DI-8"],
  "The dialectic profile lists its four kinds, the five claim states and the eight evidence kinds",
  lambda: [manifest("anonymous", {"profiles": {"$contains": [{
      "name": "dialectic", "kinds": {"$contains": [kind_named(k) for k in ["assert", "attest", "refute", "verify"]]},
      "claim_states": {"$contains": ["unverified", "supported", "verified", "refuted", "superseded"]},
      "evidence_kinds": {"$contains": ["url", "hash", "artifact", "commit", "log", "reproducer", "note", "other"]}}]},
      "operations": operations_matcher({"read_claim": {"mcp": tool_binding(), "http": http_binding("GET")}})})],
  area="manifest", needs=["dialectic"])
V("manifest/same-for-any-caller", ["PV-MF-1", "PV-TR-4"],
  "get_manifest needs no token and gives the same version and limits with or without one",
  lambda: [manifest("anonymous", capture={"v": "/version", "bm": "/limits/body_max_chars", "rm": "/limits/request_max_bytes"}),
           manifest("agent_a", {"version": "$v", "limits": {"body_max_chars": "$bm", "request_max_bytes": "$rm"}}),
           manifest("reader", {"version": "$v"})], area="manifest")
V("manifest/extension-pattern-enforced", ["PV-MF-2", "PV-EN-7"],
  "The declared extension_pattern is enforced exactly: 32 characters accepted, 33 refused",
  lambda: [manifest("anonymous", {"limits": {"extension_pattern": {"$type": "string"}}}),
           post("agent_a", env("ask", ext="a" * 32), created()),
           post("agent_a", env("ask", ext="a" * 33), INVALID)], area="manifest", needs=NEEDS_REF_EXT)

# ================================================================ PV-TR-1a
V("transport/both-bindings-declared", ["PV-TR-1a"],
  "The manifest declares both bindings: an MCP endpoint and the HTTP routes (neither null)",
  lambda: [manifest("anonymous", {"operations": {"$one_of": [
      {"$not_contains": [{"mcp": None}, {"http": None}]},
      # keyed by operation (PV-MF-1 fixes no layout): no core operation's binding is null
      {n: {"mcp": {"$not": None}, "http": {"$not": None}} for n in OPS if n != "read_claim"}]}})])

# ================================================================ PV-TR-2 MCP
def rpc(as_, expect, body=None, body_json=None, headers=None):
    m = {}
    if body is not None:
        m["body"] = body
    if body_json is not None:
        m["body_json"] = body_json
    if headers:
        m["headers"] = headers
    return step(as_, mcp=m, expect=expect)


def rpc_err(code):
    # PV-TR-2 fixes the JSON-RPC code, not the HTTP status carrying it (200 or 4xx): any.
    return {"jsonrpc_error": {"code": code}}


def rpc_err_any(code):
    return {"jsonrpc_error": {"code": code}}


V("transport/mcp-parse-error", ["PV-TR-2"],
  "A JSON-RPC body that is not JSON gets a -32700 parse error (a JSON-RPC error object, not a plain-text refusal)",
  lambda: [rpc("agent_a", rpc_err(-32700), body='{"jsonrpc": "2.0", "id": 1, "method": ')])
V("transport/mcp-wrong-jsonrpc-version", ["PV-TR-2"],
  "jsonrpc \"1.0\" is an invalid request: -32600",
  lambda: [rpc("agent_a", rpc_err(-32600), body_json={"jsonrpc": "1.0", "id": 1, "method": "tools/list", "params": {}})])
V("transport/mcp-null-id", ["PV-TR-2"],
  "A request with id null is an invalid request: -32600",
  lambda: [rpc("agent_a", rpc_err(-32600), body_json={"jsonrpc": "2.0", "id": None, "method": "tools/list", "params": {}})])
# JSON has no integer range: a server may refuse the id (-32600) or answer it; answering with
# the id rounded is the defect, judged on the raw text by MCP-RPC-3 (issue 28: both pass here).
V("transport/mcp-id-above-u64", ["PV-TR-2"],
  "A request whose integer id is above the 64-bit range is refused -32600 or answered (issue 11 regression; the exact echo is MCP-RPC-3's)",
  lambda: [rpc("agent_a", one_of(rpc_err(-32600), ok(200, {"result": {"$type": "object"}})),
               body='{"jsonrpc": "2.0", "id": 18446744073709551616, "method": "tools/list", "params": {}}')])
V("transport/mcp-batch-rejected", ["PV-TR-2"],
  "A JSON-RPC batch array (removed from MCP) is an invalid request: -32600",
  lambda: [rpc("agent_a", rpc_err(-32600), body='[{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}]')])
V("transport/mcp-not-an-object", ["PV-TR-2"],
  "A JSON-RPC body that is a bare number is an invalid request: -32600",
  lambda: [rpc("agent_a", rpc_err(-32600), body="42")])
V("transport/mcp-unknown-method", ["PV-TR-2"],
  "An unknown JSON-RPC method gets -32601",
  lambda: [rpc("agent_a", rpc_err_any(-32601), body_json={"jsonrpc": "2.0", "id": 7, "method": "parley/frobnicate", "params": {}})])
V("transport/mcp-unknown-tool", ["PV-TR-2"],
  "tools/call of an unknown tool is a protocol fault: -32602 (not an isError refusal)",
  lambda: [rpc("agent_a", rpc_err_any(-32602),
               body_json={"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "delete_everything", "arguments": {}}})])
V("transport/mcp-refusal-is-tool-result", ["PV-TR-2"],
  "A raw tools/call post with an invalid envelope is a tool result with isError true and reason invalid_body, never a JSON-RPC error",
  lambda: [rpc("agent_a", INVALID,
               body_json={"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "$tool.post", "arguments": {"kind": "ask"}}})])
V("transport/mcp-auth-refusal-is-tool-result", ["PV-TR-2", "PV-TR-4"],
  "A raw tools/call whoami without a token is a tool result with isError true and reason token_missing",
  lambda: [rpc("anonymous", TOKEN_MISSING,
               body_json={"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "$tool.whoami", "arguments": {}}})])
V("transport/mcp-manifest-without-token", ["PV-TR-2", "PV-TR-4"],
  "A raw tools/call get_manifest without a token succeeds",
  lambda: [rpc("anonymous", ok(200, {"result": {"structuredContent": {"parley": "1"}}}),
               body_json={"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "$tool.get_manifest", "arguments": {}}})])

# ================================================================ PV-TR-3 HTTP
V("transport/http-unknown-route", ["PV-TR-3"],
  "GET /v1/nope is 404 not_found with the JSON error body",
  lambda: [raw("agent_a", "GET", "/v1/nope", expect=refused(404, "not_found", JSON_CT))])
V("transport/http-unknown-nested-route", ["PV-TR-3"],
  "GET /v1/threads/{an existing thread}/nope is 404 not_found (the thread exists: only the route is unknown)",
  lambda: [open_thread(), raw("agent_a", "GET", "/v1/threads/${t}/nope", expect=refused(404, "not_found"))])
V("transport/http-unknown-version-prefix", ["PV-TR-3"],
  "GET /v2/manifest is a 404 (in any error shape): the server does not serve Parley v1 under another version prefix",
  lambda: [raw("anonymous", "GET", "/v2/manifest", expect=one_of(refused(404, "not_found"), ok(404)))],
  advisory="/v2/... is outside Parley v1's namespace: the notes fix no answer there (another protocol may serve it "
            "on the same origin, in its own error shape); a 404 in any shape is expected, anything else is reported")
for method, path in [("DELETE", "/v1/messages"), ("GET", "/v1/messages"), ("PUT", "/v1/threads/th_1"),
                     ("POST", "/v1/manifest"), ("DELETE", "/v1/threads/th_1/state"), ("PATCH", "/v1/inbox")]:
    # On an existing thread (th_1 stands for it in the id): the resource exists, so §10's 405
    # method_not_allowed is the only answer (RFC 9110 §15.5.6), not a 404 for a missing thread.
    V(f"transport/http-405-{method.lower()}-{path.strip('/').replace('/', '-').replace('_', '-')}", ["PV-TR-3"],
      f"{method} {path.replace('th_1', '{an existing thread}')} is 405 method_not_allowed with the JSON error body",
      lambda method=method, path=path: ([open_thread()] if "th_1" in path else [])
      + [raw("agent_a", method, path.replace("th_1", "${t}"), expect=refused(405, "method_not_allowed", JSON_CT),
             body=None, headers=None)])
V("transport/http-refusal-content-type", ["PV-TR-3"],
  "A refusal (404 thread_not_found) is served as application/json with {error: {reason, status, message}}",
  lambda: [raw("agent_a", "GET", "/v1/threads/th_987654321",
               expect=refused(404, "thread_not_found", JSON_CT))])
V("transport/http-success-content-type", ["PV-TR-3"],
  "A success body is served as application/json",
  lambda: [raw("agent_a", "GET", "/v1/whoami", expect=ok(200, {"identity": ident("agent_a")}, JSON_CT))])
V("transport/http-inbox-query-parameters", ["PV-TR-3", "PV-RD-3"],
  "GET /v1/inbox?limit=1 reads limit from the query string",
  lambda: [open_thread(), open_thread(t="t2", r="r2"),
           raw("agent_b", "GET", "/v1/inbox?limit=1", expect=ok(200, {"items": {"$len": 1}}))])

# ================================================================ PV-TR-4 auth
V("transport/manifest-without-token", ["PV-TR-4"],
  "get_manifest needs no token",
  lambda: [manifest("anonymous", {"parley": "1"})])
V("transport/whoami-without-token", ["PV-TR-4"],
  "whoami without a token is 401 token_missing",
  lambda: [whoami("anonymous", expect=TOKEN_MISSING)])
V("transport/whoami-unknown-token", ["PV-TR-4"],
  "whoami with an unknown bearer token is 401 token_invalid",
  lambda: [whoami("agent_a", expect=TOKEN_INVALID, token="no-such-token-0000")])
V("transport/post-without-token", ["PV-TR-4"],
  "post without a token is 401 token_missing",
  lambda: [post("anonymous", env("ask"), TOKEN_MISSING)])
V("transport/post-unknown-token", ["PV-TR-4"],
  "post with an unknown token is 401 token_invalid",
  lambda: [post("agent_a", env("ask"), TOKEN_INVALID, token="no-such-token-0000")])
V("transport/mark-without-token", ["PV-TR-4"],
  "mark without a token is 401 token_missing",
  lambda: [open_thread(), mark("anonymous", "$t", "closed", TOKEN_MISSING)])
V("transport/inbox-unknown-token", ["PV-TR-4"],
  "inbox with an unknown token is 401 token_invalid",
  lambda: [step("agent_a", "inbox", {}, TOKEN_INVALID, token="no-such-token-0000")])
V("transport/http-basic-auth-scheme", ["PV-TR-4"],
  "An Authorization header with the Basic scheme is 401 (token_invalid or token_missing: there is no bearer token)",
  lambda: [raw("agent_a", "GET", "/v1/whoami", headers={"authorization": "Basic YWdlbnQ6c2VjcmV0"},
               expect=one_of(TOKEN_INVALID, TOKEN_MISSING))])
V("transport/http-empty-bearer", ["PV-TR-4"],
  "Authorization: Bearer with an empty token is 401",
  lambda: [raw("agent_a", "GET", "/v1/whoami", headers={"authorization": "Bearer "}, expect=one_of(TOKEN_INVALID, TOKEN_MISSING))])
V("transport/http-token-without-scheme", ["PV-TR-4"],
  "An Authorization header carrying a bare string without scheme is 401 (token_invalid or token_missing)",
  lambda: [raw("agent_a", "GET", "/v1/whoami", headers={"authorization": "garbage"},
               expect=one_of(TOKEN_INVALID, TOKEN_MISSING))])

# ================================================================ PV-TR-5 413 / 429
# PV-TR-5 / PV-MF-2: "Requests over limits.request_max_bytes → 413" — the declared value, not
# the reference's 65536 (a server declaring 1 MiB is as correct), so sizes derive from it.
def RMAX():
    return manifest("anonymous", {"limits": {"request_max_bytes": {"$type": "integer"}}},
                    capture={"rmax": "/limits/request_max_bytes"})


BIG = {"$repeat": {"s": "a", "n": {"$sum": ["$rmax", 1]}}}
# `{"kind":"ask","body":""}` is 24 bytes of compact JSON: a body of rmax - 24 characters makes
# a request of exactly request_max_bytes.
ENVELOPE_BYTES = 24
V("transport/payload-too-large", ["PV-TR-5"],
  "A request over the declared request_max_bytes (a body of request_max_bytes + 1 characters) is 413 payload_too_large, not 400 body_too_long",
  lambda: [RMAX(), post("agent_a", env("ask", b=BIG), TOO_LARGE)])
V("transport/payload-too-large-invalid-json-http", ["PV-TR-5", "PV-AU-6"],
  "An oversized body that is also invalid (unknown field) is 413 before 400",
  lambda: [RMAX(), raw("agent_a", "POST", "/v1/messages", headers={"content-type": "application/json"},
                       body_json={"kind": "ask", "body": BIG, "junk": True}, expect=TOO_LARGE)])
V("transport/order-401-before-413", ["PV-AU-6", "PV-TR-4"],
  "No token and an oversized body: 401 comes before 413",
  lambda: [RMAX(), post("anonymous", env("ask", b=BIG), TOKEN_MISSING)])
V("transport/order-403-before-413", ["PV-AU-6", "PV-AU-1"],
  "A reader with an oversized body: 403 token_right_missing comes before 413",
  lambda: [RMAX(), post("reader", env("ask", b=BIG), RIGHT_MISSING)])
V("transport/request-exactly-max-bytes", ["PV-TR-5", "PV-MF-2"],
  "A request of exactly the declared request_max_bytes (compact JSON) is not 413: it reaches the body check (400 body_too_long)",
  lambda: [RMAX(),
           raw("agent_a", "POST", "/v1/messages", headers={"content-type": "application/json"},
               body_json={"kind": "ask", "body": {"$repeat": {"s": "a", "n": {"$sum": ["$rmax", -ENVELOPE_BYTES]}}}},
               expect=TOO_LONG)])
V("transport/request-one-over-max-bytes", ["PV-TR-5", "PV-MF-2"],
  "A request of the declared request_max_bytes + 1 is 413 payload_too_large",
  lambda: [RMAX(),
           raw("agent_a", "POST", "/v1/messages", headers={"content-type": "application/json"},
               body_json={"kind": "ask", "body": {"$repeat": {"s": "a", "n": {"$sum": ["$rmax", 1 - ENVELOPE_BYTES]}}}},
               expect=TOO_LARGE)])
V("transport/quota-429-retry-after", ["PV-TR-5"],
  "Writes over the token's quota (its whoami quota_per_minute, below 50) get 429 rate_limited with a Retry-After header",
  lambda: [post("limited", env("ask", b=body("quota")), one_of(created(), RATE_LIMITED), repeat=QUOTA_PROBE,
                expect_seen=refused(429, "rate_limited", {"retry-after": RETRY_AFTER}))])
V("transport/quota-counts-refused-writes", ["PV-TR-5", "PV-AU-6"],
  "Write attempts that pass the right check count against the quota even when refused 400 later (429 comes before 400)",
  lambda: [post("limited", {"kind": "ask", "body": "", "junk": 1}, one_of(INVALID, RATE_LIMITED), repeat=QUOTA_PROBE,
                expect_seen=RATE_LIMITED)])
V("transport/quota-does-not-limit-reads", ["PV-TR-5"],
  "Once the quota is exhausted, reads by the same token still succeed",
  lambda: [open_thread(),
           reply("limited", "inform", thread="$t", expect=one_of(created(), RATE_LIMITED), repeat=QUOTA_PROBE, expect_seen=RATE_LIMITED),
           read("limited", "$t", {"thread": {"id": "$t"}}),
           whoami("limited", {"identity": ident("limited")}),
           inbox("limited", {"items": {"$type": "array"}}, paginate=False, limit=5)])
V("transport/quota-is-per-token", ["PV-TR-5"],
  "Exhausting the limited token's quota does not limit another token",
  lambda: [post("limited", env("ask", b=body("quota")), one_of(created(), RATE_LIMITED), repeat=QUOTA_PROBE, expect_seen=RATE_LIMITED),
           post("agent_a", env("ask"), created())])
V("transport/order-403-before-429", ["PV-AU-6", "PV-DI-4"],
  "A limited writer without the verify right gets 403 token_right_missing on every verify attempt, never 429",
  lambda: [post("agent_a", dict(env("assert"), evidence=[{"kind": "note", "ref": "n"}]), created(), capture={"c": "/message/claim", "t2": "/thread/id"}),
           post("limited", dict(env("verify", thread="$t2", claim="$c"), evidence=[{"kind": "note", "ref": "n"}]),
                RIGHT_MISSING, repeat=QUOTA_PROBE)],
  needs=["dialectic"])

V("transport/one-permission-check", ["PV-TR-1", "PV-AU-1", "PV-AU-2"],
  "The same permission decisions on every binding: reader post 403, foreign decide 403, creator decide 201 (compared across bindings by the transport-compare check)",
  lambda: [open_thread(),
           reply("reader", "inform", thread="$t", expect=RIGHT_MISSING),
           reply("agent_b", "decide", thread="$t", expect=AUTHORITY),
           reply("agent_a", "decide", thread="$t", expect=created({"thread": {"state": "decided"}})),
           read("reader", "$t", {"thread": {"state": "decided"}})])

V("transport/mcp-tools-list", ["PV-TR-1", "PV-TR-2"],
  "tools/list on the MCP endpoint lists one tool per operation, with the operation's name",
  lambda: [rpc("agent_a", ok(200, {"result": {"tools": {"$contains": [{"name": f"$tool.{n}"} for n in OPS if n != "read_claim"]}}}),
               body_json={"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": {}})])
V("transport/order-429-before-413", ["PV-AU-6", "PV-TR-5"],
  "Oversized write attempts by a token over its quota get 429 before 413 (every attempt that passed the right check counts)",
  lambda: [RMAX(), post("limited", env("ask", b=BIG), one_of(TOO_LARGE, RATE_LIMITED), repeat=QUOTA_PROBE, expect_seen=RATE_LIMITED)])
V("transport/request-over-declared-max-bytes", ["PV-TR-5", "PV-MF-2"],
  "A post whose body alone is request_max_bytes long (as declared by the manifest) is 413 payload_too_large",
  lambda: [manifest("anonymous", {"limits": {"request_max_bytes": {"$type": "integer"}}}, capture={"rmax": "/limits/request_max_bytes"}),
           post("agent_a", env("ask", b={"$repeat": {"s": "a", "n": "$rmax"}}), TOO_LARGE)])
V("transport/mcp-arguments-not-object", ["PV-TR-2"],
  "tools/call whose arguments are not an object is a protocol fault (-32602 invalid params), not a refusal",
  lambda: [rpc("agent_a", rpc_err_any(-32602),
               body_json={"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "$tool.post", "arguments": "kind=ask"}})])
V("transport/mcp-tool-name-missing", ["PV-TR-2"],
  "tools/call without a tool name is a protocol fault (-32602 invalid params)",
  lambda: [rpc("agent_a", rpc_err_any(-32602),
               body_json={"jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": {"arguments": {}}})])
