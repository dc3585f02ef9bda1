import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomically } from '../atomicReplace';
import { LockConfigurationError } from '../errors';
import { gitIn } from '../git/runner';
import { CONTAINER_FILE, MAX_CONTAINER_FILE_BYTES } from '../container/containerFile';
import { newServerSettings, parseServerSettings, SERVER_SETTINGS_FILE, type ServerSettings } from '../guard/serverSettings';
import { CHAINED_SUFFIX, HOOK_MARKER, preReceiveHook, prePushHook, type HookPaths } from './hookScripts';

export interface InstalledHook {
  readonly hook: string;
  /** A hook that was there before and now runs first. */
  readonly chained: string | undefined;
  readonly updated: boolean;
}

/** The hooks folder git uses for this repository (honours core.hooksPath). */
async function hooksDir(repo: string): Promise<string> {
  const git = gitIn(repo);
  const relative = (
    await git.raw(['rev-parse', '--git-path', 'hooks']).catch(cause => {
      throw notARepository(cause);
    })
  ).trim();
  const bare = (await git.raw(['rev-parse', '--is-bare-repository'])).trim() === 'true';
  const base = bare ? repo : (await git.raw(['rev-parse', '--show-toplevel'])).trim();
  return path.resolve(base, relative);
}

/** Hooks belong to a repository: run outside one, say where to run instead (exit 2, not an internal error). */
function notARepository(cause: unknown): LockConfigurationError {
  return new LockConfigurationError(
    'This folder is not inside a git repository, so there is nowhere to install a hook. Run lockstep hooks install in a clone' +
      ' of the container (or pass --cwd CLONE), and lockstep hooks install --server in the shared bare repository.',
    { setting: 'cwd', cause },
  );
}

/**
 * Writes one hook. Idempotent: our own hook is rewritten in place; anybody else's hook is kept,
 * renamed to `<hook>.lockstep-chained`, and runs first.
 */
function writeHook(dir: string, name: string, text: string): InstalledHook {
  fs.mkdirSync(dir, { recursive: true });
  const hook = path.join(dir, name);
  const chainedPath = hook + CHAINED_SUFFIX;
  let existing: string | undefined;
  try {
    existing = fs.readFileSync(hook, 'utf8');
  } catch {
    existing = undefined;
  }
  if (existing !== undefined && !existing.includes(HOOK_MARKER)) {
    if (fs.existsSync(chainedPath)) {
      throw new LockConfigurationError(
        `Both ${name} and ${name}${CHAINED_SUFFIX} exist in ${dir}; merge them by hand, then install again.`,
        { setting: 'hooks' },
      );
    }
    fs.renameSync(hook, chainedPath);
    fs.chmodSync(chainedPath, fs.statSync(chainedPath).mode | 0o111);
  }
  fs.writeFileSync(hook, text, { mode: 0o755 });
  fs.chmodSync(hook, 0o755);
  return { hook, chained: fs.existsSync(chainedPath) ? chainedPath : undefined, updated: existing?.includes(HOOK_MARKER) === true };
}

export async function installClientHooks(repo: string, paths: HookPaths): Promise<InstalledHook> {
  return writeHook(await hooksDir(repo), 'pre-push', prePushHook(paths));
}

export interface ServerInstallOptions {
  /** The branch whose committed .lockstep.json is pinned (default: the repository's HEAD branch). */
  readonly branch?: string;
  /** Require the proof of the live grant on protected pushes (default: the committed serverGuard). */
  readonly requireProof?: boolean;
  /** What only the server knows: the file driver's folder, URLs with credentials. */
  readonly store?: ServerSettings['store'];
  readonly skewSeconds?: number;
  readonly pushers?: ServerSettings['pushers'];
  /** PATH pinned into the hook (git and what it needs). */
  readonly path: string;
}

/**
 * In a bare repository: pins the guard's settings (`lockstep-server.json`, mode 0600: it may hold
 * credentials) from a branch's committed `.lockstep.json`, writes the pre-receive guard that reads
 * only them, and sets `receive.advertisePushOptions` so that clients may send their proof. An
 * unreadable `.lockstep.json` stops the install: the guard never runs on guessed settings.
 */
