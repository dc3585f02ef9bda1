/**
 * The text of the git hooks Lockstep installs. Pure: paths in, script out. Each hook runs a hook
 * that was there before (kept as `<hook>.lockstep-chained`) with the same input first, then the
 * guard. The client hook takes Node from the hook's PATH, else from where it was at install time;
 * the server hook uses only the paths fixed at install time. Both decide in sh, first, whether the
 * push can concern Lockstep at all; a push that cannot (the common case) starts no Node process.
 */

export const HOOK_MARKER = '# lockstep-managed-hook v1';

/** Reads the hook's standard input into $input with shell built-ins only (as `$(cat)` would, without a process). */
const READ_INPUT = `input=
while IFS= read -r line || [ -n "$line" ]; do input="\${input:+$input
}$line"; done`;
export const CHAINED_SUFFIX = '.lockstep-chained';
/** Every lock ref of every driver lives below this root (stores/git/gitRefs.ts). */
export const LOCK_REF_ROOT = 'refs/lockstep/';

/** A single-quoted sh word: exactly `text`, whatever it holds. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface HookPaths {
  /** Node at install time (used when `node` is not on the hook's PATH). */
  readonly node: string;
  /** Absolute path of Lockstep's dist/cli.js. */
  readonly cli: string;
}

/** Client side: the user's own `node` first (their toolchain), else the one seen at install time. */
function findNode(paths: HookPaths): string {
  // The one seen at install time may be VS Code's own binary (Electron): it runs a script only as Node.
  return `node_bin=$(command -v node 2>/dev/null) || { node_bin=${shellQuote(paths.node)}; ELECTRON_RUN_AS_NODE=1; export ELECTRON_RUN_AS_NODE; }
if ! [ -x "$node_bin" ]; then
  echo "lockstep: node was not found, so the fencing guard cannot run and the push is refused. Install Node.js or run lockstep hooks install again." >&2
  exit 1
fi
cli=\${LOCKSTEP_CLI:-${shellQuote(paths.cli)}}
${cliPresent()}`;
}

/** The CLI moves when the extension or package that installed the hook is updated: say so plainly. */
function cliPresent(): string {
  return `if ! [ -f "$cli" ]; then
  echo "lockstep: the fencing guard's command line ($cli) is gone (updated or removed), so the push is refused. Run lockstep hooks install again, or Lockstep: Install Git Hooks in VS Code." >&2
  exit 1
fi`;
}

/**
 * Server side: only what was fixed at install time. Over a local-path remote the pusher's own
 * environment reaches this hook, so PATH and LOCKSTEP_CLI must not be able to swap the guard out.
 */
