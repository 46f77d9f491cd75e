#!/usr/bin/env bash
# ctest-labels: sim,differential
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# The package closure gpuprep pins, against real apt: for every embedded stack the simulated repositories
# serve, on a bare simulated server of the stack's kind whose apt sources hold the stack's repositories
# (configured exactly as the plan writes them, lists fetched by apt-get update), `gpuprep plan --format json`
# resolves from the host's lists. Its pins (/etc/apt/preferences.d/gpuprep as the plan writes it) are compared
# with `apt-get install -s` for the plan's own install roots:
#   - with the plan's pins in place, apt installs exactly the pinned packages at the pinned versions from the
#     stack's repositories (nothing more, nothing less, nothing else), so the closure is complete and apt
#     accepts every version in it;
#   - without them (apt alone, the same roots), every difference must be one of two principled kinds:
#     (a) packages the stack's repositories do not serve (the kernel headers, dkms, docker.io and their
#         dependencies from the distribution): left to apt, never pinned;
#     (b) a component that packages of the closure need only through a lower bound (">= V"): apt alone takes
#         its candidate (the newest release), gpuprep pins the release the requirer was built with. Each such
#         difference is listed, and asserted to be exactly that (every relation on it a lower bound, apt's
#         version its candidate, gpuprep's satisfying every relation).
#     (c) on a driver branch NVIDIA locks with its version-locking package (R590 and later: nvidia-open
#         depends on nvidia-driver-open without a version), a package reached only through relations without
#         a version: apt alone takes its candidate, because the locking package holds the release through the
#         preferences file it installs, which `apt-get install -s` does not read; gpuprep pins the stack's.
#     Anything else (another package, another version through an exact relation) fails the scenario.
# Usage: bash sim_closure.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

# The stacks, by the server they are for (as sim_stacks_*.sh run them): GPU model and NVSwitches (1), none (0)
# or an HGX Blackwell baseboard (hgx). A new embedded stack fails the scenario until it is listed here.
declare -A KIND=(
  [hopper-r580-cuda13.0]="H100 1" [hopper-r580.173.02-cuda13.0.3]="H100 1" [ubuntu22.04-r535-cuda12.2]="H100 1"
  [blackwell-r580-cuda13.0]="B200 0" [blackwell-r580.173.02-cuda13.0.3]="B200 0"
  [blackwell-r580.173.02-cuda13.0.3-nvlsm]="B200 hgx"
  [hopper-r595.91.07-cuda13.2.2]="H100 1" [blackwell-r595.91.07-cuda13.2.2]="B200 0"
  [blackwell-r595.91.07-cuda13.2.2-nvlsm]="B200 hgx"
  [volta-r580-cuda12.9]="V100 0" [volta-r580.173.02-cuda12.9.1]="V100 0"
)

