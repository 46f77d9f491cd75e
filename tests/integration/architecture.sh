#!/usr/bin/env bash
# ctest-labels: fixtures
# ARCHITECTURE.md's rules hold in the code: each src/ folder includes only the folders its table row lists
# and the folders below those (plus itself and util), a row's "folder (`a.h` only)" limits that folder's includes
# to the headers named, yaml-cpp is included only in src/manifest/, and no file
# outside src/sys/ (and main.cc) makes a system call directly.
# Usage: architecture.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
src=${2:?source dir}
python3 - "$src" <<'PY'
import os, re, sys
root = sys.argv[1]
arch = open(os.path.join(root, "ARCHITECTURE.md")).read()
folders = [d for d in os.listdir(os.path.join(root, "src")) if os.path.isdir(os.path.join(root, "src", d))]
allowed = {}
only = {}  # folder -> {included folder: the headers its row allows ("layers (`rules.h` only)")}
for line in arch.splitlines():
    m = re.match(r"\| `([a-z_]+)/` \|.*\| (.*) \|$", line)
    if m and m.group(1) in folders:
        deps = m.group(2)
        for dep, headers in re.findall(r"\b([a-z_]+) \(((?:`[^`]+`(?:, | and )?)+) only", deps):
            only.setdefault(m.group(1), {})[dep] = set(re.findall(r"`([^`]+)`", headers))
        allowed[m.group(1)] = set(folders) if deps.strip() == "everything" else {f for f in folders if re.search(r"\b%s\b" % f, deps)}
# A folder may include what its row lists and, through them, what those may include (the layers below).
changed = True
while changed:
    changed = False
    for f, deps in allowed.items():
        closure = set(deps)
        for d in deps:
            closure |= allowed.get(d, set())
        closure.discard(f)
        if closure != deps:
            allowed[f] = closure
            changed = True
bad = []
missing = [f for f in folders if f not in allowed]
if missing:
    bad.append("ARCHITECTURE.md has no row for src/%s/" % ", src/".join(missing))
syscall = re.compile(r"(::|\bstd::)(open|read|write|close|flock|fcntl|fork|execv\w*|kill|waitpid|uname|geteuid|getuid|"
                     r"dlopen|dlsym|socket|connect|mkdir|rename|unlink|stat|lstat|access|system|getenv)\s*\(|"
                     r"std::filesystem::")
for d in folders:
    for dirpath, _, files in os.walk(os.path.join(root, "src", d)):
        for f in files:
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            text = open(path, errors="replace").read()
            for inc, header in re.findall(r'#include "([a-z_]+)/([^"]+)"', text):
                if inc != d and inc != "util" and inc not in allowed.get(d, set()):
                    bad.append("%s includes %s/ (not in its ARCHITECTURE.md row)" % (rel, inc))
                elif inc in only.get(d, {}) and header not in only[d][inc]:
                    bad.append("%s includes %s/%s (its ARCHITECTURE.md row allows only %s)" %
                               (rel, inc, header, ", ".join(sorted(only[d][inc]))))
            if "yaml-cpp" in " ".join(re.findall(r"#include <([^>]+)>", text)) and d != "manifest":
                bad.append("%s includes yaml-cpp outside src/manifest/" % rel)
            if d != "sys":
                code = re.sub(r"//.*", "", text)
                for m in syscall.finditer(code):
                    bad.append("%s: system call %s outside src/sys/" % (rel, m.group(0).strip()))
for b in bad:
    print("architecture: " + b)
print("architecture: %d folders checked, %d violations" % (len(folders), len(bad)))
sys.exit(1 if bad else 0)
PY
