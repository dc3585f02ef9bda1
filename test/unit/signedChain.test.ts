import * as assert from 'node:assert/strict';
import { appendStep, MAX_CHAIN_STEPS } from '../../src/core/chain/chainLayout';
import { checkChain, digestOf, type ChainStep, type JudgedStep } from '../../src/core/chain/signedChain';
import type { StepSignature } from '../../src/core/chain/signedStep';
import * as protocol from '../../src/core/lockRecord';
import type { LockRecord } from '../../src/core/lockRecord';
import { encodeRecord } from '../../src/core/recordCodec';
import { acquireAs, ANA, at, CONTAINER, LEAD, ok, OP, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * The signed chain of a page on a store every participant writes (signedChain.ts): a chain is proven
 * from a reader's witness or from its window's start, each step continuing the one before, signed by
 * its actor and legal. Pure: ssh-keygen's verdict in (here given), a verdict out. Real keys, stores
 * and ssh-keygen: test/integration/signedChain.test.ts.
 */

const good = (signer: string): StepSignature => ({ status: 'G', signer });

/** Steps for records in order, each continuing the one before (the first: a creation), signed by their actors. */
function judged(records: readonly LockRecord[], first: string | null = null): JudgedStep[] {
  const out: JudgedStep[] = [];
  for (const [i, record] of records.entries()) {
    const r = encodeRecord(record);
    const step: ChainStep = { p: i === 0 ? first : out[i - 1].digest, r, s: 'sig' };
    out.push({ step, digest: digestOf(r), record, signature: good(record.audit.at(-1)!.who) });
  }
  return out;
}
const witnessOf = (record: LockRecord) => ({ digest: digestOf(encodeRecord(record)), text: encodeRecord(record), record });

describe("signed chain of a page on a participants' store", () => {
  const created = ok(protocol.createPage(CONTAINER, { identity: LEAD }, at(0))).record;
  const held = acquireAs(created, LEAD, at(1));
  const released = ok(protocol.release(held.record, held.proof, at(2))).record;

  it("proves a chain from the page's creation for a reader with no witness, and hands back its head (control)", () => {
    const verdict = checkChain(judged([created, held.record, released]), undefined, SETTINGS);
    assert.deepEqual(verdict, { ok: true, head: { digest: digestOf(encodeRecord(released)), text: encodeRecord(released) } });
  });

  it('refuses a step that does not continue the one before (removed, replaced or replayed), naming it', () => {
    const steps = judged([created, held.record, released]);
    const spliced = [steps[0], steps[2]]; // lead's acquire removed: the release still names it as its record before
    const verdict = checkChain(spliced, undefined, SETTINGS);
    assert.equal(verdict.ok, false);
    assert.equal(!verdict.ok && verdict.step, steps[2].digest);
    assert.match(!verdict.ok ? verdict.why : '', /does not continue the step before it/);
  });

  it('refuses a signed step that is no legal transition: ana names herself holder while lead holds', () => {
    const forged = acquireAs(created, ANA, at(1, 30)).record;
    const steps = judged([created, held.record]);
    const step: JudgedStep = {
      step: { p: steps[1].digest, r: encodeRecord(forged), s: 'sig' },
      digest: digestOf(encodeRecord(forged)),
      record: forged,
      signature: good(ANA),
    };
    const verdict = checkChain([...steps, step], undefined, SETTINGS);
    assert.equal(!verdict.ok && verdict.step, step.digest);
  });

  it('from a witness, checks only the steps after it', () => {
    const steps = judged([created, held.record, released]);
    steps[0] = { ...steps[0], signature: { status: 'N', signer: '' } }; // proven before: not judged again
    assert.equal(checkChain(steps, witnessOf(held.record), SETTINGS).ok, true);
    assert.equal(checkChain(steps, undefined, SETTINGS).ok, false, 'a reader with no witness judges it');
  });

  it('a store set back past the witnessed step and written again reads tampered, naming the first step after it', () => {
    const other = acquireAs(created, ANA, at(3)).record; // ana acquires on the page as it was before lead's acquire
    const verdict = checkChain(judged([created, other]), witnessOf(held.record), SETTINGS);
    assert.equal(verdict.ok, false);
    assert.equal(!verdict.ok && verdict.step, digestOf(encodeRecord(other)));
    assert.match(
      !verdict.ok ? verdict.why : '',
      /no longer holds the step this reader proved last \(acquire by lead@example\.com, grant #1\)/,
    );
    // A reader that never saw lead's acquire cannot tell (README "Threat model").
    assert.equal(checkChain(judged([created, other]), undefined, SETTINGS).ok, true);
  });

  it('fails closed when the window no longer reaches back to the witness: a window written anew, its audit copied, its first step signed by its own actor', () => {
    // bob's invention: lead's released page with himself holder, one step whose record before is nowhere.
    const invented = acquireAs(released, ANA, at(3)).record;
    const steps = judged([invented], 'f'.repeat(64));
    const verdict = checkChain(steps, witnessOf(released), SETTINGS);
    assert.equal(!verdict.ok && verdict.step, steps[0].digest);
    assert.match(!verdict.ok ? verdict.why : '', /no longer reach back to the step this reader proved last/);
    // A reader with no witness accepts the window's first step as a checkpoint signed by its actor (README "Threat model").
    assert.equal(checkChain(steps, undefined, SETTINGS).ok, true);
  });

  it("an operator's adopt after the witness that keeps the fence restarts the chain; an older one, or one lowering the grant, does not", () => {
    const adopt = (when: number, grantFloor: number) =>
      ok(protocol.adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'repair', grantFloor, nextIdFloor: 1 }, when)).record;
    assert.equal(checkChain(judged([adopt(at(5), 1)]), witnessOf(held.record), SETTINGS).ok, true);
    assert.equal(checkChain(judged([adopt(at(0, 30), 1)]), witnessOf(held.record), SETTINGS).ok, false);
    assert.equal(checkChain(judged([adopt(at(5), 0)]), witnessOf(held.record), SETTINGS).ok, false);
  });

  it('keeps a bounded window: the oldest steps go, the newest always stays', () => {
    let steps: ChainStep[] = Array.from({ length: MAX_CHAIN_STEPS - 1 }, (_, i) => ({ p: null, r: `{"n":${i}}`, s: '' }));
    for (let i = MAX_CHAIN_STEPS - 1; i < MAX_CHAIN_STEPS + 8; i++) steps = appendStep(steps, { p: null, r: `{"n":${i}}`, s: '' }).steps;
    assert.equal(steps.length, MAX_CHAIN_STEPS);
    assert.equal(steps.at(-1)!.r, `{"n":${MAX_CHAIN_STEPS + 7}}`);
    assert.equal(appendStep([], { p: null, r: 'x'.repeat(900 * 1024), s: '' }).steps.length, 1);
  });
});
