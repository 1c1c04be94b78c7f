#!/usr/bin/env bash
# Interop with a real third-party MCP client (issue 2): the official MCP Python SDK talks to a
# running reference-server over Streamable HTTP, in both MCP eras (2025-11-25 handshake and
# 2026-07-28 per-request `_meta`): tools/list, post -> read_thread, a refusal (isError);
# then the same over `reference-server stdio` spawned by the SDK.
#
# Installs the SDK into a venv (default $HOME/.cache/conform-interop/venv, override with
# CONFORM_INTEROP_VENV), builds the server, starts it on 127.0.0.1:0 with --demo on a temp
# database, runs reference-impl/interop/mcp_interop.py, stops the server. Exit 0 = pass.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${CONFORM_INTEROP_VENV:-$HOME/.cache/conform-interop/venv}
sdk_version=2.3.0

if ! "$venv/bin/python" -c "import mcp, sys; from importlib.metadata import version; sys.exit(version('mcp') != '$sdk_version')" 2>/dev/null; then
    echo "interop: installing mcp==$sdk_version into $venv" >&2
    # --clear: a venv that fails the check may be half-installed or point at a Python that is
    # gone (venv keeps an existing, dangling bin/python link); rebuild it from nothing instead.
    python3 -m venv --clear "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$sdk_version"
fi

cd "$root"
cargo build --quiet -p reference-impl --bin reference-server
target_dir=$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
bin="$target_dir/debug/reference-server"

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

"$venv/bin/python" "$here/mcp_interop.py" "$url/mcp" "$bin"
