import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { createGitDriver, type GitDriver, type GitDriverOptions } from '../../src/core/stores/git/gitDriver';

/**
 * Real git for the git driver's tests: a bare remote and clones of it in a temporary folder, each
 * clone with its own identity (`clone-<i>`), as on a team's machines.
 */
export interface GitWorld {
  readonly remote: string;
  readonly clones: readonly string[];
}

/** Runs git synchronously for test set-up; returns stdout. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', env: gitEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Like {@link git}, with `input` on stdin. */
export function gitInput(dir: string, input: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', env: gitEnv(), input });
}

export function makeGitWorld(root: string, clones: number): GitWorld {
  const remote = path.join(root, 'remote.git');
  execFileSync('git', ['init', '--quiet', '--bare', remote], { env: gitEnv() });
  const dirs: string[] = [];
  for (let i = 0; i < clones; i++) {
    const dir = path.join(root, `clone-${i}`);
    execFileSync('git', ['clone', '--quiet', remote, dir], { env: gitEnv(), stdio: 'ignore' });
    git(dir, 'config', 'user.name', `clone-${i}`);
    git(dir, 'config', 'user.email', `clone-${i}@example.invalid`);
    dirs.push(dir);
  }
  return { remote, clones: dirs };
}

export function openGitDriver(
  clone: string,
  options: GitDriverOptions & { prefix?: string; remote?: string; timeoutMs?: number } = {},
): GitDriver {
  return createGitDriver(
    {
      gitDir: clone,
      gitRemote: options.remote ?? 'origin',
      prefix: options.prefix ?? 'lockstep-test',
      gitTimeoutMs: options.timeoutMs ?? 30_000,
    },
    options,
  );
}

/** Commits of a ref on the bare remote itself, newest first (independent of the driver). */
export function remoteLog(remote: string, ref: string): { sha: string; subject: string }[] {
  return git(remote, 'log', '--format=%H%x09%s', ref, '--')
    .split('\n')
    .filter(line => line !== '')
    .map(line => {
      const [sha, subject] = line.split('\t');
      return { sha, subject };
    });
}

function gitEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY']) delete env[name];
  return env;
}