# closure_py MODE ARGS...: the comparisons (python3, standard library).
closure_py() {
  python3 - "$@" <<'PY'
import json, re, sys

def stanzas(text):
    for block in re.split(r"\n\s*\n", text):
        fields, last = {}, None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and last:
                fields[last] += "\n" + line
            elif ":" in line:
                last, _, v = line.partition(":")
                fields[last] = v.strip()
        if fields:
            yield fields

mode = sys.argv[1]
if mode == "setup":  # plan.json www_dir url_prefix out_dir: the repositories as the plan sets them up
    plan, www, url, out = sys.argv[2:6]
    script, n = ["set -e"], 0
    for step in json.load(open(plan))["steps"]:
        if not step["id"].startswith("repo."):
            continue
        for a in step["actions"]:
            if "fetch" in a:
                if not a["fetch"].startswith(url + "/"):
                    sys.exit("key not served by the simulated server: " + a["fetch"])
                src = www + "/" + a["fetch"][len(url) + 1:]
                dst = "%s/key%d" % (out, n)
                open(dst, "wb").write(open(src, "rb").read())
                script.append("install -D -m 0644 /sim/closure/key%d '%s'" % (n, a["to"]))
                n += 1
            elif "write" in a:
                dst = "%s/file%d" % (out, n)
                open(dst, "w").write(a["contents"])
                script.append("install -D -m %s /sim/closure/file%d '%s'" % (a["mode"], n, a["write"]))
                n += 1
    if n:  # repositories set up: apt's lists of them
        script.append("apt-get -q -o Acquire::GzipIndexes=false update >/dev/null")
    print("\n".join(script))
elif mode == "pins":  # plan.json show.out out_dir: the plan's preferences file, its install line, the stack's roots
    plan, show, out = sys.argv[2:5]
    steps = {s["id"]: s for s in json.load(open(plan))["steps"]}
    prefs = [a for a in steps.get("apt.pin", {"actions": []})["actions"] if a.get("write") == "/etc/apt/preferences.d/gpuprep"]
    if len(prefs) != 1:
        sys.exit("the plan writes no /etc/apt/preferences.d/gpuprep (not resolved from the host's lists?)")
    open(out + "/prefs", "w").write(prefs[0]["contents"])
    argv = [a["run"] for a in steps["apt.install"]["actions"] if "run" in a and "install" in a["run"]][0]
    words = argv[argv.index("--") + 1:]
    # The stack's own packages (`manifest show`: each layer's packages), at the versions the plan resolved
    # for them, and the packages the plan names without a version (the kernel headers, docker.io).
    named = set()
    for line in open(show):
        m = re.match(r"\s+[a-z_]+\.(?:[a-z_]+_)?packages\s+([^#]*)", line)
        if m:
            named.update(m.group(1).split())
    # From R590 on NVIDIA's repository names the driver packages without the branch: the stack's
    # nvidia-open-595 is installed as nvidia-open, beside the branch's version-locking package.
    installed = {w.split("=")[0] for w in words if "=" in w}
    for n in list(named):
        base = re.sub(r"-[0-9]{3}$", "", n)
        if base != n and n not in installed and base in installed:
            named.add(base)
            named.update(p for p in installed if p == "nvidia-driver-pinning-" + n[-3:])
    roots = [w for w in words if "=" not in w or w.split("=")[0] in named]
    open(out + "/roots.apply", "w").write("\n".join(words) + "\n")
    open(out + "/roots", "w").write("\n".join(roots) + "\n")
else:  # compare out_dir package_files...: the verdicts, one line each ("ok ..." / "FAIL ..." / "note ...")
    out, files = sys.argv[2], sys.argv[3:]
    served, depends = set(), {}  # names the stack's repositories serve; (name, version) -> Depends text
    for f in files:
        for s in stanzas(open(f).read()):
            served.add(s["Package"])
            depends[(s["Package"], s["Version"])] = ", ".join(x for x in (s.get("Pre-Depends"), s.get("Depends")) if x)
    pins = {}
    for s in stanzas(open(out + "/prefs").read()):
        m = re.match(r"version\s+(\S+)$", s.get("Pin", ""))
        if m and int(s.get("Pin-Priority", "0")) > 1000:
            for name in s["Package"].split():
                pins[name] = m.group(1)
    def inst(path):
        got = {}
        for line in open(path):
            m = re.match(r"Inst (\S+) (?:\[\S+\] )?\((\S+) ", line)
            if m:
                got[m.group(1)] = m.group(2)
        return got
    pinned, applied, alone = inst(out + "/pinned.sim"), inst(out + "/applied.sim"), inst(out + "/alone.sim")
    cand = {}
    for line in open(out + "/policy"):
        if line[:1] not in (" ", "\t") and line.rstrip().endswith(":"):
            name = line.strip()[:-1]
        elif line.strip().startswith("Candidate:"):
            cand[name] = line.split()[1]
    ok = True
    def say(good, text):
        global ok
        ok = ok and good
        print(("ok " if good else "FAIL ") + text)
    roots = [w for w in open(out + "/roots").read().split() if "=" in w]
    say(bool(pins), "gpuprep pins %d packages for the stack's %d roots" % (len(pins), len(roots)))
    for what, got in (("the stack's roots", pinned), ("apply's install line", applied)):
        from_stack = {n: v for n, v in got.items() if n in served}
        say(from_stack == pins, "%s with gpuprep's pins: apt installs exactly the pinned set from the stack's "
            "repositories" % what + "".join("; %s: pinned %s, apt %s" % (n, pins.get(n, "-"), from_stack.get(n, "-"))
                      for n in sorted(set(pins) | set(from_stack)) if pins.get(n) != from_stack.get(n)))
    added = dict(w.split("=", 1) for w in open(out + "/alone.added").read().split())
    say(all(pins.get(n) == v for n, v in added.items()),
        "apt alone (candidates only) needed %d packages named at the exact version a relation demands; gpuprep "
        "pins each at that version: %s" % (len(added), " ".join("%s=%s%s" % (n, v, "" if pins.get(n) == v else
                                                               " (gpuprep: %s)" % pins.get(n, "not pinned"))
                                                      for n, v in sorted(added.items())) or "none"))
    dist = sorted(n for n in alone if n not in served)
    say(not any(n in pins for n in dist), "apt alone also installs %d packages the stack's repositories do not serve "
        "(left to apt, never pinned): %s" % (len(dist), " ".join(dist)))
    # What apt alone does with the stack's packages, against the pins.
    def relations(chosen):  # name -> [(requirer, op, version)] from the relations of the chosen versions
        rel = {}
        for (n, v) in chosen.items():
            for alt in filter(None, (d.strip() for d in depends.get((n, v), "").split(","))):
                for one in alt.split("|"):
                    m = re.match(r"([a-z0-9.+-]+)(?::\S+)?\s*(?:\(\s*([<>=]+)\s*([^)\s]+)\s*\))?", one.strip())
                    if m:
                        rel.setdefault(m.group(1), []).append((n, m.group(2) or "", m.group(3) or ""))
        return rel
    stack_alone = {n: v for n, v in alone.items() if n in served}
    rel, rel_alone = relations(pins), relations(stack_alone)
    for n in sorted(set(pins) | set(stack_alone)):
        a, p = stack_alone.get(n), pins.get(n)
        if a == p:
            continue
        why = rel.get(n, [])
        # (b) reached only through lower bounds: apt takes its candidate, gpuprep the requirer's own release;
        # or exactly what a package apt took at another version for that reason demands (its own release).
        lower = bool(why) and all(op in (">=", ">>") for _, op, _ in why) and cand.get(n) == a
        follows = [(r, op, v) for r, op, v in rel_alone.get(n, [])
                   if op == "=" and v == a and stack_alone.get(r) != pins.get(r)]
        # (c) reached only through relations without a version, on a driver branch NVIDIA locks with its
        # version-locking package (R590 and later): that package holds the release through the preferences
        # file it installs, which `apt-get install -s` never reads; gpuprep pins the stack's release.
        locked = (bool(why) and all(op == "" for _, op, _ in why) and cand.get(n) == a and
                  any(x.startswith("nvidia-driver-pinning-") for x in pins))
        good = a is not None and p is not None and (lower or locked or bool(follows))
        because = ("apt alone takes %s, its candidate, through a lower bound" % a if lower else
                   "apt alone takes %s, its candidate, through a relation without a version (once installed, "
                   "the version-locking package's preferences hold the stack's release)" % a if locked else
                   "apt alone takes %s: %s" % (a, ", ".join("%s %s, which apt took instead of %s, needs = %s" %
                                                            (r, stack_alone[r], pins.get(r), v) for r, _, v in follows))
                   if follows else "apt alone takes %s" % (a or "nothing"))
        say(good, "%s: gpuprep pins %s (needed by %s); %s" % (
            n, p or "nothing", ", ".join("%s %s %s" % (r, op or "(any)", v) for r, op, v in why) or
            "no package of the closure", because))
    sys.exit(0 if ok else 1)
PY
}

