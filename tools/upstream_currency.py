#!/usr/bin/env python3
"""What upstream has released that gpuprep's embedded data does not know, or that no shipped stack pins yet.

Reads snapshots of NVIDIA's own records from a directory (or, with --base-url, the same files over HTTP) and
compares them with the data gpuprep embeds: the driver releases table (tools/data/nvidia-driver-releases.tsv),
the compatibility facts (manifests/compat.yaml) and the stacks' pins (manifests/stacks/*.yaml).

  python3 tools/upstream_currency.py --snapshots DIR [--json] [--root SOURCE_DIR]
  python3 tools/upstream_currency.py --base-url URL [--json] [--timeout S] [--root SOURCE_DIR]

The snapshot directory (or URL) holds SNAPSHOTS, a tab-separated index of the files it carries, one a line:
PATH, the upstream repository (owner/name), its commit (40 hex digits), that commit's date (YYYY-MM-DD or "-"
when not known) and, optionally, the upstream line of the file's first line (an excerpt) or "trimmed" (a
file cut down to the keys the check reads, cited without lines). Each PATH names what the file is:

  cloud-native-docs/gpu-operator/life-cycle-policy.rst   NVIDIA/cloud-native-docs: the GPU Operator component
                                                         matrix (data-center drivers, each linked to its notes)
  cloud-native-docs/gpu-operator/release-notes.rst       the GPU Operator release notes (drivers, toolkit)
  cloud-native-docs/container-toolkit/release-notes.md   the NVIDIA Container Toolkit release notes
  nccl/tags                                              `git tag` of NVIDIA/nccl, one a line
  open-gpu-kernel-modules/tags                           `git tag` of NVIDIA/open-gpu-kernel-modules
  cuda-redist/redistrib_X.Y.Z.json                       NVIDIA's CUDA redistributable manifest
  cudnn-redist/redistrib_X.Y.Z.json                      NVIDIA's cuDNN redistributable manifest
  ngc-pytorch/release-notes-index.html                   NVIDIA's PyTorch release notes index (rel-YY-MM links)

Every entry found upstream is one of:
  new       upstream names a release the embedded data does not know;
  unpinned  the embedded data knows it (or a release of its line), but no shipped stack pins it yet.

Exit codes: 0 nothing new upstream (unpinned entries may be listed), 1 something new upstream, 2 bad input
(one line naming FILE:LINE, or the flag), 3 a snapshot could not be fetched (online mode).

Only the Python 3 standard library is used.
"""
import argparse
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE = 1 << 20  # a snapshot file larger than 1 MiB is refused
MAX_FILES = 256

VERSION = r"\d+(?:\.\d+)*"
DRIVER = r"\d{3}\.\d{1,3}(?:\.\d{1,3})?"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")  # any but tab, newline, carriage return


class BadInput(Exception):
    """One line for the user: FILE:LINE: message."""


class FetchFailed(Exception):
    pass


def vkey(v):
    return tuple(int(x) for x in v.split("."))


# ---------------------------------------------------------------------------------------------------------
# Snapshot files: what each path is, and how it is read.

KINDS = [
    (re.compile(r"^cloud-native-docs/gpu-operator/life-cycle-policy\.rst$"), "gpu-operator-matrix"),
    (re.compile(r"^cloud-native-docs/gpu-operator/release-notes\.rst$"), "gpu-operator-notes"),
    (re.compile(r"^cloud-native-docs/container-toolkit/release-notes\.md$"), "toolkit-notes"),
    (re.compile(r"^nccl/tags$"), "nccl-tags"),
    (re.compile(r"^open-gpu-kernel-modules/tags$"), "ogkm-tags"),
    (re.compile(r"^cuda-redist/redistrib_(\d+\.\d+\.\d+)\.json$"), "cuda-redist"),
    (re.compile(r"^cudnn-redist/redistrib_(\d+\.\d+\.\d+)\.json$"), "cudnn-redist"),
    (re.compile(r"^ngc-pytorch/release-notes-index\.html$"), "ngc-index"),
]


def kind_of(path):
    for rx, kind in KINDS:
        if rx.match(path):
            return kind
    return None


