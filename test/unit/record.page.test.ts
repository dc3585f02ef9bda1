import * as assert from 'node:assert/strict';
import {
  adoptPage,
  auditRefusedPush,
  boundAudit,
  clear,
  createPage,
  emptyRecord,
  leaseIds,
  MAX_AUDIT_BYTES,
  MAX_AUDIT_LINES,
  MAX_REFUSAL_BYTES,
  MAX_REFUSAL_LINES,
  nextId,
  petition,
  release,
  withdraw,
  type AuditLine,
  type LockRecord,
} from '../../src/core/lockRecord';
import { parseRecord } from '../../src/core/recordCodec';
import { ANA, BEN, CONTAINER, LEAD, OP, SETTINGS, T0, acquireAs, at, lastAudit, ok, refusedWith } from '../helpers/lockRecordFixture';

describe('lockRecord: the page itself', () => {
  it('createPage: the empty page with one audit line saying who created it, and when', () => {
    const created = ok(createPage(CONTAINER, { identity: LEAD }, T0));
    assert.deepEqual(created.record, {
      ...emptyRecord(CONTAINER),
      audit: [{ at: T0, who: LEAD, action: 'init', grant: 0, outcome: 'done' }],
    });
    assert.equal(created.summary, `init by ${LEAD} (grant #0)`);
    refusedWith(createPage(CONTAINER, { identity: '' }, T0), 'invalid-request');
  });

  it('adoptPage: operators only, with a reason; grants continue after the floor, identifiers from the floor', () => {
    refusedWith(
      adoptPage(CONTAINER, SETTINGS, { identity: ANA, reason: 'store wiped', grantFloor: 7, nextIdFloor: 40 }, T0),
      'not-operator',
    );
    refusedWith(adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: ' ', grantFloor: 7, nextIdFloor: 40 }, T0), 'reason-required');
    refusedWith(adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'x', grantFloor: -1, nextIdFloor: 40 }, T0), 'invalid-request');
    refusedWith(adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'x', grantFloor: 7, nextIdFloor: 0 }, T0), 'invalid-request');
    const adopted = ok(adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'store wiped', grantFloor: 7, nextIdFloor: 40 }, T0)).record;
    assert.deepEqual([adopted.grant, adopted.nextId], [7, 40]);
    assert.deepEqual(lastAudit(adopted), {
      at: T0,
      who: OP,
      action: 'adopt',
      grant: 7,
      outcome: 'done',
      detail: 'grants continue after #7, identifiers from 40: store wiped',
    });
    assert.equal(acquireAs(adopted, ANA, at(1)).record.grant, 8);
  });
});

