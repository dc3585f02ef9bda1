# Sourced (not run) by scripts/test-all.sh and the suite scripts: the one place that decides what counts.
# Every runner appends one JSON line of counts to $LOCKSTEP_TALLY; scripts/tally.mjs checks and sums them.
#
#   in_ci                          true when CI is `true` or `1` (any case), the one way every suite reads CI
#   tally_line SUITE P F S [NOTE]  appends one line (to $LOCKSTEP_TALLY, when set)
#   run_reported NAME COMMAND…     runs one runner with LOCKSTEP_SUITE=NAME; a runner that appended no line, or
#                                  that exited non-zero without reporting a failure, counts as one failure; a
#                                  runner still running at its time limit (suite_limit) is stopped (TERM to its
#                                  process group, KILL 30 s later) and counts as one failure that names it
#   suite_limit NAME               the runner's time limit in seconds: LOCKSTEP_TIMEOUT_<NAME> (upper case, other
#                                  characters as _), else its default below times LOCKSTEP_TEST_SLOWDOWN, and never past LOCKSTEP_RUN_DEADLINE
#                                  (epoch seconds; scripts/test-all.sh sets it so the whole run ends within its budget)
#   run_suites DIR                 runs every DIR/*.sh as a suite, through run_reported, in name order; a suite
#                                  whose script has the line `# lockstep-suite: beside-next` runs beside the one
#                                  after it (its own tally file, joined when it ends; its output printed then);
#                                  a suite with the line `# lockstep-suite: beside-others` starts before all the
#                                  others and runs beside them (its own tally file, joined and printed at the end)
#   tally_summary                  the table, the behaviours line and last `N passed, N failed, N skipped`;
#                                  returns 1 exactly when N failed > 0
ACCOUNTING_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

in_ci() { case "${CI:-}" in [Tt][Rr][Uu][Ee] | 1) return 0 ;; *) return 1 ;; esac; }

tally_line() {
  local line
  line=$(node -e 'const [suite, p, f, s, note] = process.argv.slice(1); const o = { suite, passed: +p, failed: +f, skipped: +s }; if (note) o.note = note; console.log(JSON.stringify(o));' "$@")
  echo "[tally] $line"
  if [ -n "${LOCKSTEP_TALLY:-}" ]; then echo "$line" >> "$LOCKSTEP_TALLY"; fi
}

tally_lines() { if [ -n "${LOCKSTEP_TALLY:-}" ] && [ -f "$LOCKSTEP_TALLY" ]; then wc -l < "$LOCKSTEP_TALLY"; else echo 0; fi; }

# Default limits (seconds) on an unloaded machine, each well above the suite's time there; a hang costs at most this.
suite_default_limit() {
  case "$1" in
    unit) echo 600 ;;
    integration) echo 3000 ;;
    model | redis | redis-ha) echo 600 ;;
    chaos | sql | etcd) echo 900 ;;
    vscode) echo 2100 ;; # beside the others, so slowed by them: 20.5 min in a local run, more on CI's machines
    *) echo 900 ;;
  esac
}

suite_limit() {
  local var limit now factor
  var="LOCKSTEP_TIMEOUT_$(printf '%s' "$1" | tr '[:lower:]' '[:upper:]' | tr -c 'A-Z0-9\n' '_')"
  if [ -n "${!var:-}" ]; then
    limit=${!var}
  else
    # A default limit grows with the run's slowdown factor (LOCKSTEP_TEST_SLOWDOWN, test/helpers/calibration.ts), as
    # every deadline inside the tests does: a busy machine must not turn a slow suite into a "hang".
    factor=${LOCKSTEP_TEST_SLOWDOWN:-1}
    limit=$(awk -v l="$(suite_default_limit "$1")" -v f="$factor" 'BEGIN { if (f !~ /^[0-9.]+$/ || f < 1) f = 1; printf "%d", l * f + 0.5 }')
  fi
  if [ -n "${LOCKSTEP_RUN_DEADLINE:-}" ]; then
    now=$(date +%s)
    [ $((LOCKSTEP_RUN_DEADLINE - now)) -lt "$limit" ] && limit=$((LOCKSTEP_RUN_DEADLINE - now))
  fi
  echo "$limit"
}

