import * as assert from 'node:assert/strict';
import { formatClock } from '../../src/core/format';
import {
  acquire,
  adoptPage,
  afterClear,
  assign,
  clear,
  lapseMessage,
  lapseText,
  leaseIds,
  markDone,
  nextId,
  nextStep,
  petition,
  refusalText,
  release,
  withdraw,
} from '../../src/core/lockRecord';
import {
  ANA,
  BEN,
  CONTAINER,
  LEAD,
  OP,
  SETTINGS,
  T0,
  acquireAs,
  at,
  fresh,
  hex,
  leaseLost,
  ok,
  proofOf,
  refusedWith,
} from '../helpers/lockRecordFixture';

/**
 * Every refusal and every lapse in the words a user reads (issue #27, mutation testing): each case
 * of record/refusalText.ts reached through the transition that refuses, with its full sentence.
 * refusedWith already checks that the message is refusalText's rendering of the facts; these check
 * the rendering itself.
 */
describe('record: the words of every refusal', () => {
  const heldByLead = () => acquireAs(fresh(), LEAD, T0);

  it('already-holder, holder-cannot-petition, not-queued', () => {
    const held = heldByLead();
    const again = acquire(held.record, SETTINGS, { identity: LEAD, tokenHash: hex('x'), proofHash: hex('y') }, at(0, 1));
    assert.equal(
      refusedWith(again, 'already-holder').error.message,
      'You already hold the lock (grant #1) in another clone or session; work there, or let that lease expire.',
    );
    assert.equal(
      refusedWith(petition(held.record, { identity: LEAD }, at(0, 1)), 'holder-cannot-petition').error.message,
      'You hold the lock; there is nothing to petition for.',
    );
    assert.equal(refusedWith(withdraw(held.record, { identity: ANA }, at(0, 1)), 'not-queued').error.message, 'You are not in the queue.');
  });

  it("not-your-turn names whose window runs and until when, and the asker's next step", () => {
    const held = heldByLead();
    const queued = ok(petition(held.record, { identity: ANA }, at(0, 1))).record;
    const released = ok(release(queued, held.proof, at(1))).record;
    const outcome = acquire(released, SETTINGS, { identity: BEN, tokenHash: hex('b'), proofHash: hex('p') }, at(1, 5));
    const { error } = refusedWith(outcome, 'not-your-turn');
    assert.deepEqual(!outcome.ok && outcome.refusal, {
      reason: 'not-your-turn',
      turn: ANA,
      until: at(1, 15),
      next: { step: 'petition' },
    });
    assert.equal(error.message, `It is ${ANA}'s turn until ${formatClock(at(1, 15))}. Petition to join the queue (lockstep petition).`);
    assert.equal(
      refusalText({ reason: 'not-your-turn', turn: undefined, until: at(1, 15), next: { step: 'acquire' } }),
      `It is the queue head's turn until ${formatClock(at(1, 15))}. Acquire it now (lockstep acquire).`,
    );
  });

  it('already-queued with the next step', () => {
    const held = heldByLead();
    const queued = ok(petition(held.record, { identity: ANA }, at(0, 1))).record;
    assert.equal(
      refusedWith(petition(queued, { identity: ANA }, at(0, 2), SETTINGS), 'already-queued').error.message,
      'You are already in the queue at position 1. You are at position 1 of 1 in the queue: wait for your turn (lockstep wait).',
    );
  });

  it("not-holder: leasing identifiers, assigning and marking another's block done", () => {
    const held = heldByLead();
    const ana = proofOf(ANA, 1);
    assert.equal(
      refusedWith(leaseIds(held.record, ana, { to: BEN, count: 1, newIdentity: true }, at(0, 1), SETTINGS), 'not-holder').error.message,
      'Only the lead (the live holder) allocates identifiers. To become the lead: petition to join the queue (lockstep petition).',
    );
    assert.equal(
      refusedWith(assign(held.record, ana, { to: BEN, text: 'x', newIdentity: true }, at(0, 1), SETTINGS), 'not-holder').error.message,
      'Only the lead (the live holder) assigns blocks. To become the lead: petition to join the queue (lockstep petition).',
    );
    const block = ok(assign(held.record, held.proof, { to: ANA, text: 'docs', newIdentity: true }, at(0, 1))).record;
    const outcome = markDone(block, { identity: BEN, block: 1 }, at(0, 2));
    assert.equal(refusedWith(outcome, 'not-holder').error.message, `Only the lead (the live holder) or ${ANA} may mark block 1 done.`);
    assert.deepEqual(!outcome.ok && outcome.refusal, { reason: 'not-holder', what: 'done', block: 1, assignee: ANA });
  });

  it('no-range, range-exhausted, new-identity', () => {
    const held = heldByLead();
    assert.equal(
      refusedWith(nextId(held.record, { identity: ANA }, at(0, 1)), 'no-range').error.message,
      'You have no identifier range under the current grant; ask the lead to lease you one.',
    );
    const leased = ok(leaseIds(held.record, held.proof, { to: ANA, count: 1, newIdentity: true }, at(0, 1))).record;
    const minted = ok(nextId(leased, { identity: ANA }, at(0, 2))).record;
    assert.equal(
      refusedWith(nextId(minted, { identity: ANA }, at(0, 3)), 'range-exhausted').error.message,
      'Your identifier ranges are used up; ask the lead to lease you more.',
    );
    const outcome = assign(held.record, held.proof, { to: 'bne@example.com', text: 'x' }, at(0, 1));
    assert.equal(
      refusedWith(outcome, 'new-identity').error.message,
      'bne@example.com has never appeared on this lock page. Check the spelling; if bne@example.com is a new teammate, confirm with --new-identity.',
    );
    assert.deepEqual(!outcome.ok && outcome.refusal, { reason: 'new-identity', identity: 'bne@example.com' });
  });

  it('not-operator, reason-required and not-silent, for a clear and for an adoption', () => {
    const held = heldByLead();
    assert.equal(
      refusedWith(clear(held.record, SETTINGS, { identity: ANA, reason: 'x' }, at(3)), 'not-operator').error.message,
      `Only an operator may clear the lock; ${ANA} is not listed in .lockstep.json's operators.`,
    );
    assert.equal(
      refusedWith(adoptPage(CONTAINER, SETTINGS, { identity: ANA, reason: 'x', grantFloor: 1, nextIdFloor: 1 }, T0), 'not-operator').error
        .message,
      `Only an operator may adopt a lost lock page; ${ANA} is not listed in .lockstep.json's operators.`,
    );
    assert.equal(
      refusedWith(clear(held.record, SETTINGS, { identity: OP, reason: ' ' }, at(3)), 'reason-required').error.message,
      'Say why the lock is cleared (--reason TEXT); it goes into the audit trail.',
    );
    assert.equal(
      refusedWith(adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: '', grantFloor: 1, nextIdFloor: 1 }, T0), 'reason-required').error
        .message,
      'Say why the page is adopted (--reason TEXT); it goes into the audit trail.',
    );
    assert.equal(
      refusedWith(clear(fresh(), SETTINGS, { identity: OP, reason: 'x' }, at(3)), 'not-silent').error.message,
      'The lock is free; there is nothing to clear.',
    );
    assert.equal(
      refusedWith(clear(held.record, SETTINGS, { identity: OP, reason: 'x' }, at(1)), 'not-silent').error.message,
      `The holder ${LEAD} is live until ${formatClock(held.expiresAt)}; only a HOLDER SILENT lock may be cleared.`,
    );
  });

  it('invalid-request: each case in its own words', () => {
    const held = heldByLead();
    const words = (what: string) => {
      switch (what) {
        case 'identity':
          return refusalText({ reason: 'invalid-request', what, maxLength: 200 });
        case 'ttl':
          return refusalText({ reason: 'invalid-request', what, minMs: 60_000, maxMs: 86_400_000 });
        case 'id-count':
          return refusalText({ reason: 'invalid-request', what, max: 1_000_000 });
        case 'no-such-block':
          return refusalText({ reason: 'invalid-request', what, block: 4 });
        default:
          return refusalText({ reason: 'invalid-request', what: what as 'landed-commit' });
      }
    };
    assert.deepEqual(
      ['identity', 'ttl', 'landed-commit', 'landing', 'id-count', 'block-text', 'no-such-block', 'adopt-floors'].map(words),
      [
        "An identity must be 1 to 200 printable characters, without control or text-direction characters (usually an e-mail address); check LOCKSTEP_IDENTITY, else git's user.email.",
        'A lease lasts 60 to 86400 seconds; ask for a TTL in that range (acquire --ttl S), and heartbeat to keep a short one.',
        'The landed commit must be 7 to 64 lower-case hexadecimal digits.',
        'A landing names a branch and full commit ids (40 or 64 lower-case hexadecimal digits).',
        'The count must be a whole number from 1 to 1000000.',
        'Describe the block of work (--block TEXT).',
        'There is no open block 4 on the lock page; `lockstep status` lists the open blocks.',
        'The grant floor must be a whole number from 0 and the next identifier a whole number from 1.',
      ],
    );
    // And each reached through its transition, with its facts.
    const blockText = assign(held.record, held.proof, { to: LEAD, text: ' \u0007 ' }, at(0, 1));
    assert.equal(refusedWith(blockText, 'invalid-request').error.message, words('block-text'));
    const noBlock = markDone(held.record, { identity: LEAD, block: 4 }, at(0, 1));
    assert.equal(refusedWith(noBlock, 'invalid-request').error.message, words('no-such-block'));
    assert.deepEqual(!noBlock.ok && noBlock.refusal, { reason: 'invalid-request', what: 'no-such-block', block: 4 });
    const floors = adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'x', grantFloor: 0.5, nextIdFloor: 1 }, T0);
    assert.equal(refusedWith(floors, 'invalid-request').error.message, words('adopt-floors'));
    const count = leaseIds(held.record, held.proof, { to: LEAD, count: 0 }, at(0, 1));
    assert.deepEqual(!count.ok && count.refusal, { reason: 'invalid-request', what: 'id-count', max: 1_000_000 });
    const landed = release(held.record, held.proof, at(0, 1), { landed: 'ABC1234' });
    assert.equal(refusedWith(landed, 'invalid-request').error.message, words('landed-commit'));
  });
});

