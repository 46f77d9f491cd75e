#!/usr/bin/env bash
# ctest-labels: fixtures
# ARCHITECTURE.md's rules hold in the code, read from ARCHITECTURE.md itself (its folder table):
#  - every folder under src/ has exactly one row, and every row names a folder under src/;
#  - a folder includes (`#include "other/..."`) only the folders its row's "may include" cell lists (its own
#    folder needs no listing; "everything" allows every folder, "std only" none); a listed "folder (`a.h`
#    only...)" allows only the headers named;
#  - every folder and header a row lists is included by at least one file of that folder (the row is true,
#    not only permissive);
#  - the rows form no cycle (lower folders never include upper ones), and the picture above the table puts
#    every folder on one line, below every folder that includes it;
#  - every header starts with the comment that says what it holds;
#  - yaml-cpp is included only in src/manifest/, and no file outside src/sys/ (and main.cc) makes a system
#    call directly;
#  - only src/main.cc builds the real seams (DiskFs, RealCommandRunner, DlopenNativeLibs, RealUnixHttp, the
#    curl HTTP client, StopSignal): every folder gets them passed in;
#  - a layer's folder is closed (layers/table.h): a finding with a layer's code (`.Add("driver.…"`) is added
#    only in src/layers/<that layer>/, and src/host/ (the file half of the host) names no layer: what a layer
#    needs re-read is declared by its row.
# Each violation is one line naming the file (and line) and the row to change.
# Usage: architecture.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
src=${2:?source dir}
python3 - "$src" <<'PY'
import os, re, sys


def split_top(cell):
    """Splits a cell at the commas outside parentheses and backquotes."""
    parts, depth, quoted, cur = [], 0, False, ""
    for c in cell:
        if c == "`":
            quoted = not quoted
        elif not quoted and c == "(":
            depth += 1
        elif not quoted and c == ")":
            depth -= 1
        if c == "," and depth == 0 and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    parts.append(cur.strip())
    return [p for p in parts if p]


def cells(line):
    # A table row: "| a | b | c |". Backquoted text may hold no "|" (none does).
    return [c.strip() for c in line.strip()[1:-1].split("|")]


