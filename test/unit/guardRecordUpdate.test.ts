import * as assert from 'node:assert/strict';
import { HOUR, MINUTE, SECOND } from '../../src/core/clock';
import { checkRecordUpdate, DEFAULT_SKEW_MS, type RecordUpdateContext } from '../../src/core/chain/recordUpdate';
import * as protocol from '../../src/core/lockRecord';
import { MAX_HOLD_MS, type LockRecord } from '../../src/core/lockRecord';
import { hashProof, hashToken, pushProof } from '../../src/core/tokens';
import { ANA, at, BEN, CONTAINER, fresh, hex, LEAD, ok, OP, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * The server's check of the git driver's lock record: an update is accepted only when it is what
 * the pure transition of its audit line produces from the record before it. Each legal transition
 * is accepted (the control), and each forgery a push-only teammate could write is refused.
 */

const token = (who: string, grant: number) => hex(`owner:${who}:${grant}`);
const proofFor = (who: string, grant: number) => pushProof(token(who, grant), CONTAINER, grant);

/** A real acquisition: the record keeps the hashes of the token and of the push proof. */
function acquired(record: LockRecord, who: string, now: number, ttlMs = SETTINGS.leaseTtlMs): LockRecord {
  const grant = record.grant + 1;
  return ok(
    protocol.acquire(
      record,
      { ...SETTINGS, leaseTtlMs: ttlMs },
      {
        identity: who,
        tokenHash: hashToken(token(who, grant)),
        proofHash: hashProof(proofFor(who, grant)),
      },
      now,
    ),
  ).record;
}

const holderProof = (record: LockRecord) => ({
  identity: record.holder!.identity,
  tokenHash: record.holder!.tokenHash,
  grant: record.holder!.grant,
});

function context(now: number, extra: Partial<RecordUpdateContext> = {}): RecordUpdateContext {
  return { settings: SETTINGS, now, skewMs: DEFAULT_SKEW_MS, requireProof: true, pushed: {}, ...extra };
}
const withProof = (who: string, grant: number) => ({ pushed: { grant, proof: proofFor(who, grant) } });

describe('server guard: lock-record updates must be one legal transition', () => {
  const t = at(1);
  const held = acquired(fresh(), LEAD, at(0));

  describe('legal transitions are accepted (controls)', () => {
    it('a first acquire, and a takeover after the holder went silent', () => {
      assert.equal(checkRecordUpdate(fresh(), acquired(fresh(), LEAD, t), context(t)), undefined);
      const silent = at(3); // the 2 h lease ended at hour 2
      assert.equal(checkRecordUpdate(held, acquired(held, ANA, silent), context(silent)), undefined);
    });

    it("a release that names its landed commit, and a guard's audited refusal of a push (folded when repeated)", () => {
      const ctx = context(t, withProof(LEAD, 1));
      const landed = ok(protocol.release(held, holderProof(held), t, { landed: 'abc1234def56' })).record;
      assert.match(landed.audit[landed.audit.length - 1].detail ?? '', /^landed abc1234def56$/);
      assert.equal(checkRecordUpdate(held, landed, ctx), undefined);
      const refusal = { identity: ANA, grant: 0, detail: 'client guard refused a push to main: This clone does not hold the lock' };
      const once = protocol.auditRefusedPush(held, refusal, t).record!;
      assert.equal(checkRecordUpdate(held, once, context(t)), undefined, 'a push line needs no proof');
      const twice = protocol.auditRefusedPush(once, refusal, t + 1).record!;
      assert.equal(twice.audit.length, once.audit.length);
      assert.equal(twice.audit[twice.audit.length - 1].count, 2);
      assert.equal(checkRecordUpdate(once, twice, context(t)), undefined);
    });

    it('refuses a push line that changes anything but the audit, or claims a push was done', () => {
      const refusal = { identity: ANA, grant: 1, detail: 'server guard refused a push to main' };
      const line = protocol.auditRefusedPush(held, refusal, t).record!;
      const sneaky = { ...line, grant: 7 };
      assert.match(checkRecordUpdate(held, sneaky, context(t)) ?? '', /not what a refused push by ana/);
      const done = { ...line, audit: line.audit.map((l, i) => (i === line.audit.length - 1 ? { ...l, outcome: 'done' as const } : l)) };
      assert.match(checkRecordUpdate(held, done, context(t)) ?? '', /records only a refused push/);
    });

    it("an acquire with the holder's own lease length (lockstep acquire --ttl)", () => {
      assert.equal(checkRecordUpdate(fresh(), acquired(fresh(), LEAD, t, 30 * MINUTE), context(t)), undefined);
    });

    it("heartbeat, release, lease-ids, assign and the lead's next-id, each with the holder's proof", () => {
      const ctx = context(t, withProof(LEAD, 1));
      const proof = holderProof(held);
      assert.equal(checkRecordUpdate(held, ok(protocol.heartbeat(held, SETTINGS, proof, t)).record, ctx), undefined);
      assert.equal(checkRecordUpdate(held, ok(protocol.release(held, proof, t)).record, ctx), undefined);
      const leased = ok(protocol.leaseIds(held, proof, { to: ANA, count: 8, newIdentity: true }, t)).record;
      assert.equal(checkRecordUpdate(held, leased, ctx), undefined);
      assert.equal(
        checkRecordUpdate(held, ok(protocol.assign(held, proof, { to: ANA, text: 'parser', newIdentity: true }, t)).record, ctx),
        undefined,
      );
      assert.equal(checkRecordUpdate(held, ok(protocol.nextId(held, { identity: LEAD, holder: proof }, t)).record, ctx), undefined);
      // A lessee mints from its own range without any proof.
      assert.equal(checkRecordUpdate(leased, ok(protocol.nextId(leased, { identity: ANA }, t)).record, context(t)), undefined);
    });

    it("petition, withdraw and an operator's clear (done, and refused but audited) need no proof", () => {
      const asked = ok(protocol.petition(held, { identity: ANA, note: 'the parser' }, t)).record;
      assert.equal(checkRecordUpdate(held, asked, context(t)), undefined);
      assert.equal(checkRecordUpdate(asked, ok(protocol.withdraw(asked, { identity: ANA }, t)).record, context(t)), undefined);
      const late = at(5);
      assert.equal(
        checkRecordUpdate(held, ok(protocol.clear(held, SETTINGS, { identity: OP, reason: 'laptop died' }, late)).record, context(late)),
        undefined,
      );
      const refused = protocol.clear(held, SETTINGS, { identity: BEN, reason: 'me' }, late);
      assert.ok(!refused.ok && refused.record);
      assert.equal(checkRecordUpdate(held, refused.record!, context(late)), undefined);
    });

    it("a clear and a takeover that return the silent grant's never-minted identifiers to the pool", () => {
      const proof = holderProof(held);
      let leased = ok(protocol.leaseIds(held, proof, { to: ANA, count: 5, newIdentity: true }, t)).record;
      leased = ok(protocol.nextId(leased, { identity: ANA }, t)).record;
      const late = at(5);
      const cleared = ok(protocol.clear(leased, SETTINGS, { identity: OP, reason: 'laptop died' }, late)).record;
      assert.deepEqual(cleared.pool, [{ start: 2, end: 5 }]);
      assert.equal(checkRecordUpdate(leased, cleared, context(late)), undefined);
      const takeover = acquired(leased, BEN, late);
      assert.deepEqual(takeover.pool, [{ start: 2, end: 5 }]);
      assert.equal(checkRecordUpdate(leased, takeover, context(late)), undefined);
    });

    it('a release with a landing that records the leased identifiers used; the same line with other identifiers is refused', () => {
      const proof = holderProof(held);
      let leased = ok(protocol.leaseIds(held, proof, { to: ANA, count: 5, newIdentity: true }, t)).record;
      leased = ok(protocol.nextId(leased, { identity: ANA }, t)).record;
      const ctx = context(t, withProof(LEAD, 1));
      const landed = ok(protocol.release(leased, proof, t, { landed: 'abc1234def56' })).record;
      const line = landed.audit[landed.audit.length - 1];
      assert.equal(line.detail, 'landed abc1234def56; used leased identifiers 1; reclaimed 4 unused identifiers');
      assert.equal(checkRecordUpdate(leased, landed, ctx), undefined);
      const forged = {
        ...landed,
        audit: [
          ...landed.audit.slice(0, -1),
          { ...line, detail: 'landed abc1234def56; used leased identifiers 1-2; reclaimed 4 unused identifiers' },
        ],
      };
      assert.notEqual(checkRecordUpdate(leased, forged, ctx), undefined);
    });

    it('a release with nothing landed, which keeps the caution mark; the next with a landing ends it', () => {
      const late = at(5);
      const marked = acquired(held, BEN, late); // a takeover: caution on grant #1
      const ctx = context(late, withProof(BEN, 2));
      const empty = ok(protocol.release(marked, holderProof(marked), late)).record;
      assert.deepEqual(empty.caution, marked.caution);
      assert.equal(empty.audit[empty.audit.length - 1].detail, 'nothing landed');
      assert.equal(checkRecordUpdate(marked, empty, ctx), undefined);
      const landed = ok(protocol.release(marked, holderProof(marked), late, { landed: 'abc1234def56' })).record;
      assert.equal(landed.caution, null);
      assert.equal(checkRecordUpdate(marked, landed, ctx), undefined);
    });

    it("refused pushes presenting other grants fold into one line (the pusher's), and a heartbeat after them still folds: each is accepted", () => {
      const refusal = (grant: number) => ({
        identity: 'unknown pusher',
        grant,
        detail: `server guard refused a push to main: Grant #${grant} is not the current grant #1`,
      });
      const once = protocol.auditRefusedPush(held, refusal(41), t).record!;
      const twice = protocol.auditRefusedPush(once, refusal(42), t + 1).record!;
      assert.equal(twice.audit.length, once.audit.length);
      assert.deepEqual([twice.audit.at(-1)!.count, twice.audit.at(-1)!.grant, twice.audit.at(-1)!.since], [2, 42, t]);
      assert.equal(checkRecordUpdate(once, twice, context(t)), undefined);
      const ctx = context(t, withProof(LEAD, 1));
      const beat = ok(protocol.heartbeat(held, SETTINGS, holderProof(held), t)).record;
      const refusedAfter = protocol.auditRefusedPush(beat, refusal(43), t + 2).record!;
      const beatAgain = ok(protocol.heartbeat(refusedAfter, SETTINGS, holderProof(held), t + 3)).record;
      assert.equal(beatAgain.audit.at(-1)!.count, 2, 'the refusal did not break the run of heartbeats');
      assert.equal(checkRecordUpdate(refusedAfter, beatAgain, ctx), undefined);
      // A "fold" that also drops a transition line is not what the refusal writes.
      const dropping = { ...twice, audit: twice.audit.filter(l => l.action !== 'acquire') };
      assert.match(checkRecordUpdate(once, dropping, context(t)) ?? '', /not what a refused push by unknown pusher/);
    });

    it('folded heartbeats (one audit line with a count) are still one transition each', () => {
      const proof = holderProof(held);
      const once = ok(protocol.heartbeat(held, SETTINGS, proof, t)).record;
      const twice = ok(protocol.heartbeat(once, SETTINGS, proof, at(1, 10))).record;
      assert.equal(twice.audit.length, once.audit.length);
      assert.equal(checkRecordUpdate(once, twice, context(at(1, 10), withProof(LEAD, 1))), undefined);
    });
  });

  describe('the page is created once', () => {
    it("by lockstep init (createPage) or an operator's adopt; never by another transition, never twice", () => {
      const page = ok(protocol.createPage(CONTAINER, { identity: LEAD }, t)).record;
      assert.equal(checkRecordUpdate(null, page, context(t)), undefined);
      const adopted = ok(
        protocol.adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'the page was lost', grantFloor: 9, nextIdFloor: 40 }, t),
      ).record;
      assert.equal(checkRecordUpdate(null, adopted, context(t)), undefined);
      const byBen = ok(
        protocol.adoptPage(
          CONTAINER,
          { ...SETTINGS, operators: [BEN] },
          { identity: BEN, reason: 'mine', grantFloor: 0, nextIdFloor: 1 },
          t,
        ),
      ).record;
      assert.match(checkRecordUpdate(null, byBen, context(t)) ?? '', /not what adopt by ben/);
      assert.match(checkRecordUpdate(null, acquired(page, BEN, t), context(t)) ?? '', /created only by lockstep init/);
      assert.match(
        checkRecordUpdate(page, ok(protocol.createPage(CONTAINER, { identity: BEN }, t)).record, context(t)) ?? '',
        /created once/,
      );
    });

    it('a block is closed by its assignee without proof, by anyone else only as the proving lead', () => {
      const assigned = ok(protocol.assign(held, holderProof(held), { to: ANA, text: 'parser', newIdentity: true }, t)).record;
      const id = assigned.blocks[0].id;
      assert.equal(
        checkRecordUpdate(held, assigned, context(t, withProof(LEAD, 1))),
        undefined,
        'assign to a new identity (--new-identity)',
      );
      assert.equal(
        checkRecordUpdate(assigned, ok(protocol.markDone(assigned, { identity: ANA, block: id }, t)).record, context(t)),
        undefined,
      );
      const byLead = ok(protocol.markDone(assigned, { identity: LEAD, block: id, holder: holderProof(assigned) }, t)).record;
      assert.equal(checkRecordUpdate(assigned, byLead, context(t, withProof(LEAD, 1))), undefined);
      assert.match(checkRecordUpdate(assigned, byLead, context(t)) ?? '', /does not carry that holder's proof/);
      const byBen = { ...byLead, audit: byLead.audit.map((l, i) => (i === byLead.audit.length - 1 ? { ...l, who: BEN } : l)) };
      assert.match(
        checkRecordUpdate(assigned, byBen, context(t, withProof(LEAD, 1))) ?? '',
        /acts for the holder of grant #1, who is lead@example\.com/,
      );
    });
  });

  describe('forgeries are refused', () => {
    it('naming oneself holder with the same grant, with grant + 1 while the lock is live, or with a huge grant', () => {
      const sameGrant: LockRecord = {
        ...held,
        holder: { ...held.holder!, identity: BEN },
        audit: [...held.audit, { at: t, who: BEN, action: 'acquire', grant: 1, outcome: 'done' }],
      };
      assert.match(checkRecordUpdate(held, sameGrant, context(t)) ?? '', /not what acquire by ben/);
      const next = acquired({ ...held, holder: null }, BEN, t); // computed as if the live holder were not there
      assert.match(checkRecordUpdate(held, next, context(t)) ?? '', /not what acquire/);
      const huge: LockRecord = { ...next, grant: Number.MAX_SAFE_INTEGER, holder: { ...next.holder!, grant: Number.MAX_SAFE_INTEGER } };
      assert.ok(checkRecordUpdate(fresh(), huge, context(t)));
    });

    it("holder-only operations without the holder's proof, or with another grant's proof", () => {
      const proof = holderProof(held);
      const released = ok(protocol.release(held, proof, t)).record;
      assert.match(checkRecordUpdate(held, released, context(t)) ?? '', /does not carry that holder's proof/);
      assert.match(checkRecordUpdate(held, released, context(t, withProof(BEN, 1))) ?? '', /does not carry that holder's proof/);
      assert.match(
        checkRecordUpdate(held, released, context(t, { pushed: { grant: 2, proof: proofFor(LEAD, 2) } })) ?? '',
        /does not carry/,
      );
      const beat = ok(protocol.heartbeat(held, SETTINGS, proof, t)).record;
      assert.match(checkRecordUpdate(held, beat, context(t)) ?? '', /does not carry/);
      // Without required proofs (serverGuard off) the same heartbeat passes: the README says so.
      assert.equal(checkRecordUpdate(held, beat, context(t, { requireProof: false })), undefined);
    });

    it('a heartbeat past the 24 h cap, an edited queue, a dropped audit line, an extra field', () => {
      const proof = holderProof(held);
      const beat = ok(protocol.heartbeat(held, SETTINGS, proof, t)).record;
      const pastCap: LockRecord = { ...beat, holder: { ...beat.holder!, expiresAt: held.holder!.grantedAt + MAX_HOLD_MS + HOUR } };
      assert.ok(checkRecordUpdate(held, pastCap, context(t, withProof(LEAD, 1))));
      const two = ok(protocol.petition(ok(protocol.petition(held, { identity: ANA }, t)).record, { identity: BEN }, t)).record;
      const jumped: LockRecord = { ...two, queue: [two.queue[1], two.queue[0]] };
      assert.ok(checkRecordUpdate(ok(protocol.petition(held, { identity: ANA }, t)).record, jumped, context(t)));
      const dropped: LockRecord = { ...two, audit: two.audit.slice(1) };
      assert.ok(checkRecordUpdate(ok(protocol.petition(held, { identity: ANA }, t)).record, dropped, context(t)));
      const extra = { ...ok(protocol.petition(held, { identity: ANA }, t)).record, nextId: 1_000_000 };
      assert.ok(checkRecordUpdate(held, extra, context(t)));
    });

    it("one TTL per grant: an acquire of a lease outside 60 s to 24 h, an expiry the TTL does not give, a heartbeat by any TTL but the grant's", () => {
      const granted = acquired(fresh(), LEAD, t, 30 * MINUTE);
      // A lease shorter than the container's 60 s (seed 003's 1 s too), or past a day: outside the bounds.
      for (const ttlMs of [500, SECOND, 5 * SECOND, MINUTE - SECOND, MINUTE - 1, MAX_HOLD_MS + 1, MAX_HOLD_MS + SECOND]) {
        const odd: LockRecord = { ...granted, holder: { ...granted.holder!, expiresAt: t + ttlMs, ttlMs } };
        assert.match(checkRecordUpdate(fresh(), odd, context(t)) ?? '', /a lease of 60 s to 86400 s/, `${ttlMs} ms`);
      }
      // The bounds themselves are legal grants.
      for (const ttlMs of [MINUTE, MAX_HOLD_MS])
        assert.equal(checkRecordUpdate(fresh(), acquired(fresh(), LEAD, t, ttlMs), context(t)), undefined, `${ttlMs} ms`);
      const longer: LockRecord = { ...granted, holder: { ...granted.holder!, expiresAt: t + 2 * HOUR } };
      assert.match(checkRecordUpdate(fresh(), longer, context(t)) ?? '', /not what acquire by lead/);
      // A 60 s grant's heartbeat extends it by 60 s (the control), not by the container's 2 h.
      const short = acquired(fresh(), LEAD, t, MINUTE);
      const now = t + 30 * SECOND;
      const ctx = context(now, withProof(LEAD, 1));
      const beat = ok(protocol.heartbeat(short, SETTINGS, holderProof(short), now)).record;
      assert.equal(beat.holder!.expiresAt, now + MINUTE);
      assert.equal(checkRecordUpdate(short, beat, ctx), undefined);
      const stretched: LockRecord = { ...beat, holder: { ...beat.holder!, expiresAt: now + 2 * HOUR } };
      assert.match(checkRecordUpdate(short, stretched, ctx) ?? '', /not what heartbeat by lead/);
      assert.match(
        checkRecordUpdate(short, { ...stretched, holder: { ...stretched.holder!, ttlMs: 2 * HOUR } }, ctx) ?? '',
        /not what heartbeat by lead/,
      );
    });

    it('a holder stored before the 60 s floor (a 5 s grant) may still heartbeat by its own 5 s, and release; never by more', () => {
      const minute = acquired(fresh(), LEAD, t, MINUTE);
      const legacy: LockRecord = { ...minute, holder: { ...minute.holder!, expiresAt: t + 5 * SECOND, ttlMs: 5 * SECOND } };
      const now = t + 2 * SECOND;
      const ctx = context(now, withProof(LEAD, 1));
      const beat = ok(protocol.heartbeat(legacy, SETTINGS, holderProof(legacy), now)).record;
      assert.equal(beat.holder!.expiresAt, now + 5 * SECOND);
      assert.equal(checkRecordUpdate(legacy, beat, ctx), undefined);
      assert.match(
        checkRecordUpdate(legacy, { ...beat, holder: { ...beat.holder!, expiresAt: now + MINUTE } }, ctx) ?? '',
        /not what heartbeat by lead/,
      );
      const released = ok(protocol.release(legacy, holderProof(legacy), now)).record;
      assert.equal(checkRecordUpdate(legacy, released, ctx), undefined);
    });

    it('a clear claimed done by someone who is not an operator, or of a live holder', () => {
      const late = at(5);
      const done = ok(protocol.clear(held, SETTINGS, { identity: OP, reason: 'gone' }, late)).record;
      const byBen: LockRecord = { ...done, audit: done.audit.map((l, i) => (i === done.audit.length - 1 ? { ...l, who: BEN } : l)) };
      assert.ok(checkRecordUpdate(held, byBen, context(late)));
      const early = { ...done, audit: done.audit.map((l, i) => (i === done.audit.length - 1 ? { ...l, at: t } : l)) };
      assert.ok(checkRecordUpdate(held, early, context(t)), 'the holder was live at hour 1');
    });

    it("a clear or a takeover that drops the silent grant's never-minted identifiers instead of returning them", () => {
      let leased = ok(protocol.leaseIds(held, holderProof(held), { to: ANA, count: 5, newIdentity: true }, t)).record;
      leased = ok(protocol.nextId(leased, { identity: ANA }, t)).record;
      const late = at(5);
      const cleared = ok(protocol.clear(leased, SETTINGS, { identity: OP, reason: 'laptop died' }, late)).record;
      const retired: LockRecord = { ...cleared, pool: [] };
      assert.match(checkRecordUpdate(leased, retired, context(late)) ?? '', /not what clear by operator@example\.com/);
      // The old clear line (no word of the identifiers) with the old effect: refused too.
      const oldLine = {
        ...retired,
        audit: retired.audit.map((l, i) => (i === retired.audit.length - 1 ? { ...l, detail: `cleared ${LEAD}: laptop died` } : l)),
      };
      assert.ok(checkRecordUpdate(leased, oldLine, context(late)));
      const takeover = acquired(leased, BEN, late);
      assert.match(checkRecordUpdate(leased, { ...takeover, pool: [] }, context(late)) ?? '', /not what acquire by ben/);
    });

    it('a release that ends the caution mark without a landing, or claims nothing landed yet ends it', () => {
      const late = at(5);
      const marked = acquired(held, BEN, late);
      const ctx = context(late, withProof(BEN, 2));
      const empty = ok(protocol.release(marked, holderProof(marked), late)).record;
      assert.match(checkRecordUpdate(marked, { ...empty, caution: null }, ctx) ?? '', /not what release by ben/);
      // Dropping the words "nothing landed" (as an older client wrote it) does not make it a landing.
      const silentLine = {
        ...empty,
        caution: null,
        audit: empty.audit.map((l, i) => (i === empty.audit.length - 1 ? { ...l, detail: undefined } : l)),
      };
      assert.ok(checkRecordUpdate(marked, silentLine, ctx));
      // A release that names a landing yet keeps the mark is not what release writes either.
      const landed = ok(protocol.release(marked, holderProof(marked), late, { landed: 'abc1234def56' })).record;
      assert.ok(checkRecordUpdate(marked, { ...landed, caution: marked.caution }, ctx));
    });

    it("a transition dated outside the allowed skew of the server's clock", () => {
      const asked = ok(protocol.petition(held, { identity: ANA }, t)).record;
      assert.match(checkRecordUpdate(held, asked, context(t + DEFAULT_SKEW_MS + 1000)) ?? '', /dated -12\d s from the server's clock/);
      assert.equal(checkRecordUpdate(held, asked, context(t + DEFAULT_SKEW_MS - 1000)), undefined);
    });

    describe('server time decides liveness: a skew may only make the guard stricter', () => {
      const SECOND_MS = 1000;
      const expiry = held.holder!.expiresAt; // hour 2
      /** A record as the client wrote it at `lineAt`, checked by a server whose clock reads `now`. */
      const check = (before: LockRecord, after: LockRecord, now: number, extra: Partial<RecordUpdateContext> = {}) =>
        checkRecordUpdate(before, after, context(now, extra));

      it("an acquire dated ahead cannot take over a lease that is live by the server's clock (+115 s over 95 s left)", () => {
        const now = expiry - 95 * SECOND_MS;
        const takeover = acquired(held, BEN, now + 115 * SECOND_MS);
        assert.match(
          check(held, takeover, now) ?? '',
          /acquire by ben@example\.com is dated 115 s from the server's clock and is not legal by the server's clock/,
        );
        // One millisecond before the end by the server's clock, a line dated a second ahead still may not; at the end it may.
        assert.ok(check(held, acquired(held, BEN, expiry + SECOND_MS), expiry - 1));
        assert.equal(check(held, acquired(held, BEN, expiry + SECOND_MS), expiry), undefined);
      });

      it("controls: a takeover of a lease ended by the server's clock, dated ahead or behind within the skew", () => {
        const now = expiry + 10 * SECOND_MS;
        assert.equal(check(held, acquired(held, BEN, now + 30 * SECOND_MS), now), undefined, 'dated 30 s ahead');
        assert.equal(check(held, acquired(held, BEN, now - 5 * SECOND_MS), now), undefined, 'dated 5 s behind, still after the end');
        // Dated behind to before the end, the line's own time refuses it: the holder was live then.
        assert.match(check(held, acquired({ ...held, holder: null }, BEN, now - 20 * SECOND_MS), now) ?? '', /not what acquire by ben/);
      });

      it("a heartbeat or release dated behind cannot revive a lease that has ended by the server's clock", () => {
        const now = expiry + 60 * SECOND_MS;
        const lineAt = now - 100 * SECOND_MS; // 40 s before the end: live at the line's time
        const proof = holderProof(held);
        const beat = ok(protocol.heartbeat(held, SETTINGS, proof, lineAt)).record;
        assert.match(
          check(held, beat, now, withProof(LEAD, 1)) ?? '',
          /heartbeat by lead@example\.com is dated -100 s .* not legal by the server's clock/,
        );
        const released = ok(protocol.release(held, proof, lineAt)).record;
        assert.match(check(held, released, now, withProof(LEAD, 1)) ?? '', /not legal by the server's clock/);
        // Control: the same lines while the lease is live by the server's clock too.
        assert.equal(check(held, beat, expiry - 10 * SECOND_MS, withProof(LEAD, 1)), undefined);
        assert.equal(check(held, released, expiry - 10 * SECOND_MS, withProof(LEAD, 1)), undefined);
      });

      it('a clear dated ahead cannot silence a holder early; a refused attempt dated behind is only a refusal', () => {
        const cleared = ok(protocol.clear(held, SETTINGS, { identity: OP, reason: 'gone' }, expiry + 100 * SECOND_MS)).record;
        assert.match(
          check(held, cleared, expiry - 10 * SECOND_MS) ?? '',
          /clear by operator@example\.com is dated 110 s .* not legal by the server's clock/,
        );
        assert.equal(check(held, cleared, expiry + 30 * SECOND_MS), undefined, 'control: silent by both clocks');
        const attempt = protocol.clear(held, SETTINGS, { identity: OP, reason: 'gone' }, expiry - 30 * SECOND_MS);
        assert.ok(!attempt.ok && attempt.record);
        assert.equal(
          check(held, attempt.record!, expiry + 60 * SECOND_MS),
          undefined,
          'a refused clear line dated 90 s behind grants nothing',
        );
      });

      it("a waiter's acquire dated ahead cannot pass the queue head's window early", () => {
        const proof = holderProof(held);
        const queued = ok(protocol.petition(ok(protocol.petition(held, { identity: ANA }, t)).record, { identity: BEN }, t)).record;
        const released = ok(protocol.release(queued, proof, at(1, 30))).record;
        const windowEnd = at(1, 45); // the 15-minute window of ana, the queue head
        const early = acquired(released, BEN, windowEnd + 60 * SECOND_MS);
        assert.match(check(released, early, windowEnd - 50 * SECOND_MS) ?? '', /not legal by the server's clock/);
        assert.equal(check(released, early, windowEnd + 5 * SECOND_MS), undefined, "control: the window has passed by the server's clock");
        assert.equal(
          check(released, acquired(released, ANA, windowEnd - 50 * SECOND_MS), windowEnd - 100 * SECOND_MS),
          undefined,
          'control: the head acquires dated ahead within its window',
        );
      });
    });

    describe("the stored bytes are exactly what the client's codec writes", () => {
      it('a legal petition padded with whitespace, or with its fields reordered, is refused; the canonical bytes pass', () => {
        const asked = ok(protocol.petition(held, { identity: ANA }, t)).record;
        const canonical = JSON.stringify(asked);
        assert.equal(checkRecordUpdate(held, asked, context(t, { afterText: canonical })), undefined);
        assert.match(
          checkRecordUpdate(held, asked, context(t, { afterText: canonical + ' '.repeat(1000) })) ?? '',
          /not what petition by ana@example\.com at that time would write, byte for byte/,
        );
        assert.match(checkRecordUpdate(held, asked, context(t, { afterText: JSON.stringify(asked, null, 2) })) ?? '', /byte for byte/);
        const { audit, ...rest } = asked;
        assert.match(checkRecordUpdate(held, asked, context(t, { afterText: JSON.stringify({ audit, ...rest }) })) ?? '', /byte for byte/);
      });
    });

    it("when the server knows the pusher, a transition in anyone else's name", () => {
      const asked = ok(protocol.petition(held, { identity: ANA }, t)).record;
      assert.equal(checkRecordUpdate(held, asked, context(t, { pusher: ANA })), undefined);
      assert.match(
        checkRecordUpdate(held, asked, context(t, { pusher: BEN })) ?? '',
        /in the name of ana@example\.com, but the server knows the pusher as ben@example\.com/,
      );
    });

    it('a record with no audit line, or an action the protocol does not know', () => {
      assert.match(checkRecordUpdate(held, { ...held, audit: [] }, context(t)) ?? '', /no audit line/);
      const odd = { ...held, audit: [...held.audit, { at: t, who: ANA, action: 'promote' as never, grant: 1, outcome: 'done' as const }] };
      assert.match(checkRecordUpdate(held, odd, context(t)) ?? '', /not one the protocol knows/);
    });
  });
});