describe('lockRecord: every clear keeps its audit line', () => {
  it('petition/withdraw cycles on an audit already at its limit after a clear leave the clear line, and the refused attempt before it in its own section', () => {
    const held = acquireAs(ok(createPage(CONTAINER, { identity: LEAD }, T0)).record, LEAD, T0);
    const refusedAttempt = clear(held.record, SETTINGS, { identity: OP, reason: '' }, at(3));
    assert.ok(!refusedAttempt.ok && refusedAttempt.record, 'a clear without a reason is refused and audited');
    let record = ok(clear(refusedAttempt.record, SETTINGS, { identity: OP, reason: 'lead gone' }, at(3, 1))).record;
    // The audit as MAX_AUDIT_LINES earlier petitions and withdrawals would leave it (built directly: each
    // transition on a full audit costs about a millisecond, and a unit test stays under 100 ms).
    const earlier = Array.from(
      { length: MAX_AUDIT_LINES },
      (_, i): AuditLine => ({
        at: at(3, 2) + i,
        who: ANA,
        action: i % 2 === 0 ? 'petition' : 'withdraw',
        grant: record.grant,
        outcome: 'done',
      }),
    );
    record = { ...record, audit: [...record.audit, ...earlier] };
    for (let i = 0; i < 10; i++) {
      record = ok(petition(record, { identity: ANA }, at(4) + i)).record;
      record = ok(withdraw(record, { identity: ANA }, at(4) + i)).record;
    }
    const clears = record.audit.filter(l => l.action === 'clear');
    assert.deepEqual(
      clears.map(l => [l.outcome, l.detail]),
      [
        ['refused', undefined],
        ['done', `cleared ${LEAD}: lead gone`],
      ],
    );
    assert.equal(record.audit.length, MAX_AUDIT_LINES + 2, 'the other transitions keep their limit');
    assert.equal(
      record.audit.some(l => l.action === 'init'),
      false,
      'older lines other than clears went',
    );
    parseRecord(JSON.parse(JSON.stringify(record)), 'memory', CONTAINER, SETTINGS);
  });

  const big = (i: number, action: AuditLine['action'], outcome: AuditLine['outcome'] = 'refused'): AuditLine => ({
    at: T0 + i,
    who: `${'p'.repeat(190)}${i}@x`,
    action,
    grant: 1,
    outcome,
    detail: 'd'.repeat(200),
  });

  it('an audit that would pass the byte budgets stays writable: in each section the oldest lines (never clears) go first', () => {
    const lines = Array.from({ length: 1200 }, (_, i) =>
      i % 100 === 0 ? big(i, 'clear', 'done') : i % 2 ? big(i, 'clear') : big(i, 'petition', 'done'),
    );
    const bounded = boundAudit(lines);
    const refused = bounded.filter(l => l.outcome === 'refused');
    const transitions = bounded.filter(l => l.outcome === 'done');
    assert.ok(Buffer.byteLength(JSON.stringify(transitions)) <= MAX_AUDIT_BYTES + transitions.length);
    assert.ok(Buffer.byteLength(JSON.stringify(refused)) <= MAX_REFUSAL_BYTES + refused.length);
    assert.ok(refused.length > 0 && refused.length <= MAX_REFUSAL_LINES);
    assert.equal(bounded.filter(l => l.action === 'clear' && l.outcome === 'done').length, 12, 'every clear line kept');
    assert.deepEqual(refused, lines.filter(l => l.outcome === 'refused').slice(-refused.length), 'the newest refused attempts stay');
    assert.deepEqual(
      transitions.filter(l => l.action === 'petition'),
      lines.filter(l => l.action === 'petition').slice(-transitions.filter(l => l.action === 'petition').length),
      'the newest transitions stay',
    );
    assert.equal(bounded[bounded.length - 1], lines[lines.length - 1], 'the newest line kept');
  });

  it('no number of refused attempts pushes out a transition: more refused pushes than the audit has lines, each presenting another grant', () => {
    const pushes = MAX_AUDIT_LINES + 1;
    const held = acquireAs(ok(createPage(CONTAINER, { identity: LEAD }, T0)).record, LEAD, T0);
    let record = ok(release(held.record, held.proof, at(0, 30))).record;
    const transitions = record.audit;
    for (let i = 0; i < pushes; i++) {
      const outcome = auditRefusedPush(
        record,
        {
          identity: 'unknown pusher',
          grant: 1000 + i,
          detail: `server guard refused a push to main: Grant #${1000 + i} is not the current grant #1`,
        },
        at(1) + i,
      );
      assert.ok(!outcome.ok && outcome.record);
      record = outcome.record;
    }
    assert.deepEqual(record.audit.slice(0, -1), transitions, 'init, acquire and release are all still there');
    assert.deepEqual(lastAudit(record), {
      at: at(1) + pushes - 1,
      who: 'unknown pusher',
      action: 'push',
      grant: 1000 + pushes - 1,
      outcome: 'refused',
      count: pushes,
      since: at(1),
      detail: `server guard refused a push to main: Grant #${1000 + pushes - 1} is not the current grant #1`,
    });
    parseRecord(JSON.parse(JSON.stringify(record)), 'memory', CONTAINER, SETTINGS);
  });

  it('no number of refused attempts pushes out a transition: declared names vary at will (a client guard), and their section stays bounded', () => {
    const held = acquireAs(ok(createPage(CONTAINER, { identity: LEAD }, T0)).record, LEAD, T0);
    let record = ok(release(held.record, held.proof, at(0, 30))).record;
    const transitions = record.audit;
    for (let i = 0; i < 2 * MAX_REFUSAL_LINES; i++) {
      record = (auditRefusedPush(record, { identity: `p${i}@x`, grant: i, detail: 'x'.repeat(300) }, at(2) + i) as { record: LockRecord })
        .record;
    }
    assert.deepEqual(record.audit.slice(0, transitions.length), transitions, 'the transitions are still there');
    assert.equal(record.audit.filter(l => l.outcome === 'refused').length, MAX_REFUSAL_LINES);
    parseRecord(JSON.parse(JSON.stringify(record)), 'memory', CONTAINER, SETTINGS);
  });

  it('clear lines alone past the byte budget are all kept (never dropped silently), with the newest line', () => {
    const clears = Array.from({ length: 700 }, (_, i) => big(i, 'clear', 'done'));
    const last = big(1202, 'petition', 'done');
    const bounded = boundAudit([big(1201, 'petition', 'done'), ...clears, last]);
    assert.deepEqual(bounded, [...clears, last]);
    assert.ok(Buffer.byteLength(JSON.stringify(bounded)) > MAX_AUDIT_BYTES, 'past the budget: the docs say so');
  });
});