def check(root):
    """ARCHITECTURE.md's rules over the tree at root: (violations, one line each; folders; includes)."""
    arch_path = os.path.join(root, "ARCHITECTURE.md")
    folders = sorted(d for d in os.listdir(os.path.join(root, "src")) if os.path.isdir(os.path.join(root, "src", d)))
    bad = []
    # The folder table: the first Markdown table whose header has a "folder" and a "may include" column.
    rows = {}  # folder -> {"line": n, "deps": {folder: set of headers or None (any)}, "all": bool}
    lines = open(arch_path).read().splitlines()
    col_folder = col_deps = None
    in_table = False
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            if in_table:
                break
            continue
        c = cells(line)
        if not in_table:
            if "folder" in c and "may include" in c:
                col_folder, col_deps = c.index("folder"), c.index("may include")
                in_table = True
            continue
        if re.fullmatch(r"[-:| ]+", line):
            continue
        where = "ARCHITECTURE.md:%d" % n
        if len(c) <= max(col_folder, col_deps):
            bad.append("%s: a folder-table row with too few cells" % where)
            continue
        m = re.fullmatch(r"`([a-z_]+)/`", c[col_folder])
        if not m:
            bad.append("%s: folder cell %r is not written `name/`" % (where, c[col_folder]))
            continue
        folder = m.group(1)
        if folder in rows:
            bad.append("%s: a second row for `%s/` (the first is on line %d)" % (where, folder, rows[folder]["line"]))
            continue
        row = {"line": n, "deps": {}, "all": False}
        rows[folder] = row
        cell = c[col_deps]
        if cell == "everything":
            row["all"] = True
            continue
        if cell == "std only":
            continue
        for item in split_top(cell):
            im = re.fullmatch(r"([a-z_]+)(?: \((.*)\))?", item)
            if not im:
                bad.append("%s: `%s/` row: cannot read may-include item %r (write `folder` or `folder (`a.h` only: why)`)"
                           % (where, folder, item))
                continue
            dep, note = im.group(1), im.group(2)
            headers = None
            if note is not None:
                hm = re.match(r"((?:`[^`]+`(?:, | and )?)+) only\b", note)
                if hm:
                    headers = set(re.findall(r"`([^`]+)`", hm.group(1)))
            if dep in row["deps"]:
                bad.append("%s: `%s/` row lists %s twice" % (where, folder, dep))
            row["deps"][dep] = headers
    if not rows:
        bad.append("ARCHITECTURE.md: no folder table (a table with the columns \"folder\" and \"may include\")")
    # The picture: the first fenced block whose lines start with folder names; a folder includes only folders
    # on lower lines (the table's rows say which; "everything" is the top line).
    level, in_block, block_done = {}, False, False
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            if in_block:
                if level:
                    block_done = True
                    break
                in_block = False
            else:
                in_block = True
            continue
        if in_block:
            names = re.findall(r"(?:^|\s)([a-z_]+)/(?=\s|$)", line)
            for name in names:
                if name in level:
                    bad.append("ARCHITECTURE.md:%d: `%s/` is twice in the picture" % (n, name))
                level[name] = -n  # lower lines: larger n, lower level
    if not block_done:
        bad.append("ARCHITECTURE.md: no picture (a fenced block of folder names, top folder first)")
    else:
        for f in folders:
            if f not in level:
                bad.append("ARCHITECTURE.md: src/%s/ is not in the picture" % f)
        for f, row in sorted(rows.items()):
            if f not in level or row["all"]:
                continue
            for dep in sorted(row["deps"]):
                if dep in level and level[dep] >= level[f]:
                    bad.append("ARCHITECTURE.md:%d: `%s/` includes %s/, which the picture does not put on a lower line"
                               % (-level[f], f, dep))

    for f in folders:
        if f not in rows:
            bad.append("ARCHITECTURE.md: no row for src/%s/ (add one with what it holds and what it may include)" % f)
    for f, row in sorted(rows.items()):
        if f not in folders:
            bad.append("ARCHITECTURE.md:%d: row `%s/` names no folder under src/ (remove the row)" % (row["line"], f))
        for dep in sorted(row["deps"]):
            if dep == f:
                bad.append("ARCHITECTURE.md:%d: `%s/` row lists its own folder" % (row["line"], f))
            elif dep not in folders:
                bad.append("ARCHITECTURE.md:%d: `%s/` row lists %s, which is no folder under src/" % (row["line"], f, dep))

    # The rows form no cycle: a folder's row never reaches back to it.
    for f in sorted(rows):
        seen, todo = set(), [(d, [f, d]) for d in rows[f]["deps"]]
        while todo:
            d, path = todo.pop()
            if d == f:
                bad.append("ARCHITECTURE.md:%d: the rows form a cycle: %s" % (rows[f]["line"], " -> ".join(path)))
                break
            if d in seen or d not in rows:
                continue
            seen.add(d)
            todo += [(e, path + [e]) for e in rows[d]["deps"]]

    syscall = re.compile(r"(::|\bstd::)(open|read|write|close|flock|fcntl|fork|execv\w*|kill|waitpid|uname|geteuid|getuid|"
                         r"dlopen|dlsym|socket|connect|mkdir|rename|unlink|stat|lstat|access|system|getenv|sysconf|statvfs|"
                         r"ioctl|getifaddrs|posix_fadvise|getpid|mmap)\s*\(|"
                         r"std::filesystem::")
    include = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/([^"]+)"')
    # The real implementations of the seams: only src/main.cc (outside every folder) builds them.
    real_seam = re.compile(r"\b(DiskFs|RealCommandRunner|DlopenNativeLibs|RealUnixHttp|MakeCurlHttpClient|StopSignal)\b")
    used = {f: {} for f in folders}  # folder -> {included folder: set of headers}
    includes = 0
    for d in folders:
        row = rows.get(d)
        for dirpath, _, files in sorted(os.walk(os.path.join(root, "src", d))):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                text = open(path, errors="replace").read()
                if name.endswith(".h") and not text.startswith("//"):
                    bad.append("%s:1: a header starts with the comment that says what it holds" % rel)
                for n, line in enumerate(text.splitlines(), 1):
                    m = include.match(line)
                    if m:
                        inc, header = m.group(1), m.group(2)
                        if inc == d:
                            continue
                        includes += 1
                        used[d].setdefault(inc, set()).add(header)
                        if row is None or row["all"]:
                            continue
                        if inc not in row["deps"]:
                            bad.append('%s:%d: #include "%s/%s": %s/ may not include %s/ (the `%s/` row of '
                                       "ARCHITECTURE.md, line %d, does not list it: add %s to that row's \"may include\" "
                                       "cell, or drop the include)" % (rel, n, inc, header, d, inc, d, row["line"], inc))
                        elif row["deps"][inc] is not None and header not in row["deps"][inc]:
                            bad.append('%s:%d: #include "%s/%s": the `%s/` row of ARCHITECTURE.md, line %d, allows only '
                                       "%s from %s/ (name %s there, or drop the include)"
                                       % (rel, n, inc, header, d, row["line"], ", ".join(sorted(row["deps"][inc])), inc,
                                          header))
                    if re.match(r"^\s*#\s*include\s*<[^>]*yaml-cpp", line) and d != "manifest":
                        bad.append("%s:%d: includes yaml-cpp outside src/manifest/" % (rel, n))
                    if d != "sys":
                        for s in syscall.finditer(re.sub(r"//.*", "", line)):
                            bad.append("%s:%d: system call %s outside src/sys/" % (rel, n, s.group(0).strip()))
                        for s in real_seam.finditer(re.sub(r"//.*", "", line)):
                            bad.append("%s:%d: %s, a real seam, is built outside src/main.cc" % (rel, n, s.group(1)))

    # Every listed dependency is used.
    for f, row in sorted(rows.items()):
        if f not in folders or row["all"]:
            continue
        for dep, headers in sorted(row["deps"].items()):
            if dep not in used[f]:
                bad.append("ARCHITECTURE.md:%d: the `%s/` row lists %s, but no file in src/%s/ includes %s/ "
                           "(remove %s from that row)" % (row["line"], f, dep, f, dep, dep))
            elif headers is not None:
                for h in sorted(headers - used[f][dep]):
                    bad.append("ARCHITECTURE.md:%d: the `%s/` row allows %s/%s, but no file in src/%s/ includes it "
                               "(remove `%s` from that row)" % (row["line"], f, dep, h, f, h))
    return bad, folders, includes


def layer_folders(root):
    """The layer folders' rules: (violations, one line each). A layer is a folder under src/layers/."""
    base = os.path.join(root, "src", "layers")
    layers = sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d))) if os.path.isdir(base) else []
    bad = []
    add = re.compile(r'\.Add\(\s*"([a-z_]+)\.[a-z0-9_.-]+"')
    literal = re.compile(r'"([a-z_]+)"')
    for dirpath, _, files in sorted(os.walk(os.path.join(root, "src"))):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            parts = rel.split(os.sep)
            for n, line in enumerate(open(path, errors="replace").read().splitlines(), 1):
                code = re.sub(r"//.*", "", line)
                for m in add.finditer(code):
                    layer = m.group(1)
                    if layer in layers and parts[1:3] != ["layers", layer]:
                        bad.append("%s:%d: a %s finding is added outside src/layers/%s/ (move it into that folder: "
                                   "adding a finding touches its layer's folder only)" % (rel, n, layer, layer))
                if parts[1] == "host":
                    for m in literal.finditer(code):
                        if m.group(1) in layers:
                            bad.append('%s:%d: src/host/ names layer "%s" (declare what the layer needs re-read '
                                       "in its row of the layer table)" % (rel, n, m.group(1)))
    return bad


