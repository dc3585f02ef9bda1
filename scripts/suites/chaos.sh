#!/usr/bin/env bash
# Chaos suite (issue 15), the short CI version of `npm run chaos`: 16 workers race for 3 plain-lease names on the
# file, SQLite, Redis and git drivers (10 s each) under random SIGKILLs, with Redis restarted and paused mid-run and
# git's pre-receive slowed; 5 guarded clones run the container protocol on file, SQLite, Redis and git (15 s each: no
# stranded grant, every killed acquire/heartbeat/release settled by the clone's next command, git pushes past the
# timeout); then
# MariaDB and PostgreSQL (15 s each, `sql.sh chaos`: its own servers) have connections killed from the server side,
# and run the container protocol (15 s each, like every slot here): every container driver is in CI's chaos; then etcd
# (plain leases 15 s, the container protocol 55 s) on a three-member cluster whose leader is killed and members paused.
# The harness starts its own redis-server (free loopback port, appendonly yes, throwaway folder) and removes only
# what it created. Appends one tally line per chaos run (suites chaos-leases, chaos-container, chaos-sql): each driver
# is one test, failed on any violation.
#
# A missing redis-server is installed from Debian's packages when possible; if it is still missing, the Redis run
# is SKIPPED loudly (counted as skipped) outside CI and fails in CI (in_ci).
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
# shellcheck source=scripts/debian-packages.sh
source scripts/debian-packages.sh
# shellcheck source=scripts/suite-group.sh
source scripts/suite-group.sh
export LOCKSTEP_SUITE=chaos
say() { echo "[chaos $(date +%T)] $*"; }

drivers=file,sqlite,git
if ! command -v redis-server >/dev/null 2>&1; then apt_install chaos redis-server || say "installing redis-server failed"; fi
if command -v redis-server >/dev/null 2>&1; then drivers=file,sqlite,redis,git
elif in_ci; then tally_line chaos-redis 0 1 0 "redis-server missing: in CI the Redis chaos run must run"
else echo; echo "!!!!!!!! SKIPPED: redis-server not installed — the Redis chaos run did not run !!!!!!!!"; echo; tally_line chaos-redis 0 0 1 "redis-server not installed"
fi
# Plain leases on file, SQLite, Redis and git (40 s: 10 s each), the container protocol on file, SQLite, Redis and
# git (60 s: 15 s each), plain leases and the container protocol on MariaDB and PostgreSQL (60 s: 15 s each): about
# 3 minutes in all when nothing starves (issue #27: every container driver is worth more than the 2-minute bound). Each run adds its tally line. A starved slot (too few critical sections, or no grant or no landing, on a
# loaded machine) runs on, up to 3 times its length times the slowdown factor (chaos/run.ts), rather than fail as
# "proves too little"; a plain-lease run still under 16 critical sections then fails.
rc=0
LOCKSTEP_SUITE=chaos-leases in_own_group npx tsx chaos/run.ts --seconds "${LOCKSTEP_CHAOS_SECONDS:-40}" --drivers "$drivers" || rc=1
container_drivers=container-file,container-sqlite,container-git; container_seconds=45
# Redis too when its server is here (its absence is already counted above): 15 s more.
[[ $drivers == *redis* ]] && { container_drivers=container-file,container-sqlite,container-redis,container-git; container_seconds=60; }
# --parallel: the container slots run side by side (each mostly waits for a killed lead's 60 s lease to run out; one
# after the other they took about 2.7 minutes of CI, side by side about one); plain-lease slots still run one at a time.
LOCKSTEP_SUITE=chaos-container in_own_group npx tsx chaos/run.ts --seconds "${LOCKSTEP_CHAOS_CONTAINER_SECONDS:-$container_seconds}" --drivers "$container_drivers" --parallel || rc=1
LOCKSTEP_SUITE=chaos-sql in_own_group bash scripts/suites/sql.sh chaos --seconds "${LOCKSTEP_CHAOS_SQL_SECONDS:-60}" --parallel || rc=1
# etcd (issue 28): plain leases and the container protocol, each on a three-member cluster the harness starts, its
# leader SIGKILLed and restarted and its members paused (SIGSTOP/SIGCONT) throughout (the container slot's faults
# start with its clones, after its set-up). 70 s: plain leases 15 s (about 100 critical sections, far above their
# floor of 16), the container protocol 55 s — each of its commands loads the etcd client and a landing runs three of
# them, so a grant takes 10–20 s on a loaded 2-core machine, and 20 s saw 1. Two runs, two tally lines (chaos-etcd,
# chaos-etcd-container). The long run: npm run chaos -- --drivers etcd,container-etcd --minutes N --parallel.
if ! command -v etcd >/dev/null 2>&1; then apt_install chaos etcd-server etcd-client || say "installing etcd-server failed"; fi
if command -v etcd >/dev/null 2>&1; then
  LOCKSTEP_SUITE=chaos-etcd in_own_group npx tsx chaos/run.ts --seconds "${LOCKSTEP_CHAOS_ETCD_SECONDS:-15}" --drivers etcd || rc=1
  LOCKSTEP_SUITE=chaos-etcd-container in_own_group npx tsx chaos/run.ts --seconds "${LOCKSTEP_CHAOS_ETCD_CONTAINER_SECONDS:-55}" --drivers container-etcd || rc=1
elif in_ci; then tally_line chaos-etcd 0 1 0 "etcd missing: in CI the etcd chaos run must run"
else echo; echo "!!!!!!!! SKIPPED: etcd not installed — the etcd chaos run did not run !!!!!!!!"; echo; tally_line chaos-etcd 0 0 1 "etcd not installed"
fi
exit $rc
