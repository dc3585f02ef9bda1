import * as assert from 'node:assert/strict';
import { HOUR, MINUTE, SECOND } from '../../src/core/clock';
import {
  acquire,
  adoptPage,
  assign,
  createPage,
  keptForever,
  liftsCaution,
  markDone,
  auditRefusedPush,
  type AuditLine,
  boundAudit,
  clear,
  heartbeat,
  knownIdentities,
  LANDED_COMMIT,
  leaseIds,
  type LockRecord,
  MAX_AUDIT_BYTES,
  MAX_AUDIT_LINES,
  MAX_HOLD_MS,
  MAX_IDENTITY_LENGTH,
  MAX_IDS_PER_LEASE,
  MAX_LEASE_TTL_MS,
  MAX_REFUSAL_BYTES,
  MAX_REFUSAL_LINES,
  MIN_LEASE_TTL_MS,
  mayAcquire,
  mergeSpans,
  nextId,
  petition,
  release,
  spansText,
  summarise,
  turnAt,
  unusedIdentifiers,
} from '../../src/core/lockRecord';
import {
  ANA,
  BEN,
  CONTAINER,
  CYD,
  LEAD,
  OP,
  SETTINGS,
  T0,
  acquireAs,
  at,
  fresh,
  hex,
  lastAudit,
  leaseLost,
  ok,
  proofOf,
  refusedWith,
} from '../helpers/lockRecordFixture';

/**
 * The record's bounds on both sides and the rules no other test pinned down (issue #27, mutation
 * testing): the audit trail's two budgets at their limits, folding, a refused push's stand-ins, the
 * identity's length, the identifier pool's arithmetic, the handover windows at their edges, the
 * lease length at its limits and the takeover's audit line.
 */

/** An audit line of exactly `bytes` bytes in the budget (its JSON in UTF-8 plus a separator). */
function lineOf(bytes: number, i: number, outcome: 'done' | 'refused', action: AuditLine['action'] = 'petition'): AuditLine {
  const bare: AuditLine = { at: T0 + i, who: `p${i}@x`, action, grant: 1, outcome, detail: '' };
  const pad = bytes - (Buffer.byteLength(JSON.stringify(bare)) + 1);
  assert.ok(pad >= 0, `a line of ${bytes} bytes`);
  return { ...bare, detail: 'd'.repeat(pad) };
}

/** `n` lines of `size` bytes whose sizes add up to `total` (the first one takes the rest). */
function linesSumming(total: number, n: number, size: number, outcome: 'done' | 'refused'): AuditLine[] {
  return Array.from({ length: n }, (_, i) => lineOf(i === 0 ? total - (n - 1) * size : size, i, outcome));
}

