from dsl import *
from gen_state import setup


def V(vid, reqs, title, steps_fn, **kw):
    CUR["id"] = vid
    return vector("reading", vid, reqs, title, steps_fn(), **kw)


# ================================================================ PV-RD-1 read_thread
V("reading/tree-nested-by-parent", ["PV-RD-1", "PV-RS-2"],
  "read_thread nests messages by parent: the root carries replies, each reply its own replies, leaves have replies []",
  lambda: [open_thread(),
           reply("agent_b", "answer", parent="$r", capture={"m1": "/message/id"}),
           reply("agent_a", "inform", parent="$m1", ext="x", capture={"m2": "/message/id"}),
           reply("moderator", "clarify", parent="$r", capture={"m3": "/message/id"}),
           reply("agent_b", "agree", parent="$m2", capture={"m4": "/message/id"}),
           read("reader", "$t", {"thread": {"id": "$t"}, "messages": [
               {"id": "$r", "parent": None, "kind": "ask", "replies": [
                   {"id": "$m1", "parent": "$r", "kind": "answer", "replies": [
                       {"id": "$m2", "parent": "$m1", "replies": [
                           {"id": "$m4", "parent": "$m2", "kind": "agree", "replies": []}]}]},
                   {"id": "$m3", "parent": "$r", "kind": "clarify", "replies": []}]}]})])
V("reading/siblings-in-creation-order", ["PV-RD-1"],
  "Siblings are listed in creation order (not by author, kind or id string order)",
  lambda: [open_thread(),
           reply("verifier", "inform", parent="$r", capture={"a": "/message/id"}),
           reply("agent_b", "clarify", parent="$r", capture={"b": "/message/id"}),
           reply("moderator", "agree", parent="$r", capture={"c": "/message/id"}),
           reply("human", "object", parent="$r", capture={"d": "/message/id"}),
           read("agent_a", "$t", {"messages": [{"replies": [{"id": "$a"}, {"id": "$b"}, {"id": "$c"}, {"id": "$d"}]}]})])
V("reading/ten-siblings-in-order", ["PV-RD-1"],
  "Ten replies to the root from two authors come back in creation order (catches newest-first, by-author or by-kind ordering)",
  lambda: [open_thread()] +
  [reply("agent_b" if i % 2 == 0 else "moderator", "inform", parent="$r", capture={f"s{i}": "/message/id"}) for i in range(10)] +
  [read("agent_a", "$t", {"messages": [{"replies": [{"id": f"$s{i}"} for i in range(10)]}]})])
V("reading/refused-messages-absent", ["PV-RD-1"],
  "Refused posts leave no trace in the tree",
  lambda: [open_thread(),
           reply("agent_a", "inform", thread="$t", expect=SELF_REPLY),
           reply("reader", "inform", thread="$t", expect=RIGHT_MISSING),
           reply("agent_b", "inform", thread="$t", b="", expect=INVALID),
           read("agent_b", "$t", {"messages": [{"id": "$r", "replies": []}]})])
V("reading/thread-fields", ["PV-RD-1", "PV-RS-2"],
  "read_thread returns the Thread fields: id, state, state_origin, state_confirmed_at, state_label, creator, awaiting, created_at, last_activity_at",
  lambda: [open_thread(ext="lead"),
           read("agent_b", "$t", {"thread": {"id": "$t", "state": "open", "state_origin": "llm", "state_confirmed_at": None,
                                             "state_label": ident("agent_a"), "creator": party("agent_a", "lead"),
                                             "awaiting": {"any": True, "except": party("agent_a", "lead")},
                                             "created_at": rx(TS), "last_activity_at": rx(TS)}})])
V("reading/anonymous-cannot-read", ["PV-RD-1", "PV-TR-4"],
  "read_thread without a token is 401 token_missing",
  lambda: [open_thread(), read("anonymous", "$t", expect=TOKEN_MISSING)])

# ================================================================ PV-RD-2 list_events
V("reading/events-since", ["PV-RD-2"],
  "list_events since=<event id> returns only the later events, in order",
  lambda: setup("open") + [
      events("agent_a", "$t", {"events": [{"to_state": "open"}]}, capture={"e1": "/events/0/id"}),
      reply("agent_b", "answer", thread="$t"),
      reply("agent_a", "decide", thread="$t"),
      mark("moderator", "$t", "decided"),
      events("agent_a", "$t", {"events": [{"from_state": "open", "to_state": "answered"},
                                          {"from_state": "answered", "to_state": "decided", "confirmed_at": None},
                                          {"from_state": "decided", "to_state": "decided", "confirmed_at": rx(TS)}]},
             since="$e1")])
