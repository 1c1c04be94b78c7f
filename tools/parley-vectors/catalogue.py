"""Writes vectors/requirements/parley.toml: one row per PV- ID of shared/design/parley-v1.md.

A row's seed_text is built from verbatim seed sentences committed in seed_quotes.toml (never
from the seed itself, which lies outside the repository): see seed_quotes.py.
"""
import json
import os
import re
import sys

import seed_quotes

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
QUOTES = seed_quotes.load()


class SeedText(str):
    """A seed_text: the quotes joined by a space, remembering them and the seed sections they come from."""
    parts = ()
    sections = frozenset()


def s(*parts):
    """Seed sentences, verbatim: each part must be one quote of seed_quotes.toml."""
    for p in parts:
        if p not in QUOTES.section_of:
            sys.exit(f"catalogue.py: not a quote of {seed_quotes.QUOTES_FILE.name} (add it there, "
                     f"then run `seed_quotes.py verify` against the seed): {p!r}")
    text = SeedText(" ".join(parts))
    text.parts = parts
    text.sections = frozenset(QUOTES.section_of[p] for p in parts)
    return text


TR_SEED = s("Le transport de référence est MCP (JSON-RPC 2.0, sans état).",
            "Les mêmes opérations sont aussi exposées en HTTP ; les deux passent par le même contrôle de droits, il n’y a donc pas de seconde opinion sur les permissions.")
REFUS = s("Un refus n’est pas une erreur de protocole : c’est isError avec un reason stable, lisible par machine.")
MANIF = s("Un agent DEVRAIT commencer par get_manifest ; il nomme la version, les limites, les actes de langage, les états et les profils — tout ce qu’il faut pour parler, sans documentation.")
LIMITS = s("Les valeurs faisant foi vivent dans le manifeste ; l’instance de référence utilise :")
NEUF = s("Le kind dit ce que fait un message. Exactement neuf — aucun autre dans le cœur.")
AUTH403 = s("Là où l’autorité manque, la réponse est 403 avec une raison stable : thread_authority_missing ou token_right_missing.")
DIAL = s("Le profil dialectic ajoute des affirmations avec preuves, des réfutations avec contre-preuves, et un sceau que seul un vérificateur peut donner.")
EVENTS = s("• Événements. Chaque changement d’état est enregistré avec son origine (user/llm), son libellé, son heure et sa confirmation.")

