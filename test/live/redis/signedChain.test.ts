import { packPage, unpackPage } from '../../../src/core/stores/packedPage';
import Redis from 'ioredis';
import { redisKeys } from '../../../src/core/stores/redis/keys';
import { openpgpChainAttacks } from '../../helpers/openpgpChainAttacks';
import { type AttackedStore, signedChainAttacks } from '../../helpers/signedChainAttacks';
import { randomPrefix } from './prefixKeys';
import { RedisServer, requireRedisServer } from './redisServer';

/**
 * The signed chain of a lock page on Redis (signedChainAttacks.ts), against a real redis-server: bob,
 * with the store's credentials, writes the record hash with HSET (and bumps its revision as the
 * driver's script does) to name himself holder, and separately to set the page back past alice's
 * acquire.
 */
const redisStore = async (context: Mocha.Context): Promise<AttackedStore> => {
  requireRedisServer(context);
  const server = await RedisServer.start();
  const url = server.url;
  const prefix = randomPrefix();
  return {
    dispose: () => server.dispose(),
    teamOptions: { initArgs: ['--driver', 'redis'], env: { LOCKSTEP_REDIS_URL: url, LOCKSTEP_PREFIX: prefix } },
    hand: (_team, key) => {
      const record = redisKeys(prefix).record(key);
      const withClient = async <T>(use: (client: Redis) => Promise<T>): Promise<T> => {
        const client = new Redis(url, { maxRetriesPerRequest: 1 });
        try {
          return await use(client);
        } finally {
          client.disconnect();
        }
      };
      const write = (text: string) =>
        withClient(async client => {
          await client.multi().hset(record, 'v', text).hincrby(record, 'rev', 1).exec();
        });
      return {
        top: () => withClient(async client => unpackPage(JSON.parse((await client.hget(record, 'v')) as string), 'redis')),
        async writeTop(value) {
          const before = await withClient(async client => (await client.hget(record, 'v')) as string);
          await write(JSON.stringify(packPage(value, 'redis')));
          return () => write(before);
        },
      };
    },
  };
};

signedChainAttacks('redis', redisStore);
// The same store, its people signing with GPG (openpgpChainAttacks.ts).
openpgpChainAttacks('redis', redisStore);
