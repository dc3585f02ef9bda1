import * as assert from 'node:assert/strict';
import { clear, leaseIds, petition, release, type LockRecord } from '../../src/core/lockRecord';
import { describe as describeLock, hasTurn, lapseLine, LockState, type Viewer } from '../../src/core/lockStatus';
import { formatClock } from '../../src/core/format';
import { ANA, BEN, CYD, LEAD, OP, SETTINGS, T0, acquireAs, at, fresh, ok, proofOf } from '../helpers/lockRecordFixture';

const WINDOW = SETTINGS.windowMs;
const leadHeld = () => acquireAs(fresh(), LEAD, T0);
const session = (identity: string, grant: number) => ({ grant, tokenHash: proofOf(identity, grant).tokenHash });

/** LEAD holds grant #1 (expires hour 2); ANA then BEN petitioned. */
function heldWithQueue(): LockRecord {
  let record = leadHeld().record;
  for (const identity of [ANA, BEN]) record = ok(petition(record, { identity }, at(0, 1))).record;
  return record;
}
const releasedWithQueue = () => ok(release(heldWithQueue(), proofOf(LEAD, 1), at(1))).record;
const clearedWithoutQueue = () => ok(clear(leadHeld().record, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).record;

describe('lockStatus: describe', () => {
  const cases: {
    title: string;
    record: () => LockRecord;
    viewer: Viewer;
    now: number;
    state: LockState;
    position?: number;
    canAcquire: boolean;
    staleGrant?: number;
  }[] = [
    {
      title: 'an empty record is free to anyone',
      record: fresh,
      viewer: { identity: CYD },
      now: T0,
      state: LockState.Free,
      canAcquire: true,
    },
    {
      title: 'the holder with its session sees held-by-me',
      record: () => leadHeld().record,
      viewer: { identity: LEAD, session: session(LEAD, 1) },
      now: at(1),
      state: LockState.HeldByMe,
      canAcquire: false,
    },
    {
      title: "the holder's identity without the session (another clone) sees held-by-other",
      record: () => leadHeld().record,
      viewer: { identity: LEAD },
      now: at(1),
      state: LockState.HeldByOther,
      canAcquire: false,
    },
    {
      title: 'a bystander sees held-by-other',
      record: heldWithQueue,
      viewer: { identity: CYD },
      now: at(1),
      state: LockState.HeldByOther,
      canAcquire: false,
    },
    {
      title: 'a waiter sees queued with its position',
      record: heldWithQueue,
      viewer: { identity: BEN },
      now: at(1),
      state: LockState.Queued,
      position: 2,
      canAcquire: false,
    },
    {
      title: 'after release the head sees your-turn',
      record: releasedWithQueue,
      viewer: { identity: ANA },
      now: at(1, 1),
      state: LockState.YourTurn,
      position: 1,
      canAcquire: true,
    },
    {
      title: 'after release the second waits (queued) in window 1',
      record: releasedWithQueue,
      viewer: { identity: BEN },
      now: at(1, 1),
      state: LockState.Queued,
      position: 2,
      canAcquire: false,
    },
    {
      title: 'after release the second sees your-turn in window 2',
      record: releasedWithQueue,
      viewer: { identity: BEN },
      now: at(1) + WINDOW,
      state: LockState.YourTurn,
      position: 2,
      canAcquire: true,
    },
    {
      title: 'after every window the queue is free to all',
      record: releasedWithQueue,
      viewer: { identity: BEN },
      now: at(1) + 2 * WINDOW,
      state: LockState.Free,
      position: 2,
      canAcquire: true,
    },
    {
      title: 'an expired holder shows HOLDER SILENT to a bystander',
      record: () => leadHeld().record,
      viewer: { identity: CYD },
      now: at(2),
      state: LockState.HolderSilent,
      canAcquire: true,
    },
    {
      title: 'HOLDER SILENT to a waiter whose window has not come',
      record: heldWithQueue,
      viewer: { identity: BEN },
      now: at(2, 1),
      state: LockState.HolderSilent,
      position: 2,
      canAcquire: false,
    },
    {
      title: 'HOLDER SILENT to the head too (seed 001: "the badge shows HOLDER SILENT"); it may take over',
      record: heldWithQueue,
      viewer: { identity: ANA },
      now: at(2, 1),
      state: LockState.HolderSilent,
      position: 1,
      canAcquire: true,
    },
    {
      title: 'HOLDER SILENT to the second waiter in its own window',
      record: heldWithQueue,
      viewer: { identity: BEN },
      now: at(2) + WINDOW + 1,
      state: LockState.HolderSilent,
      position: 2,
      canAcquire: true,
    },
    {
      title: "the silent holder's own clone sees its grant stale",
      record: () => leadHeld().record,
      viewer: { identity: LEAD, session: session(LEAD, 1) },
      now: at(2),
      state: LockState.Stale,
      canAcquire: true,
      staleGrant: 1,
    },
    {
      title: 'a superseded session is stale',
      record: () => acquireAs(leadHeld().record, ANA, at(3)).record,
      viewer: { identity: LEAD, session: session(LEAD, 1) },
      now: at(3, 1),
      state: LockState.Stale,
      canAcquire: false,
      staleGrant: 1,
    },
    {
      title: 'a session older by several grants is stale',
      record: () => {
        let r = leadHeld().record;
        for (let i = 0; i < 3; i++) r = acquireAs(r, ANA, at(3 * (i + 1))).record;
        return r;
      },
      viewer: { identity: LEAD, session: session(LEAD, 1) },
      now: at(9, 1),
      state: LockState.Stale,
      canAcquire: false,
      staleGrant: 1,
    },
    {
      title: 'a session whose grant an operator cleared is stale',
      record: clearedWithoutQueue,
      viewer: { identity: LEAD, session: session(LEAD, 1) },
      now: at(3, 1),
      state: LockState.Stale,
      canAcquire: true,
      staleGrant: 1,
    },
    {
      title: 'a cleared lock is free to a bystander',
      record: clearedWithoutQueue,
      viewer: { identity: CYD },
      now: at(3, 1),
      state: LockState.Free,
      canAcquire: true,
    },
  ];
  for (const c of cases) {
    it(`${c.title} (${c.state})`, () => {
      const status = describeLock(c.record(), SETTINGS, c.viewer, c.now);
      assert.equal(status.state, c.state);
      assert.equal(status.position, c.position ?? 0);
      assert.equal(status.canAcquire, c.canAcquire);
      assert.equal(status.staleGrant, c.staleGrant ?? null);
    });
  }

  it('reports the facts behind the badge: grant, holder, time left, turn, queue, ranges, nextId', () => {
    const held = leadHeld();
    let record = ok(petition(held.record, { identity: ANA, note: 'docs' }, at(0, 1))).record;
    record = ok(leaseIds(record, held.proof, { to: ANA, count: 3 }, at(0, 2))).record;
    const status = describeLock(record, SETTINGS, { identity: ANA }, at(1, 30));
    assert.equal(status.container, record.container);
    assert.equal(status.grant, 1);
    assert.deepEqual(status.holder, { identity: LEAD, grant: 1, grantedAt: T0, expiresAt: at(2) });
    assert.equal(status.timeLeftMs, 30 * 60 * 1000);
    assert.equal(status.turn, null);
    assert.deepEqual(status.queue, [{ identity: ANA, at: at(0, 1), note: 'docs' }]);
    assert.equal(status.ranges.length, 1);
    assert.equal(status.nextId, 4);
    assert.equal(
      Object.keys(status.holder!).some(k => /hash|token/i.test(k)),
      false,
      'no hashes leave the record',
    );
    assert.equal(JSON.stringify(status).includes(held.record.holder!.tokenHash), false);
  });

  it('time left goes negative once the holder is silent; the turn names the head and its end', () => {
    const status = describeLock(heldWithQueue(), SETTINGS, { identity: CYD }, at(2, 5));
    assert.equal(status.timeLeftMs, -5 * 60 * 1000);
    assert.deepEqual(status.turn, { identity: ANA, endsAt: at(2) + WINDOW });
  });

  it('hasTurn: the head over a silent holder and after a release; never a bystander, a waiter before its window, or the holder', () => {
    assert.equal(hasTurn(describeLock(heldWithQueue(), SETTINGS, { identity: ANA }, at(2, 1))), true, 'head, holder silent');
    assert.equal(hasTurn(describeLock(releasedWithQueue(), SETTINGS, { identity: ANA }, at(1, 1))), true, 'head, after a release');
    assert.equal(hasTurn(describeLock(heldWithQueue(), SETTINGS, { identity: BEN }, at(2, 1))), false, "second, head's window");
    assert.equal(hasTurn(describeLock(heldWithQueue(), SETTINGS, { identity: CYD }, at(2, 1))), false, 'bystander who may not acquire');
    assert.equal(
      hasTurn(describeLock(leadHeld().record, SETTINGS, { identity: CYD }, at(2, 1))),
      false,
      'bystander who may acquire: no queue, no turn',
    );
    assert.equal(hasTurn(describeLock(heldWithQueue(), SETTINGS, { identity: ANA }, at(1))), false, 'queued behind a live holder');
  });

  it('a session of the current grant with the wrong token is not the holder and not stale', () => {
    const status = describeLock(
      leadHeld().record,
      SETTINGS,
      { identity: LEAD, session: { grant: 1, tokenHash: proofOf(BEN, 1).tokenHash } },
      at(1),
    );
    assert.equal(status.state, LockState.HeldByOther);
    assert.equal(status.staleGrant, null);
  });
});

describe('lockStatus: a lapsed lease shows what the person can do next', () => {
  /** LEAD held #1 (expired at hour 2); LEAD then petitions behind ANA, so the lapse is a second line. */
  const lapsedAndQueued = (): LockRecord => {
    let record = leadHeld().record;
    record = ok(petition(record, { identity: ANA }, at(2, 1))).record;
    return ok(petition(record, { identity: LEAD }, at(2, 2))).record;
  };
  const viewer = { identity: LEAD, session: session(LEAD, 1) };

  it('queued behind the head while its own grant is the silent one: HOLDER SILENT like everyone, with the lapse (expired, when) as the secondary facts', () => {
    const status = describeLock(lapsedAndQueued(), SETTINGS, viewer, at(2, 3));
    assert.equal(status.state, LockState.HolderSilent);
    assert.equal(hasTurn(status), false);
    assert.equal(status.position, 2);
    assert.equal(status.staleGrant, 1);
    assert.deepEqual(status.lapse, { grant: 1, how: 'expired', at: at(2), by: null, current: 1 });
    assert.equal(lapseLine(status.lapse!, true), `your lease #1 expired at ${formatClock(at(2))}; the work you did under it is not pushed`);
    assert.match(status.next, /position 2 of 2 in the queue: wait for your turn \(lockstep wait\)/);
  });

  it('its own window over the silent holder: HOLDER SILENT with its turn (so the "Your turn" notification comes), lapse kept', () => {
    const status = describeLock(lapsedAndQueued(), SETTINGS, viewer, at(2) + WINDOW + 1);
    assert.equal(status.state, LockState.HolderSilent);
    assert.equal(hasTurn(status), true);
    assert.equal(status.canAcquire, true);
    assert.equal(status.lapse?.how, 'expired');
    assert.equal(status.next, 'acquire it now (lockstep acquire)');
  });

  it("queued behind a live holder: queued; its own window after that holder's release: your-turn, lapse kept", () => {
    let record = acquireAs(leadHeld().record, ANA, at(3)).record;
    record = ok(petition(record, { identity: LEAD }, at(3, 1))).record;
    const queued = describeLock(record, SETTINGS, viewer, at(3, 2));
    assert.equal(queued.state, LockState.Queued);
    assert.equal(queued.lapse?.how, 'superseded');
    record = ok(release(record, proofOf(ANA, 2), at(3, 3))).record;
    const turn = describeLock(record, SETTINGS, viewer, at(3, 4));
    assert.equal(turn.state, LockState.YourTurn);
    assert.equal(hasTurn(turn), true);
    assert.equal(turn.staleGrant, 1);
  });

  it('superseded by another person: stale, and the words name who holds which grant — never the reader as the holder', () => {
    const record = acquireAs(leadHeld().record, ANA, at(3)).record;
    const status = describeLock(record, SETTINGS, viewer, at(3, 1));
    assert.equal(status.state, LockState.Stale);
    assert.equal(lapseLine(status.lapse!), `your lease #1 has ended: grant #2 was issued to ${ANA} at ${formatClock(at(3))}`);
    assert.match(status.next, /petition to join the queue/);
  });

  it("superseded more than once: the line names the grant after the reader's with its own taker and time, and the latest apart", () => {
    let record = acquireAs(leadHeld().record, ANA, at(3)).record;
    record = ok(release(record, proofOf(ANA, 2), at(3, 1))).record;
    record = acquireAs(record, BEN, at(4)).record;
    record = ok(release(record, proofOf(BEN, 3), at(4, 1))).record;
    record = acquireAs(record, CYD, at(5)).record;
    const status = describeLock(record, SETTINGS, viewer, at(5, 1));
    assert.deepEqual({ ...status.lapse }, { grant: 1, how: 'superseded', at: at(3), by: ANA, current: 4 });
    assert.equal(
      lapseLine(status.lapse!),
      `your lease #1 has ended: grant #2 was issued to ${ANA} at ${formatClock(at(3))}; grant #4 is the latest`,
    );
    // An audit that no longer holds grant #2's acquire names no one rather than the wrong one.
    const trimmed = { ...record, audit: record.audit.filter(line => line.grant !== 2) };
    const unknown = describeLock(trimmed, SETTINGS, viewer, at(5, 1)).lapse!;
    assert.equal(lapseLine(unknown), 'your lease #1 has ended: grant #4 has been issued since');
  });

  it('the holder\'s own expired grant, nobody queued: stale, may acquire again, and says expired (not "below grant #1 held by you")', () => {
    const status = describeLock(leadHeld().record, SETTINGS, viewer, at(2, 5));
    assert.equal(status.state, LockState.Stale);
    assert.equal(status.canAcquire, true);
    assert.equal(lapseLine(status.lapse!), `your lease #1 expired at ${formatClock(at(2))}`);
  });

  it('cleared by an operator: says who cleared it and when', () => {
    const status = describeLock(clearedWithoutQueue(), SETTINGS, viewer, at(3, 1));
    assert.equal(lapseLine(status.lapse!), `your lease #1 was cleared by ${OP} at ${formatClock(at(3))}`);
  });
});

describe('lockStatus: next step', () => {
  it('the holder in its own clone is told to push and release, never "in another clone"', () => {
    const held = leadHeld();
    assert.equal(
      describeLock(held.record, SETTINGS, { identity: LEAD, session: session(LEAD, 1) }, at(1)).next,
      'push your work, then release (lockstep release --push)',
    );
    assert.match(describeLock(held.record, SETTINGS, { identity: LEAD }, at(1)).next, /in another clone or session/);
  });
});
