import * as assert from 'node:assert/strict';
import {
  clear,
  heartbeat,
  keptForever,
  leaseIds,
  MAX_AUDIT_LINES,
  MAX_NOTE_LENGTH,
  MAX_REFUSAL_BYTES,
  MAX_REFUSAL_LINES,
  nextId,
  petition,
  release,
  summarise,
  turnAt,
  withdraw,
  type AuditLine,
  type LockRecord,
  type Outcome,
} from '../../src/core/lockRecord';
import type { RefusalReason } from '../../src/core/errors';
import { ANA, BEN, CYD, LEAD, OP, SETTINGS, T0, acquireAs, at, fresh, hex, lastAudit, ok, refusedWith } from '../helpers/lockRecordFixture';

/** LEAD acquired at hour 0 (2 h lease) and went silent; ANA petitioned. */
function silent(): { record: LockRecord } {
  const held = acquireAs(fresh(), LEAD, T0);
  return { record: ok(petition(held.record, { identity: ANA }, at(0, 5))).record };
}

describe('lockRecord: operator clear', () => {
  it('clears a HOLDER SILENT lock: holder gone, grant counter kept, audit says when, who, why, whose grant', () => {
    const { record: before } = silent();
    const { record, value, summary } = ok(clear(before, SETTINGS, { identity: OP, reason: "lead's laptop died" }, at(3)));
    assert.deepEqual(value, { clearedGrant: 1, reclaimed: 0, queueHead: 'ana@example.com' });
    assert.equal(record.holder, null);
    assert.equal(record.grant, 1);
    assert.equal(record.releasedAt, at(3));
    assert.deepEqual(lastAudit(record), {
      at: at(3),
      who: OP,
      action: 'clear',
      grant: 1,
      outcome: 'done',
      detail: `cleared ${LEAD}: lead's laptop died`,
    });
    assert.match(summary, /^clear by operator@example\.com \(grant #1\)/);
  });

  it('after a clear the queue head has its window and the next acquire gets grant + 1', () => {
    const { record: cleared } = ok(clear(silent().record, SETTINGS, { identity: OP, reason: 'gone' }, at(3)));
    assert.deepEqual(turnAt(cleared, SETTINGS, at(3)).eligible, [ANA]);
    const next = acquireAs(cleared, ANA, at(3, 1));
    assert.equal(next.record.grant, 2);
  });

  it("reclaims the silent grant's ranges without lowering nextId: their never-minted identifiers go back to the pool", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let leased = ok(leaseIds(held.record, held.proof, { newIdentity: true, to: ANA, count: 4 }, at(0, 1))).record; // 1-4
    leased = ok(leaseIds(leased, held.proof, { newIdentity: true, to: BEN, count: 2 }, at(0, 2))).record; // 5-6
    leased = ok(nextId(leased, { identity: ANA }, at(0, 3))).record; // ANA minted 1
    leased = ok(nextId(leased, { identity: BEN }, at(0, 3))).record; // BEN minted 5
    const { record, value } = ok(clear(leased, SETTINGS, { identity: OP, reason: 'gone' }, at(3)));
    assert.deepEqual(value, { clearedGrant: 1, reclaimed: 4, queueHead: null });
    assert.deepEqual(record.ranges, []);
    assert.deepEqual(record.pool, [
      { start: 2, end: 4 },
      { start: 6, end: 6 },
    ]);
    assert.equal(record.nextId, 7);
    assert.equal(lastAudit(record).detail, `cleared ${LEAD} (reclaimed 4 unused identifiers): gone`);
    // The next lead leases them again before new ones; 1 and 5 (minted) never come back.
    const next = acquireAs(record, ANA, at(3, 1));
    const again = ok(leaseIds(next.record, next.proof, { to: BEN, count: 5 }, at(3, 2)));
    assert.deepEqual(again.value.spans, [
      { start: 2, end: 4 },
      { start: 6, end: 6 },
      { start: 7, end: 7 },
    ]);
  });

  const refusals: {
    title: string;
    record: () => LockRecord;
    who: string;
    reason: string;
    now: number;
    code: RefusalReason;
    detail?: string;
  }[] = [
    {
      title: 'a non-operator',
      record: () => silent().record,
      who: ANA,
      reason: 'impatient',
      now: at(3),
      code: 'not-operator',
      detail: 'impatient',
    },
    {
      title: 'a non-operator without a reason',
      record: () => silent().record,
      who: BEN,
      reason: '',
      now: at(3),
      code: 'not-operator',
      detail: 'no reason given',
    },
    {
      title: 'the holder itself (not an operator)',
      record: () => silent().record,
      who: LEAD,
      reason: 'me',
      now: at(3),
      code: 'not-operator',
      detail: 'me',
    },
    { title: 'an operator without a reason', record: () => silent().record, who: OP, reason: '  \n ', now: at(3), code: 'reason-required' },
    {
      title: 'an operator, while the holder is live',
      record: () => silent().record,
      who: OP,
      reason: 'hurry',
      now: at(1),
      code: 'not-silent',
      detail: 'hurry',
    },
    {
      title: 'an operator, one millisecond before expiry',
      record: () => silent().record,
      who: OP,
      reason: 'hurry',
      now: at(2) - 1,
      code: 'not-silent',
      detail: 'hurry',
    },
    { title: 'an operator, on a free lock', record: fresh, who: OP, reason: 'tidy', now: at(3), code: 'not-silent', detail: 'tidy' },
  ];
  for (const r of refusals) {
    it(`refuses ${r.title}: '${r.code}', and audits the attempt`, () => {
      const before = r.record();
      const outcome = clear(before, SETTINGS, { identity: r.who, reason: r.reason }, r.now);
      const { record } = refusedWith(outcome, r.code);
      assert.ok(record, 'a refused clear carries the record with its audit line');
      assert.equal(record.audit.length, before.audit.length + 1);
      const line = lastAudit(record);
      assert.equal(line.outcome, 'refused');
      assert.equal(line.action, 'clear');
      assert.equal(line.who, r.who);
      assert.equal(line.at, r.now);
      assert.equal(line.detail, r.detail);
      // Only the audit changed: the refusal clears nothing.
      assert.deepEqual({ ...record, audit: before.audit }, before);
      assert.match(outcome.ok ? '' : (outcome.summary ?? ''), /^clear refused by /);
    });
  }
});

describe('lockRecord: audit', () => {
  it('every successful transition adds one line with its action, who and grant', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = held.record;
    const step = <T>(outcome: Outcome<T>) => {
      record = ok(outcome).record;
    };
    step(petition(record, { identity: ANA }, at(0, 1)));
    step(petition(record, { identity: BEN }, at(0, 2)));
    step(withdraw(record, { identity: BEN }, at(0, 3)));
    step(heartbeat(record, SETTINGS, held.proof, at(0, 10)));
    step(leaseIds(record, held.proof, { newIdentity: true, to: ANA, count: 2 }, at(0, 11)));
    step(release(record, held.proof, at(1)));
    const ana = acquireAs(record, ANA, at(1, 1));
    record = ana.record;
    assert.deepEqual(
      record.audit.map(l => [l.action, l.who, l.grant, l.outcome]),
      [
        ['acquire', LEAD, 1, 'done'],
        ['petition', ANA, 1, 'done'],
        ['petition', BEN, 1, 'done'],
        ['withdraw', BEN, 1, 'done'],
        ['heartbeat', LEAD, 1, 'done'],
        ['lease-ids', LEAD, 1, 'done'],
        ['release', LEAD, 1, 'done'],
        ['acquire', ANA, 2, 'done'],
      ],
    );
    assert.ok(
      record.audit.every((l, i) => i === 0 || l.at >= record.audit[i - 1].at),
      'lines are in time order',
    );
  });

  it('folds consecutive heartbeats of one grant into one line; another action breaks the run', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = held.record;
    for (const m of [10, 20, 30]) record = ok(heartbeat(record, SETTINGS, held.proof, at(0, m))).record;
    record = ok(petition(record, { identity: ANA }, at(0, 31))).record;
    for (const m of [40, 50]) record = ok(heartbeat(record, SETTINGS, held.proof, at(0, m))).record;
    assert.deepEqual(
      record.audit.map(l => [l.action, l.count, l.at]),
      [
        ['acquire', undefined, T0],
        ['heartbeat', 3, at(0, 30)],
        ['petition', undefined, at(0, 31)],
        ['heartbeat', 2, at(0, 50)],
      ],
    );
  });

  it("folds one person's repeated identical refused clears into one line, so they cannot flush the trail", () => {
    const { record: start } = silent();
    // An audit 5 lines short of its limit, the acquire its oldest line: 20 unfolded refusals would flush it.
    const history = Array.from(
      { length: MAX_AUDIT_LINES - 5 - start.audit.length },
      (_, i): AuditLine => ({
        at: at(2, 0) + i,
        who: CYD,
        action: i % 2 === 0 ? 'petition' : 'withdraw',
        grant: start.grant,
        outcome: 'done',
      }),
    );
    let record: LockRecord = { ...start, audit: [...start.audit, ...history] };
    const attempt = (r: LockRecord, who: string, reason: string, minute: number): LockRecord => {
      const outcome = clear(r, SETTINGS, { identity: who, reason }, at(3, minute));
      assert.equal(outcome.ok, false);
      return (outcome as { record: LockRecord }).record;
    };
    for (let i = 0; i < 20; i++) record = attempt(record, BEN, 'let me in', i);
    const refusedLines = record.audit.filter(l => l.outcome === 'refused');
    assert.equal(refusedLines.length, 1);
    assert.equal(refusedLines[0].count, 20);
    assert.ok(
      record.audit.some(l => l.action === 'acquire' && l.who === LEAD),
      'the real history is still there',
    );
    // A different reason folds too (the line keeps the latest, the count and the first time); another person starts a new line.
    record = attempt(record, BEN, 'please', 30);
    assert.deepEqual(
      record.audit.filter(l => l.outcome === 'refused').map(l => [l.who, l.count, l.detail, l.since, l.at]),
      [[BEN, 21, 'please', at(3, 0), at(3, 30)]],
    );
    record = attempt(record, ANA, 'please', 31);
    assert.equal(record.audit.filter(l => l.outcome === 'refused').length, 2);
  });

  it('heartbeats of different grants are not folded together', () => {
    const first = acquireAs(fresh(), LEAD, T0);
    const hb1 = ok(heartbeat(first.record, SETTINGS, first.proof, at(0, 10))).record;
    // Synthetic, to isolate the fold rule: a new grant whose first line is a heartbeat.
    const second = acquireAs(hb1, ANA, at(3));
    const withoutAcquireLine = { ...second.record, audit: second.record.audit.slice(0, -1) };
    const hb2 = ok(heartbeat(withoutAcquireLine, SETTINGS, second.proof, at(3, 10))).record;
    assert.deepEqual(
      hb2.audit.slice(-2).map(l => [l.grant, l.count]),
      [
        [1, undefined],
        [2, undefined],
      ],
    );
  });

  it(`keeps at most ${MAX_AUDIT_LINES} lines, dropping the oldest`, () => {
    const who = (i: number) => `user${i}@example.com`;
    // A trail already at the limit (copies of one real petition line; the queue stays short), then 20 more lines.
    const first = ok(petition(fresh(), { identity: who(0) }, T0)).record;
    const line = lastAudit(first);
    let record: LockRecord = {
      ...fresh(),
      audit: Array.from({ length: MAX_AUDIT_LINES }, (_, i) => ({ ...line, who: who(i), at: T0 + i })),
    };
    for (let i = MAX_AUDIT_LINES; i < MAX_AUDIT_LINES + 20; i++) record = ok(petition(record, { identity: who(i) }, T0 + i)).record;
    assert.equal(record.audit.length, MAX_AUDIT_LINES);
    assert.equal(record.audit[0].who, who(20));
    assert.equal(lastAudit(record).who, who(MAX_AUDIT_LINES + 19));
    // A refused clear attempt is no transition: its line goes into the refused attempts' own section, and no transition goes.
    const refused = clear(record, SETTINGS, { identity: ANA, reason: 'x' }, at(1));
    assert.ok(!refused.ok && refused.record);
    assert.equal(refused.record.audit.length, MAX_AUDIT_LINES + 1);
    assert.equal(refused.record.audit[0].who, who(20));
    assert.deepEqual([lastAudit(refused.record).action, lastAudit(refused.record).outcome], ['clear', 'refused']);
  });

  it('900 refused clear attempts with distinct reasons after a real clear leave the real clear line on the page', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const cleared = ok(clear(held.record, SETTINGS, { identity: OP, reason: 'lead gone' }, at(3))).record;
    const real = lastAudit(cleared);
    assert.ok(keptForever(real));
    const who = (i: number) => (i % 2 === 0 ? ANA : BEN);
    const reason = (i: number) => `${i} ${'x'.repeat(MAX_NOTE_LENGTH)}`;
    const attempt = (r: LockRecord, i: number): LockRecord => {
      const { record: next } = refusedWith(clear(r, SETTINGS, { identity: who(i), reason: reason(i) }, at(4) + i), 'not-operator');
      assert.ok(next, 'a refused attempt is audited');
      return next;
    };
    // The first 880 attempts' lines as clear() writes them, appended at once (the unit suite's 100 ms
    // does not fit 900 transitions), then 20 more through the transition itself.
    const line = (i: number): AuditLine => ({
      at: at(4) + i,
      who: who(i),
      action: 'clear',
      grant: 1,
      outcome: 'refused',
      detail: reason(i).slice(0, MAX_NOTE_LENGTH),
    });
    assert.deepEqual(lastAudit(attempt(cleared, 7)), line(7));
    let record: LockRecord = { ...cleared, audit: [...cleared.audit, ...Array.from({ length: 880 }, (_, i) => line(i))] };
    for (let i = 880; i < 900; i++) record = attempt(record, i);
    assert.ok(record.audit.includes(real), "the operator's clear line is still on the page");
    assert.ok(
      record.audit.some(l => l.action === 'acquire' && l.who === LEAD),
      'and the acquire before it',
    );
    assert.equal(
      record.audit.filter(l => l.outcome === 'refused').length,
      MAX_REFUSAL_LINES,
      'the refused attempts are bounded in their own section',
    );
    assert.equal(lastAudit(record).detail, `899 ${'x'.repeat(MAX_NOTE_LENGTH - 4)}`);
    assert.ok(Buffer.byteLength(JSON.stringify(record.audit.filter(l => l.outcome === 'refused'))) <= MAX_REFUSAL_BYTES);
  });

  it('summaries name people and grants, never token or proof hashes', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const hashes = [held.record.holder!.tokenHash, held.record.holder!.proofHash, hex('t')];
    const line = lastAudit(held.record);
    const text = summarise(line, 'done') + JSON.stringify(held.record.audit);
    assert.equal(text.includes(LEAD), true);
    for (const h of hashes) assert.equal(text.includes(h), false);
  });
});
