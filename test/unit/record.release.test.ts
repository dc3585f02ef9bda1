import * as assert from 'node:assert/strict';
import {
  clear,
  leaseIds,
  liftsCaution,
  nextId,
  petition,
  release,
  releaseRecorded,
  turnAt,
  type LockRecord,
} from '../../src/core/lockRecord';
import {
  ANA,
  BEN,
  LEAD,
  OP,
  SETTINGS,
  T0,
  acquireAs,
  at,
  fresh,
  lastAudit,
  leaseLost,
  ok,
  proofOf,
  refusedWith,
} from '../helpers/lockRecordFixture';

describe('lockRecord: release', () => {
  it('frees the lock, keeps the grant counter and opens the handover window', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const withQueue = ok(petition(held.record, { identity: ANA }, at(0, 5))).record;
    const { record, value } = ok(release(withQueue, held.proof, at(1), { landed: 'abc1234def56' }));
    assert.deepEqual(value, { grant: 1, reclaimed: 0, caution: null });
    assert.equal(record.holder, null);
    assert.equal(record.grant, 1);
    assert.equal(record.releasedAt, at(1));
    assert.deepEqual(turnAt(record, SETTINGS, at(1)).eligible, [ANA]);
    assert.deepEqual(lastAudit(record), {
      at: at(1),
      who: LEAD,
      action: 'release',
      grant: 1,
      outcome: 'done',
      detail: 'landed abc1234def56',
    });
  });

  it('with nothing landed is accepted, and its audit line says so', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { record } = ok(release(held.record, held.proof, at(1)));
    assert.equal(record.holder, null);
    assert.deepEqual(lastAudit(record), { at: at(1), who: LEAD, action: 'release', grant: 1, outcome: 'done', detail: 'nothing landed' });
  });

  it('refuses a landed commit that is not a commit id (nothing written)', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    for (const landed of ['', 'abc12', 'ABC1234', 'abc1234 ; caution lifted', 'g'.repeat(12)]) {
      const { record } = refusedWith(release(held.record, held.proof, at(1), { landed }), 'invalid-request');
      assert.equal(record, undefined);
    }
  });

  it('reclaims the identifier ranges of its grant, counts the unused ones, and never reissues them', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 10 }, at(0, 1))).record; // 1-10
    record = ok(leaseIds(record, held.proof, { newIdentity: true, to: BEN, count: 5 }, at(0, 2))).record; // 11-15
    for (let i = 0; i < 3; i++) record = ok(nextId(record, { identity: ANA }, at(0, 3))).record; // ANA used 1-3
    const { record: released, value } = ok(release(record, held.proof, at(1)));
    assert.equal(value.reclaimed, 7 + 5);
    assert.deepEqual(released.ranges, []);
    assert.deepEqual(released.blocks, []);
    assert.equal(released.nextId, 16, 'reclaimed identifiers are not handed out again');
    assert.equal(lastAudit(released).detail, 'nothing landed; reclaimed 12 unused identifiers');
  });

  it('with a landing, records which leased identifiers its lessees minted', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 10 }, at(0, 1))).record; // 1-10
    record = ok(leaseIds(record, held.proof, { newIdentity: true, to: BEN, count: 5 }, at(0, 2))).record; // 11-15
    for (let i = 0; i < 3; i++) record = ok(nextId(record, { identity: ANA }, at(0, 3))).record; // ANA used 1-3
    record = ok(nextId(record, { identity: BEN }, at(0, 4))).record; // BEN used 11
    const { record: released } = ok(release(record, held.proof, at(1), { landed: 'abc1234' }));
    assert.equal(lastAudit(released).detail, 'landed abc1234; used leased identifiers 1-3, 11; reclaimed 11 unused identifiers');
    // What a release run again after its answer was lost reads back: the landing and the count, from its line.
    assert.deepEqual(releaseRecorded(released, 1), { landed: 'abc1234', reclaimed: 11 });
    assert.equal(releaseRecorded(released, 2), undefined, 'no release of grant #2');
  });

  it('read back, a release that landed nothing reclaims what it says, and one identifier is singular', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const leased = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 1 }, at(0, 1))).record;
    const { record } = ok(release(leased, held.proof, at(1)));
    assert.equal(lastAudit(record).detail, 'nothing landed; reclaimed 1 unused identifier');
    assert.deepEqual(releaseRecorded(record, 1), { landed: null, reclaimed: 1 });
  });

  const refusals: { title: string; build: () => { record: LockRecord; proof: ReturnType<typeof proofOf> }; now: number }[] = [
    {
      title: 'by someone who never held it',
      now: at(1),
      build: () => ({ record: acquireAs(fresh(), LEAD, T0).record, proof: proofOf(ANA, 1) }),
    },
    {
      title: 'after the lease expired',
      now: at(2),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: h.record, proof: h.proof };
      },
    },
    {
      title: 'by a superseded holder',
      now: at(3),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: acquireAs(h.record, ANA, at(2, 1)).record, proof: h.proof };
      },
    },
    {
      title: 'after an operator clear',
      now: at(3),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: ok(clear(h.record, SETTINGS, { identity: OP, reason: 'gone' }, at(2, 1))).record, proof: h.proof };
      },
    },
    {
      title: 'twice',
      now: at(1, 1),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: ok(release(h.record, h.proof, at(1))).record, proof: h.proof };
      },
    },
  ];
  for (const r of refusals) {
    it(`is refused ${r.title} (lease lost, nothing written)`, () => {
      const { record, proof } = r.build();
      leaseLost(release(record, proof, r.now), proof.grant);
    });
  }
});

