"""Writes vectors/parley/<area>.json and vectors/requirements/parley.toml, checks coverage.

    python3 tools/parley-vectors/gen.py                      # into this checkout
    python3 tools/parley-vectors/gen.py --out-root DIR       # into DIR/vectors/... (check.sh)

Reads nothing outside tools/parley-vectors/ (seed sentences come from seed_quotes.toml), so it
runs from a clean clone and its output depends on nothing but the committed sources.
"""
import argparse
import os
import re

import dsl
import gen_transport, gen_envelope, gen_kinds, gen_state, gen_authority, gen_identity, gen_reading, gen_dialectic, gen_shapes, gen_matrix  # noqa: F401 (each registers its area in dsl.AREAS)
import catalogue

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--out-root", default=catalogue.ROOT,
                help="write under DIR/vectors/ instead of this checkout (default: the checkout)")
args = ap.parse_args()
OUT = os.path.join(args.out_root, "vectors", "parley")
os.makedirs(OUT, exist_ok=True)
os.makedirs(os.path.join(args.out_root, "vectors", "requirements"), exist_ok=True)
ids = catalogue.main(args.out_root)
# sanity: captures defined before use, requirement ids exist
PH = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_.\-]*)$")
INNER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_.\-]*)\}")
def refs(v, out):
    if isinstance(v, str):
        m = PH.match(v)
        if m: out.append(m.group(1)); return
        out.extend(INNER.findall(v))
    elif isinstance(v, list):
        for x in v: refs(x, out)
    elif isinstance(v, dict):
        for x in v.values(): refs(x, out)
covered = {}
for area, vs in dsl.AREAS.items():
    for v in vs:
        for r in v["requirements"]:
            assert r in ids, (v["id"], r)
            covered.setdefault(r, []).append(v["id"])
        defined = {"run"}
        for st in v["steps"]:
            used = []
            for k in ("args", "http", "mcp", "expect", "expect_seen"):
                if k in st: refs(st[k], used)
            for u in used:
                if u.startswith(("identity.", "lock_label.", "limits.", "tool.")): continue  # built-ins
                assert u in defined, (v["id"], u)
            defined |= set(st.get("capture", {}).keys())
counts = dsl.write_all(OUT)
print(counts, sum(counts.values()))
missing = sorted(ids - set(covered))
print("uncovered:", missing)
for r in sorted(covered, key=lambda x: x): print(r, len(covered[r]))