# closure_stack STACK: the comparison for one embedded stack, on the current server (bare of NVIDIA packages).
closure_stack() {
  local stack=$1 site d pkgfiles line
  sim_section "$stack"
  site=$(sim_site_file "$stack")
  d=$SIM_HOST/sim/closure
  rm -rf "$d" && mkdir -p "$d"
  sim_gp "$stack-bare" --manifest "$site" plan --format json
  check_rc "plan" 0 "$stack-bare"
  # The stack's repositories, as the plan sets them up (those another stack of this run set up already
  # are in place: the same addresses, keys and list files).
  closure_py setup "$SIM_DIR/$stack-bare.out" "$SIM_DIR/www" "$SIM_URL" "$d" >"$d/setup.sh" || sim_fail "$stack: setting up its repositories"
  sim_run bash /sim/closure/setup.sh >"$SIM_DIR/$stack-setup.log" 2>&1 || { cat "$SIM_DIR/$stack-setup.log" >&2; sim_fail "$stack: apt-get update"; }
  sim_gp "$stack-plan" --manifest "$site" plan --format json
  check_rc "plan with the stack's repositories in the host's lists" 0 "$stack-plan"
  check_eq "  no blocker" "[]" "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["blockers"]))' "$SIM_DIR/$stack-plan.out")"
  sim_gp "$stack-show" --manifest "$site" manifest show
  check_rc "manifest show" 0 "$stack-show"
  closure_py pins "$SIM_DIR/$stack-plan.out" "$SIM_DIR/$stack-show.out" "$d" || { _sim_failed "$stack: the plan's pins and roots"; return; }
  # One session: apt alone, apt's candidates, then apt with the plan's pins (removed again afterwards).
  cat >"$d/sim.sh" <<'SH'
set -u
s() {  # s ROOTS_FILE NAME: apt-get install -s of the roots in ROOTS_FILE into NAME.sim
  local roots
  mapfile -t roots <"/sim/closure/$1"
  apt-get install -s -q -o Debug::NoLocking=1 -- "${roots[@]}" >"/sim/closure/$2.sim" 2>"/sim/closure/$2.err" ||
    echo "apt-get install -s ($2) failed: $(tail -n 2 "/sim/closure/$2.err")"
}
# apt alone: its resolver takes only candidate versions (the newest release), so an exact relation on an
# older release ("nvidia-driver-580-open : Depends: libnvidia-compute-580 (= 580.95.05-0ubuntu1) but
# 580.178.04-1ubuntu1 is to be installed") stops it. Each package apt names so is added to the roots at the
# version the relation demands, until apt resolves the rest by itself (a few rounds at most).
cp /sim/closure/roots /sim/closure/roots.alone
: >/sim/closure/alone.added
for _ in 1 2 3 4 5 6 7 8; do
  mapfile -t roots </sim/closure/roots.alone
  apt-get install -s -q -o Debug::NoLocking=1 -- "${roots[@]}" >/sim/closure/alone.sim 2>/sim/closure/alone.err && break
  new=$(sed -n 's/.*Depends: \([^ ]*\) (= \([^)]*\)) but .* is to be installed.*/\1=\2/p' /sim/closure/alone.sim |
    sort -u | grep -vxF -f /sim/closure/roots.alone)
  if [ -z "$new" ]; then
    echo "apt-get install -s (apt alone) failed: $(tail -n 2 /sim/closure/alone.err)"
    break
  fi
  echo "$new" | tee -a /sim/closure/alone.added >>/sim/closure/roots.alone
done
# shellcheck disable=SC2046  # one package name per word
apt-cache policy $(grep -o '^Inst [^ ]*' /sim/closure/alone.sim | cut -d' ' -f2) $(awk '/^Package:/ {$1 = ""; print}' /sim/closure/prefs) >/sim/closure/policy 2>/dev/null
install -D -m 0644 /sim/closure/prefs /etc/apt/preferences.d/gpuprep
s roots pinned
s roots.apply applied
rm -f /etc/apt/preferences.d/gpuprep
SH
  while IFS= read -r line; do _sim_failed "$stack: $line"; done < <(sim_run bash /sim/closure/sim.sh 2>&1)
  pkgfiles=("$SIM_DIR/www/cuda/Packages" "$SIM_DIR/www/nvidia-container-toolkit/Packages")
  while IFS= read -r line; do
    case $line in
      ok\ *) echo "  ok: ${line#ok }" ;;
      *) _sim_failed "$stack: ${line#FAIL }" ;;
    esac
  done < <(closure_py compare "$d" "${pkgfiles[@]}" 2>&1)
  cp -r "$d" "$SIM_DIR/$stack.closure"  # for a failure's post-mortem (SIM_KEEP=1)
}

