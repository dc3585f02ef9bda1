import * as assert from 'node:assert/strict';
import { checkRecordUpdate, DEFAULT_SKEW_MS, provesHolder, type RecordUpdateContext } from '../../src/core/chain/recordUpdate';
import * as protocol from '../../src/core/lockRecord';
import type { AuditLine, LockRecord } from '../../src/core/lockRecord';
import { hashProof, hashToken, pushProof } from '../../src/core/tokens';
import { ANA, at, BEN, CONTAINER, fresh, hex, LEAD, ok, OP, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * The edges of the server's check of a lock-record update (recordUpdate.ts): each way an update can
 * fail to be a transition is refused with its own sentence, the request is inferred from the right
 * part of the record (the new range, the new block, the closed block, the petitioner's own note),
 * and a holder-only step needs exactly the holder's grant and proof.
 */

const token = (who: string, grant: number) => hex(`owner:${who}:${grant}`);
const proofFor = (who: string, grant: number) => pushProof(token(who, grant), CONTAINER, grant);

function acquired(record: LockRecord, who: string, now: number): LockRecord {
  const grant = record.grant + 1;
  const request = { identity: who, tokenHash: hashToken(token(who, grant)), proofHash: hashProof(proofFor(who, grant)) };
  return ok(protocol.acquire(record, SETTINGS, request, now)).record;
}
const holderProof = (record: LockRecord) => ({
  identity: record.holder!.identity,
  tokenHash: record.holder!.tokenHash,
  grant: record.holder!.grant,
});
const context = (now: number, extra: Partial<RecordUpdateContext> = {}): RecordUpdateContext => ({
  settings: SETTINGS,
  now,
  skewMs: DEFAULT_SKEW_MS,
  requireProof: true,
  pushed: {},
  ...extra,
});
const withProof = (who: string, grant: number) => ({ pushed: { grant, proof: proofFor(who, grant) } });
/** `record` with one more audit line, and nothing else changed: what a forger writes. */
const plusLine = (record: LockRecord, line: Omit<AuditLine, 'outcome'>): LockRecord => ({
  ...record,
  audit: [...record.audit, { outcome: 'done', ...line }],
});

describe('server guard: lock-record update edges', () => {
  const t = at(1);
  const held = acquired(fresh(), LEAD, at(0));
  const lead = holderProof(held);

  it("says how far a transition is from the server's clock and how far it may be", () => {
    const asked = ok(protocol.petition(held, { identity: ANA }, t)).record;
    assert.equal(
      checkRecordUpdate(held, asked, context(t + 3 * DEFAULT_SKEW_MS)),
      "the transition is dated -360 s from the server's clock, more than the 120 s allowed; check the clock of the machine that wrote it.",
    );
  });

  it('a transition that is no transition at that time (its request would change nothing) is refused, not a failure of the guard', () => {
    const beat = ok(protocol.heartbeat(held, SETTINGS, lead, t)).record;
    const late = at(3); // the 2 h lease ended at hour 2: a heartbeat then is a lost lease and writes nothing
    const redated = { ...beat, audit: beat.audit.map((l, i) => (i === beat.audit.length - 1 ? { ...l, at: late } : l)) };
    assert.equal(
      checkRecordUpdate(held, redated, context(late, withProof(LEAD, 1))),
      'the new record is not what heartbeat by lead@example.com at that time would write, byte for byte.',
    );
  });

  it('a holder-only step when no one holds the lock', () => {
    const released = ok(protocol.release(held, lead, t)).record;
    assert.equal(
      checkRecordUpdate(released, plusLine(released, { at: t, who: LEAD, action: 'heartbeat', grant: 1 }), context(t)),
      'no one holds the lock, so there is no holder to act.',
    );
  });

  it('an acquire that names no holder, or another holder than the acquirer', () => {
    const released = ok(protocol.release(held, lead, t)).record;
    const taken = acquired(released, ANA, t);
    const why = 'an acquire must name the acquirer as the holder.';
    assert.equal(checkRecordUpdate(released, { ...taken, holder: null }, context(t)), why);
    const byBen = { ...taken, audit: taken.audit.map((l, i) => (i === taken.audit.length - 1 ? { ...l, who: BEN } : l)) };
    assert.equal(checkRecordUpdate(released, byBen, context(t)), why);
  });

  it("a petition is read with the petitioner's own note, not another's in the queue; one that queues no one is refused", () => {
    const benAsked = ok(protocol.petition(held, { identity: BEN, note: 'the build' }, t)).record;
    const anaAsked = ok(protocol.petition(benAsked, { identity: ANA, note: 'the parser' }, t)).record;
    assert.equal(checkRecordUpdate(benAsked, anaAsked, context(t)), undefined);
    const plain = ok(protocol.petition(benAsked, { identity: ANA }, t)).record;
    assert.equal(checkRecordUpdate(benAsked, plain, context(t)), undefined);
    assert.match(
      checkRecordUpdate(held, plusLine(held, { at: t, who: ANA, action: 'petition', grant: 1 }), context(t)) ?? '',
      /not what petition by ana@example\.com/,
    );
  });

  it('a second lease of identifiers is read from the range it adds; a lease line that adds none is refused', () => {
    const ctx = context(t, withProof(LEAD, 1));
    const first = ok(protocol.leaseIds(held, lead, { to: ANA, count: 3, newIdentity: true }, t)).record;
    const second = ok(protocol.leaseIds(first, lead, { to: BEN, count: 2, newIdentity: true }, t)).record;
    assert.equal(checkRecordUpdate(first, second, ctx), undefined);
    assert.equal(
      checkRecordUpdate(first, plusLine(first, { at: t, who: LEAD, action: 'lease-ids', grant: 1 }), ctx),
      'a lease of identifiers must add a range.',
    );
  });

  describe('next-id: a lessee mints from its own range without proof; only the proving lead mints from the pool', () => {
    const leased = ok(protocol.leaseIds(held, lead, { to: ANA, count: 3, newIdentity: true }, t)).record;

    it('a lessee that writes a mint from the pool is refused as what its own mint would not write', () => {
      const fromPool = ok(protocol.nextId(leased, { identity: LEAD, holder: lead }, t)).record;
      const asAna = {
        ...fromPool,
        audit: fromPool.audit.map((l, i) => (i === fromPool.audit.length - 1 ? { ...l, who: ANA } : l)),
      };
      assert.match(checkRecordUpdate(leased, asAna, context(t)) ?? '', /not what next-id by ana@example\.com/);
    });

    it("a mint written when no one holds the lock is read as a lessee's, and refused when the lessee has nothing to mint", () => {
      const released = ok(protocol.release(leased, lead, t)).record; // the release took ana's unused identifiers back
      assert.match(
        checkRecordUpdate(released, plusLine(released, { at: t, who: ANA, action: 'next-id', grant: 1, detail: '2' }), context(t)) ?? '',
        /not what next-id by ana@example\.com/,
      );
    });

    it('the lead mints from a range leased to itself without proof, as any lessee', () => {
      const own = ok(protocol.leaseIds(held, lead, { to: LEAD, count: 3 }, t)).record;
      const minted = ok(protocol.nextId(own, { identity: LEAD }, t)).record;
      assert.equal(minted.nextId, own.nextId, 'from the range, not the pool');
      assert.equal(checkRecordUpdate(own, minted, context(t)), undefined);
    });
  });

  it('an assignment that adds no block is refused', () => {
    assert.equal(
      checkRecordUpdate(held, plusLine(held, { at: t, who: LEAD, action: 'assign', grant: 1 }), context(t, withProof(LEAD, 1))),
      'an assignment must add a block.',
    );
  });

  it('done is read from the block it closes (of several), and a done line that closes none is refused', () => {
    const one = ok(protocol.assign(held, lead, { to: ANA, text: 'parser', newIdentity: true }, t)).record;
    const two = ok(protocol.assign(one, lead, { to: BEN, text: 'lexer', newIdentity: true }, t)).record;
    const closed = ok(protocol.markDone(two, { identity: BEN, block: two.blocks[1].id }, t)).record;
    assert.equal(checkRecordUpdate(two, closed, context(t)), undefined, 'ben closes his own block, the second, without proof');
    assert.equal(
      checkRecordUpdate(two, plusLine(two, { at: t, who: BEN, action: 'done', grant: 1 }), context(t)),
      'marking a block done must close a block.',
    );
  });

  it('an adopt over an existing page is refused as a second creation', () => {
    const adopted = ok(protocol.adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'lost', grantFloor: 1, nextIdFloor: 1 }, t)).record;
    assert.equal(
      checkRecordUpdate(held, { ...held, audit: [...held.audit, adopted.audit.at(-1)!] }, context(t)),
      'the lock page exists already; it is created once.',
    );
  });

  it("an operator's refused clear of a free lock is accepted as audited", () => {
    const released = ok(protocol.release(held, lead, t)).record;
    const attempt = protocol.clear(released, SETTINGS, { identity: OP, reason: 'stale' }, t);
    assert.ok(!attempt.ok && attempt.record);
    assert.equal(checkRecordUpdate(released, attempt.record!, context(t)), undefined);
  });

  describe('provesHolder: the push carries the proof of exactly the current grant', () => {
    it('only with the holder, its grant and its proof', () => {
      assert.equal(provesHolder(held, { grant: 1, proof: proofFor(LEAD, 1) }), true, 'control');
      assert.equal(provesHolder(ok(protocol.release(held, lead, t)).record, { grant: 1, proof: proofFor(LEAD, 1) }), false, 'no holder');
      assert.equal(provesHolder(held, { grant: 2, proof: proofFor(LEAD, 1) }), false, 'another grant beside the right proof');
      assert.equal(provesHolder(held, { proof: proofFor(LEAD, 1) }), false, 'no grant');
      assert.equal(provesHolder(held, { grant: 1 }), false, 'no proof');
      assert.equal(provesHolder(held, { grant: 1, proof: proofFor(LEAD, 1).toUpperCase() }), false, 'not lower-case hex');
    });
  });
});
