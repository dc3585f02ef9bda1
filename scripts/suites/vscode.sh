#!/usr/bin/env bash
# The VS Code suite: the extension's tests inside the real extension host of both pinned hosts (VS Code 1.100 and
# 1.139, see scripts/vscode-host/setup.sh) and the UI tests through Chromium on the newest. Installs the hosts
# itself (cached outside the project), packages the .vsix the UI tests install, and appends one tally line per
# runner: vscode-ext@1.100, vscode-ext@1.139, vscode-ext-untrusted@1.139 (workspace trust on, the folder untrusted),
# vscode-ui:<test>@1.139. `npm run test:electron` is separate (it needs a VS Code download these machines cannot
# make). Env: LOCKSTEP_VSCODE_UI_HOSTS (default "newest").
#
# In the newest host it also runs test/vscode/extension/multiRoot.test.ts in a two-container workspace
# (vscode-ext@HOST:multi-root), and in each host test/vscode/extension/drivers.test.ts once per container driver on a fresh
# container, with the extension as the .vsix ships it (vscode-ext@HOST:sqlite, :git, :mariadb, :postgres, :redis,
# :etcd). MariaDB, PostgreSQL, redis-server and a three-member etcd cluster start once for all hosts
# (scripts/live-servers.sh, as the sql, redis and etcd suites start them); a server that cannot start fails those runs in CI and is SKIPPED loudly outside it.
# LOCKSTEP_VSCODE_DRIVERS (default "sqlite git mariadb postgres redis etcd") narrows the drivers. On the older host only
# LOCKSTEP_VSCODE_OLDER_HOST_DRIVERS (default "sqlite git etcd") run: SQLite and git are where the hosts differ (its Node
# has no node:sqlite; git runs as a child of its Electron), while the MariaDB, PostgreSQL and Redis clients are the
# same plain-JavaScript bundle on both, and their three runs cost 75 s of CI's 40 minutes; etcd runs on both because
# its gRPC client (HTTP/2, protocol files read from dist/proto at run time) is the one whose loading in an Electron
# host is new.
#
# It is the longest suite after integration (16.5 minutes beside the others in a whole run on 2026-12-02, the hosts
# already installed in the background by scripts/test-all.sh) and drives one workbench at a time, so it starts
# first and runs beside every other suite of this folder (chaos, etcd, model, redis-ha, redis, sql, each with servers
# of its own on free ports) instead of after them. Measured in a whole run before this change: chaos, model,
# redis-ha, redis and sql used 305, 88, 157, 158 and 273 processor-seconds, and the whole run 61 processor-minutes
# in its 46 minutes on two processors (one after another, a third of them idle). Side by side (a whole run on
# 2026-12-02, etcd added): the suites after integration took 23.9 minutes, VS Code's 20.5 of them.
# lockstep-suite: beside-others
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
# shellcheck source=scripts/debian-packages.sh
source scripts/debian-packages.sh
# shellcheck source=scripts/live-servers.sh
source scripts/live-servers.sh
started=$SECONDS
say() { echo "[vscode-suite $(date +%T)] $*"; }
broken() { # broken STEP WHY: counts a step that stopped the suite before its runners could report
  say "FAILED: $1: $2"
  tally_line "vscode-$1" 0 1 0 "$2"
  exit 1
}

# scripts/test-all.sh starts this install in the background at the start of the run; here it waits for that one
# (the installer's lock) and finds the hosts there, or installs what is missing.
say "installing the VS Code hosts (cached)"
t=$SECONDS
bash scripts/vscode-host/setup.sh all || broken setup "scripts/vscode-host/setup.sh failed"
say "VS Code hosts ready after $((SECONDS - t)) s"
# shellcheck source=/dev/null
source "${LOCKSTEP_CACHE:-$HOME/.cache/lockstep}/vscode-host/env.sh"

say "building and packaging the extension"
version=$(node -p 'require("./package.json").version')
vsix="test-artifacts/lockstep-$version.vsix"
mkdir -p test-artifacts
t=$SECONDS
npm run -s package -- --out "$vsix" > test-artifacts/vsce-package.log 2>&1 || { tail -30 test-artifacts/vsce-package.log; broken package "npm run package failed"; }
say "packaged $vsix ($(du -k "$vsix" | cut -f1) KB) in $((SECONDS - t)) s"

failed=0; notes=() # verify_*_clean (scripts/live-servers.sh) count into these
STATE=$(mktemp -d /tmp/lockstep-vscode.XXXXXX)
chmod 755 "$STATE" # the mysql and postgres users must reach their folders below it
MDB_DIR=$STATE/mariadb
PG_DIR=$STATE/postgres
have_mariadb=0; have_postgres=0; have_redis_server=0; ETCD_PID=
finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$have_mariadb" = 1 ]; then [ -n "${MDB_URL:-}" ] && verify_mariadb_clean; stop_mariadb; fi
  if [ "$have_postgres" = 1 ]; then [ -n "${PG_URL:-}" ] && verify_postgres_clean; stop_postgres; fi
  [ "$have_redis_server" = 1 ] && stop_redis
  stop_etcd
  if [ "${#notes[@]}" -gt 0 ]; then local joined; joined=$(printf '%s; ' "${notes[@]}"); tally_line vscode-servers 0 "${#notes[@]}" 0 "${joined%; }"; fi
  rm -rf "$STATE"
  [ "$failed" -ne 0 ] && [ "$rc" -eq 0 ] && rc=1
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# The extension as the .vsix ships it (no node_modules: the SQL and Redis clients from dist/vendor, no better-sqlite3).
command -v unzip >/dev/null || apt_install vscode-suite unzip || broken unzip "unzip is not installed"
unzip -q "$vsix" 'extension/*' -d "$STATE/vsix" || broken unzip "could not unpack $vsix"
shipped=$STATE/vsix/extension

