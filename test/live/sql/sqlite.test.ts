/**
 * What only SQLite has: a shared file (never :memory:), the default file under the storage path,
 * WAL and a bounded busy timeout set on first use, a caller's transaction refused on an injected
 * connection, and a configuration error when no SQLite library loads. Registered in the SQLite run and in a run with
 * no live target (runsServerlessTests).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inspect } from 'node:util';
import Database from 'better-sqlite3';
import { LockConfigurationError, exitCodeFor } from '../../../src/core/errors';
import { createLockManager } from '../../../src/core/leases';
import { createSqliteDriver } from '../../../src/core/stores/sql/sqlDriver';
import { randomKey, randomOwner } from '../../contract/driverContract';
import { REPO_ROOT, runTs } from '../../helpers/children';
import { useTempDir } from '../../helpers/tempDir';
import { openLiveDriver, runsServerlessTests, tsChildEnv } from './sqlLive';

if (runsServerlessTests) {
  describe('sql driver: SQLite specifics', function () {
    this.timeout(30_000);
    const dir = useTempDir('lockstep-sqlite');

    it('refuses :memory: and relative or host-named paths with a configuration error', async () => {
      for (const url of [
        'sqlite::memory:',
        'sqlite:///:memory:',
        'sqlite:///tmp/locks.db?mode=memory',
        'sqlite://relative/locks.db',
        'sqlite:locks.db',
      ]) {
        const m = createLockManager({ driver: 'sql', databaseUrl: url, env: {} });
        await assert.rejects(m.acquire('x'), (error: unknown) => error instanceof LockConfigurationError && exitCodeFor(error) === 2, url);
      }
    });

    it('without a URL uses <path>/lockstep.sqlite, created on first use and not before', async () => {
      const store = path.join(dir.path, 'store');
      const m = createLockManager({ driver: 'sql', path: store, env: {} });
      assert.equal(fs.existsSync(store), false, 'creating the manager opened nothing');
      await m.migrate();
      assert.equal(fs.existsSync(path.join(store, 'lockstep.sqlite')), true);
      assert.ok((await m.acquire('default-file')).acquired);
      await m.close();
    });

    it('sets WAL, synchronous FULL and a bounded busy timeout on first use', async () => {
      const driver = await openLiveDriver(`sqlite://${dir.path}/wal.db`, 'wal', { commandTimeoutMs: 3_000 });
      try {
        await driver.migrate();
        assert.deepEqual(await driver.settings(), { journal_mode: 'wal', synchronous: 'FULL', busy_timeout_ms: '3000' });
      } finally {
        await driver.close();
      }
      const bounded = await openLiveDriver(`sqlite://${dir.path}/wal.db`, 'wal', { commandTimeoutMs: 3_600_000 });
      try {
        await bounded.read(randomKey());
        assert.equal((await bounded.settings()).busy_timeout_ms, '60000');
      } finally {
        await bounded.close();
      }
    });

    it('requireDistributed rejects SQLite', async () => {
      const m = createLockManager({ driver: 'sql', databaseUrl: `sqlite://${dir.path}/x.db`, requireDistributed: true, env: {} });
      await assert.rejects(
        m.acquire('x'),
        (error: unknown) => error instanceof LockConfigurationError && error.setting === 'requireDistributed',
      );
    });

    it("refuses an injected connection that is inside the caller's transaction, and an in-memory one", async () => {
      const file = path.join(dir.path, 'injected.db');
      const db = new Database(file);
      try {
        const driver = createSqliteDriver(db);
        await driver.migrate();
        db.exec('BEGIN');
        await assert.rejects(
          driver.claim(randomKey(), randomOwner(), 10_000, Date.now()),
          (error: unknown) => error instanceof LockConfigurationError && /inside a transaction/.test(error.message),
        );
        db.exec('COMMIT');
        assert.ok((await driver.claim(randomKey(), randomOwner(), 10_000, Date.now())).claimed, 'works once the caller committed');
        await driver.close();
        assert.equal(db.open, true, "the caller's connection stays open");
      } finally {
        db.close();
      }
      const memory = new Database(':memory:');
      try {
        assert.throws(() => createSqliteDriver(memory), LockConfigurationError);
      } finally {
        memory.close();
      }
    });

    it("migrate refuses a reliability_locks table of another shape (another application's)", async () => {
      const file = path.join(dir.path, 'foreign.db');
      const db = new Database(file);
      db.exec('CREATE TABLE reliability_locks (key_hash TEXT PRIMARY KEY, owner_token TEXT, expires_at INTEGER)');
      db.close();
      const m = createLockManager({ driver: 'sql', databaseUrl: `sqlite://${file}`, env: {} });
      await assert.rejects(m.migrate(), (error: unknown) => error instanceof LockConfigurationError && /another shape/.test(error.message));
      await m.close();
    });

    it('where no SQLite library loads, the command line fails with a configuration error that says so', async () => {
      // A preload makes better-sqlite3 unloadable; on Node 20 there is no node:sqlite either.
      const env = tsChildEnv({ LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: `sqlite://${dir.path}/none.db` }, [
        path.join(REPO_ROOT, 'test/live/sql/withoutSqlite.cjs'),
      ]);
      const run = await runTs('src/cli/main.ts', ['--json', 'run', 'job', '--', 'true'], env);
      const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
      if (getBuiltin?.('node:sqlite') !== undefined) {
        // This Node has node:sqlite (22.5+): the driver works without better-sqlite3.
        assert.equal(run.code, 4, `${run.stdout}${run.stderr}`); // not migrated: the backend error
        return;
      }
      assert.equal(run.code, 2, inspect(run));
      const body = JSON.parse(run.stdout);
      assert.equal(body.error.code, 'configuration');
      assert.match(body.error.message, /SQLite is not available/);
    });
  });
}
