import json, re, sys, tomllib
import dsl
import gen_transport, gen_envelope, gen_kinds, gen_state, gen_authority, gen_identity, gen_reading, gen_dialectic, gen_shapes, gen_matrix  # noqa
import catalogue

import os as _os
ROOT = _os.path.normpath(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", ".."))
OUT = _os.path.join(ROOT, "vectors", "parley")
ids = catalogue.main()
import os
os.makedirs(OUT, exist_ok=True)
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
                if u.startswith("identity.") or u.startswith("lock_label."): continue
                assert u in defined, (v["id"], u)
            defined |= set(st.get("capture", {}).keys())
counts = dsl.write_all(OUT)
print(counts, sum(counts.values()))
missing = sorted(ids - set(covered))
print("uncovered:", missing)
for r in sorted(covered, key=lambda x: x): print(r, len(covered[r]))
