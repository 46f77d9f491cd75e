#!/usr/bin/env bash
# ctest-labels: differential
# Image references and sizes against the implementations Docker itself runs: a small Go program
# (tests/differential/oracle/) built here against the distribution's packages of Docker's
# distribution/reference and go-units, fed the same generated and hostile cases as gpuprep
# (tests/differential/docker_cases.py); every answer must agree, or be one of the documented deliberate
# differences, which are listed. Exit 77 (skipped) when Go or those packages are missing.
# Usage: differential_docker.sh <gpuprep-binary> <source-dir> <build-dir>
set -euo pipefail
SRC=$2
BUILD=$(cd "$3" && pwd)
ANSWERS=$BUILD/tests/gpuprep_answers
GOPATH_DIR=/usr/share/gocode   # where Debian's golang-*-dev packages put their sources
[[ -x $ANSWERS ]] || { echo "FAIL: $ANSWERS is not built" >&2; exit 1; }
command -v go >/dev/null || { echo "SKIP: go not found (packaging/install-deps.sh installs golang-go)"; exit 77; }
for pkg in github.com/docker/distribution/reference github.com/docker/go-units; do
  [[ -d $GOPATH_DIR/src/$pkg ]] || { echo "SKIP: $GOPATH_DIR/src/$pkg missing (golang-github-docker-distribution-dev, golang-github-docker-go-units-dev)"; exit 77; }
done
work=$(mktemp -d /tmp/gpuprep-differential-docker.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$BUILD/differential"
# GOPATH mode against the packaged sources, offline; the build cache lives in the build tree.
env GO111MODULE=off GOPATH=$GOPATH_DIR GOFLAGS= GOPROXY=off GOTOOLCHAIN=local GOCACHE="$BUILD/differential/gocache" \
  go build -o "$work/oracle" "$SRC/tests/differential/oracle/oracle.go"
python3 "$SRC/tests/differential/docker_cases.py" gen >"$work/cases"
"$work/oracle" <"$work/cases" >"$work/docker.jsonl"
"$ANSWERS" <"$work/cases" >"$work/gpuprep.jsonl"
python3 "$SRC/tests/differential/docker_cases.py" check "$work/docker.jsonl" "$work/gpuprep.jsonl"