describe('record: the audit trail at its limits', () => {
  it(`keeps exactly ${MAX_REFUSAL_LINES} refused attempts; one more drops the oldest`, () => {
    const lines = Array.from({ length: MAX_REFUSAL_LINES + 1 }, (_, i) => lineOf(100, i, 'refused'));
    assert.deepEqual(boundAudit(lines.slice(0, -1)), lines.slice(0, -1));
    assert.deepEqual(boundAudit(lines), lines.slice(1));
  });

  it(`keeps exactly ${MAX_AUDIT_LINES} transitions; one more drops the oldest, never a clear`, () => {
    const lines = Array.from({ length: MAX_AUDIT_LINES + 1 }, (_, i) => lineOf(100, i, 'done'));
    assert.deepEqual(boundAudit(lines.slice(0, -1)), lines.slice(0, -1));
    assert.deepEqual(boundAudit(lines), lines.slice(1));
    const withClear = [lineOf(100, -1, 'done', 'clear'), ...lines];
    assert.deepEqual(boundAudit(withClear), [withClear[0], ...lines.slice(1)]);
  });

  it(`refused attempts: ${MAX_REFUSAL_BYTES} bytes stay; one byte more drops the oldest`, () => {
    const exact = linesSumming(MAX_REFUSAL_BYTES, 20, 1000, 'refused');
    assert.deepEqual(boundAudit(exact), exact);
    const over = linesSumming(MAX_REFUSAL_BYTES + 1, 20, 1000, 'refused');
    assert.deepEqual(boundAudit(over), over.slice(1));
  });

  it(`transitions: ${MAX_AUDIT_BYTES} bytes stay; one byte more drops the oldest; refused lines count apart`, () => {
    const exact = linesSumming(MAX_AUDIT_BYTES, 200, 1300, 'done');
    const refused = Array.from({ length: 10 }, (_, i) => lineOf(1000, 1000 + i, 'refused'));
    assert.deepEqual(boundAudit([...refused, ...exact]), [...refused, ...exact]);
    const over = linesSumming(MAX_AUDIT_BYTES + 1, 200, 1300, 'done');
    assert.deepEqual(boundAudit(over), over.slice(1));
  });

  it('the newest line stays even alone past its budget; the older ones go first', () => {
    const huge = lineOf(MAX_REFUSAL_BYTES + 10, 5, 'refused');
    assert.deepEqual(boundAudit([huge]), [huge]);
    const small = lineOf(100, 1, 'refused');
    assert.deepEqual(boundAudit([small, huge]), [huge]);
    const hugeTransition = lineOf(MAX_AUDIT_BYTES + 10, 6, 'done');
    assert.deepEqual(boundAudit([hugeTransition]), [hugeTransition]);
  });

  it("a refused attempt folds into the same person's refused line of the same action only, wherever it is", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const attempt = (r: LockRecord, who: string, minute: number) => {
      const outcome = clear(r, SETTINGS, { identity: who, reason: `try ${minute}` }, at(0, minute));
      assert.ok(!outcome.ok && outcome.record);
      return outcome.record;
    };
    let record = attempt(held.record, BEN, 1);
    record = ok(petition(record, { identity: CYD }, at(0, 2))).record;
    record = attempt(record, ANA, 3);
    record = (auditRefusedPush(record, { identity: BEN, grant: 1, detail: 'no' }, at(0, 4)) as { record: LockRecord }).record;
    record = attempt(record, BEN, 5);
    assert.deepEqual(
      record.audit.map(l => [l.who, l.action, l.outcome, l.count, l.since, l.at, l.detail]),
      [
        [LEAD, 'acquire', 'done', undefined, undefined, T0, undefined],
        [CYD, 'petition', 'done', undefined, undefined, at(0, 2), undefined],
        [ANA, 'clear', 'refused', undefined, undefined, at(0, 3), 'try 3'],
        [BEN, 'push', 'refused', undefined, undefined, at(0, 4), 'no'],
        [BEN, 'clear', 'refused', 2, at(0, 1), at(0, 5), 'try 5'],
      ],
    );
    record = attempt(record, BEN, 6);
    assert.deepEqual([lastAudit(record).count, lastAudit(record).since], [3, at(0, 1)]);
  });

  it('a heartbeat folds across refused attempts into its run, not into a heartbeat before another transition', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = ok(heartbeat(held.record, SETTINGS, held.proof, at(0, 10))).record;
    record = (clear(record, SETTINGS, { identity: BEN, reason: 'x' }, at(0, 11)) as { record: LockRecord }).record;
    record = ok(heartbeat(record, SETTINGS, held.proof, at(0, 20))).record;
    assert.deepEqual(
      record.audit.map(l => [l.action, l.outcome, l.count, l.since, l.at]),
      [
        ['acquire', 'done', undefined, undefined, T0],
        ['clear', 'refused', undefined, undefined, at(0, 11)],
        ['heartbeat', 'done', 2, undefined, at(0, 20)],
      ],
    );
  });

  it('summaries: the action, refused or not, who, the grant and the detail when there is one', () => {
    assert.equal(
      summarise({ at: T0, who: ANA, action: 'clear', grant: 3, detail: 'gone' }, 'refused'),
      `clear refused by ${ANA} (grant #3): gone`,
    );
    assert.equal(summarise({ at: T0, who: ANA, action: 'petition', grant: 0 }, 'done'), `petition by ${ANA} (grant #0)`);
    assert.equal(summarise({ at: T0, who: ANA, action: 'petition', grant: 0, detail: '' }, 'done'), `petition by ${ANA} (grant #0)`);
  });
});

