import * as assert from 'node:assert/strict';
import { assign, MAX_BLOCK_LENGTH, release } from '../../src/core/lockRecord';
import type { RefusalReason } from '../../src/core/errors';
import {
  ANA, BEN, LEAD, T0, acquireAs, at, fresh, lastAudit, ok, proofOf, refusedWith,
} from '../helpers/lockRecordFixture';

describe('lockRecord: assign', () => {
  it('records blocks for coworkers in order under the grant, with an audit line', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const a = ok(assign(held.record, held.proof, { to: ANA, text: 'chapter 3 tables' }, at(0, 1)));
    const b = ok(assign(a.record, held.proof, { to: BEN, text: 'figures' }, at(0, 2)));
    assert.deepEqual([a.value, b.value], [{ index: 1 }, { index: 2 }]);
    assert.deepEqual(b.record.blocks, [
      { to: ANA, text: 'chapter 3 tables', grant: 1, at: at(0, 1) },
      { to: BEN, text: 'figures', grant: 1, at: at(0, 2) },
    ]);
    assert.deepEqual(lastAudit(b.record), { at: at(0, 2), who: LEAD, action: 'assign', grant: 1, outcome: 'done', detail: `to ${BEN}: figures` });
  });

  it('cleans the text: control characters folded, length bounded', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { record } = ok(assign(held.record, held.proof, { to: ANA, text: `a\r\nb ${'y'.repeat(1000)}` }, at(0, 1)));
    assert.ok(record.blocks[0].text.startsWith('a b '));
    assert.equal(record.blocks[0].text.length, MAX_BLOCK_LENGTH);
  });

  it('blocks end with the grant: release drops them', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { record } = ok(assign(held.record, held.proof, { to: ANA, text: 'x' }, at(0, 1)));
    assert.deepEqual(ok(release(record, held.proof, at(1))).record.blocks, []);
  });

  const refusals: { title: string; proof?: ReturnType<typeof proofOf>; to?: string; text?: string; now?: number; reason: RefusalReason }[] = [
    { title: 'a non-holder', proof: proofOf(ANA, 1), reason: 'not-holder' },
    { title: 'an expired holder', now: at(2), reason: 'not-holder' },
    { title: 'an empty block', text: ' \n ', reason: 'invalid-request' },
    { title: 'an invalid assignee', to: 'a\u0000b', reason: 'invalid-request' },
  ];
  for (const r of refusals) {
    it(`refuses ${r.title}: '${r.reason}'`, () => {
      const held = acquireAs(fresh(), LEAD, T0);
      refusedWith(assign(held.record, r.proof ?? held.proof, { to: r.to ?? ANA, text: r.text ?? 'work' }, r.now ?? at(1)), r.reason);
    });
  }
});