def layer_folders_self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        files = {
            "src/layers/a/check.cc": 'r.Add("a.ok", s);\n',
            "src/layers/b/check.cc": 'r.Add("b.ok", s);\nr.Add("a.stray", s);  // r.Add("a.comment") is fine\n',
            "src/layers/table.cc": 'r.Add("b.shared", s);\nr.Add("zz.not-a-layer", s);\n',
            "src/host/files.cc": 'Read("a/file");\nif (name == "b") {}\n',
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(t, rel)), exist_ok=True)
            with open(os.path.join(t, rel), "w") as f:
                f.write(text)
        got = layer_folders(t)
    want = [
        'src/host/files.cc:2: src/host/ names layer "b" (declare what the layer needs re-read in its row of the '
        "layer table)",
        "src/layers/table.cc:1: a b finding is added outside src/layers/b/ (move it into that folder: adding a "
        "finding touches its layer's folder only)",
        "src/layers/b/check.cc:2: a a finding is added outside src/layers/a/ (move it into that folder: adding a "
        "finding touches its layer's folder only)",
    ]
    if sorted(got) != sorted(want):
        print("architecture: the layer folders' self-test failed; expected:")
        for w in want:
            print("  " + w)
        print("got:")
        for g in got:
            print("  " + g)
        return False
    return True