function pinnedNode(paths: HookPaths): string {
  return `node_bin=${shellQuote(paths.node)}
ELECTRON_RUN_AS_NODE=1; export ELECTRON_RUN_AS_NODE
if ! [ -x "$node_bin" ]; then
  echo "lockstep: the node this guard was installed with (${paths.node.replace(/[`$"\\]/g, '')}) is gone, so every protected push is refused. Run lockstep hooks install --server again." >&2
  exit 1
fi
cli=${shellQuote(paths.cli)}
${cliPresent()}`;
}

/**
 * The client hook searches `.lockstep.json` in sh only up to this size and this many lines (a real
 * one is under 2 KiB and 250 lines): the work stays small however the file was made, and a larger
 * file goes to the guard (which refuses one past 64 KiB).
 */
export const SKIP_MAX_SETTINGS_BYTES = 16 * 1024;
export const SKIP_MAX_SETTINGS_LINES = 512;

/**
 * Client side, in sh: true (exit 0) only when the Node guard would certainly let the push through
 * without reading anything — the folder is no container, or no pushed ref names a protected branch
 * of the committed .lockstep.json and the clone holds no push proof (whose leak the guard checks on
 * any push). The settings are searched, not parsed: a file with any backslash (a JSON escape could
 * spell a branch name) always goes to the guard, and otherwise a branch is protected only if its
 * name appears quoted in the file (protected names never need escaping; an invalid file goes to
 * the guard whenever a pushed name appears in it). The search is bounded: only a regular file (not
 * a symbolic link — one to /dev/zero never ends — nor a FIFO) of at most
 * {@link SKIP_MAX_SETTINGS_BYTES} and {@link SKIP_MAX_SETTINGS_LINES} lines is searched; anything
 * else goes to the guard, which refuses what is not a container's settings, as it refuses a file without the
 * `"protectedBranches"` key every container's file has (an empty or garbled one). A work tree without the file is no
 * container unless the default branch the clone fetched (`origin/HEAD`) commits one: then the guard runs and reads
 * that. Only shell built-ins, plus `wc -c` (the size, before anything is read), one git rev-parse in a linked
 * worktree, and one git cat-file where the work tree has no `.lockstep.json`.
 */
const CLIENT_SKIP = `lockstep_skip() {
  if [ -z "\${GIT_DIR:-}" ] && [ -d .git ]; then common_dir=.git; else common_dir=$(git rev-parse --git-common-dir 2>/dev/null) || return 1; fi
  ! [ -e "$common_dir/lockstep/push.config" ] || return 1
  if ! [ -e .lockstep.json ] && ! [ -L .lockstep.json ]; then
    # No settings in this work tree (a branch from before the container, or the file removed): a container's clone
    # all the same when the default branch it fetched commits them; the guard reads those.
    git cat-file -e refs/remotes/origin/HEAD:.lockstep.json 2>/dev/null && return 1
    return 0
  fi
  [ -f .lockstep.json ] && ! [ -L .lockstep.json ] || return 1
  settings_size=$(wc -c < .lockstep.json 2>/dev/null) || return 1
  case $settings_size in *[!0-9[:space:]]* | '') return 1 ;; esac
  [ $settings_size -le ${SKIP_MAX_SETTINGS_BYTES} ] || return 1
  settings=
  settings_lines=0
  while IFS= read -r line || [ -n "$line" ]; do
    settings_lines=$((settings_lines + 1))
    [ $settings_lines -le ${SKIP_MAX_SETTINGS_LINES} ] || return 1
    settings="$settings$line "
  done < .lockstep.json || return 1
  case $settings in *\\\\*) return 1 ;; esac
  # Settings without the key every container's file has (empty, garbled) are no container's: the guard refuses them.
  case $settings in *'"protectedBranches"'*) ;; *) return 1 ;; esac
  while read -r _local _sha remote_ref _rest; do
    case $remote_ref in refs/heads/*) ;; *) continue ;; esac
    case $settings in *"\\"\${remote_ref#refs/heads/}\\""*) return 1 ;; esac
  done <<LOCKSTEP_REFS
$input
LOCKSTEP_REFS
  return 0
}
if lockstep_skip; then exit 0; fi`;

export function prePushHook(paths: HookPaths): string {
  return `#!/bin/sh
${HOOK_MARKER}
# Lockstep's fencing guard: refuses a push to a protected branch unless this clone holds the live
# lease and the current grant. Installed by \`lockstep hooks install\`; a previous pre-push hook
# runs first from pre-push${CHAINED_SUFFIX}.
${READ_INPUT}
if [ -x "$0${CHAINED_SUFFIX}" ]; then
  printf '%s\\n' "$input" | "$0${CHAINED_SUFFIX}" "$@" || exit $?
fi
${CLIENT_SKIP}
${findNode(paths)}
# The guard reads the arguments of the git push that runs this hook (to see --signed and the like).
LOCKSTEP_GIT_PUSH_PID=$PPID
export LOCKSTEP_GIT_PUSH_PID
printf '%s\\n' "$input" | "$node_bin" "$cli" guard pre-push "$@"
`;
}

export interface ServerHookPaths extends HookPaths {
  /** The pinned settings beside the hook (lockstep-server.json). */
  readonly settings: string;
  /** PATH at install time: git and whatever it needs, never the pusher's. */
  readonly path: string;
  /** The pinned protected branches, baked into the script so that other pushes start no Node. */
  readonly protectedBranches: readonly string[];
}

/**
 * An sh pattern for `text` in any case (`main` → `[mM][aA][iI][nN]`): on a server whose filesystem
 * ignores case (macOS, Windows) `refs/heads/Main` is main, and the guard (refRules.ts) decides that;
 * here a name that may fold to a protected one only goes to the guard. A character outside ASCII
 * becomes `*` (folding there is the filesystem's own), so the pattern only ever matches more.
 */
export function anyCaseGlob(text: string): string {
  return [...text]
    .map(c => {
      if (/[A-Za-z]/.test(c)) return `[${c.toLowerCase()}${c.toUpperCase()}]`;
      if (c.charCodeAt(0) > 0x7e) return '*';
      return shellQuote(c);
    })
    .join('');
}

