"""Debian version ordering: gpuprep's CompareDebVersions and DebVersion::Problem against dpkg itself.

  dpkg_cases.py gen > cases             "dpkg HEX HEX" lines: generated pairs of versions
  dpkg_cases.py check CASES GPUPREP     runs `dpkg --compare-versions` on each pair and compares: dpkg's
                                        lt/eq/gt with gpuprep's, and dpkg's refusal (exit 2) with a
                                        DebVersion::Problem on either side
"""
import concurrent.futures
import subprocess
import sys

from common import main, Report, paired, rng, show, unhex, write_cases

EPOCHS = ["", "", "", "0:", "1:", "2:", "10:", "+1:", "-1:", "-0:", "+0:", "01:", "2147483647:", "2147483648:",
          "99999999999999999999:", "-99999999999999999999:", " 1:", "\n1:", "a:", ":", "+:", "1a:", "1 :"]
CHARS = "0123456789" * 3 + "abzAZ" + ".+~-:" * 2 + "~"


def upstream(r):
    if r.random() < 0.7:  # dotted numbers with the odd letter or tilde, as distributions write them
        parts = [str(r.choice([0, 1, 2, 9, 10, 11, 99, 100, 535, r.randint(0, 10**6)])) for _ in range(r.randint(1, 4))]
        s = ".".join(("0" * r.randint(0, 2) if r.random() < 0.2 else "") + p for p in parts)
        if r.random() < 0.3:
            s += r.choice(["~rc1", "~", "~~", "+dfsg", "+b1", "a", "z", "~beta2", "+cuda12.2", ".0"])
        return s
    return "".join(r.choice(CHARS) for _ in range(r.randint(1, 10)))


def version(r):
    v = r.choice(EPOCHS) + upstream(r)
    if r.random() < 0.6:
        v += "-" + r.choice(["1", "0ubuntu1", "1ubuntu0.22.04.1", "1~bpo12+1", "2+deb12u1", "", "a.b",
                             upstream(r), "1-2", "1:2"])
    if r.random() < 0.05:
        v = r.choice([" ", "  ", "\t"]) + v + r.choice(["", " ", "\t"])
    if r.random() < 0.03:
        i = r.randint(0, len(v))
        v = v[:i] + r.choice([" ", "\t", "\n", "\xff", "\u00e9"]) + v[i:]
    return v


def neighbour(r, v):
    """A version close to v: the same, one part changed, a suffix added or a character dropped."""
    k = r.random()
    if k < 0.25:
        return v
    if k < 0.5 and v:
        i = r.randrange(len(v))
        return v[:i] + r.choice(CHARS) + v[i + 1:]
    if k < 0.75:
        return v + r.choice(["~", "~rc1", ".0", "0", "-1", "+1", "a", "-0"])
    return v[:-1] if len(v) > 1 else v


def fixed():
    yield from [
        ("+1:1.0", "1.0"), ("+1:1.0", "1:1.0"), ("+1:1.0", "2.0"), ("-1:1.0", "1.0"), ("-0:1.0", "1.0"),
        ("01:1.0", "1:1.0"), ("2147483647:1", "1"), ("2147483648:1", "1"), ("1:", "1"), (":1", "1"),
        ("1.0~rc1", "1.0"), ("1.0~~", "1.0~"), ("1.0", "1.0-0"), ("1.0-", "1.0"), ("-1", "1"), ("1:2:3", "1:2"),
        ("535.161.08-0ubuntu1", "535.161.07-0ubuntu1"), ("1.0a", "1.0+"), ("1.0", "1.00"), ("0:1", "1"),
        ("a1", "1"), ("1 ", "1"), (" 1", "1"), ("1 2", "1"), ("1\t", "1"), ("5:28.3.2-1~ubuntu.22.04~jammy", "28.3.2"),
        ("1.17.8-1", "1.17.8-1+cuda12.2"), ("9.6.0.74-1", "9.10.0.1-1"), (" ", "1"), ("1\n", "1"),
    ]


def gen():
    r = rng("dpkg")
    pairs = list(fixed())
    for _ in range(1800):
        a = version(r)
        pairs.append((a, neighbour(r, a) if r.random() < 0.5 else version(r)))
    write_cases("dpkg", pairs)


def dpkg_order(pair):
    a, b = pair
    lt = subprocess.run(["dpkg", "--compare-versions", "--", a, "lt", b], capture_output=True).returncode
    if lt == 2:
        return "error"
    if lt == 0:
        return "lt"
    return "eq" if subprocess.run(["dpkg", "--compare-versions", "--", a, "eq", b], capture_output=True).returncode == 0 else "gt"


def check(cases_file, gpuprep_file):
    ours = [a for (a,) in paired(gpuprep_file)]
    pairs = [tuple(unhex(h) for h in answer["in"].split(" ")) for answer in ours]
    with open(cases_file) as f:
        if sum(1 for line in f if line.strip()) != len(pairs):
            sys.exit("differential: the cases and gpuprep's answers differ in number")
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        orders = list(pool.map(dpkg_order, pairs))
    report = Report("dpkg versions", "dpkg --compare-versions")
    for (a, b), answer, dpkg in zip(pairs, ours, orders):
        problems = [p for p in answer["problem"] if p]
        mine = "error" if problems else answer["order"]
        if mine == dpkg:
            report.same()
        else:
            report.differs("%s vs %s" % (show(a, 60), show(b, 60)),
                           "dpkg: %s; gpuprep: %s%s" % (dpkg, mine, (" (" + "; ".join(problems) + ")") if problems else ""))
    return report.finish()


if __name__ == "__main__":
    main(__doc__, gen, check, 2)
