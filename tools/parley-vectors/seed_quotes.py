"""The seed sentences the requirement catalogue may quote, from the committed `seed_quotes.toml`.

The generators read only that file, never the seed itself (it lies outside the repository), so
they run from a clean clone. `verify` is the one place that reads the seed: a maintainer's
check, run by hand when the seed or the quotes change, that the committed quotes are still
verbatim and under the headings they are filed under:

    python3 tools/parley-vectors/seed_quotes.py verify ../shared/seeds/000_8e40a4ff834ea012.txt
"""
import hashlib
import sys
import tomllib
from pathlib import Path

QUOTES_FILE = Path(__file__).resolve().parent / "seed_quotes.toml"


class SeedQuotes:
    """The parsed quotes file: seed identity, headings in seed order, quote -> its heading."""

    def __init__(self, doc):
        self.seed_file = doc["seed_file"]
        self.seed_sha256 = doc["seed_sha256"]
        self.sections = [(sec["name"], list(sec["quotes"])) for sec in doc["section"]]
        self.section_of = {}
        for name, quotes in self.sections:
            for q in quotes:
                if q in self.section_of:
                    raise SystemExit(f"{QUOTES_FILE.name}: quote listed twice: {q!r}")
                self.section_of[q] = name
        self.names = [name for name, _ in self.sections]


def load(path=QUOTES_FILE):
    with open(path, "rb") as f:
        return SeedQuotes(tomllib.load(f))


def heading_offsets(seed):
    """Offset of every heading line: a line standing alone between blank lines (how the seed
    sets its headings; its sentences and bullets always share a paragraph or end in punctuation)."""
    lines = seed.split("\n")
    offsets, pos = {}, 0
    for i, line in enumerate(lines):
        alone = line.strip() and (i == 0 or not lines[i - 1].strip()) and (i + 1 == len(lines) or not lines[i + 1].strip())
        if alone and not line.rstrip().endswith((".", ":", ";", "}", "]", ",")):
            offsets[pos] = line
        pos += len(line) + 1
    return offsets


def verify(seed_path, quotes):
    """Problems found comparing the committed quotes with the seed file (empty = all good)."""
    raw = Path(seed_path).read_bytes()
    seed = raw.decode("utf-8")
    problems = []
    digest = hashlib.sha256(raw).hexdigest()
    if digest != quotes.seed_sha256:
        problems.append(f"seed sha256 is {digest}, {QUOTES_FILE.name} records {quotes.seed_sha256}: "
                        "the seed changed; once every quote below checks out, record the new hash")
    heads = sorted(heading_offsets(seed).items())
    # Each listed section spans from its heading to the next heading of the seed (listed or not).
    spans = {}
    for name in quotes.names:
        hits = [k for k, (off, line) in enumerate(heads) if line == name or line.startswith(name + " ")]
        if len(hits) != 1:
            problems.append(f"section « {name} »: {len(hits)} heading lines of the seed start with it, expected 1")
            continue
        k = hits[0]
        start = heads[k][0]
        end = heads[k + 1][0] if k + 1 < len(heads) else len(seed)
        spans[name] = (start, end)
    starts = [spans[n][0] for n in quotes.names if n in spans]
    if starts != sorted(starts):
        problems.append(f"sections are not in seed order in {QUOTES_FILE.name}")
    for name, qs in quotes.sections:
        if name not in spans:
            continue
        start, end = spans[name]
        for q in qs:
            at = seed.find(q, start, end)
            if at < 0:
                where = "elsewhere in the seed" if q in seed else "nowhere in the seed"
                problems.append(f"quote not found verbatim under « {name} » ({where}): {q!r}")
    return problems


def main(argv):
    if len(argv) != 3 or argv[1] != "verify":
        print(__doc__.strip(), file=sys.stderr)
        return 2
    quotes = load()
    problems = verify(argv[2], quotes)
    for p in problems:
        print(f"seed_quotes: {p}", file=sys.stderr)
    if problems:
        return 1
    n = sum(len(qs) for _, qs in quotes.sections)
    print(f"seed_quotes: {n} quotes in {len(quotes.sections)} sections verbatim in {argv[2]} (sha256 {quotes.seed_sha256})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
