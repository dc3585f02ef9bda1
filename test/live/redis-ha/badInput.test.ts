import * as assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { LockBackendError, LockConfigurationError, exitCodeFor } from '../../../src/core/errors';
import { createLockManager } from '../../../src/core/leases';
import { freePort } from '../redis/redisServer';

/** The error an acquisition on `redisUrl` ends with, checked to show none of `secrets`. */
async function failure(redisUrl: string, secrets: string[]): Promise<unknown> {
  const lockstep = createLockManager({
    driver: 'redis',
    prefix: 'bad-input',
    redisUrl,
    connectTimeoutMs: 500,
    commandTimeoutMs: 500,
    env: {},
  });
  const started = performance.now();
  const error = await lockstep.acquire('bad-input-NAME').then(
    () => undefined,
    (e: unknown) => e,
  );
  await lockstep.close();
  assert.ok(performance.now() - started < 5_000, 'bounded by the timeouts');
  const shown =
    error instanceof Error
      ? [error.message, error.stack ?? '', inspect(error, { depth: 10 }), JSON.stringify(error)].join('\n')
      : String(error);
  for (const secret of [...secrets, 'bad-input-NAME']) assert.ok(!shown.includes(secret), `the error shows ${secret}`);
  return error;
}

describe('redis Sentinel and Cluster URLs: bad input', () => {
  it('a Sentinel URL without a master name is a configuration error (exit 2) that names the form', async () => {
    const error = await failure('redis-sentinel://bot:Hidden-Pass-1@127.0.0.1:26379,127.0.0.1:26380', ['Hidden-Pass-1', 'bot']);
    assert.ok(error instanceof LockConfigurationError, String(error));
    assert.equal(exitCodeFor(error), 2);
    assert.match(error.message, /mastername/);
  });

  it('a Cluster URL with one node is a configuration error (exit 2)', async () => {
    const error = await failure('redis-cluster://bot:Hidden-Pass-2@127.0.0.1:7000', ['Hidden-Pass-2', 'bot']);
    assert.ok(error instanceof LockConfigurationError, String(error));
    assert.equal(exitCodeFor(error), 2);
    assert.match(error.message, /two seed nodes/);
  });

  it('unreachable sentinels and cluster nodes are backend errors (exit 4), bounded, without credentials or addresses', async () => {
    const [a, b] = [await freePort(), await freePort()];
    const sentinel = await failure(`redis-sentinel://bot:Hidden-Pass-3@127.0.0.1:${a},127.0.0.1:${b}/orders`, [
      'Hidden-Pass-3',
      'bot',
      String(a),
      String(b),
      'orders',
    ]);
    assert.ok(sentinel instanceof LockBackendError, String(sentinel));
    assert.equal(exitCodeFor(sentinel), 4);
    assert.match(sentinel.message, /LOCKSTEP_REDIS_URL/);
    const cluster = await failure(`redis-cluster://bot:Hidden-Pass-4@127.0.0.1:${a},127.0.0.1:${b}`, [
      'Hidden-Pass-4',
      'bot',
      String(a),
      String(b),
    ]);
    assert.ok(cluster instanceof LockBackendError, String(cluster));
    assert.equal(exitCodeFor(cluster), 4);
  });
});
