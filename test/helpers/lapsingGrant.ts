// A container grant whose lease runs out within seconds of real time, made through the real code paths.
//
// A grant's lease is at least 60 s (the container's floor, lockRecord.ts), and tests that need a holder to
// go silent cannot wait a minute each. So the grant is made through core's real Container on the real
// store, from the holder's own clone (its session and push proof are written as `lockstep acquire` writes
// them), with only the clock injected: wall time shifted into the past, so a 60 s lease granted "58 s ago"
// runs out 2 s from now. Nothing in the product reads a shifted clock; the record is one a client with a
// slow clock could write, and every later command judges it by real time.
//
// Honest dating: the grant is dated no earlier than the page allows it (the pure acquire must hold at that
// time: no live holder then, no other waiter's turn then), so a takeover of a holder that went silent a
// moment ago, or an acquire in a turn that began a moment ago, gets (almost) its full 60 s: two lapses in a
// row are always a minute apart. `expiresAt` says when it runs out. The git driver's server guard accepts
// such a grant: it is dated within the guard's skew (2 min) and legal by the server's clock too
// (chain/recordUpdate.ts).
//
// In-process: `grantLapsing({ cwd, env, lapseMs })`. As a child with the CLI's environment (tests that run
// lockstep as a process, the VS Code UI tests):
//   node --import tsx test/helpers/lapsingGrant.ts --cwd CLONE [--lapse-ms N] [--identity WHO]
// prints one JSON line {"grant":N,"expiresAt":MS,"identity":WHO} and exits 0, or prints the error and exits 1.
import { parseArgs } from 'node:util';
import { SECOND, systemClock } from '../../src/core/clock';
import { Container } from '../../src/core/container/container';
import * as protocol from '../../src/core/lockRecord';
import { MIN_LEASE_TTL_MS } from '../../src/core/lockRecord';

/** The lease every lapsing grant gets: the container's shortest. */
export const LAPSING_TTL_SECONDS = MIN_LEASE_TTL_MS / SECOND;

export interface LapsingGrant {
  readonly grant: number;
  /** Epoch ms, about `lapseMs` after the grant was written. */
  readonly expiresAt: number;
  readonly identity: string;
}

/**
 * Acquires the container lock in the clone `cwd` with the shortest lease, dated so that it runs out
 * `lapseMs` (0 to 59 s) after it is written (0: a holder already silent), or as soon after as the page
 * allows (see above).
 */
export async function grantLapsing(options: {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  lapseMs?: number;
  identity?: string;
}): Promise<LapsingGrant> {
  const lapseMs = options.lapseMs ?? 2 * SECOND;
  if (!(lapseMs >= 0 && lapseMs < MIN_LEASE_TTL_MS)) throw new Error(`lapseMs must be 0 to ${MIN_LEASE_TTL_MS - 1}`);
  const env = { ...(options.env ?? process.env), ...(options.identity !== undefined ? { LOCKSTEP_IDENTITY: options.identity } : {}) };
  let behindMs = 0;
  const container = await Container.open({ cwd: options.cwd, env, clock: { ...systemClock, now: () => Date.now() - behindMs } });
  try {
    const { record } = await container.read();
    const now = Date.now();
    behindMs = now - earliestGrant(record, container.settings, container.identity, now - (MIN_LEASE_TTL_MS - lapseMs), now);
    const { grant, expiresAt } = await container.acquire({ ttl: LAPSING_TTL_SECONDS });
    return { grant, expiresAt, identity: container.identity };
  } finally {
    await container.close();
  }
}

/** The earliest time from `from` to `now` (in steps of 100 ms) at which the pure acquire grants `identity` the lock; `now` when none. */
function earliestGrant(
  record: protocol.LockRecord,
  settings: protocol.ContainerSettings,
  identity: string,
  from: number,
  now: number,
): number {
  const request = { identity, tokenHash: '0'.repeat(64), proofHash: '0'.repeat(64), ttlMs: MIN_LEASE_TTL_MS };
  for (let at = from; at < now; at += 100) if (protocol.acquire(record, settings, request, at).ok) return at;
  return now;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { cwd: { type: 'string' }, 'lapse-ms': { type: 'string' }, identity: { type: 'string' } } });
  if (values.cwd === undefined) throw new Error('usage: lapsingGrant.ts --cwd CLONE [--lapse-ms N] [--identity WHO]');
  const granted = await grantLapsing({
    cwd: values.cwd,
    ...(values['lapse-ms'] !== undefined ? { lapseMs: Number(values['lapse-ms']) } : {}),
    ...(values.identity !== undefined ? { identity: values.identity } : {}),
  });
  process.stdout.write(`${JSON.stringify(granted)}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`lapsingGrant: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`);
    process.exit(1);
  });
}
