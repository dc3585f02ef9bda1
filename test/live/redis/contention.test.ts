import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { childEnv, runTs } from '../../helpers/children';
import type { ContendResult } from '../../helpers/contendWorker';
import { randomPrefix, removeKeysUnder } from './prefixKeys';
import { RedisServer, requireRedisServer } from './redisServer';

const PROCESSES = 8;
const ITERATIONS = 25;

describe('redis driver: 8 processes contending (live redis-server)', function () {
  this.timeout(120_000);
  let server: RedisServer;
  let shared: string;
  const prefix = randomPrefix();

  before(async function () {
    requireRedisServer(this);
    server = await RedisServer.start();
    shared = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-redis-contend-'));
  });

  after(async () => {
    if (shared) fs.rmSync(shared, { recursive: true, force: true });
    await server?.dispose();
  });

  it('never lets two processes hold the lease at once, and fencing tokens strictly increase', async () => {
    // The worker is configured only through LOCKSTEP_* (plus where to write its result).
    const env = childEnv({ LOCKSTEP_DRIVER: 'redis', LOCKSTEP_REDIS_URL: server.url, LOCKSTEP_PREFIX: prefix });
    const outs = Array.from({ length: PROCESSES }, (_, i) => path.join(shared, `result-${i}.json`));
    const runs = await Promise.all(
      outs.map(out =>
        runTs(
          'test/helpers/contendWorker.ts',
          ['--name', 'contended-RHINO-lease', '--iterations', String(ITERATIONS), '--shared', shared, '--out', out, '--wait', '60'],
          env,
          100_000,
        ),
      ),
    );
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const results = outs.map(out => JSON.parse(fs.readFileSync(out, 'utf8')) as ContendResult);

    for (const r of results) {
      assert.deepEqual(r.errors, []);
      assert.equal(r.driver, 'redis');
      assert.equal(r.violations, 0, `process ${r.pid} found another inside`);
      assert.equal(r.releasedFalse, 0);
      assert.equal(r.acquisitions, ITERATIONS);
    }
    // In the global acquisition order (the shared counter), every token is larger than the last.
    const entries = results.flatMap(r => r.entries).sort((a, b) => a.seq - b.seq);
    assert.deepEqual(
      entries.map(e => e.seq),
      Array.from({ length: PROCESSES * ITERATIONS }, (_, i) => i + 1),
      'an update was lost: two holders overlapped',
    );
    for (let i = 1; i < entries.length; i++) {
      assert.ok(
        entries[i]!.fencingToken > entries[i - 1]!.fencingToken,
        `token ${entries[i]!.fencingToken} after ${entries[i - 1]!.fencingToken}`,
      );
    }

    const admin = new Redis(server.url);
    try {
      const everything = await admin.keys('*');
      assert.ok(!everything.some(k => k.includes('RHINO')), 'a raw name reached Redis');
      assert.equal(await removeKeysUnder(admin, prefix), 0);
    } finally {
      admin.disconnect();
    }
  });
});