V("reading/events-since-last-is-empty", ["PV-RD-2"],
  "list_events since the last event returns an empty list",
  lambda: setup("answered") + [
      events("agent_a", "$t", {"events": {"$len": 2}}, capture={"e2": "/events/1/id"}),
      events("agent_a", "$t", {"events": []}, since="$e2")])
V("reading/events-since-middle", ["PV-RD-2"],
  "list_events since the second event returns exactly the third and fourth",
  lambda: setup("open") + [
      reply("agent_b", "answer", thread="$t"),
      mark("agent_a", "$t", "decided"),
      mark("agent_a", "$t", "closed"),
      events("agent_a", "$t", {"events": {"$len": 4}}, capture={"e2": "/events/1/id", "e3": "/events/2/id", "e4": "/events/3/id"}),
      events("agent_b", "$t", {"events": [{"id": "$e3", "to_state": "decided"}, {"id": "$e4", "to_state": "closed"}]}, since="$e2")])
V("reading/events-ids-increase", ["PV-RD-2", "PV-RS-2"],
  "Event ids are ev_N and list_events keeps the order in which the changes happened",
  lambda: setup("open") + [
      mark("agent_a", "$t", "decided", capture={"ea": "/event/id"}),
      mark("agent_a", "$t", "closed", capture={"eb": "/event/id"}),
      reopen("agent_a", "$t", capture={"ec": "/event/id"}),
      events("reader", "$t", {"events": {"$ordered": [{"id": "$ea"}, {"id": "$eb"}, {"id": "$ec"}]}})])
V("reading/events-per-thread", ["PV-RD-2"],
  "list_events returns only the thread's own events",
  lambda: [open_thread(t="t1", r="r1"), open_thread(t="t2", r="r2"),
           mark("agent_a", "$t2", "decided"),
           events("agent_a", "$t1", {"events": [{"thread": "$t1", "to_state": "open"}]})])
V("reading/events-anonymous", ["PV-RD-2", "PV-TR-4"],
  "list_events without a token is 401 token_missing",
  lambda: [open_thread(), events("anonymous", "$t", expect=TOKEN_MISSING)])

# ================================================================ PV-RD-3 inbox
ANY_A = {"any": True, "except": party("agent_a")}
V("reading/inbox-open-question-visible-to-others", ["PV-RD-3", "PV-RS-2"],
  "An open question awaiting anyone appears in another writer's inbox with thread, state, awaiting and last_message",
  lambda: [open_thread(),
           inbox("agent_b", has_thread("$t", state="open", awaiting=ANY_A,
                                       last_message={"id": "$r", "kind": "ask", "thread": "$t", "from": party("agent_a")}))])
V("reading/inbox-open-question-visible-to-human-and-moderator", ["PV-RD-3"],
  "An open question awaiting anyone appears in the human's and the moderator's inboxes",
  lambda: [open_thread(), inbox("human", has_thread("$t")), inbox("moderator", has_thread("$t"))])
V("reading/inbox-hides-own-question", ["PV-RD-3"],
  "The author's own open question (same party: no extension) is not in its own inbox",
  lambda: [open_thread(), inbox("agent_a", lacks_thread("$t"))])
V("reading/inbox-extension-hides-own-extension", ["PV-RD-3"],
  "With extension=qa the question asked from extension qa is hidden; with qb, or without extension (the empty extension), it is shown",
  lambda: [open_thread(ext="qa"),
           inbox("agent_a", lacks_thread("$t"), ext="qa"),
           inbox("agent_a", has_thread("$t"), ext="qb"),
           inbox("agent_a", has_thread("$t"))])
V("reading/inbox-other-extension-sees-no-extension-question", ["PV-RD-3"],
  "A question asked without extension is shown to the same identity's extension zz (another party)",
  lambda: [open_thread(), inbox("agent_a", has_thread("$t"), ext="zz")])
V("reading/inbox-named-party", ["PV-RD-3", "PV-KD-2"],
  "A thread awaiting agent_a (after agent_b's clarify) is in agent_a's inbox only, not agent_b's or the moderator's",
  lambda: [open_thread(),
           reply("agent_b", "clarify", thread="$t"),
           inbox("agent_a", has_thread("$t", awaiting=party("agent_a"))),
           inbox("agent_b", lacks_thread("$t")),
           inbox("moderator", lacks_thread("$t"))])
