import * as assert from 'node:assert/strict';
import { LockStorageError } from '../../src/core/errors';
import { encodeRecord, parseRecord } from '../../src/core/recordCodec';
import { ANA, BEN, CONTAINER, LEAD, SETTINGS, T0, acquireAs, fresh, hex } from '../helpers/lockRecordFixture';

/**
 * The edges of parseRecord that a whole, consistent record cannot reach (found by mutation testing, docs/mutation.md):
 * each damage here is alone on an otherwise valid record, so no other check catches it first; and the fields that
 * older records lack are filled in.
 */
const base = (): Record<string, any> => JSON.parse(JSON.stringify(fresh())) as Record<string, any>;
const read = (value: unknown) => parseRecord(value, 'file', CONTAINER, SETTINGS);
const rejects = (value: unknown, what: RegExp) =>
  assert.throws(
    () => read(value),
    (e: unknown) => e instanceof LockStorageError && what.test(e.message),
  );
const held = (): Record<string, any> => JSON.parse(JSON.stringify(acquireAs(fresh(), LEAD, T0).record)) as Record<string, any>;

describe('recordCodec: encodeRecord', () => {
  it("is the record's JSON, which parseRecord reads back unchanged", () => {
    const record = acquireAs(fresh(), LEAD, T0).record;
    const bytes = encodeRecord(record);
    assert.equal(bytes, JSON.stringify(record));
    assert.deepEqual(read(JSON.parse(bytes)), record);
  });
});

describe('recordCodec: each damage alone on a record without a holder', () => {
  for (const grant of [-1, 1.5, '1', null]) {
    it(`rejects grant ${JSON.stringify(grant)}`, () => rejects({ ...base(), grant }, /\(grant\)/));
  }
  for (const nextId of [0, -1, 1.5, '1']) {
    it(`rejects nextId ${JSON.stringify(nextId)}`, () => rejects({ ...base(), nextId }, /next identifier/));
  }
  it('a release time of 0 is a time; Infinity and -1 are not', () => {
    assert.equal(read({ ...base(), releasedAt: 0 }).releasedAt, 0);
    rejects({ ...base(), releasedAt: Infinity }, /release time/);
    rejects({ ...base(), releasedAt: Number.NaN }, /release time/);
    rejects({ ...base(), releasedAt: -1 }, /release time/);
  });
  it('a range must end below nextId: end = nextId - 1 is fine, end = nextId is not', () => {
    const range = { to: ANA, start: 1, end: 2, next: 1, grant: 1 };
    assert.equal(read({ ...base(), nextId: 3, ranges: [range] }).ranges.length, 1);
    rejects({ ...base(), nextId: 2, ranges: [range] }, /identifier ranges/);
  });
  it('two different people queued is a queue, not a person queued twice', () => {
    assert.equal(
      read({
        ...base(),
        queue: [
          { identity: ANA, at: T0 },
          { identity: BEN, at: T0 },
        ],
      }).queue.length,
      2,
    );
  });
  it('a range whose every identifier was minted (next = end + 1) is whole', () => {
    assert.equal(read({ ...base(), nextId: 3, ranges: [{ to: ANA, start: 1, end: 2, next: 3, grant: 1 }] }).ranges[0].next, 3);
  });
  it('a block needs a recipient', () => {
    rejects({ ...base(), blocks: [{ id: 1, to: '', text: 't', grant: 1, at: T0 }], lastBlock: 1 }, /blocks/);
  });
  it('an audit line needs who and what as text, and a since that is a time', () => {
    const line = { at: T0, who: LEAD, action: 'acquire' };
    assert.equal(read({ ...base(), audit: [{ ...line, since: T0 }] }).audit.length, 1);
    rejects({ ...base(), audit: [{ ...line, who: 5 }] }, /audit/);
    rejects({ ...base(), audit: [{ ...line, action: null }] }, /audit/);
    rejects({ ...base(), audit: [{ ...line, since: 'then' }] }, /audit/);
  });
  it('a pool span needs whole numbers at both ends', () => {
    rejects({ ...base(), nextId: 10, pool: [{ start: '3', end: 4 }] }, /identifier pool/);
    rejects({ ...base(), nextId: 10, pool: [{ start: 3, end: '4' }] }, /identifier pool/);
    rejects({ ...base(), nextId: 10, pool: ['3-4'] }, /identifier pool/);
  });
  it('pool spans are apart: 3-4 then 6-7 is a pool, 3-4 then 5-6 (which should be one span) is damage', () => {
    assert.deepEqual(
      read({
        ...base(),
        nextId: 10,
        pool: [
          { start: 3, end: 4 },
          { start: 6, end: 7 },
        ],
      }).pool,
      [
        { start: 3, end: 4 },
        { start: 6, end: 7 },
      ],
    );
    rejects(
      {
        ...base(),
        nextId: 10,
        pool: [
          { start: 3, end: 4 },
          { start: 5, end: 6 },
        ],
      },
      /identifier pool/,
    );
  });
  it('a range above the pool is no overlap, whichever is listed first', () => {
    const pool = [
      { start: 1, end: 2 },
      { start: 7, end: 8 },
    ];
    const ranges = [
      { to: BEN, start: 5, end: 5, next: 5, grant: 1 },
      { to: ANA, start: 3, end: 4, next: 3, grant: 1 },
    ];
    assert.equal(read({ ...base(), nextId: 10, ranges, pool }).ranges.length, 2);
    rejects({ ...base(), nextId: 10, ranges: [{ ...ranges[0], end: 7 }], pool }, /overlapping/);
  });
});

describe('recordCodec: records written before a field existed', () => {
  it('no pool is an empty pool', () => {
    const { pool: _, ...older } = base();
    assert.deepEqual(read(older).pool, []);
  });
  it('blocks without numbers get their place on the page, and the last block number is the highest', () => {
    const blocks = [
      { to: ANA, text: 'a', grant: 1, at: T0 },
      { to: BEN, text: 'b', grant: 1, at: T0 },
    ];
    const { lastBlock: _, ...older } = { ...base(), blocks } as Record<string, any>;
    const record = read(older);
    assert.deepEqual(
      record.blocks.map(b => b.id),
      [1, 2],
    );
    assert.equal(record.lastBlock, 2);
  });
  it('without a last block number, it is the highest block number on the page', () => {
    const blocks = [
      { id: 3, to: ANA, text: 'a', grant: 1, at: T0 },
      { id: 1, to: BEN, text: 'b', grant: 1, at: T0 },
    ];
    const { lastBlock: _, ...older } = { ...base(), blocks } as Record<string, any>;
    assert.equal(read(older).lastBlock, 3);
    const { lastBlock: __, ...none } = base();
    assert.equal(read(none).lastBlock, 0);
  });
});

describe('recordCodec: hashes are exactly 64 lowercase hex characters, as text', () => {
  it('rejects a hash in an array, with a character before or after', () => {
    const h = held();
    rejects({ ...h, holder: { ...h.holder, tokenHash: [h.holder.tokenHash] } }, /holder/);
    rejects({ ...h, holder: { ...h.holder, tokenHash: `${h.holder.tokenHash}0` } }, /holder/);
    rejects({ ...h, holder: { ...h.holder, proofHash: `0${h.holder.proofHash}` } }, /holder/);
    assert.equal(read({ ...h, holder: { ...h.holder, tokenHash: hex('other') } }).holder?.tokenHash, hex('other'));
  });
});
