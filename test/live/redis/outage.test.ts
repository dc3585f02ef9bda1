import * as assert from 'node:assert/strict';
import Redis from 'ioredis';
import { resolveConfig } from '../../../src/core/config';
import { openDriver } from '../../../src/core/drivers';
import { LockBackendError, exitCodeFor } from '../../../src/core/errors';
import { createLockManager } from '../../../src/core/leases';
import { keyDigest } from '../../../src/core/names';
import type { Driver } from '../../../src/core/stores/store';
import { hashToken, newOwnerToken } from '../../../src/core/tokens';
import { waitFor } from '../../helpers/waitFor';
import { randomPrefix, removeKeysUnder } from './prefixKeys';
import { RedisServer, requireRedisServer } from './redisServer';

const TIMEOUTS = { connectTimeoutMs: 500, commandTimeoutMs: 500 };

/** The operation's result once Redis answers again; undefined while it still fails with LockBackendError. */
async function onceAnswering<T>(operation: () => Promise<T>): Promise<{ value: T } | undefined> {
  try {
    return { value: await operation() };
  } catch (error) {
    if (error instanceof LockBackendError) return undefined;
    throw error;
  }
}

async function backendFailure(operation: Promise<unknown>): Promise<LockBackendError> {
  const started = performance.now();
  const error = await operation.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof LockBackendError, `expected LockBackendError, got ${String(error)}`);
  assert.equal(exitCodeFor(error), 4);
  assert.equal(error.retryable, true);
  // Bounded by the connect/command timeouts, never a hang (generous for a loaded CI machine).
  assert.ok(performance.now() - started < 5_000, `took ${Math.round(performance.now() - started)} ms`);
  return error;
}

describe('redis driver: outages (live redis-server)', function () {
  this.timeout(60_000);
  let server: RedisServer;
  let driver: Driver;
  const prefix = randomPrefix();

  before(async function () {
    requireRedisServer(this);
    server = await RedisServer.start();
    driver = await openDriver(resolveConfig({ driver: 'redis', prefix, redisUrl: server.url, ...TIMEOUTS }, {}));
  });

  after(async () => {
    await driver?.close();
    await server?.dispose();
  });

  it('a frozen server: typed backend error (command timeout), then the still-live lease extends again', async () => {
    const key = keyDigest(prefix, 'frozen-server');
    const owner = hashToken(newOwnerToken());
    assert.ok((await driver.claim(key, owner, 30_000, Date.now())).claimed);
    server.pause();
    try {
      await backendFailure(driver.extend(key, owner, 30_000, Date.now()));
    } finally {
      server.unpause();
    }
    const resumed = await waitFor(() => onceAnswering(() => driver.extend(key, owner, 30_000, Date.now())), {
      description: 'Redis answering again',
    });
    assert.equal(resumed.value, true, 'the lease was still live, so the heartbeat resumes');
    assert.equal(await driver.release(key, owner, Date.now()), 'released');
  });

  it('a stopped server: typed backend error, no driver switch; after restart the lost lease is reported lost', async () => {
    const key = keyDigest(prefix, 'stopped-server');
    const owner = hashToken(newOwnerToken());
    assert.ok((await driver.claim(key, owner, 30_000, Date.now())).claimed);
    const record = keyDigest(prefix, 'watched-record');
    let changes = 0;
    const watching = driver.watch!(record, () => {
      changes++;
    });
    await waitFor(() => changes >= 1, { description: 'the subscription' });
    const auto = createLockManager({ driver: 'auto', prefix, redisUrl: server.url, ...TIMEOUTS, env: {} });
    assert.equal(await auto.driverName(), 'redis');

    await server.stop();
    await backendFailure(driver.extend(key, owner, 30_000, Date.now()));
    await backendFailure(driver.claim(keyDigest(prefix, 'other'), owner, 30_000, Date.now()));
    await backendFailure(auto.acquire('during-outage'));
    assert.equal(await auto.driverName(), 'redis', 'auto never switches after choosing');

    const changesBeforeRestart = changes;
    await server.resume();
    // Persistence is off, so the restarted server lost the lease: extend must say so, not pretend.
    const resumed = await waitFor(() => onceAnswering(() => driver.extend(key, owner, 30_000, Date.now())), {
      description: 'Redis answering again',
    });
    assert.equal(resumed.value, false, 'the lease is reported lost');
    const handle = await auto.acquire('after-restart');
    assert.ok(handle.acquired);
    assert.equal(await handle.release(), true);
    // Watchers hear about the reconnection (changes during the outage could not be published).
    await waitFor(() => changes > changesBeforeRestart, { description: 'a change notification after reconnecting' });
    watching.dispose();
    await auto.close();

    const admin = new Redis(server.url);
    try {
      assert.equal(await removeKeysUnder(admin, prefix), 0);
    } finally {
      admin.disconnect();
    }
  });
});