V("reading/inbox-named-party-extension", ["PV-RD-3"],
  "Awaiting (agent_a, qa): shown with extension qa or without extension, hidden with extension qb",
  lambda: [open_thread(ext="qa"),
           reply("agent_b", "clarify", thread="$t", expect=created({"thread": {"awaiting": party("agent_a", "qa")}})),
           inbox("agent_a", has_thread("$t"), ext="qa"),
           inbox("agent_a", has_thread("$t")),
           inbox("agent_a", lacks_thread("$t"), ext="qb")])
V("reading/inbox-null-awaiting-hidden", ["PV-RD-3"],
  "After an answer (awaiting null) the thread is in nobody's inbox",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread="$t"),
           inbox("agent_a", lacks_thread("$t")),
           inbox("agent_b", lacks_thread("$t")),
           inbox("moderator", lacks_thread("$t"))])
V("reading/inbox-locked-hidden", ["PV-RD-3", "PV-ST-4"],
  "A confirmed closed (locked) thread is hidden although its last message still awaits anyone",
  lambda: [open_thread(), inbox("agent_b", has_thread("$t")),
           mark("moderator", "$t", "closed"),
           inbox("agent_b", lacks_thread("$t"))])
V("reading/inbox-proposed-closed-visible", ["PV-RD-3", "PV-ST-4"],
  "A proposed closed does not lock: the thread stays in other inboxes",
  lambda: [open_thread(), mark("agent_a", "$t", "closed"),
           inbox("agent_b", has_thread("$t", state="closed"))])
V("reading/inbox-lateral-hidden", ["PV-RD-3", "PV-ST-3"],
  "A lateral thread (even a proposed deferred) is hidden from inboxes",
  lambda: [open_thread(), mark("agent_a", "$t", "deferred"), inbox("agent_b", lacks_thread("$t"))])
V("reading/inbox-reopened-visible-again", ["PV-RD-3", "PV-ST-6"],
  "A thread marked obsolete disappears from the inbox and comes back once the moderator reopens it",
  lambda: [open_thread(), mark("moderator", "$t", "obsolete"),
           inbox("agent_b", lacks_thread("$t")),
           reopen("moderator", "$t"),
           inbox("agent_b", has_thread("$t", state="open"))])
V("reading/inbox-decided-awaiting-visible", ["PV-RD-3"],
  "A decided (not locked, not lateral) thread whose last message awaits the caller stays in the inbox",
  lambda: [open_thread(), mark("agent_a", "$t", "decided"), inbox("agent_b", has_thread("$t", state="decided"))])
V("reading/inbox-last-message-is-latest", ["PV-RD-3"],
  "An inbox item's last_message is the thread's newest message",
  lambda: [open_thread(),
           reply("agent_b", "clarify", thread="$t", capture={"m": "/message/id"}),
           inbox("agent_a", has_thread("$t", last_message={"id": "$m", "kind": "clarify", "from": party("agent_b")}))])
V("reading/inbox-ordered-by-last-activity", ["PV-RD-3"],
  "The inbox is ordered by last activity, oldest first: new activity moves a thread behind the others",
  lambda: [open_thread(t="t1", r="r1"), open_thread(t="t2", r="r2"),
           reply("agent_b", "clarify", thread="$t2"),
           reply("agent_b", "clarify", thread="$t1"),
           inbox("agent_a", {"items": {"$ordered": [{"thread": "$t2"}, {"thread": "$t1"}]}}),
           reply("agent_b", "object", parent="$r2"),
           inbox("agent_a", {"items": {"$ordered": [{"thread": "$t1"}, {"thread": "$t2"}]}})])
V("reading/inbox-since-cursor-returns-newer-activity", ["PV-RD-3"],
  "since=<cursor> returns threads with newer activity and not those without",
  lambda: [open_thread(t="t1", r="r1"), open_thread(t="t2", r="r2"),
           reply("agent_b", "clarify", thread="$t1"), reply("agent_b", "clarify", thread="$t2"),
           inbox("agent_a", {"items": {"$contains": [{"thread": "$t1"}, {"thread": "$t2"}]}, "cursor": {"$any": True}},
                 capture={"c": "/cursor"}),
           reply("agent_b", "object", parent="$r1"),
           inbox("agent_a", has_thread("$t1"), since="$c"),
           inbox("agent_a", lacks_thread("$t2"), since="$c")])
