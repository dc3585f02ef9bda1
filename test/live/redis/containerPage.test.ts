import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Redis from 'ioredis';
import { createGitFixture, type GitFixture } from '../../helpers/gitFixture';
import { randomPrefix, removeKeysUnder } from './prefixKeys';
import { RedisServer, requireRedisServer } from './redisServer';

/**
 * One lock page per container on Redis, through real `lockstep` processes: init commits driver,
 * prefix and URL; a clone whose LOCKSTEP_DRIVER=auto would pick a store by whether Redis answers is
 * refused before any store is opened (exit 5), whether Redis answers or not, and never issues a grant.
 */
describe('one lock page per container: redis driver, and no auto flipping (live redis-server)', function () {
  this.timeout(120_000);
  let server: RedisServer;
  let team: GitFixture;
  const prefix = randomPrefix();

  before(async function () {
    requireRedisServer(this);
    server = await RedisServer.start();
    team = await createGitFixture({
      members: ['ana', 'ben'],
      operators: ['ana'],
      initArgs: ['--driver', 'redis'],
      env: { LOCKSTEP_REDIS_URL: server.url, LOCKSTEP_PREFIX: prefix },
    });
  });

  after(async () => {
    team?.dispose();
    if (server) {
      server.unpause();
      const admin = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        assert.equal(await removeKeysUnder(admin, prefix), 0);
      } finally {
        admin.disconnect();
        await server.dispose();
      }
    }
  });

  it('init committed driver redis, the prefix and the URL; a clone with no LOCKSTEP_* reads the page', async () => {
    const ana = team.member('ana');
    const file = JSON.parse(fs.readFileSync(path.join(ana.dir, '.lockstep.json'), 'utf8'));
    assert.deepEqual([file.driver, file.prefix, file.redisUrl], ['redis', prefix, server.url]);
    const bare = { LOCKSTEP_REDIS_URL: undefined, LOCKSTEP_PREFIX: undefined, LOCKSTEP_PATH: undefined };
    const acquired = await team.cli(ana, ['acquire'], { env: bare });
    assert.equal(acquired.code, 0, acquired.stdout + acquired.stderr);
    assert.equal(acquired.json.grant, 1);
    const status = await team.cli(team.member('ben'), ['status'], { env: bare });
    assert.deepEqual(status.json.page, { driver: 'redis', location: server.url, prefix, container: team.container });
  });

  it('LOCKSTEP_DRIVER=auto points away from the committed redis page: refused (exit 5) with Redis up and frozen, no grant; without it, the page', async () => {
    const ben = team.member('ben');
    const auto = { LOCKSTEP_DRIVER: 'auto' };
    const refusedWhile = async (state: string) => {
      const attempt = await team.cli(ben, ['acquire'], { env: auto });
      assert.equal(attempt.code, 5, `${state}: ${attempt.stdout}${attempt.stderr}`);
      assert.equal(attempt.json.error.reason, 'no-page');
      assert.match(attempt.json.error.message, /^LOCKSTEP_DRIVER points at another lock page/);
      assert.match(
        attempt.json.error.message,
        new RegExp(`commits for container .*redis driver at ${server.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, prefix ${prefix}`),
      );
    };
    await refusedWhile('Redis up');
    server.pause();
    try {
      await refusedWhile('Redis frozen');
    } finally {
      server.unpause();
    }
    const again = await team.cli(ben, ['status'], { env: {} });
    assert.deepEqual(
      [again.code, again.json.grant, again.json.holder?.identity],
      [0, 1, 'ana@example.com'],
      'no grant was issued while LOCKSTEP_DRIVER=auto was set',
    );
  });
});