describe("record: a refused push's stand-ins", () => {
  for (const [grant, written] of [
    [3, 3],
    [0, 0],
    [-1, 0],
    [1.5, 0],
    [Number.NaN, 0],
    [Number.MAX_SAFE_INTEGER + 1, 0],
  ]) {
    it(`a presented grant of ${grant} is written as ${written}`, () => {
      const outcome = auditRefusedPush(fresh(), { identity: ANA, grant, detail: 'refused' }, T0);
      assert.ok(!outcome.ok && outcome.record);
      assert.deepEqual(lastAudit(outcome.record), {
        at: T0,
        who: ANA,
        action: 'push',
        grant: written,
        outcome: 'refused',
        detail: 'refused',
      });
      assert.equal(outcome.summary, `push refused by ${ANA} (grant #${written}): refused`);
    });
  }

  it("a pusher without a printable name is 'unknown'; a long one is cut to the identity's length", () => {
    const nameless = auditRefusedPush(fresh(), { identity: ' \u0000 ', grant: 1, detail: 'd' }, T0);
    assert.equal(!nameless.ok && nameless.record && lastAudit(nameless.record).who, 'unknown');
    const long = auditRefusedPush(fresh(), { identity: 'x'.repeat(MAX_IDENTITY_LENGTH + 5), grant: 1, detail: 'd' }, T0);
    assert.equal(!long.ok && long.record && lastAudit(long.record).who, 'x'.repeat(MAX_IDENTITY_LENGTH));
  });
});

describe('record: identities', () => {
  it(`an identity of ${MAX_IDENTITY_LENGTH} characters is accepted, one more is refused, as is a non-string`, () => {
    const long = 'x'.repeat(MAX_IDENTITY_LENGTH);
    assert.equal(ok(petition(fresh(), { identity: long }, T0)).value.position, 1);
    refusedWith(petition(fresh(), { identity: `${long}x` }, T0), 'invalid-request');
    refusedWith(petition(fresh(), { identity: 42 as unknown as string }, T0), 'invalid-request');
  });

  it('the page knows the holder, the queue, the lessees, the assignees and everyone in the audit', () => {
    const base = fresh();
    const page: LockRecord = {
      ...base,
      holder: { identity: 'h', grant: 1, tokenHash: hex('t'), proofHash: hex('p'), grantedAt: T0, expiresAt: T0 + HOUR, ttlMs: HOUR },
      queue: [{ identity: 'q', at: T0 }],
      ranges: [{ to: 'r', start: 1, end: 2, next: 1, grant: 1, at: T0 }],
      blocks: [{ id: 1, to: 'b', text: 't', grant: 1, at: T0 }],
      audit: [
        { at: T0, who: 'w', action: 'assign', grant: 1, outcome: 'done', to: 't' },
        { at: T0, who: 'v', action: 'petition', grant: 1, outcome: 'done' },
      ],
    };
    assert.deepEqual([...knownIdentities(page)].sort(), ['b', 'h', 'q', 'r', 't', 'v', 'w']);
    assert.deepEqual([...knownIdentities(base)], []);
  });
});