REQS = [
    # id, level, area, rule, source, seed_text, checks
    ("PV-TR-1", "MUST", "transport",
     "Every operation is both an MCP tool and an HTTP route behind one permission check, and for the same request by the same token both bindings give the same outcome (same success payload modulo ids and timestamps, or the same refusal reason and status).",
     "parley-v1.md §1; seed « Transport et découverte »", TR_SEED, ["PV-TR-1/*"]),
    ("PV-TR-1a", "MUST", "transport",
     "A Parley v1 server offers both bindings; one it does not offer is declared null in the manifest's operations, and the harness then reports PV-TR-1a as failed while running every check on the binding offered.",
     "parley-v1.md §1; seed « Transport et découverte »", TR_SEED, ["PV-TR-1a/bindings"]),
    ("PV-TR-2", "MUST", "transport",
     "On MCP a refusal is a tool result with isError true, structuredContent {\"error\": {reason, status, message}} and the same JSON as text in content[0]; JSON-RPC errors (-32700, -32600, -32601, -32602) are used only for protocol faults, never for a refusal.",
     "parley-v1.md §1, §10; seed « Transport et découverte »", REFUS, []),
    ("PV-TR-3", "MUST", "transport",
     "On HTTP a refusal is its status code with body {\"error\": {reason, status, message}} and Content-Type application/json (unknown routes 404 not_found, wrong methods 405 method_not_allowed), and success bodies are the same JSON as MCP structuredContent.",
     "parley-v1.md §1, §10; seed « Transport et découverte »", REFUS, []),
    ("PV-TR-4", "MUST", "transport",
     "Both bindings authenticate with Authorization: Bearer <token>; a missing token gives 401 token_missing, an unknown or malformed one 401 token_invalid, and get_manifest needs no token.",
     "parley-v1.md §1; seed « Identité et extensions »",
     s("• Un agent = une identité, liée au token : <realm>:<handle> (ici ainotes:<handle>)."), []),
    ("PV-TR-5", "MUST", "transport",
     "A request larger than limits.request_max_bytes gives 413 payload_too_large, a write attempt over the token's per-minute quota gives 429 rate_limited with Retry-After, the quota defaults to limits.writes_per_minute, and whoami shows the caller's identity, rights and quota.",
     "parley-v1.md §1, §2; seed « Limites »", LIMITS, []),
    ("PV-TR-6", "SHOULD", "transport",
     "A refusal the HTTP layer raises before routing, on any path, SHOULD use the status of its row in §10's transport table (400 malformed head, 403 foreign Host or Origin, 408, 414, 431, 503, 505), in the PV-TR-3 shape with that row's reason listed in the manifest's reasons; checks judge the status only: the row's status passes, another 4xx or no answer is a warning, a 5xx fails, and a wrong reason or shape is a warning.",
     "parley-v1.md §1, §10", None, ["PV-TR-6/pre-routing"]),
    ("PV-MF-1", "MUST", "manifest",
     "get_manifest returns parley \"1\", a SemVer version, limits, the kinds with awaiting/opens_thread/marks/needs_authority, the forward and lateral states, profiles, operations, every refusal reason and identity.realm — everything needed to speak without documentation.",
     "parley-v1.md §2; seed « Transport et découverte »", MANIF, []),
    ("PV-MF-2", "MUST", "manifest",
     "The manifest's limits are authoritative and enforced exactly; body_max_chars is the seed's 500 (another declared value fails).",
     "parley-v1.md §2; seed « Limites »", LIMITS, []),
    ("PV-EN-1", "MUST", "envelope",
     "An unknown field (top level, in from, provenance or an evidence item), a missing kind, a missing or empty body, or a wrong JSON type gives 400 invalid_body; a whitespace-only body SHOULD (accepted: warned).",
     "parley-v1.md §3; seed « L’enveloppe »",
     s("Un champ inconnu, un kind manquant ou un body vide est rejeté avec 400 invalid_body."), []),
    ("PV-EN-2", "MUST", "envelope",
     "A body longer than body_max_chars (500 Unicode scalar values, not bytes) gives 400 body_too_long, and a body of exactly the limit is accepted.",
     "parley-v1.md §2, §3; seed « L’enveloppe »",
     s("Chaque action est une enveloppe. Elle DOIT porter un acte de langage (kind) et un corps d’au plus 500 caractères."), []),
    ("PV-EN-3", "MUST", "envelope",
     "A kind that is not one of the nine core kinds nor a kind of an enabled profile gives 400 kind_unknown.",
     "parley-v1.md §3, §4; seed « Les neuf actes de langage »", NEUF, []),
    ("PV-EN-4", "MUST", "envelope",
     "Client-sent id, from.identity, author_kind and created_at are ignored: the stored message carries the server's values, so identity spoofing is impossible.",
     "parley-v1.md §3; seed « L’enveloppe »",
     s("Posés par le serveur, et que le client DOIT ignorer à l’envoi : id (msg_…), from.identity, author_kind, created_at."), []),
    ("PV-EN-5", "MUST", "envelope",
     "thread and parent accept the opaque key (th_12, msg_40) or the plain number (12 or \"12\"); an unknown one gives 404 thread_not_found or message_not_found, and a parent outside the given thread gives 400 invalid_body.",
     "parley-v1.md §3; seed « L’enveloppe »",
     s("thread et parent acceptent soit la clé opaque (th_…, msg_…), soit le simple numéro."), []),
    ("PV-EN-6", "MUST", "envelope",
     "Without thread and parent only an opening kind (ask; assert with dialectic) may open a thread, others give 400 thread_required; thread without parent replies to the thread's root message, parent without thread posts into the parent's thread.",
     "parley-v1.md §3; seed « La machine à états »",
     s("ask ─▶ open ──answer──▶ answered ──decide──▶ decided ──authority──▶ closed"), []),
    ("PV-EN-7", "MUST", "envelope",
     "from.extension must match the manifest's extension_pattern (reference ^[a-z0-9][a-z0-9_-]{0,31}$), else 400 invalid_body.",
     "parley-v1.md §2, §3; seed « Identité et extensions »",
     s("• Les extensions permettent à des sous-agents de partager un token ; par action, from.extension est posé."), []),
    ("PV-KD-1", "MUST", "kinds",
     "The core has exactly the nine speech acts ask, answer, clarify, inform, propose, agree, object, decide and close, and the manifest lists them with their properties.",
     "parley-v1.md §4; seed « Les neuf actes de langage »", NEUF, []),
    ("PV-KD-2", "MUST", "kinds",
     "A thread's awaiting is derived from its last message only: an awaiting kind with a parent names the parent's author party (a refute names the refuted claim's author), an opening ask or assert gives {any: true, except: author party}, a non-awaiting kind gives null.",
     "parley-v1.md §4; seed « Les neuf actes de langage »",
     s("Les actes qui attendent une réponse posent awaiting. Il y a toujours exactement un tour ouvert : pas d’attente mutuelle — le dernier message nomme qui doit répondre."), []),
    ("PV-ST-1", "MUST", "state",
     "States move forward only (open → answered → decided → closed, skipping allowed); a mark to the same state is accepted and changes nothing except confirming, and a mark to an earlier state gives 409 invalid_transition.",
     "parley-v1.md §5; seed « La machine à états »",
     s("• Vers l’avant seulement : open → answered → decided → closed ; deux étapes d’un coup sont permises lorsqu’un acte les justifie."), []),
    ("PV-ST-2", "MUST", "state",
     "mark accepts any forward or lateral state under the same rules; open is never reached by a mark from another state (409 invalid_transition); a mark to the current, already confirmed state changes nothing and returns event null.",
     "parley-v1.md §5; seed « La machine à états »",
     s("Un fil a exactement un état, et il appartient au fil entier."), []),
    ("PV-ST-3", "MUST", "state",
     "Lateral states (deferred, obsolete, rejected) are ends: answer, decide, close and a mark to another state give 409 invalid_transition, non-marking kinds are still accepted, and only moderation reopens.",
     "parley-v1.md §5; seed « La machine à états »",
     s("• États latéraux deferred · obsolete · rejected sont des extrémités ; seule la modération les rouvre."), []),
    ("PV-ST-4", "MUST", "state",
     "A confirmed closed thread accepts nothing from anyone — no post of any kind, no mark — and answers 409 thread_locked until reopened; a proposed closed does not lock.",
     "parley-v1.md §5; seed « La machine à états », « Proposition et confirmation »",
     s("• Fermé, c’est verrouillé. Un closed confirmé n’accepte plus aucun message — pour personne. Rouvrez-le d’abord (reopen).",
       "• Une proposition closed ne verrouille pas ; seule la confirmation verrouille."), []),
    ("PV-ST-5", "MUST", "state",
     "A state set by a human is confirmed (state_origin user), by a lock holder confirmed (state_origin llm, state_confirmed_at set), by any other model a proposal (state_confirmed_at null) — creation included — and a lock holder or human marking the current proposed state confirms it.",
     "parley-v1.md §5; seed « Proposition et confirmation »",
     s("• Un humain pose un état : il est confirmé (state_origin = user).",
       "• Un modèle disposant de write pose un état : c’est une proposition (state_origin = llm, state_confirmed_at = NULL), affichée comme non confirmée.",
       "• Seul un détenteur de lock ou l’humain pose un état confirmé.",
       "answer et decide sont aussi des marques."), []),
    ("PV-ST-6", "MUST", "state",
     "reopen moves a closed (proposed or confirmed) or lateral thread to open; from any other state it gives 409 invalid_transition.",
     "parley-v1.md §5; seed « La machine à états »",
     s("Rouvrez-le d’abord (reopen).", "seule la modération les rouvre."), []),
    ("PV-ST-7", "MUST", "state",
     "Every state change (creation, proposal, confirmation, reopen) is exactly one event {id ev_N, thread, from_state, to_state, origin, label, actor, at, confirmed_at}, labelled KI · <lock label> for a lock holder, the human's name for a human and the identity otherwise.",
     "parley-v1.md §5; seed « Lecture : fils, événements, boîte de réception », « Autorité »",
     s("• Événements. Chaque changement d’état est enregistré avec son origine (user/llm), son libellé, son heure et sa confirmation.",
       "Visible sous la forme KI · <label>."), []),
    ("PV-AU-1", "MUST", "authority",
     "Posting needs the write right and reading the read right, else 403 token_right_missing.",
     "parley-v1.md §6; seed « Autorité »", AUTH403, []),
    ("PV-AU-2", "MUST", "authority",
     "decide, close and mark need thread authority — the creator (same identity, any extension), a lock holder (any thread) or a human — else 403 thread_authority_missing.",
     "parley-v1.md §6; seed « Autorité »",
     s("1. Créateur — quiconque ouvre un fil a autorité sur tout ce qui s’y trouve en dessous ; un decide ou un closed se propage à tout le fil.",
       "2. Droit lock — étend l’autorité aux fils étrangers (modération)."), []),
    ("PV-AU-3", "MUST", "authority",
     "reopen needs write, then of a closed thread the creator, a lock holder or a human, and of a lateral state a lock holder or a human only; else 403 thread_authority_missing.",
     "parley-v1.md §6; seed « Autorité », « La machine à états »",
     s("3. Réouverture d’un fil fermé : le créateur (le sien), un détenteur de lock (fil étranger), l’humain (toujours).",
       "seule la modération les rouvre."), []),
    ("PV-AU-4", "MUST", "authority",
     "The human overrides authority (may close, reopen or re-mark any thread, and a human mark is never a proposal) but forward-only and locking still bind the human.",
     "parley-v1.md §6; seed « Autorité »",
     s("4. L’humain prime — il peut fermer, ouvrir ou re-marquer n’importe quel fil ; une marque humaine n’est jamais une proposition."), []),
    ("PV-AU-5", "MUST", "authority",
     "Rights belong to the token row, never to the extension.",
     "parley-v1.md §6; seed « Identité et extensions »",
     s("Les droits tiennent à la ligne (le token), pas à l’extension."), []),
    ("PV-AU-6", "MUST", "authority",
     "When several refusals apply the first in this order wins: 401 auth, 403 token_right_missing (verify right read from the kind), 429 quota, 413, 415, 400 body, 404 not found, 403 thread_authority_missing/self_attest, 409 locked/transition/self-reply.",
     "parley-v1.md §6, §10", None, []),
    ("PV-ID-1", "MUST", "identity",
     "An identity is <realm>:<handle> (here ainotes:<handle>) or human:<name>, set by the server from the token and never declared by the client.",
     "parley-v1.md §7; seed « Identité et extensions »",
     s("• Un agent = une identité, liée au token : <realm>:<handle> (ici ainotes:<handle>). Posée par le serveur, jamais déclarée par le client. L’humain est human:<name>."), []),
    ("PV-ID-2", "MUST", "identity",
     "A message whose parent (explicit or the implicit root) was written by the same (identity, extension) gives 409 self_reply (no extension = the empty extension); another extension of the same identity may reply, and decide and close are exempt.",
     "parley-v1.md §7; seed « Identité et extensions »",
     s("• La protection contre les boucles est par extension : le même (identity, extension) ne peut pas répondre à son propre message (self_reply). L’extension A peut répondre à B, mais pas à elle-même."), []),
    ("PV-RD-1", "MUST", "reading",
     "read_thread returns the thread fields and its messages as a tree nested by parent (replies: []), siblings in creation order.",
     "parley-v1.md §8; seed « Lecture : fils, événements, boîte de réception »",
     s("• Un fil est un arbre. Lire un fil renvoie ses messages imbriqués selon parent, dans l’ordre de création."), []),
    ("PV-RD-2", "MUST", "reading",
     "list_events returns the thread's events in order, and since=<event id> returns only the later ones.",
     "parley-v1.md §8; seed « Lecture : fils, événements, boîte de réception »", EVENTS, []),
    ("PV-RD-3", "MUST", "reading",
     "inbox lists the unlocked, non-lateral threads awaiting the caller (any-but-the-last-author, or naming the caller's identity and, with extension, the same extension), hides threads last written by the caller's own (identity, extension), orders them by last activity oldest first, pages with limit (default and cap from the manifest) and an opaque cursor after which only newer activity is returned.",
     "parley-v1.md §8; seed « Lecture : fils, événements, boîte de réception »",
     s("• Boîte de réception. Liste les fils qui attendent une réponse (awaiting). Un curseur since ne renvoie que le nouveau ; un cursor opaque est renvoyé pour mémoriser la position. Avec extension, les questions de votre propre extension sont masquées."), []),
    ("PV-DI-1", "MUST", "dialectic",
     "An evidence item is {kind, ref, note?} with kind among url, hash, artifact, commit, log, reproducer, note, other (url absolute http(s), hash <algo>:<hex>, commit 7–40 hex, else 400 evidence_invalid), and every dialectic kind needs 1..evidence_max items, else 400 evidence_required.",
     "parley-v1.md §9; seed « Profil : Dialectique »",
     s("Une preuve est un pointeur, jamais une opinion : { kind: url|hash|artifact|commit|log|reproducer|note|other, ref, note? }."), []),
    ("PV-DI-2", "MUST", "dialectic",
     "assert creates an unverified claim attached to its message and may open a thread; an optional future valid_until makes the claim read expired: true once passed.",
     "parley-v1.md §9; seed « Profil : Dialectique »",
     s("Le profil dialectic ajoute des affirmations avec preuves, des réfutations avec contre-preuves, et un sceau que seul un vérificateur peut donner.",
       "Une affirmation peut être superseded par une plus récente (supersedes: [\"cl_…\"]) ou porter valid_until."), []),
    ("PV-DI-3", "MUST", "dialectic",
     "attest moves an unverified claim to supported and further attests add support; the claim's own author gets 403 self_attest, and a refuted or superseded claim 409 invalid_transition.",
     "parley-v1.md §9; seed « Profil : Dialectique »",
     s("assert ─▶ unverified ──attest──▶ supported ──verifier──▶ verified"), []),
    ("PV-DI-4", "MUST", "dialectic",
     "verify needs the verify right (or a human), else 403 token_right_missing; it moves unverified or supported to verified, the claim's author gets 403 self_attest, and a refuted or superseded claim 409 invalid_transition.",
     "parley-v1.md §9; seed « Profil : Dialectique »", DIAL, []),
    ("PV-DI-5", "MUST", "dialectic",
     "refute with evidence moves an unverified, supported or verified claim to refuted (Popperian asymmetry), and nothing leaves refuted.",
     "parley-v1.md §9; seed « Profil : Dialectique »",
     s("L’asymétrie poppérienne : une réfutation prouvée prime sur un soutien antérieur — une affirmation déjà marquée verified peut encore tomber."), []),
    ("PV-DI-6", "MUST", "dialectic",
     "supersedes on assert moves each listed claim (of the same identity, or any claim for a lock holder or human, else 403 thread_authority_missing) to superseded, while refuted claims stay refuted.",
     "parley-v1.md §9; seed « Profil : Dialectique »",
     s("Une affirmation peut être superseded par une plus récente (supersedes: [\"cl_…\"]) ou porter valid_until."), []),
    ("PV-DI-7", "MUST", "dialectic",
     "read_claim returns {id, thread, message, author, status, support, evidence, attestations, refutations, supersedes, superseded_by, valid_until, expired}, and claim status changes are events too.",
     "parley-v1.md §9; seed « Profil : Dialectique », « Conformité »",
     s("Le profil dialectic est conforme lorsque les affirmations, les attestations et la certitude graduée du § dialectique sont respectées."), []),
    ("PV-DI-9", "MUST", "dialectic",
     "A repeat verify of a verified claim or refute of a refuted one is accepted (status and support unchanged, no status event) or refused 409 invalid_transition; concurrent claim acts are serialisable.",
     "parley-v1.md §9 PV-DI-9; seed « Profil : Dialectique »",
     s("L’asymétrie poppérienne : une réfutation prouvée prime sur un soutien antérieur — une affirmation déjà marquée verified peut encore tomber."), []),
    ("PV-DI-8", "MUST", "dialectic",
     "The dialectic kinds (assert, attest, refute, verify) exist only when the manifest lists the dialectic profile; on a server without it they give 400 kind_unknown.",
     "parley-v1.md §9; seed « Les neuf actes de langage »", NEUF, []),
    ("PV-RS-1", "MUST", "shapes",
     "Success statuses are 201 for post and 200 for every other operation.",
     "parley-v1.md §11", None, []),
    ("PV-RS-2", "MUST", "shapes",
     "Response bodies have the shapes of §11 (Party, Message, Thread, Event, Claim, and per operation {message, thread}, {thread, event}, {thread, messages}, {events}, {items, cursor}, Claim, whoami, manifest), identical on HTTP and as MCP structuredContent and content[0] text, extra members allowed.",
     "parley-v1.md §11", None, []),
    ("PV-RS-3", "MUST", "shapes",
     "assert and refute await a reply (a refutation the claim's author), attest and verify do not; a claim act other than an opening assert needs thread or parent (else thread_required); claim, supersedes, valid_until or evidence on a kind that does not use them gives 400 invalid_body; verify does not add to support.",
     "parley-v1.md §11", None, []),
    ("PV-RS-4", "SHOULD", "shapes",
     "A POST whose body has a missing or non-JSON Content-Type gets 415 unsupported_media_type, while a bodiless POST (reopen) needs no content type.",
     "parley-v1.md §10, §11", None, []),
]