describe('lockRecord: leased ranges reclaimed on landing', () => {
  it('15–19 to ANA and 20–22 to BEN, 15, 16 and 20 minted: release returns 17–19 and 21–22 to the pool', () => {
    let record: LockRecord = { ...ok(createPage(CONTAINER, { identity: LEAD }, T0)).record, nextId: 15 };
    const lead = acquireAs(record, LEAD, T0);
    record = ok(leaseIds(lead.record, lead.proof, { to: ANA, count: 5, newIdentity: true }, at(0, 1))).record;
    record = ok(leaseIds(record, lead.proof, { to: BEN, count: 3, newIdentity: true }, at(0, 2))).record;
    const minted: number[] = [];
    for (const who of [ANA, ANA, BEN]) {
      const out = ok(nextId(record, { identity: who }, at(0, 3)));
      minted.push(out.value.id);
      record = out.record;
    }
    assert.deepEqual(minted, [15, 16, 20]);
    const released = ok(release(record, lead.proof, at(1)));
    assert.deepEqual(released.record.pool, [
      { start: 17, end: 19 },
      { start: 21, end: 22 },
    ]);
    assert.equal(released.value.reclaimed, 5);
    assert.equal(lastAudit(released.record).detail, 'nothing landed; reclaimed 5 unused identifiers');

    // The next lead leases them again, lowest first, before anything new.
    const next = acquireAs(released.record, BEN, at(2));
    const lease = ok(leaseIds(next.record, next.proof, { to: ANA, count: 6 }, at(2, 1)));
    assert.deepEqual(lease.value.spans, [
      { start: 17, end: 19 },
      { start: 21, end: 22 },
      { start: 23, end: 23 },
    ]);
    assert.deepEqual([lease.record.pool, lease.record.nextId], [[], 24]);
    assert.equal(lastAudit(lease.record).detail, `17-19, 21-22, 23 to ${ANA}`);
    // The lessee mints through the spans in order.
    let r = lease.record;
    const got: number[] = [];
    for (let i = 0; i < 6; i++) {
      const o = ok(nextId(r, { identity: ANA }, at(2, 2)));
      got.push(o.value.id);
      r = o.record;
    }
    assert.deepEqual(got, [17, 18, 19, 21, 22, 23]);
    refusedWith(nextId(r, { identity: ANA }, at(2, 3)), 'range-exhausted');
  });

  it('the lead mints from the pool before new identifiers', () => {
    const lead = acquireAs(emptyRecord(CONTAINER), LEAD, T0);
    let record = ok(leaseIds(lead.record, lead.proof, { to: ANA, count: 3, newIdentity: true }, at(0, 1))).record;
    record = ok(release(record, lead.proof, at(1))).record;
    const again = acquireAs(record, LEAD, at(2));
    const first = ok(nextId(again.record, { identity: LEAD, holder: again.proof }, at(2, 1)));
    assert.equal(first.value.id, 1);
    assert.deepEqual(first.record.pool, [{ start: 2, end: 3 }]);
  });
});
