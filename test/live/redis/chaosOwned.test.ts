import * as assert from 'node:assert/strict';
import Redis from 'ioredis';
import { childEnv, runTs } from '../../helpers/children';
import { RedisServer, requireRedisServer } from './redisServer';

/**
 * Issue 15, bad input: `chaos/run.ts --redis-url URL` refuses a database that holds any key (exit 3, the
 * key untouched) and, after a real run on an empty one, leaves it empty again (only its prefix's keys go).
 */
describe('chaos harness: only a Redis database it owns', function () {
  this.timeout(120_000);
  let server: RedisServer;
  let client: Redis;
  before(async function () {
    requireRedisServer(this);
    server = await RedisServer.start();
    client = new Redis(server.url);
  });
  after(async () => {
    client?.disconnect();
    await server?.dispose();
  });
  const chaos = () =>
    runTs(
      'chaos/run.ts',
      ['--seconds', '2', '--workers', '2', '--names', '1', '--drivers', 'redis', '--redis-url', server.url],
      childEnv({}),
      90_000,
    );

  it('refuses a database holding a key it did not create, and leaves that key', async () => {
    await client.set('someone:else', 'theirs');
    const run = await chaos();
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /already holds 1 keys the chaos harness did not create/);
    assert.equal(await client.get('someone:else'), 'theirs');
    assert.equal(await client.dbsize(), 1);
    await client.del('someone:else');
  });

  it('runs on an empty database and removes every key it made', async () => {
    const run = await chaos();
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /[1-9]\d* critical sections/);
    assert.equal(await client.dbsize(), 0);
  });
});