sim_section "the embedded stacks"
SIM_GPU=H100 SIM_NVSWITCH=1 sim_new_host
sim_gp list manifest list
check_rc "manifest list" 0 list
mapfile -t embedded < <(awk 'NR > 1 && NF == 0 {exit} NR > 1 {print $1}' "$SIM_DIR/list.out" | LC_ALL=C sort)
check_eq "every embedded stack has a server kind here" "$(printf '%s\n' "${!KIND[@]}" | LC_ALL=C sort | tr '\n' ' ')" \
  "$(printf '%s\n' "${embedded[@]}" | tr '\n' ' ')"
# One bare server per kind, its stacks one after the other (nothing is installed: apt only simulates).
for kind in "H100 1" "B200 0" "B200 hgx" "V100 0"; do
  read -r gpu nvswitch <<<"$kind"
  if [[ $nvswitch == hgx ]]; then
    sim_section "a bare HGX $gpu server"
    SIM_GPU=$gpu SIM_HGX=1 SIM_NVSWITCH=0 sim_new_host
  elif [[ $kind != "H100 1" ]]; then
    sim_section "a bare $gpu server"
    SIM_GPU=$gpu SIM_NVSWITCH=$nvswitch sim_new_host
  fi
  for stack in "${embedded[@]}"; do
    [[ ${KIND[$stack]:-} == "$kind" ]] && closure_stack "$stack"
  done
done
check_eq "no NVIDIA package was installed" "" "$(sim_inspect dpkg-query -W -f '${db:Status-Status} ${Package}\n' 'nvidia-*' 'cuda-*' 'libnvidia-*' 'libcudnn*' 'libnccl*' 2>/dev/null | grep '^installed ')"

sim_section ""
echo "sim_closure: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_closure
