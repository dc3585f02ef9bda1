/**
 * Acquire + release of one plain lease on Redis, in ONE run against the same throwaway
 * redis-server: Lockstep (through its public API, `createLockManager` → `acquire` → `release`,
 * which also issues a fencing token), the raw floor (`SET key token NX PX` + a Lua
 * compare-and-delete, one ioredis client), npm `redlock` v5 and npm `redis-semaphore`'s Mutex.
 *
 *  1. sequential: one process, one name, acquire/release back to back; contenders interleaved in
 *     rounds so that machine noise hits all of them alike;
 *  2. contention: 8 clients in 4 processes on one name, every client doing acquire (waiting) +
 *     release back to back.
 *
 * Fairness notes: every contender uses a plain ioredis client with default options, except
 * Lockstep, whose driver sets its own (lazy connect, no offline queue, timeouts). redis-semaphore
 * runs with `refreshInterval: 0` (no refresh timer; Lockstep has none either) and a new Mutex per
 * acquisition, as its README does; redlock with one client. Under contention every contender
 * retries after 5–25 ms (Lockstep's own random cadence; the floor likewise; redlock 15 ± 10 ms;
 * redis-semaphore a fixed 15 ms, it has no jitter).
 *
 *   npm run bench -- redisLeases     (or: node --import tsx bench/redisLeases.ts)
 *   LOCKSTEP_BENCH_REDIS_URL=redis://... uses an existing server instead of starting one.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as readline from 'node:readline';
import Redis from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { resolveConfig } from '../src/core/config';
import { openDriver } from '../src/core/drivers';
import { createLockManager, type LockHandle } from '../src/core/leases';
import { keyDigest } from '../src/core/names';
import { hashToken, newOwnerToken } from '../src/core/tokens';
import { RedisServer } from '../test/live/redis/redisServer';
import { reasonOf, summaryRow, times, verdict } from './summary';

type Contender = 'lockstep' | 'floor' | 'redlock' | 'redis-semaphore' | 'lockstep-driver';
const CONTENDERS: Contender[] = ['lockstep', 'floor', 'redlock', 'redis-semaphore'];
/**
 * Diagnostic, sequential only: Lockstep's redis driver called directly with precomputed key digest
 * and owner hashes, i.e. Redis + driver without the manager's acquire path (validation, digest,
 * owner token and its hash). The difference to `lockstep` is what that path costs.
 */
const SEQUENTIAL: Contender[] = [...CONTENDERS, 'lockstep-driver'];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const OPS_PER_ROUND = Number(process.env.BENCH_OPS_PER_ROUND ?? 300);
const WARMUP_OPS = 500;
const PROCESSES = 4;
const CLIENTS_PER_PROCESS = 2;
const CONTENTION_OPS_PER_CLIENT = Number(process.env.BENCH_CONTENTION_OPS ?? 60);
const TTL_MS = 30_000;
const PREFIX = process.env.LOCKSTEP_BENCH_PREFIX ?? `lockstep-bench-${randomUUID().slice(0, 8)}`;
/** What the run-wide summary's row measures (bench/summary.ts). */
const WHAT = 'acquire+release with a fencing token';

interface Lock {
  acquire(): Promise<void>;
  release(): Promise<void>;
  close(): Promise<void>;
}

// redlock 5 beta's package.json "exports" hides its typings from TypeScript; this is the part used.
interface RedlockLock {
  release(): Promise<unknown>;
}
type RedlockClass = new (
  clients: Redis[],
  settings: Record<string, number>,
) => { acquire(resources: string[], ttlMs: number): Promise<RedlockLock> };
const Redlock = (require('redlock') as { default: RedlockClass }).default;

const FLOOR_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));
const retryMs = () => 5 + Math.random() * 20;

