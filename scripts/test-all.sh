#!/usr/bin/env bash
# Every test Lockstep has, with all of its own set-up, ending with one line:
# `N passed, N failed, N skipped` summed over every suite it ran.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export LOCKSTEP_TALLY="$ROOT/test-artifacts/tally.jsonl"
mkdir -p test-artifacts && : > "$LOCKSTEP_TALLY"
step() { echo; echo "=== $* ($(date +%T))"; }
failed_steps=()

step "set-up"
bash scripts/setup.sh tests || { echo "set-up failed"; exit 1; }

step "build and type check"
if ! { npm run -s build && npm run -s typecheck; }; then
  echo '{"suite":"build+typecheck","passed":0,"failed":1,"skipped":0}' >> "$LOCKSTEP_TALLY"
  failed_steps+=(build)
fi

suite() { # suite NAME COMMAND…: runs one suite; its runner appends its counts to the tally
  local name=$1; shift
  step "suite: $name"
  local before; before=$(wc -l < "$LOCKSTEP_TALLY")
  LOCKSTEP_SUITE=$name "$@"; local rc=$?
  if [ "$rc" -ne 0 ]; then failed_steps+=("$name"); fi
  # A runner that died before reporting still counts as a failure.
  if [ "$(wc -l < "$LOCKSTEP_TALLY")" -eq "$before" ]; then
    echo "{\"suite\":\"$name\",\"passed\":0,\"failed\":1,\"skipped\":0,\"note\":\"runner exited $rc before reporting\"}" >> "$LOCKSTEP_TALLY"
  fi
}

suite unit npx mocha --config .mocharc.unit.json
suite integration npx mocha --config .mocharc.integration.json
for extra in scripts/suites/*.sh; do
  [ -e "$extra" ] || continue
  name=$(basename "$extra" .sh)
  suite "$name" bash "$extra"
done

node scripts/tally.mjs "$LOCKSTEP_TALLY"
[ ${#failed_steps[@]} -eq 0 ] || { echo "failing: ${failed_steps[*]}" >&2; exit 1; }
