import * as assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { resolveConfig } from '../../src/core/config';
import { withoutCredentials } from '../../src/core/container/pageLocation';
import { LockConfigurationError } from '../../src/core/errors';
import { redactUrl } from '../../src/core/redact';
import { nodesFromClusterNodes, replicasFromInfo } from '../../src/core/stores/redis/deployment';
import { redisKeys } from '../../src/core/stores/redis/keys';
import { parseRedisTarget } from '../../src/core/stores/redis/redisTarget';

const DIGEST = 'ab'.repeat(32);

/** Asserts a configuration error about redisUrl that shows none of `secrets`. */
function refused(url: string, pattern: RegExp, secrets: string[] = []): void {
  assert.throws(
    () => parseRedisTarget(url),
    (error: unknown) => {
      assert.ok(error instanceof LockConfigurationError);
      assert.equal(error.setting, 'redisUrl');
      assert.match(error.message, pattern);
      const shown = `${error.message}\n${inspect(error)}`;
      for (const secret of secrets) assert.ok(!shown.includes(secret), `the error shows ${secret}`);
      return true;
    },
  );
}

describe('redis URLs: one server, Sentinel, Cluster', () => {
  it("reads a Sentinel URL: sentinels, master name, db, and the data nodes' credentials", () => {
    assert.deepEqual(parseRedisTarget('redis-sentinel://bot:p%40ss@10.0.0.1:26380,sentinel-b,[::1]:26381/orders?db=3'), {
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26380 },
        { host: 'sentinel-b', port: 26379 },
        { host: '::1', port: 26381 },
      ],
      masterName: 'orders',
      db: 3,
      credentials: { username: 'bot', password: 'p@ss' },
    });
  });

  it('reads a Cluster URL with at least two seed nodes', () => {
    assert.deepEqual(parseRedisTarget('redis-cluster://:Secret-1@a:7000,b'), {
      kind: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 6379 },
      ],
      credentials: { password: 'Secret-1' },
    });
  });

  it('keeps redis:// and rediss:// as one server', () => {
    assert.deepEqual(parseRedisTarget('redis://u:p@h:1/2'), { kind: 'standalone', url: 'redis://u:p@h:1/2' });
    assert.equal(parseRedisTarget('rediss://h').kind, 'standalone');
  });

  it('refuses a Sentinel URL without a master name, a one-node Cluster URL and other schemes, without echoing them', () => {
    refused('redis-sentinel://bot:Hidden-9@h1:26379,h2:26379', /master's name/, ['Hidden-9', 'bot', 'h1']);
    refused('redis-sentinel://bot:Hidden-9@h1:26379,h2:26379/', /master's name/, ['Hidden-9']);
    refused('redis-cluster://bot:Hidden-9@h1:7000', /at least two seed nodes/, ['Hidden-9', 'bot', 'h1']);
    refused('redis-cluster://h1:7000,h2:7001/3', /no path/);
    refused('redis-sentinel://h1:99999/m', /host:port/);
    refused('redis-sentinel://h1/m?password=Hidden-9', /only the query parameter db/, ['Hidden-9']);
    refused('http://bot:Hidden-9@example.invalid', /scheme/, ['Hidden-9', 'bot']);
    refused('not a url at all Hidden-9', /not a URL/, ['Hidden-9']);
  });

  it('shows multi-host URLs without the password (settings) and without credentials (.lockstep.json, page)', () => {
    const url = 'redis-sentinel://bot:Hidden-9@h1:26379,h2:26380/orders?db=2';
    assert.equal(redactUrl(url), 'redis-sentinel://bot:***@h1:26379,h2:26380/orders?db=2');
    assert.equal(withoutCredentials(url), 'redis-sentinel://h1:26379,h2:26380/orders?db=2');
    assert.equal(withoutCredentials('redis-cluster://:Hidden-9@a:1,b:2'), 'redis-cluster://a:1,b:2');
    const config = resolveConfig({ driver: 'redis', redisUrl: url }, {});
    assert.ok(!JSON.stringify(config).includes('Hidden-9') && !inspect(config).includes('Hidden-9'));
  });

  it('takes the number of replicas to wait for from LOCKSTEP_REDIS_MIN_REPLICAS over the option, and refuses nonsense', () => {
    assert.equal(resolveConfig({}, {}).redisMinReplicas, undefined);
    assert.equal(resolveConfig({ redisMinReplicas: 2 }, {}).redisMinReplicas, 2);
    assert.equal(resolveConfig({ redisMinReplicas: 2 }, { LOCKSTEP_REDIS_MIN_REPLICAS: '0' }).redisMinReplicas, 0);
    assert.throws(
      () => resolveConfig({}, { LOCKSTEP_REDIS_MIN_REPLICAS: 'one' }),
      (e: unknown) => e instanceof LockConfigurationError && e.setting === 'LOCKSTEP_REDIS_MIN_REPLICAS',
    );
    assert.throws(
      () => resolveConfig({ redisMinReplicas: -1 }, {}),
      (e: unknown) => e instanceof LockConfigurationError && e.setting === 'redisMinReplicas',
    );
  });
});

describe('redis keys and deployment replies', () => {
  it('tags the digest on a Cluster, so a lease, its counter, a record and its channel share one hash slot', () => {
    const tagged = redisKeys('team', { hashTags: true });
    assert.equal(tagged.lease(DIGEST), `team:lease:{${DIGEST}}`);
    assert.equal(tagged.fence(DIGEST), `team:fence:{${DIGEST}}`);
    assert.equal(tagged.record(DIGEST), `team:record:{${DIGEST}}`);
    assert.equal(tagged.recordChannel(DIGEST), `team:record-changed:{${DIGEST}}`);
    assert.equal(redisKeys('team').lease(DIGEST), `team:lease:${DIGEST}`, 'one server keeps the keys it always had');
  });

  it('counts online replicas in INFO replication', () => {
    const info =
      'role:master\r\nconnected_slaves:3\r\nslave0:ip=127.0.0.1,port=1,state=online,offset=5,lag=0\r\n' +
      'slave1:ip=127.0.0.1,port=2,state=wait_bgsave,offset=0,lag=0\r\nslave2:ip=127.0.0.1,port=3,state=online,offset=5,lag=1\r\n';
    assert.equal(replicasFromInfo(info), 2);
    assert.equal(replicasFromInfo('role:master\r\nconnected_slaves:0\r\n'), 0);
  });

  it('counts masters with slots and connected replicas in CLUSTER NODES, leaving out failed nodes', () => {
    const nodes = [
      'a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460',
      'a2 127.0.0.1:7001@17001 master - 0 1 2 connected 5461-10922',
      'a3 127.0.0.1:7002@17002 master,fail - 0 1 3 disconnected 10923-16383',
      'b1 127.0.0.1:7003@17003 slave a1 0 1 1 connected',
      'b2 127.0.0.1:7004@17004 slave a2 0 1 2 connected',
      'b3 127.0.0.1:7005@17005 master - 0 1 7 connected 10923-16383',
      'c1 127.0.0.1:7006@17006 master - 0 1 0 connected',
    ].join('\n');
    assert.deepEqual(nodesFromClusterNodes(nodes), { masters: 3, replicas: 2 });
  });
});
