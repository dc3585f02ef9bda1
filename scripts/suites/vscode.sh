#!/usr/bin/env bash
# The VS Code suite: the extension's tests inside the real extension host of both pinned hosts (VS Code 1.100 and
# 1.139, see scripts/vscode-host/setup.sh) and the UI tests through Chromium on the newest. Installs the hosts
# itself (cached outside the project), packages the .vsix the UI tests install, and appends one tally line per
# runner: vscode-ext@1.100, vscode-ext@1.139, vscode-ext-untrusted@1.139 (workspace trust on, the folder untrusted),
# vscode-ui:<test>@1.139. `npm run test:electron` is separate (it needs a VS Code download these machines cannot
# make). Env: LOCKSTEP_VSCODE_UI_HOSTS (default "newest").
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/accounting.sh
source scripts/accounting.sh
started=$SECONDS
say() { echo "[vscode-suite $(date +%T)] $*"; }
broken() { # broken STEP WHY: counts a step that stopped the suite before its runners could report
  say "FAILED: $1: $2"
  tally_line "vscode-$1" 0 1 0 "$2"
  exit 1
}

say "installing the VS Code hosts (cached)"
bash scripts/vscode-host/setup.sh all || broken setup "scripts/vscode-host/setup.sh failed"
# shellcheck source=/dev/null
source "${LOCKSTEP_CACHE:-$HOME/.cache/lockstep}/vscode-host/env.sh"

say "building and packaging the extension"
version=$(node -p 'require("./package.json").version')
vsix="test-artifacts/lockstep-$version.vsix"
mkdir -p test-artifacts
t=$SECONDS
npm run -s package -- --out "$vsix" > test-artifacts/vsce-package.log 2>&1 || { tail -30 test-artifacts/vsce-package.log; broken package "npm run package failed"; }
say "packaged $vsix ($(du -k "$vsix" | cut -f1) KB) in $((SECONDS - t)) s"

failed=0
for host in $LOCKSTEP_VSCODE_HOSTS; do
  say "extension tests in VS Code $host"
  run_reported "vscode-ext@$host" node test/vscode/harness/runExtensionTests.mjs --host "$host" || failed=1
done
newest=$(printf '%s\n' $LOCKSTEP_VSCODE_HOSTS | sort -t. -k2 -n | tail -1)
say "extension tests in an untrusted folder (restricted mode) in VS Code $newest"
run_reported "vscode-ext-untrusted@$newest" node test/vscode/harness/runExtensionTests.mjs --host "$newest" --untrusted 1 || failed=1
for host in ${LOCKSTEP_VSCODE_UI_HOSTS:-newest}; do
  say "UI tests in VS Code $host"
  for test in test/vscode/ui/*.ui.mjs; do
    run_reported "vscode-ui:$(basename "$test" .ui.mjs)@$host" node "$test" --host "$host" --vsix "$vsix" || failed=1
  done
done
say "done in $((SECONDS - started)) s; screenshots in test-artifacts/screenshots/"
exit $failed
