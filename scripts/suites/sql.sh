#!/usr/bin/env bash
# Live SQL suite (issue 8): the sql driver against SQLite (a shared file, child processes), MariaDB
# and PostgreSQL from Debian's packages, each server on a free loopback port with a throwaway data
# directory and a fresh database named lockstep_test_<random>. Runs mocha once per dialect with
# LOCKSTEP_DATABASE_URL exported, then drops the table, verifies the database is empty, drops the
# database and stops the servers (also on failure). Appends one tally line per dialect that ran
# (sql-sqlite, sql-mariadb, sql-postgres) and, when a server was skipped or a step failed, one line "sql".
#
#   bash scripts/suites/sql.sh                         the suite
#   bash scripts/suites/sql.sh bench                   the servers + bench/sqlLeases.ts, then clean-up
#   bash scripts/suites/sql.sh chaos [ARGS…]           the servers + chaos/run.ts on MariaDB and PostgreSQL, then clean-up
#   bash scripts/suites/sql.sh server DIALECT stop|start   for tests (needs LOCKSTEP_TEST_SQL_STATE)
#
# Outside CI, a server that cannot be installed or started is SKIPPED loudly and every test it did not
# run is counted as skipped (mocha --dry-run counts them); in CI (in_ci: CI true or 1) that is a failure. LOCKSTEP_TEST_SQL_SERVERS (default "mariadb postgres") narrows
# the servers, with the same rule for the ones left out. Credentials go through files and stdin, never argv.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
say() { echo "[sql $(date +%T)] $*"; }
loud() { echo; echo "!!!!!!!! $* !!!!!!!!"; echo; }
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
MOCHA=(npx mocha --require tsx --require ./test/helpers/privateHome.ts --forbid-only --extension ts --timeout 60000
  --slow 5000 --reporter ./scripts/tally-reporter.cjs 'test/live/sql/**/*.test.ts')
is_root() { [ "$(id -u)" -eq 0 ]; }
as_root() { if is_root; then "$@"; else sudo -n "$@"; fi; }
# PostgreSQL refuses to run as root: as root, its commands run as the postgres user.
as_pg() { if is_root; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1; }
mariadb_daemon() { for c in mariadbd /usr/sbin/mariadbd mysqld /usr/sbin/mysqld; do command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return; }; done; }
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{process.stdout.write(String(s.address().port));s.close()})'; }
rand_hex() { node -e 'process.stdout.write(require("crypto").randomBytes(+process.argv[1]).toString("hex"))' "$1"; }
# wait_until SECONDS COMMAND…: polls COMMAND (every 0.1 s) until it succeeds or the deadline passes.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ "$SECONDS" -ge "$deadline" ] && return 1; sleep 0.1; done
}

# ---------------------------------------------------------------- servers (state in $STATE/servers.env)

start_mariadb() {
  local daemon; daemon=$(mariadb_daemon)
  local user_opt=(); is_root && user_opt=(--user=mysql)
  setsid "$daemon" --no-defaults "${user_opt[@]}" --datadir="$MDB_DIR/data" --socket="$MDB_DIR/run/mysqld.sock" \
    --port="$MDB_PORT" --bind-address=127.0.0.1 --pid-file="$MDB_DIR/run/mysqld.pid" --log-error="$MDB_DIR/error.log" \
    --tmpdir="$MDB_DIR/tmp" --skip-name-resolve --skip-log-bin --performance-schema=OFF \
    --innodb-buffer-pool-size=32M --max-connections=300 </dev/null >/dev/null 2>&1 &
  wait_until 60 mariadb_admin ping || { say "MariaDB did not start; its log:"; tail -n 20 "$MDB_DIR/error.log" >&2; return 1; }
}
mariadb_admin() { mariadb-admin --no-defaults --protocol=socket --socket="$MDB_DIR/run/mysqld.sock" -uroot "$@"; }
mariadb_sql() { mariadb --no-defaults --protocol=socket --socket="$MDB_DIR/run/mysqld.sock" -uroot -N -B "$@"; }
stop_mariadb() {
  local pid; pid=$(cat "$MDB_DIR/run/mysqld.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  wait_until 60 bash -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null
  wait_until 10 bash -c "! kill -0 $pid"
}

start_postgres() {
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$PG_DIR/run -c max_connections=300" start >/dev/null \
    || { say "PostgreSQL did not start; its log:"; tail -n 20 "$PG_DIR/server.log" >&2; return 1; }
}
stop_postgres() { as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true; }
pg_sql() { as_pg "$PG_BIN/psql" -h "$PG_DIR/run" -p "$PG_PORT" -U lockstep -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

load_state() { # shellcheck disable=SC1091
  [ -n "${STATE:-}" ] && [ -f "$STATE/servers.env" ] && . "$STATE/servers.env"
}

if [ "${1:-}" = "server" ]; then
  STATE=${LOCKSTEP_TEST_SQL_STATE:?LOCKSTEP_TEST_SQL_STATE is not set}
  load_state || { echo "no server state in $STATE" >&2; exit 2; }
  case "${2:-}:${3:-}" in
    mariadb:stop) stop_mariadb ;;
    mariadb:start) start_mariadb ;;
    postgres:stop) stop_postgres ;;
    postgres:start) start_postgres ;;
    *) echo "usage: sql.sh server mariadb|postgres stop|start" >&2; exit 2 ;;
  esac
  exit $?
