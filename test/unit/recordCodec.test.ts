import * as assert from 'node:assert/strict';
import { exitCodeFor, LockErrorCode, LockStorageError } from '../../src/core/errors';
import { clear, leaseIds, nextId, petition, type LockRecord } from '../../src/core/lockRecord';
import { parseRecord } from '../../src/core/recordCodec';
import { ANA, BEN, CONTAINER, LEAD, OP, SETTINGS, T0, acquireAs, at, fresh, hex, ok } from '../helpers/lockRecordFixture';

/**
 * A record with every part filled: holder, queue, a half-used range (1-2, 1 minted), the pool (3),
 * nextId 4, a caution mark (grant #1 was cleared), blocks, audit lines.
 */
function fullRecord(): Record<string, unknown> {
  const first = acquireAs(fresh(), BEN, T0);
  const leased = ok(leaseIds(first.record, first.proof, { newIdentity: true, to: BEN, count: 3 }, at(0, 1))).record;
  const cleared = ok(clear(leased, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).record;
  const held = acquireAs(cleared, LEAD, at(3, 1));
  let record: LockRecord = ok(petition(held.record, { identity: ANA, note: 'n' }, at(3, 2))).record;
  record = ok(leaseIds(record, held.proof, { newIdentity: true, to: ANA, count: 2 }, at(3, 3))).record;
  record = ok(nextId(record, { identity: ANA }, at(3, 4))).record;
  record = {
    ...record,
    blocks: [
      { id: 1, to: ANA, text: 'b', grant: 2, at: at(3, 5) },
      { id: 3, to: BEN, text: 'c', grant: 2, at: at(3, 5) },
    ],
    lastBlock: 3,
  };
  assert.deepEqual(
    [record.ranges.map(r => [r.start, r.end, r.next]), record.pool, record.nextId, record.caution?.silentGrant],
    [[[1, 2, 2]], [{ start: 3, end: 3 }], 4, 1],
  );
  return JSON.parse(JSON.stringify(record)) as Record<string, unknown>;
}

type Damage = (r: Record<string, any>) => unknown;
const damages: { what: string; damage: Damage }[] = [
  { what: 'null', damage: () => null },
  { what: 'an array', damage: () => [] },
  { what: 'a string', damage: () => 'lock' },
  { what: 'version 2', damage: r => ({ ...r, v: 2 }) },
  {
    what: 'no version',
    damage: r => {
      delete r.v;
      return r;
    },
  },
  { what: 'another container', damage: r => ({ ...r, container: '11111111-2222-4333-8444-555555555555' }) },
  { what: 'a negative grant', damage: r => ({ ...r, grant: -1 }) },
  { what: 'a fractional grant', damage: r => ({ ...r, grant: 1.5 }) },
  { what: 'a grant as text', damage: r => ({ ...r, grant: '1' }) },
  { what: 'nextId 0', damage: r => ({ ...r, nextId: 0 }) },
  {
    what: 'no nextId',
    damage: r => {
      delete r.nextId;
      return r;
    },
  },
  { what: 'releasedAt as text', damage: r => ({ ...r, releasedAt: 'yesterday' }) },
  {
    what: 'a missing holder field',
    damage: r => {
      delete r.holder;
      return r;
    },
  },
  { what: 'a holder grant other than the record grant', damage: r => ({ ...r, holder: { ...r.holder, grant: 7 } }) },
  { what: 'a holder token hash that is not 64 hex', damage: r => ({ ...r, holder: { ...r.holder, tokenHash: 'abc' } }) },
  {
    what: 'a holder token hash in upper case',
    damage: r => ({ ...r, holder: { ...r.holder, tokenHash: (r.holder.tokenHash as string).toUpperCase() } }),
  },
  {
    what: 'a holder without proof hash',
    damage: r => {
      delete r.holder.proofHash;
      return r;
    },
  },
  { what: 'a holder with an empty identity', damage: r => ({ ...r, holder: { ...r.holder, identity: '' } }) },
  { what: 'a holder with an infinite expiry', damage: r => ({ ...r, holder: { ...r.holder, expiresAt: 'Infinity' } }) },
  { what: 'a queue that is an object', damage: r => ({ ...r, queue: {} }) },
  { what: 'a queue entry without identity', damage: r => ({ ...r, queue: [{ at: T0 }] }) },
  { what: 'a person queued twice', damage: r => ({ ...r, queue: [...r.queue, r.queue[0]] }) },
  { what: 'a range whose next is below its start', damage: r => ({ ...r, ranges: [{ ...r.ranges[0], next: 0 }] }) },
  { what: 'a range whose next is past end + 1', damage: r => ({ ...r, ranges: [{ ...r.ranges[0], next: 7 }] }) },
  { what: 'a range reaching nextId (would be reissued)', damage: r => ({ ...r, ranges: [{ ...r.ranges[0], end: r.nextId }] }) },
  { what: 'a range without lessee', damage: r => ({ ...r, ranges: [{ ...r.ranges[0], to: '' }] }) },
  { what: 'a pool reaching nextId (would be reissued)', damage: r => ({ ...r, pool: [{ start: 3, end: r.nextId }] }) },
  { what: 'a pool past nextId', damage: r => ({ ...r, pool: [{ start: r.nextId + 1, end: r.nextId + 2 }] }) },
  {
    what: 'overlapping pool spans',
    damage: r => ({
      ...r,
      nextId: 10,
      pool: [
        { start: 3, end: 6 },
        { start: 5, end: 8 },
      ],
    }),
  },
  {
    what: 'pool spans out of order',
    damage: r => ({
      ...r,
      nextId: 10,
      pool: [
        { start: 7, end: 8 },
        { start: 3, end: 4 },
      ],
    }),
  },
  { what: 'a pool span ending before it starts', damage: r => ({ ...r, pool: [{ start: 3, end: 2 }] }) },
  { what: 'a pool of identifier 0', damage: r => ({ ...r, pool: [{ start: 0, end: 0 }] }) },
  { what: 'a range overlapping the pool (its unused part)', damage: r => ({ ...r, pool: [{ start: 2, end: 3 }] }) },
  {
    what: 'a range overlapping the pool (its minted part)',
    damage: r => ({
      ...r,
      pool: [
        { start: 1, end: 1 },
        { start: 3, end: 3 },
      ],
    }),
  },
  { what: 'two ranges overlapping', damage: r => ({ ...r, ranges: [r.ranges[0], { ...r.ranges[0], to: BEN, start: 2, next: 2 }] }) },
  { what: 'a negative caution grant', damage: r => ({ ...r, caution: { ...r.caution, silentGrant: -1 } }) },
  { what: 'a fractional caution grant', damage: r => ({ ...r, caution: { ...r.caution, silentGrant: 1.5 } }) },
  { what: "a caution grant past the record's grant", damage: r => ({ ...r, caution: { ...r.caution, silentGrant: r.grant + 1 } }) },
  { what: 'a caution time as text', damage: r => ({ ...r, caution: { ...r.caution, since: 'now' } }) },
  { what: 'a negative caution time', damage: r => ({ ...r, caution: { ...r.caution, since: -1 } }) },
  { what: 'a caution mark by no one', damage: r => ({ ...r, caution: { ...r.caution, by: '' } }) },
  { what: 'a caution mark that is not an object', damage: r => ({ ...r, caution: 1 }) },
  {
    what: 'blocks missing',
    damage: r => {
      delete r.blocks;
      return r;
    },
  },
  { what: 'a negative block number', damage: r => ({ ...r, blocks: [{ ...r.blocks[0], id: -1 }] }) },
  { what: 'a fractional block number', damage: r => ({ ...r, blocks: [{ ...r.blocks[0], id: 1.5 }] }) },
  { what: 'block number 0', damage: r => ({ ...r, blocks: [{ ...r.blocks[0], id: 0 }] }) },
  { what: 'two blocks with one number', damage: r => ({ ...r, blocks: [r.blocks[0], { ...r.blocks[1], id: 1 }] }) },
  { what: 'a block numbered past the last block number', damage: r => ({ ...r, lastBlock: 2 }) },
  { what: 'a negative last block number', damage: r => ({ ...r, lastBlock: -1 }) },
  { what: 'a block without text', damage: r => ({ ...r, blocks: [{ to: ANA, grant: 1, at: T0 }] }) },
  { what: 'an audit line without time', damage: r => ({ ...r, audit: [{ who: LEAD, action: 'acquire' }] }) },
  { what: 'audit as text', damage: r => ({ ...r, audit: 'lost' }) },
  { what: "a holder's lease length below 1 s", damage: r => ({ ...r, holder: { ...r.holder, ttlMs: 500 } }) },
  { what: "a holder's lease length of 0", damage: r => ({ ...r, holder: { ...r.holder, ttlMs: 0 } }) },
  { what: "a holder's lease length past 24 h", damage: r => ({ ...r, holder: { ...r.holder, ttlMs: 25 * 3_600_000 } }) },
  { what: "a holder's lease length 1 ms past 24 h", damage: r => ({ ...r, holder: { ...r.holder, ttlMs: 86_400_001 } }) },
  { what: "a holder's fractional lease length", damage: r => ({ ...r, holder: { ...r.holder, ttlMs: 60_000.5 } }) },
  { what: "a holder's lease length as text", damage: r => ({ ...r, holder: { ...r.holder, ttlMs: '60000' } }) },
];

describe('recordCodec: parseRecord', () => {
  it('accepts an empty record and a full one, returning it unchanged', () => {
    assert.deepEqual(parseRecord(JSON.parse(JSON.stringify(fresh())), 'file', CONTAINER, SETTINGS), fresh());
    const full = fullRecord();
    assert.deepEqual(parseRecord(structuredClone(full), 'file', CONTAINER, SETTINGS), full);
  });

  it("reads a holder written before grants kept their TTL with the container's lease length", () => {
    const full = fullRecord();
    const { ttlMs, ...older } = full.holder as Record<string, unknown>;
    assert.equal(ttlMs, SETTINGS.leaseTtlMs);
    const read = parseRecord({ ...structuredClone(full), holder: older }, 'file', CONTAINER, { leaseTtlMs: 45 * 60_000 });
    assert.equal(read.holder?.ttlMs, 45 * 60_000);
    assert.deepEqual({ ...read, holder: { ...read.holder, ttlMs } }, full);
  });

  it('reads a holder stored before the 60 s floor (a 1 s to 59 s grant) as stored: the page stays readable and that lease runs out on its own', () => {
    const full = fullRecord();
    for (const ttlMs of [1_000, 5_000, 59_999]) {
      const older = { ...structuredClone(full), holder: { ...(full.holder as object), ttlMs } };
      assert.equal(parseRecord(older, 'file', CONTAINER, SETTINGS).holder?.ttlMs, ttlMs);
    }
    const floor = { ...structuredClone(full), holder: { ...(full.holder as object), ttlMs: 60_000 } };
    assert.equal(parseRecord(floor, 'file', CONTAINER, SETTINGS).holder?.ttlMs, 60_000);
    const cap = { ...structuredClone(full), holder: { ...(full.holder as object), ttlMs: 86_400_000 } };
    assert.equal(parseRecord(cap, 'file', CONTAINER, SETTINGS).holder?.ttlMs, 86_400_000);
  });

  for (const d of damages) {
    it(`rejects ${d.what} with LockStorageError (exit 5), never reading it as free`, () => {
      const full = fullRecord();
      const secrets = [(full.holder as { tokenHash: string }).tokenHash, (full.holder as { proofHash: string }).proofHash, hex('token')];
      const damaged = d.damage(structuredClone(full));
      let caught: unknown;
      try {
        parseRecord(damaged, 'redis', CONTAINER, SETTINGS);
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
