import * as fs from 'node:fs';
import * as path from 'node:path';
import { simpleGit } from 'simple-git';
import { LockConfigurationError } from '../errors';
import { CHAINED_SUFFIX, envFile, HOOK_MARKER, preReceiveHook, prePushHook, type HookPaths } from './hookScripts';

export interface InstalledHook {
  readonly hook: string;
  /** A hook that was there before and now runs first. */
  readonly chained: string | undefined;
  readonly updated: boolean;
}

/** The hooks folder git uses for this repository (honours core.hooksPath). */
async function hooksDir(repo: string): Promise<string> {
  const git = simpleGit({ baseDir: repo });
  const relative = (await git.raw(['rev-parse', '--git-path', 'hooks'])).trim();
  const bare = (await git.raw(['rev-parse', '--is-bare-repository'])).trim() === 'true';
  const base = bare ? repo : (await git.raw(['rev-parse', '--show-toplevel'])).trim();
  return path.resolve(base, relative);
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
  try { existing = fs.readFileSync(hook, 'utf8'); } catch { existing = undefined; }
  if (existing !== undefined && !existing.includes(HOOK_MARKER)) {
    if (fs.existsSync(chainedPath)) {
      throw new LockConfigurationError(`Both ${name} and ${name}${CHAINED_SUFFIX} exist in ${dir}; merge them by hand, then install again.`, { setting: 'hooks' });
    }
    fs.renameSync(hook, chainedPath);
    fs.chmodSync(chainedPath, fs.statSync(chainedPath).mode | 0o111);
  }
  fs.writeFileSync(hook, text, { mode: 0o755 });
  fs.chmodSync(hook, 0o755);
  return { hook, chained: fs.existsSync(chainedPath) ? chainedPath : undefined, updated: existing !== undefined && existing.includes(HOOK_MARKER) };
}

export async function installClientHooks(repo: string, paths: HookPaths): Promise<InstalledHook> {
  return writeHook(await hooksDir(repo), 'pre-push', prePushHook(paths));
}

/**
 * In a bare repository: the pre-receive guard, `receive.advertisePushOptions` so that clients may
 * send their proof, and lockstep.env with the backend settings the guard will need.
 */
export async function installServerHooks(repo: string, paths: HookPaths, env: Readonly<Record<string, string | undefined>>): Promise<InstalledHook> {
  const git = simpleGit({ baseDir: repo });
  if ((await git.raw(['rev-parse', '--is-bare-repository'])).trim() !== 'true') {
    throw new LockConfigurationError('hooks install --server belongs in the shared bare repository (the remote), not in a clone.', { setting: '--server' });
  }
  await git.raw(['config', 'receive.advertisePushOptions', 'true']);
  const dir = await hooksDir(repo);
  const installed = writeHook(dir, 'pre-receive', preReceiveHook(paths));
  fs.writeFileSync(path.join(dir, 'lockstep.env'), envFile(env), { mode: 0o600 });
  fs.chmodSync(path.join(dir, 'lockstep.env'), 0o600);
  return installed;
}

/**
 * Repairs this clone's Lockstep pre-push hook when the CLI it runs is gone (the extension that
 * installed it was updated, so its folder moved): rewrites it to run `paths.cli`. A working hook,
 * or a clone without our hook, is left alone. True when it rewrote.
 */
export async function repairClientHook(repo: string, paths: HookPaths): Promise<boolean> {
  const hook = path.join(await hooksDir(repo), 'pre-push');
  let text: string;
  try { text = fs.readFileSync(hook, 'utf8'); } catch { return false; }
  if (!text.includes(HOOK_MARKER)) return false;
  const installedCli = /^cli=\$\{LOCKSTEP_CLI:-'((?:[^']|'\\'')*)'\}$/m.exec(text)?.[1]?.replace(/'\\''/g, "'");
  if (installedCli === undefined || fs.existsSync(installedCli)) return false;
  await installClientHooks(repo, paths);
  return true;
}
