import { execFileSync, spawn } from 'node:child_process';
import { freePort } from './freePort';
import { waitFor } from './waitFor';

/**
 * `git daemon --enable=receive-pack` serving every repository under a folder on a free loopback
 * port, started with a minimal environment: its hooks run with the daemon's environment, never a
 * pusher's, as on a real server.
 */
export interface GitDaemon {
  /** `git://127.0.0.1:PORT` (append `/<repo>.git`). */
  readonly url: string;
  stop(): void;
}

export async function startGitDaemon(base: string): Promise<GitDaemon> {
  // The free port can be taken by another process between the probe and the daemon's bind (test files run side by
  // side): a daemon that exits before it answers is started again on a new port, twice at most.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort(base);
    } catch (error) {
      if (!(error instanceof DaemonExited) || attempt === 3) throw error;
    }
  }
}

class DaemonExited extends Error {}

async function startOnFreePort(base: string): Promise<GitDaemon> {
  const port = await freePort();
  const child = spawn(
    'git',
    ['daemon', '--reuseaddr', '--export-all', '--enable=receive-pack', '--listen=127.0.0.1', `--port=${port}`, `--base-path=${base}`, base],
    {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base, GIT_CONFIG_NOSYSTEM: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: false,
    },
  );
  let stderr = '';
  child.stderr?.on('data', chunk => {
    stderr += String(chunk);
  });
  const url = `git://127.0.0.1:${port}`;
  try {
    await waitFor(
      () => {
        if (child.exitCode !== null) throw new DaemonExited(`git daemon exited ${child.exitCode}: ${stderr}`);
        try {
          execFileSync('git', ['ls-remote', `${url}/remote.git`], { stdio: 'ignore', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 15_000, intervalMs: 50, description: 'git daemon answering' },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    stop: () => {
      child.kill('SIGTERM');
    },
  };
}
