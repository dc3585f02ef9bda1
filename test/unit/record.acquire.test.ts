import { formatClock } from '../../src/core/format';
import * as assert from 'node:assert/strict';
import { HOUR, MINUTE, SECOND } from '../../src/core/clock';
import { acquire, MAX_HOLD_MS, MIN_LEASE_TTL_MS, mayAcquire, petition, release, turnAt, type LockRecord } from '../../src/core/lockRecord';
import type { RefusalReason } from '../../src/core/errors';
import {
  ANA,
  BEN,
  CYD,
  LEAD,
  SETTINGS,
  T0,
  acquireAs,
  at,
  fresh,
  hex,
  lastAudit,
  ok,
  refusedWith,
  settings,
  tryAcquire,
} from '../helpers/lockRecordFixture';

const WINDOW = SETTINGS.windowMs;

function queued(record: LockRecord, now: number, ...who: string[]): LockRecord {
  return who.reduce((r, identity) => ok(petition(r, { identity }, now)).record, record);
}

/** LEAD holds from hour 0 and releases at hour 1 with ANA, BEN, CYD queued in that order. */
function releasedWithQueue(): LockRecord {
  const held = acquireAs(fresh(), LEAD, T0);
  const withQueue = queued(held.record, at(0, 10), ANA, BEN, CYD);
  return ok(release(withQueue, held.proof, at(1))).record;
}

