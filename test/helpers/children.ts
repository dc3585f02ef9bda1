import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { DEFAULT_COMMAND_TIMEOUT_MS, MAX_GIT_TIMEOUT_SECONDS } from '../../src/core/config';
import { scaled, scaledSeconds } from './calibration';

/** The repository root, for spawning TypeScript entry points with tsx. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/**
 * Node arguments that run a TypeScript file directly. The ESM hook is needed too: core loads
 * drivers with dynamic `import()`, which plain `-r tsx/cjs` cannot resolve.
 */
export const TSX_NODE_ARGS = ['--import', 'tsx'];

/**
 * `node` arguments for a container grant in the clone `cwd` that lapses `lapseMs` from now (lapsingGrant.ts);
 * run from the repository root with the CLI's environment, it prints one JSON line. `lapseMs` is chosen on an
 * unloaded machine, and is often the time a story needs to act before the lapse (land, heartbeat): it is scaled
 * by the run's slowdown factor like every deadline (test/helpers/calibration.ts), up to the lease's 59 s.
 */
export function lapsingGrantArgv(cwd: string, lapseMs: number): string[] {
  const lapse = Math.min(59_000, scaled(lapseMs));
  return [...TSX_NODE_ARGS, path.join(REPO_ROOT, 'test', 'helpers', 'lapsingGrant.ts'), '--cwd', cwd, '--lapse-ms', String(lapse)];
}

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment of a child: the parent's without any LOCKSTEP_* variable (so the developer's own
 * settings cannot leak into a test), plus `extra`. On a loaded machine (slowdown factor above 1) the git
 * driver's per-command timeout, a real deadline of 5 s by default, is scaled like every other deadline
 * (LOCKSTEP_GIT_TIMEOUT_SECONDS; `extra` may set its own, as the tests of the timeout do).
 */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LOCKSTEP_')) env[k] = v;
  const gitTimeout = scaledSeconds(DEFAULT_COMMAND_TIMEOUT_MS / 1000);
  if (gitTimeout > DEFAULT_COMMAND_TIMEOUT_MS / 1000)
    env.LOCKSTEP_GIT_TIMEOUT_SECONDS = String(Math.min(gitTimeout, MAX_GIT_TIMEOUT_SECONDS));
  return { ...env, ...extra };
}

/** The LOCKSTEP_* environment of the file driver in `store` under namespace `prefix`. */
export function fileDriverEnv(store: string, prefix: string): Record<string, string> {
  return { LOCKSTEP_DRIVER: 'file', LOCKSTEP_PATH: store, LOCKSTEP_PREFIX: prefix };
}

/** Starts `node -r tsx/cjs <script> ...args` from the repository root. */
export function spawnTs(script: string, args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...TSX_NODE_ARGS, path.resolve(REPO_ROOT, script), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Collects a child's output and resolves when it exits; kills it (SIGKILL) and rejects past `timeoutMs`. */
export function finished(child: ChildProcess, timeoutMs = 60_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child ${child.pid} did not exit within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    child.on('error', error => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Runs a TypeScript entry point to completion. */
export function runTs(script: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<Finished> {
  return finished(spawnTs(script, args, env), timeoutMs);
}

/** Resolves with the first stdout line of `child` that parses as JSON; rejects if the child exits first. */
export function firstJsonLine<T>(child: ChildProcess, timeoutMs = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no JSON line from child ${child.pid} within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const value = JSON.parse(line) as T;
          cleanup();
          resolve(value);
          return;
        } catch {
          /* not JSON: keep reading */
        }
      }
    };
    const onErr = (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`child exited (${code}) before printing JSON; stderr: ${stderr}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onErr);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onErr);
    child.on('exit', onExit);
  });
}

/** SIGKILLs a child and resolves once it is gone. */
export function killHard(child: ChildProcess): Promise<void> {
  return new Promise(resolve => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
