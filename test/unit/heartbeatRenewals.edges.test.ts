import * as assert from 'node:assert/strict';
import { formatClock } from '../../src/core/format';
import {
  checkRenewals,
  coalescedStep,
  MAX_RENEWALS_PER_STEP,
  replayRenewals,
  witnessedInRun,
} from '../../src/core/chain/heartbeatRenewals';
import { type ChainStep, digestOf } from '../../src/core/chain/signedChain';
import * as protocol from '../../src/core/lockRecord';
import type { LockRecord } from '../../src/core/lockRecord';
import { encodeRecord } from '../../src/core/recordCodec';
import { acquireAs, at, CONTAINER, LEAD, ok, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * The edges of coalesced heartbeats (heartbeatRenewals.ts): when a heartbeat may replace the
 * newest step (the window's second step, a step that does not continue the one before, a refused
 * heartbeat, equal times, the bound on a run), each reason a replay gives with its words, and where
 * a witness stands. Fixtures are built inside each test.
 */

/** lead holding grant 1 from 01:00, and `n` heartbeats of it every minute. */
function hold(n: number) {
  const created = ok(protocol.createPage(CONTAINER, { identity: LEAD }, at(0))).record;
  const held = acquireAs(created, LEAD, at(1));
  const beats: LockRecord[] = [];
  for (let i = 1; i <= n; i++) beats.push(ok(protocol.heartbeat(beats.at(-1) ?? held.record, SETTINGS, held.proof, at(1, i))).record);
  return { created, held: held.record, beats };
}
/** The window [the acquire (checkpoint), `tip`'s record continuing it]. */
function window(held: LockRecord, tip: LockRecord, extra: Partial<ChainStep> = {}): ChainStep[] {
  const first: ChainStep = { p: 'e'.repeat(64), r: encodeRecord(held), s: 'sig' };
  return [first, { p: digestOf(first.r), r: encodeRecord(tip), s: 'sig', ...extra }];
}
const relabel = (record: LockRecord, line: Partial<protocol.AuditLine>): string =>
  encodeRecord({ ...record, audit: [...record.audit.slice(0, -1), { ...record.audit.at(-1)!, ...line }] });
const good = { status: 'G', signer: LEAD } as const;

describe('heartbeats coalesce: edges', () => {
  it('the second step of a window may be replaced; the step to write continues its p and lists both times', () => {
    const { held, beats } = hold(2);
    const steps = window(held, beats[0]);
    assert.deepEqual(coalescedStep(steps, encodeRecord(beats[1])), { p: digestOf(encodeRecord(held)), h: [at(1, 1), at(1, 2)] });
  });

  it('does not coalesce over a step that does not continue the one before, a refused heartbeat, or a time not later', () => {
    const { held, beats } = hold(2);
    assert.equal(coalescedStep(window(held, beats[0], { p: 'f'.repeat(64) }), encodeRecord(beats[1])), undefined);
    assert.equal(coalescedStep(window(held, beats[0]), relabel(beats[1], { outcome: 'refused' })), undefined);
    assert.equal(coalescedStep(window(held, beats[0]), relabel(beats[1], { at: at(1, 1) })), undefined, 'the same time');
  });

  it('a run may reach MAX_RENEWALS_PER_STEP heartbeats, not more', () => {
    const { held, beats } = hold(2);
    const times = Array.from({ length: MAX_RENEWALS_PER_STEP - 1 }, (_, i) => at(0) + i);
    const run = coalescedStep(window(held, beats[0], { h: times }), encodeRecord(beats[1]));
    assert.equal(run?.h.length, MAX_RENEWALS_PER_STEP);
    assert.equal(coalescedStep(window(held, beats[0], { h: [...times, times.at(-1)! + 1] }), encodeRecord(beats[1])), undefined);
  });

  it('a replay says which heartbeat is not legal and why, keeping the records before it', () => {
    const { created, held, beats } = hold(2);
    const when = (t: number, i: number, n: number) => `its heartbeat at ${formatClock(t)} (${i} of ${n})`;
    assert.deepEqual(replayRenewals(created, [at(1, 1), at(1, 2)], good, SETTINGS), [
      { text: '', why: `${when(at(1, 1), 1, 2)} renews no lease: the record before has no holder.` },
    ]);
    assert.deepEqual(replayRenewals(held, [at(1, 1), at(1, 1)], good, SETTINGS), [
      { text: encodeRecord(beats[0]), why: undefined },
      { text: '', why: `${when(at(1, 1), 2, 2)} is not later than the one before it.` },
    ]);
    assert.deepEqual(replayRenewals(held, [at(1, 1), at(9)], good, SETTINGS), [
      { text: encodeRecord(beats[0]), why: undefined },
      { text: '', why: `${when(at(9), 2, 2)} renews a lease that is not live (grant #1).` },
    ]);
    assert.deepEqual(replayRenewals(held, [at(1, 1), at(1, 2)], good, SETTINGS), [
      { text: encodeRecord(beats[0]), why: undefined },
      { text: encodeRecord(beats[1]), why: undefined },
    ]);
  });

  it('a coalesced step lists 2 to MAX_RENEWALS_PER_STEP times', () => {
    const { created, held, beats } = hold(2);
    assert.equal(
      checkRenewals(held, encodeRecord(beats[0]), [at(1, 1)], good, SETTINGS),
      `a coalesced step stands for 2 to ${MAX_RENEWALS_PER_STEP} heartbeats; this one lists 1.`,
    );
    const many = (n: number) => Array.from({ length: n }, (_, i) => at(1, 1) + i);
    assert.match(checkRenewals(created, '', many(MAX_RENEWALS_PER_STEP + 1), good, SETTINGS) ?? '', /this one lists 257\./);
    assert.match(checkRenewals(created, '', many(MAX_RENEWALS_PER_STEP), good, SETTINGS) ?? '', /renews no lease/);
    assert.equal(checkRenewals(held, encodeRecord(beats[1]), [at(1, 1), at(1, 2)], good, SETTINGS), undefined);
  });

  it('a witness stands in a run only as one of its replaced heartbeats: not its own record, not without a holder', () => {
    const { created, held, beats } = hold(3);
    const h = [at(1, 1), at(1, 2), at(1, 3)];
    assert.equal(witnessedInRun(held, h, digestOf(encodeRecord(beats[1])), SETTINGS), true);
    assert.equal(witnessedInRun(held, h, digestOf(encodeRecord(beats[2])), SETTINGS), false, 'the step itself');
    assert.equal(witnessedInRun(created, h, digestOf(encodeRecord(beats[0])), SETTINGS), false, 'no holder before');
  });
});
