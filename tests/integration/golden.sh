#!/usr/bin/env bash
# ctest-labels: fixtures
# The golden set: `plan --format json|sh|text` and `doctor --json` for every fixture host tree under
# tests/fixtures/hosts × every embedded stack, for each test stack of tests/fixtures/golden-cases/ on its
# hosts with its recorded apt lists (tests/golden/_cases/), and `launch --nodes 2` as Slurm and Kubernetes for four
# network shapes (tests/golden/launch), byte for byte against tests/golden/ (exit codes and stderr in each pair's
# .exit file). A change to how the code is organised changes none of these outputs; a change
# that means to change them regenerates the set on purpose, in its own commit that says why:
#   GOLDEN_UPDATE=1 bash tests/integration/golden.sh build/gpuprep . build
# The date is fixed (faketime) so that a stack's end of life does not move the outputs.
# Usage: bash golden.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$(realpath "$1")
SRC=$(realpath "$2")
HOSTS=$SRC/tests/fixtures/hosts
GOLDEN=$SRC/tests/golden
TODAY=2026-12-01
if ! command -v faketime >/dev/null; then
  echo "golden: faketime is missing (packaging/install-deps.sh installs it)" >&2
  exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {  # run FILE -- ARGS...: stdout to FILE, the exit code and stderr appended to the pair's .exit file
  local file=$1 rc
  shift
  faketime -f "@$TODAY 12:00:00" "$GPUPREP" "$@" >"$file" 2>"$out/stderr"
  rc=$?
  {
    echo "== $(basename "$file"): exit $rc"
    sed "s#$SRC#@SRC@#g" "$out/stderr"
  } >>"$exit_file"
}

mapfile -t stacks < <("$GPUPREP" manifest list | awk 'NR > 1 && NF && $1 !~ /:$/ && $1 != "default" {print $1}')
if ((${#stacks[@]} < 2)); then
  echo "golden: manifest list gave ${#stacks[@]} stacks" >&2
  exit 1
fi
pairs=0
for dir in "$HOSTS"/*/; do
  host=$(basename "$dir")
  mkdir -p "$out/$host"
  for stack in "${stacks[@]}"; do
    base=$out/$host/$stack
    exit_file=$base.exit
    : >"$exit_file"
    run "$base.doctor.json" --root "$dir" --manifest "$stack" --json doctor
    run "$base.plan.json" --root "$dir" --manifest "$stack" plan --format json
    run "$base.plan.sh" --root "$dir" --manifest "$stack" plan --format sh
    run "$base.plan.txt" --root "$dir" --manifest "$stack" plan --format text
    # The checkout's own path (the fixture trees under --root) is written as @SRC@: the set holds wherever
    # the repository is cloned.
    sed -i "s#$SRC#@SRC@#g" "$base".*
    pairs=$((pairs + 1))
  done
done

# Test stacks against a recorded apt index (tests/fixtures/golden-cases/NAME/: stack.yaml, the fixture hosts
# in `hosts`, lists/ copied into each host's /var/lib/apt/lists/ in a copy of its tree, so the plan resolves
# from the index as on a host whose lists are fetched): outputs under _cases/NAME/HOST.*.
roots=$(mktemp -d)
trap 'rm -rf "$out" "$roots"' EXIT
for case_dir in "$SRC"/tests/fixtures/golden-cases/*/; do
  case_dir=${case_dir%/}
  [[ -f $case_dir/stack.yaml ]] || continue
  name=$(basename "$case_dir")
  mkdir -p "$out/_cases/$name"
  while read -r host; do
    [[ -n $host ]] || continue
    root=$roots/$name-$host
    cp -a "$HOSTS/$host" "$root"
    mkdir -p "$root/var/lib/apt/lists"
    cp "$case_dir"/lists/* "$root/var/lib/apt/lists/"
    base=$out/_cases/$name/$host
    exit_file=$base.exit
    : >"$exit_file"
    run "$base.doctor.json" --root "$root" --manifest "$case_dir/stack.yaml" --json doctor
    run "$base.plan.json" --root "$root" --manifest "$case_dir/stack.yaml" plan --format json
    run "$base.plan.sh" --root "$root" --manifest "$case_dir/stack.yaml" plan --format sh
    run "$base.plan.txt" --root "$root" --manifest "$case_dir/stack.yaml" plan --format text
    sed -i -e "s#$root#@ROOT@#g" -e "s#$SRC#@SRC@#g" "$base".*
    pairs=$((pairs + 1))
  done <"$case_dir/hosts"
done

# launch for several nodes: the Slurm script and the Kubernetes Job with NCCL's environment, for a node on
# sockets (h100x2-runtime), InfiniBand (h100x2-ib: two ACTIVE NDR ports and one down), RoCE (h100x2-roce: two
# ports with a RoCE v2 IPv4 GID; once more under the stack that pins NCCL 2.18.5, for the GID note) and EFA
# (h100x8-p5-efa: a p5.48xlarge's 32 EFA devices, names in the kernel's rdmapNNs0 pattern). The snapshots are
# the launch tests' h100x2-runtime and h100x8-p5 with a `network` section added.
SNAPS=$SRC/tests/fixtures/snapshots
mkdir -p "$out/launch"
launch_case() {  # launch_case FILE ARGS...: one launch output and its .exit
  local file=$out/launch/$1
  shift
  exit_file=$file.exit
  : >"$exit_file"
  run "$file" "$@"
  sed -i "s#$SRC#@SRC@#g" "$file" "$exit_file"
  pairs=$((pairs + 1))
}
image=nvcr.io/nvidia/pytorch:24.06-py3
for snap in h100x2-runtime h100x2-ib h100x2-roce h100x8-p5-efa; do
  launch_case "$snap.slurm.sbatch" launch --host "$SNAPS/$snap.json" --image "$image" --format slurm \
    --nodes 2 -- python train.py
  launch_case "$snap.k8s.yaml" launch --host "$SNAPS/$snap.json" --image "$image" --format k8s --nodes 2 \
    --master 10.2.0.1:29500 -- python train.py
done
launch_case h100x2-roce.r535.slurm.sbatch --manifest ubuntu22.04-r535-cuda12.2 launch \
  --host "$SNAPS/h100x2-roce.json" --format slurm --nodes 2 -- python train.py
# Both nodes' snapshots (--host once per node; node 1's mlx5_1 is down): NCCL_IB_HCA names only the port both
# have, with a note.
pair=(--host "$SNAPS/h100x2-roce-node0.json" --host "$SNAPS/h100x2-roce-node1.json" --image "$image" --nodes 2)
launch_case h100x2-roce-pair.slurm.sbatch launch "${pair[@]}" --format slurm -- python train.py
launch_case h100x2-roce-pair.k8s.yaml launch "${pair[@]}" --format k8s --master 10.2.0.1:29500 -- python train.py

rm -f "$out/stderr"
if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
  rm -rf "$GOLDEN"
  cp -r "$out" "$GOLDEN"
  echo "golden: wrote $pairs host x stack pairs to tests/golden"
  exit 0
fi
if diff -r -u "$GOLDEN" "$out" >"$out.diff" 2>&1; then
  echo "golden: $pairs host x stack pairs, every output identical"
  rm -f "$out.diff"
  exit 0
fi
echo "golden: outputs differ from tests/golden (first 200 lines of the diff):"
head -n 200 "$out.diff"
echo "golden: if the change is meant, regenerate with GOLDEN_UPDATE=1 in a commit of its own that says why"
rm -f "$out.diff"
exit 1
