#!/usr/bin/env bash
# Every test Lockstep has, with all of its own set-up, ending with one line:
# `N passed, N failed, N skipped` summed over every runner of every suite it ran (scripts/accounting.sh decides
# what counts: a runner that does not report, a runner that ran zero tests, or a line that cannot be read is a
# failure). The exit status is non-zero exactly when that line says a test failed.
# LOCKSTEP_SUITES_DIR (default scripts/suites) names the folder of extra suite scripts.
#
# Time: every suite runs under a limit (suite_limit in scripts/accounting.sh) and the whole run under a budget,
# LOCKSTEP_RUN_BUDGET_SECONDS (default 4800: 80 minutes, under CI's 90; the run aims at 40, which is measured, not enforced): a suite that hangs fails by name at its limit, a suite the
# budget no longer reaches fails as not run, and the run ends within the budget either way. The machine's slowdown
# factor is measured once at the start (test/helpers/calibration.ts) and exported as LOCKSTEP_TEST_SLOWDOWN: every
# real deadline in the tests is scaled by it.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export LOCKSTEP_RUN_DEADLINE=$(( $(date +%s) + ${LOCKSTEP_RUN_BUDGET_SECONDS:-4800} ))
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
export LOCKSTEP_TALLY="$ROOT/test-artifacts/tally.jsonl"
mkdir -p test-artifacts && : > "$LOCKSTEP_TALLY"
step() { echo; echo "=== $* ($(date +%T))"; }

step "set-up"
bash scripts/setup.sh tests || { tally_line set-up 0 1 0 "scripts/setup.sh tests failed"; tally_summary; exit 1; }

# The VS Code hosts (code-server builds native addons: 4-5 minutes a host on two loaded processors) install in the
# background while the build, lint, unit and integration suites run, instead of inside the vscode suite's own time
# limit after them. scripts/vscode-host/setup.sh holds a lock on its cache, so the vscode suite's own call waits for
# this one and then finds the hosts installed (or, if this one failed, tries again and fails by name). Niced: the
# compilers take the processors the tests leave idle (they wait out real leases much of the time).
host_setup_pid=''
if [ -e "${LOCKSTEP_SUITES_DIR:-scripts/suites}/vscode.sh" ]; then
  step "VS Code hosts: installing in the background (log: test-artifacts/vscode-host-setup.log)"
  nice -n 10 bash scripts/vscode-host/setup.sh all < /dev/null > test-artifacts/vscode-host-setup.log 2>&1 &
  host_setup_pid=$!
fi
step "build and type check"
if ! { npm run -s build && npm run -s typecheck; }; then
  tally_line build+typecheck 0 1 0 "npm run build or typecheck failed"
fi

step "lint"
run_reported lint bash scripts/lint.sh

step "calibration"
LOCKSTEP_TEST_SLOWDOWN=$(npx tsx test/helpers/calibration.ts) || LOCKSTEP_TEST_SLOWDOWN=
export LOCKSTEP_TEST_SLOWDOWN

step "suite: unit"
run_reported unit npx mocha --config .mocharc.unit.json
step "suite: integration"
run_reported integration node scripts/mocha-files.mjs --config .mocharc.integration.json --durations test/integration/durations.json
run_suites "${LOCKSTEP_SUITES_DIR:-scripts/suites}"
[ -n "$host_setup_pid" ] && wait "$host_setup_pid" # already ended unless the vscode suite did not run

tally_summary
