#!/usr/bin/env bash
# Schemathesis next to conform on the same reference server (issue 15 item 8).
#
#   tools/schemathesis/side-by-side.sh [--max-examples N] [--seed S] [--fault NAME]...
#
# Installs a pinned Schemathesis into a venv ($HOME/.cache/conform-schemathesis, override with
# CONFORM_SCHEMATHESIS_VENV), builds `reference-server` (with the `faults` feature when a
# --fault is given) and `conform` in release, starts the server on 127.0.0.1:0 with --demo on a temp
# database, then runs, one after the other against that same process:
#   1. `st run <url>/openapi.json` (all checks, bearer demo-agent-a, --max-examples N per
#      operation, fixed seed), with a HAR report to count its requests;
#   2. `conform run --target <profile>` (the whole suite, both bindings and SSP);
# and prints one table: tool, requests, seconds, requests/s, defects found.
# Schemathesis' defects = its unique failures; conform's = failing checks (and the distinct
# requirement IDs they cite). Not part of .ci/run: it installs from PyPI and takes minutes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${CONFORM_SCHEMATHESIS_VENV:-$HOME/.cache/conform-schemathesis/venv}
st_version=4.32.5
max_examples=20
seed=1
faults=()
while [ $# -gt 0 ]; do
    case "$1" in
        --max-examples) max_examples=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --fault) faults+=("$2"); shift 2 ;;
        *) echo "usage: $0 [--max-examples N] [--seed S] [--fault NAME]..." >&2; exit 2 ;;
    esac
done

if ! "$venv/bin/python" -c "import sys; from importlib.metadata import version; sys.exit(version('schemathesis') != '$st_version')" 2>/dev/null; then
    echo "side-by-side: installing schemathesis==$st_version into $venv" >&2
    python3 -m venv --clear "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$st_version"
fi

cd "$root"
server_features=()
fault_args=()
if [ ${#faults[@]} -gt 0 ]; then
    server_features=(--features faults)
    for f in "${faults[@]}"; do fault_args+=(--fault "$f"); done
fi
# Release builds of both (issue 25: requests/s are compared, and a debug build measures the
# compiler's optimisation level, not the tools).
cargo build --release --quiet -p reference-impl --bin reference-server "${server_features[@]}"
cargo build --release --quiet -p conform --bin conform
target_dir=$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
server="$target_dir/release/reference-server"
conform="$target_dir/release/conform"

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

"$server" serve --listen 127.0.0.1:0 --demo --db "$tmp/side.db" "${fault_args[@]}" >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
url=""
for _ in $(seq 1 200); do   # readiness = the printed line (bounded: 200 x 50 ms = 10 s)
    url=$(sed -n 's/^listening on //p' "$tmp/stdout")
    [ -n "$url" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "side-by-side: server exited before listening" >&2
        cat "$tmp/stderr" >&2
        exit 1
    fi
    sleep 0.05
done
[ -n "$url" ] || { echo "side-by-side: no address within 10 s" >&2; exit 1; }
echo "side-by-side: reference at $url${faults:+ with fault(s) ${faults[*]}}" >&2

# 1. Schemathesis.
st_start=$(date +%s.%N)
# From the temp dir: Schemathesis keeps its example database in ./.schemathesis.
(cd "$tmp" && "$venv/bin/st" run "$url/openapi.json" --checks all \
    -H "Authorization: Bearer demo-agent-a" \
    --max-examples "$max_examples" --seed "$seed" --no-color \
    --report json,har --report-dir "$tmp/st" >"$tmp/st.log" 2>&1) || true
st_end=$(date +%s.%N)
# Its failures (each with a curl reproduction), then its summary.
sed -n '/= FAILURES =/,/= WARNINGS =/p' "$tmp/st.log" >&2
tail -n 12 "$tmp/st.log" >&2

# 2. conform: the demo tokens, the MCP layer's side-effect-free tool (as `--spawn-reference`
# sets it: without one, the run is incomplete and exits 1) and the reference's SSP mapping —
# keep in step with `conform::reference::demo_profile`, which `--spawn-reference` uses.
{
    echo 'format_version = 1'
    echo "base_url = \"$url\""
    echo '[tokens]'
    for role in agent_a agent_b moderator verifier reader human limited; do
        echo "$role = \"demo-${role//_/-}\""
    done
    echo '[mcp]'
    echo 'safe_tool = "get_manifest"'
    sed -n '/^\[ssp/,$p' vectors/ssp/provider/reference-demo.profile.toml
} >"$tmp/target.toml"
c_start=$(date +%s.%N)
# Its exit code is reported, not fatal: with seeded faults the run is meant to fail.
c_rc=0
"$conform" run --target "$tmp/target.toml" --out "$tmp/conform" --format json --quiet \
    >"$tmp/conform.log" 2>&1 || c_rc=$?
c_end=$(date +%s.%N)
tail -n 15 "$tmp/conform.log" >&2
[ "$c_rc" -eq 0 ] || echo "side-by-side: conform's run exited $c_rc (see above)" >&2

"$venv/bin/python" - "$tmp" "$st_start" "$st_end" "$c_start" "$c_end" "${faults[*]:-none}" <<'PY'
import glob, json, sys
tmp, st0, st1, c0, c1, faults = sys.argv[1], *map(float, sys.argv[2:6]), sys.argv[6]
st_json = json.load(open(glob.glob(f"{tmp}/st/json-*.json")[0]))
st_requests = len(json.load(open(glob.glob(f"{tmp}/st/har-*")[0]))["log"]["entries"])
st_defects = st_json["test_cases"]["unique_failures"]
st_kinds = ", ".join(f"{f['code']} {f['title']} x{f['count']}" for f in st_json["failures"]) or "-"
report = json.load(open(f"{tmp}/conform/report.json"))
def verdict(c):
    v = c.get("verdict")
    return v.get("verdict") if isinstance(v, dict) else v
failing = [c for c in report["checks"] if verdict(c) == "fail"]
ids = sorted({r for c in failing for r in c.get("requirements", [])})
rows = [
    ("schemathesis", st_requests, st1 - st0, st_defects, st_kinds),
    ("conform", report["exchanges"], c1 - c0, len(failing),
     f"{len(ids)} requirement IDs: {' '.join(ids[:12])}{' …' if len(ids) > 12 else ''}" if ids else "-"),
]
print(f"\nfaults: {faults}")
print(f"| tool | requests | seconds | requests/s | defects found | what |")
print(f"|---|---:|---:|---:|---:|---|")
for tool, n, secs, defects, what in rows:
    print(f"| {tool} | {n} | {secs:.1f} | {n / max(secs, 1e-9):.1f} | {defects} | {what} |")
PY
