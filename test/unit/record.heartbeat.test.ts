import { formatClock } from '../../src/core/format';
import * as assert from 'node:assert/strict';
import { HOUR, MINUTE, SECOND } from '../../src/core/clock';
import { clear, heartbeat, MAX_HOLD_MS } from '../../src/core/lockRecord';
import {
  ANA,
  LEAD,
  OP,
  SETTINGS,
  T0,
  acquireAs,
  at,
  fresh,
  lastAudit,
  leaseLost,
  ok,
  proofOf,
  settings,
} from '../helpers/lockRecordFixture';

describe('lockRecord: heartbeat', () => {
  it('extends the live lease to now + TTL', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { record, value } = ok(heartbeat(held.record, SETTINGS, held.proof, at(1)));
    assert.equal(value.expiresAt, at(3));
    assert.equal(record.holder?.expiresAt, at(3));
    assert.equal(record.holder?.grantedAt, T0, 'the grant time never moves');
    assert.equal(record.grant, 1, 'a heartbeat issues no grant');
  });

  it("extends by the grant's own TTL, whatever the container's: a 60 s grant stays a 60 s lease, a 6 h one a 6 h lease", () => {
    const short = acquireAs(fresh(), LEAD, T0, settings({ leaseTtlMs: MINUTE }));
    const beat = ok(heartbeat(short.record, SETTINGS, short.proof, T0 + 30 * SECOND));
    assert.equal(beat.value.expiresAt, T0 + 90 * SECOND, "not the container's 2 h");
    assert.equal(beat.record.holder?.ttlMs, MINUTE, 'the grant keeps its TTL');
    const long = acquireAs(fresh(), LEAD, T0, settings({ leaseTtlMs: 6 * HOUR }));
    assert.equal(ok(heartbeat(long.record, SETTINGS, long.proof, at(1))).value.expiresAt, at(7));
  });

  it("never shortens a lease (a record from before grants kept their TTL reads with the container's, maybe shorter)", () => {
    const held = acquireAs(fresh(), LEAD, T0, settings({ leaseTtlMs: 6 * HOUR }));
    const older = { ...held.record, holder: { ...held.record.holder!, ttlMs: 2 * HOUR } };
    assert.equal(ok(heartbeat(older, SETTINGS, held.proof, at(1))).value.expiresAt, at(6));
  });

  // The 24 h bound (TPS 7.2): never past grantedAt + 24 h, whatever the TTL and however late.
  const bound: { now: number; ttl: number; expected: number }[] = [
    { now: at(21, 59), ttl: 2 * HOUR, expected: at(23, 59) },
    { now: at(22), ttl: 2 * HOUR, expected: T0 + MAX_HOLD_MS },
    { now: at(22, 1), ttl: 2 * HOUR, expected: T0 + MAX_HOLD_MS },
    { now: at(23, 54), ttl: 2 * HOUR, expected: T0 + MAX_HOLD_MS }, // hour 23.9
    { now: at(23, 54), ttl: 6 * MINUTE, expected: T0 + MAX_HOLD_MS },
    { now: at(23, 54), ttl: 5 * MINUTE, expected: at(23, 59) },
    { now: T0 + MAX_HOLD_MS - 1, ttl: 24 * HOUR, expected: T0 + MAX_HOLD_MS },
  ];
  for (const b of bound) {
    it(`at +${((b.now - T0) / HOUR).toFixed(2)} h with TTL ${b.ttl / MINUTE} min → expires at +${((b.expected - T0) / HOUR).toFixed(2)} h`, () => {
      // The lease as earlier heartbeats left it: granted at hour 0, live for one more millisecond.
      const held = acquireAs(fresh(), LEAD, T0);
      const live = { ...held.record, holder: { ...held.record.holder!, expiresAt: b.now + 1, ttlMs: b.ttl } };
      const { value, record } = ok(heartbeat(live, SETTINGS, held.proof, b.now));
      assert.equal(value.expiresAt, b.expected);
      assert.ok(record.holder!.expiresAt <= record.holder!.grantedAt + MAX_HOLD_MS);
    });
  }

  it('heartbeats every 10 minutes for a day never push expiry past grantedAt + 24 h', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = held.record;
    let last = held.expiresAt;
    for (let m = 10; T0 + m * MINUTE < last; m += 10) {
      const { record: next, value } = ok(heartbeat(record, SETTINGS, held.proof, at(0, m)));
      assert.ok(value.expiresAt >= last, 'never shortens');
      assert.ok(value.expiresAt <= T0 + MAX_HOLD_MS, 'never past 24 h');
      record = next;
      last = value.expiresAt;
    }
    assert.equal(last, T0 + MAX_HOLD_MS);
    // Exactly at the bound the lease has expired and the next heartbeat finds it lost.
    leaseLost(heartbeat(record, SETTINGS, held.proof, T0 + MAX_HOLD_MS), 1);
  });

  const lost: {
    title: string;
    build: () => { record: ReturnType<typeof fresh>; proof: ReturnType<typeof proofOf> };
    now: number;
    grant: number;
    message: RegExp;
  }[] = [
    {
      title: 'expired, not superseded',
      now: at(2),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: h.record, proof: h.proof };
      },
      grant: 1,
      message: new RegExp(`expired at ${formatClock(at(2))}; a lapsed lease is never revived\\. Acquire it now`),
    },
    {
      title: 'superseded by a newer grant',
      now: at(3),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: acquireAs(h.record, ANA, at(2, 30)).record, proof: h.proof };
      },
      grant: 1,
      message: /grant #2 was issued since to ana@example\.com/,
    },
    {
      title: 'cleared by the operator',
      now: at(3),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: ok(clear(h.record, SETTINGS, { identity: OP, reason: 'gone' }, at(2, 30))).record, proof: h.proof };
      },
      grant: 1,
      message: /Your lease \(grant #1\) has ended: operator@example\.com cleared it at/,
    },
    {
      title: 'the wrong token for the live grant',
      now: at(1),
      build: () => {
        const h = acquireAs(fresh(), LEAD, T0);
        return { record: h.record, proof: { ...h.proof, tokenHash: proofOf(ANA, 1).tokenHash } };
      },
      grant: 1,
      message: /not live/,
    },
    {
      title: 'never held at all',
      now: at(1),
      build: () => ({ record: fresh(), proof: proofOf(LEAD, 1) }),
      grant: 1,
      message: /not live\)\. Acquire it now \(lockstep acquire\)/,
    },
  ];
  for (const l of lost) {
    it(`fails with LockLeaseLostError when the lease was ${l.title}`, () => {
      const { record, proof } = l.build();
      const error = leaseLost(heartbeat(record, SETTINGS, proof, l.now), l.grant);
      assert.match(error.message, l.message);
      assert.doesNotMatch(error.message, /[0-9a-f]{64}/);
    });
  }

  it('a lost lease is never revived: later heartbeats keep failing', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    for (const now of [at(2), at(2, 1), at(5)]) leaseLost(heartbeat(held.record, SETTINGS, held.proof, now), 1);
    assert.equal(held.record.holder?.expiresAt, at(2));
  });

  it('writes one audit line per run of heartbeats, with a count', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    let record = held.record;
    for (let m = 10; m <= 50; m += 10) record = ok(heartbeat(record, SETTINGS, held.proof, at(0, m))).record;
    assert.equal(record.audit.length, 2);
    assert.deepEqual(lastAudit(record), { at: at(0, 50), who: LEAD, action: 'heartbeat', grant: 1, outcome: 'done', count: 5 });
  });
});