describe('record: the words of every lapse, and what follows a clear', () => {
  const heldFirst = () => acquireAs(fresh(), LEAD, T0);

  it('superseded: to someone else, to you elsewhere, or since released', () => {
    const first = heldFirst();
    const mine = acquireAs(first.record, LEAD, at(3));
    assert.equal(
      lapseMessage(mine.record, SETTINGS, LEAD, 1, at(3, 1)),
      'Your lease (grant #1) has ended: grant #2 was issued since to you in another clone or session. You hold the lock (grant #2) in another clone or session: work there, or let that lease expire.',
    );
    const ben = acquireAs(first.record, BEN, at(3));
    assert.equal(
      lapseMessage(ben.record, SETTINGS, LEAD, 1, at(3, 1)),
      `Your lease (grant #1) has ended: grant #2 was issued since to ${BEN}. Petition to join the queue (lockstep petition).`,
    );
    const freed = ok(release(ben.record, ben.proof, at(3, 2))).record;
    assert.equal(
      lapseMessage(freed, SETTINGS, LEAD, 1, at(3, 3)),
      'Your lease (grant #1) has ended: grant #2 was issued since. Acquire it now (lockstep acquire).',
    );
  });

  it('expired, cleared, not live; without the settings, the status is the next step', () => {
    const first = heldFirst();
    const expired = release(first.record, first.proof, at(3), { settings: SETTINGS });
    leaseLost(expired, 1);
    assert.equal(
      !expired.ok && expired.error.message,
      `Your lease (grant #1) expired at ${formatClock(first.expiresAt)}; a lapsed lease is never revived. Acquire it now (lockstep acquire).`,
    );
    const cleared = ok(clear(first.record, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).record;
    assert.deepEqual(
      [lapseMessage(cleared, SETTINGS, LEAD, 1, at(3, 1)), lapseMessage(cleared, undefined, LEAD, 1, at(3, 1))],
      [
        `Your lease (grant #1) has ended: ${OP} cleared it at ${formatClock(at(3))}. Acquire it now (lockstep acquire).`,
        `Your lease (grant #1) has ended: ${OP} cleared it at ${formatClock(at(3))}. See \`lockstep status\` for your next step.`,
      ],
    );
    assert.equal(
      lapseMessage(first.record, SETTINGS, ANA, 7, at(0, 1)),
      'You do not hold the lock (grant #7 is not live). Petition to join the queue (lockstep petition).',
    );
    assert.equal(
      lapseText({ why: 'superseded', grant: 1, current: 3, holder: null, next: { step: 'see-status' } }),
      'Your lease (grant #1) has ended: grant #3 was issued since. See `lockstep status` for your next step.',
    );
    assert.equal(nextStep(first.record, SETTINGS, ANA, at(0, 1)), 'petition to join the queue (lockstep petition)');
    assert.equal(nextStep(first.record, undefined, ANA, at(0, 1)), 'see `lockstep status` for your next step');
  });

  it('after a clear: the queue head has its turn, or the lock is free', () => {
    const first = heldFirst();
    assert.equal(
      afterClear(4, ANA),
      `Cleared grant #4; the audit trail says why. It is ${ANA}'s turn (first in the queue) to acquire it, within the handover window.`,
    );
    assert.equal(afterClear(4, null), 'Cleared grant #4; the audit trail says why. The lock is free: anyone may acquire it now.');
    const queued = ok(petition(first.record, { identity: ANA }, at(0, 1))).record;
    assert.deepEqual(ok(clear(queued, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).value, {
      clearedGrant: 1,
      reclaimed: 0,
      queueHead: ANA,
    });
    assert.equal(ok(clear(first.record, SETTINGS, { identity: OP, reason: 'gone' }, at(3))).value.queueHead, null);
  });
});
