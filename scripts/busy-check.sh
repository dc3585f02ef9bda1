#!/usr/bin/env bash
# The busy-machine proof (issue 27): a test's verdict must not depend on how busy the machine is. Starts one busy
# loop per core (nproc), then runs the unit and integration suites beside them, as the test command runs them (the
# same mocha configurations, the slowdown factor measured once with the loops already running and exported, every
# runner under its time limit), and ends with the usual `N passed, N failed, N skipped`. Exits non-zero exactly when
# a suite failed. The loops are stopped by their own PIDs on exit, however it ends.
#
#   bash scripts/busy-check.sh                         the unit and the integration suites (the integration suite
#                                                      takes about 20 min on an idle 2-core machine; longer here)
#   bash scripts/busy-check.sh unit                    the unit suite only
#   bash scripts/busy-check.sh unit FILE…              the unit suite, then the integration suite on FILEs only
#   bash scripts/busy-check.sh FILE…                   the integration suite on FILEs only
#
# LOCKSTEP_BUSY_LOOPS (default nproc) sets the number of loops. Needs `npm run build` first (integration tests run
# the bundled CLI).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh

unit=0; integration=0; files=()
if [ $# -eq 0 ]; then unit=1; integration=1; fi
for arg in "$@"; do
  case "$arg" in
    unit) unit=1 ;;
    integration) integration=1 ;;
    *) [ -f "$arg" ] || { echo "busy-check: no such test file: $arg" >&2; exit 2; }; integration=1; files+=("$arg") ;;
  esac
done

loops=()
stop_loops() {
  local pid
  for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${loops[@]}"; do wait "$pid" 2>/dev/null; done
  loops=()
}
trap stop_loops EXIT
trap 'exit 130' INT TERM
n=${LOCKSTEP_BUSY_LOOPS:-$(nproc)}
for _ in $(seq "$n"); do
  ( while :; do :; done ) &
  loops+=($!)
done
echo "[busy-check] $n busy loop(s) running (PIDs ${loops[*]}); load now: $(cut -d' ' -f1-3 /proc/loadavg)"

export LOCKSTEP_TALLY="$ROOT/test-artifacts/busy-check.tally.jsonl"
mkdir -p test-artifacts && : > "$LOCKSTEP_TALLY"
LOCKSTEP_TEST_SLOWDOWN=$(npx tsx test/helpers/calibration.ts) || LOCKSTEP_TEST_SLOWDOWN=
export LOCKSTEP_TEST_SLOWDOWN

if [ "$unit" = 1 ]; then
  echo; echo "=== busy: unit ($(date +%T))"
  run_reported unit npx mocha --config .mocharc.unit.json
fi
if [ "$integration" = 1 ]; then
  echo; echo "=== busy: integration${files[*]:+ (${files[*]})} ($(date +%T))"
  run_reported integration node scripts/mocha-files.mjs --config .mocharc.integration.json --durations test/integration/durations.json "${files[@]}"
fi
echo "[busy-check] load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
tally_summary
