#!/usr/bin/env bash
# Installs what Lockstep needs on a fresh machine (Node 20 and npm present, nothing else).
# usage: scripts/setup.sh tests|demo   — idempotent; installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-tests}
say() { echo "[setup $(date +%T)] $*"; }
# shellcheck source=scripts/progress.sh
source scripts/progress.sh

apt_need() { # apt_need PKG…: installs the Debian packages that are not installed yet
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "apt-get install ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  with_progress "setup: apt-get update" $sudo apt-get update -qq
  with_progress "setup: apt-get install" --out /dev/null $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# npm ci empties node_modules first: skip it when npm's own record of the install is newer than the lock file.
if [ node_modules/.package-lock.json -nt package-lock.json ] && [ node_modules/.package-lock.json -nt package.json ]; then
  say "node_modules is up to date with package-lock.json"
else
  say "npm ci (about 1 min here, up to 7 on a fresh 2-core machine)"
  with_progress "setup: npm ci" npm ci --no-audit --no-fund --loglevel=error
fi

case "$what" in
  tests)
    # Every suite's Debian packages in one apt-get (one update, not one per suite; and suites that run side by side,
    # scripts/accounting.sh run_suites, never wait on each other's dpkg lock). Only git is required here: anything
    # else that cannot be installed is installed, skipped loudly or failed (in CI) by the suite that needs it.
    apt_need git openssl redis-server redis-sentinel redis-tools etcd-server etcd-client spin gcc libc6-dev unzip mariadb-server mariadb-client postgresql \
      chromium libkrb5-dev || say "some of the suites' Debian packages could not be installed: the suites that need them will say so"
    command -v git >/dev/null || { say "git is required and could not be installed"; exit 1; }
    ;;
  demo) apt_need git ;;
  *) echo "usage: scripts/setup.sh tests|demo" >&2; exit 2 ;;
esac
say "done"