/** One contender's acquire/release of one lease; `wait` makes acquire retry until it gets it. */
async function openLock(kind: Contender, url: string, wait: boolean): Promise<Lock> {
  const name = `bench-${kind}`;
  switch (kind) {
    case 'lockstep': {
      const manager = createLockManager({ driver: 'redis', prefix: PREFIX, redisUrl: url, env: {} });
      let handle: LockHandle | undefined;
      return {
        async acquire() {
          handle = await manager.acquire(name, { ttl: TTL_MS / 1000, wait: wait ? 60 : 0 });
          if (!handle.acquired || handle.fencingToken === undefined) throw new Error('lockstep: not acquired');
        },
        async release() {
          if (!(await handle!.release())) throw new Error('lockstep: release returned false');
        },
        close: () => manager.close(),
      };
    }
    case 'lockstep-driver': {
      const driver = await openDriver(resolveConfig({ driver: 'redis', prefix: PREFIX, redisUrl: url }, {}));
      const key = keyDigest(PREFIX, name);
      const owners = Array.from({ length: 1024 }, () => hashToken(newOwnerToken()));
      let turn = 0;
      let owner = '';
      return {
        async acquire() {
          owner = owners[turn++ % owners.length]!;
          if (!(await driver.claim(key, owner, TTL_MS, Date.now())).claimed) throw new Error('driver: not claimed');
        },
        async release() {
          if ((await driver.release(key, owner, Date.now())) !== 'released') throw new Error('driver: not released');
        },
        close: () => driver.close(),
      };
    }
    case 'floor': {
      const client = new Redis(url);
      const sha = (await client.script('LOAD', FLOOR_RELEASE)) as string;
      const key = `${PREFIX}:floor`;
      let token = '';
      return {
        async acquire() {
          for (;;) {
            token = randomUUID();
            if ((await client.set(key, token, 'PX', TTL_MS, 'NX')) === 'OK') return;
            if (!wait) throw new Error('floor: not acquired');
            await sleep(retryMs());
          }
        },
        async release() {
          if ((await client.evalsha(sha, 1, key, token)) !== 1) throw new Error('floor: release failed');
        },
        close: async () => {
          client.disconnect();
        },
      };
    }
    case 'redlock': {
      const client = new Redis(url);
      const redlock = new Redlock([client], wait ? { retryCount: -1, retryDelay: 15, retryJitter: 10 } : { retryCount: 0 });
      let lock: RedlockLock | undefined;
      return {
        async acquire() {
          lock = await redlock.acquire([`${PREFIX}:redlock`], TTL_MS);
        },
        async release() {
          await lock!.release();
        },
        close: async () => {
          client.disconnect();
        },
      };
    }
    case 'redis-semaphore': {
      const client = new Redis(url);
      let mutex: Mutex | undefined;
      return {
        async acquire() {
          mutex = new Mutex(client, `${PREFIX}:semaphore`, {
            lockTimeout: TTL_MS,
            refreshInterval: 0,
            retryInterval: 15,
            acquireTimeout: 60_000,
            acquireAttemptsLimit: wait ? Number.POSITIVE_INFINITY : 1,
          });
          await mutex.acquire();
        },
        async release() {
          await mutex!.release();
        },
        close: async () => {
          client.disconnect();
        },
      };
    }
  }
}

function percentile(sortedMs: number[], p: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.floor(p * sortedMs.length))]!;
}

interface Stats {
  p50: number;
  p99: number;
  opsPerSecond: number;
  ops: number;
}

function stats(latenciesMs: number[], elapsedMs: number): Stats {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    opsPerSecond: latenciesMs.length / (elapsedMs / 1000),
    ops: latenciesMs.length,
  };
}