describe('lockRecord: acquire', () => {
  it('grants #1 on an empty record with expiry now + TTL and records holder, time and hashes', () => {
    const { record, value } = ok(acquire(fresh(), SETTINGS, { identity: LEAD, tokenHash: hex('t'), proofHash: hex('p') }, T0));
    assert.deepEqual(value, { grant: 1, expiresAt: T0 + 2 * HOUR });
    assert.equal(record.grant, 1);
    assert.deepEqual(record.holder, {
      identity: LEAD,
      grant: 1,
      tokenHash: hex('t'),
      proofHash: hex('p'),
      grantedAt: T0,
      expiresAt: T0 + 2 * HOUR,
      ttlMs: 2 * HOUR,
    });
    assert.equal(record.releasedAt, null);
    assert.deepEqual(lastAudit(record), { at: T0, who: LEAD, action: 'acquire', grant: 1, outcome: 'done' });
  });

  it("a grant keeps the TTL it was acquired with, and a TTL asked for overrides the container's", () => {
    const { record, value } = ok(
      acquire(fresh(), SETTINGS, { identity: LEAD, tokenHash: hex('t'), proofHash: hex('p'), ttlMs: 60 * SECOND }, T0),
    );
    assert.equal(value.expiresAt, T0 + 60 * SECOND);
    assert.equal(record.holder?.ttlMs, 60 * SECOND);
    assert.equal(
      acquireAs(fresh(), LEAD, T0, settings({ leaseTtlMs: MAX_HOLD_MS })).expiresAt,
      T0 + MAX_HOLD_MS,
      '24 h is the longest lease',
    );
    assert.equal(MIN_LEASE_TTL_MS, 60 * SECOND, "the floor is the container's (leaseTtlSeconds starts at 60)");
    const longest = ok(
      acquire(fresh(), SETTINGS, { identity: LEAD, tokenHash: hex('t'), proofHash: hex('p'), ttlMs: 86_400 * SECOND }, T0),
    );
    assert.equal(longest.value.expiresAt, T0 + MAX_HOLD_MS, '86,400 s asked for is granted');
  });

  // Past 24 h it was capped silently; now refused, like one below the container's floor of 60 s (seed 003's 1 s too).
  for (const ttlMs of [0, SECOND, 59 * SECOND, MIN_LEASE_TTL_MS - 1, MAX_HOLD_MS + 1, 30 * HOUR, MIN_LEASE_TTL_MS + 0.5, Number.NaN]) {
    it(`refuses a lease of ${ttlMs} ms, outside 60 s to 24 h: 'invalid-request', writing nothing`, () => {
      const { error, record } = refusedWith(
        acquire(fresh(), SETTINGS, { identity: LEAD, tokenHash: hex('t'), proofHash: hex('p'), ttlMs }, T0),
        'invalid-request',
      );
      assert.equal(record, undefined);
      assert.match(error.message, /60 to 86400 seconds; .*--ttl/);
    });
  }

  const refusals: { title: string; setup: () => LockRecord; who: string; now: number; reason: RefusalReason }[] = [
    {
      title: 'another identity while the holder is live',
      setup: () => acquireAs(fresh(), LEAD, T0).record,
      who: ANA,
      now: at(1),
      reason: 'held-by-other',
    },
    {
      title: 'the holder again (another clone or session)',
      setup: () => acquireAs(fresh(), LEAD, T0).record,
      who: LEAD,
      now: at(1),
      reason: 'already-holder',
    },
    {
      title: 'one millisecond before expiry',
      setup: () => acquireAs(fresh(), LEAD, T0).record,
      who: ANA,
      now: at(2) - 1,
      reason: 'held-by-other',
    },
    {
      title: "a non-queued person in the head's window after a release",
      setup: releasedWithQueue,
      who: LEAD,
      now: at(1, 1),
      reason: 'not-your-turn',
    },
    {
      title: "the second in the queue in the head's window",
      setup: releasedWithQueue,
      who: BEN,
      now: at(1) + WINDOW - 1,
      reason: 'not-your-turn',
    },
    {
      title: 'the third in the queue in window 2',
      setup: releasedWithQueue,
      who: CYD,
      now: at(1) + 2 * WINDOW - 1,
      reason: 'not-your-turn',
    },
    { title: 'an empty identity', setup: fresh, who: ' ', now: T0, reason: 'invalid-request' },
    { title: 'an identity with a control character', setup: fresh, who: 'a\nb@example.com', now: T0, reason: 'invalid-request' },
    { title: 'an identity longer than 200 characters', setup: fresh, who: 'x'.repeat(201), now: T0, reason: 'invalid-request' },
  ];
  for (const c of refusals) {
    it(`refuses ${c.title}: '${c.reason}', writing nothing`, () => {
      const before = c.setup();
      const outcome = tryAcquire(before, c.who, c.now);
      const { record } = refusedWith(outcome, c.reason);
      assert.equal(record, undefined, 'an acquire refusal is not persisted');
    });
  }

  it('the refusal message names the holder and when it expires, never a hash', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { error } = refusedWith(tryAcquire(held.record, ANA, at(1)), 'held-by-other');
    assert.match(error.message, /lead@example\.com/);
    assert.ok(error.message.includes(`until ${formatClock(at(2))}.`), error.message);
    assert.match(error.message, /Petition to join the queue \(lockstep petition\)/);
    assert.doesNotMatch(error.message, /[0-9a-f]{64}/);
  });

  it('is allowed at the exact expiry instant (expiry is exclusive) and takes over with grant + 1', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const { record, value } = ok(tryAcquire(held.record, ANA, at(2)));
    assert.equal(value.grant, 2);
    assert.equal(record.holder?.identity, ANA);
    assert.match(lastAudit(record).detail ?? '', /took over from lead@example\.com \(grant #1/);
  });

  it('a silent holder may re-acquire when nobody is queued, but gets a new grant', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const again = acquireAs(held.record, LEAD, at(3));
    assert.equal(again.record.grant, 2);
    assert.notEqual(again.proof.tokenHash, held.proof.tokenHash);
  });

  it("drops the previous grant's ranges, keeps its blocks (until marked done), never lowers nextId", () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const withWork: LockRecord = {
      ...held.record,
      nextId: 11,
      ranges: [{ to: ANA, start: 1, end: 10, next: 4, grant: 1, at: T0 }],
      blocks: [{ id: 1, to: ANA, text: 'parser', grant: 1, at: T0 }],
      lastBlock: 1,
    };
    const next = acquireAs(withWork, ANA, at(2)).record;
    assert.deepEqual(next.ranges, []);
    assert.deepEqual(next.blocks, withWork.blocks);
    assert.equal(next.nextId, 11);
  });

  it("removes the acquirer's own petition and keeps the others in order", () => {
    const released = releasedWithQueue();
    const { record } = acquireAs(released, ANA, at(1, 1));
    assert.deepEqual(
      record.queue.map(p => p.identity),
      [BEN, CYD],
    );
  });

  it('grants keep counting across release and re-acquire: 1, 2, 3, …', () => {
    let record = fresh();
    for (let i = 1; i <= 5; i++) {
      const held = acquireAs(record, LEAD, at(i));
      assert.equal(held.record.grant, i);
      record = ok(release(held.record, held.proof, at(i, 30))).record;
      assert.equal(record.grant, i, 'release keeps the grant counter');
    }
  });
});

