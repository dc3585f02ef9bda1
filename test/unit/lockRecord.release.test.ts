import * as assert from 'node:assert/strict';
import { clear, leaseIds, nextId, petition, release, turnAt, type LockRecord } from '../../src/core/lockRecord';
import {
  ANA, BEN, LEAD, OP, SETTINGS, T0, acquireAs, at, fresh, lastAudit, leaseLost, ok, proofOf,
} from '../helpers/lockRecordFixture';

describe('lockRecord: release', () => {
  it('frees the lock, keeps the grant counter and opens the handover window', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const withQueue = ok(petition(held.record, { identity: ANA }, at(0, 5))).record;
    const { record, value } = ok(release(withQueue, held.proof, at(1)));
    assert.deepEqual(value, { grant: 1, reclaimed: 0 });
    assert.equal(record.holder, null);
    assert.equal(record.grant, 1);
    assert.equal(record.releasedAt, at(1));
    assert.deepEqual(turnAt(record, SETTINGS, at(1)).eligible, [ANA]);
    assert.deepEqual(lastAudit(record), { at: at(1), who: LEAD, action: 'release', grant: 1, outcome: 'done' });
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
    assert.equal(lastAudit(released).detail, 'reclaimed 12 unused identifiers');
  });

  const refusals: { title: string; build: () => { record: LockRecord; proof: ReturnType<typeof proofOf> }; now: number }[] = [
    { title: 'by someone who never held it', now: at(1), build: () => ({ record: acquireAs(fresh(), LEAD, T0).record, proof: proofOf(ANA, 1) }) },
    { title: 'after the lease expired', now: at(2), build: () => { const h = acquireAs(fresh(), LEAD, T0); return { record: h.record, proof: h.proof }; } },
    { title: 'by a superseded holder', now: at(3), build: () => { const h = acquireAs(fresh(), LEAD, T0); return { record: acquireAs(h.record, ANA, at(2, 1)).record, proof: h.proof }; } },
    { title: 'after an operator clear', now: at(3), build: () => { const h = acquireAs(fresh(), LEAD, T0); return { record: ok(clear(h.record, SETTINGS, { identity: OP, reason: 'gone' }, at(2, 1))).record, proof: h.proof }; } },
    { title: 'twice', now: at(1, 1), build: () => { const h = acquireAs(fresh(), LEAD, T0); return { record: ok(release(h.record, h.proof, at(1))).record, proof: h.proof }; } },
  ];
  for (const r of refusals) {
    it(`is refused ${r.title} (lease lost, nothing written)`, () => {
      const { record, proof } = r.build();
      leaseLost(release(record, proof, r.now), proof.grant);
    });
  }
});