SECTION = re.compile(r"« ([^»]+) »")


def check_seed_citation(req_id, source, seed):
    """The seed sections a row's source cites exist, and its quotes come from those sections."""
    cited = set(SECTION.findall(source))
    unknown = sorted(cited - set(QUOTES.names))
    if unknown:
        sys.exit(f"catalogue.py: {req_id} cites seed sections not in {seed_quotes.QUOTES_FILE.name}: {unknown}")
    if seed is not None:
        if not isinstance(seed, SeedText):
            sys.exit(f"catalogue.py: {req_id}: seed_text must be built with s(...)")
        uncited = sorted(seed.sections - cited)
        if uncited:
            sys.exit(f"catalogue.py: {req_id} quotes seed sections its source does not cite: {uncited}")


def toml_str(v):
    return json.dumps(v, ensure_ascii=False)


def main(out_root=ROOT):
    """Writes <out_root>/vectors/requirements/parley.toml; returns the set of IDs."""
    out = ["# Requirement catalogue — Parley v1.",
           "#",
           "# One `[[requirement]]` row per `PV-` ID of `shared/design/parley-v1.md` (the binding), with the",
           "# seed sentence(s) (French, verbatim) it rests on when the seed has one. Members (closed set):",
           "#   id         stable ID from parley-v1.md (never renumbered)",
           "#   level      MUST | SHOULD | MAY",
           "#   area       transport | manifest | envelope | kinds | state | authority | identity | reading | dialectic | shapes",
           "#   rule       one sentence, English",
           "#   source     parley-v1.md section and seed section",
           "#   seed_text  optional; verbatim sentence(s) of the seed",
           "#   checks     optional; non-vector checks covering the row (vectors cite their IDs themselves):",
           "#              PV-TR-1/<vector id> compares each vector's outcomes on HTTP and MCP; PV-TR-1a/bindings reads the manifest",
           "format_version = 1",
           'suite = "parley"', ""]
    ids = set()
    for (i, level, area, rule, source, seed, checks) in REQS:
        assert i not in ids
        ids.add(i)
        check_seed_citation(i, source, seed)
        out.append("[[requirement]]")
        out.append(f"id = {toml_str(i)}")
        out.append(f"level = {toml_str(level)}")
        out.append(f"area = {toml_str(area)}")
        out.append(f"rule = {toml_str(rule)}")
        out.append(f"source = {toml_str(source)}")
        if seed:
            out.append(f"seed_text = {toml_str(seed)}")
        if checks:
            out.append(f"checks = {toml_str(checks)}")
        out.append("")
    # A quote no row cites would keep an unchecked claim about the seed in the repository.
    cited = {q for row in REQS if row[5] is not None for q in row[5].parts}
    unused = [q for q in QUOTES.section_of if q not in cited]
    if unused:
        sys.exit(f"catalogue.py: quotes of {seed_quotes.QUOTES_FILE.name} no row cites (remove them): {unused}")
    with open(os.path.join(out_root, 'vectors', 'requirements', 'parley.toml'), 'w', encoding='utf-8') as f:
        f.write("\n".join(out))
    return ids


if __name__ == '__main__':
    print(len(main()))
