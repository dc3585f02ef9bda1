import * as assert from 'node:assert/strict';
import { ManualClock, SECOND } from '../../src/core/clock';
import { emptyRecord, type LockRecord } from '../../src/core/lockRecord';
import { GIT_POLL_PACE, pollMode } from '../../src/core/stores/pollPace';
import type { Watch, WatchOptions } from '../../src/core/stores/store';
import { freshnessLine } from '../../src/extension/badge';
import { BYSTANDER_SETTLE_MS, interestFor, settleMsFor } from '../../src/extension/windowInterest';
import { WatchKeeper } from '../../src/extension/watchKeeper';
import { heldPage, statusOf } from '../helpers/lockRecordFixture';

/**
 * Issue 30, fifty clones: a window that neither holds nor heads the queue polls slowly and lets a change settle (a random pause of
 * at most BYSTANDER_SETTLE_MS) before it reads the page, and every change heard meanwhile rides on that read; the
 * holder, the queue head and a window whose turn it is read at once.
 */
describe('the pause before a bystander reads a change', () => {
  const now = Date.UTC(2026, 0, 1, 10, 0, 0);
  const held = (queue: LockRecord['queue']): LockRecord => heldPage('alice@x.io', now, queue);
  const queue = [
    { identity: 'bob@x.io', at: now - 5_000 },
    { identity: 'carol@x.io', at: now - 4_000 },
  ];
  const as = (identity: string, r: LockRecord, holding?: boolean) => statusOf(r, identity, now, holding);

  it('reads at once for the holder, the queue head and a window whose turn it is; pauses for the others', () => {
    assert.equal(settleMsFor(as('alice@x.io', held(queue), true)), 0, 'the holder');
    assert.equal(settleMsFor(as('bob@x.io', held(queue))), 0, 'the queue head');
    assert.equal(settleMsFor(as('carol@x.io', held(queue))), BYSTANDER_SETTLE_MS, 'second in the queue');
    assert.equal(settleMsFor(as('dave@x.io', held(queue))), BYSTANDER_SETTLE_MS, 'not queued');
    assert.equal(settleMsFor(as('dave@x.io', emptyRecord('c'))), BYSTANDER_SETTLE_MS, 'a free lock, not queued');
    // Alice released 16 minutes ago: bob's handover window (15 minutes) has passed, so it is carol's turn, second.
    const released: LockRecord = { ...emptyRecord('c'), grant: 4, queue, releasedAt: now - 16 * 60_000 };
    assert.equal(as('carol@x.io', released).position, 2);
    assert.equal(settleMsFor(as('carol@x.io', released)), 0, 'her turn');
    assert.equal(settleMsFor(undefined), 0, 'nothing read yet');
  });

  it('polls fast for the holder, the queue head and a window whose turn it is, and for a minute after its user acted', () => {
    const at = now - 10_000;
    assert.deepEqual(interestFor(as('alice@x.io', held(queue), true), undefined), { holds: true, waits: false });
    assert.deepEqual(interestFor(as('bob@x.io', held(queue)), at), { holds: false, waits: true, askedAt: at });
    assert.deepEqual(interestFor(as('carol@x.io', held(queue)), undefined), { holds: false, waits: false }, 'second: slow');
    assert.deepEqual(interestFor(as('dave@x.io', held(queue)), undefined), { holds: false, waits: false });
    assert.deepEqual(interestFor(undefined, undefined), { holds: false, waits: false });
    const released: LockRecord = { ...emptyRecord('c'), grant: 4, queue, releasedAt: now - 16 * 60_000 };
    assert.deepEqual(interestFor(as('carol@x.io', released), undefined), { holds: false, waits: true }, 'her turn, second');
    // The pace those interests give on the git driver's rule: carol, second, polls slowly unless she just acted.
    const carol = as('carol@x.io', held(queue));
    assert.equal(pollMode(interestFor(carol, undefined), now, GIT_POLL_PACE), 'slow');
    assert.equal(pollMode(interestFor(carol, now - 5_000), now, GIT_POLL_PACE), 'fast');
    assert.equal(pollMode(interestFor(as('bob@x.io', held(queue)), undefined), now, GIT_POLL_PACE), 'fast');
  });

  /** A keeper on a ManualClock over a push watch whose `change()` is the driver's event. */
  function keeper(settleMs: () => number, draws: number[]) {
    const clock = new ManualClock();
    const reads: number[] = [];
    let change: () => void = () => assert.fail('no watch yet');
    const open = async (onChange: () => void, _options: WatchOptions): Promise<Watch> => {
      change = onChange;
      return { live: { via: 'file watch', healthy: true, recovers: false }, dispose: () => undefined };
    };
    const k = new WatchKeeper({
      open,
      read: () => reads.push(clock.monotonic()),
      pollMs: () => 10 * SECOND,
      interest: () => ({ holds: false, waits: true }),
      settleMs,
      random: () => draws.shift() ?? 0.5,
      clock,
    });
    return { clock, reads, keeper: k, change: () => change() };
  }

  it('a bystander reads once after its pause, however many changes it heard during it', async () => {
    const w = keeper(() => BYSTANDER_SETTLE_MS, [0.25, 0.9]);
    await w.keeper.start();
    w.change();
    for (let i = 0; i < 9; i++) {
      w.clock.advance(20);
      w.change(); // a burst of ten petitions
    }
    assert.deepEqual(w.reads, [], 'no read before the pause ends');
    w.clock.advance(250 - 180 - 1);
    assert.deepEqual(w.reads, []);
    w.clock.advance(1);
    assert.deepEqual(w.reads, [250], 'one read, at the drawn pause (0.25 of 1 s), for all ten changes');
    w.change();
    w.clock.advance(899);
    assert.deepEqual(w.reads, [250]);
    w.clock.advance(1);
    assert.deepEqual(w.reads, [250, 1150], 'the next change draws a pause of its own');
    assert.equal(w.clock.pendingTimers, 0, 'nothing left waiting');
    assert.equal(
      freshnessLine(w.keeper.freshness()),
      'Updates: live: file watch, as they happen; up to 1s later while you neither hold nor head the queue',
    );
  });

  it('the holder or the head reads each change at once, and a pause running when it became one gives way', async () => {
    let settle = BYSTANDER_SETTLE_MS;
    const w = keeper(() => settle, [0.8]);
    await w.keeper.start();
    w.change();
    assert.deepEqual(w.reads, []);
    settle = 0; // the window's last read made it the queue's head
    w.clock.advance(100);
    w.change();
    assert.deepEqual(w.reads, [100], 'read at once');
    assert.equal(w.clock.pendingTimers, 0, 'the pause that ran is cancelled: its change is in this read');
    w.change();
    assert.deepEqual(w.reads, [100, 100]);
    assert.equal(freshnessLine(w.keeper.freshness()), 'Updates: live: file watch, as they happen');
  });

  it('no pause option, or one that throws, reads at once; dispose cancels a pause', async () => {
    const plain = keeper(() => 0, []);
    await plain.keeper.start();
    plain.change();
    assert.deepEqual(plain.reads, [0]);
    const throwing = keeper(() => {
      throw new Error('no status');
    }, []);
    await throwing.keeper.start();
    throwing.change();
    assert.deepEqual(throwing.reads, [0], 'a pause never costs a read');
    const disposed = keeper(() => BYSTANDER_SETTLE_MS, [0.5]);
    await disposed.keeper.start();
    disposed.change();
    disposed.keeper.dispose();
    assert.equal(disposed.clock.pendingTimers, 0);
    disposed.clock.advance(BYSTANDER_SETTLE_MS);
    assert.deepEqual(disposed.reads, []);
  });
});
