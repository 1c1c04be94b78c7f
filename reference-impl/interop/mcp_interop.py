"""Interop check of the reference server with the official MCP Python SDK (`pip install mcp`).

Connects over Streamable HTTP to a running `reference-server` (URL of its `/mcp` endpoint as
the only argument), once per MCP era the server serves:
  - "legacy": the 2025-11-25 `initialize` handshake (served without server-side sessions),
  - "2026-07-28": no handshake, per-request `_meta` (the SDK's modern mode).
In each: list the tools (the nine Parley operations), post → read_thread, then provoke a
refusal (a `read`-only token posting) and check it is a tool result with `isError: true`,
`structuredContent.error.reason` and the same JSON as text (PV-TR-2). With the binary's path
as a second argument, the same over `reference-server stdio` spawned by the SDK (token from
`PARLEY_TOKEN`). Exit status 0 = all good.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

EXPECTED_TOOLS = {
    "get_manifest", "whoami", "post", "read_thread", "list_events",
    "inbox", "mark", "reopen", "read_claim",
}
MODES = ["legacy", "2026-07-28"]


def client_for(url: str, token: str, mode: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30.0)
    return Client(streamable_http_client(url, http_client=http), mode=mode)


def text_json(result) -> dict:
    """content[0] must be the same JSON as structuredContent (PV-TR-2)."""
    text = result.content[0].text
    parsed = json.loads(text)
    assert parsed == result.structured_content, (parsed, result.structured_content)
    return parsed


async def check_mode(url: str, mode: str) -> None:
    async with client_for(url, "demo-agent-a", mode) as client:
        print(f"[{mode}] negotiated protocol version {client.protocol_version}")
        tools = await client.list_tools()
        names = {t.name for t in tools.tools}
        assert names == EXPECTED_TOOLS, f"tools: {sorted(names)}"
        print(f"[{mode}] tools/list: {len(names)} tools")

        posted = await client.call_tool("post", {"kind": "ask", "body": f"interop question ({mode})"})
        assert not posted.is_error, text_json(posted)
        body = text_json(posted)
        thread_id = body["thread"]["id"]
        message_id = body["message"]["id"]
        print(f"[{mode}] post -> {message_id} in {thread_id}")

        read = await client.call_tool("read_thread", {"thread": thread_id})
        assert not read.is_error, text_json(read)
        tree = text_json(read)
        assert tree["thread"]["id"] == thread_id
        assert tree["messages"][0]["id"] == message_id
        assert tree["messages"][0]["body"] == f"interop question ({mode})"
        print(f"[{mode}] read_thread -> {len(tree['messages'])} root message(s)")

    async with client_for(url, "demo-reader", mode) as reader:
        refused = await reader.call_tool("post", {"kind": "ask", "body": "readers cannot post"})
        assert refused.is_error is True, "a refusal must be isError: true"
        error = text_json(refused)["error"]
        assert error["reason"] == "token_right_missing", error
        assert error["status"] == 403, error
        print(f"[{mode}] refusal -> isError, reason {error['reason']}, status {error['status']}")


async def check_stdio(binary: str, mode: str) -> None:
    """`reference-server stdio`, spawned by the SDK; the token comes from PARLEY_TOKEN."""
    params = StdioServerParameters(
        command=binary,
        args=["stdio", "--demo", "--db", ":memory:"],
        env={"PARLEY_TOKEN": "demo-agent-a", "RUST_LOG": "warn"},
    )
    async with Client(params, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == EXPECTED_TOOLS, f"tools: {sorted(names)}"
        posted = await client.call_tool("post", {"kind": "ask", "body": "over stdio"})
        assert not posted.is_error, text_json(posted)
        thread_id = text_json(posted)["thread"]["id"]
        read = await client.call_tool("read_thread", {"thread": thread_id})
        assert text_json(read)["messages"][0]["body"] == "over stdio"
        refused = await client.call_tool("read_claim", {"claim": "cl_404"})
        assert refused.is_error is True
        assert text_json(refused)["error"]["reason"] == "claim_not_found"
        print(f"[stdio {mode}] tools/list, post -> read_thread, refusal claim_not_found: ok")


async def main(url: str, binary: str | None) -> int:
    for mode in MODES:
        await check_mode(url, mode)
    if binary:
        for mode in MODES:
            await check_stdio(binary, mode)
    print("interop: all checks passed")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print("usage: mcp_interop.py http://127.0.0.1:PORT/mcp [path/to/reference-server]", file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None)))
