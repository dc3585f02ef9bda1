import * as assert from 'node:assert/strict';
import { MAX_NOTE_LENGTH, petition, withdraw, type LockRecord } from '../../src/core/lockRecord';
import type { RefusalReason } from '../../src/core/errors';
import { ANA, BEN, CYD, LEAD, T0, acquireAs, at, fresh, lastAudit, ok, refusedWith } from '../helpers/lockRecordFixture';

const heldByLead = () => acquireAs(fresh(), LEAD, T0).record;
const withAna = () => ok(petition(heldByLead(), { identity: ANA }, at(0, 1))).record;

describe('lockRecord: petition', () => {
  it('appends to the queue, returns the position and audits it under the current grant', () => {
    const { record, value } = ok(petition(heldByLead(), { identity: ANA, note: 'parser rewrite' }, at(0, 1)));
    assert.deepEqual(value, { position: 1 });
    assert.deepEqual(record.queue, [{ identity: ANA, at: at(0, 1), note: 'parser rewrite' }]);
    assert.deepEqual(lastAudit(record), {
      at: at(0, 1),
      who: ANA,
      action: 'petition',
      grant: 1,
      outcome: 'done',
      detail: 'parser rewrite',
    });
  });

  it('keeps the order in which petitions were recorded, whatever their names', () => {
    let record = heldByLead();
    const order = [CYD, ANA, BEN];
    order.forEach((identity, i) => {
      const { record: next, value } = ok(petition(record, { identity }, at(0, i + 1)));
      assert.equal(value.position, i + 1);
      record = next;
    });
    assert.deepEqual(
      record.queue.map(p => p.identity),
      order,
    );
  });

  it('folds control characters and whitespace in the note and bounds its length', () => {
    const { record } = ok(petition(heldByLead(), { identity: ANA, note: ` a\n\tb\u0007c ${'x'.repeat(500)}` }, at(0, 1)));
    const note = record.queue[0].note!;
    assert.ok(note.startsWith('a b c '));
    assert.equal(note.length, MAX_NOTE_LENGTH);
  });

  it('an empty note is left out', () => {
    const { record } = ok(petition(heldByLead(), { identity: ANA, note: '  ' }, at(0, 1)));
    assert.deepEqual(record.queue[0], { identity: ANA, at: at(0, 1) });
  });

  it('is allowed while the lock is free and while the holder is silent (even for that holder)', () => {
    ok(petition(fresh(), { identity: ANA }, T0));
    ok(petition(heldByLead(), { identity: LEAD }, at(2)));
  });

  const refusals: { title: string; record: () => LockRecord; who: string; now: number; reason: RefusalReason }[] = [
    { title: 'the live holder', record: heldByLead, who: LEAD, now: at(1), reason: 'holder-cannot-petition' },
    { title: 'a second petition by the same person', record: withAna, who: ANA, now: at(0, 2), reason: 'already-queued' },
    { title: 'an empty identity', record: heldByLead, who: '', now: at(1), reason: 'invalid-request' },
  ];
  for (const r of refusals) {
    it(`refuses ${r.title}: '${r.reason}'`, () => {
      const { error, record } = refusedWith(petition(r.record(), { identity: r.who }, r.now), r.reason);
      assert.equal(record, undefined);
      if (r.reason === 'already-queued') assert.match(error.message, /position 1/);
    });
  }
});

describe('lockRecord: withdraw', () => {
  it('removes only the caller, keeps the others in order, returns the former position', () => {
    let record = heldByLead();
    for (const identity of [ANA, BEN, CYD]) record = ok(petition(record, { identity }, at(0, 1))).record;
    const { record: next, value } = ok(withdraw(record, { identity: BEN }, at(0, 2)));
    assert.deepEqual(value, { position: 2 });
    assert.deepEqual(
      next.queue.map(p => p.identity),
      [ANA, CYD],
    );
    assert.deepEqual(lastAudit(next), { at: at(0, 2), who: BEN, action: 'withdraw', grant: 1, outcome: 'done' });
  });

  it('a withdrawn person may petition again and goes to the back', () => {
    let record = heldByLead();
    for (const identity of [ANA, BEN]) record = ok(petition(record, { identity }, at(0, 1))).record;
    record = ok(withdraw(record, { identity: ANA }, at(0, 2))).record;
    record = ok(petition(record, { identity: ANA }, at(0, 3))).record;
    assert.deepEqual(
      record.queue.map(p => p.identity),
      [BEN, ANA],
    );
  });

  it("refuses someone not in the queue: 'not-queued'", () => {
    refusedWith(withdraw(withAna(), { identity: BEN }, at(0, 2)), 'not-queued');
    refusedWith(withdraw(fresh(), { identity: ANA }, T0), 'not-queued');
  });
});