describe('record: the identifier pool', () => {
  it('merges adjacent and overlapping spans, keeps a gap, in order', () => {
    assert.deepEqual(
      mergeSpans([
        { start: 10, end: 12 },
        { start: 1, end: 3 },
        { start: 4, end: 5 },
        { start: 7, end: 8 },
        { start: 8, end: 8 },
        { start: 11, end: 11 },
      ]),
      [
        { start: 1, end: 5 },
        { start: 7, end: 8 },
        { start: 10, end: 12 },
      ],
    );
    assert.deepEqual(mergeSpans([]), []);
    assert.equal(
      spansText([
        { start: 1, end: 5 },
        { start: 7, end: 7 },
      ]),
      '1-5, 7',
    );
  });

  it('a lease takes the pool lowest first, part of a span, then from above everything handed out', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const record: LockRecord = {
      ...held.record,
      nextId: 100,
      pool: [
        { start: 3, end: 5 },
        { start: 9, end: 9 },
      ],
    };
    const two = ok(leaseIds(record, held.proof, { to: LEAD, count: 2 }, at(0, 1)));
    assert.deepEqual(two.value, { start: 3, end: 4, spans: [{ start: 3, end: 4 }] });
    assert.deepEqual(two.record.pool, [
      { start: 5, end: 5 },
      { start: 9, end: 9 },
    ]);
    assert.equal(two.record.nextId, 100);
    const four = ok(leaseIds(record, held.proof, { to: LEAD, count: 4 }, at(0, 1)));
    assert.deepEqual(four.value.spans, [
      { start: 3, end: 5 },
      { start: 9, end: 9 },
    ]);
    assert.deepEqual([four.record.pool, four.record.nextId], [[], 100]);
    const six = ok(leaseIds(record, held.proof, { to: LEAD, count: 6 }, at(0, 1)));
    assert.deepEqual(six.value, {
      start: 3,
      end: 101,
      spans: [
        { start: 3, end: 5 },
        { start: 9, end: 9 },
        { start: 100, end: 101 },
      ],
    });
    assert.equal(six.record.nextId, 102);
    assert.equal(lastAudit(six.record).detail, `3-5, 9, 100-101 to ${LEAD}`);
    // The lead mints from the pool first, then above it.
    const minted = ok(nextId(record, { identity: LEAD, holder: held.proof }, at(0, 2)));
    assert.deepEqual([minted.value.id, minted.record.pool[0], minted.record.nextId], [3, { start: 4, end: 5 }, 100]);
    const empty = { ...record, pool: [] };
    const above = ok(nextId(empty, { identity: LEAD, holder: held.proof }, at(0, 2)));
    assert.deepEqual([above.value.id, above.record.nextId], [100, 101]);
  });

  it('the unused identifiers of a grant: its ranges past their next, none when all are minted', () => {
    const base = fresh();
    const ranges = [
      { to: ANA, start: 1, end: 4, next: 3, grant: 1, at: T0 },
      { to: BEN, start: 5, end: 6, next: 7, grant: 1, at: T0 },
      { to: BEN, start: 7, end: 7, next: 7, grant: 1, at: T0 },
    ];
    assert.equal(unusedIdentifiers({ ...base, ranges }), 3);
    assert.equal(unusedIdentifiers({ ...base, ranges: ranges.slice(1, 2) }), 0);
  });
});

