#!/usr/bin/env python3
"""Drops clang-tidy's readability-function-size findings that tools/function-size-exceptions.txt excepts.

Usage: function-size-exceptions.py [--quiet] LIST REPO_ROOT < findings > kept
Reads clang-tidy warning lines on stdin and prints those the list does not except. A list line is
`src/FILE.cc Name: why` (Name as clang-tidy prints it, a method without its class; `#` starts a comment).
With --quiet (a running log), nothing else is checked; without it, a list line with no reason, or one that
excepted no finding (the function was split or renamed), is printed as a finding too.
"""
import re
import sys

# clang-tidy prints a finding as a warning, or as an error under WarningsAsErrors (as .clang-tidy sets it).
FINDING = re.compile(r"^(?P<file>[^:]+):\d+:\d+: (warning|error): function '(?P<name>[^']+)' exceeds recommended "
                     r"size/complexity thresholds \[readability-function-size(,-warnings-as-errors)?\]$")
ENTRY = re.compile(r"^(?P<file>\S+)\s+(?P<name>\S+):\s+(?P<why>.*)$")


def read_list(path):
    entries, bad = {}, []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = ENTRY.match(line)
        if not m or len(m.group("why")) < 10:
            bad.append(f"{path}:{n}: expected `FILE FUNCTION: why` with a reason, got: {line}")
            continue
        entries[(m.group("file"), m.group("name").split("::")[-1])] = (n, m.group("file") + " " + m.group("name"))
    return entries, bad


def main(argv):
    quiet = argv[:1] == ["--quiet"]
    if quiet:
        argv = argv[1:]
    list_path, root = argv
    entries, bad = read_list(list_path)
    used = set()
    for line in sys.stdin:
        line = line.rstrip("\n")
        m = FINDING.match(line)
        if m:
            key = (m.group("file").removeprefix(root.rstrip("/") + "/"), m.group("name"))
            if key in entries:
                used.add(key)
                continue
        print(line, flush=True)
    if quiet:
        return 0
    for msg in bad:
        print(msg)
    for key, (n, what) in sorted(entries.items(), key=lambda kv: kv[1]):
        if key not in used:
            print(f"{list_path}:{n}: warning: {what} is excepted but was not found over 60 lines "
                  "(split or renamed): remove the line")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
