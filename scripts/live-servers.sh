# Sourced (not run) by the suites that need live servers (scripts/suites/sql.sh, redis.sh, vscode.sh): starts and
# stops MariaDB, PostgreSQL and redis-server on free loopback ports in throwaway folders, and checks the databases
# are left empty. The caller sets STATE (a folder it removes at the end), MDB_DIR and PG_DIR below it, and defines
# `say`; the verify_* functions add to the caller's `failed` count and `notes` array.

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

# ---------------------------------------------------------------- redis-server (scripts/suites/redis.sh's tests start their own)

# The redis-server executable (LOCKSTEP_REDIS_SERVER names it explicitly), as test/live/redis/redisServer.ts finds it.
redis_binary() {
  local c candidates=(redis-server /usr/bin/redis-server /usr/sbin/redis-server /usr/local/bin/redis-server)
  [ -n "${LOCKSTEP_REDIS_SERVER:-}" ] && candidates=("$LOCKSTEP_REDIS_SERVER")
  for c in "${candidates[@]}"; do "$c" --version >/dev/null 2>&1 && { echo "$c"; return 0; }; done
  return 1
}
have_redis() { redis_binary >/dev/null; }

# start_redis: one redis-server in $STATE/redis on a free loopback port, persistence off; sets REDIS_URL.
start_redis() {
  local binary; binary=$(redis_binary) || return 1
  REDIS_DIR=$STATE/redis
  mkdir -p "$REDIS_DIR" && chmod 700 "$REDIS_DIR"
  REDIS_PORT=$(free_port)
  "$binary" --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$REDIS_DIR" --save '' --appendonly no --protected-mode yes \
    --daemonize yes --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log" >/dev/null 2>&1 || return 1
  wait_until 15 grep -q 'Ready to accept connections' "$REDIS_DIR/redis.log" \
    || { say "redis-server did not start; its log:"; tail -n 20 "$REDIS_DIR/redis.log" >&2; return 1; }
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
}
# A three-member etcd cluster on free loopback ports (test/live/etcd/serveCluster.ts, which starts and stops its
# members by PID): sets ETCD_ENDPOINTS once it has a leader and answers.
start_etcd() {
  ETCD_DIR=$STATE/etcd
  mkdir -p "$ETCD_DIR"
  node --import tsx test/live/etcd/serveCluster.ts "$ETCD_DIR/endpoints" > "$ETCD_DIR/serve.log" 2>&1 &
  ETCD_PID=$!
  wait_until 60 bash -c "[ -s '$ETCD_DIR/endpoints' ] || ! kill -0 $ETCD_PID 2>/dev/null" >/dev/null 2>&1
  if [ ! -s "$ETCD_DIR/endpoints" ]; then
    say "the etcd cluster did not start; its log:"; tail -n 20 "$ETCD_DIR/serve.log" >&2
    stop_etcd; return 1
  fi
  ETCD_ENDPOINTS=$(cat "$ETCD_DIR/endpoints")
}
stop_etcd() {
  [ -n "${ETCD_PID:-}" ] || return 0
  kill "$ETCD_PID" 2>/dev/null || return 0
  wait_until 30 bash -c "! kill -0 $ETCD_PID 2>/dev/null" || kill -9 "$ETCD_PID" 2>/dev/null
  ETCD_PID=
}
stop_redis() {
  local pid; pid=$(cat "$REDIS_DIR/redis.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  wait_until 30 bash -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null
}
