import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import Redis, { Cluster } from 'ioredis';
import { resolveConfig, type LockManagerOptions } from '../../../src/core/config';
import { openDriver } from '../../../src/core/drivers';
import { keyDigest } from '../../../src/core/names';
import type { Driver } from '../../../src/core/stores/store';
import { hashToken, newOwnerToken } from '../../../src/core/tokens';
import { describeContainerContract } from '../../contract/containerContract';
import { describeDriverContract } from '../../contract/driverContract';
import { waitFor } from '../../helpers/waitFor';
import { randomPrefix } from '../redis/prefixKeys';
import { contendThroughFailover } from './failoverRun';
import { ClusterDeployment, requireHaPackages } from './topology';

describe('redis driver on a Cluster: 3 masters, 3 replicas (live)', function () {
  this.timeout(120_000);
  let deployment: ClusterDeployment | undefined;
  const prefix = randomPrefix();
  const options = (extra: LockManagerOptions = {}): LockManagerOptions => ({
    driver: 'redis',
    prefix,
    redisUrl: deployment!.url(),
    connectTimeoutMs: 2_000,
    commandTimeoutMs: 2_000,
    ...extra,
  });
  const open = (extra: LockManagerOptions = {}): Promise<Driver> => openDriver(resolveConfig(options(extra), {}));

  before(async function () {
    requireHaPackages(this, 'cluster');
    deployment = await ClusterDeployment.start();
  });

  after(async () => {
    await deployment?.dispose();
  });

  describeDriverContract('redis cluster', () => open());

  describeContainerContract('redis cluster', async () => ({
    driver: 'redis',
    initArgs: ['--driver', 'redis'],
    env: {
      LOCKSTEP_DRIVER: 'redis',
      LOCKSTEP_REDIS_URL: deployment!.url(),
      LOCKSTEP_PREFIX: `container-${randomBytes(4).toString('hex')}`,
    },
  }));

  it('reports the deployment: cluster, 3 masters, 3 replicas, WAIT for 1', async () => {
    const driver = await open();
    const expected = { kind: 'redis-cluster', masters: 3, replicas: 3, minReplicas: 1 };
    try {
      // Failing nodes are not counted, and on a loaded machine a node that misses the cluster's short node
      // timeout is flagged `fail?` by its peers for a moment (CI at load 12 saw 1 replica): the report is
      // judged once the cluster sees all six nodes healthy again, as an operator reading it would.
      let seen: unknown;
      await waitFor(
        async () => {
          seen = await driver.describeDeployment!();
          return isDeepStrictEqual(seen, expected);
        },
        { timeoutMs: 20_000, intervalMs: 200, description: 'the deployment report' },
      ).catch(() => undefined);
      assert.deepEqual(seen, expected);
    } finally {
      await driver.close();
    }
  });

  it('keeps every key of one lease in one hash slot, spreads different leases, and announces record changes across nodes', async () => {
    const [watching, writing] = [await open(), await open()];
    const admin = new Cluster([{ host: '127.0.0.1', port: deployment!.servers[0]!.port }]);
    try {
      const slots = new Set<number>();
      for (let i = 0; i < 8; i++) {
        const key = keyDigest(prefix, `spread-${i}`);
        const owner = hashToken(newOwnerToken());
        assert.ok((await writing.claim(key, owner, 30_000, Date.now())).claimed);
        const [lease, fence] = await Promise.all(
          [`${prefix}:lease:{${key}}`, `${prefix}:fence:{${key}}`].map(k => admin.call('CLUSTER', 'KEYSLOT', k)),
        );
        assert.equal(lease, fence);
        slots.add(Number(lease));
        assert.equal(await admin.exists(`${prefix}:lease:{${key}}`), 1);
        assert.equal(await writing.release(key, owner, Date.now()), 'released');
      }
      assert.ok(slots.size > 1, 'different leases land in different slots');

      // The watcher's subscriber sits on one node; the record's master may be another: PUBLISH reaches every node.
      const records = Array.from({ length: 4 }, (_, i) => keyDigest(prefix, `watched-${i}`));
      const seen = new Map<string, number>(records.map(r => [r, 0]));
      const subscriptions = records.map(r => watching.watch!(r, () => seen.set(r, seen.get(r)! + 1)));
      try {
        await waitFor(() => [...seen.values()].every(n => n >= 1), { description: 'every subscription' });
        for (const r of records) assert.ok((await writing.compareAndSwap(r, null, { v: 1 }, { summary: 'x' })).ok);
        await waitFor(() => [...seen.values()].every(n => n >= 2), { description: 'a change announced for every record' });
      } finally {
        for (const s of subscriptions) s.dispose();
      }
    } finally {
      admin.disconnect();
      await Promise.all([watching.close(), writing.close()]);
    }
  });

  // Last: it leaves the cluster with a master that was a replica.
  describe('failover', () => {
    it("8 processes contend while the lease's master is SIGKILLed and its replica promoted (minReplicas 1)", async () => {
      const current = deployment!;
      const name = 'cluster-failover';
      const probe = new Redis(current.servers[0]!.port, '127.0.0.1');
      const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', `${prefix}:lease:{${keyDigest(prefix, name)}}`));
      probe.disconnect();
      const old = await current.masterOfSlot(slot);
      let rejoined = false;
      const report = await contendThroughFailover({
        label: 'cluster',
        url: current.url(),
        prefix,
        name,
        minReplicas: 1,
        kill: () => old.kill(),
        // The promoted replica was the shard's only one, so with minReplicas 1 its grants fail until a
        // replica follows it: the killed node is restarted, as an operator would, and rejoins as that replica.
        promoted: async () => {
          if (rejoined) return true;
          if ((await current.masterOfSlot(slot)) === old) return false;
          await old.resume();
          rejoined = true;
          return true;
        },
      });
      assert.ok(report.acquisitionsAfterKill > 0, 'the run went on after the failover');
      assert.equal(report.otherErrors, 0, 'only backend errors during the failover');
      assert.equal(report.duplicateLiveLeases, 0, 'two live leases at once');
      assert.equal(report.tokensBackwards, 0, 'a fencing token went backwards');
    });
  });
});
