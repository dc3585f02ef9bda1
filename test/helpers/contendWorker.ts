/**
 * A cross-process contention worker, reusable by every driver's integration test.
 *
 *   node --import tsx test/helpers/contendWorker.ts --name N --iterations 25 --shared DIR --out FILE [--ttl 30] [--wait 60] [--gate FILE] [--between-ms 0]
 *
 * The driver comes ONLY from the LOCKSTEP_* environment (LOCKSTEP_DRIVER, LOCKSTEP_PATH,
 * LOCKSTEP_PREFIX, LOCKSTEP_REDIS_URL, ...), so a Redis or SQL test reuses it by changing the
 * environment. Each iteration: acquire → prove exclusivity inside the critical section → record
 * the fencing token against the global acquisition order → release. The proof of exclusivity:
 *  - `inside.lock` in DIR is created with O_CREAT|O_EXCL ('wx'); EEXIST means another process is
 *    inside too, recorded as a violation;
 *  - `counter` in DIR is read, incremented and rewritten non-atomically; its value is the global
 *    acquisition order (`seq`), and any overlap shows up as a lost update or a repeated seq.
 * With --gate, the worker writes `<gate>.ready-<pid>` and starts only once the file `<gate>`
 * exists, so that a test can release all workers at the same moment (real contention, not a
 * staggered start). The result is one JSON object written to --out (also when something failed).
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createLockManager } from '../../src/core/leases';
import { insideCriticalSection } from './criticalSection';

export interface ContendResult {
  pid: number;
  driver: string | undefined;
  acquisitions: number;
  /** Acquire calls that returned a handle that did not acquire (the wait ran out). */
  busy: number;
  /** Times another process was found inside the critical section. */
  violations: number;
  /** Releases that returned false (the lease had expired or was gone). */
  releasedFalse: number;
  errors: { name: string; code: string | undefined; message: string }[];
  /** Global acquisition order (`seq`, from the shared counter) and the fencing token received. */
  entries: { seq: number; fencingToken: number }[];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      name: { type: 'string' },
      iterations: { type: 'string', default: '25' },
      ttl: { type: 'string', default: '30' },
      wait: { type: 'string', default: '60' },
      shared: { type: 'string' },
      out: { type: 'string' },
      gate: { type: 'string' },
      // Extra turns of the event loop inside the critical section, to widen any overlap window.
      'hold-turns': { type: 'string', default: '3' },
      // Time between a release and the next acquire (a client doing other work), so that waiting
      // processes get their turn rather than a fast holder taking the lease straight back.
      'between-ms': { type: 'string', default: '0' },
    },
  });
  if (!values.name || !values.shared || !values.out) throw new Error('contendWorker: --name, --shared and --out are required');
  const iterations = Number(values.iterations);
  const ttl = Number(values.ttl);
  const wait = Number(values.wait);
  const holdTurns = Number(values['hold-turns']);
  const betweenMs = Number(values['between-ms']);

  const result: ContendResult = {
    pid: process.pid,
    driver: process.env.LOCKSTEP_DRIVER,
    acquisitions: 0,
    busy: 0,
    violations: 0,
    releasedFalse: 0,
    errors: [],
    entries: [],
  };
  const manager = createLockManager();
  if (values.gate) await passGate(values.gate);
  try {
    for (let i = 0; i < iterations; i++) {
      try {
        const handle = await manager.acquire(values.name, { ttl, wait });
        if (!handle.acquired) {
          result.busy++;
          continue;
        }
        result.acquisitions++;
        const { seq, violation } = await insideCriticalSection(values.shared, holdTurns);
        if (violation) result.violations++;
        result.entries.push({ seq, fencingToken: handle.fencingToken! });
        if (!(await handle.release())) result.releasedFalse++;
        if (betweenMs > 0) await new Promise(resolve => setTimeout(resolve, betweenMs));
      } catch (error) {
        const e = error as Error & { code?: unknown };
        result.errors.push({ name: e.name, code: e.code === undefined ? undefined : String(e.code), message: e.message });
      }
    }
  } finally {
    await manager.close();
    fs.writeFileSync(values.out, JSON.stringify(result));
  }
  return result.errors.length === 0 ? 0 : 1;
}

/** Announces readiness, then polls (10 ms) until the test opens the gate. */
async function passGate(gate: string): Promise<void> {
  fs.writeFileSync(`${gate}.ready-${process.pid}`, '');
  while (!fs.existsSync(gate)) await new Promise(resolve => setTimeout(resolve, 10));
}

main().then(
  code => {
    process.exitCode = code;
  },
  error => {
    process.stderr.write(`contendWorker: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 2;
  },
);
