import * as assert from 'node:assert/strict';
import { exitCodeFor, LockErrorCode, LockStorageError } from '../../src/core/errors';
import { leaseIds, nextId, petition, type LockRecord } from '../../src/core/lockRecord';
import { parseRecord } from '../../src/core/recordCodec';
import { ANA, CONTAINER, LEAD, T0, acquireAs, at, fresh, hex, ok } from '../helpers/lockRecordFixture';

/** A record with every part filled: holder, queue, a half-used range, a block, audit lines. */
function fullRecord(): Record<string, unknown> {
  const held = acquireAs(fresh(), LEAD, T0);
  let record: LockRecord = ok(petition(held.record, { identity: ANA, note: 'n' }, at(0, 1))).record;
  record = ok(leaseIds(record, held.proof, { newIdentity: true, to: ANA, count: 5 }, at(0, 2))).record;
  record = ok(nextId(record, { identity: ANA }, at(0, 3))).record;
  record = { ...record, blocks: [{ id: 1, to: ANA, text: 'b', grant: 1, at: at(0, 4) }], lastBlock: 1 };
  return JSON.parse(JSON.stringify(record)) as Record<string, unknown>;
}

type Damage = (r: Record<string, any>) => unknown;
const damages: { what: string; damage: Damage }[] = [
  { what: 'null', damage: () => null },
  { what: 'an array', damage: () => [] },
  { what: 'a string', damage: () => 'lock' },
  { what: 'version 2', damage: r => ({ ...r, v: 2 }) },
  { what: 'no version', damage: r => { delete r.v; return r; } },
  { what: 'another container', damage: r => ({ ...r, container: '11111111-2222-4333-8444-555555555555' }) },
  { what: 'a negative grant', damage: r => ({ ...r, grant: -1 }) },
  { what: 'a fractional grant', damage: r => ({ ...r, grant: 1.5 }) },
  { what: 'a grant as text', damage: r => ({ ...r, grant: '1' }) },
  { what: 'nextId 0', damage: r => ({ ...r, nextId: 0 }) },
  { what: 'no nextId', damage: r => { delete r.nextId; return r; } },
  { what: 'releasedAt as text', damage: r => ({ ...r, releasedAt: 'yesterday' }) },
  { what: 'a missing holder field', damage: r => { delete r.holder; return r; } },
  { what: 'a holder grant other than the record grant', damage: r => ({ ...r, holder: { ...r.holder, grant: 7 } }) },
  { what: 'a holder token hash that is not 64 hex', damage: r => ({ ...r, holder: { ...r.holder, tokenHash: 'abc' } }) },
  { what: 'a holder token hash in upper case', damage: r => ({ ...r, holder: { ...r.holder, tokenHash: (r.holder.tokenHash as string).toUpperCase() } }) },
  { what: 'a holder without proof hash', damage: r => { delete r.holder.proofHash; return r; } },
  { what: 'a holder with an empty identity', damage: r => ({ ...r, holder: { ...r.holder, identity: '' } }) },
  { what: 'a holder with an infinite expiry', damage: r => ({ ...r, holder: { ...r.holder, expiresAt: 'Infinity' } }) },
  { what: 'a queue that is an object', damage: r => ({ ...r, queue: {} }) },
  { what: 'a queue entry without identity', damage: r => ({ ...r, queue: [{ at: T0 }] }) },
  { what: 'a person queued twice', damage: r => ({ ...r, queue: [...r.queue, r.queue[0]] }) },
  { what: 'a range whose next is below its start', damage: r => ({ ...r, ranges: [{ ...r.ranges[0], next: 0 }] }) },
  { what: 'a range whose next is past end + 1', damage: r => ({ ...r, ranges: [{ ...r.ranges[0], next: 7 }] }) },
  { what: 'a range reaching nextId (would be reissued)', damage: r => ({ ...r, ranges: [{ ...r.ranges[0], end: r.nextId }] }) },
  { what: 'a range without lessee', damage: r => ({ ...r, ranges: [{ ...r.ranges[0], to: '' }] }) },
  { what: 'blocks missing', damage: r => { delete r.blocks; return r; } },
  { what: 'a block without text', damage: r => ({ ...r, blocks: [{ to: ANA, grant: 1, at: T0 }] }) },
  { what: 'an audit line without time', damage: r => ({ ...r, audit: [{ who: LEAD, action: 'acquire' }] }) },
  { what: 'audit as text', damage: r => ({ ...r, audit: 'lost' }) },
];

describe('recordCodec: parseRecord', () => {
  it('accepts an empty record and a full one, returning it unchanged', () => {
    assert.deepEqual(parseRecord(JSON.parse(JSON.stringify(fresh())), 'file', CONTAINER), fresh());
    const full = fullRecord();
    assert.deepEqual(parseRecord(structuredClone(full), 'file', CONTAINER), full);
  });

  for (const d of damages) {
    it(`rejects ${d.what} with LockStorageError (exit 5), never reading it as free`, () => {
      const full = fullRecord();
      const secrets = [(full.holder as { tokenHash: string }).tokenHash, (full.holder as { proofHash: string }).proofHash, hex('token')];
      const damaged = d.damage(structuredClone(full));
      let caught: unknown;
      try {
        parseRecord(damaged, 'redis', CONTAINER);
      } catch (error) {
        caught = error;
      }
      assert.ok(caught instanceof LockStorageError, `expected LockStorageError, got ${String(caught)}`);
      assert.equal(caught.code, LockErrorCode.Storage);
      assert.equal(caught.driver, 'redis');
      assert.equal(exitCodeFor(caught), 5);
      assert.match(caught.message, /damaged \(.+\)/);
      assert.match(caught.message, /Restore it/);
      for (const s of [...secrets, secrets[0].toUpperCase()]) assert.equal(caught.message.includes(s), false, 'no hash in the message');
      assert.doesNotMatch(caught.message, /[0-9a-fA-F]{32}/);
    });
  }
});