describe('lockRecord: handover windows (turnAt / mayAcquire)', () => {
  it('with no holder and no release ever, anyone may acquire, queued or not', () => {
    const record = queued(fresh(), T0, ANA);
    assert.deepEqual(turnAt(record, SETTINGS, T0), { eligible: [] });
    assert.ok(mayAcquire(record, SETTINGS, BEN, T0));
  });

  it('nobody may acquire while the holder is live, not even the queue head', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const record = queued(held.record, at(0, 1), ANA);
    assert.deepEqual(turnAt(record, SETTINGS, at(1)), { eligible: [] });
    assert.equal(mayAcquire(record, SETTINGS, ANA, at(1)), false);
  });

  it('after a release with an empty queue, anyone may at once', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const record = ok(release(held.record, held.proof, at(1))).record;
    assert.ok(mayAcquire(record, SETTINGS, CYD, at(1)));
  });

  // Released at hour 1; queue ANA, BEN, CYD; 15 min windows.
  const windows: { title: string; now: number; eligible: string[]; current?: { identity: string; endsAt: number } }[] = [
    { title: 'window 1 opens at the release: head alone', now: at(1), eligible: [ANA], current: { identity: ANA, endsAt: at(1) + WINDOW } },
    {
      title: 'last instant of window 1: head alone',
      now: at(1) + WINDOW - 1,
      eligible: [ANA],
      current: { identity: ANA, endsAt: at(1) + WINDOW },
    },
    {
      title: 'window 2: head or second',
      now: at(1) + WINDOW,
      eligible: [ANA, BEN],
      current: { identity: BEN, endsAt: at(1) + 2 * WINDOW },
    },
    {
      title: 'window 3: any of the three',
      now: at(1) + 2 * WINDOW + 1,
      eligible: [ANA, BEN, CYD],
      current: { identity: CYD, endsAt: at(1) + 3 * WINDOW },
    },
    { title: 'after all windows: anyone', now: at(1) + 3 * WINDOW, eligible: [] },
    { title: 'long after: anyone', now: at(9), eligible: [] },
  ];
  for (const w of windows) {
    it(w.title, () => {
      const record = releasedWithQueue();
      const turn = turnAt(record, SETTINGS, w.now);
      assert.deepEqual(turn.eligible, w.eligible);
      assert.deepEqual(turn.current, w.current);
      for (const who of [LEAD, ANA, BEN, CYD]) {
        assert.equal(mayAcquire(record, SETTINGS, who, w.now), w.eligible.length === 0 || w.eligible.includes(who), who);
      }
    });
  }

  it('the window passes to the next waiter: BEN acquires in window 2 with grant 2', () => {
    const record = releasedWithQueue();
    refusedWith(tryAcquire(record, BEN, at(1) + WINDOW - 1), 'not-your-turn');
    const { record: next, value } = ok(tryAcquire(record, BEN, at(1) + WINDOW));
    assert.equal(value.grant, 2);
    assert.deepEqual(
      next.queue.map(p => p.identity),
      [ANA, CYD],
    );
  });

  it('after every window, a non-queued person acquires and the queue stays', () => {
    const record = releasedWithQueue();
    const { record: next } = ok(tryAcquire(record, LEAD, at(1) + 3 * WINDOW));
    assert.equal(next.holder?.identity, LEAD);
    assert.deepEqual(
      next.queue.map(p => p.identity),
      [ANA, BEN, CYD],
    );
  });

  it('a silent holder opens the windows at its expiry, not at its last heartbeat', () => {
    const held = acquireAs(fresh(), LEAD, T0);
    const record = queued(held.record, at(0, 5), ANA, BEN);
    const expiry = held.expiresAt;
    assert.deepEqual(turnAt(record, SETTINGS, expiry).eligible, [ANA]);
    assert.deepEqual(turnAt(record, SETTINGS, expiry + WINDOW).eligible, [ANA, BEN]);
    assert.deepEqual(turnAt(record, SETTINGS, expiry + 2 * WINDOW).eligible, []);
    refusedWith(tryAcquire(record, CYD, expiry + WINDOW), 'not-your-turn');
    refusedWith(tryAcquire(record, LEAD, expiry + 1), 'not-your-turn');
  });

  it('a refusal during a window names whose turn it is and until when', () => {
    const { error } = refusedWith(tryAcquire(releasedWithQueue(), CYD, at(1, 20)), 'not-your-turn');
    assert.match(error.message, /ben@example\.com/);
    assert.ok(error.message.includes(`until ${formatClock(at(1, 30))}.`), error.message);
  });

  it('window length follows the settings', () => {
    const s = settings({ windowMs: 2 * MINUTE });
    const record = releasedWithQueue();
    assert.deepEqual(turnAt(record, s, at(1, 2)).eligible, [ANA, BEN]);
    assert.deepEqual(turnAt(record, s, at(1, 6)).eligible, []);
  });
});