drivers=${LOCKSTEP_VSCODE_DRIVERS-sqlite git mariadb postgres redis etcd}
missing=() # "driver:why" for each server that could not start
wants() { [[ " $drivers " == *" $1 "* ]]; }
if wants mariadb || wants postgres; then ensure_packages || say "could not install mariadb-server/postgresql (no root or sudo, or no network)"; fi
if wants mariadb; then
  if setup_mariadb; then have_mariadb=1; else [ -f "$MDB_DIR/run/mysqld.pid" ] && have_mariadb=1; missing+=("mariadb:server not installed or did not start"); fi
fi
if wants postgres; then
  if setup_postgres; then have_postgres=1; else [ -f "$PG_DIR/data/postmaster.pid" ] && have_postgres=1; missing+=("postgres:server not installed or did not start"); fi
fi
if wants redis; then
  have_redis || [ -n "${LOCKSTEP_REDIS_SERVER:-}" ] || apt_install vscode-suite redis-server || say "installing redis-server failed"
  if start_redis; then have_redis_server=1; else missing+=("redis:redis-server not installed or did not start"); fi
fi
if wants etcd; then
  command -v etcd >/dev/null 2>&1 || apt_install vscode-suite etcd-server etcd-client || say "installing etcd-server failed"
  start_etcd || missing+=("etcd:etcd not installed or its cluster did not start")
fi
[ "${#missing[@]}" -eq 0 ] || say "servers missing: ${missing[*]}"

# How many tests a driver's run has: those of drivers.test.ts's suite for a driver that works (each `test(` after it).
driver_tests() {
  node -e 'const s = require("fs").readFileSync(process.argv[1], "utf8"); const n = (s.split("suite(`the ${driver} driver")[1] ?? "").split(/\btest\(/).length - 1; process.stdout.write(String(Math.max(n, 1)))' \
    test/vscode/extension/drivers.test.ts
}

# run_driver HOST DRIVER: drivers.test.ts on a fresh container on DRIVER, against the server started above.
run_driver() {
  local entry why
  for entry in "${missing[@]}"; do
    [ "${entry%%:*}" = "$2" ] || continue
    why=${entry#*:}
    if in_ci; then
      say "FAILED: $2 in VS Code $1: $why (CI: the driver tests never skip in CI)"
      tally_line "vscode-ext@$1:$2" 0 1 0 "$why"
      return 1
    fi
    local n; n=$(driver_tests)
    echo; echo "!!!!!!!! SKIPPED: $2 driver tests in VS Code $1 ($why) — $n tests did NOT run !!!!!!!!"; echo
    tally_line "vscode-ext@$1:$2" 0 0 "$n" "$why"
    return 0
  done
  local url=''
  case $2 in mariadb) url=${MDB_URL:-} ;; postgres) url=${PG_URL:-} ;; esac
  say "$2 driver tests in VS Code $1"
  LOCKSTEP_TEST_DATABASE_URL=$url LOCKSTEP_TEST_REDIS_URL=${REDIS_URL:-} LOCKSTEP_TEST_ETCD_ENDPOINTS=${ETCD_ENDPOINTS:-} run_reported "vscode-ext@$1:$2" \
    node test/vscode/harness/runExtensionTests.mjs --host "$1" --suite "vscode-ext@$1:$2" --driver "$2" --tests drivers --extension "$shipped"
}

newest=$(printf '%s\n' $LOCKSTEP_VSCODE_HOSTS | sort -t. -k2 -n | tail -1)
for host in $LOCKSTEP_VSCODE_HOSTS; do
  say "extension tests in VS Code $host"
  run_reported "vscode-ext@$host" node test/vscode/harness/runExtensionTests.mjs --host "$host" || failed=1
  # Multi-root windows on the newest host only: the workspace-folder API they use is the same on both hosts (the
  # older host's whole suite and its SQLite and git runs already cover what differs), and a run costs half a minute.
  if [ "$host" = "$newest" ]; then
    say "multi-root workspace tests in VS Code $host"
    run_reported "vscode-ext@$host:multi-root" node test/vscode/harness/runExtensionTests.mjs --host "$host" \
      --suite "vscode-ext@$host:multi-root" --workspace multi-root --tests multiRoot || failed=1
  else
    say "multi-root workspace tests: on VS Code $newest only"
  fi
  for driver in $drivers; do
    if [ "$host" != "$newest" ] && [[ " ${LOCKSTEP_VSCODE_OLDER_HOST_DRIVERS-sqlite git etcd} " != *" $driver "* ]]; then
      say "$driver driver tests: on VS Code $newest only (LOCKSTEP_VSCODE_OLDER_HOST_DRIVERS)"
      continue
    fi
    run_driver "$host" "$driver" || failed=1
  done
done
say "extension tests in an untrusted folder (restricted mode) in VS Code $newest"
run_reported "vscode-ext-untrusted@$newest" node test/vscode/harness/runExtensionTests.mjs --host "$newest" --untrusted 1 || failed=1
for host in ${LOCKSTEP_VSCODE_UI_HOSTS:-newest}; do
  say "UI tests in VS Code $host"
  for test in test/vscode/ui/*.ui.mjs; do
    run_reported "vscode-ui:$(basename "$test" .ui.mjs)@$host" node "$test" --host "$host" --vsix "$vsix" || failed=1
  done
done
say "done in $((SECONDS - started)) s; screenshots in test-artifacts/screenshots/"
exit $failed # through finish: servers stopped, databases verified empty
