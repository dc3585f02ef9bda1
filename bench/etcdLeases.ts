/**
 * Acquire + release of one plain lease on etcd beside Redis, in ONE run on this machine: Lockstep's public API
 * (`createLockManager` → `acquire` → `release`, each acquisition issuing a fencing token) on a throwaway
 * three-member etcd cluster (test/live/etcd/etcdCluster.ts) and on a throwaway redis-server, and etcd's floor:
 * one etcd3 client doing a put-if-absent transaction and a delete, nothing else.
 *
 *  1. sequential: one process, one name, acquire/release back to back; the contenders interleaved in rounds so
 *     that machine noise hits all of them alike;
 *  2. contention: 8 managers in this process on one name, each doing acquire (waiting) + release back to back;
 *     acquisitions per second.
 *
 * What the difference is: every etcd write is committed on a majority of members (two fsyncs on one disk here)
 * before it answers; Redis (persistence off) answers from memory.
 *
 *   npm run bench -- etcdLeases     (or: node --import tsx bench/etcdLeases.ts)
 */
import { randomUUID } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { createLockManager, type LockHandle } from '../src/core/leases';
import { EtcdCluster } from '../test/live/etcd/etcdCluster';
import { RedisServer } from '../test/live/redis/redisServer';
import { reasonOf, summaryRow, times } from './summary';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const OPS_PER_ROUND = Number(process.env.BENCH_OPS_PER_ROUND ?? 60);
const WARMUP_OPS = 30;
const CONTENDERS = 8;
const CONTENTION_OPS_PER_CLIENT = Number(process.env.BENCH_CONTENTION_OPS ?? 15);
const TTL_S = 30;
const PREFIX = `lockstep-bench-${randomUUID().slice(0, 8)}`;
/** The run-wide summary's row (bench/summary.ts): what it measures and its target (none: the price of consensus). */
const WHAT = 'acquire+release with a fencing token on a three-member etcd cluster, beside Redis';
const TARGET = "— (the price of consensus: a majority's fsync per write)";
/** Three significant digits, with thousands separators: 20.6, 116, 0.53, 1,230. */
const figure = (n: number) => n.toLocaleString('en-US', { maximumSignificantDigits: 3 });

type Side = 'lockstep etcd' | 'etcd floor' | 'lockstep redis';
interface Lock {
  acquire(wait: boolean): Promise<void>;
  release(): Promise<void>;
  close(): Promise<void>;
}

function lockstepLock(options: { driver: 'etcd'; etcdEndpoints: string } | { driver: 'redis'; redisUrl: string }): Lock {
  const manager = createLockManager({ ...options, prefix: PREFIX, env: {} });
  let handle: LockHandle | undefined;
  return {
    async acquire(wait) {
      handle = await manager.acquire('bench', { ttl: TTL_S, wait: wait ? 60 : 0 });
      if (!handle.acquired || handle.fencingToken === undefined) throw new Error('lockstep: not acquired');
    },
    async release() {
      if (!(await handle!.release())) throw new Error('lockstep: release returned false');
    },
    close: () => manager.close(),
  };
}

function etcdFloor(endpoints: string): Lock {
  const client = new Etcd3({ hosts: endpoints.split(',') });
  const key = `${PREFIX}/floor`;
  return {
    async acquire() {
      const reply = await client.if(key, 'Create', '==', 0).then(client.put(key).value(randomUUID())).commit();
      if (!reply.succeeded) throw new Error('floor: not acquired');
    },
    async release() {
      await client.delete().key(key);
    },
    close: async () => client.close(),
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function main(): Promise<void> {
  // A server that cannot start: the run-wide summary says so, and the bench fails as before.
  const skipped = (error: unknown) => {
    summaryRow({ bench: 'etcdLeases', what: WHAT, lockstep: `SKIPPED: ${reasonOf(error)}`, baseline: '—', target: TARGET });
    throw error;
  };
  const cluster = await EtcdCluster.start().catch(skipped);
  const redis = await RedisServer.start().catch(async (error: unknown) => {
    await cluster.dispose();
    return skipped(error);
  });
  try {
    const open = (side: Side): Lock =>
      side === 'lockstep etcd'
        ? lockstepLock({ driver: 'etcd', etcdEndpoints: cluster.endpoints })
        : side === 'etcd floor'
          ? etcdFloor(cluster.endpoints)
          : lockstepLock({ driver: 'redis', redisUrl: redis.url });
    const sides: Side[] = ['lockstep etcd', 'etcd floor', 'lockstep redis'];
    const locks = new Map(sides.map(s => [s, open(s)]));
    const latencies = new Map<Side, number[]>(sides.map(s => [s, []]));
    for (const side of sides)
      for (let i = 0; i < WARMUP_OPS; i++) {
        await locks.get(side)!.acquire(false);
        await locks.get(side)!.release();
      }
    for (let round = 0; round < ROUNDS; round++)
      for (const side of sides)
        for (let i = 0; i < OPS_PER_ROUND; i++) {
          const t = performance.now();
          await locks.get(side)!.acquire(false);
          await locks.get(side)!.release();
          latencies.get(side)!.push(performance.now() - t);
        }
    for (const lock of locks.values()) await lock.close();

    console.log(`sequential acquire+release, ${ROUNDS * OPS_PER_ROUND} each (interleaved rounds):`);
    const p50 = new Map<Side, number>();
    const p99 = new Map<Side, number>();
    for (const side of sides) {
      const sorted = [...latencies.get(side)!].sort((a, b) => a - b);
      p50.set(side, percentile(sorted, 0.5));
      p99.set(side, percentile(sorted, 0.99));
      console.log(`  ${side.padEnd(15)} p50 ${p50.get(side)!.toFixed(3)} ms   p99 ${p99.get(side)!.toFixed(3)} ms`);
    }

    console.log(`contention: ${CONTENDERS} managers on one name, ${CONTENTION_OPS_PER_CLIENT} acquire(wait)+release each:`);
    const perSecond = new Map<Side, number>();
    for (const side of ['lockstep etcd', 'lockstep redis'] as const) {
      const clients = Array.from({ length: CONTENDERS }, () => open(side));
      const start = performance.now();
      await Promise.all(
        clients.map(async lock => {
          for (let i = 0; i < CONTENTION_OPS_PER_CLIENT; i++) {
            await lock.acquire(true);
            await lock.release();
          }
        }),
      );
      const seconds = (performance.now() - start) / 1000;
      for (const lock of clients) await lock.close();
      perSecond.set(side, (CONTENDERS * CONTENTION_OPS_PER_CLIENT) / seconds);
      console.log(`  ${side.padEnd(15)} ${perSecond.get(side)!.toFixed(1)} acquisitions/s`);
    }
    const etcd = p50.get('lockstep etcd')!;
    const floor = p50.get('etcd floor')!;
    summaryRow({
      bench: 'etcdLeases',
      what: WHAT,
      lockstep: `p50 ${figure(etcd)} ms, p99 ${figure(p99.get('lockstep etcd')!)} ms; ${CONTENDERS} contending managers ${figure(perSecond.get('lockstep etcd')!)} acquisitions/s`,
      baseline: `etcd floor (put-if-absent transaction + delete) p50 ${figure(floor)} ms (**${times(etcd / floor)}**); Lockstep on redis-server p50 ${figure(p50.get('lockstep redis')!)} ms, ${figure(perSecond.get('lockstep redis')!)} acquisitions/s contended`,
      target: TARGET,
    });
  } finally {
    await redis.dispose();
    await cluster.dispose();
  }
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
