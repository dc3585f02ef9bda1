import * as assert from 'node:assert/strict';
import { HOUR, ManualClock, MINUTE, SECOND } from '../../src/core/clock';
import { IDLE_INTEREST, type WatchInterest } from '../../src/core/stores/pollPace';
import type { ChangeFeed } from '../../src/core/stores/sql/changeFeed';
import { recordChannel } from '../../src/core/stores/sql/changeFeed';
import { NOTIFY_BACKUP_PACE, RecordWatches, SQL_POLL_PACE } from '../../src/core/stores/sql/recordWatch';
import type { Disposable } from '../../src/core/stores/store';
import { runUntil, seededRandom } from '../helpers/simulatedPolls';

const KEY = 'a'.repeat(64);

/** An in-process stand-in for PostgreSQL's LISTEN side: delivers what `notify` sends, unless it is down or drops it. */
class LocalFeed implements ChangeFeed {
  readonly handlers = new Map<string, Set<(payload: string) => void>>();
  down = false;
  readies = 0;
  subscribe(channel: string, onNotify: (payload: string) => void): Disposable {
    const set = this.handlers.get(channel) ?? new Set();
    this.handlers.set(channel, set);
    set.add(onNotify);
    return { dispose: () => set.delete(onNotify) };
  }
  async ready(): Promise<void> {
    this.readies++;
    if (this.down) throw new Error('unreachable');
  }
  async close(): Promise<void> {
    this.handlers.clear();
  }
  notify(channel: string, payload: string): void {
    if (this.down) return;
    for (const h of this.handlers.get(channel) ?? []) h(payload);
  }
}

/**
 * A simulated hour of one window's SQL watch (a ManualClock, a table answering at once): counts the
 * reads, and checks when a change made elsewhere is heard, with and without a change feed.
 */
function setUp(interest: () => WatchInterest, feed?: LocalFeed) {
  const clock = new ManualClock();
  const table = { revision: '1', reads: 0, down: false };
  const watches = new RecordWatches(
    async () => {
      table.reads++;
      if (table.down) throw new Error('unreachable');
      return table.revision;
    },
    { clock, random: seededRandom(11), ...(feed ? { feed } : {}) },
  );
  const heard: number[] = [];
  const watch = watches.watch(KEY, () => heard.push(clock.monotonic()), { interest });
  /** A write elsewhere; with a feed, its NOTIFY (unless `lost`). */
  const write = (lost = false) => {
    table.revision = String(Number(table.revision) + 1);
    if (feed && !lost) feed.notify(recordChannel(KEY), table.revision);
  };
  return { clock, table, watches, watch, heard, write };
}

async function heardWithin(w: ReturnType<typeof setUp>, at: number, bound: number, lost = false): Promise<number | undefined> {
  await runUntil(w.clock, at);
  const before = w.heard.length;
  w.write(lost);
  await runUntil(w.clock, at + bound);
  const first = w.heard.slice(before)[0];
  return first === undefined ? undefined : first - at;
}

describe('sql watch: idle cost over a simulated hour', () => {
  it('MariaDB and SQLite poll: an idle window reads at most 120 times an hour and hears a change within 36 s', async () => {
    const w = setUp(() => IDLE_INTEREST);
    for (const at of [5 * MINUTE + 3, 29 * MINUTE + 700, 48 * MINUTE + 11 * SECOND]) {
      const after = await heardWithin(w, at, SQL_POLL_PACE.slow.maxMs);
      assert.ok(after !== undefined && after <= SQL_POLL_PACE.slow.maxMs, `change at ${at} heard ${after} ms later`);
    }
    await runUntil(w.clock, HOUR - 1);
    assert.ok(w.table.reads <= 120, `${w.table.reads} reads in the idle hour`);
    assert.ok(w.table.reads >= 100, `${w.table.reads}: the slow poll still runs`);
    assert.deepEqual(w.watch.freshness, { idleMs: 36_000, activeMs: 1_000 });
    w.watch.dispose();
    assert.equal(w.clock.pendingTimers, 0, 'a disposed watch leaves no timer');
  });

  it('MariaDB and SQLite poll fast (≤ 1 s) while the window waits, and turn fast at once when nudged', async () => {
    let interest: WatchInterest = IDLE_INTEREST;
    const w = setUp(() => interest);
    await runUntil(w.clock, 10 * MINUTE);
    interest = { holds: false, waits: true };
    w.watch.nudge?.();
    const after = await heardWithin(w, 10 * MINUTE, SQL_POLL_PACE.fast.maxMs);
    assert.ok(after !== undefined && after <= 1_000, `heard ${after} ms after the write`);
    w.watch.dispose();
  });

  it('PostgreSQL: a NOTIFY is heard at once, with no read; an idle hour costs at most 120 reads', async () => {
    const feed = new LocalFeed();
    const w = setUp(() => IDLE_INTEREST, feed);
    for (const at of [3 * MINUTE, 17 * MINUTE + 1, 52 * MINUTE + 999]) {
      await runUntil(w.clock, at);
      const reads = w.table.reads;
      const before = w.heard.length;
      w.write();
      assert.equal(w.heard.length, before + 1, 'heard as the notification arrived');
      assert.equal(w.table.reads, reads, 'no read was needed to hear it');
    }
    await runUntil(w.clock, HOUR - 1);
    assert.equal(w.heard.length, 3, 'each change heard once (the backup poll does not repeat a notified revision)');
    assert.ok(w.table.reads <= 120, `${w.table.reads} reads in the idle hour`);
    assert.ok(w.watch.announced, 'the watch says its changes are announced');
    assert.deepEqual(w.watch.freshness, { idleMs: 36_000, activeMs: 36_000 });
    w.watch.dispose();
  });

  it('PostgreSQL: a lost notification, or a LISTEN connection that is down, is caught by the backup poll within 36 s', async () => {
    const feed = new LocalFeed();
    const w = setUp(() => ({ holds: false, waits: true }), feed);
    const lost = await heardWithin(w, 4 * MINUTE, NOTIFY_BACKUP_PACE.slow.maxMs, true);
    assert.ok(lost !== undefined && lost <= 36_000, `a lost notification's change heard ${lost} ms later`);
    feed.down = true;
    const readies = feed.readies;
    const down = await heardWithin(w, 9 * MINUTE, NOTIFY_BACKUP_PACE.slow.maxMs);
    assert.ok(down !== undefined && down <= 36_000, `a change while LISTEN is down heard ${down} ms later`);
    assert.ok(feed.readies > readies, 'each backup poll tries to LISTEN again');
    feed.down = false;
    await runUntil(w.clock, 10 * MINUTE);
    const back = w.heard.length;
    w.write();
    assert.equal(w.heard.length, back + 1, 'after the poll connected it again, notifications are heard at once');
    w.watch.dispose();
  });

  it('a failing database backs the poll off, and a change is heard once it answers again', async () => {
    const w = setUp(() => IDLE_INTEREST);
    await runUntil(w.clock, MINUTE);
    w.table.down = true;
    const reads = w.table.reads;
    await runUntil(w.clock, 31 * MINUTE);
    assert.ok(w.table.reads - reads <= 30, `${w.table.reads - reads} reads in 30 minutes of outage`);
    w.table.down = false;
    const after = await heardWithin(w, 31 * MINUTE, SQL_POLL_PACE.maxBackoffMs + SQL_POLL_PACE.slow.maxMs);
    assert.ok(after !== undefined, 'heard after the outage');
    w.watch.dispose();
  });
});