fi

MODE=${1:-suite}
START=$SECONDS
STATE=$(mktemp -d /tmp/lockstep-sql.XXXXXX)
chmod 755 "$STATE" # the mysql and postgres users must reach their folders below it
MDB_DIR=$STATE/mariadb
PG_DIR=$STATE/postgres
: > "$STATE/servers.env"
have_mariadb=0; have_postgres=0
failed=0; skipped=0; notes=() # the script's own counts (the dialects' runs report theirs)

# count_tests DIALECT: how many tests a run on DIALECT would have (mocha --dry-run), at least 1.
count_tests() {
  local file="$STATE/count-$1.jsonl" p f s n
  LOCKSTEP_TALLY="$file" LOCKSTEP_SUITE="count-$1" LOCKSTEP_TALLY_AS_SKIPPED=dry-run LOCKSTEP_TEST_SQL_DIALECT="$1" \
    LOCKSTEP_DATABASE_URL='' "${MOCHA[@]}" --dry-run >/dev/null 2>&1
  read -r p f s n < <(node scripts/tally.mjs --counts "$file")
  if [ "${f:-1}" -eq 0 ] && [ "${s:-0}" -gt 0 ]; then echo "$s"; else echo 1; fi
}

skip_or_fail() { # skip_or_fail WHAT DIALECT WHY
  if in_ci; then
    say "FAILED: $1: $3 (CI: live SQL tests never skip in CI)"; failed=$((failed + 1)); notes+=("$1 failed: $3")
  else
    local n=1 # chaos mode: one chaos run per dialect
    [ "$MODE" = chaos ] || n=$(count_tests "$2")
    loud "SKIPPED: $1 live tests ($3) — $n tests did NOT run"; skipped=$((skipped + n)); notes+=("$1 skipped: $3")
  fi
}

ensure_packages() {
  local missing=()
  dpkg -s mariadb-server >/dev/null 2>&1 || missing+=(mariadb-server)
  dpkg -s mariadb-client >/dev/null 2>&1 || missing+=(mariadb-client)
  dpkg -s postgresql >/dev/null 2>&1 || missing+=(postgresql)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]} from Debian's packages"
  as_root apt-get update -qq >/dev/null \
    && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup_mariadb() {
  [ -n "$(mariadb_daemon)" ] && command -v mariadb-install-db >/dev/null && command -v mariadb >/dev/null || return 1
  mkdir -p "$MDB_DIR"/{data,run,tmp} && chmod 700 "$MDB_DIR"
  local user_opt=(); if is_root; then user_opt=(--user=mysql); chown -R mysql:mysql "$MDB_DIR"; fi
  mariadb-install-db --no-defaults "${user_opt[@]}" --datadir="$MDB_DIR/data" --auth-root-authentication-method=normal \
    --skip-test-db >"$MDB_DIR/install.log" 2>&1 || { tail -n 20 "$MDB_DIR/install.log" >&2; return 1; }
  MDB_PORT=$(free_port)
  echo "MDB_DIR=$MDB_DIR MDB_PORT=$MDB_PORT" >> "$STATE/servers.env"
  start_mariadb || return 1
  MDB_DB=lockstep_test_$(rand_hex 6)
  local password; password=$(rand_hex 12)
  mariadb_sql <<SQL || return 1
CREATE DATABASE $MDB_DB;
CREATE USER 'lockstep'@'127.0.0.1' IDENTIFIED BY '$password';
GRANT ALL PRIVILEGES ON $MDB_DB.* TO 'lockstep'@'127.0.0.1';
SQL
  MDB_URL="mariadb://lockstep:$password@127.0.0.1:$MDB_PORT/$MDB_DB"
}

