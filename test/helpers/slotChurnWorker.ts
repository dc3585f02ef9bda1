/**
 * Loops claim → release on the raw file driver over the keys given, forever (until killed), with a
 * short TTL, printing `<key> <token>` for every claim the moment it succeeds (stdout to a pipe is
 * synchronous on Linux, so a printed token was handed out). Any error is printed to stderr and ends
 * the worker with exit 1.
 *
 *   node --import tsx test/helpers/slotChurnWorker.ts KEY[,KEY…] TTL_MS    (LOCKSTEP_PATH, LOCKSTEP_PREFIX)
 */
import { randomBytes } from 'node:crypto';
import { createFileDriver } from '../../src/core/stores/file';

async function main(): Promise<void> {
  const keys = (process.argv[2] ?? '').split(',');
  const ttlMs = Number(process.argv[3] ?? 1000);
  const driver = createFileDriver({ path: process.env.LOCKSTEP_PATH ?? '', prefix: process.env.LOCKSTEP_PREFIX ?? '' });
  const owner = randomBytes(32).toString('hex');
  for (let i = 0; ; i++) {
    const key = keys[i % keys.length];
    const claim = await driver.claim(key, owner, ttlMs, Date.now());
    if (!claim.claimed) continue;
    process.stdout.write(`${key} ${claim.fencingToken}\n`);
    await driver.release(key, owner, Date.now());
  }
}

main().catch(error => {
  process.stderr.write(`${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`);
  process.exit(1);
});
