from dsl import *


def V(vid, reqs, title, steps_fn, **kw):
    CUR["id"] = vid
    return vector("kinds", vid, reqs, title, steps_fn(), **kw)


# name: (awaiting, opens_thread, marks, needs_authority)
CORE = {
    "ask": (True, True, None, False),
    "answer": (False, False, "answered", False),
    "clarify": (True, False, None, False),
    "inform": (False, False, None, False),
    "propose": (True, False, None, False),
    "agree": (False, False, None, False),
    "object": (True, False, None, False),
    "decide": (False, False, "decided", True),
    "close": (False, False, "closed", True),
}


def kinds_matcher(table):
    props = {k: {"awaiting": a, "opens_thread": o, "marks": m, "needs_authority": n} for k, (a, o, m, n) in table.items()}
    return {"$one_of": [
        {"$contains": [dict({"name": k}, **p) for k, p in props.items()]},
        {"$contains": [dict({"kind": k}, **p) for k, p in props.items()]},
        props,
    ]}


V("kinds/manifest-lists-the-nine", ["PV-KD-1", "PV-MF-1"],
  "The manifest lists the nine core kinds with awaiting, opens_thread, marks and needs_authority exactly as §4",
  lambda: [manifest("anonymous", {"kinds": kinds_matcher(CORE)})])

# each kind accepted in its context, with its awaiting (PV-KD-2)
V("kinds/ask-opening-awaits-anyone-but-author", ["PV-KD-2", "PV-KD-1"],
  "An opening ask awaits {any: true, except: the author's party} (extension null when absent)",
  lambda: [open_thread(match={"thread": {"awaiting": {"any": True, "except": party("agent_a")}}})])
V("kinds/ask-opening-with-extension-excepts-that-extension", ["PV-KD-2"],
  "An opening ask from extension scout excepts exactly (identity, scout)",
  lambda: [open_thread(ext="scout", match={"thread": {"awaiting": {"any": True, "except": party("agent_a", "scout")}}})])
V("kinds/human-ask-awaits-anyone-but-human", ["PV-KD-2"],
  "An opening ask by the human awaits anyone except the human's party",
  lambda: [open_thread("human", match={"thread": {"awaiting": {"any": True, "except": party("human")}}})])
for k in ["clarify", "propose", "object"]:
    V(f"kinds/{k}-awaits-parent-author", ["PV-KD-2", "PV-KD-1"],
      f"{k} is an awaiting kind: it is accepted and the thread awaits its parent's author party",
      lambda k=k: [open_thread(),
                   reply("agent_b", k, parent="$r",
                         expect=created({"message": {"kind": k, "parent": "$r"},
                                         "thread": {"state": "open", "awaiting": party("agent_a")}}))])
for k in ["inform", "agree"]:
    V(f"kinds/{k}-awaits-nobody", ["PV-KD-2", "PV-KD-1"],
      f"{k} is accepted, does not mark the thread and leaves awaiting null",
      lambda k=k: [open_thread(),
                   reply("agent_b", k, thread="$t",
                         expect=created({"message": {"kind": k}, "thread": {"state": "open", "awaiting": None}}))])
V("kinds/answer-awaits-nobody-and-marks-answered", ["PV-KD-2", "PV-KD-1", "PV-ST-1"],
  "answer is accepted, marks the thread answered and leaves awaiting null",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread="$t",
                 expect=created({"message": {"kind": "answer"}, "thread": {"state": "answered", "awaiting": None}}))])
V("kinds/decide-awaits-nobody-and-marks-decided", ["PV-KD-2", "PV-KD-1"],
  "decide by the creator is accepted, marks decided and leaves awaiting null",
  lambda: [open_thread(),
           reply("agent_a", "decide", thread="$t",
                 expect=created({"message": {"kind": "decide"}, "thread": {"state": "decided", "awaiting": None}}))])
V("kinds/close-awaits-nobody-and-marks-closed", ["PV-KD-2", "PV-KD-1"],
  "close by the creator is accepted, marks closed and leaves awaiting null",
  lambda: [open_thread(),
           reply("agent_a", "close", thread="$t",
                 expect=created({"message": {"kind": "close"}, "thread": {"state": "closed", "awaiting": None}}))])
V("kinds/awaiting-names-nested-parent-author", ["PV-KD-2"],
  "An object replying to agent_b's message (not the root) awaits agent_b, not the thread's creator",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread="$t", capture={"m": "/message/id"}),
           reply("moderator", "object", parent="$m",
                 expect=created({"thread": {"awaiting": party("agent_b")}}))])