V("reading/inbox-cursor-no-repeat", ["PV-RD-3"],
  "Repeating the inbox with the returned cursor and no new activity returns nothing; new activity shows only the new thread",
  lambda: [inbox("agent_b", {"cursor": {"$any": True}}, capture={"c0": "/cursor"}),
           inbox("agent_b", {"items": []}, since="$c0", paginate=False),
           open_thread(),
           inbox("agent_b", {"items": [{"thread": "$t"}]}, since="$c0", paginate=False, capture={"c1": "/cursor"}),
           inbox("agent_b", {"items": []}, since="$c1", paginate=False),
           open_thread(t="t2", r="r2"),
           inbox("agent_b", {"items": [{"thread": "$t2"}]}, since="$c1", paginate=False)],
  exclusive=True)
V("reading/inbox-limit-pages-without-loss", ["PV-RD-3"],
  "limit=2 with the cursor pages three new threads as [T1, T2], [T3], [] — oldest first, no loss, no repeat",
  lambda: [inbox("agent_b", {"cursor": {"$any": True}}, capture={"c0": "/cursor"}),
           open_thread(t="t1", r="r1"), open_thread(t="t2", r="r2"), open_thread(t="t3", r="r3"),
           inbox("agent_b", {"items": [{"thread": "$t1"}, {"thread": "$t2"}]}, since="$c0", limit=2, paginate=False,
                 capture={"c1": "/cursor"}),
           inbox("agent_b", {"items": [{"thread": "$t3"}]}, since="$c1", limit=2, paginate=False, capture={"c2": "/cursor"}),
           inbox("agent_b", {"items": []}, since="$c2", limit=2, paginate=False)],
  exclusive=True)
V("reading/inbox-limit-one", ["PV-RD-3"],
  "limit=1 returns exactly one item when more are waiting",
  lambda: [open_thread(t="t1", r="r1"), open_thread(t="t2", r="r2"),
           inbox("agent_b", {"items": {"$len": 1}, "cursor": {"$any": True}}, limit=1, paginate=False)])
V("reading/inbox-limit-default-and-cap", ["PV-RD-3", "PV-MF-2"],
  "With more than 200 waiting threads, no limit gives exactly the manifest's inbox_limit_default items and an oversized limit is capped to exactly inbox_limit_max (adapts to the declared values up to 204)",
  lambda: [manifest("anonymous", {"limits": {"inbox_limit_default": {"$type": "integer"}, "inbox_limit_max": {"$type": "integer"}}},
                    capture={"dflt": "/limits/inbox_limit_default", "max": "/limits/inbox_limit_max"}),
           post("agent_a", env("ask", b=body("bulk")), created(), repeat=50),
           post("agent_a", env("ask", b=body("bulk")), created(), repeat=50),
           post("agent_a", env("ask", b=body("bulk")), created(), repeat=50),
           post("agent_a", env("ask", b=body("bulk")), created(), repeat=50),
           post("agent_a", env("ask", b=body("bulk")), created(), repeat=5),
           inbox("agent_b", {"items": {"$type": "array"}}, limit=None, paginate=False, capture={"p1": "/items"}),
           inbox("agent_b", {"items": "$p1"}, limit="$dflt", paginate=False,
                 note="the page without limit is exactly the page with limit = inbox_limit_default"),
           inbox("agent_b", {"items": {"$type": "array"}}, limit=100000, paginate=False, capture={"p2": "/items"}),
           inbox("agent_b", {"items": "$p2"}, limit="$max", paginate=False,
                 note="an oversized limit gives exactly the page of limit = inbox_limit_max"),
           inbox("agent_b", {"items": {"$not": "$p2"}}, limit=1, paginate=False,
                 note="and limit is honoured at all (a server ignoring limit would pass the two equalities)")],
  exclusive=True)
V("reading/inbox-anonymous", ["PV-RD-3", "PV-TR-4"],
  "inbox without a token is 401 token_missing",
  lambda: [inbox("anonymous", expect=TOKEN_MISSING, paginate=False)])
V("reading/inbox-reader", ["PV-RD-3", "PV-AU-1"],
  "A read-only token may list its inbox",
  lambda: [open_thread(), inbox("reader", has_thread("$t"))])
V("reading/inbox-named-party-last-written-by-own-extension", ["PV-RD-3"],
  "Extension x clarifying extension y of the same identity awaits (agent_a, y): shown with extension y or without, hidden with extension x (the last message is x's own)",
  lambda: [open_thread(ext="y"),
           reply("agent_a", "clarify", thread="$t", ext="x", expect=created({"thread": {"awaiting": party("agent_a", "y")}})),
           inbox("agent_a", has_thread("$t"), ext="y"),
           inbox("agent_a", has_thread("$t")),
           inbox("agent_a", lacks_thread("$t"), ext="x")])
