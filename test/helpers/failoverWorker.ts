/**
 * A contention worker that keeps going through a backend failover (test/live/redis-ha).
 *
 *   node --import tsx test/helpers/failoverWorker.ts --name N --shared DIR --out FILE --gate FILE --stop FILE [--ttl 30] [--wait 5]
 *
 * Like contendWorker.ts (driver from LOCKSTEP_* only; criticalSection.ts proves exclusivity and
 * gives the global acquisition order), but it runs until the file --stop
 * exists, and an error (the master is gone, too few replicas confirmed a grant) is recorded with
 * its time and the worker carries on, as an application would. The result is one JSON object.
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createLockManager } from '../../src/core/leases';
import { insideCriticalSection } from './criticalSection';

export interface FailoverResult {
  pid: number;
  /**
   * Each acquisition: global order, fencing token, wall-clock time, and what its release found:
   * `released`, `gone` (the lease was no longer there: lost with the old master), `failed` (an error).
   */
  entries: { seq: number; fencingToken: number; at: number; release: 'released' | 'gone' | 'failed' }[];
  /** Times another process was found inside the critical section. */
  violations: number;
  /** Acquire calls whose wait ran out. */
  busy: number;
  errors: { at: number; name: string; code: string | undefined; reason: string | undefined; message: string }[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      name: { type: 'string' },
      shared: { type: 'string' },
      out: { type: 'string' },
      gate: { type: 'string' },
      stop: { type: 'string' },
      ttl: { type: 'string', default: '30' },
      wait: { type: 'string', default: '5' },
    },
  });
  if (!values.name || !values.shared || !values.out || !values.gate || !values.stop) {
    throw new Error('failoverWorker: --name, --shared, --out, --gate and --stop are required');
  }
  const result: FailoverResult = { pid: process.pid, entries: [], violations: 0, busy: 0, errors: [] };
  const manager = createLockManager();
  fs.writeFileSync(`${values.gate}.ready-${process.pid}`, '');
  while (!fs.existsSync(values.gate)) await turn(10);
  try {
    while (!fs.existsSync(values.stop)) {
      try {
        const handle = await manager.acquire(values.name, { ttl: Number(values.ttl), wait: Number(values.wait) });
        if (!handle.acquired) {
          result.busy++;
          continue;
        }
        const at = Date.now();
        const { seq, violation } = await insideCriticalSection(values.shared, 3);
        if (violation) result.violations++;
        let release: 'released' | 'gone' | 'failed' = 'failed';
        try {
          release = (await handle.release()) ? 'released' : 'gone';
        } finally {
          result.entries.push({ seq, fencingToken: handle.fencingToken!, at, release });
        }
      } catch (error) {
        const e = error as Error & { code?: unknown; reason?: unknown };
        result.errors.push({
          at: Date.now(),
          name: e.name,
          code: e.code === undefined ? undefined : String(e.code),
          reason: e.reason === undefined ? undefined : String(e.reason),
          message: e.message,
        });
        // An application backs off a little before trying again.
        await turn(25);
      }
    }
  } finally {
    await manager.close();
    fs.writeFileSync(values.out, JSON.stringify(result));
  }
}

function turn(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms));
}

main().catch(error => {
  process.stderr.write(`failoverWorker: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 2;
});
