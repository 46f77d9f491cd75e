#!/usr/bin/env bash
# ctest-labels: lint
# The unity build joins up to 8 files of one folder into one translation unit (CMakeLists.txt:
# gp_unity_groups), so two files of a folder that each define a file-private name (an anonymous-namespace
# function, a static constant) compile today only while the batches keep them apart: adding a file can move
# them into one batch and break the build in files nobody touched. This check compiles the worst batch there
# can be: per folder of src/ with more than 8 files (a smaller folder is one batch in every build already),
# one generated translation unit that includes every .cc of the folder, with the flags the build uses
# (compile_commands.json), syntax only. It first proves it can fail: two planted files that repeat a private
# name must be refused.
# Usage: unity_folders.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
src=${2:?source dir}
build=${3:?build dir}
[[ -f $build/compile_commands.json ]] || { echo "unity_folders: $build/compile_commands.json missing"; exit 1; }
python3 - "$src" "$build" <<'PY'
import json, os, shlex, subprocess, sys, tempfile, time

src, build = sys.argv[1], sys.argv[2]
entries = json.load(open(os.path.join(build, "compile_commands.json")))
# The flags of gpuprep_core's own objects: defines, include paths, warnings as errors, the standard.
core = next(e for e in entries if "gpuprep_core.dir" in e.get("command", "") + e.get("output", ""))
argv = shlex.split(core["command"]) if "command" in core else list(core["arguments"])
flags, skip = [], False
for a in argv[1:]:
    if skip:
        skip = False
        continue
    if a in ("-o", "-c", "-MF", "-MT", "-MQ"):
        skip = True
        continue
    if a in ("-MD", "-MMD") or a.endswith((".cxx", ".cc", ".cpp")):
        continue
    flags.append(a)
compiler = argv[0]
work = tempfile.mkdtemp(prefix="gpuprep-unity-")


def compile_folder(name, files):
    tu = os.path.join(work, name.replace("/", "_") + ".cc")
    with open(tu, "w") as f:
        for p in sorted(files):
            f.write('#include "%s"\n' % os.path.abspath(p))
    r = subprocess.run([compiler, *flags, "-fsyntax-only", tu], cwd=core.get("directory", build),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


# The check can fail: a planted pair that repeats a file-private name.
planted = os.path.join(work, "planted")
os.makedirs(planted)
for n in ("a", "b"):
    with open(os.path.join(planted, n + ".cc"), "w") as f:
        f.write("namespace {\nint Basename() { return 1; }\n}  // namespace\nint Use_%s() { return Basename(); }\n" % n)
rc, out = compile_folder("planted", [os.path.join(planted, n + ".cc") for n in ("a", "b")])
if rc == 0 or "redefinition" not in out:
    print("FAIL: a planted repeat of a file-private name compiled; the check cannot fail")
    sys.exit(1)
print("ok   a planted repeat is refused (redefinition of Basename)")

failed = 0
start = time.time()
folders = 0
for root, dirs, names in sorted(os.walk(os.path.join(src, "src"))):
    dirs.sort()
    ccs = [os.path.join(root, n) for n in names if n.endswith(".cc")]
    rel = os.path.relpath(root, src)
    if len(ccs) <= 8:  # the unity batch size: such a folder compiles as one unit in every build
        continue
    folders += 1
    rc, out = compile_folder(rel, ccs)
    if rc != 0:
        failed += 1
        print("FAIL %s: its %d files do not compile as one unit:" % (rel, len(ccs)))
        for line in out.splitlines():
            if "error:" in line:
                print("     " + line.replace(src + "/", ""))
    else:
        print("ok   %s (%d files)" % (rel, len(ccs)))
print("unity_folders: %d folders, %d failed, %.0f s" % (folders, failed, time.time() - start))
subprocess.run(["rm", "-rf", work])
sys.exit(1 if failed else 0)
PY
