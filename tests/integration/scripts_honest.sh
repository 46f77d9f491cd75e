#!/usr/bin/env bash
# ctest-labels: fixtures
# The simulated-server scenarios cannot pass over a command that does not exist (tests/sim/lib.sh): a
# helper called at the top level, inside a function, in a condition, inside $(...) or as a check's command,
# and status 127 from another program (a command missing inside the simulated server), each ends the script
# at once with exit 1 and a FAIL line naming it; a script that calls only what exists runs to its end.
# Needs no root: lib.sh is sourced without starting a simulated server.
# Usage: bash scripts_honest.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
lib=${2:?source dir}/tests/sim/lib.sh
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

((fails == 0)) && echo "scripts_honest: all checks passed" || echo "scripts_honest: $fails check(s) failed"
exit $((fails > 0))