def self_test():
    """The checker on a small made-up tree with one of each violation: a check that cannot fail proves nothing."""
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        files = {
            "ARCHITECTURE.md": "intro\n```\ntop/\nlow/  mid/\nutil/\n```\n| folder | what it holds | may include |\n|---|---|---|\n"
                               "| `util/` | strings | std only |\n"
                               "| `low/` | a | util, mid (`m.h` only: why), gone |\n"
                               "| `mid/` | b | util (`u.h` only), low |\n"
                               "| `top/` | c | everything |\n\nafter\n",
            "src/util/u.h": "// u\n",
            "src/util/v.h": "// v\n",
            "src/low/a.cc": '#include "util/u.h"\n#include "mid/m.h"\n#include "mid/n.h"\n#include "top/t.h"\n'
                            "int f() { return ::getenv(\"X\") != nullptr; }  // ::open( in a comment is fine\n"
                            "sys::DiskFs fs(\"/\");  // DiskFs in a comment is fine\n",
            "src/mid/m.h": '#include "util/v.h"\n#include <yaml-cpp/yaml.h>\n',
            "src/top/t.h": '// t\n#include "low/a.h"\n#include "util/u.h"\n',
            "src/new/x.h": "",
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(t, rel)), exist_ok=True)
            with open(os.path.join(t, rel), "w") as f:
                f.write(text)
        got, _, _ = check(t)
    want = [
        "ARCHITECTURE.md: src/new/ is not in the picture",
        "ARCHITECTURE.md:4: `low/` includes mid/, which the picture does not put on a lower line",
        "ARCHITECTURE.md:4: `mid/` includes low/, which the picture does not put on a lower line",
        "ARCHITECTURE.md: no row for src/new/ (add one with what it holds and what it may include)",
        "ARCHITECTURE.md:10: `low/` row lists gone, which is no folder under src/",
        "ARCHITECTURE.md:10: the rows form a cycle: low -> mid -> low",
        "ARCHITECTURE.md:11: the rows form a cycle: mid -> low -> mid",
        'src/low/a.cc:3: #include "mid/n.h": the `low/` row of ARCHITECTURE.md, line 10, allows only m.h from mid/ '
        "(name n.h there, or drop the include)",
        'src/low/a.cc:4: #include "top/t.h": low/ may not include top/ (the `low/` row of ARCHITECTURE.md, line 10, '
        "does not list it: add top to that row's \"may include\" cell, or drop the include)",
        "src/low/a.cc:5: system call ::getenv( outside src/sys/",
        "src/low/a.cc:6: DiskFs, a real seam, is built outside src/main.cc",
        "src/mid/m.h:1: a header starts with the comment that says what it holds",
        'src/mid/m.h:1: #include "util/v.h": the `mid/` row of ARCHITECTURE.md, line 11, allows only u.h from util/ '
        "(name v.h there, or drop the include)",
        "src/mid/m.h:2: includes yaml-cpp outside src/manifest/",
        "src/new/x.h:1: a header starts with the comment that says what it holds",
        "ARCHITECTURE.md:10: the `low/` row lists gone, but no file in src/low/ includes gone/ (remove gone from that row)",
        "ARCHITECTURE.md:11: the `mid/` row lists low, but no file in src/mid/ includes low/ (remove low from that row)",
        "ARCHITECTURE.md:11: the `mid/` row allows util/u.h, but no file in src/mid/ includes it (remove `u.h` from that "
        "row)",
    ]
    if got != want:
        print("architecture: the checker's self-test failed; expected:")
        for w in want:
            print("  " + w)
        print("got:")
        for g in got:
            print("  " + g)
        return False
    return True


ok = self_test() and layer_folders_self_test()
bad, folders, includes = check(sys.argv[1])
bad += layer_folders(sys.argv[1])
for b in bad:
    print("architecture: " + b)
print("architecture: %d folders, %d cross-folder includes checked, %d violations" % (len(folders), includes, len(bad)))
sys.exit(0 if ok and not bad else 1)
PY
