#!/usr/bin/env bash
# Live Redis suite (issue 7): the redis driver against a real redis-server that the tests start
# themselves (free loopback port, persistence off, throwaway folder, random key prefixes; one test checks
# that the driver writes only under its prefix and that a released lease leaves only its fencing counter). Installs Debian's redis-server when it is missing (apt-get update
# first; only as root or with password-less sudo). Runs mocha with the tally reporter, which appends
# exactly one tally line (suite "redis").
#
# Outside CI, a missing redis-server is SKIPPED loudly and its tests are counted as skipped; in CI
# (CI true or 1, see in_ci) the tests fail instead. LOCKSTEP_REDIS_SERVER may name the executable explicitly.
#
# Runs beside the suite after it (scripts/accounting.sh run_suites): the Redis tests mostly wait on a server, as the SQL suite does while its servers start.
# lockstep-suite: beside-next
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
# shellcheck source=scripts/debian-packages.sh
source scripts/debian-packages.sh
# shellcheck source=scripts/suite-group.sh
source scripts/suite-group.sh
# shellcheck source=scripts/live-servers.sh
source scripts/live-servers.sh
export LOCKSTEP_SUITE=redis
say() { echo "[redis $(date +%T)] $*"; }

if ! have_redis && [ -z "${LOCKSTEP_REDIS_SERVER:-}" ]; then apt_install redis redis-server || say "installing redis-server failed"; fi
if ! have_redis; then
  if in_ci; then
    say "redis-server is not installed; in CI the Redis suite must run, so its tests will fail."
  else
    echo
    echo "!!!!!!!! SKIPPED: redis-server not installed — the Redis live tests did not run (install the Debian package redis-server) !!!!!!!!"
    echo
  fi
fi

in_own_group npx mocha -n import=tsx --require ./test/helpers/privateHome.ts --require ./test/helpers/loadScaling.ts --forbid-only --extension ts --timeout 60000 --slow 5000 \
  --reporter ./scripts/tally-reporter.cjs 'test/live/redis/**/*.test.ts'
