# Tiny DSL that writes Parley golden vectors (vectors/README.md, format_version 1).
import json
import re

AREAS = {}
CUR = {"id": None}

TH = "^th_[0-9]+$"
MSG = "^msg_[0-9]+$"
EV = "^ev_[0-9]+$"
CL = "^cl_[0-9]+$"
# RFC 3339 UTC (PV-RS-2 / §3: `created_at` "RFC 3339 UTC"): `Z` or `+00:00`; RFC 3339 §5.6
# allows the `T` and `Z` in lower case too.
TS = "^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|\\+00:00)$"
KI_MOD = "KI · ${lock_label.moderator}"
NONNULL_TS = {"$regex": TS}
ID_RE = {"th": TH, "msg": MSG, "ev": EV, "cl": CL}

ROLES = ["agent_a", "agent_b", "moderator", "verifier", "reader", "human", "limited", "anonymous"]


def rx(p):
    return {"$regex": p}


def ident(role):
    return f"$identity.{role}"


def party(role, ext=None):
    return {"identity": ident(role), "extension": ext}


# The reference instance's extension_pattern (parley-v1.md §2). Vectors that probe its exact
# shape apply only to a target declaring it: the declared value is authoritative (PV-MF-2).
REF_EXTENSION_PATTERN = "^[a-z0-9][a-z0-9_-]{0,31}$"


def declares(pointer, value):
    """A `needs` entry: the vector applies only when the manifest declares `value` at `pointer`."""
    return f"{pointer}={json.dumps(value, ensure_ascii=False)}"


NEEDS_REF_EXT = [declares("/limits/extension_pattern", REF_EXTENSION_PATTERN)]


def kind_named(name):
    """PV-MF-1 shows profiles as `"kinds":[...]` without fixing the items' shape: a bare name
    or a kind object (the shapes the top-level `kinds` may take: `name` or `kind`) naming it."""
    return {"$one_of": [name, {"name": name}, {"kind": name}]}


def tool_binding():
    """PV-MF-1: `operations` is "the table above, machine-readable" — the §1 table's MCP tool
    column has no JSON shape: a bare tool name, `{"tool": …}` or `{"name": …}` all name it."""
    name = {"$regex": "."}
    return {"$one_of": [name, {"tool": name}, {"name": name}]}


def http_binding(method):
    """The §1 table's HTTP route column, machine-readable: `{"method", "path"}` or the table's
    own notation `"GET /v1/manifest"` (PV-MF-1 fixes no JSON shape)."""
    return {"$one_of": [{"method": method, "path": {"$regex": "^/"}}, {"$regex": f"^{method} /"}]}


def vector(area, vid, reqs, title, steps, needs=None, exclusive=False, advisory=None):
    assert re.fullmatch(r"[a-z0-9][a-z0-9._/-]*", vid), vid
    roles = []
    for st in steps:
        r = st["as"]
        if r not in roles:
            roles.append(r)
    # A role whose identity or lock label a step names is used too: its token and whoami
    # are needed to resolve the placeholder (the loader refuses an unlisted one).
    for r in re.findall(r"\$\{?(?:identity|lock_label)\.([a-z_]+)", json.dumps(steps)):
        if r not in roles:
            roles.append(r)
    roles.sort(key=ROLES.index)
    v = {"id": vid, "requirements": reqs, "title": title, "roles": roles}
    if needs:
        v["needs"] = needs
    if exclusive:
        v["exclusive"] = True
    if advisory:
        v["advisory"] = advisory
    v["steps"] = steps
    AREAS.setdefault(area, []).append(v)
    return v


# ---- expectations -------------------------------------------------------

def ok(status=200, match=None, headers=None):
    e = {"status": status}
    if match is not None:
        e["match"] = match
    if headers:
        e["headers"] = headers
    return e


def created(match=None):
    return ok(201, match)


def refused(status, reason, headers=None):
    e = {"refusal": {"status": status, "reason": reason}}
    if headers:
        e["headers"] = headers
    return e


def one_of(*alts):
    return {"one_of": list(alts)}


R400 = lambda reason: refused(400, reason)
INVALID = refused(400, "invalid_body")
TOO_LONG = refused(400, "body_too_long")
KIND_UNKNOWN = refused(400, "kind_unknown")
THREAD_REQUIRED = refused(400, "thread_required")
EV_REQUIRED = refused(400, "evidence_required")
EV_INVALID = refused(400, "evidence_invalid")
TOKEN_MISSING = refused(401, "token_missing")
TOKEN_INVALID = refused(401, "token_invalid")
RIGHT_MISSING = refused(403, "token_right_missing")
AUTHORITY = refused(403, "thread_authority_missing")
SELF_ATTEST = refused(403, "self_attest")
THREAD_NF = refused(404, "thread_not_found")
MSG_NF = refused(404, "message_not_found")
CLAIM_NF = refused(404, "claim_not_found")
TRANSITION = refused(409, "invalid_transition")
LOCKED = refused(409, "thread_locked")
SELF_REPLY = refused(409, "self_reply")
TOO_LARGE = refused(413, "payload_too_large")
RATE_LIMITED = refused(429, "rate_limited")


