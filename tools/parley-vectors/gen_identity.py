from dsl import *
from gen_state import setup


def V(vid, reqs, title, steps_fn, **kw):
    CUR["id"] = vid
    return vector("identity", vid, reqs, title, steps_fn(), **kw)


# ================================================================ PV-ID-1
for role in ["agent_a", "moderator", "verifier", "reader"]:
    V(f"identity/whoami-realm-handle-{role.replace('_', '-')}", ["PV-ID-1", "PV-TR-5"],
      f"whoami of the {role} token is <realm>:<handle> with the manifest's realm and author_kind llm",
      lambda role=role: [manifest("anonymous", {"identity": {"realm": {"$type": "string"}}}, capture={"realm": "/identity/realm"}),
                         whoami(role, {"identity": {"$prefix": "${realm}:"}, "author_kind": "llm"}),
                         whoami(role, {"identity": {"$regex": "^[^:\\s]+:[^:\\s]+$"}})])
V("identity/whoami-human", ["PV-ID-1"],
  "whoami of the human token is human:<name> with author_kind human",
  lambda: [whoami("human", {"identity": {"$regex": "^human:[^:\\s]+$"}, "author_kind": "human"})])
V("identity/message-identity-from-token", ["PV-ID-1", "PV-EN-4"],
  "Each message's from.identity is the token's identity (as whoami reports it), never a client value",
  lambda: [whoami("agent_b", capture={"me": "/identity"}),
           open_thread(),
           reply("agent_b", "clarify", thread="$t", expect=created({"message": {"from": {"identity": "$me", "extension": None}}})),
           reply("moderator", "inform", thread="$t", expect=created({"message": {"from": party("moderator"), "author_kind": "llm"}})),
           reply("human", "inform", thread="$t", expect=created({"message": {"from": party("human"), "author_kind": "human"}}))])
V("identity/distinct-tokens-distinct-identities", ["PV-ID-1"],
  "Two different tokens post as two different identities",
  lambda: [open_thread(),
           reply("agent_b", "answer", thread="$t", expect=created({"message": {"from": {"identity": {"$not": ident("agent_a")}}}}))])

# ================================================================ PV-ID-2 self-reply
V("identity/self-reply-explicit-parent", ["PV-ID-2"],
  "Replying to one's own root with the same (identity, no extension) is 409 self_reply",
  lambda: [open_thread(), reply("agent_a", "inform", thread="$t", parent="$r", expect=SELF_REPLY),
           read("agent_a", "$t", {"messages": [{"replies": []}]})])
V("identity/self-reply-implicit-root-parent", ["PV-ID-2", "PV-EN-6"],
  "Posting with thread only into one's own thread replies to one's own root: 409 self_reply",
  lambda: [open_thread(), reply("agent_a", "clarify", thread="$t", expect=SELF_REPLY)])
V("identity/self-reply-parent-only", ["PV-ID-2"],
  "Replying with parent only (no thread) to one's own message is 409 self_reply",
  lambda: [open_thread(), reply("agent_a", "propose", parent="$r", expect=SELF_REPLY)])
V("identity/self-reply-same-extension", ["PV-ID-2"],
  "Extension a replying to extension a of the same identity is 409 self_reply",
  lambda: [open_thread(ext="a"), reply("agent_a", "answer", thread="$t", ext="a", expect=SELF_REPLY)])
V("identity/other-extension-may-reply", ["PV-ID-2"],
  "Extension b may reply to extension a of the same identity (201)",
  lambda: [open_thread(ext="a"),
           reply("agent_a", "answer", thread="$t", ext="b",
                 expect=created({"message": {"from": party("agent_a", "b")}, "thread": {"state": "answered"}}))])
V("identity/extension-may-reply-to-no-extension", ["PV-ID-2"],
  "Extension a may reply to the same identity's message sent without extension (empty extension ≠ a)",
  lambda: [open_thread(), reply("agent_a", "inform", thread="$t", ext="a", expect=created())])
V("identity/no-extension-may-reply-to-extension", ["PV-ID-2"],
  "A message without extension may reply to the same identity's extension a",
  lambda: [open_thread(ext="a"), reply("agent_a", "inform", thread="$t", expect=created())])
V("identity/empty-from-is-empty-extension", ["PV-ID-2"],
  "from: {} is the empty extension: replying without from to a root sent with from: {} is 409 self_reply",
  lambda: [post("agent_a", env("ask", **{"from": {}}), created({"message": {"from": party("agent_a")}}),
                capture={"t": "/thread/id", "r": "/message/id"}),
           reply("agent_a", "inform", parent="$r", expect=SELF_REPLY)])
V("identity/self-reply-deep", ["PV-ID-2"],
  "agent_b replying to its own nested reply is 409 self_reply, while replying to the root is fine",
  lambda: [open_thread(),
           reply("agent_b", "propose", thread="$t", capture={"m": "/message/id"}),
           reply("agent_b", "agree", parent="$m", expect=SELF_REPLY),
           reply("agent_b", "inform", parent="$r", expect=created())])
V("identity/self-reply-ask-in-thread", ["PV-ID-2"],
  "A follow-up ask addressed to one's own message is a self_reply too",
  lambda: [open_thread(ext="q"), reply("agent_a", "ask", thread="$t", ext="q", expect=SELF_REPLY)])
V("identity/self-reply-binds-moderator", ["PV-ID-2"],
  "The lock right does not exempt from self-reply: the moderator answering itself is 409 self_reply",
  lambda: [open_thread(), reply("moderator", "inform", thread="$t", capture={"m": "/message/id"}),
           reply("moderator", "answer", parent="$m", expect=SELF_REPLY)])
V("identity/self-reply-binds-human", ["PV-ID-2"],
  "The human overrides authority, not loop protection: the human replying to itself is 409 self_reply",
  lambda: [open_thread("human"), reply("human", "inform", thread="$t", expect=SELF_REPLY)])
V("identity/decide-exempt-from-self-reply", ["PV-ID-2"],
  "decide is exempt: the creator deciding with thread only (implicit parent = its own root) is accepted",
  lambda: [open_thread(), reply("agent_a", "decide", thread="$t", expect=created({"message": {"parent": "$r"}, "thread": {"state": "decided"}}))])
V("identity/close-exempt-from-self-reply", ["PV-ID-2"],
  "close is exempt: the creator closing with an explicit parent = its own root is accepted",
  lambda: [open_thread(ext="a"), reply("agent_a", "close", parent="$r", ext="a", expect=created({"thread": {"state": "closed"}}))])
V("identity/decide-exempt-on-own-reply", ["PV-ID-2"],
  "The moderator deciding beneath its own message is accepted (decide cannot loop)",
  lambda: [open_thread(), reply("moderator", "propose", thread="$t", capture={"m": "/message/id"}),
           reply("moderator", "decide", parent="$m", expect=created({"thread": {"state": "decided"}}))])
V("identity/answer-not-exempt", ["PV-ID-2"],
  "answer is not exempt: the creator answering its own question from the same extension is 409 self_reply and the state stays open",
  lambda: [open_thread(), reply("agent_a", "answer", thread="$t", expect=SELF_REPLY),
           read("agent_b", "$t", {"thread": {"state": "open"}})])
V("identity/other-identity-same-extension-may-reply", ["PV-ID-2"],
  "Self-reply is per identity: agent_b from extension w may reply to agent_a's extension w",
  lambda: [open_thread(ext="w"), reply("agent_b", "answer", thread="$t", ext="w", expect=created())])
