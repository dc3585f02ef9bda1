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

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const OPS_PER_ROUND = Number(process.env.BENCH_OPS_PER_ROUND ?? 60);
const WARMUP_OPS = 30;
const CONTENDERS = 8;
const CONTENTION_OPS_PER_CLIENT = Number(process.env.BENCH_CONTENTION_OPS ?? 15);
const TTL_S = 30;
const PREFIX = `lockstep-bench-${randomUUID().slice(0, 8)}`;

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
  const cluster = await EtcdCluster.start();
  const redis = await RedisServer.start();
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
    for (const side of sides) {
      const sorted = [...latencies.get(side)!].sort((a, b) => a - b);
      console.log(`  ${side.padEnd(15)} p50 ${percentile(sorted, 0.5).toFixed(3)} ms   p99 ${percentile(sorted, 0.99).toFixed(3)} ms`);
    }

    console.log(`contention: ${CONTENDERS} managers on one name, ${CONTENTION_OPS_PER_CLIENT} acquire(wait)+release each:`);
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
      console.log(`  ${side.padEnd(15)} ${((CONTENDERS * CONTENTION_OPS_PER_CLIENT) / seconds).toFixed(1)} acquisitions/s`);
    }
  } finally {
    await redis.dispose();
    await cluster.dispose();
  }
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
