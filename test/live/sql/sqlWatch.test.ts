/**
 * The sql driver's record watch against the live database of this run (sqlLive.ts): on PostgreSQL a
 * write elsewhere is heard through NOTIFY, and a dropped LISTEN connection still hears it through the
 * backup poll; on every dialect an idle hour (a ManualClock driving the watch's timers, real reads)
 * costs at most 120 reads. Runs after sqlDriver.test.ts (which needs a database never migrated).
 */
import * as assert from 'node:assert/strict';
import { HOUR, ManualClock, MINUTE } from '../../../src/core/clock';
import { IDLE_INTEREST } from '../../../src/core/stores/pollPace';
import { parseDatabaseUrl, type ServerTarget, type SqliteTarget } from '../../../src/core/stores/sql/databaseUrl';
import { openMysqlBackend } from '../../../src/core/stores/sql/mysql';
import { openPostgresBackend } from '../../../src/core/stores/sql/postgres';
import type { SqlBackend } from '../../../src/core/stores/sql/sqlBackend';
import { openSqliteBackend } from '../../../src/core/stores/sql/sqlite';
import { SqlDriver } from '../../../src/core/stores/sql/sqlDriver';
import { randomKey } from '../../contract/driverContract';
import { behaviourGroup } from '../../helpers/behaviours';
import { runUntil, seededRandom } from '../../helpers/simulatedPolls';
import { waitFor } from '../../helpers/waitFor';
import { adminQuery, liveDialect, openLiveDriver, randomPrefix, requireLiveTarget, type LiveDialect } from './sqlLive';

const label = liveDialect ?? 'no target';
const SERVER = { connectTimeoutMs: 2_000, commandTimeoutMs: 5_000 };

/** The dialect's backend with its reads (sessions) counted, under a driver whose watches run on `clock`. */
async function countingDriver(url: string, clock: ManualClock): Promise<{ driver: SqlDriver; reads: () => number }> {
  const target = parseDatabaseUrl(url, '/unused');
  const backend: SqlBackend =
    target.dialect === 'sqlite'
      ? await openSqliteBackend(target as SqliteTarget, { busyTimeoutMs: 5_000 })
      : target.dialect === 'mysql'
        ? await openMysqlBackend(target as ServerTarget, SERVER)
        : await openPostgresBackend(target as ServerTarget, SERVER);
  let reads = 0;
  const counted: SqlBackend = Object.create(backend, {
    session: {
      value: (work: Parameters<SqlBackend['session']>[0]) => {
        reads++;
        return backend.session(work);
      },
    },
  });
  return { driver: new SqlDriver(counted, { clock, random: seededRandom(5) }), reads: () => reads };
}

/** How many LISTEN connections of this database are open (PostgreSQL). */
async function listeners(url: string): Promise<number> {
  const [row] = await adminQuery(
    url,
    "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'lockstep-listen' AND datname = current_database()",
  );
  return Number(row?.n);
}

