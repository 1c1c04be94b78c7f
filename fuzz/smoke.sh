#!/usr/bin/env bash
# Bounded, seeded smoke run of every coverage-guided target of fuzz/ (issue 11 item 5),
# on the stable toolchain: fuzz/ is built with the libFuzzer instrumentation cargo fuzz
# would set (no sanitizer, so no nightly), the seed corpora are written from the golden
# vectors, and each target runs FUZZ_SECONDS (default 30) with seed FUZZ_SEED (default 1).
# A crash, a per-input timeout or running out of memory fails the script; the input that
# did it is printed and kept under $FUZZ_OUT/<target>/ (default: a temp dir).
#
#   bash fuzz/smoke.sh                        # every target, 30 s each, 2 at a time
#   FUZZ_SECONDS=600 FUZZ_JOBS=1 bash fuzz/smoke.sh parley_http   # one longer campaign
#
# FUZZ_INSTRUMENT: `ours` (default) instruments this repository's crates only
# (fuzz/sancov-rustc.sh says why: 1.3-3.6x the executions per second), `all` every crate as
# cargo fuzz does (dependencies' edges guide too; slower). Each has its own target dir,
# FUZZ_TARGET_DIR, default $HOME/.cache/conform-fuzz-target-<instrument> (other flags than
# the workspace's). The first `ours` build took 6 min 36 s on 2 cores (2026-12-05).
set -euo pipefail

# Physical path: cargo gives the wrapper physical manifest dirs, also through a symlink.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$root"
secs=${FUZZ_SECONDS:-30}
seed=${FUZZ_SEED:-1}
jobs=${FUZZ_JOBS:-2}
out=${FUZZ_OUT:-$(mktemp -d)}
instrument=${FUZZ_INSTRUMENT:-ours}
fuzz_target_dir=${FUZZ_TARGET_DIR:-$HOME/.cache/conform-fuzz-target-$instrument}
triple=$(rustc -vV | sed -n 's/^host: //p')

all=$(sed -n 's/^name = "\([a-z_]*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^conform-fuzz$' || true)
targets=${*:-$all}
[ -n "$targets" ] || { echo "fuzz/smoke.sh: no targets in fuzz/Cargo.toml" >&2; exit 2; }

sancov="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares"
common="--cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# The wrapper's flags are invisible to cargo's fingerprints: a cfg naming a digest of the
# wrapper and its flags is, so editing either rebuilds every crate instead of leaving
# dependencies instrumented the old way. The wrapper is set for the build only (not for the
# seed-corpus run below, nor over a caller's own RUSTC_WRAPPER elsewhere).
case $instrument in
ours)
  digest=$(cat fuzz/sancov-rustc.sh - <<<"$sancov" | sha256sum | cut -c1-16)
  build_env=(RUSTC_WRAPPER="$root/fuzz/sancov-rustc.sh" CONFORM_FUZZ_ROOT="$root"
    CONFORM_SANCOV_FLAGS="$sancov" RUSTFLAGS="$common --cfg conform_sancov_$digest")
  what="this repository's crates" ;;
all)
  build_env=(RUSTFLAGS="$sancov $common")
  what="every crate" ;;
*)
  echo "fuzz/smoke.sh: FUZZ_INSTRUMENT is ours or all, not '$instrument'" >&2
  exit 2 ;;
esac
echo "== building fuzz/ with libFuzzer instrumentation of $what ($fuzz_target_dir)"
env "${build_env[@]}" CARGO_TARGET_DIR="$fuzz_target_dir" \
  cargo build --release --locked --manifest-path fuzz/Cargo.toml --target "$triple" --bins
bin_dir=$fuzz_target_dir/$triple/release

echo "== seed corpora from the golden vectors"
# SEED_CORPUS_BIN: the generator already built (.ci/run passes its `cargo test` build's).
if [ -n "${SEED_CORPUS_BIN:-}" ]; then
  "$SEED_CORPUS_BIN" "$out/corpus"
else
  cargo run -q -p conform-fuzz-targets --bin seed-corpus "$out/corpus"
fi

run_one() {
  local t=$1
  local dir=$out/$t rc=0
  mkdir -p "$dir" "$out/corpus/$t"
  # -timeout: one input over 10 s is a hang; -rss_limit_mb: memory growth is a finding.
  # harness_parsers: inputs bounded like its seeds (HARNESS_PARSERS_MAX_LEN in
  # fuzz-targets/src/seeds.rs): whole 600 KB vector files cost ~2 ms per execution.
  local extra=()
  [ "$t" = harness_parsers ] && extra=(-max_len=16384)
  "$bin_dir/$t" "$out/corpus/$t" "${extra[@]}" -max_total_time="$secs" -seed="$seed" \
    -dict=fuzz/parley.dict -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/" >"$dir/log" 2>&1 || rc=$?
  echo "$rc" >"$dir/rc"
}

echo "== $secs s per target, seed $seed, $jobs at a time: $(echo $targets)"
for t in $targets; do
  [ -x "$bin_dir/$t" ] || { echo "no binary $bin_dir/$t" >&2; exit 2; }
done
running=0
for t in $targets; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

failed=0
printf '%-18s %6s %12s %10s\n' target rc executions exec/s
for t in $targets; do
  dir=$out/$t
  rc=$(cat "$dir/rc" 2>/dev/null || echo 99)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)
  printf '%-18s %6s %12s %10s\n' "$t" "$rc" "${runs:-?}" "${rate:-?}"
  if [ "$rc" != 0 ] || [ -z "$runs" ]; then
    failed=1
    echo "---- $t failed (exit $rc); last lines of its log:"
    tail -40 "$dir/log"
    for a in "$dir"/crash-* "$dir"/timeout-* "$dir"/oom-* "$dir"/leak-*; do
      [ -e "$a" ] && echo "input kept: $a ($(wc -c <"$a") bytes; replay: $bin_dir/$t $a)"
    done
  fi
done
if [ "$failed" != 0 ]; then
  echo "fuzz/smoke.sh: a target failed (seed $seed); copy its input to fuzz/regressions/<target>/ with the fix" >&2
  exit 1
fi
echo "fuzz/smoke.sh: every target ran $secs s without a crash (seed $seed)"
