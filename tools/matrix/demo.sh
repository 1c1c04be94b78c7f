#!/usr/bin/env bash
# The README's conformance matrix (issue 30): the fault-free reference, three legal variants
# and two reference builds with a seeded fault, side by side.
#
#   tools/matrix/demo.sh [OUT]          (default OUT: reports/matrix-demo)
#
# Builds `conform` in release with the `faults` and `variants` features (or uses
# $CONFORM_BIN), then:
#   1. conform faults  --fault body-counts-bytes --fault ssp-invoke-200 --scope full
#      (the fault-free run and one full run per fault: OUT/faults/, with its own matrix);
#   2. conform variants --variant blank-body-accepted --variant ssp-execution-timeout-alias
#      --variant inbox-limits-small (one full run each: OUT/variants/, with its own matrix);
#   3. conform matrix over the six report.json files into OUT/ (matrix.html, .md, .json).
# Exit status: conform matrix's (the two measurements exit 1 by design: the faults' runs fail
# and that is what the matrix shows).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-reports/matrix-demo}
cd "$root"

bin=${CONFORM_BIN:-}
if [ -z "$bin" ]; then
    cargo build --release --quiet -p conform --features faults,variants
    bin=${CARGO_TARGET_DIR:-$root/target}/release/conform
fi

rm -rf "$out"
mkdir -p "$out"
faults=(body-counts-bytes ssp-invoke-200)
variants=(blank-body-accepted ssp-execution-timeout-alias inbox-limits-small)

args=()
for f in "${faults[@]}"; do args+=(--fault "$f"); done
"$bin" faults "${args[@]}" --scope full --no-variants --out "$out/faults" >/dev/null || true
args=()
for v in "${variants[@]}"; do args+=(--variant "$v"); done
"$bin" variants "${args[@]}" --out "$out/variants" >/dev/null || true

reports=("$out/faults/report.json")
for v in "${variants[@]}"; do reports+=("$out/variants/runs/$v/report.json"); done
for f in "${faults[@]}"; do reports+=("$out/faults/runs/$f/report.json"); done
for r in "${reports[@]}"; do
    [ -f "$r" ] || { echo "demo: $r was not written (see the output above)" >&2; exit 2; }
done
exec "$bin" matrix "${reports[@]}" --out "$out"
