#!/usr/bin/env bash
# The main job, for now: a short demonstration of the lease engine with the CLI on the file driver.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
npm run -s build
store=$(mktemp -d)
export LOCKSTEP_PATH="$store"
echo "Store: $store (file driver)"
echo "1) lockstep run demo -- sh -c 'echo fencing token \$LOCKSTEP_FENCING_TOKEN'"
node dist/cli.js run demo -- sh -c 'echo "   holding the lease; fencing token $LOCKSTEP_FENCING_TOKEN"'
echo "2) two contenders at once; the second waits up to 5 s:"
node dist/cli.js run demo --ttl 10 -- sh -c 'echo "   first:  token $LOCKSTEP_FENCING_TOKEN"; sleep 1' &
sleep 0.2
node dist/cli.js run demo --wait 5 -- sh -c 'echo "   second: token $LOCKSTEP_FENCING_TOKEN (after the first released)"'
wait
echo "3) a busy lease with no wait exits 3:"
node dist/cli.js run demo --ttl 5 -- sleep 1 &
sleep 0.2
set +e; node dist/cli.js run demo -- true; echo "   exit code $?"; set -e
wait
