#!/usr/bin/env bash
# RUSTC_WRAPPER of fuzz/smoke.sh (FUZZ_INSTRUMENT=ours, its default): libFuzzer's coverage
# instrumentation ($CONFORM_SANCOV_FLAGS) for this repository's own crates only, those whose
# manifest lives under the clone ($CONFORM_FUZZ_ROOT). Registry dependencies, build scripts
# and proc macros (host units, to which cargo passes no --target) are built without it.
#
# Why: libFuzzer scans and clears every 8-bit counter of the binary on each execution, and
# follows every edge hit. Instrumenting tokio, hyper, axum, jsonschema, toml… made
# `parley_http` 375,821 counters, most of them runtime and scheduler paths that say nothing
# about our code (and vary from run to run): the scan was half of each execution. Generic
# code instantiated in our crates (serde derives, our futures) is still instrumented there.
set -euo pipefail
rustc=$1
shift
root=${CONFORM_FUZZ_ROOT:?set by fuzz/smoke.sh}
dir=${CARGO_MANIFEST_DIR:-}
rel=${dir#"$root"/}
# Under the clone, and not in a CARGO_HOME placed inside it.
if [ "$rel" != "$dir" ] && [[ "$rel" != *.cargo/* ]]; then
  for a in "$@"; do
    if [ "$a" = --target ]; then
      # Word splitting intended: the flags are one space-separated list.
      # shellcheck disable=SC2086
      exec "$rustc" "$@" ${CONFORM_SANCOV_FLAGS:?set by fuzz/smoke.sh}
    fi
  done
fi
exec "$rustc" "$@"