describe('record: turns, leases and takeovers at their edges', () => {
  /** LEAD released at hour 1 with ANA and BEN queued. */
  function released(): LockRecord {
    const held = acquireAs(fresh(), LEAD, T0);
    let r = ok(petition(held.record, { identity: ANA }, at(0, 1))).record;
    r = ok(petition(r, { identity: BEN }, at(0, 2))).record;
    return ok(release(r, held.proof, at(1))).record;
  }
  const W = SETTINGS.windowMs;

  it("each window ends exactly at its bound: the head's, then both, then anyone's", () => {
    const r = released();
    assert.deepEqual(turnAt(r, SETTINGS, at(1) + W - 1), { eligible: [ANA], current: { identity: ANA, endsAt: at(1) + W } });
    assert.deepEqual(turnAt(r, SETTINGS, at(1) + W), { eligible: [ANA, BEN], current: { identity: BEN, endsAt: at(1) + 2 * W } });
    assert.deepEqual(turnAt(r, SETTINGS, at(1) + 2 * W - 1).eligible, [ANA, BEN]);
    assert.deepEqual(turnAt(r, SETTINGS, at(1) + 2 * W), { eligible: [] });
    assert.equal(mayAcquire(r, SETTINGS, CYD, at(1) + 2 * W - 1), false);
    assert.equal(mayAcquire(r, SETTINGS, CYD, at(1) + 2 * W), true);
  });

  it("a lock never held nor released is anyone's, however long the queue and the window", () => {
    // A day's window since 1970 is about 20,000 windows; a queue longer than that must not make a turn of them.
    const queue = Array.from({ length: 30_000 }, (_, i) => ({ identity: `p${i}@x`, at: T0 }));
    const page: LockRecord = { ...fresh(), queue };
    const day = { ...SETTINGS, windowMs: 24 * HOUR };
    assert.deepEqual(turnAt(page, day, at(1)), { eligible: [] });
    assert.equal(mayAcquire(page, day, CYD, at(1)), true);
  });

  it("a clock read before the release (another machine's) is still the head's window", () => {
    assert.deepEqual(turnAt(released(), SETTINGS, at(1) - MINUTE), { eligible: [ANA], current: { identity: ANA, endsAt: at(1) + W } });
  });

  it('a holder is live until the instant its lease ends; then its expiry opens the windows', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const queued = ok(petition(held.record, { identity: ANA }, at(0, 1))).record;
    refusedWith(
      acquire(queued, SETTINGS, { identity: ANA, tokenHash: hex('a'), proofHash: hex('p') }, held.expiresAt - 1),
      'held-by-other',
    );
    assert.deepEqual(turnAt(queued, SETTINGS, held.expiresAt), { eligible: [ANA], current: { identity: ANA, endsAt: held.expiresAt + W } });
    assert.deepEqual(turnAt(queued, SETTINGS, held.expiresAt - 1), { eligible: [] });
    assert.equal(ok(heartbeat(queued, SETTINGS, held.proof, held.expiresAt - 1)).value.expiresAt, held.expiresAt - 1 + 2 * HOUR);
  });

  it(`a lease of exactly ${MIN_LEASE_TTL_MS / SECOND} s or ${MAX_LEASE_TTL_MS / HOUR} h is granted`, () => {
    for (const ttlMs of [MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS]) {
      const { value } = ok(acquire(fresh(), SETTINGS, { identity: LEAD, tokenHash: hex('t'), proofHash: hex('p'), ttlMs }, T0));
      assert.deepEqual(value, { grant: 1, expiresAt: T0 + ttlMs });
    }
  });

  it('a heartbeat reaching the 24 h cap exactly stops there', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const now = T0 + MAX_HOLD_MS - 2 * HOUR;
    let record = held.record;
    for (let t = T0 + HOUR; t <= now; t += HOUR) record = ok(heartbeat(record, SETTINGS, held.proof, t)).record;
    assert.equal(record.holder?.expiresAt, T0 + MAX_HOLD_MS);
    assert.equal(ok(heartbeat(record, SETTINGS, held.proof, now + HOUR)).value.expiresAt, T0 + MAX_HOLD_MS);
  });

  it("a takeover's audit line names the silent holder, its grant and since when, in UTC to the second", () => {
    const held = acquireAs(fresh(), LEAD, T0 + 1234);
    const taken = acquireAs(held.record, ANA, at(3));
    assert.deepEqual(lastAudit(taken.record), {
      at: at(3),
      who: ANA,
      action: 'acquire',
      grant: 2,
      outcome: 'done',
      detail: `took over from ${LEAD} (grant #1, silent since 2026-01-01T02:00:01Z)`,
    });
    assert.deepEqual(taken.record.caution, { silentGrant: 1, since: at(3), by: ANA });
    // After a release there is no silent holder: no detail, and an earlier mark stays as it was.
    const marked = ok(release(taken.record, taken.proof, at(4))).record;
    const next = acquireAs(marked, BEN, at(5));
    assert.deepEqual(lastAudit(next.record), { at: at(5), who: BEN, action: 'acquire', grant: 3, outcome: 'done' });
    assert.deepEqual(next.record.caution, { silentGrant: 1, since: at(3), by: ANA });
    assert.equal(ok(clear(held.record, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).record.caution?.silentGrant, 1);
  });
});

