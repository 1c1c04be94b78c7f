#!/usr/bin/env bash
# The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) against
# a running reference server, once per spec revision the suite knows (issue 12). Called by
# run.sh, which installs the suite:
#
#   conformance.sh NODE NODE_DIR MCP_URL TMP
#
# Each revision has its baseline, conformance-expected-<revision>.yml (the suite's own
# `--expected-failures` format: `server:` lists scenario names). The suite exits non-zero on a
# failing scenario that is not listed AND on a listed scenario that now passes (a stale
# entry), so both turn CI red. Every listed scenario must say why on its line (`# reason`);
# an entry without one is refused here before the suite runs.
set -euo pipefail

node=$1
node_dir=$2
url=$3
tmp=$4
here=$(cd "$(dirname "$0")" && pwd)
cli="$node_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

# The revisions the suite has server scenarios for (0.1.16: 2025-06-18 and 2025-11-25; it has
# none for 2026-07-28, the reference's stateless era, which the Python SDK run covers).
for revision in 2025-06-18 2025-11-25; do
    expected="$here/conformance-expected-$revision.yml"
    unexplained=$(grep -nE '^[[:space:]]*-[[:space:]]' "$expected" | grep -v '#' || true)
    if [ -n "$unexplained" ]; then
        echo "conformance: entries of $expected without a '# reason':" >&2
        echo "$unexplained" >&2
        exit 1
    fi
    step=$SECONDS
    log="$tmp/conformance-$revision.log"
    status=0
    NO_COLOR=1 "$node" "$cli" server --url "$url" --spec-version "$revision" \
        --expected-failures "$expected" -o "$tmp/conformance-$revision" >"$log" 2>&1 || status=$?
    total=$(grep -E '^Total: ' "$log" | tail -1)
    if [ "$status" -ne 0 ]; then
        echo "conformance $revision: FAILED (exit $status) — $total" >&2
        # The summary and the baseline verdict (unexpected failures, stale entries).
        sed -n '/=== SUMMARY ===/,$p' "$log" >&2
        exit 1
    fi
    scenarios=$(grep -cE '^[✓✗] ' "$log" || true)
    failing=$(grep -cE '^✗ ' "$log" || true)
    echo "conformance $revision: $scenarios scenarios, $failing failing (all in the baseline) — $total — $((SECONDS - step)) s" >&2
done