async function sequential(url: string): Promise<Map<Contender, Stats>> {
  const locks = new Map<Contender, Lock>();
  for (const kind of SEQUENTIAL) locks.set(kind, await openLock(kind, url, false));
  const latencies = new Map<Contender, number[]>(SEQUENTIAL.map(k => [k, []]));
  const busy = new Map<Contender, number>(SEQUENTIAL.map(k => [k, 0]));
  const once = async (lock: Lock) => {
    await lock.acquire();
    await lock.release();
  };
  for (const kind of SEQUENTIAL) for (let i = 0; i < WARMUP_OPS; i++) await once(locks.get(kind)!);
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order each round, so no contender always runs right after another.
    const order = SEQUENTIAL.map((_, i) => SEQUENTIAL[(i + round) % SEQUENTIAL.length]!);
    for (const kind of order) {
      const lock = locks.get(kind)!;
      const out = latencies.get(kind)!;
      const started = performance.now();
      for (let i = 0; i < OPS_PER_ROUND; i++) {
        const t0 = performance.now();
        await once(lock);
        out.push(performance.now() - t0);
      }
      busy.set(kind, busy.get(kind)! + performance.now() - started);
    }
  }
  for (const lock of locks.values()) await lock.close();
  return new Map(SEQUENTIAL.map(k => [k, stats(latencies.get(k)!, busy.get(k)!)]));
}

