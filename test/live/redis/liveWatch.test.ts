import * as assert from 'node:assert/strict';
import Redis from 'ioredis';
import { HOUR, ManualClock } from '../../../src/core/clock';
import { resolveConfig } from '../../../src/core/config';
import { openDriver } from '../../../src/core/drivers';
import { keyDigest } from '../../../src/core/names';
import { IDLE_INTEREST } from '../../../src/core/stores/pollPace';
import type { Driver } from '../../../src/core/stores/store';
import { WatchKeeper } from '../../../src/extension/watchKeeper';
import { waitFor } from '../../helpers/waitFor';
import { randomPrefix } from './prefixKeys';
import { RedisServer, requireRedisServer } from './redisServer';

/**
 * A window's watch on a real redis-server (issue 30): no periodic read while subscribed, one read
 * when the subscriber's connection is killed and one when ioredis has subscribed again — the
 * window's re-reads run on a ManualClock, the connection and its events are real.
 */
describe('redis: a window reads nothing while subscribed, and once after a reconnection (live redis-server)', function () {
  this.timeout(60_000);
  let server: RedisServer;
  let driver: Driver;
  let admin: Redis;
  const prefix = randomPrefix();

  before(async function () {
    requireRedisServer(this);
    server = await RedisServer.start();
    driver = await openDriver(
      resolveConfig({ driver: 'redis', prefix, redisUrl: server.url, connectTimeoutMs: 2_000, commandTimeoutMs: 2_000 }, {}),
    );
    admin = new Redis(server.url);
  });

  after(async () => {
    admin?.disconnect();
    await driver?.close();
    await server?.dispose();
  });

  it('0 reads in a simulated idle hour; a killed subscription costs one read, its return one more, and a write is heard again', async () => {
    const key = keyDigest(prefix, 'live-watch');
    const clock = new ManualClock();
    let reads = 0;
    const keeper = new WatchKeeper({
      open: async (onChange, options) => driver.watch?.(key, onChange, options),
      read: () => reads++,
      pollMs: () => 10_000,
      interest: () => IDLE_INTEREST,
      clock,
    });
    try {
      await keeper.start();
      await waitFor(() => reads >= 1 || undefined, { description: 'the subscription in place (its one read)' });
      clock.advance(HOUR);
      assert.equal(reads, 1, 'no read in an idle hour while subscribed');
      assert.equal(clock.pendingTimers, 0);
      assert.equal(keeper.freshness().live, 'pub/sub');

      await driver.compareAndSwap(key, null, { n: 1 }, { summary: 'a write' });
      await waitFor(() => reads >= 2 || undefined, { description: 'the write heard' });

      const before = reads;
      const killed = await admin.client('KILL', 'TYPE', 'pubsub');
      assert.ok(Number(killed) >= 1, 'the subscriber connection was killed');
      await waitFor(() => reads >= before + 2 || undefined, { description: 'a read at the drop and one after the reconnection' });
      assert.equal(keeper.freshness().live, 'pub/sub', 'subscribed again');
      const after = reads;
      clock.advance(HOUR);
      assert.equal(reads, after, 'healthy again: no read in the next idle hour');

      const current = await driver.read(key);
      await driver.compareAndSwap(key, current?.revision ?? null, { n: 2 }, { summary: 'another write' });
      await waitFor(() => reads > after || undefined, { description: 'a write heard on the new subscription' });
    } finally {
      keeper.dispose();
    }
  });
});