/**
 * Server side, in sh: true (exit 0) only when the guard's rules (src/core/guard/refRules.ts) pass
 * every pushed ref without reading anything: no ref is a pinned protected branch or under the
 * lock-ref root in any case ({@link anyCaseGlob}), git says of each pushed ref that it is no symbolic ref on the server (an alias of
 * either, even of a branch that does not exist yet) — any other answer of git, or no git, runs the
 * guard — and the pinned settings are there (without them the guard refuses every push). The branches are
 * the pinned ones, baked in: `hooks install --server` rewrites this script with the settings.
 */
function serverSkip(paths: ServerHookPaths): string {
  const protectedRefs = paths.protectedBranches.map(b => anyCaseGlob(`refs/heads/${b}`));
  return `lockstep_skip() {
  [ -f ${shellQuote(paths.settings)} ] || return 1
  while read -r _old _new ref _rest; do
    case $ref in ${[`${anyCaseGlob(LOCK_REF_ROOT)}*`, ...protectedRefs].join(' | ')}) return 1 ;; esac
    # A symbolic ref may lead to a protected branch, even one that does not exist yet. Only git's own
    # "not a symbolic ref" (exit 1) lets the push pass here: git missing or failing runs the guard.
    git symbolic-ref -q --end-of-options "$ref" >/dev/null 2>&1
    [ $? -eq 1 ] || return 1
  done <<LOCKSTEP_REFS
$input
LOCKSTEP_REFS
  return 0
}
if lockstep_skip; then exit 0; fi`;
}

/**
 * Server side: the pinned PATH must find git, or nothing can be checked (a PATH in Windows form,
 * which sh cannot search, or git moved by an upgrade). Every push is refused then, with what to do,
 * before the fast path could read git's failure as an answer.
 */
function pinnedGit(paths: ServerHookPaths): string {
  return `if ! command -v git >/dev/null 2>&1; then
  printf '%s\\n' "lockstep: git cannot be found on the PATH this guard was installed with ("${shellQuote(paths.path)}"), so every push is refused. Run lockstep hooks install --server again from a shell where git runs (on Windows, Git Bash)." >&2
  exit 1
fi`;
}

/**
 * Variables with which whoever runs node can make it run other code (`NODE_OPTIONS=--require=…`,
 * `--import`, a loader; `NODE_PATH`; an OpenSSL configuration that loads an engine) or weaken it
 * (`NODE_TLS_REJECT_UNAUTHORIZED`). Over a local-path remote the server hook inherits the pusher's
 * environment, so they are cleared before the guard's node starts. NODE_EXTRA_CA_CERTS only adds
 * trusted certificates and is left alone.
 */
export const NODE_CODE_VARIABLES = [
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'NODE_PRESERVE_SYMLINKS',
  'NODE_ICU_DATA',
  'NODE_COMPILE_CACHE',
  'NODE_V8_COVERAGE',
  'NODE_REDIRECT_WARNINGS',
  'NODE_DEBUG',
  'NODE_DEBUG_NATIVE',
  'NODE_PENDING_DEPRECATION',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'OPENSSL_CONF',
  'OPENSSL_ENGINES',
  'OPENSSL_MODULES',
] as const;

const CLEAR_NODE_VARIABLES = `# Nothing of the pusher's environment may make the guard's node run other code.
unset ${NODE_CODE_VARIABLES.join(' ')}`;

export function preReceiveHook(paths: ServerHookPaths): string {
  return `#!/bin/sh
${HOOK_MARKER}
# Lockstep's server-side fence: refuses an update of a protected branch whose push does not prove
# the current, live grant, and any update of a lock ref that is not one legal transition. It
# decides with the settings pinned at install time (lockstep-server.json beside this hook) and
# ignores the pusher's LOCKSTEP_* variables. Installed by \`lockstep hooks install --server\`.
${READ_INPUT}
if [ -x "$0${CHAINED_SUFFIX}" ]; then
  printf '%s\\n' "$input" | "$0${CHAINED_SUFFIX}" "$@" || exit $?
fi
PATH=${shellQuote(paths.path)}
export PATH
${pinnedGit(paths)}
${serverSkip(paths)}
${CLEAR_NODE_VARIABLES}
${pinnedNode(paths)}
printf '%s\\n' "$input" | "$node_bin" "$cli" guard pre-receive --settings ${shellQuote(paths.settings)}
`;
}
