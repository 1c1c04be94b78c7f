#!/usr/bin/env bash
# Builds every fuzz/ target into $OUT with its seed corpus ($OUT/<target>_seed_corpus.zip,
# from the golden vectors) and the dictionary ($OUT/<target>.dict), the layout ClusterFuzzLite
# and OSS-Fuzz expect (issue 30 item 6).
#
# Two builds, one script:
#  - in ClusterFuzzLite's image ($SRC set, cargo-fuzz on PATH): `cargo fuzz build -O` with
#    the image's nightly toolchain and sanitizer flags (AddressSanitizer);
#  - anywhere else (fuzz/smoke.sh, so every CI run): the stable toolchain with the libFuzzer
#    instrumentation cargo fuzz would set, without a sanitizer (fuzz/sancov-rustc.sh says why
#    only this repository's crates are instrumented by default).
#
#   OUT=/tmp/out bash .clusterfuzzlite/build.sh
#
# Outside the image: FUZZ_INSTRUMENT (`ours`, default, or `all`), FUZZ_TARGET_DIR (default
# $HOME/.cache/conform-fuzz-target-<instrument>), SEED_CORPUS_BIN (the seed-corpus generator
# already built; else `cargo run` builds it). FUZZ_TARGETS: a subset (default: every target).
set -euo pipefail

: "${OUT:?set OUT to the folder the fuzz targets are written to}"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
# Physical path: cargo gives the wrapper physical manifest dirs, also through a symlink.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$root"
all=$(sed -n 's/^name = "\([a-z_]*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^conform-fuzz$' || true)
targets=${FUZZ_TARGETS:-$all}
[ -n "$targets" ] || { echo "build.sh: no targets in fuzz/Cargo.toml" >&2; exit 2; }
triple=$(rustc -vV | sed -n 's/^host: //p')

if [ -n "${SRC:-}" ] && command -v cargo-fuzz >/dev/null 2>&1; then
  echo "== cargo fuzz build -O (ClusterFuzzLite image, sanitizer ${SANITIZER:-address})"
  cargo fuzz build -O
  bin_dir=fuzz/target/$triple/release
else
  instrument=${FUZZ_INSTRUMENT:-ours}
  fuzz_target_dir=${FUZZ_TARGET_DIR:-$HOME/.cache/conform-fuzz-target-$instrument}
  sancov="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares"
  common="--cfg fuzzing -Cdebug-assertions -Coverflow-checks"
  # The wrapper's flags are invisible to cargo's fingerprints: a cfg naming a digest of the
  # wrapper and its flags is, so editing either rebuilds every crate instead of leaving
  # dependencies instrumented the old way. The wrapper is set for this build only.
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
    echo "build.sh: FUZZ_INSTRUMENT is ours or all, not '$instrument'" >&2
    exit 2 ;;
  esac
  echo "== building fuzz/ with libFuzzer instrumentation of $what ($fuzz_target_dir)"
  env "${build_env[@]}" CARGO_TARGET_DIR="$fuzz_target_dir" \
    cargo build --release --locked --manifest-path fuzz/Cargo.toml --target "$triple" --bins
  bin_dir=$fuzz_target_dir/$triple/release
fi

echo "== seed corpora from the golden vectors, the dictionary, into $OUT"
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
if [ -n "${SEED_CORPUS_BIN:-}" ]; then
  "$SEED_CORPUS_BIN" "$corpus"
else
  cargo run -q -p conform-fuzz-targets --bin seed-corpus "$corpus"
fi
for t in $targets; do
  [ -x "$bin_dir/$t" ] || { echo "build.sh: no binary $bin_dir/$t" >&2; exit 2; }
  cp "$bin_dir/$t" "$OUT/$t"
  cp fuzz/parley.dict "$OUT/$t.dict"
  # harness_parsers: inputs bounded like its seeds (HARNESS_PARSERS_MAX_LEN in
  # fuzz-targets/src/seeds.rs): whole 600 KB vector files cost ~2 ms per execution.
  if [ "$t" = harness_parsers ]; then
    printf '[libfuzzer]\nmax_len = 16384\n' >"$OUT/$t.options"
  fi
  rm -f "$OUT/${t}_seed_corpus.zip"
  mkdir -p "$corpus/$t"
  # python3's zipfile (in the image and on CI) instead of the zip tool, which neither has.
  (cd "$corpus/$t" && python3 -m zipfile -c "$OUT/${t}_seed_corpus.zip" .)
done
echo "build.sh: $(echo $targets | wc -w) targets in $OUT"