class Snapshot:
    """One snapshot file: its path, text, source and where its lines are cited."""

    def __init__(self, path, text, source, shown):
        self.path, self.text, self.shown = path, text, shown
        self.repo, self.commit, self.date, self.first = source

    def cite(self, line):
        """repo@commit:path:line (date) in the upstream file; an excerpt's lines are shifted to the upstream
        file's, a trimmed file (kept keys only) is cited without a line."""
        rel = self.path.split("/", 1)[1]
        if self.first is None:
            return f"{self.repo}@{self.commit[:12]}:{rel} ({self.date}; trimmed)"
        return f"{self.repo}@{self.commit[:12]}:{rel}:{line + self.first - 1} ({self.date})"

    def where(self, line):
        return f"{self.shown}:{line}"


def decode(data, shown):
    if len(data) > MAX_FILE:
        raise BadInput(f"{shown}:1: larger than {MAX_FILE} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BadInput(f"{shown}:{line}: not UTF-8")
    m = CONTROL.search(text)
    if m:
        raise BadInput(f"{shown}:{text.count(chr(10), 0, m.start()) + 1}: control character")
    return text


def read_index(text, shown):
    """SNAPSHOTS: [(path, repo, commit, date)], each field checked."""
    rows, seen = [], set()
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.rstrip("\r").split("\t")
        if len(f) not in (4, 5):
            raise BadInput(f"{shown}:{n}: want 4 or 5 tab-separated fields (path, repository, commit, date"
                           f"[, first line]), got {len(f)}")
        path, repo, commit, date = f[:4]
        first = f[4] if len(f) == 5 else "1"
        if first == "trimmed":
            first = None
        elif re.fullmatch(r"[1-9][0-9]{0,6}", first):
            first = int(first)
        else:
            raise BadInput(f"{shown}:{n}: bad first line {first!r} (want a line number or trimmed)")
        if not re.fullmatch(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*", path) or ".." in path.split("/"):
            raise BadInput(f"{shown}:{n}: bad path {path!r}")
        if kind_of(path) is None:
            raise BadInput(f"{shown}:{n}: unknown snapshot file {path!r} (see --help for the files it reads)")
        if path in seen:
            raise BadInput(f"{shown}:{n}: {path} listed twice")
        seen.add(path)
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
            raise BadInput(f"{shown}:{n}: bad repository {repo!r} (want owner/name)")
        if not re.fullmatch(r"[0-9a-f]{40}", commit):
            raise BadInput(f"{shown}:{n}: bad commit {commit!r} (want 40 hex digits)")
        if date != "-" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
            raise BadInput(f"{shown}:{n}: bad date {date!r} (want YYYY-MM-DD or -)")
        rows.append((path, (repo, commit, date, first)))
    if not rows:
        raise BadInput(f"{shown}:1: no snapshot files listed")
    if len(rows) > MAX_FILES:
        raise BadInput(f"{shown}:1: more than {MAX_FILES} snapshot files")
    return rows


def load_dir(directory):
    index = os.path.join(directory, "SNAPSHOTS")
    if not os.path.isfile(index):
        raise BadInput(f"--snapshots: {directory} has no SNAPSHOTS index")
    snaps = []
    with open(index, "rb") as f:
        rows = read_index(decode(f.read(MAX_FILE + 1), index), index)
    for path, source in rows:
        full = os.path.join(directory, path)
        if os.path.islink(full) or not os.path.isfile(full):
            raise BadInput(f"{index}: {path} is listed but not a regular file")
        with open(full, "rb") as f:
            snaps.append(Snapshot(path, decode(f.read(MAX_FILE + 1), full), source, full))
    return snaps


def fetch(url, timeout):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            data = r.read(MAX_FILE + 1)
    except urllib.error.HTTPError as e:
        raise FetchFailed(f"{url}: HTTP {e.code}")
    except (urllib.error.URLError, OSError) as e:
        raise FetchFailed(f"{url}: {getattr(e, 'reason', e)}")
    return data


def load_url(base, timeout):
    u = urllib.parse.urlsplit(base)
    if u.scheme not in ("http", "https") or not u.netloc:
        raise BadInput(f"--base-url: want an http:// or https:// URL, got {base!r}")
    base = base.rstrip("/") + "/"
    index = base + "SNAPSHOTS"
    rows = read_index(decode(fetch(index, timeout), index), index)
    return [Snapshot(p, decode(fetch(base + p, timeout), base + p), source, base + p) for p, source in rows]


# ---------------------------------------------------------------------------------------------------------
# Readers of each kind: what upstream names, with the line it is named on.

DRIVER_ENTRY = re.compile(
    r"`(" + DRIVER + r") <https://docs\.nvidia\.com/datacenter/tesla/tesla-release-notes-([0-9-]+)/index\.html>`_"
    r"\s*(\(\*\*[RD]\*\*(?:, \*\*[RD]\*\*)?\))?\s*$"
)


def read_matrix(s):
    """Driver rows of the component matrix: (version, line, linked_to, marks). A row counts as NVIDIA's record of
    a data-center release only when its link goes to that release's own notes."""
    if "operator-component-matrix" not in s.text:
        raise BadInput(f"{s.where(1)}: no GPU Operator component matrix (operator-component-matrix) in it")
    out = []
    for n, line in enumerate(s.text.split("\n"), 1):
        if "tesla-release-notes-" not in line:
            continue
        m = DRIVER_ENTRY.search(line)
        if not m:
            raise BadInput(f"{s.where(n)}: unreadable driver entry in the component matrix")
        out.append((m.group(1), n, m.group(2).replace("-", "."), m.group(3) or ""))
    if not out:
        raise BadInput(f"{s.where(1)}: the component matrix lists no driver")
    return out


def read_operator_notes(s):
    """Drivers the release notes name in prose ("NVIDIA GPU Driver X", "Added X, Y ... to the supported driver
    versions") and toolkit versions ("NVIDIA Container Toolkit vX")."""
    drivers, toolkits = [], []
    for n, line in enumerate(s.text.split("\n"), 1):
        if re.search(r"NVIDIA GPU Driver " + DRIVER + r"\b", line) or "supported driver versions" in line:
            drivers += [(v, n) for v in re.findall(r"\b(" + DRIVER + r")\b", line)]
        toolkits += [(v, n) for v in re.findall(r"NVIDIA Container Toolkit v?(\d+\.\d+\.\d+)\b", line)]
    return drivers, toolkits


def read_toolkit_notes(s):
    out = [(m.group(1), n) for n, line in enumerate(s.text.split("\n"), 1)
           for m in [re.match(r"^## NVIDIA Container Toolkit (\d+\.\d+\.\d+)\s*$", line)] if m]
    if not out:
        raise BadInput(f"{s.where(1)}: no '## NVIDIA Container Toolkit X.Y.Z' heading")
    return out


def read_tags(s, release):
    """Release tags (release: a regex with one group, the version); other well-formed tags are skipped."""
    out = []
    for n, line in enumerate(s.text.split("\n"), 1):
        tag = line.rstrip("\r")
        if not tag:
            continue
        if not re.fullmatch(r"[A-Za-z0-9._+/-]{1,128}", tag):
            raise BadInput(f"{s.where(n)}: not a git tag name: {tag[:40]!r}")
        m = re.fullmatch(release, tag)
        if m:
            out.append((m.group(1), n))
    return out


def read_redist(s, product):
    want = re.match(r".*/redistrib_(.*)\.json$", s.path).group(1)
    try:
        doc = json.loads(s.text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{s.where(e.lineno)}: not JSON ({e.msg}, column {e.colno})")

    def line_of(key):
        for n, line in enumerate(s.text.split("\n"), 1):
            if f'"{key}"' in line:
                return n
        return 1

    if not isinstance(doc, dict):
        raise BadInput(f"{s.where(1)}: not a redistributable manifest (want a JSON object)")
    label = doc.get("release_label")
    if not isinstance(label, str) or label != want:
        raise BadInput(f"{s.where(line_of('release_label'))}: release_label {label!r} is not the file's {want}")
    if doc.get("release_product") != product:
        raise BadInput(f"{s.where(line_of('release_product'))}: release_product is not {product!r}")
    date = doc.get("release_date")
    if not isinstance(date, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        raise BadInput(f"{s.where(line_of('release_date'))}: bad release_date")
    if product == "cudnn":
        c = doc.get("cudnn")
        if not isinstance(c, dict) or not isinstance(c.get("version"), str) or not re.fullmatch(VERSION, c["version"]):
            raise BadInput(f"{s.where(line_of('cudnn'))}: no cudnn.version")
        variants = c.get("cuda_variant", [])
        if not isinstance(variants, list) or not all(isinstance(x, str) for x in variants):
            raise BadInput(f"{s.where(line_of('cuda_variant'))}: cuda_variant is not a list of strings")
        return {"label": label, "date": date, "version": c["version"], "variants": variants,
                "line": line_of("version")}
    return {"label": label, "date": date, "line": line_of("release_label")}


def read_ngc_index(s):
    return sorted({(m.group(1) + "." + m.group(2), n) for n, line in enumerate(s.text.split("\n"), 1)
                   for m in re.finditer(r"\brel-(\d{2})-(\d{2})\b", line)})


# ---------------------------------------------------------------------------------------------------------
# The embedded data.


def read_embedded(root):
    emb = {"drivers": {}, "stack_drivers": {}, "cuda": set(), "cuda_minors": {}, "stack_cuda": set(),
           "cudnn": set(), "nccl": set(), "toolkit": set(), "ngc": set()}
    with open(os.path.join(root, "tools", "data", "nvidia-driver-releases.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            v, kind = line.split("\t")[:2]
            emb["drivers"][v] = kind
    with open(os.path.join(root, "manifests", "compat.yaml")) as f:
        compat = f.read()
    emb["cuda"].update(re.findall(r'\{cuda: "(\d+\.\d+\.\d+)", driver:', compat))
    for minor, branch in re.findall(r'\{cuda: "(\d+\.\d+)", branch: (\d+)', compat):
        emb["cuda_minors"][minor] = branch
    for lib, v in re.findall(r"\{library: (nccl|cudnn), version: \"(" + VERSION + r")\"", compat):
        emb[lib].add(v)
    emb["toolkit"].update(re.findall(r'fixed_in: "(\d+\.\d+\.\d+)"', compat))
    emb["ngc"].update(re.findall(r"nvcr\.io/nvidia/pytorch:(\d{2}\.\d{2})-py3", compat))
    emb["cudnn"].update(re.findall(r'^    cudnn: "(' + VERSION + r')"', compat, re.M))
    emb["nccl"].update(re.findall(r'^    nccl: "(' + VERSION + r')"', compat, re.M))
    stacks = {}
    sdir = os.path.join(root, "manifests", "stacks")
    for name in sorted(os.listdir(sdir)):
        if name.endswith(".yaml"):
            with open(os.path.join(sdir, name)) as f:
                stacks[name[: -len(".yaml")]] = read_stack(f.read())
    for name in stacks:
        s = resolve(stacks, name)
        if s.get("legacy") == "true":
            continue
        d = s.get("driver.version")
        if d and re.fullmatch(DRIVER, d):
            emb["stack_drivers"].setdefault(d.split(".")[0], set()).add(d)
        for key, what in (("cuda.version", "stack_cuda"), ("cudnn.version", "cudnn"), ("nccl.version", "nccl"),
                          ("container_toolkit.version", "toolkit")):
            if s.get(key) and re.fullmatch(VERSION, s[key]):
                emb[what].add(s[key])
        m = re.fullmatch(r"nvcr\.io/nvidia/pytorch:(\d{2}\.\d{2})-py3", s.get("image.ref", ""))
        if m:
            emb["ngc"].add(m.group(1))
    emb["cuda"].update(emb["stack_cuda"])
    return emb


def read_stack(text):
    """The few scalars the check needs: top-level `extends`/`legacy` and `section.key` one level down."""
    out, section = {}, None
    for line in text.split("\n"):
        line = re.sub(r"\s+#.*$", "", line.rstrip())
        if not line or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^([a-z_]+):\s*(.*)$", line)
        if m:
            section = m.group(1)
            if m.group(2):
                out[section] = m.group(2).strip("\"'")
            continue
        m = re.match(r"^  ([a-z_]+):\s*(\S.*)$", line)
        if m and section:
            out[f"{section}.{m.group(1)}"] = m.group(2).strip("\"'")
    return out


def resolve(stacks, name, depth=0):
    s = dict(stacks[name])
    parent = s.get("extends")
    if parent in stacks and depth < 16:
        merged = resolve(stacks, parent, depth + 1)
        merged.pop("legacy", None)
        merged.update(s)
        return merged
    return s


# ---------------------------------------------------------------------------------------------------------
# The comparison.


def entry(component, version, status, evidence, note):
    return {"component": component, "version": version, "status": status, "evidence": evidence, "note": note}


def compare(snaps, emb):
    found = []
    by_kind = {}
    for s in snaps:
        by_kind.setdefault(kind_of(s.path), []).append(s)

    # Drivers. NVIDIA's record of a data-center release: a component matrix row linked to its own notes.
    confirmed, unconfirmed = {}, {}
    for s in by_kind.get("gpu-operator-matrix", []):
        for v, n, linked, marks in read_matrix(s):
            if linked == v:
                confirmed.setdefault(v, (s.cite(n), marks))
            else:
                unconfirmed.setdefault(v, (s.cite(n), f"its matrix row links to {linked}'s release notes"))
    toolkit_named = []
    for s in by_kind.get("gpu-operator-notes", []):
        drivers, toolkits = read_operator_notes(s)
        for v, n in drivers:
            if v not in confirmed:
                unconfirmed.setdefault(v, (s.cite(n), "named only in the release notes' prose, without its own matrix row"))
        toolkit_named += [(v, s.cite(n)) for v, n in toolkits]
    tags = {}
    for s in by_kind.get("ogkm-tags", []):
        for v, n in read_tags(s, r"(" + DRIVER + r")"):
            tags.setdefault(v, s.cite(n))
    known = emb["drivers"]
    newest_known = {}
    for v in known:
        b = v.split(".")[0]
        if b not in newest_known or vkey(v) > vkey(newest_known[b]):
            newest_known[b] = v
    for v, (cite, marks) in sorted(confirmed.items(), key=lambda x: vkey(x[0])):
        b = v.split(".")[0]
        note = "data-center (component matrix" + (", " + marks.strip("()").replace("*", "") if marks else "") + ")"
        if v not in known:
            found.append(entry(f"driver R{b}", v, "new", cite, note + "; not in the driver releases table"))
        elif known[v] != "data-center":
            found.append(entry(f"driver R{b}", v, "new", cite, note + f"; the releases table calls it {known[v]}"))
    for v, (cite, why) in sorted(unconfirmed.items(), key=lambda x: vkey(x[0])):
        if v not in known:
            found.append(entry(f"driver R{v.split('.')[0]}", v, "new", cite, "unconfirmed: " + why))
    # Branches below the lowest one a current (not legacy) stack is on are not where a stack would move.
    floor = min((int(b) for b in emb["stack_drivers"]), default=0)
    for v, cite in sorted(tags.items(), key=lambda x: vkey(x[0])):
        b = v.split(".")[0]
        if int(b) >= floor and v not in known and v not in confirmed and v not in unconfirmed:
            found.append(entry(f"driver R{b}", v, "new", cite, "release tag of the open modules; kind not in NVIDIA's data-center record"))
    # Per branch, the newest data-center release NVIDIA's record confirms that no stack pins.
    for b in sorted({v.split(".")[0] for v in confirmed if int(v.split(".")[0]) >= floor}, key=int):
        newest = max((v for v in confirmed if v.split(".")[0] == b), key=vkey)
        pins = emb["stack_drivers"].get(b, set())
        if newest in known and (not pins or vkey(newest) > max(vkey(p) for p in pins)):
            note = ("no shipped stack is on this branch" if not pins
                    else "newest stack pin " + max(pins, key=vkey))
            found.append(entry(f"driver R{b}", newest, "unpinned", confirmed[newest][0], note))

    # CUDA: redistributable manifests.
    cuda = {}
    for s in by_kind.get("cuda-redist", []):
        r = read_redist(s, "cuda")
        cuda[r["label"]] = (s.cite(r["line"]), r["date"])
    pinned = max((vkey(v) for v in emb["stack_cuda"]), default=(0,))
    newest_per_minor = {}
    for v in cuda:
        minor = ".".join(v.split(".")[:2])
        if minor not in newest_per_minor or vkey(v) > vkey(newest_per_minor[minor]):
            newest_per_minor[minor] = v
    for v in sorted(cuda, key=vkey):
        minor = ".".join(v.split(".")[:2])
        cite, date = cuda[v]
        if v not in emb["cuda"] and minor not in emb["cuda_minors"]:
            found.append(entry("CUDA", v, "new", cite, f"released {date}; not in compat.yaml (no cuda_min_driver row, "
                               f"no driver branch for CUDA {minor})"))
        elif newest_per_minor[minor] == v and vkey(v) > pinned:
            branch = emb["cuda_minors"].get(minor)
            found.append(entry("CUDA", v, "unpinned", cite, f"released {date}" +
                               (f"; runs natively from driver branch R{branch}" if branch else "")))

    # cuDNN: redistributable manifests.
    top = max((vkey(v) for v in emb["cudnn"]), default=(0,))
    for s in by_kind.get("cudnn-redist", []):
        r = read_redist(s, "cudnn")
        if vkey(r["version"]) > top:
            found.append(entry("cuDNN", r["version"], "new", s.cite(r["line"]),
                               f"released {r['date']}; builds for CUDA {', '.join(r['variants']) or '?'}"))

    # NCCL: release tags vX.Y.Z-N.
    top = max((vkey(v) for v in emb["nccl"]), default=(0,))
    for s in by_kind.get("nccl-tags", []):
        for v, n in read_tags(s, r"v(\d+\.\d+\.\d+)-\d+"):
            if vkey(v) > top:
                found.append(entry("NCCL", v, "new", s.cite(n), "release tag"))

    # The container toolkit: its release notes' headings and the GPU Operator's notes.
    top = max((vkey(v) for v in emb["toolkit"]), default=(0,))
    seen = set()
    named = [(v, s.cite(n)) for s in by_kind.get("toolkit-notes", []) for v, n in read_toolkit_notes(s)]
    for v, cite in named + toolkit_named:
        if vkey(v) > top and v not in seen:
            seen.add(v)
            found.append(entry("container toolkit", v, "new", cite, "release notes"))

    # NGC PyTorch: the release notes index.
    top = max((vkey(v) for v in emb["ngc"]), default=(0,))
    for s in by_kind.get("ngc-index", []):
        for v, n in read_ngc_index(s):
            if vkey(v) > top:
                found.append(entry("NGC PyTorch", v, "new", s.cite(n), "release notes published"))
    return found


def render_text(snaps, found, emb):
    out = ["Upstream snapshots:"]
    for s in snaps:
        out.append(f"  {s.path}  {s.repo}@{s.commit[:12]} ({s.date})")
    pins = ", ".join(f"R{b} {max(v, key=vkey)}" for b, v in sorted(emb["stack_drivers"].items()))
    out.append(f"Embedded: {len(emb['drivers'])} driver releases; stack drivers {pins}; CUDA up to "
               f"{max(emb['cuda_minors'], key=vkey) if emb['cuda_minors'] else '?'}; cuDNN "
               f"{max(emb['cudnn'], key=vkey)}; NCCL {max(emb['nccl'], key=vkey)}; toolkit "
               f"{max(emb['toolkit'], key=vkey)}; NGC PyTorch {max(emb['ngc'], key=vkey)}")
    if not found:
        out.append("Nothing upstream is newer than the embedded data.")
    for status, title in (("new", "New upstream (unknown to the embedded data):"),
                          ("unpinned", "Known, but no shipped stack pins it:")):
        rows = [e for e in found if e["status"] == status]
        if rows:
            out.append(title)
            for e in rows:
                out.append(f"  {e['component']:<18} {e['version']:<12} {e['note']}")
                out.append(f"  {'':<18} {'':<12} {e['evidence']}")
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--snapshots", metavar="DIR")
    src.add_argument("--base-url", metavar="URL")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--root", default=ROOT, help="gpuprep's source tree (default: this tool's)")
    args = ap.parse_args(argv)
    if not 0 < args.timeout <= 600:
        print("--timeout: want seconds in (0, 600]", file=sys.stderr)
        return 2
    try:
        snaps = load_dir(args.snapshots) if args.snapshots else load_url(args.base_url, args.timeout)
        emb = read_embedded(args.root)
        found = compare(snaps, emb)
    except BadInput as e:
        print(e, file=sys.stderr)
        return 2
    except FetchFailed as e:
        print(f"cannot fetch {e}", file=sys.stderr)
        return 3
    except OSError as e:
        print(f"--root: {e}", file=sys.stderr)
        return 2
    if args.json:
        doc = {"snapshots": [{"path": s.path, "repository": s.repo, "commit": s.commit, "date": s.date}
                             for s in snaps], "found": found}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(snaps, found, emb))
    return 1 if any(e["status"] == "new" for e in found) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
