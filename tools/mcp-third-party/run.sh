#!/usr/bin/env bash
# `conform run --suite mcp` against a third-party MCP server (issue 12): the official
# `@modelcontextprotocol/server-everything`, over Streamable HTTP and stdio, with the reasoned
# expected failures of server-everything.baseline.toml. Red on any unlisted failure, on a
# harness error, and on a listed failure that no longer fails (a stale entry). Then the
# stdio checks (MCP-ST) against the reference's `reference-server stdio`, which
# `--spawn-reference` cannot start (it runs the reference in process).
#
# Installs the pinned package under $HOME/.cache/conform-interop/server-everything (override
# with CONFORM_MCP_THIRD_PARTY_DIR), starts it on a free loopback port, runs the suite,
# stops it. Exit 0 = as expected.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=2026.8.31
dir=${CONFORM_MCP_THIRD_PARTY_DIR:-$HOME/.cache/conform-interop/server-everything}
entry="$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

if ! grep -qs "\"version\": \"$version\"" "$dir/node_modules/@modelcontextprotocol/server-everything/package.json"; then
    echo "mcp-third-party: installing @modelcontextprotocol/server-everything@$version into $dir" >&2
    mkdir -p "$dir"
    npm install --silent --no-audit --no-fund --prefix "$dir" "@modelcontextprotocol/server-everything@$version"
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
tmp=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

PORT=$port node "$entry" streamableHttp >"$tmp/server.log" 2>&1 &
pid=$!
# Readiness = the line the server prints once listening (bounded: 200 x 50 ms = 10 s).
for _ in $(seq 1 200); do
    grep -q "listening on port $port" "$tmp/server.log" && break
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "mcp-third-party: server exited before listening" >&2
        cat "$tmp/server.log" >&2
        exit 1
    fi
    sleep 0.05
done
grep -q "listening on port $port" "$tmp/server.log" || { echo "mcp-third-party: server not listening after 10 s" >&2; exit 1; }

cat >"$tmp/target.toml" <<TOML
format_version = 1
name = "server-everything $version"
base_url = "http://127.0.0.1:$port"
mcp_endpoint = "/mcp"

[mcp]
safe_tool = "echo"
safe_tool_arguments = { message = "conform" }
stdio_command = ["node", "$entry", "stdio"]
TOML

cd "$root"
# CONFORM_BIN / REFERENCE_SERVER_BIN: binaries already built (.ci/run passes those of its
# `cargo test` build); otherwise they are built here.
if [ -z "${CONFORM_BIN:-}" ]; then
    cargo build -q -p conform --all-features --bin conform
    CONFORM_BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/conform"
fi
status=0
"$CONFORM_BIN" run --target "$tmp/target.toml" --suite mcp \
    --baseline "$here/server-everything.baseline.toml" --out "$tmp/report" --quiet || status=$?
python3 - "$tmp/report/report.json" "$status" <<'PY'
import json, sys
report, status = json.load(open(sys.argv[1])), int(sys.argv[2])
s = report["summary"]
print(f"mcp-third-party: server-everything: pass {s['pass']}, warn {s['warn']}, n/a {s['unsupported']}, "
      f"expected failures {s['expected_failure']}, unexpected passes {s['unexpected_pass']}, exit {status}")
if status != 0 or s["unexpected_pass"] or s["harness_error"]:
    sys.exit("mcp-third-party: not as expected (a new failure, a harness error, or a stale baseline entry)")
PY

# The reference over stdio: every MCP-ST check must pass.
if [ -z "${REFERENCE_SERVER_BIN:-}" ]; then
    cargo build -q -p reference-impl --bin reference-server
    REFERENCE_SERVER_BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/reference-server"
fi
cat >"$tmp/stdio.toml" <<TOML
format_version = 1
name = "reference-server stdio"
base_url = "http://127.0.0.1:9"

[mcp]
stdio_command = ["$REFERENCE_SERVER_BIN", "stdio", "--demo", "--db", ":memory:"]
stdio_env = { PARLEY_TOKEN = "demo-agent-a", RUST_LOG = "warn" }
TOML
"$CONFORM_BIN" run --target "$tmp/stdio.toml" --suite mcp \
    --filter 'MCP-ST-*' --out "$tmp/stdio-report" --quiet
python3 - "$tmp/stdio-report/report.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(f"mcp-third-party: reference-server stdio: pass {s['pass']} of {s['total']}")
if s["pass"] != s["total"] or s["total"] < 2:
    sys.exit("mcp-third-party: the reference must pass every MCP-ST check over stdio")
PY
