"""Shared by the differential suites: case files, answers, and the report of agreements and differences.

A case file holds one case a line, "KIND HEX [HEX...]" (each HEX an input's bytes), so that any byte can be
a case. Answers are JSON lines in the same order, each with the case's "in" (the HEX fields).
"""
import json
import random
import sys


def hexed(*inputs):
    return " ".join((s.encode("utf-8", "surrogateescape") if isinstance(s, str) else s).hex() for s in inputs)


def unhex(field):
    return bytes.fromhex(field).decode("utf-8", "surrogateescape")


def write_cases(kind, cases, out=sys.stdout):
    """Writes each case once (a case is a tuple of inputs), in a stable order."""
    seen = set()
    for case in cases:
        line = kind + " " + hexed(*case)
        if line not in seen:
            seen.add(line)
            out.write(line + "\n")


def read_answers(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def paired(*paths):
    """The answer files side by side, checked to answer the same cases in the same order."""
    lists = [read_answers(p) for p in paths]
    n = len(lists[0])
    for p, answers in zip(paths, lists):
        if len(answers) != n:
            sys.exit("differential: %s has %d answers, %s has %d" % (p, len(answers), paths[0], n))
    for row in zip(*lists):
        if len({a["in"] for a in row}) != 1:
            sys.exit("differential: answers out of step at %r" % (row[0]["in"],))
        yield row


def rng(suite):
    """A generator seeded by the suite's name: the same cases every run."""
    return random.Random("gpuprep-differential-" + suite)


class Report:
    """Counts agreements; collects differences as deliberate (with the documented reason) or not."""

    def __init__(self, suite, reference):
        self.suite, self.reference = suite, reference
        self.agree = 0
        self.deliberate = {}  # reason -> [case text]
        self.wrong = []

    def same(self):
        self.agree += 1

    def differs(self, case, what, reason=None):
        if reason:
            self.deliberate.setdefault(reason, []).append(case)
        else:
            self.wrong.append("%s: %s" % (case, what))

    def finish(self):
        total = self.agree + sum(map(len, self.deliberate.values())) + len(self.wrong)
        print("%s: %d cases against %s: %d agree, %d differ on purpose, %d disagree"
              % (self.suite, total, self.reference, self.agree, total - self.agree - len(self.wrong),
                 len(self.wrong)))
        for reason, cases in sorted(self.deliberate.items()):
            print("  on purpose (%d): %s" % (len(cases), reason))
            for c in cases[:6]:
                print("      " + c)
            if len(cases) > 6:
                print("      ... and %d more" % (len(cases) - 6))
        for w in self.wrong[:40]:
            print("  DISAGREE: " + w, file=sys.stderr)
        if len(self.wrong) > 40:
            print("  ... and %d more disagreements" % (len(self.wrong) - 40), file=sys.stderr)
        return 1 if self.wrong else 0


def show(s, limit=90):
    """A case as one readable line."""
    r = repr(s)
    return r if len(r) <= limit else r[: limit - 12] + "... (%d characters)" % len(r)


def main(doc, gen, check, check_args):
    """The command line every suite has: `gen`, or `check` with `check_args` file names."""
    if sys.argv[1:2] == ["gen"]:
        gen()
    elif sys.argv[1:2] == ["check"] and len(sys.argv) == 2 + check_args:
        sys.exit(check(*sys.argv[2:]))
    else:
        sys.exit(doc)