describe('record: more bounds on both sides', () => {
  it('an adopted page: a grant floor from 0 and a next identifier from 1, whole numbers', () => {
    const adopt = (grantFloor: number, nextIdFloor: number) =>
      adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'lost', grantFloor, nextIdFloor }, T0);
    assert.deepEqual(ok(adopt(0, 1)).value, { container: CONTAINER, grant: 0, nextId: 1 });
    for (const [g, n] of [
      [-1, 1],
      [0, 0],
      [0.5, 1],
      [0, 1.5],
      [Number.NaN, 1],
      [0, Number.POSITIVE_INFINITY],
    ]) {
      const outcome = adopt(g, n);
      refusedWith(outcome, 'invalid-request');
      assert.deepEqual(!outcome.ok && outcome.refusal, { reason: 'invalid-request', what: 'adopt-floors' });
    }
  });

  it('an adoption refused says so in its facts: not an operator, no reason', () => {
    const byAna = adoptPage(CONTAINER, SETTINGS, { identity: ANA, reason: 'lost', grantFloor: 1, nextIdFloor: 1 }, T0);
    refusedWith(byAna, 'not-operator');
    assert.deepEqual(!byAna.ok && byAna.refusal, { reason: 'not-operator', what: 'adopt', identity: ANA });
    const noReason = adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: ' ', grantFloor: 1, nextIdFloor: 1 }, T0);
    refusedWith(noReason, 'reason-required');
    assert.deepEqual(!noReason.ok && noReason.refusal, { reason: 'reason-required', what: 'adopt' });
  });

  it('a grant never issued, presented after the lease expired, is not live (not expired)', () => {
    const h = acquireAs(fresh(), LEAD, T0);
    const outcome = heartbeat(h.record, SETTINGS, { ...h.proof, grant: 5 }, h.expiresAt + 1);
    leaseLost(outcome, 5);
    assert.deepEqual(!outcome.ok && outcome.lapse, { why: 'not-live', grant: 5, next: { step: 'acquire' } });
  });

  it('a landed commit of 7 to 64 lower-case hexadecimal digits, nothing else', () => {
    const held = () => acquireAs(fresh(), LEAD, T0);
    for (const landed of ['a'.repeat(7), 'f'.repeat(64), '0123456789abcdef']) {
      const h = held();
      assert.equal(lastAudit(ok(release(h.record, h.proof, at(1), { landed })).record).detail, `landed ${landed}`);
    }
    for (const landed of ['a'.repeat(6), 'a'.repeat(65), 'ABCDEF1', 'abcdefg', ` ${'a'.repeat(7)}`, `${'a'.repeat(7)} `, '']) {
      const h = held();
      const outcome = release(h.record, h.proof, at(1), { landed });
      refusedWith(outcome, 'invalid-request');
      assert.deepEqual(!outcome.ok && outcome.refusal, { reason: 'invalid-request', what: 'landed-commit' });
      assert.equal(LANDED_COMMIT.test(landed), false);
    }
  });

  it(`a lease of exactly ${MAX_IDS_PER_LEASE} identifiers is granted, one more is refused`, () => {
    const h = acquireAs(fresh(), LEAD, T0);
    const { value, record } = ok(leaseIds(h.record, h.proof, { to: LEAD, count: MAX_IDS_PER_LEASE }, at(0, 1)));
    assert.deepEqual([value.start, value.end, record.nextId], [1, MAX_IDS_PER_LEASE, MAX_IDS_PER_LEASE + 1]);
    refusedWith(leaseIds(h.record, h.proof, { to: LEAD, count: MAX_IDS_PER_LEASE + 1 }, at(0, 1)), 'invalid-request');
  });

  it('a lease presented at the instant it ends has expired; another token on a live grant is not live', () => {
    const h = acquireAs(fresh(), LEAD, T0);
    const atEnd = heartbeat(h.record, SETTINGS, h.proof, h.expiresAt);
    leaseLost(atEnd, 1);
    assert.deepEqual(!atEnd.ok && atEnd.lapse, { why: 'expired', grant: 1, at: h.expiresAt, next: { step: 'acquire' } });
    const other = heartbeat(h.record, SETTINGS, proofOf(ANA, 1), at(0, 1));
    leaseLost(other, 1);
    assert.deepEqual(!other.ok && other.lapse, { why: 'not-live', grant: 1, next: { step: 'petition' } });
    const mine = heartbeat(h.record, SETTINGS, { ...h.proof, tokenHash: hex('another clone') }, at(0, 1));
    assert.deepEqual(!mine.ok && mine.lapse, { why: 'not-live', grant: 1, next: { step: 'work-elsewhere', grant: 1 } });
  });
});

