"""Shell quoting: gpuprep's ShellJoin read back by bash, dash and Python's shlex.split.

  shell_cases.py gen > cases          "shell HEX..." lines: generated and hostile argv vectors
  shell_cases.py check GPUPREP WORK   runs each joined line in bash and in dash (the first word a program in
                                      WORK/bin that records its argv) and through shlex.split; each must give
                                      the argv back
The first words include shell reserved words (if, time, !, {), assignments (x=1, x+=1) and names made of
quoting characters; other words any byte but NUL.
"""
import os
import shlex
import stat
import subprocess
import sys

from common import main, Report, paired, rng, show, unhex, write_cases

RECORDER = "gp-record"
RESERVED = ["if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done", "in",
            "function", "select", "time", "coproc", "!", "{", "}", "[[", "]]"]
ASSIGNMENTS = ["x=1", "x+=1", "X=", "_=a", "A1=b", "a_b=c d", "x=$(id)", "a[1]=x", "1x=2", "=x", "x==y", "x+y=1",
               "+=1", "x-y=1", "x=", "PATH=nowhere", "IFS=x"]
ODD_NAMES = ["%job", "%1", "%%", "-x", "--", "~x", "#x", "x#", "a b", "a\tb", "a\nb", "'", '"', "\\", "$x", "${x}",
             "`id`", "$(id)", "*", "?", "[a]", "a;b", "a&b", "a|b", "a<b", "a>b", "(x)", "x)", "@x", "a,b", "a:b",
             ".x", "x.", "\u00e9", "\xff", "\x7f", "\x01", "=", "+", ":x", "!x", "x!", "{x}", "x}"]
WORD_CHARS = [chr(c) for c in range(1, 128)] + ["\u00e9", "\u2028", "\xff", "\xfe", "'\\''"]


def word(r):
    k = r.random()
    if k < 0.1:
        return ""
    if k < 0.2:
        return r.choice(RESERVED + ASSIGNMENTS + ODD_NAMES)
    return "".join(r.choice(WORD_CHARS) for _ in range(r.randint(1, 8)))


def gen():
    r = rng("shell")
    cases = []
    for first in RESERVED + ASSIGNMENTS + ODD_NAMES:
        cases.append((first,))
        cases.append((first, "a", first))
    for _ in range(1500):
        first = RECORDER if r.random() < 0.7 else r.choice(RESERVED + ASSIGNMENTS + ODD_NAMES)
        cases.append(tuple([first] + [word(r) for _ in range(r.randint(0, 5))]))
    write_cases("shell", cases)


def install_programs(bindir, names):
    """One recording program per first word: prints its argument count, its own name and its arguments,
    each followed by NUL."""
    os.makedirs(bindir, exist_ok=True)
    for name in names:
        path = os.path.join(bindir, name).encode("utf-8", "surrogateescape")
        with open(path, "w") as f:
            f.write("#!/bin/dash\nprintf '%s\\0' \"$#\" \"${0##*/}\" \"$@\"\n")
        os.chmod(path, stat.S_IRWXU)


def records(out):
    """The recorders' output as argv lists."""
    fields = out.split(b"\0")
    i, got = 0, []
    while i + 1 < len(fields):
        n = int(fields[i])
        got.append([f.decode("utf-8", "surrogateescape") for f in fields[i + 1:i + 2 + n]])
        i += 2 + n
    return got


def run(shell, lines, bindir):
    """What the recorders saw when `shell` ran `lines` as one script file (as plan --format sh is run): for
    each line, the argv its program got, or None. Before each line a builtin printf writes a marker record,
    so that a line that runs nothing (or a parse error that swallows the lines after it) shows."""
    script = os.path.join(os.path.dirname(bindir), "script.sh")
    with open(script, "wb") as f:
        for i, line in enumerate(lines):
            f.write(b"printf '%%s\\0' 1 gp-case %d\n" % i + line + b"\n")
    env = {"PATH": bindir + ":/usr/bin:/bin", "LC_ALL": "C"}
    p = subprocess.run([shell, script], capture_output=True, env=env, timeout=120)
    got, marks, current = [None] * len(lines), set(), None
    for rec in records(p.stdout):
        if rec[0] == "gp-case":
            current = int(rec[1])
            marks.add(current)
        elif current is not None:
            got[current] = rec if got[current] is None else got[current] + ["<and>"] + rec
    return got, marks


def check_shell(shell, lines, bindir):
    got, marks = run(shell, lines, bindir)
    for i in range(len(lines)):
        if i not in marks:  # swallowed by an earlier line: on its own
            got[i] = run(shell, [lines[i]], bindir)[0][0]
    return got


def check(gpuprep_file, work):
    cases, lines = [], []
    for (ours,) in paired(gpuprep_file):
        cases.append([unhex(h) for h in ours["in"].split(" ")])
        lines.append(bytes.fromhex(ours["joined"]))
    bindir = os.path.join(work, "bin")
    install_programs(bindir, {c[0] for c in cases})
    report = Report("shell quoting", "bash, dash and shlex.split")
    results = {}
    for shell in ("bash", "dash"):
        results[shell] = check_shell(shell, lines, bindir)
    for argv, line, b, d in zip(cases, lines, results["bash"], results["dash"]):
        text = line.decode("utf-8", "surrogateescape")
        try:
            s = shlex.split(text)
        except ValueError as e:
            s = "shlex: %s" % e
        wrong = [name for name, got in (("bash", b), ("dash", d), ("shlex", s)) if got != argv]
        if not wrong:
            report.same()
        elif wrong == ["bash"] and argv[0].startswith("%"):
            report.differs(show(text), "", "bash reads a first word starting with '%' as a job, quoted or not: "
                                               "such a program runs only by its path")
        else:
            report.differs("%s -> %s" % (show(argv, 60), show(text, 60)),
                           "; ".join("%s read %s" % (n, show({"bash": b, "dash": d, "shlex": s}[n], 70)) for n in wrong))
    return report.finish()


if __name__ == "__main__":
    main(__doc__, gen, check, 2)
