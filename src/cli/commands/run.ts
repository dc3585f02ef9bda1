import { constants as osConstants } from 'node:os';
import crossSpawn from 'cross-spawn';
import { createLockManager, LockBusyError, LockConfigurationError, parseSeconds, parseTtlSeconds } from '../../core/application';
import { parseCommandArgs } from '../args';
import type { Command, CommandContext } from '../command';

/**
 * `lockstep run NAME [--ttl S] [--wait S] -- CMD ARG…`, in the manner of flock(1): acquire the
 * plain lease NAME, run CMD with LOCKSTEP_FENCING_TOKEN in its environment, release, and exit with
 * CMD's status (3 when the lease stayed busy). There is no automatic renewal (docs/leases.md#bounds): choose a
 * TTL longer than CMD runs.
 */
export const runCommand: Command = {
  name: 'run',
  summary: 'run a command under a plain lease (like flock)',
  help: `usage: lockstep run NAME [--ttl S] [--wait S] [--json] -- CMD [ARG…]

Acquires the lease NAME, runs CMD with LOCKSTEP_FENCING_TOKEN set to the lease's fencing token,
releases the lease and exits with CMD's exit status.

  --ttl S    lease length in whole seconds, 1–86400 (default 30); the lease is not renewed while CMD runs
  --wait S   how long to wait for a busy lease, 0–60 seconds, fractions allowed (default 0)

With --json, stdout carries only the one JSON object {status, fencingToken, released}; CMD's own
standard output goes to standard error.

Exit codes: CMD's status · 2 bad arguments or configuration · 3 the lease stayed busy ·
4 backend unavailable · 5 damaged record. The driver comes from LOCKSTEP_DRIVER, LOCKSTEP_PATH, … .`,

  async run(context: CommandContext): Promise<number> {
    const split = context.args.indexOf('--');
    if (split < 0)
      throw new LockConfigurationError('Give the command to run after `--`, e.g. lockstep run build -- make. See --help.', {
        setting: 'arguments',
      });
    const { values, positionals } = parseCommandArgs(
      context.args.slice(0, split),
      {
        ttl: { type: 'string' },
        wait: { type: 'string' },
      },
      true,
    );
    const command = context.args.slice(split + 1);
    if (positionals.length !== 1)
      throw new LockConfigurationError('Give exactly one lease name before `--`. See --help.', { setting: 'arguments' });
    if (command.length === 0) throw new LockConfigurationError('Give the command to run after `--`. See --help.', { setting: 'arguments' });
    const ttl = values.ttl === undefined ? 30 : parseTtlSeconds(values.ttl);
    const wait = values.wait === undefined ? 0 : parseSeconds(values.wait, 'wait');

    const manager = createLockManager({ env: context.env });
    try {
      const handle = await manager.acquire(positionals[0], { ttl, wait });
      if (!handle.acquired) {
        throw new LockBusyError(`The lease is held by another owner and stayed busy for the whole wait (${wait} s).`, wait);
      }
      let status: number;
      try {
        // With --json, stdout carries exactly one JSON object: CMD's own stdout goes to stderr.
        status = await spawnAndWait(
          command,
          { ...context.env, LOCKSTEP_FENCING_TOKEN: String(handle.fencingToken) },
          context.cwd,
          context.out.json,
        );
      } catch (error) {
        await handle.release().catch(() => undefined);
        throw error;
      }
      const released = await handle.release();
      if (!released) context.out.note('lockstep: the lease had expired before the command finished; use a longer --ttl.');
      context.out.result([], { status, fencingToken: handle.fencingToken, released });
      return status;
    } finally {
      await manager.close();
    }
  },
};

/**
 * Runs CMD with inherited stdio, forwarding SIGINT/SIGTERM; resolves with its exit status. CMD starts
 * through cross-spawn, which on Windows finds it with PATHEXT and runs a `.cmd`/`.bat` shim (`npm`,
 * `npx`, `tsc`) through `cmd.exe` with its arguments escaped: Node's own spawn fails there with ENOENT
 * by name and EINVAL by path (https://nodejs.org/en/blog/vulnerability/april-2024-security-releases-2).
 * Elsewhere it is Node's spawn, unchanged: no shell.
 */
function spawnAndWait(command: readonly string[], env: NodeJS.ProcessEnv, cwd: string, stdoutToStderr: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = crossSpawn(command[0], command.slice(1), { stdio: ['inherit', stdoutToStderr ? 2 : 'inherit', 'inherit'], env, cwd });
    const forward = (signal: NodeJS.Signals) => () => {
      child.kill(signal);
    };
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const cleanup = () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    };
    child.on('error', error => {
      cleanup();
      reject(
        new LockConfigurationError(
          `The command could not be started (${(error as NodeJS.ErrnoException).code ?? 'error'}); check its name and PATH.`,
          { setting: 'command', cause: error },
        ),
      );
    });
    child.on('close', (code, signal) => {
      cleanup();
      resolve(code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0));
    });
  });
}