# ---- steps --------------------------------------------------------------

def step(as_, op=None, args=None, expect=None, capture=None, note=None, token=None, http=None, mcp=None,
         paginate=False, repeat=None, expect_seen=None):
    st = {"as": as_}
    if token is not None:
        st["token"] = token
    if op is not None:
        st["op"] = op
        if args is not None:
            st["args"] = args
    if http is not None:
        st["http"] = http
    if mcp is not None:
        st["mcp"] = mcp
    if paginate:
        st["paginate"] = True
    if repeat is not None:
        st["repeat"] = repeat
    if expect_seen is not None:
        st["expect_seen"] = expect_seen
    st["expect"] = expect if expect is not None else ok()
    if capture:
        st["capture"] = capture
    if note:
        st["note"] = note
    return st


def on(st, *reqs):
    """The step with the requirement IDs an unexpected answer to it violates (default: the
    vector's primary one; the report blames only these)."""
    st["requirements"] = list(reqs)
    return st


_counter = {"n": 0}


def body(tag=None):
    """A unique body: vector id + tag + the run nonce."""
    _counter["n"] += 1
    t = tag or f"m{_counter['n']}"
    return f"{CUR['id']} {t} ${{run}}"


def env(kind, thread=None, parent=None, ext=None, b=None, **extra):
    e = {"kind": kind}
    if thread is not None:
        e["thread"] = thread
    if parent is not None:
        e["parent"] = parent
    if ext is not None:
        e["from"] = {"extension": ext}
    e["body"] = b if b is not None else body(kind)
    e.update(extra)
    return e


def post(as_, envelope, expect=None, capture=None, note=None, token=None, **kw):
    if expect is None:
        expect = created()
    return step(as_, "post", envelope, expect, capture, note, token, **kw)


def open_thread(as_="agent_a", t="t", r="r", ext=None, match=None, kind="ask", extra=None, expect_status=201):
    """Opens a thread with an ask (captures $t = thread id, $r = root message id)."""
    e = env(kind, ext=ext, **(extra or {}))
    return post(as_, e, created(match), capture={t: "/thread/id", r: "/message/id"})


def reply(as_, kind, thread=None, parent=None, ext=None, expect=None, capture=None, note=None,
          repeat=None, expect_seen=None, token=None, **extra):
    e = env(kind, thread=thread, parent=parent, ext=ext, **extra)
    return post(as_, e, expect, capture=capture, note=note, repeat=repeat, expect_seen=expect_seen, token=token)


def mark(as_, thread, state, expect=None, capture=None, note=None):
    return step(as_, "mark", {"thread": thread, "state": state}, expect or ok(200), capture, note)


def reopen(as_, thread, expect=None, capture=None, note=None):
    return step(as_, "reopen", {"thread": thread}, expect or ok(200), capture, note)


def read(as_, thread, match=None, expect=None, capture=None, note=None):
    return step(as_, "read_thread", {"thread": thread}, expect or ok(200, match), capture, note)


def events(as_, thread, match=None, since=None, expect=None, capture=None, note=None):
    a = {"thread": thread}
    if since is not None:
        a["since"] = since
    return step(as_, "list_events", a, expect or ok(200, match), capture, note)


def inbox(as_, match=None, ext=None, since=None, limit=200, paginate=True, expect=None, capture=None, note=None):
    a = {}
    if since is not None:
        a["since"] = since
    if ext is not None:
        a["extension"] = ext
    if limit is not None:
        a["limit"] = limit
    return step(as_, "inbox", a, expect or ok(200, match), capture, note, paginate=paginate)


def claim(as_, c, match=None, expect=None, capture=None, note=None):
    return step(as_, "read_claim", {"claim": c}, expect or ok(200, match), capture, note)


def whoami(as_, match=None, expect=None, token=None, capture=None):
    return step(as_, "whoami", None, expect or ok(200, match), capture, token=token)


def manifest(as_="anonymous", match=None, capture=None, expect=None, note=None):
    return step(as_, "get_manifest", None, expect or ok(200, match), capture, note)


def thread_state(state, confirmed, origin="llm", label=None):
    m = {"state": state, "state_origin": origin,
         "state_confirmed_at": NONNULL_TS if confirmed else None}
    if label is not None:
        m["state_label"] = label
    return m


def has_thread(t, **m):
    return {"items": {"$contains": [dict({"thread": t}, **m)]}}


def lacks_thread(t):
    return {"items": {"$not_contains": [{"thread": t}]}}


def write_all(outdir):
    counts = {}
    ids = set()
    for area, vs in AREAS.items():
        for v in vs:
            assert v["id"] not in ids, v["id"]
            ids.add(v["id"])
        doc = {"format_version": 1, "suite": "parley", "area": area, "vectors": vs}
        with open(f"{outdir}/{area}.json", "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, indent=2)
            f.write("\n")
        counts[area] = len(vs)
    return counts
