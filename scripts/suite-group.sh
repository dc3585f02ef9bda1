# Sourced by the suites whose tests start servers of their own (scripts/suites/redis.sh, redis-ha.sh, etcd.sh,
# chaos.sh): in_own_group runs a command in a process group of its own, and a suite stopped by a signal (SIGTERM or
# SIGINT at CI's time limit, Ctrl-C) takes that group along: the test processes and the redis-server, redis-sentinel
# and etcd processes they started. Without it they outlived the suite: a Node process killed by a signal does not
# run the 'exit' handlers that reap its servers (test/live/redis/redisServer.ts, test/live/etcd/etcdCluster.ts).
# (sql.sh and vscode.sh start their servers themselves and stop them in their own trap.)

OWN_GROUP=

# in_own_group COMMAND…: runs COMMAND (stdin /dev/null) in a process group of its own, waits for it, ends what it
# left running in that group, and returns its status. From the first call on, this script's exit (a signal's too)
# ends the group of the command running.
in_own_group() {
  trap end_own_group EXIT
  trap 'end_own_group; exit 143' TERM
  trap 'end_own_group; exit 130' INT
  set -m # job control: the background job below leads a process group of its own
  "$@" < /dev/null &
  OWN_GROUP=$!
  set +m
  wait "$OWN_GROUP"
  local rc=$?
  end_own_group
  return "$rc"
}

# end_own_group: SIGTERM to the group of the command in_own_group runs (if any of it is left), then SIGKILL to what
# is still there after 30 s (sql.sh, run by chaos.sh, stops its MariaDB and PostgreSQL in that time).
end_own_group() {
  local group=$OWN_GROUP deadline=$((SECONDS + 30))
  [ -n "$group" ] || return 0
  OWN_GROUP=
  kill -TERM -- "-$group" 2>/dev/null || return 0
  while kill -0 -- "-$group" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then kill -KILL -- "-$group" 2>/dev/null; return 0; fi
    sleep 0.1
  done
}