/** LEAD held grant #1 and went silent; the caution mark comes from a clear by OP or a takeover by ANA. */
function cautioned(how: 'clear' | 'takeover'): { record: LockRecord; proof: ReturnType<typeof proofOf> } {
  const held = acquireAs(fresh(), LEAD, T0);
  if (how === 'takeover') return acquireAs(held.record, ANA, at(3));
  const cleared = ok(clear(held.record, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).record;
  return acquireAs(cleared, ANA, at(3, 1));
}

describe('lockRecord: release and the caution mark (seed 001: until a push and release restore it)', () => {
  for (const how of ['clear', 'takeover'] as const) {
    it(`after a ${how}: a release with nothing landed keeps the mark; the next release with a landing ends it`, () => {
      const { record: start, proof } = cautioned(how);
      const mark = start.caution;
      assert.deepEqual(mark && [mark.silentGrant, mark.by], [1, how === 'clear' ? OP : ANA]);
      assert.equal(liftsCaution(start, undefined), false);
      assert.equal(liftsCaution(start, 'abc1234'), true);

      const empty = ok(release(start, proof, at(4)));
      assert.deepEqual(empty.record.caution, mark, 'nothing landed: the copy is not restored');
      assert.deepEqual(empty.value.caution, mark);
      assert.equal(lastAudit(empty.record).detail, 'nothing landed');

      // The mark outlives that grant; BEN's release with a landing ends it.
      const ben = acquireAs(empty.record, BEN, at(5));
      assert.deepEqual(ben.record.caution, mark);
      const landed = ok(release(ben.record, ben.proof, at(6), { landed: 'abc1234def56' }));
      assert.equal(landed.record.caution, null);
      assert.equal(landed.value.caution, null);
      assert.equal(lastAudit(landed.record).detail, 'landed abc1234def56');
    });
  }

  it('a release with a landing and no mark leaves no mark; liftsCaution is false without one', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    assert.equal(liftsCaution(held.record, 'abc1234'), false);
    assert.equal(ok(release(held.record, held.proof, at(1), { landed: 'abc1234' })).record.caution, null);
  });

  it('only a holder of a grant later than the silent one lifts the mark', () => {
    // Not reachable through the transitions (a mark names a grant that has ended); the rule holds anyway.
    const held = acquireAs(fresh(), LEAD, T0);
    const marked: LockRecord = { ...held.record, caution: { silentGrant: 1, since: T0, by: OP } };
    assert.equal(liftsCaution(marked, 'abc1234'), false);
    assert.deepEqual(ok(release(marked, held.proof, at(1), { landed: 'abc1234' })).record.caution, marked.caution);
  });
});
