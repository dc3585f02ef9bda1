import * as assert from 'node:assert/strict';
import { HOUR, MINUTE } from '../../src/core/clock';
import { LockLeaseLostError } from '../../src/core/errors';
import { clear, heartbeat, MAX_HOLD_MS, petition, release, type LockRecord } from '../../src/core/lockRecord';
import { describe as describeLock, hasTurn, LockState } from '../../src/core/lockStatus';
import {
  ANA,
  BEN,
  CYD,
  LEAD,
  T0,
  acquireAs,
  at,
  fresh,
  leaseLost,
  ok,
  refusedWith,
  settings,
  tryAcquire,
} from '../helpers/lockRecordFixture';

/**
 * Seed 001's worked example: the lead's session dies at hour 20 without a release; at hour 24 the
 * lock expires and shows HOLDER SILENT; the queue head acquires within its window; the dead
 * session's grant is stale and its heartbeat never revives it.
 *
 * A 2 h lease whose last heartbeat comes at hour 20 would expire at hour 22; for expiry to land at
 * hour 24 as in the seed the lease TTL is 4 h, so the last heartbeat meets the 24 h bound exactly.
 */
describe("lockRecord: the seed's worked example (lead dies at hour 20)", () => {
  const s = settings({ leaseTtlMs: 4 * HOUR, windowMs: 15 * MINUTE });

  it('runs from acquisition to a stale, unrevivable grant', () => {
    // Hour 0: the lead acquires grant #1 (an earlier release left the counter at 6 in real life;
    // here the record is fresh, so the grant is 1).
    const held = acquireAs(fresh(), LEAD, T0, s);
    assert.equal(held.record.grant, 1);
    let record: LockRecord = held.record;

    // Coworkers petition in the morning.
    record = ok(petition(record, { identity: ANA }, at(1))).record;
    record = ok(petition(record, { identity: BEN }, at(2))).record;

    // Heartbeats every 10 minutes until the session dies at hour 20.
    let heartbeats = 0;
    for (let m = 10; m <= 20 * 60; m += 10) {
      const { record: next, value } = ok(heartbeat(record, s, held.proof, at(0, m)));
      assert.ok(value.expiresAt <= T0 + MAX_HOLD_MS);
      record = next;
      heartbeats++;
    }
    assert.equal(heartbeats, 120);
    assert.equal(record.holder?.expiresAt, at(24), 'the last heartbeat (hour 20 + 4 h TTL) meets the 24 h bound');
    const hbLine = record.audit[record.audit.length - 1];
    assert.deepEqual([hbLine.action, hbLine.count], ['heartbeat', 120]);

    // Hour 23.99: still held; the badge says who holds it.
    const bystander = { identity: CYD };
    assert.equal(describeLock(record, s, bystander, at(23, 59)).state, LockState.HeldByOther);
    assert.equal(describeLock(record, s, { identity: LEAD, session: held.proof }, at(23, 59)).state, LockState.HeldByMe);
    assert.equal(describeLock(record, s, { identity: ANA }, at(23, 59)).state, LockState.Queued);

    // Hour 24: the lease expired. Everyone sees HOLDER SILENT ("the badge shows HOLDER SILENT"); ANA (head) may take over.
    const silent = describeLock(record, s, bystander, at(24));
    assert.equal(silent.state, LockState.HolderSilent);
    assert.equal(silent.holder?.identity, LEAD);
    assert.equal(silent.timeLeftMs, 0);
    assert.equal(silent.canAcquire, false, 'the bystander waits for the queue');
    assert.deepEqual(silent.turn, { identity: ANA, endsAt: at(24, 15) });
    const head = describeLock(record, s, { identity: ANA }, at(24, 1));
    assert.equal(head.state, LockState.HolderSilent);
    assert.equal(hasTurn(head), true, 'the head may take over');
    refusedWith(tryAcquire(record, CYD, at(24, 1), s), 'not-your-turn');
    refusedWith(tryAcquire(record, BEN, at(24, 1), s), 'not-your-turn');

    // Hour 24:05: the queue head acquires within its window: grant = previous + 1.
    const ana = acquireAs(record, ANA, at(24, 5), s);
    assert.equal(ana.record.grant, 2);
    assert.equal(ana.record.holder?.identity, ANA);
    assert.deepEqual(
      ana.record.queue.map(p => p.identity),
      [BEN],
    );
    record = ana.record;

    // The dead session's grant is now stale.
    const dead = describeLock(record, s, { identity: LEAD, session: held.proof }, at(25));
    assert.equal(dead.state, LockState.Stale);
    assert.equal(dead.staleGrant, 1);
    assert.equal(dead.grant, 2);
    assert.equal(describeLock(record, s, { identity: ANA, session: ana.proof }, at(25)).state, LockState.HeldByMe);

    // Its client wakes up: the heartbeat fails with a lost lease, and keeps failing.
    const lost = leaseLost(heartbeat(record, s, held.proof, at(25)), 1);
    assert.ok(lost instanceof LockLeaseLostError);
    assert.match(lost.message, /grant #2 was issued since/);
    leaseLost(heartbeat(record, s, held.proof, at(30)), 1);
    leaseLost(release(record, held.proof, at(30)), 1);
    assert.equal(record.holder?.grant, 2, 'the new holder is untouched');

    // Acquiring again is the only way back, and it queues behind ANA's live lease.
    refusedWith(tryAcquire(record, LEAD, at(25), s), 'held-by-other');

    // Seed 001: after HOLDER SILENT readers treat the copy with caution until a push and release
    // restore it. The takeover marked the page; everyone sees the mark while ANA works.
    const caution = { silentGrant: 1, since: at(24, 5), by: ANA };
    assert.equal(silent.caution, null, 'HOLDER SILENT itself is shown by the state; the mark comes with the takeover');
    assert.deepEqual(record.caution, caution);
    assert.deepEqual(describeLock(record, s, bystander, at(26)).caution, caution);
    record = ok(heartbeat(record, s, ana.proof, at(26))).record;
    assert.deepEqual(record.caution, caution, 'a heartbeat does not lift it');
    // ANA pushes and releases (the container checks the push before this transition, and names the
    // commit that landed): the mark ends.
    record = ok(release(record, ana.proof, at(27), { landed: 'abc1234def56' })).record;
    assert.equal(record.caution, null);
    assert.equal(describeLock(record, s, bystander, at(27)).caution, null);
  });

  it("an operator's clear marks the page too, and the mark lasts through the next grant until a release with a landing", () => {
    const held = acquireAs(fresh(), LEAD, T0, s);
    const silent = at(5);
    const cleared = ok(clear(held.record, settings({ operators: [CYD] }), { identity: CYD, reason: 'laptop died' }, silent)).record;
    const caution = { silentGrant: 1, since: silent, by: CYD };
    assert.deepEqual(cleared.caution, caution);
    const next = acquireAs(cleared, ANA, at(6), s);
    assert.deepEqual(next.record.caution, caution, 'an acquisition after a clear is no release: the mark stays');
    assert.deepEqual(ok(release(next.record, next.proof, at(7))).record.caution, caution, 'nothing landed: the mark stays');
    assert.equal(ok(release(next.record, next.proof, at(7), { landed: 'abc1234def56' })).record.caution, null);
  });

  it('with a 2 h TTL the same death at hour 20 shows HOLDER SILENT from hour 22', () => {
    const s2 = settings({ leaseTtlMs: 2 * HOUR });
    const held = acquireAs(fresh(), LEAD, T0, s2);
    let record = held.record;
    for (let m = 10; m <= 20 * 60; m += 10) record = ok(heartbeat(record, s2, held.proof, at(0, m))).record;
    assert.equal(record.holder?.expiresAt, at(22));
    assert.equal(describeLock(record, s2, { identity: CYD }, at(22) - 1).state, LockState.HeldByOther);
    assert.equal(describeLock(record, s2, { identity: CYD }, at(22)).state, LockState.HolderSilent);
  });
});
