#!/usr/bin/env bash
# Model suite (issue 15): spin checks model/lockstep.pml exhaustively (safety at the stated bounds, liveness
# under weak fairness), shows that each mutation (no compare-and-swap; an expired holder's heartbeat) yields
# a counterexample, and replays spin's random simulations against src/core/lockRecord.ts step by step. The
# property tests of src/core/lockRecord.ts (fast-check, hundreds of random runs) live here too: too slow for the
# unit suite's 100 ms per test.
# Installs Debian's spin and gcc when missing (only as root or with password-less sudo). Runs mocha with the
# tally reporter, which appends exactly one tally line (suite "model").
#
# Outside CI, a missing spin is SKIPPED loudly and its tests are counted as skipped; in CI (CI true or 1,
# see in_ci) they fail instead. LOCKSTEP_SPIN may name the executable explicitly.
#
# Runs beside the suite after it (scripts/accounting.sh run_suites): spin and the property tests use the CPU while the Sentinel and Cluster tests mostly wait for failovers.
# lockstep-suite: beside-next
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
# shellcheck source=scripts/debian-packages.sh
source scripts/debian-packages.sh
export LOCKSTEP_SUITE=model
say() { echo "[model $(date +%T)] $*"; }

have_spin() { "${LOCKSTEP_SPIN:-spin}" -V >/dev/null 2>&1 && command -v cc >/dev/null 2>&1; }

if ! have_spin && [ -z "${LOCKSTEP_SPIN:-}" ]; then apt_install model spin gcc libc6-dev || say "installing spin failed"; fi
if ! have_spin; then
  if in_ci; then
    say "spin is not installed; in CI the model suite must run, so its tests will fail."
  else
    echo
    echo "!!!!!!!! SKIPPED: spin not installed — the model check did not run (install the Debian package spin) !!!!!!!!"
    echo
  fi
fi

exec npx mocha -n import=tsx --require ./test/helpers/privateHome.ts --forbid-only --extension ts --timeout 300000 --slow 30000 \
  --reporter ./scripts/tally-reporter.cjs 'test/model/**/*.test.ts'
