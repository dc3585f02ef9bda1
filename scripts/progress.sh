#!/usr/bin/env bash
# Sourced by the set-up scripts: a step that can take minutes says that it is still running.
#
#   with_progress LABEL [--out FILE] CMD [ARG…]
#       runs CMD (its output to FILE when given: /dev/null to drop it); every LOCKSTEP_PROGRESS_SECONDS (default
#       15) it prints "[LABEL] still running: 1 min 45 s", then "[LABEL] done in 2 min 3 s"; returns CMD's exit
#       status. The progress lines go to standard error, so they show even where standard output is a log.
progress_elapsed() { local s=$1; if [ "$s" -ge 60 ]; then echo "$((s / 60)) min $((s % 60)) s"; else echo "$s s"; fi; }

with_progress() {
  local label=$1 out=''; shift
  if [ "${1:-}" = --out ]; then out=$2; shift 2; fi
  local every=${LOCKSTEP_PROGRESS_SECONDS:-15} started=$SECONDS next pid rc
  next=$((SECONDS + every))
  if [ -n "$out" ]; then "$@" > "$out" 2>&1 & else "$@" & fi
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ "$SECONDS" -ge "$next" ] && kill -0 "$pid" 2>/dev/null; then
      echo "[$label] still running: $(progress_elapsed $((SECONDS - started)))" >&2
      next=$((SECONDS + every))
    fi
  done
  wait "$pid"; rc=$?
  [ "$rc" -eq 0 ] && echo "[$label] done in $(progress_elapsed $((SECONDS - started)))" >&2
  return "$rc"
}