describe(`sql driver watch, live: ${label}`, function () {
  behaviourGroup(this, 'sql driver watch, live');
  this.timeout(60_000);
  let url: string;
  let dialect: LiveDialect;
  const prefix = randomPrefix();
  const drivers: SqlDriver[] = [];

  before(async function () {
    ({ url, dialect } = requireLiveTarget(this));
    const setup = await openLiveDriver(url, prefix);
    drivers.push(setup);
    await setup.migrate();
  });
  after(async () => {
    await Promise.all(drivers.map(d => d.close()));
  });

  it('an idle watch costs at most 120 reads over a simulated hour, and still hears a write made elsewhere', async () => {
    const clock = new ManualClock();
    const { driver, reads } = await countingDriver(url, clock);
    drivers.push(driver);
    const writer = await openLiveDriver(url, prefix);
    drivers.push(writer);
    const key = randomKey();
    const first = await writer.compareAndSwap(key, null, { n: 0 }, { summary: 't' });
    assert.ok(first.ok);
    let heard = 0;
    const watch = driver.watch(key, () => heard++, { interest: () => IDLE_INTEREST });
    try {
      await runUntil(clock, 20 * MINUTE);
      assert.ok(await writer.compareAndSwap(key, first.revision, { n: 1 }, { summary: 't' }));
      // PostgreSQL hears it as it commits; the others at the next slow poll (≤ 36 s of simulated time).
      if (dialect === 'postgres') await waitFor(() => heard > 0, { description: 'NOTIFY heard' });
      await runUntil(clock, 20 * MINUTE + 36_000);
      assert.ok(heard > 0, 'the write elsewhere was heard');
      await runUntil(clock, HOUR);
      assert.ok(reads() <= 120, `${reads()} reads in the idle hour`);
    } finally {
      watch.dispose();
    }
  });

  // Registered only in the PostgreSQL run (and a run with no target, which skips loudly), so that the
  // SQLite and MariaDB runs do not count them as skipped.
  if (liveDialect === undefined || liveDialect === 'postgres')
    describe('PostgreSQL LISTEN/NOTIFY', () => {
      it('a write made elsewhere is heard through NOTIFY, with no poll (the watch clock never moves)', async () => {
        const clock = new ManualClock();
        const { driver, reads } = await countingDriver(url, clock);
        drivers.push(driver);
        const writer = await openLiveDriver(url, prefix);
        drivers.push(writer);
        const key = randomKey();
        let written = await writer.compareAndSwap(key, null, { n: 0 }, { summary: 't' });
        let heard = 0;
        const watch = driver.watch(key, () => heard++);
        try {
          // The first read (at once, not on a timer) is also when the watch LISTENs.
          await waitFor(() => reads() === 1 && clock.pendingTimers === 1, { description: "the watch's first read" });
          await waitFor(async () => (await listeners(url)) === 1, { description: 'one LISTEN connection' });
          assert.ok(written.ok);
          written = await writer.compareAndSwap(key, written.revision, { n: 1 }, { summary: 't' });
          await waitFor(() => heard === 1, { description: 'the write heard through NOTIFY' });
          assert.equal(reads(), 1, 'heard without another read');
          // A write that loses its compare-and-swap sends nothing.
          assert.deepEqual(await writer.compareAndSwap(key, '1', { n: 9 }, { summary: 't' }), { ok: false });
          assert.ok(written.ok);
          await writer.compareAndSwap(key, written.revision, { n: 2 }, { summary: 't' });
          await waitFor(() => heard === 2, { description: 'the next write heard' });
        } finally {
          watch.dispose();
        }
        await waitFor(async () => (await listeners(url)) === 0, { description: 'the LISTEN connection closed with the last watch' });
      });

      it('the channel names neither the key nor the record: a digest', async () => {
        const driver = await openLiveDriver(url, prefix);
        drivers.push(driver);
        const key = randomKey();
        const watch = driver.watch(key, () => undefined);
        try {
          await waitFor(async () => (await listeners(url)) === 1, { description: 'one LISTEN connection' });
          const [activity] = await adminQuery(
            url,
            "SELECT query FROM pg_stat_activity WHERE application_name = 'lockstep-listen' AND datname = current_database()",
          );
          const query = String(activity?.query);
          assert.match(query, /^LISTEN "lockstep_[0-9a-f]{40}"$/);
          assert.ok(!query.includes(key) && !query.includes(prefix), query);
        } finally {
          watch.dispose();
        }
      });

      it('after the LISTEN connection is dropped, a write is still heard through the backup poll, which then LISTENs again', async () => {
        const clock = new ManualClock();
        const { driver, reads } = await countingDriver(url, clock);
        drivers.push(driver);
        const writer = await openLiveDriver(url, prefix);
        drivers.push(writer);
        const key = randomKey();
        let written = await writer.compareAndSwap(key, null, { n: 0 }, { summary: 't' });
        let heard = 0;
        const watch = driver.watch(key, () => heard++);
        try {
          await waitFor(async () => clock.pendingTimers === 1 && (await listeners(url)) === 1, { description: 'listening' });
          await adminQuery(
            url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lockstep-listen' AND datname = current_database()",
          );
          await waitFor(async () => (await listeners(url)) === 0, { description: 'the LISTEN connection gone' });
          assert.ok(written.ok);
          written = await writer.compareAndSwap(key, written.revision, { n: 1 }, { summary: 't' });
          assert.equal(heard, 0, 'nobody listened');
          const before = reads();
          await runUntil(clock, 36_000);
          assert.equal(heard, 1, 'the backup poll read the new revision');
          assert.ok(reads() > before);
          await waitFor(async () => (await listeners(url)) === 1, { description: 'listening again' });
          assert.ok(written.ok);
          await writer.compareAndSwap(key, written.revision, { n: 2 }, { summary: 't' });
          await waitFor(() => heard === 2, { description: 'the next write heard through NOTIFY again' });
        } finally {
          watch.dispose();
        }
      });
    });
});
