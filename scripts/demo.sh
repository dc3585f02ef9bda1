#!/usr/bin/env bash
# The main job: a real VS Code (code-server 4.139.1 = VS Code 1.139) in the browser, with the Lockstep extension
# installed, on a sample git repository made for the demo, on the default file driver, bound to 127.0.0.1.
# Does all of its own set-up, prints the URL and stays in the foreground; Ctrl-C stops it and removes what it made.
# Env: LOCKSTEP_DEMO_PORT (default 8080) · LOCKSTEP_DEMO_KEEP=1 keeps the demo folder.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${LOCKSTEP_DEMO_PORT:-8080}
say() { echo "[demo $(date +%T)] $*"; }
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

cache="${LOCKSTEP_CACHE:-$HOME/.cache/lockstep}/vscode-host"
# The same test as scripts/setup.sh: npm ci is skipped when its record of the install is newer than the lock file.
if [ -f "$cache/cs-1.139/.installed" ] && [ node_modules/.package-lock.json -nt package-lock.json ] && [ node_modules/.package-lock.json -nt package.json ]; then
  say "starting (everything is installed: about a minute)"
else
  say "first run: installs npm packages and builds code-server's native parts, about 15 minutes on a fresh 2-core"
  say "machine (each step says it is still running); later runs reuse $cache and node_modules and start in a minute"
fi
bash scripts/setup.sh demo
LOCKSTEP_HOST_NO_BROWSER=1 bash scripts/vscode-host/setup.sh 1.139
# shellcheck source=/dev/null
source "${LOCKSTEP_CACHE:-$HOME/.cache/lockstep}/vscode-host/env.sh"
port_in_use && { echo "Port $port on 127.0.0.1 is taken; choose another with LOCKSTEP_DEMO_PORT=…" >&2; exit 2; }

demo=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-demo-XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    say "stopping code-server"
    # code-server leads its own process group (setsid below): end the extension host and watchers with it.
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 -- "-$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$server_pid" 2>/dev/null || true
  fi
  if [ "${LOCKSTEP_DEMO_KEEP:-}" = 1 ]; then say "kept $demo"; else rm -rf "$demo"; say "removed $demo"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

say "building and packaging the extension"
# shellcheck source=scripts/progress.sh
source scripts/progress.sh
with_progress "demo: package" --out "$demo/package.log" npm run -s package -- --out "$demo/lockstep.vsix" || { tail -30 "$demo/package.log"; exit 1; }

say "creating a sample repository: a bare remote as origin and a clone that is a Lockstep container"
# Everything code-server writes stays in the demo folder; its extension host inherits LOCKSTEP_PATH (the store).
export LOCKSTEP_PATH="$demo/store" LOCKSTEP_DRIVER=file
unset LOCKSTEP_IDENTITY  # the identity is the clone's git user.email
mkdir -p "$LOCKSTEP_PATH"
remote="$demo/remote.git"
repo="$demo/sample-repo"
cli="$PWD/dist/cli.js"
lockstep() { node "$cli" "$@"; }
git init -q --bare --initial-branch=main "$remote"
git clone -q "$remote" "$repo" 2>/dev/null
git -C "$repo" symbolic-ref HEAD refs/heads/main
git -C "$repo" config user.email you@lockstep.demo
git -C "$repo" config user.name "You (Lockstep demo)"
mkdir -p "$repo/src"
printf '# Sample repository\n\nEdit anything here: the badge at the bottom left is Lockstep.\n' > "$repo/README.md"
printf 'export const greeting = "hello";\n' > "$repo/src/greeting.ts"
git -C "$repo" add -A
git -C "$repo" commit -q -m "Sample repository for the Lockstep demo"
# `lockstep init` writes .lockstep.json (a new container, you as its operator, main protected); it is committed
# and pushed like any file, and the pre-push guard goes into the clone.
(cd "$repo" && lockstep init > /dev/null && git add .lockstep.json && git commit -q -m "Lockstep container" &&
  git push -q -u origin main && lockstep hooks install > /dev/null)

# What code-server writes stays in the demo folder too.
export XDG_CONFIG_HOME="$demo/xdg/config" XDG_DATA_HOME="$demo/xdg/data" XDG_CACHE_HOME="$demo/xdg/cache"
export TMPDIR="$demo/tmp" EXTENSIONS_GALLERY='{}'
export PATH="${LOCKSTEP_CODE_SERVER_NODE_1_139:+$LOCKSTEP_CODE_SERVER_NODE_1_139:}$PATH"
mkdir -p "$TMPDIR" "$demo/user-data/User"
cat > "$demo/user-data/User/settings.json" <<'EOF'
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden"
}
EOF
code_server=("$LOCKSTEP_CODE_SERVER_1_139" --config "$demo/code-server.yaml" --user-data-dir "$demo/user-data" --extensions-dir "$demo/extensions")
"${code_server[@]}" --install-extension "$demo/lockstep.vsix" > "$demo/install-extension.log" 2>&1 ||
  { cat "$demo/install-extension.log"; exit 1; }

say "starting code-server on 127.0.0.1:$port"
setsid "${code_server[@]}" --bind-addr "127.0.0.1:$port" --auth none --disable-telemetry --disable-update-check \
  --disable-workspace-trust --disable-getting-started-override > "$demo/code-server.log" 2>&1 &
server_pid=$!
for _ in $(seq 300); do
  port_in_use && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$demo/code-server.log"; exit 1; }
  sleep 0.2
done
node -e 'fetch(process.argv[1]).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "http://127.0.0.1:$port/healthz" ||
  { cat "$demo/code-server.log"; exit 1; }

cat <<EOF

  Lockstep demo: VS Code with the Lockstep extension on a sample repository.

    Open   http://127.0.0.1:$port/?folder=$repo
    Store  $LOCKSTEP_PATH (file driver)    Remote  $remote (origin)    You  you@lockstep.demo

  The badge at the bottom left of the status bar is Lockstep: it reads Free. Edit a file and it reads
  "Held by me"; commit (Source Control, or git in the terminal), then run "Lockstep: Push and Release".
  Press Ctrl-C here to stop.

EOF
wait "$server_pid"
