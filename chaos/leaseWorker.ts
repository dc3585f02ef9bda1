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
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createLockManager } from '../src/core/leases';
import { LockError } from '../src/core/errors';

const { values } = parseArgs({ options: { names: { type: 'string' }, log: { type: 'string' }, ttl: { type: 'string', default: '1' }, wait: { type: 'string', default: '5' }, 'git-dir': { type: 'string' } } });
const names = (values.names ?? '').split(',').filter(Boolean);
const log = values.log as string;
const ttl = Number(values.ttl);
const wait = Number(values.wait);
const clock = () => performance.timeOrigin + performance.now();
const write = (entry: object) => fs.appendFileSync(log, JSON.stringify({ pid: process.pid, ...entry }) + '\n');
const hold = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const gitDir = values['git-dir'];
  const manager = createLockManager(gitDir ? { gitDir } : {});
  process.stdout.write('ready\n'); // the harness kills only workers that are racing
  for (;;) {
    const name = names[Math.floor(Math.random() * names.length)];
    try {
      write({ kind: 'want', name, at: clock() });
      const handle = await manager.acquire(name, { ttl, wait });
      if (!handle.acquired) { write({ kind: 'busy', name }); continue; }
      const start = clock();
      write({ kind: 'enter', name, token: handle.fencingToken, start, expires: handle.expiresAt()?.getTime() });
      await hold(Math.random() * 20);
      write({ kind: 'exit', name, token: handle.fencingToken, end: clock() });
      await handle.release();
    } catch (error) {
      const documented = error instanceof LockError;
      write({ kind: 'error', name, documented, error: documented ? `${error.constructor.name}/${(error as LockError).code}` : String((error as Error)?.name ?? error) });
      if (!documented) write({ kind: 'error-detail', detail: String((error as Error)?.stack ?? error).slice(0, 500) });
      await hold(50);
    }
  }
}

main().catch(error => { write({ kind: 'error', documented: false, error: String(error) }); process.exit(1); });
