#!/usr/bin/env bash
# Live etcd suite (issue 28): the etcd driver against a real three-member etcd cluster that the tests start
# themselves from Debian's etcd-server (test/live/etcd/etcdCluster.ts: free loopback client and peer ports, one
# throwaway data folder, every member started, killed, paused and restarted by PID, health waited for with a
# deadline): the driver contract, the container contract (CLI transitions, both guards with real git), the signed
# chain, a leader kill that loses no acknowledged write and no fencing token, and typed errors without a quorum; and
# TLS with a team's own certificate authority on single members started with certificates openssl makes in the test
# (a CA named, none, another; client-certificate auth).
# Installs Debian's etcd-server and etcd-client when etcd is missing (apt-get update first; only as root or with
# password-less sudo). Runs mocha with the tally reporter, which appends exactly one tally line (suite "etcd").
#
# Outside CI, a missing etcd is SKIPPED loudly and its tests are counted as skipped; in CI (CI true or 1, see in_ci)
# the tests fail instead. LOCKSTEP_ETCD_SERVER may name the etcd executable explicitly.
#
# Not marked to run beside the next suite: besides three etcd members (which write their Raft logs to disk) its
# container contract and signed chain run the command line and git as many child processes, so it is busy, not waiting.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
# shellcheck source=scripts/debian-packages.sh
source scripts/debian-packages.sh
# shellcheck source=scripts/suite-group.sh
source scripts/suite-group.sh
export LOCKSTEP_SUITE=etcd
say() { echo "[etcd $(date +%T)] $*"; }

have_etcd() { command -v "${LOCKSTEP_ETCD_SERVER:-etcd}" >/dev/null 2>&1 && command -v etcdctl >/dev/null 2>&1; }
if ! have_etcd && [ -z "${LOCKSTEP_ETCD_SERVER:-}" ]; then apt_install etcd etcd-server etcd-client || say "installing etcd-server and etcd-client failed"; fi
if ! have_etcd; then
  if in_ci; then
    say "etcd (etcd-server) or etcdctl (etcd-client) is not installed; in CI the etcd suite must run, so its tests will fail."
  else
    echo
    echo "!!!!!!!! SKIPPED: etcd not installed — the etcd live tests did not run (install the Debian packages etcd-server and etcd-client) !!!!!!!!"
    echo
  fi
fi

in_own_group npx mocha -n import=tsx --require ./test/helpers/privateHome.ts --require ./test/helpers/loadScaling.ts --forbid-only --extension ts --timeout 60000 --slow 10000 \
  --reporter ./scripts/tally-reporter.cjs 'test/live/etcd/**/*.test.ts'
