#!/usr/bin/env python3
"""gpuprep's Xid catalogue: the C++ table in src/util/xid_catalogue.cc.

Input (checked in, with its upstream repository, commit and date in a header):
  tools/data/gpud/xid-catalog.tsv   NVIDIA's Xid catalogue (code, mnemonic, description, immediate and
                                    investigatory resolution) as leptonai/gpud mirrors it in
                                    components/accelerator/nvidia/xid/catalog_generated.go, itself generated
                                    from https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
  tools/data/gpud/xid-nvlink-decode.tsv
                                    the same spreadsheet's NVLink decode of Xid 144-150 (sheet "XID 144-150
                                    Decode": per Xid, NVLink unit, IntrInfo bit pattern before and from R575,
                                    and error status, NVIDIA's resolution, investigation and severity), from the
                                    same file at the same commit (its nvlinkRules)

  python3 tools/xid_catalogue.py generate   rewrite src/util/xid_catalogue.cc
  python3 tools/xid_catalogue.py check      exit 1 (with a diff) when that file is not what generate writes
  python3 tools/xid_catalogue.py refresh --gpud GIT_DIR [--commit REV]
                                            re-extract the TSV from a git clone of github.com/leptonai/gpud, then
                                            generate

The class of each code (hardware, memory, fabric, application, driver, meta, unused) is gpuprep's, not NVIDIA's:
the catalogue has no such column. It is derived by the written rule in `classify` below from the mnemonic,
the description and the two resolutions, plus the one documented exception in CLASS_OVERRIDES.
Only the Python 3 standard library is used; `refresh` also runs git.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TSV = os.path.join(ROOT, "tools", "data", "gpud", "xid-catalog.tsv")
NVLINK_TSV = os.path.join(ROOT, "tools", "data", "gpud", "xid-nvlink-decode.tsv")
OUT = os.path.join(ROOT, "src", "util", "xid_catalogue.cc")
GO_PATH = "components/accelerator/nvidia/xid/catalog_generated.go"
GPUD_URL = "https://github.com/leptonai/gpud"

# Codes whose class the rule cannot read from the catalogue's words, each with NVIDIA's own statement.
CLASS_OVERRIDES = {
    # NVIDIA's Xid documentation (docs.nvidia.com/deploy/xid-errors/): Xid 43 is logged when a user
    # application hits a software-induced fault and must terminate; the GPU stays healthy.
    43: "application",
}

FIRMWARE_WORDS = ("GSP", "FECS", "PMU", "SEC2", "SEC_FAULT", "CTXSW", "GPU_INIT", "VGPU", "KEY_ROTATION")
MEMORY_WORDS = ("ECC", "DRAM", "SRAM", "CONTAINED_ERROR", "SBE", "MEMORY", "RESOURCE_RETIREMENT")
FABRIC_WORDS = ("NVLINK", "C2C", "ALI_TRAINING")
APP_INVESTIGATIONS = ("CHECK_APP/CUDA", "WORKFLOW_XID_13", "WORKFLOW_XID_31")


def classify(code, mnemonic, description, immediate, investigatory):
    """gpuprep's class of an Xid, first rule that matches:
    an exception above; 154 (recovery action changed) is meta; a code NVIDIA lists as "Unused" is unused;
    fabric when the mnemonic names NVLink, C2C or link training; memory when it names ECC, DRAM/SRAM,
    contained/uncontained errors, single-bit errors, memory or resource retirement; application when the
    immediate action is to restart the application and the investigation points at the application or CUDA
    (CHECK_APP/CUDA, NVIDIA's Xid 13 and 31 workflows); driver (driver or firmware) when the mnemonic names a
    firmware engine (GSP, FECS, PMU, SEC2), a context-switch, initialisation, vGPU or key-rotation error, or the
    investigation is software (INVESTIGATE_SW*, UPDATE_SWFW); hardware otherwise."""
    if code in CLASS_OVERRIDES:
        return CLASS_OVERRIDES[code]
    if code == 154:
        return "meta"
    if description.strip() == "Unused":
        return "unused"
    m = mnemonic.upper()
    if any(w in m for w in FABRIC_WORDS):
        return "fabric"
    if any(w in m for w in MEMORY_WORDS):
        return "memory"
    if immediate == "RESTART_APP" and investigatory in APP_INVESTIGATIONS:
        return "application"
    if any(w in m for w in FIRMWARE_WORDS) or investigatory.startswith("INVESTIGATE_SW") or \
            investigatory == "UPDATE_SWFW" or immediate == "UPDATE_SWFW":
        return "driver"
    return "hardware"


def read_tsv(path):
    header, rows = [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                header.append(line)
                continue
            if not line or line.startswith("code\t"):
                continue
            cols = line.split("\t")
            if len(cols) != 5 or not cols[0].isdigit():
                sys.exit(f"{path}:{n}:1: want 5 tab-separated columns starting with a code")
            rows.append((int(cols[0]), cols[1], cols[2], cols[3], cols[4]))
    codes = [r[0] for r in rows]
    if codes != sorted(set(codes)):
        sys.exit(f"{path}: codes must be unique and ascending")
    return header, rows


NVLINK_COLUMNS = "xid\tunit\tintrinfo_v1\tintrinfo_v2\terror_status\tresolution\tinvestigatory\tseverity"
PATTERN = re.compile(r"[01-]{32}|")


def read_nvlink_tsv(path):
    header, rows = [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                header.append(line)
                continue
            if not line or line == NVLINK_COLUMNS:
                continue
            c = line.split("\t")
            if len(c) != 8 or not c[0].isdigit() or not 144 <= int(c[0]) <= 150 or \
                    not re.fullmatch(r"[A-Z0-9_/]+", c[1]) or not PATTERN.fullmatch(c[2]) or \
                    not PATTERN.fullmatch(c[3]) or not re.fullmatch(r"0x[0-9a-f]{8}", c[4]):
                sys.exit(f"{path}:{n}:1: want 8 tab-separated columns: {NVLINK_COLUMNS.replace(chr(9), ', ')}")
            rows.append((int(c[0]), c[1], c[2], c[3], int(c[4], 16), c[5], c[6], c[7]))
    return header, rows


def commit_of(header):
    for h in header:
        m = re.match(r"# commit: ([0-9a-f]{40})", h)
        if m:
            return m.group(1)
    sys.exit(f"{TSV}: no '# commit: <sha>' header line")


def cxx_string(s):
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            sys.exit(f"non-ASCII or control character in {s!r}")
    return '"' + "".join(out) + '"'


CLASS_ENUM = {"hardware": "kHardware", "memory": "kMemory", "fabric": "kFabric", "application": "kApplication",
              "driver": "kDriver", "meta": "kMeta", "unused": "kUnused"}


def render(tsv=TSV, nvlink_tsv=NVLINK_TSV):
    header, rows = read_tsv(tsv)
    commit = commit_of(header)
    nvlink_header, nvlink_rows = read_nvlink_tsv(nvlink_tsv)
    if commit_of(nvlink_header) != commit:
        sys.exit(f"{nvlink_tsv}: extracted at another commit than {tsv}")
    lines = [
        "// GENERATED by tools/xid_catalogue.py from tools/data/gpud/xid-catalog.tsv and xid-nvlink-decode.tsv:",
        "// do not edit; run",
        "// `python3 tools/xid_catalogue.py generate`. NVIDIA's Xid catalogue",
        "// (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html) as github.com/leptonai/gpud",
        f"// mirrors it in {GO_PATH}",
        f"// at commit {commit}; the class is gpuprep's",
        "// (tools/xid_catalogue.py, classify).",
        '#include "util/xid_catalogue.h"',
        "",
        "namespace gp {",
        "",
        f'const char* const kXidCatalogueCommit = "{commit}";',
        "",
        "const std::vector<XidInfo>& XidCatalogue() {",
        "  // clang-format off",
        "  static const std::vector<XidInfo> table = {",
    ]
    for code, mnem, desc, imm, inv in rows:
        cls = classify(code, mnem, desc, imm, inv)
        lines.append(f"      {{{code}, XidClass::{CLASS_ENUM[cls]}, {cxx_string(mnem)}, {cxx_string(desc)}, "
                     f"{cxx_string(imm)}, {cxx_string(inv)}}},")
    lines += ["  };", "  // clang-format on", "  return table;", "}", "",
              "const std::vector<XidNvlinkRule>& XidNvlinkDecode() {",
              "  // clang-format off",
              "  static const std::vector<XidNvlinkRule> table = {"]
    for xid, unit, v1, v2, status, res, inv, sev in nvlink_rows:
        lines.append(f"      {{{xid}, {cxx_string(unit)}, {cxx_string(v1)}, {cxx_string(v2)}, 0x{status:08x}u, "
                     f"{cxx_string(res)}, {cxx_string(inv)}, {cxx_string(sev)}}},")
    lines += ["  };", "  // clang-format on", "  return table;", "}", "", "}  // namespace gp", ""]
    return "\n".join(lines)


def cmd_generate(args):
    text = render(args.tsv, args.nvlink_tsv)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args.out}")


def cmd_check(args):
    want = render(args.tsv, args.nvlink_tsv)
    try:
        with open(args.out, encoding="utf-8") as f:
            have = f.read()
    except OSError as e:
        print(f"cannot read {args.out}: {e}")
        return 1
    if have == want:
        n = len(read_tsv(args.tsv)[1])
        m = len(read_nvlink_tsv(args.nvlink_tsv)[1])
        print(f"{n} Xid codes and {m} NVLink decode rows, {args.out} is up to date")
        return 0
    sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True), args.out, "generated"))
    print(f"\n{args.out} differs from what tools/xid_catalogue.py generates: run it with `generate`")
    return 1


ENTRY = re.compile(r'\{Code: (\d+), Mnemonic: ("(?:[^"\\]|\\.)*"), Description: ("(?:[^"\\]|\\.)*"), '
                   r'ImmediateResolution: ("(?:[^"\\]|\\.)*"), InvestigatoryResolution: ("(?:[^"\\]|\\.)*")\}')


RULE = re.compile(r'\{Xid: (\d+), Unit: ("(?:[^"\\]|\\.)*"), IntrinfoPatternV1: ("(?:[^"\\]|\\.)*"), '
                  r'IntrinfoPatternV2: ("(?:[^"\\]|\\.)*"), ErrorStatus: 0x([0-9a-fA-F]+), '
                  r'Resolution: ("(?:[^"\\]|\\.)*"), Investigatory: ("(?:[^"\\]|\\.)*"), '
                  r'Severity: ("(?:[^"\\]|\\.)*")')


def go_string(lit):
    s = lit[1:-1]
    s = re.sub(r"\\(.)", lambda m: {"n": " ", "t": " ", '"': '"', "\\": "\\"}.get(m.group(1), m.group(1)), s)
    return re.sub(r"\s+", " ", s).strip()


def cmd_refresh(args):
    git = ["git", "-C", args.gpud]
    rev = subprocess.check_output(git + ["rev-parse", args.commit + "^{commit}"], text=True).strip()
    last = subprocess.check_output(git + ["log", "-1", "--format=%H %cs", rev, "--", GO_PATH], text=True).split()
    src = subprocess.check_output(git + ["show", f"{last[0]}:{GO_PATH}"], text=True)
    body = src.split("var catalogEntries", 1)[1].split("\n}\n", 1)[0]
    rows = [(int(m.group(1)),) + tuple(go_string(m.group(i)) for i in range(2, 6)) for m in ENTRY.finditer(body)]
    if not rows:
        sys.exit(f"no catalogue entries found in {GO_PATH}")
    out = [f"# Extract of {GO_PATH} from {GPUD_URL}",
           f"# commit: {last[0]}",
           f"# date: {last[1]}",
           "# gpud generates that file from NVIDIA's Xid catalogue spreadsheet, sheet \"Catalog\"",
           "# (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html). Line breaks inside a field",
           "# are written as one space. Re-extract with: python3 tools/xid_catalogue.py refresh --gpud GIT_DIR",
           "code\tmnemonic\tdescription\timmediate\tinvestigatory"]
    out += ["\t".join([str(r[0])] + list(r[1:])) for r in rows]
    with open(args.tsv, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {args.tsv}: {len(rows)} codes from {last[0]}")
    body = src.split("var nvlinkRules", 1)[1].split("\n}\n", 1)[0] if "var nvlinkRules" in src else ""
    rules = [(m.group(1), go_string(m.group(2)), go_string(m.group(3)), go_string(m.group(4)),
              "0x%08x" % int(m.group(5), 16), go_string(m.group(6)), go_string(m.group(7)), go_string(m.group(8)))
             for m in RULE.finditer(body)]
    out = [f"# Extract of {GO_PATH} (its nvlinkRules) from {GPUD_URL}",
           f"# commit: {last[0]}",
           f"# date: {last[1]}",
           "# gpud generates it from NVIDIA's Xid catalogue spreadsheet, sheet \"XID 144-150 Decode\"",
           "# (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html): per NVLink unit, the IntrInfo",
           "# bit pattern (binary, bit 31 first, \"-\" any) of drivers before R575 (v1) and from R575 (v2), the error",
           "# status, and NVIDIA's resolution, investigation and severity. Only these columns are kept.",
           NVLINK_COLUMNS]
    out += ["\t".join(r) for r in rules]
    with open(args.nvlink_tsv, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {args.nvlink_tsv}: {len(rules)} NVLink decode rows from {last[0]}")
    cmd_generate(args)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--tsv", default=TSV, help="the extract (default: %(default)s)")
    common.add_argument("--nvlink-tsv", default=NVLINK_TSV, help="the NVLink decode extract (default: %(default)s)")
    common.add_argument("--out", default=OUT, help="the generated table (default: %(default)s)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("generate", parents=[common])
    sub.add_parser("check", parents=[common])
    r = sub.add_parser("refresh", parents=[common])
    r.add_argument("--gpud", required=True)
    r.add_argument("--commit", default="HEAD")
    args = ap.parse_args()
    return {"generate": cmd_generate, "check": cmd_check, "refresh": cmd_refresh}[args.cmd](args) or 0


if __name__ == "__main__":
    sys.exit(main())
