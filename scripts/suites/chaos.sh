#!/usr/bin/env bash
# Chaos suite (issue 15), the short CI version of `npm run chaos`: 16 workers race for 3 plain-lease names on the
# file, SQLite, Redis and git drivers (15 s each) under random SIGKILLs, with Redis restarted and paused mid-run.
# The harness starts its own redis-server (free loopback port, appendonly yes, throwaway folder) and removes only
# what it created. Appends one tally line (suite "chaos"): each driver is one test, failed on any violation.
#
# A missing redis-server is installed from Debian's packages when possible; if it is still missing, the Redis run
# is SKIPPED loudly (counted as skipped) outside CI and fails in CI (in_ci).
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
# shellcheck source=scripts/debian-packages.sh
source scripts/debian-packages.sh
export LOCKSTEP_SUITE=chaos
say() { echo "[chaos $(date +%T)] $*"; }

drivers=file,sqlite,git
if ! command -v redis-server >/dev/null 2>&1; then apt_install chaos redis-server || say "installing redis-server failed"; fi
if command -v redis-server >/dev/null 2>&1; then drivers=file,sqlite,redis,git
elif in_ci; then tally_line chaos-redis 0 1 0 "redis-server missing: in CI the Redis chaos run must run"
else echo; echo "!!!!!!!! SKIPPED: redis-server not installed — the Redis chaos run did not run !!!!!!!!"; echo; tally_line chaos-redis 0 0 1 "redis-server not installed"
fi
exec npx tsx chaos/run.ts --seconds "${LOCKSTEP_CHAOS_SECONDS:-60}" --drivers "$drivers"
