import * as assert from 'node:assert/strict';
import { inspect } from 'node:util';
import Redis from 'ioredis';
import { resolveConfig, type LockManagerOptions } from '../../../src/core/config';
import { openDriver } from '../../../src/core/drivers';
import { LockReplicationError, exitCodeFor } from '../../../src/core/errors';
import { createLockManager } from '../../../src/core/leases';
import { keyDigest } from '../../../src/core/names';
import { randomPrefix } from '../redis/prefixKeys';
import { contendThroughFailover } from './failoverRun';
import { requireHaPackages, SentinelDeployment } from './topology';

describe('redis driver on Sentinel: 1 master, 2 replicas, 3 sentinels (live)', function () {
  this.timeout(120_000);
  let deployment: SentinelDeployment | undefined;
  const prefix = randomPrefix();
  const options = (extra: LockManagerOptions = {}): LockManagerOptions => ({
    driver: 'redis',
    prefix,
    redisUrl: deployment!.url(),
    connectTimeoutMs: 1_000,
    commandTimeoutMs: 1_000,
    ...extra,
  });

  before(async function () {
    requireHaPackages(this, 'sentinel');
    deployment = await SentinelDeployment.start();
  });

  after(async () => {
    await deployment?.dispose();
  });

  it('finds the master through the sentinels and reports the deployment: sentinel, 2 replicas, WAIT for 1', async () => {
    const driver = await openDriver(resolveConfig(options(), {}));
    try {
      assert.deepEqual(await driver.describeDeployment!(), { kind: 'redis-sentinel', masters: 1, replicas: 2, minReplicas: 1 });
      const lockstep = createLockManager({ ...options(), env: {} });
      const held = await lockstep.acquire('sentinel-hello', { ttl: 30 });
      assert.ok(held.acquired);
      assert.equal(await held.release(), true);
      await lockstep.close();
    } finally {
      await driver.close();
    }
  });

  it('fails a grant that too few replicas confirm (LockReplicationError, exit 4) and releases the lease', async () => {
    const lockstep = createLockManager({ ...options({ redisMinReplicas: 3 }), env: {} });
    const started = performance.now();
    const error = await lockstep.acquire('needs-three-replicas', { ttl: 30 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await lockstep.close();
    assert.ok(error instanceof LockReplicationError, String(error));
    assert.equal(exitCodeFor(error), 4);
    assert.equal(error.reason, 'replication');
    assert.equal(error.required, 3);
    assert.equal(error.acknowledged, 2);
    assert.match(error.message, /LOCKSTEP_REDIS_MIN_REPLICAS/);
    assert.ok(performance.now() - started < 1_000 + 500, 'bounded by the command timeout');
    const shown = [error.message, inspect(error, { depth: 5 }), JSON.stringify(error)].join('\n');
    assert.ok(!shown.includes('needs-three-replicas') && !shown.includes(prefix), 'the error names the lease or the key');
    const master = await deployment!.master();
    const admin = new Redis(master.port, '127.0.0.1');
    try {
      const digest = keyDigest(prefix, 'needs-three-replicas');
      assert.equal(await admin.exists(`${prefix}:lease:${digest}`), 0, 'the unconfirmed lease was released');
      assert.equal(await admin.get(`${prefix}:fence:${digest}`), '1', 'its token stays used');
    } finally {
      admin.disconnect();
    }
  });

  for (const minReplicas of [1, 0]) {
    it(`8 processes contend while the master is SIGKILLed and a replica promoted (minReplicas ${minReplicas})`, async () => {
      if (minReplicas === 0) {
        // A fresh deployment: the first run left one master and one replica.
        await deployment?.dispose();
        deployment = undefined;
        deployment = await SentinelDeployment.start();
      }
      const current = deployment!;
      const old = await current.master();
      const report = await contendThroughFailover({
        label: 'sentinel',
        url: current.url(),
        prefix,
        name: `failover-${minReplicas}`,
        minReplicas,
        kill: () => old.kill(),
        promoted: async () => (await current.master()) !== old,
      });
      assert.ok(report.acquisitionsAfterKill > 0, 'the run went on after the failover');
      assert.equal(report.otherErrors, 0, 'only backend errors during the failover');
      if (minReplicas > 0) {
        assert.equal(report.duplicateLiveLeases, 0, 'two live leases at once');
        assert.equal(report.tokensBackwards, 0, 'a fencing token went backwards');
      }
    });
  }
});
