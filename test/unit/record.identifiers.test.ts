import * as assert from 'node:assert/strict';
import { leaseIds, MAX_IDS_PER_LEASE, nextId, release, type LockRecord } from '../../src/core/lockRecord';
import type { RefusalReason } from '../../src/core/errors';
import { ANA, BEN, LEAD, T0, acquireAs, at, fresh, lastAudit, ok, proofOf, refusedWith } from '../helpers/lockRecordFixture';

describe('lockRecord: lease-ids', () => {
  it('hands consecutive, disjoint ranges from nextId and records them under the grant', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const a = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 10 }, at(0, 1)));
    assert.deepEqual(a.value, { start: 1, end: 10, spans: [{ start: 1, end: 10 }] });
    const b = ok(leaseIds(a.record, held.proof, { newIdentity: true, to: BEN, count: 1 }, at(0, 2)));
    assert.deepEqual(b.value, { start: 11, end: 11, spans: [{ start: 11, end: 11 }] });
    assert.equal(b.record.nextId, 12);
    assert.deepEqual(b.record.ranges, [
      { to: ANA, start: 1, end: 10, next: 1, grant: 1, at: at(0, 1) },
      { to: BEN, start: 11, end: 11, next: 11, grant: 1, at: at(0, 2) },
    ]);
    assert.deepEqual(lastAudit(b.record), {
      at: at(0, 2),
      who: LEAD,
      action: 'lease-ids',
      grant: 1,
      outcome: 'done',
      detail: `11 to ${BEN}`,
      to: BEN,
    });
  });

  const refusals: {
    title: string;
    build: () => { record: LockRecord; proof: ReturnType<typeof proofOf> };
    to?: string;
    count?: number;
    now?: number;
    reason: RefusalReason;
  }[] = [
    { title: 'a non-holder', build: () => ({ record: acquireAs(fresh(), LEAD, T0).record, proof: proofOf(ANA, 1) }), reason: 'not-holder' },
    {
      title: 'an expired holder',
      now: at(2),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: h.record, proof: h.proof };
      },
      reason: 'not-holder',
    },
    {
      title: 'a count of 0',
      count: 0,
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: h.record, proof: h.proof };
      },
      reason: 'invalid-request',
    },
    {
      title: 'a fractional count',
      count: 1.5,
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: h.record, proof: h.proof };
      },
      reason: 'invalid-request',
    },
    {
      title: 'a count above the maximum',
      count: MAX_IDS_PER_LEASE + 1,
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: h.record, proof: h.proof };
      },
      reason: 'invalid-request',
    },
    {
      title: 'an invalid lessee',
      to: '',
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: h.record, proof: h.proof };
      },
      reason: 'invalid-request',
    },
  ];
  for (const r of refusals) {
    it(`refuses ${r.title}: '${r.reason}'`, () => {
      const { record, proof } = r.build();
      refusedWith(leaseIds(record, proof, { newIdentity: true, to: r.to ?? ANA, count: r.count ?? 5 }, r.now ?? at(1)), r.reason);
    });
  }

  it('accepts exactly the maximum count', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    assert.deepEqual(ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: MAX_IDS_PER_LEASE }, at(1))).value, {
      start: 1,
      end: MAX_IDS_PER_LEASE,
      spans: [{ start: 1, end: MAX_IDS_PER_LEASE }],
    });
  });
});

describe('lockRecord: next-id', () => {
  it('the lessee mints from its range in order; the lead mints from the pool after the ranges', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 3 }, at(0, 1))).record;
    const minted: number[] = [];
    for (const who of [ANA, ANA, LEAD, ANA, LEAD]) {
      const outcome =
        who === LEAD ? nextId(record, { identity: LEAD, holder: held.proof }, at(0, 2)) : nextId(record, { identity: ANA }, at(0, 2));
      const { record: next, value } = ok(outcome);
      minted.push(value.id);
      assert.equal(lastAudit(next).detail, String(value.id));
      record = next;
    }
    assert.deepEqual(minted, [1, 2, 4, 3, 5]);
    assert.equal(record.ranges[0].next, 4, "ANA's range used up");
    assert.equal(record.nextId, 6);
  });

  it("moves on to the lessee's next range when the first is used up", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 1 }, at(0, 1))).record; // 1
    record = ok(leaseIds(record, held.proof, { newIdentity: true, to: BEN, count: 1 }, at(0, 1))).record; // 2
    record = ok(leaseIds(record, held.proof, { newIdentity: true, to: ANA, count: 1 }, at(0, 1))).record; // 3
    const first = ok(nextId(record, { identity: ANA }, at(0, 2)));
    const second = ok(nextId(first.record, { identity: ANA }, at(0, 2)));
    assert.deepEqual([first.value.id, second.value.id], [1, 3]);
    refusedWith(nextId(second.record, { identity: ANA }, at(0, 3)), 'range-exhausted');
  });

  it("refuses someone without a range: 'no-range'", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const record = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 3 }, at(0, 1))).record;
    refusedWith(nextId(record, { identity: BEN }, at(0, 2)), 'no-range');
  });

  it('a range from an earlier grant is gone: no-range under the new grant', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const record = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 3 }, at(0, 1))).record;
    const next = acquireAs(record, BEN, at(2)).record;
    refusedWith(nextId(next, { identity: ANA }, at(2, 1)), 'no-range');
    assert.equal(next.nextId, 4);
  });

  it("a takeover of a silent holder returns its ranges' never-minted identifiers to the pool; minted ones never come back", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 3 }, at(0, 1))).record; // 1-3
    record = ok(nextId(record, { identity: ANA }, at(0, 2))).record; // 1
    record = ok(nextId(record, { identity: LEAD, holder: held.proof }, at(0, 3))).record; // 4
    const next = acquireAs(record, BEN, at(3)); // LEAD's 2 h lease ended at hour 2
    assert.deepEqual(next.record.ranges, []);
    assert.deepEqual(next.record.pool, [{ start: 2, end: 3 }]);
    assert.equal(next.record.nextId, 5);
    assert.match(
      lastAudit(next.record).detail ?? '',
      /^took over from lead@example\.com \(grant #1, silent since .*\); reclaimed 2 unused identifiers$/,
    );
    // BEN mints them first, then new ones: 1 and 4 are never issued again.
    const minted: number[] = [];
    let r = next.record;
    for (let i = 0; i < 3; i++) {
      const out = ok(nextId(r, { identity: BEN, holder: next.proof }, at(3, 1)));
      minted.push(out.value.id);
      r = out.record;
    }
    assert.deepEqual(minted, [2, 3, 5]);
  });

  it('an acquire after a release takes nothing back (the release did): no detail, pool unchanged', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const leased = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 3 }, at(0, 1))).record;
    const released = ok(release(leased, held.proof, at(1), { landed: 'abc1234' })).record;
    const next = acquireAs(released, BEN, at(1, 30));
    assert.deepEqual(next.record.pool, [{ start: 1, end: 3 }]);
    assert.equal(lastAudit(next.record).detail, undefined);
  });

  it('an outdated holder proof mints nothing from the pool', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    refusedWith(nextId(held.record, { identity: LEAD, holder: held.proof }, at(2)), 'no-range');
    refusedWith(nextId(held.record, { identity: LEAD, holder: proofOf(LEAD, 2) }, at(1)), 'no-range');
  });
});