describe('record: what each transition leaves behind', () => {
  it('the first line of the trail folds too: a repeated refusal, and a heartbeat after refused attempts only', () => {
    const refusedLine: AuditLine = { at: T0, who: BEN, action: 'clear', grant: 0, outcome: 'refused', detail: 'x' };
    const page: LockRecord = { ...fresh(), audit: [refusedLine] };
    const again = clear(page, SETTINGS, { identity: BEN, reason: 'y' }, at(0, 1));
    assert.ok(!again.ok && again.record);
    assert.deepEqual(again.record.audit, [{ ...refusedLine, at: at(0, 1), detail: 'y', count: 2, since: T0 }]);
    const held = acquireAs(fresh(), LEAD, T0);
    const onlyRefused: LockRecord = { ...held.record, audit: [refusedLine] };
    const beat = ok(heartbeat(onlyRefused, SETTINGS, held.proof, at(0, 5))).record;
    assert.deepEqual(beat.audit, [refusedLine, { at: at(0, 5), who: LEAD, action: 'heartbeat', grant: 1, outcome: 'done' }]);
  });

  it("an operator's refused clear after their clear that was done is a line of its own: the clear is never folded away", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const cleared = ok(clear(held.record, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).record;
    const again = clear(cleared, SETTINGS, { identity: OP, reason: 'again' }, at(3, 1));
    const { record } = refusedWith(again, 'not-silent');
    assert.deepEqual(
      record?.audit.slice(-2).map(l => [l.who, l.action, l.outcome, l.detail, l.count]),
      [
        [OP, 'clear', 'done', `cleared ${LEAD}: gone`, undefined],
        [OP, 'clear', 'refused', 'again', undefined],
      ],
    );
  });

  it("a heartbeat folds into its grant's heartbeat line when that is the trail's only transition", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const beat: AuditLine = { at: at(0, 1), who: LEAD, action: 'heartbeat', grant: 1, outcome: 'done' };
    const page: LockRecord = { ...held.record, audit: [beat] };
    const next = ok(heartbeat(page, SETTINGS, held.proof, at(0, 2))).record;
    assert.deepEqual(next.audit, [{ ...beat, at: at(0, 2), count: 2 }]);
  });

  it("only an operator's clear that was done is kept forever", () => {
    const line = (action: AuditLine['action'], outcome: AuditLine['outcome']): AuditLine => ({
      at: T0,
      who: OP,
      action,
      grant: 1,
      outcome,
    });
    assert.deepEqual([line('clear', 'done'), line('clear', 'refused'), line('release', 'done')].map(keptForever), [true, false, false]);
  });

  it('a grant that ends returns only what nobody minted: a used-up range adds nothing to the pool', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let r = ok(leaseIds(held.record, held.proof, { to: ANA, count: 3, newIdentity: true }, at(0, 1))).record; // 1-3
    r = ok(leaseIds(r, held.proof, { to: BEN, count: 2, newIdentity: true }, at(0, 2))).record; // 4-5
    r = ok(nextId(r, { identity: BEN }, at(0, 3))).record;
    r = ok(nextId(r, { identity: BEN }, at(0, 4))).record;
    const released = ok(release(r, held.proof, at(1), { landed: 'abc1234' }));
    assert.deepEqual(released.record.pool, [{ start: 1, end: 3 }]);
    assert.equal(lastAudit(released.record).detail, 'landed abc1234; used leased identifiers 4-5; reclaimed 3 unused identifiers');
  });

  it('one identifier reclaimed is one identifier', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const r = ok(leaseIds(held.record, held.proof, { to: ANA, count: 1, newIdentity: true }, at(0, 1))).record;
    assert.equal(lastAudit(ok(release(r, held.proof, at(1))).record).detail, 'nothing landed; reclaimed 1 unused identifier');
  });

  it('minting writes the identifier into its audit line, for the lead and for a lessee', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const lead = ok(nextId(held.record, { identity: LEAD, holder: held.proof }, at(0, 1))).record;
    assert.deepEqual(lastAudit(lead), { at: at(0, 1), who: LEAD, action: 'next-id', grant: 1, outcome: 'done', detail: '1' });
    const leased = ok(leaseIds(lead, held.proof, { to: ANA, count: 2, newIdentity: true }, at(0, 2))).record;
    const ana = ok(nextId(leased, { identity: ANA }, at(0, 3))).record;
    assert.deepEqual(lastAudit(ana), { at: at(0, 3), who: ANA, action: 'next-id', grant: 1, outcome: 'done', detail: '2' });
  });

  it('marking one block done leaves the others open', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let r = ok(assign(held.record, held.proof, { to: ANA, text: 'one', newIdentity: true }, at(0, 1))).record;
    r = ok(assign(r, held.proof, { to: BEN, text: 'two', newIdentity: true }, at(0, 2))).record;
    const done = ok(markDone(r, { identity: ANA, block: 1 }, at(0, 3)));
    assert.deepEqual(done.value, { block: 1, to: ANA });
    assert.deepEqual(
      done.record.blocks.map(b => [b.id, b.to, b.text]),
      [[2, BEN, 'two']],
    );
  });

  it('a new page names its container; a refused push says why in its facts and its words', () => {
    assert.deepEqual(ok(createPage(CONTAINER, { identity: LEAD }, T0)).value, { container: CONTAINER });
    const outcome = auditRefusedPush(fresh(), { identity: ANA, grant: 1, detail: 'not the holder' }, T0);
    assert.equal(refusedWith(outcome, 'not-holder').error.message, 'Push refused: not the holder');
    assert.deepEqual(!outcome.ok && outcome.refusal, { reason: 'not-holder', what: 'push', detail: 'not the holder' });
  });

  it("the holder's token with another grant's number is not the holder", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const wrongGrant = { ...held.proof, grant: 2 };
    leaseLost(heartbeat(held.record, SETTINGS, wrongGrant, at(0, 1)), 2);
    refusedWith(leaseIds(held.record, wrongGrant, { to: LEAD, count: 1 }, at(0, 1)), 'not-holder');
  });

  it('a caution mark on a freed lock is not lifted by a landing: there is no holder to lift it', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const cleared = ok(clear(held.record, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).record;
    assert.equal(liftsCaution(cleared, 'abc1234'), false);
  });
});
