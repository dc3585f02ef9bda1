#!/usr/bin/env bash
# The lint suite: `biome ci` over every source biome.jsonc selects — the formatter's check and the linter. Any
# finding fails it: an error, a warning or an info (Biome itself exits non-zero on errors and, with
# --error-on-warnings, on warnings; infos are counted from its JSON report). Ends with one tally line (runner
# `lint`, scripts/accounting.sh): passed 1, or failed 1 with the counts. `npm run format` fixes what is only format.
# LOCKSTEP_BIOME names another Biome binary (default: the project's node_modules/.bin/biome).
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh

biome=${LOCKSTEP_BIOME:-node_modules/.bin/biome}
if [ ! -x "$biome" ]; then
  tally_line lint 0 1 0 "Biome is not installed ($biome): run npm ci"
  exit 1
fi

report=$(mktemp)
trap 'rm -f "$report"' EXIT
"$biome" ci --error-on-warnings --reporter=default --reporter=json --reporter-file="$report" .
rc=$?

# errors warnings infos files, from the JSON report; nothing when Biome wrote none (a broken configuration).
read -r errors warnings infos files < <(node -e '
  try {
    const { summary: s } = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(s.errors, s.warnings, s.infos, s.changed + s.unchanged);
  } catch { console.log(""); }' "$report")

if [ -z "${errors:-}" ]; then
  tally_line lint 0 1 0 "biome ci exited $rc without a report: check biome.jsonc"
  exit 1
fi
if [ "$rc" -ne 0 ] || [ "$errors" -gt 0 ] || [ "$warnings" -gt 0 ] || [ "$infos" -gt 0 ]; then
  tally_line lint 0 1 0 "biome ci: $errors errors, $warnings warnings, $infos infos in $files files (every format difference is an error: npm run format fixes those)"
  exit 1
fi
tally_line lint 1 0 0 "biome ci: $files files formatted and lint-free"
