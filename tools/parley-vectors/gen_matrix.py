"""The systematic state × act × actor-class matrix (PV-ST-1..6, PV-AU-1..4, PV-AU-6)."""
from dsl import *
from gen_state import setup

FORWARD = ["open", "answered", "decided", "closed"]
LATERAL = ["deferred", "obsolete", "rejected"]
STATES = ["open", "answered", "decided", "closed", "closed!", "deferred", "deferred!"]
ACTORS = {"creator": "agent_a", "other": "agent_b", "moderator": "moderator", "human": "human", "reader": "reader"}
ACTS = ["answer", "decide", "close", "mark-deferred", "mark-decided", "reopen"]
TARGET = {"answer": "answered", "decide": "decided", "close": "closed", "mark-deferred": "deferred",
          "mark-decided": "decided", "reopen": "open"}
CONFIRMER = {"moderator", "human"}


def outcome(state, act, actor):
    """Expected (expect, resulting thread matcher) per parley-v1.md §5–§6 and the check order."""
    confirmed = state.endswith("!")
    cur = state.rstrip("!")
    locked = cur == "closed" and confirmed
    lateral = cur in LATERAL
    target = TARGET[act]
    if actor == "reader":
        return RIGHT_MISSING, None, ["PV-AU-1", "PV-AU-6"]
    if act == "reopen":
        if cur == "closed":
            if actor == "other":
                return AUTHORITY, None, ["PV-AU-3"]
        elif lateral:
            if actor in ("creator", "other"):
                return AUTHORITY, None, ["PV-AU-3"]
        else:
            if actor == "other":
                return one_of(AUTHORITY, TRANSITION), None, ["PV-ST-6", "PV-AU-3"]
            return TRANSITION, None, ["PV-ST-6"]
        conf = actor in CONFIRMER
        return ok(200), thread_state("open", conf, "user" if actor == "human" else "llm"), ["PV-ST-6", "PV-AU-3", "PV-ST-5"]
    if act != "answer" and actor == "other":
        return AUTHORITY, None, ["PV-AU-2", "PV-AU-6"]
    if locked:
        return LOCKED, None, ["PV-ST-4"] + (["PV-AU-4"] if actor == "human" else [])
    status = 200 if act.startswith("mark") else 201
    if lateral:
        if target == cur:
            conf = confirmed or actor in CONFIRMER
            origin = "user" if (actor == "human" and not confirmed) else "llm"
            return ok(status), thread_state(cur, conf, origin), ["PV-ST-3", "PV-ST-5"]
        return TRANSITION, None, ["PV-ST-3"]
    # forward current state
    if target in LATERAL:
        change = True
    else:
        ti, ci = FORWARD.index(target), FORWARD.index(cur)
        if ti < ci:
            return TRANSITION, None, ["PV-ST-1"] + (["PV-AU-4"] if actor == "human" else [])
        change = ti > ci
    if change:
        conf = actor in CONFIRMER
        origin = "user" if actor == "human" else "llm"
        return ok(status), thread_state(target, conf, origin), ["PV-ST-1" if target in FORWARD else "PV-ST-2", "PV-ST-5"]
    conf = confirmed or actor in CONFIRMER
    origin = "user" if (actor == "human" and not confirmed) else "llm"
    return ok(status), thread_state(target, conf, origin), ["PV-ST-1", "PV-ST-5"]


def act_step(act, role, expect):
    if act == "answer":
        ext = "x" if role == "agent_a" else None
        return reply(role, "answer", thread="$t", ext=ext, expect=expect)
    if act in ("decide", "close"):
        return reply(role, act, thread="$t", expect=expect)
    if act.startswith("mark-"):
        return mark(role, "$t", act[5:], expect)
    return reopen(role, "$t", expect)


def label(state):
    s = state.rstrip("!")
    return f"{'confirmed ' if state.endswith('!') else 'proposed '}{s}" if s != "open" else "proposed open"


for state in STATES:
    for act in ACTS:
        for actor, role in ACTORS.items():
            expect, result, reqs = outcome(state, act, actor)
            vid = f"state/matrix/{state.rstrip('!')}{'-confirmed' if state.endswith('!') else ''}/{act}/{actor}"
            CUR["id"] = vid
            if "status" in expect:
                expect = dict(expect, match={"thread": result})
                after = {"thread": result}
                what = f"is accepted → {result['state']} ({'confirmed' if result['state_confirmed_at'] else 'proposed'})"
            else:
                after = {"thread": {"state": state.rstrip("!"),
                                    "state_confirmed_at": NONNULL_TS if state.endswith("!") else None}}
                alts = expect["one_of"] if "one_of" in expect else [expect]
                what = "is refused " + " or ".join(f"{a['refusal']['status']} {a['refusal']['reason']}" for a in alts)
            steps = setup(state) + [act_step(act, role, expect),
                                    read("agent_a", "$t", after, note="the thread as the act left it")]
            who = {"creator": "the creator", "other": "another writer (no lock)", "moderator": "the moderator (lock)",
                   "human": "the human", "reader": "a read-only token"}[actor]
            vector("state", vid, reqs,
                   f"{act.replace('-', ' ')} by {who} on a {label(state)} thread {what}", steps)
