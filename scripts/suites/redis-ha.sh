#!/usr/bin/env bash
# Live Redis Sentinel and Cluster suite (issue 17): the redis driver on replicated deployments that the
# tests start themselves from Debian's packages — Sentinel (1 master, 2 replicas, 3 sentinels) and a
# Cluster (3 masters, 3 replicas, `redis-cli --cluster create`) — every process on its own free loopback
# port, stopped by PID. Installs redis-server, redis-sentinel and redis-tools when missing. Runs mocha
# with the tally reporter (suite "redis-ha"). Outside CI a missing package is SKIPPED loudly; in CI the
# tests fail instead.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
# shellcheck source=scripts/debian-packages.sh
source scripts/debian-packages.sh
# shellcheck source=scripts/suite-group.sh
source scripts/suite-group.sh
export LOCKSTEP_SUITE=redis-ha

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install redis-ha "${missing[@]}" || echo "[redis-ha] installing ${missing[*]} failed"
fi
if ! command -v redis-sentinel >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  if in_ci; then
    echo "[redis-ha] redis-sentinel or redis-cli is not installed; in CI the suite must run, so its tests will fail."
  else
    echo
    echo "!!!!!!!! SKIPPED: redis-sentinel / redis-cli not installed — the Redis Sentinel and Cluster tests did not run !!!!!!!!"
    echo
  fi
fi

in_own_group npx mocha -n import=tsx --require ./test/helpers/privateHome.ts --require ./test/helpers/loadScaling.ts --forbid-only --extension ts --timeout 60000 --slow 10000 \
  --reporter ./scripts/tally-reporter.cjs 'test/live/redis-ha/**/*.test.ts'
