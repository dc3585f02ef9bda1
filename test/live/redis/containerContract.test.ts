import { randomBytes } from 'node:crypto';
import { describeContainerContract } from '../../contract/containerContract';
import { RedisServer, requireRedisServer } from './redisServer';

// The container contract (CLI transitions, both guards with real git) with Redis as the container's store.
describe('on a live redis-server', () => {
  let server: RedisServer | undefined;
  after(async () => {
    await server?.dispose();
  });
  describeContainerContract('redis', async context => {
    requireRedisServer(context);
    server = await RedisServer.start();
    return {
      driver: 'redis',
      initArgs: ['--driver', 'redis'],
      env: { LOCKSTEP_DRIVER: 'redis', LOCKSTEP_REDIS_URL: server.url, LOCKSTEP_PREFIX: `container-${randomBytes(4).toString('hex')}` },
    };
  });
});
