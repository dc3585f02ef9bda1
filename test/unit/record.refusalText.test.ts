import * as assert from 'node:assert/strict';
import { formatClock } from '../../src/core/format';
import { acquire, clear, heartbeat, nextStepText, petition, refusalText, release } from '../../src/core/lockRecord';
import { ANA, BEN, LEAD, OP, SETTINGS, T0, acquireAs, at, fresh, hex, leaseLost, ok, refusedWith } from '../helpers/lockRecordFixture';

/**
 * Refusals come back as a reason plus facts (record/refusal.ts) and become words in one place
 * (record/refusalText.ts). Every refusal test checks, through refusedWith and leaseLost, that the
 * message is the rendering of the facts; these check the facts themselves and a few renderings.
 */
describe('record: refusals as facts, worded in refusalText', () => {
  it('held-by-other carries the holder, its grant, when the lease ends and the asker’s next step', () => {
    const { record, expiresAt } = acquireAs(fresh(), LEAD, T0);
    const outcome = acquire(record, SETTINGS, { identity: ANA, tokenHash: hex('a'), proofHash: hex('p') }, at(0, 10));
    const { error } = refusedWith(outcome, 'held-by-other');
    assert.deepEqual(!outcome.ok && outcome.refusal, {
      reason: 'held-by-other',
      holder: LEAD,
      grant: 1,
      until: expiresAt,
      next: { step: 'petition' },
    });
    assert.equal(
      error.message,
      `The lock is held by ${LEAD} (grant #1) until ${formatClock(expiresAt)}. Petition to join the queue (lockstep petition).`,
    );
  });

  it('one code, several cases: invalid-request tells them apart with what, and the facts carry the limits', () => {
    const outcome = acquire(fresh(), SETTINGS, { identity: ANA, tokenHash: hex('a'), proofHash: hex('p'), ttlMs: 1000 }, T0);
    refusedWith(outcome, 'invalid-request');
    assert.deepEqual(!outcome.ok && outcome.refusal, { reason: 'invalid-request', what: 'ttl', minMs: 60_000, maxMs: 86_400_000 });
    const nameless = acquire(fresh(), SETTINGS, { identity: ' ', tokenHash: hex('a'), proofHash: hex('p') }, T0);
    refusedWith(nameless, 'invalid-request');
    assert.deepEqual(!nameless.ok && nameless.refusal, { reason: 'invalid-request', what: 'identity', maxLength: 200 });
  });

  it('a refused clear carries its facts and its audit line', () => {
    const { record, expiresAt } = acquireAs(fresh(), LEAD, T0);
    const outcome = clear(record, SETTINGS, { identity: OP, reason: 'gone' }, at(0, 5));
    const { record: audited } = refusedWith(outcome, 'not-silent');
    assert.deepEqual(!outcome.ok && outcome.refusal, { reason: 'not-silent', holder: { identity: LEAD, until: expiresAt } });
    assert.equal(audited?.audit.at(-1)?.outcome, 'refused');
  });

  it('already-queued names the position, and the next step only when the settings are known', () => {
    const queued = ok(petition(acquireAs(fresh(), LEAD, T0).record, { identity: ANA }, at(0, 1))).record;
    const withSettings = petition(queued, { identity: ANA }, at(0, 2), SETTINGS);
    refusedWith(withSettings, 'already-queued');
    assert.deepEqual(!withSettings.ok && withSettings.refusal, {
      reason: 'already-queued',
      position: 1,
      next: { step: 'wait', position: 1, of: 1 },
    });
    const without = petition(queued, { identity: ANA }, at(0, 2));
    assert.equal(!without.ok && without.error.message, 'You are already in the queue at position 1.');
  });

  it('a lapse says why the grant is no longer live: expired, superseded, released', () => {
    const first = acquireAs(fresh(), LEAD, T0);
    const expired = heartbeat(first.record, SETTINGS, first.proof, at(3));
    leaseLost(expired, 1);
    assert.deepEqual(!expired.ok && expired.lapse, { why: 'expired', grant: 1, at: first.expiresAt, next: { step: 'acquire' } });

    const taken = acquireAs(first.record, BEN, at(3));
    const superseded = heartbeat(taken.record, SETTINGS, first.proof, at(3, 1));
    leaseLost(superseded, 1);
    assert.deepEqual(!superseded.ok && superseded.lapse, {
      why: 'superseded',
      grant: 1,
      current: 2,
      holder: { identity: BEN, you: false },
      next: { step: 'petition' },
    });

    const released = ok(release(taken.record, taken.proof, at(3, 2))).record;
    const after = release(released, taken.proof, at(3, 3), { settings: SETTINGS });
    leaseLost(after, 2);
    assert.deepEqual(!after.ok && after.lapse, { why: 'released', grant: 2, next: { step: 'acquire' } });
    assert.equal(!after.ok && after.error.message, 'Your lease (grant #2) has ended: it was released. Acquire it now (lockstep acquire).');
  });

  it('renders every next step as advice that reads after a colon', () => {
    assert.deepEqual(
      [
        nextStepText({ step: 'work-elsewhere', grant: 3 }),
        nextStepText({ step: 'see-status' }),
        nextStepText({ step: 'acquire' }),
        nextStepText({ step: 'wait', position: 2, of: 3 }),
        nextStepText({ step: 'petition' }),
      ],
      [
        'you hold the lock (grant #3) in another clone or session: work there, or let that lease expire',
        'see `lockstep status` for your next step',
        'acquire it now (lockstep acquire)',
        'you are at position 2 of 3 in the queue: wait for your turn (lockstep wait)',
        'petition to join the queue (lockstep petition)',
      ],
    );
    assert.equal(refusalText({ reason: 'not-holder', what: 'push', detail: 'no grant' }), 'Push refused: no grant');
  });
});