run_reported() {
  local name=$1; shift
  local before; before=$(tally_lines)
  local limit; limit=$(suite_limit "$name")
  if [ "$limit" -le 0 ]; then
    tally_line "$name" 0 1 0 "not run: the run's time budget was spent before it could start"
    return 1
  fi
  local started=$SECONDS
  # A runner inside a runner (sql.sh's dialects, vscode.sh's hosts) stays in the outer runner's process group
  # (--foreground), so that the outer limit stops it too; only the outermost makes a group of its own.
  local group=(); [ -n "${LOCKSTEP_IN_RUNNER:-}" ] && group=(--foreground)
  LOCKSTEP_SUITE=$name LOCKSTEP_IN_RUNNER=1 timeout "${group[@]}" --kill-after=30 "$limit" "$@"; local rc=$?
  if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ $((SECONDS - started)) -ge "$limit" ]; }; then
    echo "[accounting] $name did not finish within its limit of $limit s: stopped"
    tally_line "$name" 0 1 0 "timed out: still running after $limit s (its limit), stopped"
    return "$rc"
  fi
  [ -n "${LOCKSTEP_TALLY:-}" ] || return "$rc"
  local p f s n
  read -r p f s n < <(node "$ACCOUNTING_ROOT/scripts/tally.mjs" --counts "$LOCKSTEP_TALLY" --from "$before")
  if [ "${n:-0}" -eq 0 ]; then
    tally_line "$name" 0 1 0 "runner exited $rc before reporting"
  elif [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
    tally_line "$name" 0 1 0 "runner exited $rc but reported no failure"
  fi
  return "$rc"
}

run_suites() {
  local extra name beside='' beside_name='' beside_tally='' beside_log='' beside_pid=''
  local others=() other_names=() other_tallies=() other_logs=() other_pids=() i
  # Suites marked beside-others start first, in the background, each with a tally file and a log of its own.
  for extra in "$1"/*.sh; do
    [ -e "$extra" ] && grep -qx '# lockstep-suite: beside-others' "$extra" || continue
    name=$(basename "$extra" .sh)
    others+=("$extra"); other_names+=("$name")
    other_tallies+=("$(mktemp "${TMPDIR:-/tmp}/lockstep-tally.XXXXXX")"); other_logs+=("$(mktemp "${TMPDIR:-/tmp}/lockstep-suite.XXXXXX")")
    echo; echo "=== suite: $name, beside all the others ($(date +%T)); its output follows when it ends"
    (LOCKSTEP_TALLY=${other_tallies[-1]} run_reported "$name" bash "$extra") < /dev/null > "${other_logs[-1]}" 2>&1 &
    other_pids+=($!)
  done
  for extra in "$1"/*.sh; do
    [ -e "$extra" ] || continue
    grep -qx '# lockstep-suite: beside-others' "$extra" && continue
    name=$(basename "$extra" .sh)
    if [ -z "$beside" ] && grep -qx '# lockstep-suite: beside-next' "$extra"; then
      # Started in the background with a tally file of its own, so that run_reported attributes exactly its
      # lines to it (a runner that reports nothing still fails by name); joined and printed once the next ends.
      beside=$extra; beside_name=$name
      beside_tally=$(mktemp "${TMPDIR:-/tmp}/lockstep-tally.XXXXXX"); beside_log=$(mktemp "${TMPDIR:-/tmp}/lockstep-suite.XXXXXX")
      echo; echo "=== suite: $name, beside the next ($(date +%T)); its output follows when it ends"
      (LOCKSTEP_TALLY=$beside_tally run_reported "$name" bash "$extra") < /dev/null > "$beside_log" 2>&1 &
      beside_pid=$!
      continue
    fi
    echo; echo "=== suite: $name ($(date +%T))"
    run_reported "$name" bash "$extra"
    if [ -n "$beside" ]; then
      join_beside "$name"; beside=''
    fi
  done
  if [ -n "$beside" ]; then join_beside ''; fi # the last suite was marked: nothing ran beside it
  for i in "${!others[@]}"; do
    wait "${other_pids[$i]}"
    echo; echo "=== suite: ${other_names[$i]} (ran beside the others; ended $(date +%T))"
    cat "${other_logs[$i]}"
    if [ -n "${LOCKSTEP_TALLY:-}" ]; then cat "${other_tallies[$i]}" >> "$LOCKSTEP_TALLY"; fi
    rm -f "${other_tallies[$i]}" "${other_logs[$i]}"
  done
  return 0
}

# join_beside NEXT: waits for the suite run_suites started in the background (beside NEXT, if any), prints its
# output under a heading, and adds its tally lines to the run's.
join_beside() {
  wait "$beside_pid"
  [ -n "$1" ] && { echo; echo "=== suite: $beside_name (ran beside $1; ended $(date +%T))"; }
  cat "$beside_log"
  if [ -n "${LOCKSTEP_TALLY:-}" ]; then cat "$beside_tally" >> "$LOCKSTEP_TALLY"; fi
  rm -f "$beside_tally" "$beside_log"
}

tally_summary() { node "$ACCOUNTING_ROOT/scripts/tally.mjs" "$LOCKSTEP_TALLY"; }