setup_postgres() {
  PG_BIN=$(pg_bin)
  [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] || return 1
  mkdir -p "$PG_DIR"/run && chmod 700 "$PG_DIR"
  local password; password=$(rand_hex 12)
  (umask 077; printf '%s\n' "$password" > "$PG_DIR/pwfile")
  is_root && chown -R postgres:postgres "$PG_DIR"
  as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U lockstep --pwfile="$PG_DIR/pwfile" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --no-sync >"$PG_DIR/initdb.log" 2>&1 || { tail -n 20 "$PG_DIR/initdb.log" >&2; return 1; }
  rm -f "$PG_DIR/pwfile"
  PG_PORT=$(free_port)
  echo "PG_DIR=$PG_DIR PG_PORT=$PG_PORT PG_BIN=$PG_BIN" >> "$STATE/servers.env"
  start_postgres || return 1
  PG_DB=lockstep_test_$(rand_hex 6)
  pg_sql -d postgres -c "CREATE DATABASE $PG_DB" || return 1
  PG_URL="postgres://lockstep:$password@127.0.0.1:$PG_PORT/$PG_DB"
}

# Drops the table, checks that the database is then empty, drops the database and checks it is gone.
verify_mariadb_clean() {
  local left gone
  left=$(mariadb_sql -e "DROP TABLE IF EXISTS $MDB_DB.reliability_locks; SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '$MDB_DB';") || left=error
  mariadb_sql -e "DROP DATABASE $MDB_DB; DROP USER 'lockstep'@'127.0.0.1';" >/dev/null 2>&1
  gone=$(mariadb_sql -e "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '$MDB_DB';") || gone=error
  if [ "$left" = 0 ] && [ "$gone" = 0 ]; then say "MariaDB: table dropped, database verified empty, then dropped"
  else say "FAILED: MariaDB clean-up: $left tables left, database gone check: $gone"; failed=$((failed + 1)); notes+=("mariadb clean-up failed"); fi
}
verify_postgres_clean() {
  local left gone
  left=$(pg_sql -d "$PG_DB" -c "DROP TABLE IF EXISTS reliability_locks" -c "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'") || left=error
  pg_sql -d postgres -c "DROP DATABASE $PG_DB" >/dev/null 2>&1
  gone=$(pg_sql -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$PG_DB'") || gone=error
  if [ "$left" = 0 ] && [ "$gone" = 0 ]; then say "PostgreSQL: table dropped, database verified empty, then dropped"
  else say "FAILED: PostgreSQL clean-up: $left relations left, database gone check: $gone"; failed=$((failed + 1)); notes+=("postgres clean-up failed"); fi
}

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$have_mariadb" = 1 ]; then
    # A test may have left the server stopped; start it again for the clean-up check.
    mariadb_admin ping >/dev/null 2>&1 || start_mariadb
    if [ -n "${MDB_URL:-}" ]; then
      if [ "$MODE" = suite ]; then verify_mariadb_clean; else mariadb_sql -e "DROP DATABASE IF EXISTS $MDB_DB" >/dev/null 2>&1; fi
    fi
    stop_mariadb
  fi
  if [ "$have_postgres" = 1 ]; then
    as_pg "$PG_BIN/pg_isready" -q -h "$PG_DIR/run" -p "$PG_PORT" >/dev/null 2>&1 || start_postgres
    if [ -n "${PG_URL:-}" ]; then
      if [ "$MODE" = suite ]; then verify_postgres_clean; else pg_sql -d postgres -c "DROP DATABASE IF EXISTS $PG_DB" >/dev/null 2>&1; fi
    fi
    stop_postgres
  fi
  if [ "$MODE" = suite ]; then
    # Each dialect's run reported its own line (run_reported made sure of it); they join the tally as they are.
    local f p fl sk n dialects_failed=0
    for f in "$STATE"/tally-*.jsonl; do [ -e "$f" ] || continue
      read -r p fl sk n < <(node scripts/tally.mjs --counts "$f")
      dialects_failed=$((dialects_failed + fl))
      if [ -n "${LOCKSTEP_TALLY:-}" ]; then cat "$f" >> "$LOCKSTEP_TALLY"; fi
    done
    [ "$rc" -ne 0 ] && [ "$((failed + dialects_failed))" -eq 0 ] && { failed=1; notes+=("suite script exited $rc"); }
    if [ "${#notes[@]}" -gt 0 ]; then local joined; joined=$(printf '%s; ' "${notes[@]}"); tally_line sql 0 "$failed" "$skipped" "${joined%; }"; fi
    failed=$((failed + dialects_failed))
    say "wall time $((SECONDS - START)) s"
  fi
  rm -rf "$STATE"
  if [ "$MODE" = suite ]; then [ "$failed" -eq 0 ]; exit $?; fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- install and start

SERVERS=${LOCKSTEP_TEST_SQL_SERVERS-mariadb postgres}
if [ -n "$SERVERS" ] && ! ensure_packages; then
  say "could not install mariadb-server/postgresql (no root or sudo, or no network)"
fi
if [[ " $SERVERS " != *" mariadb "* ]]; then skip_or_fail MariaDB mariadb "left out by LOCKSTEP_TEST_SQL_SERVERS"
elif setup_mariadb; then have_mariadb=1; else
  [ -f "$MDB_DIR/run/mysqld.pid" ] && have_mariadb=1 # started, but the database could not be made: clean up
  skip_or_fail MariaDB mariadb "server not installed or did not start"
fi
if [[ " $SERVERS " != *" postgres "* ]]; then skip_or_fail PostgreSQL postgres "left out by LOCKSTEP_TEST_SQL_SERVERS"
elif setup_postgres; then have_postgres=1; else
  [ -f "$PG_DIR/data/postmaster.pid" ] && have_postgres=1
  skip_or_fail PostgreSQL postgres "server not installed or did not start"
fi
say "servers ready after $((SECONDS - START)) s (mariadb=$have_mariadb postgres=$have_postgres)"

if [ "$MODE" = bench ]; then
  LOCKSTEP_BENCH_MYSQL_URL=${MDB_URL:-} LOCKSTEP_BENCH_POSTGRES_URL=${PG_URL:-} LOCKSTEP_BENCH_DIR="$STATE" \
    npx tsx bench/sqlLeases.ts
  exit $?
fi

if [ "$MODE" = chaos ]; then # chaos/run.ts reports its own tally line (suite LOCKSTEP_SUITE)
  shift
  # A server that did not run is one chaos run skipped (outside CI) or failed (in CI), in a line of its own.
  if [ "${#notes[@]}" -gt 0 ]; then joined=$(printf '%s; ' "${notes[@]}"); tally_line sql-chaos 0 "$failed" "$skipped" "${joined%; }"; fi
  chaos_drivers=(); chaos_urls=()
  [ -n "${MDB_URL:-}" ] && { chaos_drivers+=(mariadb); chaos_urls+=(--database-url "$MDB_URL"); }
  [ -n "${PG_URL:-}" ] && { chaos_drivers+=(postgres); chaos_urls+=(--database-url "$PG_URL"); }
  [ ${#chaos_drivers[@]} -eq 0 ] && exit "$((failed > 0))"
  drivers_csv=$(IFS=,; echo "${chaos_drivers[*]}")
  npx tsx chaos/run.ts --drivers "$drivers_csv" "${chaos_urls[@]}" "$@"
  chaos_rc=$?
  [ "$failed" -gt 0 ] && chaos_rc=1
  exit "$chaos_rc"
fi

# ---------------------------------------------------------------- tests, one mocha run per dialect

run_dialect() { # run_dialect LABEL URL
  say "mocha: $1"
  LOCKSTEP_TALLY="$STATE/tally-$1.jsonl" LOCKSTEP_DATABASE_URL="$2" LOCKSTEP_TEST_SQL_DIALECT="$1" \
    LOCKSTEP_TEST_SQL_STATE="$STATE" run_reported "sql-$1" "${MOCHA[@]}"
}

mkdir -p "$STATE/sqlite"
run_dialect sqlite "sqlite://$STATE/sqlite/locks.db"
[ "$have_mariadb" = 1 ] && [ -n "${MDB_URL:-}" ] && run_dialect mariadb "$MDB_URL"
[ "$have_postgres" = 1 ] && [ -n "${PG_URL:-}" ] && run_dialect postgres "$PG_URL"
exit 0