/** Child process: CLIENTS_PER_PROCESS clients contending; waits for "go" on stdin, prints its latencies. */
async function worker(kind: Contender, url: string): Promise<void> {
  const locks = await Promise.all(Array.from({ length: CLIENTS_PER_PROCESS }, () => openLock(kind, url, true)));
  // Connect (and load scripts) before the clock starts.
  for (const lock of locks) {
    await lock.acquire();
    await lock.release();
  }
  process.stdout.write('ready\n');
  await new Promise<void>(resolve => {
    const input = readline.createInterface({ input: process.stdin });
    // Stop reading once told to go: an open stdin would keep this worker (and so the bench) alive.
    input.once('line', () => {
      input.close();
      process.stdin.destroy();
      resolve();
    });
  });
  const latencies: number[] = [];
  await Promise.all(
    locks.map(async lock => {
      for (let i = 0; i < CONTENTION_OPS_PER_CLIENT; i++) {
        const t0 = performance.now();
        await lock.acquire();
        await lock.release();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  for (const lock of locks) await lock.close();
  process.stdout.write(`${JSON.stringify({ latencies })}\n`);
}

async function contention(kind: Contender, url: string): Promise<Stats> {
  const children = Array.from({ length: PROCESSES }, () =>
    spawn(process.execPath, ['--import', 'tsx', __filename, '--worker', kind, url], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, LOCKSTEP_BENCH_PREFIX: PREFIX },
    }),
  );
  const lines = children.map(child => readline.createInterface({ input: child.stdout! }));
  const next = (i: number) =>
    new Promise<string>((resolve, reject) => {
      lines[i]!.once('line', resolve);
      children[i]!.once('exit', code => reject(new Error(`${kind} worker exited ${code}`)));
    });
  await Promise.all(children.map((_, i) => next(i)));
  const results = children.map((_, i) => next(i));
  const started = performance.now();
  for (const child of children) child.stdin!.write('go\n');
  const outputs = await Promise.all(results);
  const elapsed = performance.now() - started;
  const latencies = outputs.flatMap(line => (JSON.parse(line) as { latencies: number[] }).latencies);
  return stats(latencies, elapsed);
}

function table(title: string, rows: Map<Contender, Stats>): void {
  const floor = rows.get('floor')!.p50;
  console.log(`\n${title}`);
  console.log('| contender       | p50 ms | p99 ms |   ops/s | p50 / floor | fencing token |');
  console.log('|-----------------|-------:|-------:|--------:|------------:|---------------|');
  for (const [kind, s] of rows) {
    const fenced = kind.startsWith('lockstep') ? 'yes' : 'no';
    console.log(
      `| ${kind.padEnd(15)} | ${s.p50.toFixed(3).padStart(6)} | ${s.p99.toFixed(3).padStart(6)} | ${Math.round(s.opsPerSecond).toString().padStart(7)} | ${(s.p50 / floor).toFixed(2).padStart(10)}× | ${fenced.padEnd(13)} |`,
    );
  }
}

async function main(): Promise<void> {
  const external = process.env.LOCKSTEP_BENCH_REDIS_URL;
  const server = external
    ? undefined
    : await RedisServer.start().catch((error: unknown) => {
        // The run-wide summary says why there are no figures; the bench then fails as before.
        summaryRow({
          bench: 'redisLeases',
          what: WHAT,
          lockstep: `SKIPPED: ${reasonOf(error)}`,
          baseline: '—',
          target: '≤ 1.15×; below both peers: SKIPPED',
        });
        throw error;
      });
  const url = external ?? server!.url;
  try {
    const version = (await withClient(url, c => c.info('server'))).match(/redis_version:(\S+)/)?.[1];
    console.log(`redis-server ${version} on loopback, node ${process.version}; prefix ${PREFIX}`);
    console.log(`sequential: ${ROUNDS} rounds × ${OPS_PER_ROUND} acquire+release per contender, interleaved (after ${WARMUP_OPS} warm-up)`);
    const seq = await sequential(url);
    table('Sequential acquire + release (one client; lockstep-driver = diagnostic, the driver without the manager)', seq);

    console.log(
      `\ncontention: ${PROCESSES} processes × ${CLIENTS_PER_PROCESS} clients × ${CONTENTION_OPS_PER_CLIENT} acquire(wait)+release, one name`,
    );
    const contended = new Map<Contender, Stats>();
    for (const kind of CONTENDERS) contended.set(kind, await contention(kind, url));
    table('Contended acquire (waiting) + release, 8 clients in 4 processes; ops/s over all clients', contended);

    const l = seq.get('lockstep')!;
    console.log('\nRatios (sequential p50; < 1 means Lockstep is faster):');
    for (const kind of CONTENDERS.filter(k => k !== 'lockstep')) {
      console.log(
        `  lockstep / ${kind}: ${(l.p50 / seq.get(kind)!.p50).toFixed(2)}×   (ops/s ${(l.opsPerSecond / seq.get(kind)!.opsPerSecond).toFixed(2)}×)`,
      );
    }
    console.log(
      `  lockstep-driver / floor: ${(seq.get('lockstep-driver')!.p50 / seq.get('floor')!.p50).toFixed(2)}×   (the driver alone; the rest is the manager's acquire path)`,
    );
    console.log(
      `  target: lockstep p50 ≤ 1.15× floor → ${l.p50 <= 1.15 * seq.get('floor')!.p50 ? 'met' : 'NOT met'}; faster than redlock and redis-semaphore → ${l.p50 < seq.get('redlock')!.p50 && l.p50 < seq.get('redis-semaphore')!.p50 ? 'met' : 'NOT met'}`,
    );
    const floor = seq.get('floor')!.p50;
    const redlock = seq.get('redlock')!.p50;
    const semaphore = seq.get('redis-semaphore')!.p50;
    summaryRow({
      bench: 'redisLeases',
      what: WHAT,
      lockstep: `p50 ${l.p50.toFixed(3)} ms`,
      baseline: `floor \`SET NX PX\` + Lua delete ${floor.toFixed(3)} ms (**${times(l.p50 / floor)}**); redlock ${redlock.toFixed(3)} ms (${times(l.p50 / redlock)}); redis-semaphore ${semaphore.toFixed(3)} ms (${times(l.p50 / semaphore)}); neither peer issues a token`,
      target: `≤ 1.15×: ${verdict(l.p50 <= 1.15 * floor)}; below both peers: ${verdict(l.p50 < redlock && l.p50 < semaphore)}`,
    });
    const leftovers = await withClient(url, async c => {
      const keys = await c.keys(`${PREFIX}*`);
      if (keys.length) await c.del(...keys);
      return keys.length;
    });
    console.log(`\ncleaned up ${leftovers} bench keys (fence counters and peers' keys)`);
  } finally {
    await server?.dispose();
  }
}

async function withClient<T>(url: string, fn: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(url);
  try {
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

if (process.argv[2] === '--worker') {
  worker(process.argv[3] as Contender, process.argv[4]!).catch(error => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch(error => {
    console.error(error);
    process.exit(1);
  });
}
