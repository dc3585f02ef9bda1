/**
 * Acquires one lease and then holds it until killed — the "holder" of crash tests.
 *
 *   node --import tsx test/helpers/holdWorker.ts --name N [--ttl 2] [--wait 0]
 *
 * The driver comes only from the LOCKSTEP_* environment. Prints one JSON line
 * `{ acquired, fencingToken, expiresAt, pid }` (expiresAt in epoch ms) once the acquire returned,
 * then blocks without releasing: the test kills it (SIGKILL) to simulate a crash.
 */
import { parseArgs } from 'node:util';
import { createLockManager } from '../../src/core/leases';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { name: { type: 'string' }, ttl: { type: 'string', default: '2' }, wait: { type: 'string', default: '0' } },
  });
  if (!values.name) throw new Error('holdWorker: --name is required');
  const manager = createLockManager();
  const handle = await manager.acquire(values.name, { ttl: Number(values.ttl), wait: Number(values.wait) });
  process.stdout.write(
    `${JSON.stringify({
      acquired: handle.acquired,
      fencingToken: handle.fencingToken,
      expiresAt: handle.expiresAt()?.getTime(),
      pid: process.pid,
    })}\n`,
  );
  // Block (without busy-looping) until killed; never release.
  setInterval(() => undefined, 60_000);
}

main().catch(error => {
  process.stderr.write(`holdWorker: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 2;
});
