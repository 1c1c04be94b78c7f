// Interop check of the reference server with the official MCP TypeScript SDK
// (`@modelcontextprotocol/sdk`, installed by run.sh under an npm alias per pinned version).
//
// usage: node ts_interop.mjs SDK_ALIAS EXPECTED_VERSION http://127.0.0.1:PORT/mcp [reference-server]
//
// The SDK 1.x client speaks the `initialize` handshake era only (its newest revision is
// 2025-11-25; it has no 2026-07-28 per-request `_meta` mode). It connects over Streamable
// HTTP, and the negotiated revision must be EXPECTED_VERSION: an SDK whose newest revision
// is 2025-06-18 gets 2025-06-18 back (MCP lifecycle, "Version Negotiation"). Then, like
// mcp_interop.py: tools/list (the nine Parley operations), post -> read_thread, a refusal
// (a read-only token posting) that is a tool result with isError and the refusal JSON as
// structuredContent and as text (PV-TR-2). With the binary's path, the same over
// `reference-server stdio` spawned by the SDK. Exit status 0 = all good.

import assert from "node:assert/strict";

const [alias, expectedVersion, url, binary] = process.argv.slice(2);
if (!alias || !expectedVersion || !url) {
  console.error("usage: ts_interop.mjs SDK_ALIAS EXPECTED_VERSION URL [reference-server]");
  process.exit(2);
}
const { Client } = await import(`${alias}/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${alias}/client/streamableHttp.js`);
const { StdioClientTransport } = await import(`${alias}/client/stdio.js`);
const { LATEST_PROTOCOL_VERSION } = await import(`${alias}/types.js`);

const EXPECTED_TOOLS = [
  "get_manifest", "inbox", "list_events", "mark", "post",
  "read_claim", "read_thread", "reopen", "whoami",
];
const tag = `[ts ${alias} ${LATEST_PROTOCOL_VERSION}]`;

/** content[0] must be the same JSON as structuredContent (PV-TR-2). */
function textJson(result) {
  const parsed = JSON.parse(result.content[0].text);
  assert.deepEqual(parsed, result.structuredContent);
  return parsed;
}

async function connect(transport) {
  const client = new Client({ name: "conform-interop-ts", version: "0" });
  await client.connect(transport);
  return client;
}

function http(token) {
  return new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}

async function exercise(client, where, refusal) {
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(names, EXPECTED_TOOLS);
  const body = `interop question (${where})`;
  const posted = await client.callTool({ name: "post", arguments: { kind: "ask", body } });
  assert.ok(!posted.isError, JSON.stringify(posted));
  const { thread, message } = textJson(posted);
  const read = await client.callTool({ name: "read_thread", arguments: { thread: thread.id } });
  assert.ok(!read.isError, JSON.stringify(read));
  const tree = textJson(read);
  assert.equal(tree.thread.id, thread.id);
  assert.equal(tree.messages[0].id, message.id);
  assert.equal(tree.messages[0].body, body);
  const refused = await refusal();
  assert.equal(refused.isError, true, "a refusal must be isError: true");
  return { count: names.length, thread: thread.id, error: textJson(refused).error };
}

// Streamable HTTP.
const transport = http("demo-agent-a");
const client = await connect(transport);
assert.equal(transport.protocolVersion, expectedVersion, "negotiated protocol version");
const reader = await connect(http("demo-reader"));
const out = await exercise(client, "http", () =>
  reader.callTool({ name: "post", arguments: { kind: "ask", body: "readers cannot post" } }));
assert.equal(out.error.reason, "token_right_missing");
assert.equal(out.error.status, 403);
console.log(`${tag} http: negotiated ${transport.protocolVersion}, tools/list ${out.count} tools, ` +
  `post -> read_thread ${out.thread}, refusal isError ${out.error.reason} ${out.error.status}`);
await client.close();
await reader.close();

// stdio, the token from PARLEY_TOKEN.
if (binary) {
  const stdio = await connect(new StdioClientTransport({
    command: binary,
    args: ["stdio", "--demo", "--db", ":memory:"],
    env: { PARLEY_TOKEN: "demo-agent-a", RUST_LOG: "warn", PATH: process.env.PATH ?? "" },
    stderr: "inherit",
  }));
  const s = await exercise(stdio, "stdio", () =>
    stdio.callTool({ name: "read_claim", arguments: { claim: "cl_404" } }));
  assert.equal(s.error.reason, "claim_not_found");
  console.log(`${tag} stdio: tools/list, post -> read_thread, refusal ${s.error.reason}: ok`);
  await stdio.close();
}
console.log(`${tag} all checks passed`);
