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
  const port = await freePort();
  const child = spawn('git', ['daemon', '--reuseaddr', '--export-all', '--enable=receive-pack', '--listen=127.0.0.1', `--port=${port}`,
    `--base-path=${base}`, base], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base, GIT_CONFIG_NOSYSTEM: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: false,
  });
  let stderr = '';
  child.stderr?.on('data', chunk => { stderr += String(chunk); });
  const url = `git://127.0.0.1:${port}`;
  try {
    await waitFor(() => {
      if (child.exitCode !== null) throw new Error(`git daemon exited ${child.exitCode}: ${stderr}`);
      try {
        execFileSync('git', ['ls-remote', `${url}/remote.git`], { stdio: 'ignore', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
        return true;
      } catch {
        return false;
      }
    }, { timeoutMs: 15_000, intervalMs: 50, description: 'git daemon answering' });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { url, stop: () => { child.kill('SIGTERM'); } };
}
