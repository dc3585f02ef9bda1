#!/usr/bin/env bash
# Live SQL suite (issue 8): the sql driver against SQLite (a shared file, child processes), MariaDB
# and PostgreSQL from Debian's packages, each server on a free loopback port with a throwaway data
# directory and a fresh database named lockstep_test_<random>. Runs mocha once per dialect with
# LOCKSTEP_DATABASE_URL exported, then drops the table, verifies the database is empty, drops the
# database and stops the servers (also on failure). Appends one tally line per dialect that ran
# (sql-sqlite, sql-mariadb, sql-postgres) and, when a server was skipped or a step failed, one line "sql".
#
#   bash scripts/suites/sql.sh                         the suite
#   bash scripts/suites/sql.sh bench                   the servers + bench/sqlLeases.ts and bench/turnLatency.ts, then clean-up
#   bash scripts/suites/sql.sh bench NAME…             the servers + those benches (npm run bench's names), then clean-up
#   bash scripts/suites/sql.sh bench --all             the servers + every bench in one run, the history at 100,000
#                                                      transitions (npm run bench:all: the README's benchmark table)
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
# shellcheck source=scripts/live-servers.sh
source scripts/live-servers.sh
MOCHA=(npx mocha --require tsx --require ./test/helpers/privateHome.ts --require ./test/helpers/loadScaling.ts --forbid-only --extension ts --timeout 60000
  --slow 5000 --reporter ./scripts/tally-reporter.cjs 'test/live/sql/**/*.test.ts')
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

if [ "$MODE" = bench ] && [ "${2:-}" = --all ]; then # every bench, one run, the issue's sizes
  LOCKSTEP_BENCH_MYSQL_URL=${MDB_URL:-} LOCKSTEP_BENCH_POSTGRES_URL=${PG_URL:-} BENCH_HISTORY_N=${BENCH_HISTORY_N:-100000} BENCH_PAGE_N=${BENCH_PAGE_N:-1000} \
    node scripts/bench.mjs
  exit $?
fi
if [ "$MODE" = bench ] && [ $# -gt 1 ]; then # the benches named (npm run bench's names) with both servers
  shift
  LOCKSTEP_BENCH_MYSQL_URL=${MDB_URL:-} LOCKSTEP_BENCH_POSTGRES_URL=${PG_URL:-} node scripts/bench.mjs "$@"
  exit $?
fi
if [ "$MODE" = bench ]; then
  LOCKSTEP_BENCH_MYSQL_URL=${MDB_URL:-} LOCKSTEP_BENCH_POSTGRES_URL=${PG_URL:-} LOCKSTEP_BENCH_DIR="$STATE" \
    npx tsx bench/sqlLeases.ts
  bench_rc=$?
  # The your-turn rows of PostgreSQL and MariaDB (bench/turnLatency.ts runs the other drivers too).
  LOCKSTEP_BENCH_MYSQL_URL=${MDB_URL:-} LOCKSTEP_BENCH_POSTGRES_URL=${PG_URL:-} npx tsx bench/turnLatency.ts || bench_rc=1
  exit "$bench_rc"
fi

if [ "$MODE" = chaos ]; then # chaos/run.ts reports its own tally line (suite LOCKSTEP_SUITE)
  shift
  # A server that did not run is one chaos run skipped (outside CI) or failed (in CI), in a line of its own.
  if [ "${#notes[@]}" -gt 0 ]; then joined=$(printf '%s; ' "${notes[@]}"); tally_line sql-chaos 0 "$failed" "$skipped" "${joined%; }"; fi
  chaos_drivers=(); chaos_urls=()
  # Plain leases and the container protocol on each server (chaos/run.ts's container-mariadb, container-postgres).
  [ -n "${MDB_URL:-}" ] && { chaos_drivers+=(mariadb container-mariadb); chaos_urls+=(--database-url "$MDB_URL"); }
  [ -n "${PG_URL:-}" ] && { chaos_drivers+=(postgres container-postgres); chaos_urls+=(--database-url "$PG_URL"); }
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
