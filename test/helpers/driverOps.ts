/**
 * Runs a list of raw driver operations in a separate process and prints their results as one JSON
 * array — a second, independent writer for race tests.
 *
 *   node --import tsx test/helpers/driverOps.ts '[{"op":"claim","key":"<64 hex>","owner":"<64 hex>","ttlMs":30000}, ...]'
 *
 * Ops: claim {key, owner, ttlMs} · release {key, owner} · increment {key} (read, then
 * compareAndSwap `{ n: n + 1 }` against the revision read, once). The driver comes only from the
 * LOCKSTEP_* environment.
 */
import { resolveConfig } from '../../src/core/config';
import { openDriver } from '../../src/core/drivers';

type Op =
  | { op: 'claim'; key: string; owner: string; ttlMs: number }
  | { op: 'release'; key: string; owner: string }
  | { op: 'increment'; key: string };

async function main(): Promise<void> {
  const ops = JSON.parse(process.argv[2] ?? '[]') as Op[];
  const driver = await openDriver(resolveConfig({}, process.env));
  const results: unknown[] = [];
  try {
    for (const op of ops) {
      if (op.op === 'claim') results.push(await driver.claim(op.key, op.owner, op.ttlMs, Date.now()));
      else if (op.op === 'release') results.push(await driver.release(op.key, op.owner, Date.now()));
      else {
        const current = await driver.read(op.key);
        const n = (current?.value as { n?: number } | undefined)?.n ?? 0;
        results.push({
          ...(await driver.compareAndSwap(op.key, current?.revision ?? null, { n: n + 1 }, { summary: 'increment' })),
          n: n + 1,
        });
      }
    }
  } finally {
    await driver.close();
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch(error => {
  process.stderr.write(`driverOps: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 2;
});
