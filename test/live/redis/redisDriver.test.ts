import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { inspect } from 'node:util';
import Redis from 'ioredis';
import { resolveConfig, type LockManagerOptions } from '../../../src/core/config';
import { openDriver } from '../../../src/core/drivers';
import { LockBackendError, LockConfigurationError, LockStorageError, exitCodeFor } from '../../../src/core/errors';
import { createLockManager } from '../../../src/core/leases';
import { keyDigest } from '../../../src/core/names';
import type { Driver } from '../../../src/core/stores/store';
import { hashToken, newOwnerToken } from '../../../src/core/tokens';
import { describeDriverContract } from '../../contract/driverContract';
import { crowdedPage } from '../../helpers/crowdedPage';
import { waitFor } from '../../helpers/waitFor';
import { randomPrefix, removeKeysUnder } from './prefixKeys';
import { freePort, RedisServer, requireRedisServer } from './redisServer';

/** Options for a redis manager or driver on the test server; the environment never leaks in. */
type Options = LockManagerOptions;

describe('redis driver (live redis-server)', function () {
  this.timeout(30_000);
  let server: RedisServer;
  let admin: Redis;
  const prefix = randomPrefix();
  const drivers: Driver[] = [];

  const options = (extra: Options = {}): Options => ({
    driver: 'redis',
    prefix,
    redisUrl: server.url,
    connectTimeoutMs: 1_000,
    commandTimeoutMs: 1_000,
    ...extra,
  });
  const open = async (extra: Options = {}): Promise<Driver> => {
    const driver = await openDriver(resolveConfig(options(extra), {}));
    drivers.push(driver);
    return driver;
  };
  const manager = (extra: Options = {}) => createLockManager({ ...options(extra), env: {} });
  const owner = () => hashToken(newOwnerToken());
  let keyCounter = 0;
  const freshKey = () => keyDigest(prefix, `contract-${++keyCounter}`);

  before(async function () {
    requireRedisServer(this);
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });

  after(async () => {
    await Promise.all(drivers.map(d => d.close()));
    admin?.disconnect();
    await server?.dispose();
  });

  // The shared contract every driver meets, on this server and prefix.
  describeDriverContract('redis', () => open());

  describe('plain leases', () => {
    it('claims a free key, refuses it while live, and issues increasing tokens across release', async () => {
      const driver = await open();
      const key = freshKey();
      const a = owner();
      const first = await driver.claim(key, a, 10_000, Date.now());
      assert.ok(first.claimed);
      assert.equal(first.fencingToken, 1);
      assert.deepEqual(await driver.claim(key, owner(), 10_000, Date.now()), { claimed: false });
      assert.equal(await driver.release(key, a, Date.now()), 'released');
      const next = owner();
      const second = await driver.claim(key, next, 10_000, Date.now());
      assert.ok(second.claimed);
      assert.equal(second.fencingToken, 2);
      assert.equal(await driver.release(key, next, Date.now()), 'released');
    });

    it("leaves another owner's live lease intact on release and says so", async () => {
      const driver = await open();
      const key = freshKey();
      const holder = owner();
      assert.ok((await driver.claim(key, holder, 10_000, Date.now())).claimed);
      assert.equal(await driver.release(key, owner(), Date.now()), 'other-owner');
      assert.deepEqual(await driver.claim(key, owner(), 10_000, Date.now()), { claimed: false });
      assert.equal(await driver.release(key, holder, Date.now()), 'released');
      assert.equal(await driver.release(key, holder, Date.now()), 'absent');
    });

    it("extends only the live owner's lease, restarting its TTL on the server", async () => {
      const driver = await open();
      const key = freshKey();
      const holder = owner();
      assert.ok((await driver.claim(key, holder, 2_000, Date.now())).claimed);
      assert.equal(await driver.extend(key, owner(), 60_000, Date.now()), false);
      assert.ok((await admin.pttl(`${prefix}:lease:${key}`)) <= 2_000);
      assert.equal(await driver.extend(key, holder, 60_000, Date.now()), true);
      assert.ok((await admin.pttl(`${prefix}:lease:${key}`)) > 50_000);
      assert.equal(await driver.release(key, holder, Date.now()), 'released');
      assert.equal(await driver.extend(key, holder, 60_000, Date.now()), false);
    });

    it('frees an expired lease for the next owner with a higher token; the old owner cannot touch it', async () => {
      const driver = await open();
      const key = freshKey();
      const old = owner();
      const first = await driver.claim(key, old, 150, Date.now());
      assert.ok(first.claimed);
      const next = owner();
      // Real time must pass for Redis to expire the key: poll for it, bounded.
      const second = await waitFor(
        async () => {
          const claim = await driver.claim(key, next, 10_000, Date.now());
          return claim.claimed ? claim : undefined;
        },
        { description: 'the lease to expire' },
      );
      assert.ok(second.fencingToken > first.fencingToken);
      assert.equal(await driver.extend(key, old, 10_000, Date.now()), false);
      assert.equal(await driver.release(key, old, Date.now()), 'other-owner');
      assert.equal(await driver.release(key, next, Date.now()), 'released');
      assert.equal(await driver.release(key, old, Date.now()), 'absent');
    });

    it('lets exactly one of many simultaneous claims through, across connections', async () => {
      const [one, two] = [await open(), await open()];
      const key = freshKey();
      const owners = Array.from({ length: 20 }, owner);
      const results = await Promise.all(owners.map((o, i) => (i % 2 ? one : two).claim(key, o, 10_000, Date.now())));
      const winners = results.flatMap((r, i) => (r.claimed ? [owners[i]!] : []));
      assert.equal(winners.length, 1);
      assert.equal(await one.release(key, winners[0]!, Date.now()), 'released');
    });

    it('reloads its scripts after the server forgot them (NOSCRIPT → EVAL)', async () => {
      const driver = await open();
      const key = freshKey();
      const holder = owner();
      assert.ok((await driver.claim(key, holder, 10_000, Date.now())).claimed);
      await admin.script('FLUSH');
      assert.equal(await driver.extend(key, holder, 10_000, Date.now()), true);
      await admin.script('FLUSH');
      assert.equal(await driver.release(key, holder, Date.now()), 'released');
      await admin.script('FLUSH');
      assert.ok((await driver.claim(key, holder, 10_000, Date.now())).claimed);
      assert.equal(await driver.release(key, holder, Date.now()), 'released');
    });
  });

  describe('records', () => {
    it('reads null, writes against the revision read, and refuses stale writes', async () => {
      const driver = await open();
      const key = freshKey();
      const meta = { summary: 'test' };
      assert.equal(await driver.read(key), null);
      const created = await driver.compareAndSwap(key, null, { holder: 'a', grant: 1 }, meta);
      assert.ok(created.ok);
      assert.deepEqual(await driver.compareAndSwap(key, null, { holder: 'b' }, meta), { ok: false });
      const updated = await driver.compareAndSwap(key, created.revision, { holder: 'c', grant: 2 }, meta);
      assert.ok(updated.ok);
      assert.notEqual(updated.revision, created.revision);
      assert.deepEqual(await driver.compareAndSwap(key, created.revision, { holder: 'd' }, meta), { ok: false });
      assert.deepEqual(await driver.read(key), { value: { holder: 'c', grant: 2 }, revision: updated.revision });
    });

    it('lets exactly one of many writers on the same revision win', async () => {
      const [one, two] = [await open(), await open()];
      const key = freshKey();
      const base = await one.compareAndSwap(key, null, { n: 0 }, { summary: 'init' });
      assert.ok(base.ok);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).compareAndSwap(key, base.revision, { n: i + 1 }, { summary: 'race' })),
      );
      assert.equal(results.filter(r => r.ok).length, 1);
    });

    it('reports damaged or foreign data as LockStorageError, never as empty', async () => {
      const driver = await open();
      const damagedKey = freshKey();
      await admin.hset(`${prefix}:record:${damagedKey}`, 'v', '{not json', 'rev', '3');
      await assert.rejects(driver.read(damagedKey), LockStorageError);
      const foreignKey = freshKey();
      await admin.set(`${prefix}:record:${foreignKey}`, 'something else');
      await assert.rejects(driver.read(foreignKey), LockStorageError);
      await assert.rejects(driver.compareAndSwap(foreignKey, null, {}, { summary: 'x' }), LockStorageError);
    });
    it('stores a crowded page packed in at most 64 KiB; a changed character of it reads as damage, never as another page', async () => {
      const driver = await open();
      const key = freshKey();
      const page = crowdedPage();
      assert.ok((await driver.compareAndSwap(key, null, page, { summary: 'crowded' })).ok);
      const stored = (await admin.hget(`${prefix}:record:${key}`, 'v'))!;
      assert.ok(Buffer.byteLength(stored) <= 64 * 1024, `stored in ${Buffer.byteLength(stored)} bytes`);
      assert.equal(JSON.stringify((await driver.read(key))?.value), JSON.stringify(page));
      const packed = JSON.parse(stored) as { data: string };
      const at = packed.data.length >> 1;
      const changed = { ...packed, data: packed.data.slice(0, at) + (packed.data[at] === 'A' ? 'B' : 'A') + packed.data.slice(at + 1) };
      await admin.hset(`${prefix}:record:${key}`, 'v', JSON.stringify(changed));
      await assert.rejects(driver.read(key), LockStorageError);
    });
  });

  describe('watch', () => {
    it('calls onChange after a compare-and-swap on another connection (latency printed)', async () => {
      const [watching, writing] = [await open(), await open()];
      const key = freshKey();
      const calls: number[] = [];
      const subscription = watching.watch!(key, () => calls.push(performance.now()));
      try {
        // The first call says the subscription is in place (changes before it could be missed).
        await waitFor(() => calls.length >= 1, { description: 'the subscription' });
        const start = performance.now();
        assert.ok((await writing.compareAndSwap(key, null, { v: 1 }, { summary: 'x' })).ok);
        await waitFor(() => calls.length >= 2, { description: 'onChange after the write' });
        console.log(`      watch latency: ${(calls[1]! - start).toFixed(2)} ms from the start of the write (target < 100 ms)`);
      } finally {
        subscription.dispose();
      }
    });

    it('opens its subscriber connection only when watching starts, and stops calling after dispose', async () => {
      const watchConnections = async () =>
        ((await admin.client('LIST')) as string).split('\n').filter(l => l.includes(' name=lockstep-watch ')).length;
      const before = await watchConnections();
      const watching = await open();
      const writing = await open();
      const key = freshKey();
      await watching.read(key);
      await writing.compareAndSwap(key, null, { v: 0 }, { summary: 'x' });
      assert.equal(await watchConnections(), before, 'reading or writing opened a subscriber connection');
      let disposedCalls = 0;
      const first = watching.watch!(key, () => {
        disposedCalls++;
      });
      await waitFor(async () => (await watchConnections()) === before + 1, { description: 'the subscriber connection' });
      await waitFor(() => disposedCalls >= 1, { description: 'the first subscription' });
      first.dispose();
      const seen: number[] = [];
      const second = watching.watch!(key, () => seen.push(1));
      await waitFor(() => seen.length >= 1, { description: 'the second subscription' });
      const current = await writing.read(key);
      assert.ok((await writing.compareAndSwap(key, current!.revision, { v: 1 }, { summary: 'x' })).ok);
      // Messages on one connection arrive in order: once the live listener saw the write, a
      // disposed one would have seen it too.
      await waitFor(() => seen.length >= 2, { description: 'the write' });
      assert.equal(disposedCalls, 1);
      second.dispose();
    });
  });

  describe('keys, configuration and failures', () => {
    it('never puts a lock name into Redis: only <prefix>:<kind>:<digest> keys exist', async () => {
      const names = ['invoice-ZEBRA-4711', 'payroll:MONGOOSE.run_2'];
      const lockstep = manager();
      try {
        for (const name of names) {
          const held = await lockstep.acquire(name, { ttl: 30 });
          assert.ok(held.acquired);
          assert.equal((await lockstep.acquire(name, { ttl: 30 })).acquired, false);
          assert.equal(await held.release(), true);
          assert.equal(await admin.exists(`${prefix}:lease:${keyDigest(prefix, name)}`), 0, 'the released lease is gone');
        }
        const driver = await open();
        await driver.compareAndSwap(keyDigest(prefix, names[0]!), null, { record: true }, { summary: 'x' });
      } finally {
        await lockstep.close();
      }
      const everything = await admin.keys('*');
      for (const name of names) {
        assert.ok(!everything.some(k => k.includes(name) || k.includes('ZEBRA') || k.includes('MONGOOSE')), 'a raw name reached Redis');
      }
      const ours = everything.filter(k => k.startsWith(`${prefix}:`));
      assert.ok(ours.length >= 3);
      for (const k of ours) assert.match(k, new RegExp(`^${prefix}:(lease|fence|record):[0-9a-f]{64}$`));
    });

    it('costs one round trip per operation: acquire and release are one EVALSHA each, read one HMGET', async () => {
      const monitor = await admin.monitor();
      const seen: string[] = [];
      // Commands a script runs itself are reported with the source "lua"; only client commands count.
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source !== 'lua')
          seen.push(
            args
              .slice(0, args[0]?.toLowerCase() === 'echo' ? 2 : 1)
              .join(' ')
              .toLowerCase(),
          );
      });
      const lockstep = manager();
      const driver = await open();
      try {
        // Warm up: connect and load the scripts; then mark the start, run one of each, mark the end.
        await (await lockstep.acquire('round-trips')).release();
        await driver.compareAndSwap(freshKey(), null, { warm: true }, { summary: 'x' });
        await admin.echo('start-mark');
        const held = await lockstep.acquire('round-trips');
        assert.ok(held.acquired);
        assert.equal(await held.release(), true);
        const key = freshKey();
        await driver.read(key);
        await driver.compareAndSwap(key, null, { v: 1 }, { summary: 'x' });
        await admin.echo('end-mark');
        await waitFor(() => seen.includes('echo end-mark'), { description: 'the monitor to catch up' });
        const between = seen.slice(seen.indexOf('echo start-mark') + 1, seen.indexOf('echo end-mark'));
        assert.deepEqual(between, ['evalsha', 'evalsha', 'hmget', 'evalsha']);
      } finally {
        await lockstep.close();
        monitor.disconnect();
      }
    });

    it('refuses to run without an explicit prefix, naming LOCKSTEP_PREFIX', async () => {
      const lockstep = createLockManager({ driver: 'redis', redisUrl: server.url, env: {} });
      const error = await lockstep.acquire('no-prefix').then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof LockConfigurationError);
      assert.equal(error.setting, 'prefix');
      assert.match(error.message, /LOCKSTEP_PREFIX/);
      assert.equal(exitCodeFor(error), 2);
      await lockstep.close();
    });

    it('opens no socket when a manager is created, and bounds a server that never answers', async () => {
      const connections: net.Socket[] = [];
      const silent = net.createServer(socket => {
        connections.push(socket);
      });
      await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve));
      const url = `redis://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
      try {
        const lockstep = manager({ redisUrl: url, connectTimeoutMs: 300, commandTimeoutMs: 300 });
        // A canary connecting after the manager was created: the listener accepts in order.
        const canary = net.connect((silent.address() as net.AddressInfo).port, '127.0.0.1');
        await waitFor(() => connections.length >= 1, { description: 'the canary connection' });
        assert.equal(connections.length, 1, 'creating the manager opened a socket');
        const started = performance.now();
        await assert.rejects(lockstep.acquire('silent-server'), (e: unknown) => e instanceof LockBackendError && exitCodeFor(e) === 4);
        assert.ok(performance.now() - started < 5_000, 'a silent server must not hang the caller');
        assert.ok(connections.length >= 2, 'the first operation connects');
        canary.destroy();
        await lockstep.close();
      } finally {
        for (const socket of connections) socket.destroy();
        silent.close();
      }
    });

    it('keeps credentials out of errors for an unreachable server (redis:// and rediss://)', async () => {
      const closedPort = await freePort();
      for (const scheme of ['redis', 'rediss']) {
        const lockstep = manager({ redisUrl: `${scheme}://lease-bot:Sup3r-Secret-77@127.0.0.1:${closedPort}/0` });
        const error = await lockstep.acquire('credential-check').then(
          () => undefined,
          (e: unknown) => e,
        );
        await lockstep.close();
        assert.ok(error instanceof LockBackendError, `${scheme}: ${String(error)}`);
        assert.equal(exitCodeFor(error), 4);
        const everything = [error.message, error.stack ?? '', inspect(error, { depth: 10 }), JSON.stringify(error)].join('\n');
        for (const secret of ['Sup3r-Secret-77', 'lease-bot', 'credential-check', String(closedPort)]) {
          assert.ok(!everything.includes(secret), `${scheme}: the error shows ${secret}`);
        }
      }
    });

    it('authenticates as an ACL user from the URL and hides a wrong password', async () => {
      const secured = await RedisServer.start([
        '--user',
        'lease-bot',
        'on',
        '>Right-Pass-12',
        '~*',
        '&*',
        '+@all',
        '--user',
        'default',
        'off',
      ]);
      try {
        const good = manager({ redisUrl: `redis://lease-bot:Right-Pass-12@127.0.0.1:${secured.port}` });
        const held = await good.acquire('acl-check');
        assert.ok(held.acquired);
        assert.equal(await held.release(), true);
        await good.close();
        const bad = manager({ redisUrl: `redis://lease-bot:Wrong-Pass-34@127.0.0.1:${secured.port}` });
        const error = await bad.acquire('acl-check').then(
          () => undefined,
          (e: unknown) => e,
        );
        await bad.close();
        assert.ok(error instanceof LockBackendError, String(error));
        const shown = [error.message, inspect(error, { depth: 10 })].join('\n');
        assert.ok(!shown.includes('Wrong-Pass-34') && !shown.includes('lease-bot'));
        const cleanup = new Redis(`redis://lease-bot:Right-Pass-12@127.0.0.1:${secured.port}`);
        assert.equal(await removeKeysUnder(cleanup, prefix), 0);
        cleanup.disconnect();
      } finally {
        await secured.dispose();
      }
    });

    it('rejects a malformed URL as a configuration error without echoing it', async () => {
      const lockstep = manager({ redisUrl: 'http://someone:Pass-Word-55@example.invalid' });
      const error = await lockstep.acquire('url-check').then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof LockConfigurationError);
      assert.equal(error.setting, 'redisUrl');
      assert.ok(!error.message.includes('Pass-Word-55') && !error.message.includes('someone'));
      await lockstep.close();
    });

    it('auto uses Redis when it answers and the file driver when it does not; explicit redis never falls back', async () => {
      const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-auto-'));
      const closedUrl = `redis://127.0.0.1:${await freePort()}`;
      try {
        const answering = manager({ driver: 'auto' });
        assert.equal(await answering.driverName(), 'redis');
        await answering.close();

        const silent = manager({ driver: 'auto', redisUrl: closedUrl, path: folder });
        assert.equal(await silent.driverName(), 'file');
        const held = await silent.acquire('auto-file');
        assert.ok(held.acquired);
        assert.equal(await held.release(), true);
        await silent.close();

        const explicit = manager({ redisUrl: closedUrl, path: folder });
        await assert.rejects(explicit.acquire('explicit-redis'), LockBackendError);
        await assert.rejects(explicit.acquire('explicit-redis'), LockBackendError);
        await explicit.close();

        const unprefixed = createLockManager({ driver: 'auto', redisUrl: server.url, path: folder, env: {} });
        await assert.rejects(unprefixed.acquire('auto-no-prefix'), LockConfigurationError);
        await unprefixed.close();
      } finally {
        fs.rmSync(folder, { recursive: true, force: true });
      }
    });
  });

  describe('what it leaves in Redis', () => {
    /** Every key on this file's own server (SCAN, never KEYS). */
    const everyKey = async () => {
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await admin.scan(cursor, 'COUNT', 1000);
        found.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      return found;
    };
    it('keeps every key under its own prefix and never a lock name; a released lease leaves only its fencing counter', async () => {
      const own = randomPrefix();
      const name = 'a-lock-name-that-must-not-reach-redis';
      const before = new Set(await everyKey());
      const m = manager({ prefix: own });
      const handle = await m.acquire(name, { ttl: 60 });
      assert.ok(handle.acquired);
      const added = async () => (await everyKey()).filter(k => !before.has(k)).sort();
      const held = await added();
      assert.ok(held.length > 0 && held.every(k => k.startsWith(`${own}:`)), `only keys under ${own}: ${held.join(', ')}`);
      assert.ok(
        held.every(k => !k.includes(name)),
        'the lock name never reaches a key',
      );
      assert.deepEqual(
        held.map(k => k.split(':')[1]),
        ['fence', 'lease'],
        'a held lease: its lease key and its fencing counter',
      );
      const ownerHash = await admin.get(held.find(k => k.split(':')[1] === 'lease')!);
      assert.match(ownerHash ?? '', /^[0-9a-f]{64}$/, "the lease key holds the owner's hash, never the token");
      assert.equal(await handle.release(), true);
      assert.deepEqual(
        (await added()).map(k => k.split(':')[1]),
        ['fence'],
        'released: the lease key is gone, the counter stays (fencing survives release)',
      );
      await m.close();
      assert.equal(await removeKeysUnder(admin, own), 0);
    });
  });
});
