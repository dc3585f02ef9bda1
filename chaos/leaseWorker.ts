/**
 * One chaos worker for plain leases (issue 15): races for random names until it is killed.
 *
 *   node leaseWorker.js --names a,b,c   (chaos/run.ts bundles this file once per run)
 *         --log FILE --ttl S --wait S [--git-dir CLONE]
 *
 * The driver comes from the LOCKSTEP_* environment only. Each critical section writes an `enter` line
 * (name, fencing token, start, the lease's expiry, pid) before its work and an `exit` line (end) after it,
 * both appended synchronously, so the log keeps everything up to the instant of a SIGKILL; a `want` line (name,
 * instant) precedes every attempt, so the checker knows who was waiting for a name. Every error
 * is logged with its class and code (never its message, which may name a backend).
 *
 * Before its first `want`, a worker makes one round trip to the backend (a try of a name outside the race), so
 * that `want` means "ready to claim": a fresh worker's first acquire also loads the client library, connects and
 * authenticates, which took 0.5–4.5 s on MariaDB and PostgreSQL on a loaded 2-core machine (median 1 s, against
 * 20–30 ms for later attempts). Counted from a `want` written before that, a killed holder's name looked blocked
 * by the newcomer's own start-up (the killed-holder violations of the first MariaDB and PostgreSQL runs).
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createLockManager } from '../src/core/leases';
import { LockError } from '../src/core/errors';

const { values } = parseArgs({
  options: {
    names: { type: 'string' },
    log: { type: 'string' },
    ttl: { type: 'string', default: '1' },
    wait: { type: 'string', default: '5' },
    'git-dir': { type: 'string' },
  },
});
const names = (values.names ?? '').split(',').filter(Boolean);
const log = values.log as string;
const ttl = Number(values.ttl);
const wait = Number(values.wait);
// The log's instants come from the clock the leases use (Date.now, the manager's system clock), the same kernel clock
// in every process. performance.timeOrigin + performance.now() is finer but each process maps it to wall time on its
// own at start-up, so two processes' instants can disagree by a millisecond under load: a false overlap.
const clock = () => Date.now();
const write = (entry: object) => fs.appendFileSync(log, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
const hold = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** A name no worker races for: the warm-up's, never written to the log as a section. */
const WARM_UP = 'chaos-warm-up';

function logError(error: unknown, name?: string): void {
  const documented = error instanceof LockError;
  write({
    kind: 'error',
    name,
    at: clock(),
    documented,
    error: documented ? `${error.constructor.name}/${(error as LockError).code}` : String((error as Error)?.name ?? error),
  });
  if (!documented) write({ kind: 'error-detail', detail: String((error as Error)?.stack ?? error).slice(0, 500) });
}

async function main(): Promise<void> {
  const gitDir = values['git-dir'];
  const manager = createLockManager(gitDir ? { gitDir } : {});
  for (;;) {
    // the warm-up round trip, retried until one gets through (a fault may kill its connection)
    try {
      const handle = await manager.acquire(WARM_UP, { ttl, wait: 0 });
      if (handle.acquired) await handle.release();
      break;
    } catch (error) {
      logError(error);
      await hold(50);
    }
  }
  process.stdout.write('ready\n'); // the harness kills only workers that are racing (connected, warmed up)
  for (;;) {
    const name = names[Math.floor(Math.random() * names.length)];
    try {
      write({ kind: 'want', name, at: clock() });
      const handle = await manager.acquire(name, { ttl, wait });
      if (!handle.acquired) {
        write({ kind: 'busy', name, at: clock() });
        continue;
      }
      const start = clock();
      write({ kind: 'enter', name, token: handle.fencingToken, start, expires: handle.expiresAt()?.getTime() });
      await hold(Math.random() * 20);
      write({ kind: 'exit', name, token: handle.fencingToken, end: clock() });
      await handle.release();
    } catch (error) {
      logError(error, name);
      await hold(50);
    }
  }
}

main().catch(error => {
  write({ kind: 'error', documented: false, error: String(error) });
  process.exit(1);
});