V("kinds/awaiting-carries-parent-extension", ["PV-KD-2"],
  "A clarify to a message from extension b1 awaits the party (agent_b, b1)",
  lambda: [open_thread(),
           reply("agent_b", "inform", thread="$t", ext="b1", capture={"m": "/message/id"}),
           reply("moderator", "clarify", parent="$m",
                 expect=created({"thread": {"awaiting": party("agent_b", "b1")}}))])
V("kinds/awaiting-from-last-message-only", ["PV-KD-2"],
  "After a clarify (awaiting agent_a) an inform reply sets awaiting to null: only the last message counts",
  lambda: [open_thread(),
           reply("agent_b", "clarify", thread="$t", capture={"m": "/message/id"},
                 expect=created({"thread": {"awaiting": party("agent_a")}})),
           reply("agent_a", "inform", parent="$m", ext="x", expect=created({"thread": {"awaiting": None}})),
           read("agent_b", "$t", {"thread": {"awaiting": None}})])
V("kinds/awaiting-moves-to-the-newest-awaiting-kind", ["PV-KD-2"],
  "A propose replying to the moderator's answer awaits the moderator: never two awaited parties",
  lambda: [open_thread(),
           reply("moderator", "answer", thread="$t", capture={"m": "/message/id"}),
           reply("agent_b", "propose", parent="$m", expect=created({"thread": {"awaiting": party("moderator")}})),
           read("agent_a", "$t", {"thread": {"awaiting": party("moderator")}})])
V("kinds/mark-does-not-change-awaiting", ["PV-KD-2", "PV-ST-2"],
  "A mark is not a message: after the moderator marks decided, awaiting still derives from the opening ask",
  lambda: [open_thread(),
           mark("moderator", "$t", "decided", ok(200, {"thread": {"state": "decided"}})),
           read("agent_b", "$t", {"thread": {"state": "decided",
                                             "awaiting": {"any": True, "except": party("agent_a")}}})])
V("kinds/implicit-root-parent-awaiting", ["PV-KD-2", "PV-EN-6"],
  "An object sent with thread only replies to the root and awaits the root's author",
  lambda: [open_thread(ext="lead"),
           reply("agent_b", "object", thread="$t", expect=created({"thread": {"awaiting": party("agent_a", "lead")}}))])
V("kinds/read-thread-shows-awaiting", ["PV-KD-2", "PV-RD-1"],
  "read_thread reports the same awaiting as the post that produced it",
  lambda: [open_thread(),
           reply("agent_b", "clarify", thread="$t"),
           read("reader", "$t", {"thread": {"awaiting": party("agent_a")}})])

UNKNOWN = [("vote", "vote (votes are not an act)"), ("Ask", "Ask (kinds are case-sensitive)"),
           ("question", "question"), ("retract", "retract"), ("ask ", "ask with a trailing space"),
           ("reopen", "reopen (an operation, not a kind)"), ("mark", "mark (an operation, not a kind)"),
           ("ANSWER", "ANSWER in upper case")]
for i, (k, what) in enumerate(UNKNOWN):
    V(f"kinds/unknown-kind-{i + 1}", ["PV-EN-3", "PV-KD-1"],
      f"kind {what} is refused 400 kind_unknown",
      lambda k=k: [post("agent_a", env(k), KIND_UNKNOWN)])
V("kinds/unknown-kind-on-reply", ["PV-EN-3"],
  "An unknown kind in an existing thread is refused kind_unknown and stores nothing",
  lambda: [open_thread(),
           reply("agent_b", "endorse", thread="$t", expect=KIND_UNKNOWN),
           read("agent_b", "$t", {"messages": [{"replies": []}]})])
V("kinds/empty-kind", ["PV-EN-3", "PV-EN-1"],
  "An empty kind string is refused 400 (kind_unknown or invalid_body)",
  lambda: [post("agent_a", env(""), one_of(KIND_UNKNOWN, INVALID))])
V("kinds/dialectic-kind-known-when-profile-listed", ["PV-DI-8", "PV-EN-3"],
  "With the dialectic profile in the manifest, assert is a known kind (not kind_unknown) and the manifest's profile lists it",
  lambda: [manifest("anonymous", {"profiles": {"$contains": [{"name": "dialectic",
                                                               "kinds": {"$contains": [kind_named(k) for k in ["assert", "attest", "refute", "verify"]]}}]}}),
           post("agent_a", env("assert", evidence=[{"kind": "note", "ref": "seen in the logs"}]),
                created({"message": {"kind": "assert"}}))],
  needs=["dialectic"])
