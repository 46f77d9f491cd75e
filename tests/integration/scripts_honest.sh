#!/usr/bin/env bash
# ctest-labels: fixtures
# The simulated-server scenarios cannot pass over a command that does not exist (tests/sim/lib.sh): a
# helper called at the top level, inside a function, in a condition, inside $(...) or as a check's command,
# and status 127 from another program (a command missing inside the simulated server), each ends the script
# at once with exit 1 and a FAIL line naming it; a script that calls only what exists runs to its end. And
# launch_e2e.sh runs its refusals where no docker CLI is installed.
# Needs no root: lib.sh is sourced without starting a simulated server.
# Usage: bash scripts_honest.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
lib=${2:?source dir}/tests/sim/lib.sh
GPUPREP=${1:-}
fails=0

run() {  # run BODY: a script that sources lib.sh, runs BODY, then prints "reached the end"
  bash -c "set -uo pipefail; source '$lib'; $1
echo reached the end" 2>&1
}
expect_fail() {  # expect_fail NAME COMMAND BODY: BODY stops the script with exit 1, naming COMMAND
  local out rc
  out=$(run "$3")
  rc=$?
  if [[ $rc == 1 && $out != *"reached the end"* && $out == *"FAIL: $2"*"command not found"* ]]; then
    echo "ok   $1"
  else
    echo "FAIL $1: exit $rc, output:"
    sed 's/^/     /' <<<"$out"
    fails=$((fails + 1))
  fi
}

expect_fail "a removed helper at the top level" sim_need_verbs 'sim_need_verbs apply verify plan'
expect_fail "inside a function" sim_gone 'f() { sim_gone; echo "after it"; }; f'
expect_fail "in a condition" sim_gone 'if sim_gone; then echo then; else echo else; fi'
expect_fail "inside \$(...)" sim_gone 'x=$(sim_gone); echo "x=$x"'
expect_fail "as a check's command" sim_gone 'check "a check" sim_gone'
expect_fail "status 127 from another program" bash 'bash -c "exit 127"'

out=$(run 'check "an existing command" true; f() { false; }; f; if false; then :; fi; x=$(echo hi); check_eq "a value" hi "$x"')
rc=$?
if [[ $rc == 0 && $out == *"reached the end"* ]]; then echo "ok   a script calling only what exists runs to its end"; else
  echo "FAIL a script calling only what exists: exit $rc, output:"
  sed 's/^/     /' <<<"$out"
  fails=$((fails + 1))
fi

# launch_e2e.sh without the docker CLI: its refusals (which need none) still run, and pass; only the docker CLI
# part is reported skipped (exit 77).
if [[ -x $GPUPREP ]]; then
  nodocker=$(mktemp -d /tmp/gpuprep-nodocker.XXXXXX)
  for t in bash sh python3 mktemp rm grep cat seq sleep kill; do ln -s "$(command -v "$t")" "$nodocker/$t"; done
  out=$(PATH=$nodocker bash "${2}/tests/integration/launch_e2e.sh" "$(readlink -f "$GPUPREP")" "$2" 2>&1)
  rc=$?
  rm -rf "$nodocker"
  if [[ $rc == 77 && $out == *"ok   a GPU the host lacks"* && $out == *"ok   an image reference starting with '-' is refused"* &&
        $out != *FAIL* ]]; then
    echo "ok   launch_e2e.sh runs its refusals without the docker CLI and reports the rest skipped"
  else
    echo "FAIL launch_e2e.sh without the docker CLI: exit $rc, output:"
    sed 's/^/     /' <<<"$out"
    fails=$((fails + 1))
  fi
fi

((fails == 0)) && echo "scripts_honest: all checks passed" || echo "scripts_honest: $fails check(s) failed"
exit $((fails > 0))
