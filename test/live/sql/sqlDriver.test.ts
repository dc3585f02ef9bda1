/**
 * The sql driver against one live database (the dialect this mocha run was given; see sqlLive.ts).
 * The describes run in order: the first ones need a database that was never migrated; the server
 * is stopped last.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { LockBackendError, LockConfigurationError, LockStorageError, exitCodeFor } from '../../../src/core/errors';
import { createLockManager } from '../../../src/core/leases';
import { keyDigest } from '../../../src/core/names';
import { parseDatabaseUrl } from '../../../src/core/stores/sql/databaseUrl';
import { recordRowKey, type SqlDriver } from '../../../src/core/stores/sql/sqlDriver';
import { hashToken } from '../../../src/core/tokens';
import { describeContainerContract } from '../../contract/containerContract';
import { describeDriverContract, randomKey, randomOwner } from '../../contract/driverContract';
import { behaviourGroup } from '../../helpers/behaviours';
import { runTs } from '../../helpers/children';
import { crowdedPage } from '../../helpers/crowdedPage';
import type { ContendResult } from '../../helpers/contendWorker';
import { makeTempDir, removeTempDir } from '../../helpers/tempDir';
import { waitFor } from '../../helpers/waitFor';
import {
  adminQuery,
  controlServer,
  liveDialect,
  liveOptions,
  openLiveDriver,
  randomPrefix,
  requireLiveTarget,
  tsChildEnv,
  type LiveDialect,
} from './sqlLive';

const label = liveDialect ?? 'no target';
const prefix = randomPrefix();

describe(`sql driver, live: ${label}`, function () {
  behaviourGroup(this, 'sql driver, live'); // the same behaviours on every dialect count once
  this.timeout(60_000);
  let url: string;
  let dialect: LiveDialect;
  const drivers: SqlDriver[] = [];
  const open = async (extra = {}) => {
    const d = await openLiveDriver(url, prefix, extra);
    drivers.push(d);
    return d;
  };
  const manager = (extra = {}) => createLockManager({ ...liveOptions(url, prefix, extra), env: {} });

  before(function () {
    ({ url, dialect } = requireLiveTarget(this));
  });
  after(async () => {
    await Promise.all(drivers.map(d => d.close()));
  });

  describe('migration', () => {
    it('before migrating, every operation raises LockBackendError saying to run `lockstep migrate`', async () => {
      const driver = await open();
      const attempts: [string, () => Promise<unknown>][] = [
        ['claim', () => driver.claim(randomKey(), randomOwner(), 10_000, Date.now())],
        ['release', () => driver.release(randomKey(), randomOwner(), Date.now())],
        ['extend', () => driver.extend(randomKey(), randomOwner(), 10_000, Date.now())],
        ['read', () => driver.read(randomKey())],
        ['compareAndSwap', () => driver.compareAndSwap(randomKey(), null, { n: 1 }, { summary: 't' })],
      ];
      for (const [what, attempt] of attempts) {
        await assert.rejects(attempt, (error: unknown) => {
          assert.ok(error instanceof LockBackendError, `${what}: ${inspect(error)}`);
          assert.match(error.message, /lockstep migrate/);
          assert.equal(exitCodeFor(error), 4);
          return true;
        });
      }
      const m = manager();
      await assert.rejects(
        m.acquire('before-migrate'),
        (error: unknown) => error instanceof LockBackendError && /lockstep migrate/.test(error.message),
      );
      await m.close();
    });

    it('migrate() creates the table; running it twice more is harmless and keeps the rows', async () => {
      const m = manager();
      await m.migrate();
      const handle = await m.acquire('survives-migrate', { ttl: 60 });
      assert.ok(handle.acquired);
      await m.migrate();
      await m.migrate();
      assert.equal((await m.acquire('survives-migrate')).acquired, false, 'the lease is still held after migrating again');
      assert.equal(await handle.release(), true);
      await m.close();
    });

    it('has a unique primary key_hash and an index on expires_at', async () => {
      const indexes =
        dialect === 'sqlite'
          ? (await adminQuery(url, 'SELECT sql FROM sqlite_master WHERE tbl_name = ?', ['reliability_locks'])).map(r => String(r.sql))
          : dialect === 'mariadb'
            ? (await adminQuery(url, 'SHOW INDEX FROM reliability_locks')).map(
                r => `${r.Key_name} ${r.Column_name} unique=${r.Non_unique === 0 || r.Non_unique === '0'}`,
              )
            : (await adminQuery(url, 'SELECT indexdef FROM pg_indexes WHERE tablename = ?', ['reliability_locks'])).map(r =>
                String(r.indexdef),
              );
      const text = indexes.join('\n');
      assert.match(text, /PRIMARY KEY|PRIMARY key_hash unique=true|UNIQUE INDEX \S+ ON \S+ USING btree \(key_hash\)/i, text);
      assert.match(text, /reliability_locks_expires_at[^\n]*expires_at/, text);
    });

    it('migrate() on a driver other than sql is a configuration error', async () => {
      const m = createLockManager({ driver: 'memory', env: {} });
      await assert.rejects(m.migrate(), LockConfigurationError);
    });
  });

  // The container lock (CLI transitions, both guards with real git) on this database; SQLite runs it in the
  // integration suite. After 'migration', which needs a database never migrated.
  if (liveDialect !== 'sqlite') {
    describeContainerContract(`sql (${label})`, async () => ({
      driver: 'sql',
      initArgs: ['--driver', 'sql'],
      beforeInit: [['migrate']],
      env: { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: url, LOCKSTEP_PREFIX: randomPrefix() },
    }));
  }

  describe('contract', () => {
    before(async () => {
      await (await open()).migrate();
    });
    describeDriverContract(`sql (${label})`, () => openLiveDriver(url, prefix));
  });

  describe('fencing and stored data', () => {
    it('keeps the fencing counter rising across release and re-acquire (the row survives release)', async () => {
      const m = manager();
      const tokens: number[] = [];
      for (let i = 0; i < 5; i++) {
        const handle = await m.acquire('fencing-survives');
        assert.ok(handle.acquired);
        tokens.push(handle.fencingToken!);
        assert.equal(await handle.release(), true);
      }
      assert.deepEqual(tokens, [1, 2, 3, 4, 5]);
      const rows = await adminQuery(url, 'SELECT owner_hash, fencing, expires_at FROM reliability_locks WHERE key_hash = ?', [
        keyDigest(prefix, 'fencing-survives'),
      ]);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].owner_hash, null, 'release clears the owner');
      assert.equal(Number(rows[0].fencing), 5, 'release keeps the counter');
      await m.close();
    });

    it("stores the owner token's hash and the key digest, never the token or the name", async () => {
      const m = manager();
      const handle = await m.acquire('stored-shape', { ttl: 60 });
      assert.ok(handle.acquired);
      const rows = await adminQuery(url, 'SELECT * FROM reliability_locks WHERE key_hash = ?', [keyDigest(prefix, 'stored-shape')]);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].owner_hash, hashToken(handle.ownerToken()));
      assert.equal(rows[0].kind, 'lease');
      const everything = JSON.stringify(await adminQuery(url, 'SELECT * FROM reliability_locks'));
      assert.ok(!everything.includes(handle.ownerToken()), 'the owner token is not stored');
      assert.ok(!everything.includes('stored-shape'), 'the lock name is not stored');
      // Expiry is the application clock's epoch milliseconds.
      assert.ok(Math.abs(Number(rows[0].expires_at) - handle.expiresAt()!.getTime()) === 0);
      await handle.release();
      await m.close();
    });
  });

  describe('time and change notification', () => {
    it('expiry follows the application clock passed in, not the database clock', async () => {
      const driver = await open();
      const key = randomKey();
      const t0 = Date.now();
      const first = await driver.claim(key, randomOwner(), 10_000, t0);
      assert.ok(first.claimed);
      assert.equal(first.expiresAt, t0 + 10_000);
      assert.deepEqual(await driver.claim(key, randomOwner(), 10_000, t0 + 9_999), { claimed: false });
      // A node whose clock runs 10 s ahead sees the lease expired already: why clocks must be synchronised.
      const ahead = await driver.claim(key, randomOwner(), 10_000, t0 + 10_000);
      assert.ok(ahead.claimed && ahead.fencingToken === first.fencingToken + 1);
    });

    it('a waiting watcher sees a record written through another connection (NOTIFY on PostgreSQL, else the fast poll)', async () => {
      const watching = await open();
      const writer = await open();
      const key = randomKey();
      let written = await writer.compareAndSwap(key, null, { n: 0 }, { summary: 't' });
      let calls = 0;
      // A window that waits for the lock: the fast pace where the watch polls (sqlWatch.test.ts has the idle one).
      const watch = watching.watch(
        key,
        () => {
          calls++;
        },
        { interest: () => ({ holds: false, waits: true }) },
      );
      try {
        assert.equal(calls, 0);
        // Keep writing elsewhere until the watcher (NOTIFY, or polling about once a second) reports a change.
        await waitFor(
          async () => {
            assert.ok(written.ok);
            written = await writer.compareAndSwap(key, written.revision, { n: Number(written.revision) }, { summary: 't' });
            return calls > 0;
          },
          { timeoutMs: 10_000, intervalMs: 200, description: 'watcher called after a write elsewhere' },
        );
      } finally {
        watch.dispose();
      }
    });
  });

  describe('8 processes contending', () => {
    it('never overlap, and their fencing tokens rise strictly in acquisition order', async function () {
      this.timeout(120_000);
      const shared = makeTempDir('lockstep-sql-contend');
      try {
        const name = `contended-${Date.now()}`;
        const env = tsChildEnv({ LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: url, LOCKSTEP_PREFIX: prefix });
        const iterations = 12;
        const runs = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            runTs(
              'test/helpers/contendWorker.ts',
              [
                '--name',
                name,
                '--iterations',
                String(iterations),
                '--shared',
                shared,
                '--out',
                path.join(shared, `out-${i}.json`),
                '--ttl',
                '30',
                '--wait',
                '60',
              ],
              env,
              110_000,
            ),
          ),
        );
        const results = runs.map((run, i) => {
          const file = path.join(shared, `out-${i}.json`);
          assert.ok(fs.existsSync(file), `worker ${i} wrote no result (exit ${run.code}): ${run.stderr.slice(-1500)}`);
          return JSON.parse(fs.readFileSync(file, 'utf8')) as ContendResult;
        });
        for (const r of results) {
          assert.deepEqual(r.errors, [], `worker ${r.pid} errors`);
          assert.equal(r.violations, 0, `worker ${r.pid} found another process inside`);
          assert.equal(r.busy, 0, `worker ${r.pid} ran out of wait`);
          assert.equal(r.releasedFalse, 0);
        }
        const entries = results.flatMap(r => r.entries).sort((a, b) => a.seq - b.seq);
        assert.equal(entries.length, 8 * iterations);
        // No lost update of the shared counter: the acquisition order is 1..N without gaps or repeats.
        assert.deepEqual(
          entries.map(e => e.seq),
          entries.map((_, i) => i + 1),
        );
        for (let i = 1; i < entries.length; i++) {
          assert.ok(
            entries[i].fencingToken > entries[i - 1].fencingToken,
            `token ${entries[i].fencingToken} at seq ${entries[i].seq} after ${entries[i - 1].fencingToken}`,
          );
        }
      } finally {
        removeTempDir(shared);
      }
    });
  });

  describe('damaged rows', () => {
    const damage = async (name: string, set: string, params: (string | number | null)[]) => {
      const m = manager();
      const handle = await m.acquire(name);
      assert.ok(handle.acquired);
      assert.ok(await handle.release());
      await m.close();
      await adminQuery(url, `UPDATE reliability_locks SET ${set} WHERE key_hash = ?`, [...params, keyDigest(prefix, name)]);
    };
    const expectStorageError = async (name: string) => {
      const m = manager();
      await assert.rejects(m.acquire(name), (error: unknown) => {
        assert.ok(error instanceof LockStorageError, inspect(error));
        assert.equal(exitCodeFor(error), 5);
        assert.ok(!error.message.includes(name));
        return true;
      });
      await m.close();
    };

    it('an owner_hash that is not 64 hex raises LockStorageError instead of being taken over', async () => {
      await damage('damaged-owner', 'owner_hash = ?, expires_at = ?', ['not-a-hash', 1]);
      await expectStorageError('damaged-owner');
    });

    it('a negative fencing counter raises LockStorageError', async () => {
      await damage('damaged-fencing', 'fencing = ?', [-3]);
      await expectStorageError('damaged-fencing');
    });

    it('a record that is not JSON raises LockStorageError on read', async () => {
      const driver = await open();
      const key = randomKey();
      assert.ok((await driver.compareAndSwap(key, null, { fine: true }, { summary: 't' })).ok);
      await adminQuery(url, 'UPDATE reliability_locks SET record = ? WHERE key_hash = ?', ['{not json', recordRowKey(key)]);
      await assert.rejects(driver.read(key), (error: unknown) => error instanceof LockStorageError && exitCodeFor(error) === 5);
    });
    it('a crowded page is stored packed in at most 64 KiB; a changed character of it raises LockStorageError, never another page', async () => {
      const driver = await open();
      const key = randomKey();
      const page = crowdedPage();
      assert.ok((await driver.compareAndSwap(key, null, page, { summary: 'crowded' })).ok);
      const [row] = await adminQuery(url, 'SELECT record FROM reliability_locks WHERE key_hash = ?', [recordRowKey(key)]);
      const stored = String(row.record);
      assert.ok(Buffer.byteLength(stored) <= 64 * 1024, `stored in ${Buffer.byteLength(stored)} bytes`);
      assert.equal(JSON.stringify((await driver.read(key))?.value), JSON.stringify(page));
      const packed = JSON.parse(stored) as { data: string };
      const at = packed.data.length >> 1;
      const changed = { ...packed, data: packed.data.slice(0, at) + (packed.data[at] === 'A' ? 'B' : 'A') + packed.data.slice(at + 1) };
      await adminQuery(url, 'UPDATE reliability_locks SET record = ? WHERE key_hash = ?', [JSON.stringify(changed), recordRowKey(key)]);
      await assert.rejects(driver.read(key), (error: unknown) => error instanceof LockStorageError && exitCodeFor(error) === 5);
    });
  });

  describe('outage', () => {
    it('a stopped server gives LockBackendError without credentials, and the driver recovers once it is back', async function () {
      if (dialect === 'sqlite') {
        // SQLite has no server: its outage is a database file that cannot be reached (its folder moved away), and its
        // return is the folder moved back, with the table and the rows as they were.
        const dir = makeTempDir('lockstep-sql-outage');
        try {
          const home = path.join(dir, 'db');
          const away = path.join(dir, 'away');
          fs.mkdirSync(home);
          const dbUrl = `sqlite://${home}/locks.db`;
          const first = createLockManager({ ...liveOptions(dbUrl, prefix), env: {} });
          await first.migrate();
          const held = await first.acquire('outage-held', { ttl: 60 });
          assert.ok(held.acquired);
          await first.close();
          fs.renameSync(home, away);
          const m = createLockManager({ ...liveOptions(dbUrl, prefix), env: {} });
          await assert.rejects(
            m.acquire('outage-during'),
            (error: unknown) => error instanceof LockBackendError && exitCodeFor(error) === 4,
          );
          fs.renameSync(away, home);
          // Same manager, no restart: the next operations work again, on the same rows.
          assert.equal((await m.acquire('outage-held')).acquired, false, 'the lease taken before the outage is still held');
          const after = await m.acquire('outage-after', { ttl: 60 });
          assert.ok(after.acquired, 'a new lease is granted once the database is back');
          assert.ok(await after.release());
          await m.close();
        } finally {
          removeTempDir(dir);
        }
        return;
      }
      this.timeout(180_000);
      const target = parseDatabaseUrl(url, '/unused');
      if (target.dialect === 'sqlite' || target.password === '') throw new Error('the live server URL must carry a password');
      const m = manager({ connectTimeoutMs: 1_000, commandTimeoutMs: 2_000 });
      const before = await m.acquire('outage-before', { ttl: 60 });
      assert.ok(before.acquired, 'works while the server runs (and holds pooled connections)');
      await controlServer(dialect, 'stop');
      try {
        for (const attempt of [() => m.acquire('outage-during'), () => before.release()]) {
          await assert.rejects(attempt, (error: unknown) => {
            assert.ok(error instanceof LockBackendError, inspect(error));
            assert.equal(exitCodeFor(error), 4);
            const shown = `${error.message}\n${inspect(error, { depth: 5 })}\n${JSON.stringify(error)}`;
            assert.ok(!shown.includes(target.password), 'no password in the error');
            return true;
          });
        }
      } finally {
        await controlServer(dialect, 'start');
      }
      // Same manager, same pool: the next operations work again.
      const after = await m.acquire('outage-after', { ttl: 60 });
      assert.ok(after.acquired);
      assert.ok(await after.release());
      await m.close();
    });
  });
});
