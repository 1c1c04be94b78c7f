#!/usr/bin/env bash
# Interop with real third-party MCP tools against a running reference-server (issues 2, 12):
#  1. the official MCP Python SDK (`mcp`), in both MCP eras (2025-11-25 handshake and
#     2026-07-28 per-request `_meta`): tools/list, post -> read_thread, a refusal (isError);
#     then the same over `reference-server stdio` spawned by the SDK (mcp_interop.py);
#  2. the official TypeScript SDK (`@modelcontextprotocol/sdk`), the current 1.x (newest
#     revision 2025-11-25) and an older one whose newest revision is 2025-06-18 (it must get
#     2025-06-18 back from `initialize`): the same calls over HTTP and stdio (ts_interop.mjs);
#  3. the official conformance suite (`@modelcontextprotocol/conformance`, server mode) per
#     spec revision it knows, against conformance-expected-<revision>.yml: a failure not
#     listed there, or a listed scenario that now passes (stale entry), turns this red.
#
# Installs, pinned and cached (idempotent; a fresh machine needs python3 and Node 20 + npm):
# the Python SDK into a venv ($HOME/.cache/conform-interop/venv, override CONFORM_INTEROP_VENV);
# the npm packages of node/package-lock.json, Node 22 among them (the conformance suite needs
# it; the npm registry's `node` package), into $HOME/.cache/conform-interop/node (override
# CONFORM_INTEROP_NODE), reinstalled only when the lock file changes. Builds the server,
# starts it on 127.0.0.1:0 with --demo on a temp database, runs the three, stops the server.
# Exit 0 = pass.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${CONFORM_INTEROP_VENV:-$HOME/.cache/conform-interop/venv}
sdk_version=2.3.0
node_dir=${CONFORM_INTEROP_NODE:-$HOME/.cache/conform-interop/node}
started=$SECONDS

if ! "$venv/bin/python" -c "import mcp, sys; from importlib.metadata import version; sys.exit(version('mcp') != '$sdk_version')" 2>/dev/null; then
    echo "interop: installing mcp==$sdk_version into $venv" >&2
    # --clear: a venv that fails the check may be half-installed or point at a Python that is
    # gone (venv keeps an existing, dangling bin/python link); rebuild it from nothing instead.
    python3 -m venv --clear "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$sdk_version"
fi

# npm side: `npm ci` from the committed lock file, redone only when the lock changes.
lock_sum=$(sha256sum "$here/node/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$node_dir/.installed" 2>/dev/null)" != "$lock_sum" ] || [ ! -x "$node_dir/node_modules/.bin/node" ]; then
    echo "interop: installing the pinned npm packages into $node_dir" >&2
    rm -rf "$node_dir"
    mkdir -p "$node_dir"
    cp "$here/node/package.json" "$here/node/package-lock.json" "$node_dir/"
    (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
    # The `node` package fetches its binary in an install script: check it ran.
    if ! "$node_dir/node_modules/.bin/node" --version | grep -q '^v22\.'; then
        echo "interop: the npm 'node' package did not install Node 22 (install scripts blocked?)" >&2
        exit 1
    fi
    echo "$lock_sum" >"$node_dir/.installed"
fi
node22="$node_dir/node_modules/.bin/node"
# The client script resolves the SDK aliases from the install's node_modules.
cp "$here/ts_interop.mjs" "$node_dir/"
echo "interop: installs ready in $((SECONDS - started)) s; node $("$node22" --version)" >&2

cd "$root"
# REFERENCE_SERVER_BIN: a binary already built (.ci/run passes its `cargo test` build's).
bin=${REFERENCE_SERVER_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet -p reference-impl --bin reference-server
    target_dir=$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    bin="$target_dir/debug/reference-server"
fi

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

"$bin" serve --listen 127.0.0.1:0 --demo --db "$tmp/interop.db" >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!

# Readiness = the printed line (bounded: 200 x 50 ms = 10 s).
url=""
for _ in $(seq 1 200); do
    url=$(sed -n 's/^listening on //p' "$tmp/stdout")
    [ -n "$url" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "interop: server exited before listening" >&2
        cat "$tmp/stderr" >&2
        exit 1
    fi
    sleep 0.05
done
if [ -z "$url" ]; then
    echo "interop: server did not print its address within 10 s" >&2
    exit 1
fi

step=$SECONDS
"$venv/bin/python" "$here/mcp_interop.py" "$url/mcp" "$bin"
echo "interop: Python SDK $sdk_version: $((SECONDS - step)) s" >&2

step=$SECONDS
"$node22" "$node_dir/ts_interop.mjs" sdk-current 2025-11-25 "$url/mcp" "$bin"
"$node22" "$node_dir/ts_interop.mjs" sdk-2025-06-18 2025-06-18 "$url/mcp" "$bin"
echo "interop: TypeScript SDKs: $((SECONDS - step)) s" >&2

bash "$here/conformance.sh" "$node22" "$node_dir" "$url/mcp" "$tmp"
echo "interop: all green in $((SECONDS - started)) s" >&2
