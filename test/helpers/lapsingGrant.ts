// A container grant whose lease runs out within seconds of real time, made through the real code paths.
//
// A grant's lease is at least 60 s (the container's floor, lockRecord.ts), and tests that need a holder to
// go silent cannot wait a minute each. So the grant is made through core's real Container on the real
// store, from the holder's own clone (its session and push proof are written as `lockstep acquire` writes
// them), with only the clock injected: wall time shifted into the past, so a 60 s lease granted "58 s ago"
// runs out 2 s from now. Nothing in the product reads a shifted clock; the record is one a client with a
// slow clock could write, and every later command judges it by real time.
//
// What the shift asks of the page: the grant must be legal at its (past) time too: no live holder then,
// not another waiter's turn then. A clone whose previous lease ran out less than a minute ago cannot get
// such a grant yet; the git driver's server guard accepts one dated up to its skew (2 min) in the past when
// it is legal by both clocks (guard/recordUpdate.ts).
//
// In-process: `grantLapsing({ cwd, env, lapseMs })`. As a child with the CLI's environment (tests that run
// lockstep as a process, the VS Code UI tests):
//   node --import tsx test/helpers/lapsingGrant.ts --cwd CLONE [--lapse-ms N] [--identity WHO]
// prints one JSON line {"grant":N,"expiresAt":MS,"identity":WHO} and exits 0, or prints the error and exits 1.
import { parseArgs } from 'node:util';
import { SECOND, systemClock, type Clock } from '../../src/core/clock';
import { Container } from '../../src/core/container/container';
import { MIN_LEASE_TTL_MS } from '../../src/core/lockRecord';

/** The lease every lapsing grant gets: the container's shortest. */
export const LAPSING_TTL_SECONDS = MIN_LEASE_TTL_MS / SECOND;

/** The system clock with its wall time `shiftMs` behind; monotonic time, sleeps and timers stay real. */
export function clockBehind(shiftMs: number): Clock {
  return { ...systemClock, now: () => Date.now() - shiftMs };
}

export interface LapsingGrant {
  readonly grant: number;
  /** Epoch ms, about `lapseMs` after the grant was written. */
  readonly expiresAt: number;
  readonly identity: string;
}

/**
 * Acquires the container lock in the clone `cwd` with the shortest lease, dated so that it runs out
 * `lapseMs` (0 to 59 s) after it is written: 0 gives a holder already silent.
 */
export async function grantLapsing(options: { cwd: string; env?: NodeJS.ProcessEnv; lapseMs?: number; identity?: string }): Promise<LapsingGrant> {
  const lapseMs = options.lapseMs ?? 2 * SECOND;
  if (!(lapseMs >= 0 && lapseMs < MIN_LEASE_TTL_MS)) throw new Error(`lapseMs must be 0 to ${MIN_LEASE_TTL_MS - 1}`);
  const env = { ...(options.env ?? process.env), ...(options.identity !== undefined ? { LOCKSTEP_IDENTITY: options.identity } : {}) };
  const container = await Container.open({ cwd: options.cwd, env, clock: clockBehind(MIN_LEASE_TTL_MS - lapseMs) });
  try {
    const { grant, expiresAt } = await container.acquire({ ttl: LAPSING_TTL_SECONDS });
    return { grant, expiresAt, identity: container.identity };
  } finally {
    await container.close();
  }
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
