import * as assert from 'node:assert/strict';
import { assign, clear, markDone, MAX_BLOCK_LENGTH, release } from '../../src/core/lockRecord';
import type { RefusalReason } from '../../src/core/errors';
import { ANA, BEN, LEAD, OP, SETTINGS, T0, acquireAs, at, fresh, lastAudit, ok, proofOf, refusedWith } from '../helpers/lockRecordFixture';

describe('lockRecord: assign', () => {
  it('records blocks for coworkers in order under the grant, with an audit line', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const a = ok(assign(held.record, held.proof, { newIdentity: true, to: ANA, text: 'chapter 3 tables' }, at(0, 1)));
    const b = ok(assign(a.record, held.proof, { newIdentity: true, to: BEN, text: 'figures' }, at(0, 2)));
    assert.deepEqual([a.value, b.value], [{ index: 1 }, { index: 2 }]);
    assert.deepEqual(b.record.blocks, [
      { id: 1, to: ANA, text: 'chapter 3 tables', grant: 1, at: at(0, 1) },
      { id: 2, to: BEN, text: 'figures', grant: 1, at: at(0, 2) },
    ]);
    assert.deepEqual(lastAudit(b.record), {
      at: at(0, 2),
      who: LEAD,
      action: 'assign',
      grant: 1,
      outcome: 'done',
      detail: `block 2 to ${BEN}: figures`,
      to: BEN,
    });
  });

  it('cleans the text: control characters folded, length bounded', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { record } = ok(assign(held.record, held.proof, { newIdentity: true, to: ANA, text: `a\r\nb ${'y'.repeat(1000)}` }, at(0, 1)));
    assert.ok(record.blocks[0].text.startsWith('a b '));
    assert.equal(record.blocks[0].text.length, MAX_BLOCK_LENGTH);
  });

  it('blocks survive the release, a clear and the next grant until marked done; numbers are never reused', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { record } = ok(assign(held.record, held.proof, { newIdentity: true, to: ANA, text: 'x' }, at(0, 1)));
    const released = ok(release(record, held.proof, at(1))).record;
    assert.deepEqual(released.blocks, record.blocks);
    const next = acquireAs(released, BEN, at(1, 1));
    const silent = ok(clear(next.record, SETTINGS, { identity: OP, reason: 'gone' }, at(4))).record;
    assert.deepEqual(
      silent.blocks.map(b => b.id),
      [1],
    );
    // The assignee marks it done without holding the lock; the audit line keeps what it was.
    const finished = ok(markDone(silent, { identity: ANA, block: 1 }, at(5)));
    assert.deepEqual(finished.record.blocks, []);
    assert.deepEqual(finished.value, { block: 1, to: ANA });
    assert.deepEqual(lastAudit(finished.record), {
      at: at(5),
      who: ANA,
      action: 'done',
      grant: 2,
      outcome: 'done',
      detail: `block 1 of ${ANA}: x`,
      to: ANA,
    });
    const lead = acquireAs(finished.record, LEAD, at(6));
    assert.deepEqual(ok(assign(lead.record, lead.proof, { to: ANA, text: 'y' }, at(6, 1))).value, { index: 2 });
  });

  it('the live lead may mark any block done; anyone else but the assignee is refused; unknown blocks are refused', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { record } = ok(assign(held.record, held.proof, { newIdentity: true, to: ANA, text: 'x' }, at(0, 1)));
    refusedWith(markDone(record, { identity: BEN, block: 1 }, at(0, 2)), 'not-holder');
    refusedWith(markDone(record, { identity: LEAD, block: 1, holder: held.proof }, at(3)), 'not-holder'); // the lead's lease expired
    refusedWith(markDone(record, { identity: LEAD, block: 7, holder: held.proof }, at(0, 2)), 'invalid-request');
    assert.deepEqual(ok(markDone(record, { identity: LEAD, block: 1, holder: held.proof }, at(0, 2))).record.blocks, []);
  });

  it('a block or lease for an identity the page has never seen needs newIdentity (a typo otherwise)', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { error } = refusedWith(assign(held.record, held.proof, { to: 'ana@exmaple.com', text: 'x' }, at(0, 1)), 'new-identity');
    assert.match(error.message, /ana@exmaple\.com has never appeared on this lock page.*--new-identity/);
    const first = ok(assign(held.record, held.proof, { newIdentity: true, to: ANA, text: 'x' }, at(0, 1))).record;
    // Once on the page (here: as an assignee), no confirmation is needed.
    ok(assign(first, held.proof, { to: ANA, text: 'y' }, at(0, 2)));
    ok(assign(first, held.proof, { to: LEAD, text: 'self' }, at(0, 2)));
  });

  const refusals: { title: string; proof?: ReturnType<typeof proofOf>; to?: string; text?: string; now?: number; reason: RefusalReason }[] =
    [
      { title: 'a non-holder', proof: proofOf(ANA, 1), reason: 'not-holder' },
      { title: 'an expired holder', now: at(2), reason: 'not-holder' },
      { title: 'an empty block', text: ' \n ', reason: 'invalid-request' },
      { title: 'an invalid assignee', to: 'a\u0000b', reason: 'invalid-request' },
    ];
  for (const r of refusals) {
    it(`refuses ${r.title}: '${r.reason}'`, () => {
      const held = acquireAs(fresh(), LEAD, T0);
      refusedWith(
        assign(held.record, r.proof ?? held.proof, { newIdentity: true, to: r.to ?? ANA, text: r.text ?? 'work' }, r.now ?? at(1)),
        r.reason,
      );
    });
  }
});
