#!/usr/bin/env bash
# ctest-labels: differential
# The committed saved-tensor counts (tests/size/vision_saved.tsv) are what PyTorch counts today: the counting
# script (tests/differential/saved_tensors.py) runs again for ResNet-18, at both resolutions and batches, in
# fp32 and under CPU autocast, and each row must equal the committed one byte for byte. The unit tests hold
# gpuprep's layer tables against the whole committed file (tests/size/vision_test.cc).
# Usage: differential_saved_tensors.sh <gpuprep-binary> <source-dir> <build-dir>. Exit 77 without PyTorch.
set -euo pipefail
SRC=$2
py=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import torch, torchvision' 2>/dev/null; then
    py=$candidate
    break
  fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with torch and torchvision (packaging/install-deps.sh installs them)"; exit 77; }
work=$(mktemp -d /tmp/gpuprep-differential-saved.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$py" "$SRC/tests/differential/saved_tensors.py" --models resnet-18 >"$work/now.tsv"
committed="$SRC/tests/size/vision_saved.tsv"
head -1 "$work/now.tsv"
if [ "$(head -1 "$work/now.tsv")" != "$(head -1 "$committed")" ]; then
  echo "SKIP: the committed counts were made with $(head -1 "$committed" | cut -c3-)"
  exit 77
fi
fail=0
while IFS= read -r row; do
  if ! grep -qxF -- "$row" "$committed"; then
    echo "FAIL: PyTorch now counts: $row" >&2
    grep -F -- "$(cut -f1-4 <<<"$row")" "$committed" | sed 's/^/      committed:    /' >&2 || true
    fail=1
  fi
done < <(grep -v '^#' "$work/now.tsv")
[ "$(grep -vc '^#' "$work/now.tsv")" -eq 4 ] || { echo "FAIL: expected 4 rows" >&2; fail=1; }
((fail == 0)) && echo "PASS: 4 rows as committed"
exit $fail