export async function installServerHooks(
  repo: string,
  paths: HookPaths,
  options: ServerInstallOptions,
): Promise<InstalledHook & { settings: ServerSettings; settingsFile: string }> {
  const git = gitIn(repo);
  await git.raw(['rev-parse', '--git-dir']).catch(cause => {
    throw notARepository(cause);
  });
  if (!(await isBareRepository(repo))) {
    throw new LockConfigurationError('hooks install --server belongs in the shared bare repository (the remote), not in a clone.', {
      setting: '--server',
    });
  }
  const branch = options.branch ?? (await git.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '')).trim();
  const commit = (
    await git.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`]).catch(() => '')
  ).trim();
  if (!branch || !commit) {
    throw new LockConfigurationError(
      `The branch ${branch || '(HEAD)'} does not exist in this repository; push the container's first commits with ${CONTAINER_FILE}, or name the branch with --branch.`,
      { setting: '--branch' },
    );
  }
  const entry = (await git.raw(['ls-tree', '-l', '--end-of-options', commit, '--', CONTAINER_FILE]).catch(() => '')).trim();
  if (!entry) {
    throw new LockConfigurationError(
      `${branch} has no committed ${CONTAINER_FILE}; push the container's settings first (lockstep init, commit, push), then install.`,
      { setting: CONTAINER_FILE },
    );
  }
  if (!entry.startsWith('100644 blob') && !entry.startsWith('100755 blob')) {
    throw new LockConfigurationError(
      `${CONTAINER_FILE} on ${branch} is not a regular file (a symbolic link?); commit the file itself, then install.`,
      { setting: CONTAINER_FILE },
    );
  }
  // `ls-tree -l`: mode, type, id, size. A blob past the cap is refused before it is read.
  if (!(Number(entry.split(/\s+/)[3]) <= MAX_CONTAINER_FILE_BYTES)) {
    throw new LockConfigurationError(
      `${CONTAINER_FILE} on ${branch} is larger than ${MAX_CONTAINER_FILE_BYTES / 1024} KiB, which no container's settings need; commit the settings themselves, then install.`,
      { setting: CONTAINER_FILE },
    );
  }
  const text = await git.raw(['cat-file', 'blob', '--end-of-options', `${commit}:${CONTAINER_FILE}`]);
  const settings = newServerSettings(
    text,
    { branch, commit },
    {
      ...(options.requireProof !== undefined ? { requireProof: options.requireProof } : {}),
      ...(options.store ? { store: options.store } : {}),
      ...(options.skewSeconds !== undefined ? { skewSeconds: options.skewSeconds } : {}),
      ...(options.pushers ? { pushers: options.pushers } : {}),
    },
  );
  await git.raw(['config', 'receive.advertisePushOptions', 'true']);
  const dir = await hooksDir(repo);
  fs.mkdirSync(dir, { recursive: true });
  const settingsFile = path.join(dir, SERVER_SETTINGS_FILE);
  writeFileAtomically(
    settingsFile,
    `${JSON.stringify(settings, null, 2)}\n`,
    `The server guard's pinned settings (${SERVER_SETTINGS_FILE})`,
  );
  // The environment file of earlier versions held credentials and is read no more.
  fs.rmSync(path.join(dir, 'lockstep.env'), { force: true });
  const installed = writeHook(
    dir,
    'pre-receive',
    preReceiveHook({ ...paths, settings: settingsFile, path: options.path, protectedBranches: settings.file.protectedBranches }),
  );
  return { ...installed, settings, settingsFile };
}

/** The pinned settings of the server guard in this bare repository; undefined when none are installed. */
export async function readServerSettings(repo: string): Promise<ServerSettings | undefined> {
  const file = path.join(await hooksDir(repo), SERVER_SETTINGS_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  return parseServerSettings(text);
}

/** Whether this repository is bare (a shared remote) rather than a clone. */
export async function isBareRepository(repo: string): Promise<boolean> {
  return (
    (
      await gitIn(repo)
        .raw(['rev-parse', '--is-bare-repository'])
        .catch(() => '')
    ).trim() === 'true'
  );
}

/**
 * Repairs this clone's Lockstep pre-push hook when the CLI it runs is gone (the extension that
 * installed it was updated, so its folder moved): rewrites it to run `paths.cli`. A working hook,
 * or a clone without our hook, is left alone. True when it rewrote.
 */
export async function repairClientHook(repo: string, paths: HookPaths): Promise<boolean> {
  const hook = path.join(await hooksDir(repo), 'pre-push');
  let text: string;
  try {
    text = fs.readFileSync(hook, 'utf8');
  } catch {
    return false;
  }
  if (!text.includes(HOOK_MARKER)) return false;
  const installedCli = /^cli=\$\{LOCKSTEP_CLI:-'((?:[^']|'\\'')*)'\}$/m.exec(text)?.[1]?.replace(/'\\''/g, "'");
  if (installedCli === undefined || fs.existsSync(installedCli)) return false;
  await installClientHooks(repo, paths);
  return true;
}

/** Whether this clone's pre-push hook is Lockstep's (the walkthrough's "install the hooks" step). */
export async function hasClientHook(repo: string): Promise<boolean> {
  try {
    return fs.readFileSync(path.join(await hooksDir(repo), 'pre-push'), 'utf8').includes(HOOK_MARKER);
  } catch {
    return false;
  }
}
