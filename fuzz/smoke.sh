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
# The targets are built by .clusterfuzzlite/build.sh (outside Docker, into a temp $OUT), as
# ClusterFuzzLite builds them. FUZZ_INSTRUMENT: `ours` (default) instruments this repository's crates only
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
all=$(sed -n 's/^name = "\([a-z_]*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^conform-fuzz$' || true)
targets=${*:-$all}
[ -n "$targets" ] || { echo "fuzz/smoke.sh: no targets in fuzz/Cargo.toml" >&2; exit 2; }

# The build ClusterFuzzLite runs (issue 30 item 6): binaries, seed corpora and dictionaries
# in $bin_dir, so CI builds the instrumented targets once and a broken build.sh fails it.
bin_dir=$out/build
FUZZ_INSTRUMENT=$instrument FUZZ_TARGET_DIR=$fuzz_target_dir FUZZ_TARGETS="$targets" \
  OUT=$bin_dir bash .clusterfuzzlite/build.sh
for t in $targets; do
  mkdir -p "$out/corpus/$t"
  python3 -m zipfile -e "$bin_dir/${t}_seed_corpus.zip" "$out/corpus/$t"
done

run_one() {
  local t=$1
  local dir=$out/$t rc=0
  mkdir -p "$dir" "$out/corpus/$t"
  # -timeout: one input over 10 s is a hang; -rss_limit_mb: memory growth is a finding.
  # A target's max_len is the one build.sh gives ClusterFuzzLite (<target>.options).
  local extra=() max_len
  max_len=$(sed -n 's/^max_len = //p' "$bin_dir/$t.options" 2>/dev/null || true)
  [ -n "$max_len" ] && extra=(-max_len="$max_len")
  "$bin_dir/$t" "$out/corpus/$t" "${extra[@]}" -max_total_time="$secs" -seed="$seed" \
    -dict="$bin_dir/$t.dict" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
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
