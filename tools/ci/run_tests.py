#!/usr/bin/env python3
"""Runs the tests of `cargo test --workspace --all-features`, several test binaries at a time.

The same binaries with the same arguments, working directory and cargo environment as
`cargo test` gives them (a binary of SPLIT runs as parts that partition its trials); only
the order and the overlap differ. Why (issue 25, CI time):
`cargo test` runs its ~55 test binaries one after another, and several of them spend most
of their time waiting on real clocks (a quota window of a minute, soak kills, expiry and
execution waits) while others keep both cores busy; two lanes overlap the waits with work.
The longest binaries start first, by the durations of the previous run (kept in
$HOME/.cache/conform-ci/test-times.json; without it, in plan order); the ones in ALONE
(timing ratios) run last, one at a time, with nothing beside them.

    python3 tools/ci/run_tests.py [--jobs N]

Prints one line per finished binary, the whole output of every failing one, and the
durations; exits 1 when a binary failed (every binary still runs), 2 when the build failed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CARGO = os.environ.get("CARGO", "cargo")
TIMES = Path.home() / ".cache" / "conform-ci" / "test-times.json"
# Without durations from a previous run: the binaries known to take minutes start first
# (measured 2026-12-04, debug build, 2 cores).
KNOWN_LONG = {
    "harness::faults_caught": 574.0,
    "harness::variants_accepted": 562.0,
    "harness::quota_pacing": 126.0,
    "harness::parley_vectors": 92.0,
    "harness::reference_report": 27.0,
    "harness::fuzz_campaign": 22.0,
    "harness::ssp_model": 18.0,
    "reference-impl::soak": 13.0,
    "harness::sharding": 12.0,
}
DOCTESTS = "doctests (cargo test --doc)"
# Binaries run as several parts, each part on its own lane (libtest-mimic `--exact --skip`):
# variants_accepted alone held a lane for ~570 s (2026-12-04) while the other lane ran out
# of work; its trials are independent servers, so halves balance the two lanes. Every trial
# still runs exactly once: the parts partition the binary's own `--list`.
SPLIT = {"harness::variants_accepted": 2}
# Binaries run alone, after the lanes: the soak asserts latency ratios (issue 29: p99 under
# attack <= 3x quiet, no p50 drift past 1.5x), and a neighbour whose load starts mid-run
# moves them by itself (measured 2026-12-06, debug build: alone, drift 0.95-1.09x and p99
# 1.0-1.15x; with 2-4 busy processes arriving mid-run, drift 1.7-5.0x and p99 up to 3.6x).
# Costs its ~13 s on one core of CI's wall time.
ALONE = {"reference-impl::soak"}


def build(cargo_args):
    """Builds every test binary; returns [(name, executable, package dir, package name)]."""
    cmd = [CARGO, "test", *cargo_args, "--no-run", "--message-format=json-render-diagnostics"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    found = []
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("profile", {}).get("test"):
            continue
        exe = msg.get("executable")
        if not exe:
            continue
        target = msg["target"]
        pkg_dir = str(Path(msg["manifest_path"]).parent)
        pkg = Path(pkg_dir).name
        kind = target["kind"][0]
        name = f"{pkg}::{target['name']}" + ("" if kind == "test" else f" ({kind})")
        found.append((name, exe, pkg_dir, msg["package_id"]))
    if proc.returncode != 0:
        sys.exit(2)
    return found


def trial_names(exe, env, cwd):
    """The trials a libtest-mimic binary lists (`[kind] name: test` lines)."""
    out = subprocess.run([exe, "--list"], cwd=cwd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
    # `--exact` and `--skip` match the whole listed name, `[kind] name` included.
    names = [line[: -len(": test")] for line in out.splitlines() if line.endswith(": test")]
    if len(set(names)) != len(names):
        print(f"run_tests: {exe} lists a trial twice; it cannot be split", file=sys.stderr)
        sys.exit(2)
    return names


def split(binaries):
    """Each binary of SPLIT as its parts: [(name, exe, dir, id, extra args)], the others whole."""
    out = []
    for name, exe, pkg_dir, package_id in binaries:
        parts = SPLIT.get(name, 1)
        if parts < 2:
            out.append((name, exe, pkg_dir, package_id, []))
            continue
        names = trial_names(exe, cargo_env(pkg_dir, package_id), pkg_dir)
        if len(names) < parts:
            print(f"run_tests: {name} lists {len(names)} trials, fewer than its {parts} parts", file=sys.stderr)
            sys.exit(2)
        groups = [names[i::parts] for i in range(parts)]
        for i, group in enumerate(groups):
            others = [n for n in names if n not in group]
            extra = ["--exact"] + [a for n in others for a in ("--skip", n)]
            out.append((f"{name} [part {i + 1}/{parts}]", exe, pkg_dir, package_id, extra))
    return out


def cargo_env(pkg_dir, package_id):
    """The environment cargo gives a test binary it runs (the parts tests may read)."""
    env = dict(os.environ)
    env["CARGO_MANIFEST_DIR"] = pkg_dir
    env.setdefault("RUST_BACKTRACE", "0")
    # `path+file:///…/harness#conform@0.1.0` or `registry…#name@version`.
    tail = package_id.rsplit("#", 1)[-1]
    name, _, version = tail.partition("@")
    if name and version:
        env["CARGO_PKG_NAME"] = name
        env["CARGO_PKG_VERSION"] = version
    return env


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    cargo_args = ["--workspace", "--all-features"]

    started = time.monotonic()
    binaries = split(build(cargo_args))
    built = time.monotonic() - started
    print(f"run_tests: {len(binaries)} test binaries built in {built:.0f} s; {args.jobs} at a time", flush=True)

    try:
        previous = json.loads(TIMES.read_text())
    except (OSError, ValueError):
        previous = {}
    known = {**KNOWN_LONG, **previous}
    for name, parts in SPLIT.items():
        for i in range(parts):
            known.setdefault(f"{name} [part {i + 1}/{parts}]", KNOWN_LONG.get(name, 0.0) / parts)
    # The doctests go through cargo (rustdoc compiles them), as `cargo test` would run them.
    binaries.append((DOCTESTS, None, os.getcwd(), "", []))
    # A renamed binary would silently lose its split or its isolation: refuse stale names.
    names = {b[0].split(" [part ")[0] for b in binaries}
    stale = sorted(n for n in [*SPLIT, *ALONE] if n not in names)
    if stale:
        print(f"run_tests: SPLIT/ALONE name no test binary: {', '.join(stale)}", file=sys.stderr)
        sys.exit(2)
    # Longest first (a long binary started last would trail the run alone).
    order = sorted(binaries, key=lambda b: -known.get(b[0], 0.0))
    alone = [b for b in order if b[0] in ALONE]
    order = [b for b in order if b[0] not in ALONE]

    lock = threading.Lock()
    queue = list(order)
    results = {}
    logs = Path(tempfile.mkdtemp(prefix="conform-tests-"))

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                name, exe, pkg_dir, package_id, extra = queue.pop(0)
            log = logs / ("".join(c if c.isalnum() or c in "-_." else "_" for c in name.replace("::", "-")) + ".log")
            t0 = time.monotonic()
            if exe is None:
                cmd, env = [CARGO, "test", *cargo_args, "--doc"], None
            else:
                cmd, env = [exe, *extra], cargo_env(pkg_dir, package_id)
            with open(log, "wb") as out:
                rc = subprocess.call(cmd, cwd=pkg_dir, env=env, stdout=out, stderr=subprocess.STDOUT)
            secs = time.monotonic() - t0
            with lock:
                results[name] = (rc, secs, log)
                status = "ok  " if rc == 0 else f"FAIL (exit {rc})"
                print(f"run_tests: {status} {secs:7.1f} s  {name}", flush=True)

    threads = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.extend(alone)
    worker()

    failed = [n for n, (rc, _, _) in results.items() if rc != 0]
    for name in failed:
        rc, secs, log = results[name]
        print(f"\n===== {name}: exit {rc} after {secs:.1f} s; its output ({log}):", flush=True)
        sys.stdout.write(log.read_text(errors="replace"))
    wall = time.monotonic() - started
    print("\nrun_tests: durations (longest first)")
    for name, (rc, secs, _) in sorted(results.items(), key=lambda kv: -kv[1][1]):
        print(f"  {secs:7.1f} s  {'ok  ' if rc == 0 else 'FAIL'}  {name}")
    total = sum(s for _, s, _ in results.values())
    print(f"run_tests: {len(results)} binaries, {total:.0f} s of test time in {wall - built:.0f} s "
          f"(+ {built:.0f} s build); {len(failed)} failed")
    if not failed:
        TIMES.parent.mkdir(parents=True, exist_ok=True)
        TIMES.write_text(json.dumps({n: round(s, 1) for n, (_, s, _) in results.items()}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
