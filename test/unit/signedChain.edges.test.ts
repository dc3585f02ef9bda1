import * as assert from 'node:assert/strict';
import { checkChain, digestOf, provenThrough, stepMessage, type ChainStep, type JudgedStep } from '../../src/core/chain/signedChain';
import type { StepSignature } from '../../src/core/chain/signedStep';
import * as protocol from '../../src/core/lockRecord';
import type { AuditLine, LockRecord } from '../../src/core/lockRecord';
import { encodeRecord } from '../../src/core/recordCodec';
import { acquireAs, ANA, at, BEN, CONTAINER, CYD, fresh, LEAD, ok, OP, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * The edges of the signed chain (signedChain.ts): what a stored envelope must look like, the exact
 * bytes a step's signature covers, the window's byte bound, where a chain may start a new history,
 * and how a reader tells a store set back past its witness from a window that merely moved on.
 */

const good = (signer: string): StepSignature => ({ status: 'G', signer });
const HEX = 'c'.repeat(64);

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
const why = (verdict: ReturnType<typeof checkChain>) => (verdict.ok ? '' : verdict.why);

describe('signed chain: signed bytes', () => {
  // The stored envelope and the window's bounds are layout 2's (chainLayout.ts, test/unit/chainLayout.test.ts).
  it("a step's signature covers its page's key, the record before (or none), a coalesced step's renewal times and the record after, in that order", () => {
    assert.equal(stepMessage('page-key', null, '{"v":1}'), 'lockstep-step v1\nkey page-key\nbefore none\n{"v":1}');
    assert.equal(stepMessage('page-key', HEX, '{"v":1}'), `lockstep-step v1\nkey page-key\nbefore ${HEX}\n{"v":1}`);
    assert.equal(stepMessage('page-key', HEX, '{"v":1}', [5, 9]), `lockstep-step v1\nkey page-key\nbefore ${HEX}\nrenewed 5,9\n{"v":1}`);
  });
});

describe('signed chain: where a proof starts and where a new history may begin', () => {
  const created = ok(protocol.createPage(CONTAINER, { identity: LEAD }, at(0))).record;
  const held = acquireAs(created, LEAD, at(1));
  const released = ok(protocol.release(held.record, held.proof, at(2))).record;

  it('a step whose record is not a valid lock record is refused, named', () => {
    const steps = judged([created, held.record]);
    const damaged: JudgedStep = { ...steps[1], record: undefined };
    const verdict = checkChain([steps[0], damaged], undefined, SETTINGS);
    assert.deepEqual(verdict, { ok: false, step: steps[1].digest, why: 'its record is not a valid lock record of this container.' });
  });

  it('a witness that is the oldest step of the window: only the steps after it are judged', () => {
    const steps = judged([created, held.record, released]);
    steps[0] = { ...steps[0], signature: { status: 'N', signer: '' } };
    assert.equal(checkChain(steps, witnessOf(created), SETTINGS).ok, true);
  });

  it("a window that begins right after the witness continues from the witness's record", () => {
    const steps = judged([created, held.record, released]).slice(1);
    assert.equal(checkChain(steps, witnessOf(created), SETTINGS).ok, true);
  });

  it('the step right after the witness is judged as a transition of the witnessed record, not as a checkpoint its own actor signed', () => {
    const forged = ok(
      protocol.acquire(
        { ...held.record, holder: null },
        SETTINGS,
        { identity: ANA, tokenHash: 'a'.repeat(64), proofHash: 'b'.repeat(64) },
        at(1, 30),
      ),
    ).record;
    const steps = judged([created, held.record, forged]);
    const verdict = checkChain(steps, witnessOf(held.record), SETTINGS);
    assert.equal(verdict.ok, false);
    assert.equal(!verdict.ok && verdict.step, steps[2].digest);
    assert.match(why(verdict), /not what acquire by ana@example\.com/);
  });

  it('a window that begins right after the witness judges its first step as a transition of the witnessed record', () => {
    const forged = ok(
      protocol.acquire(
        { ...held.record, holder: null },
        SETTINGS,
        { identity: ANA, tokenHash: 'a'.repeat(64), proofHash: 'b'.repeat(64) },
        at(1, 30),
      ),
    ).record;
    const steps = judged([forged], digestOf(encodeRecord(held.record))); // signed by ana, her own actor
    assert.match(why(checkChain(steps, witnessOf(held.record), SETTINGS)), /not what acquire by ana@example\.com/);
  });

  it('records with no audit line, as a window step or as the witness, are judged without failing', () => {
    const bare = fresh();
    const step: JudgedStep = {
      step: { p: null, r: encodeRecord(bare), s: 'sig' },
      digest: digestOf(encodeRecord(bare)),
      record: bare,
      signature: good(LEAD),
    };
    assert.match(why(checkChain([step], witnessOf(held.record), SETTINGS)), /this reader proved last/);
    const adopt = ok(
      protocol.adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'repair', grantFloor: 0, nextIdFloor: 1 }, at(5)),
    ).record;
    assert.equal(checkChain(judged([adopt]), witnessOf(bare), SETTINGS).ok, true, 'an adopt over a witnessed empty page');
  });

  it('a window that begins with no record before must be the creation itself: a signed record with no past is no page', () => {
    const steps = judged([held.record]); // p null, signed by lead, but not what lockstep init writes
    assert.match(why(checkChain(steps, undefined, SETTINGS)), /created only by lockstep init/);
  });

  it("a new history in the middle of a chain is refused, even an operator's adopt: a restart is a window of its own", () => {
    const steps = judged([created, held.record]);
    const adopt = ok(
      protocol.adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'repair', grantFloor: 1, nextIdFloor: 1 }, at(5)),
    ).record;
    for (const restart of [judged([released])[0], judged([adopt])[0]]) {
      assert.deepEqual(checkChain([...steps, restart], undefined, SETTINGS), {
        ok: false,
        step: restart.digest,
        why: 'it does not continue the step before it (a step was removed, replaced or replayed).',
      });
    }
  });

  describe("an operator's adopt as the window's first step, over a witness it does not reach", () => {
    const adopt = (when: number, grantFloor: number, nextIdFloor = 1) =>
      ok(protocol.adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'repair', grantFloor, nextIdFloor }, when)).record;

    it('restarts the chain only when it has no record before, dated after the witnessed step (not at it), keeping grant and identifiers', () => {
      assert.equal(checkChain(judged([adopt(at(5), 1)]), witnessOf(released), SETTINGS).ok, true, 'control');
      assert.equal(checkChain(judged([adopt(at(5), 1)], HEX), witnessOf(released), SETTINGS).ok, false, 'names a record before');
      // released's last line is its release at hour 2 (its acquire was at hour 1).
      assert.equal(checkChain(judged([adopt(at(1, 30), 1)]), witnessOf(released), SETTINGS).ok, false, 'before the release');
      assert.equal(checkChain(judged([adopt(at(2), 1)]), witnessOf(released), SETTINGS).ok, false, 'at the release');
      const manyIds = adopt(at(1), 1, 40);
      assert.equal(checkChain(judged([adopt(at(5), 1, 40)]), witnessOf(manyIds), SETTINGS).ok, true, 'control: the identifiers kept');
      assert.equal(checkChain(judged([adopt(at(5), 1, 39)]), witnessOf(manyIds), SETTINGS).ok, false, 'identifiers lowered');
    });

    it('a record with no past that is not an adopt does not restart it, though it keeps the fence', () => {
      const taken = acquireAs(created, ANA, at(5)).record; // grant 1, as the witness
      const verdict = checkChain(judged([taken]), witnessOf(held.record), SETTINGS);
      assert.match(why(verdict), /no longer holds the step this reader proved last/);
    });

    it('a witness whose record cannot be read is never restarted over, and the reader is told so', () => {
      const unread = { ...witnessOf(released), record: undefined };
      assert.deepEqual(checkChain(judged([adopt(at(5), 1)]), unread, SETTINGS), {
        ok: false,
        step: digestOf(encodeRecord(adopt(at(5), 1))),
        why: 'the page does not extend the step this reader proved last, and that step cannot be read back.',
      });
      // A window that begins right after it cannot continue from it either.
      const after = judged([held.record, released], digestOf(encodeRecord(created)));
      assert.match(why(checkChain(after, { ...witnessOf(created), record: undefined }, SETTINGS)), /cannot be read back/);
    });
  });
});

describe('signed chain: a store set back past the witness, or a window that moved on', () => {
  const created = ok(protocol.createPage(CONTAINER, { identity: LEAD }, at(0))).record;
  const held = acquireAs(created, LEAD, at(1));
  const released = ok(protocol.release(held.record, held.proof, at(2))).record;
  const lastLine = released.audit.at(-1)!; // lead's release at hour 2
  /** Why a reader that proved `witness` refuses a window (not reaching back to it) whose newest record is `tip`. */
  const setBack = (tip: LockRecord, witness: LockRecord = released) => why(checkChain(judged([tip], HEX), witnessOf(witness), SETTINGS));
  const withAudit = (audit: AuditLine[]): LockRecord => ({ ...released, audit });

  it('names the first step dated after the witnessed step, not an older one nor the newest', () => {
    const atRelease = acquireAs(released, ANA, at(2)).record; // dated exactly at the witnessed release
    const later = ok(protocol.petition(atRelease, { identity: BEN }, at(3))).record;
    const latest = ok(protocol.petition(later, { identity: CYD }, at(4))).record;
    const steps = judged([atRelease, later, latest], HEX);
    const verdict = checkChain(steps, witnessOf(released), SETTINGS);
    assert.equal(!verdict.ok && verdict.step, steps[1].digest);
  });

  it('a witness with no audit line reads as one that cannot be read back', () => {
    assert.equal(
      setBack(released, fresh()),
      'the page does not extend the step this reader proved last, and that step cannot be read back.',
    );
  });

  it('says the grant went down only when it did; an equal grant written again says so instead', () => {
    assert.equal(
      setBack(created),
      'the page no longer holds the step this reader proved last (release by lead@example.com, grant #1): the store was set back past it (its grant went down).',
    );
    const other = acquireAs(created, ANA, at(3)).record; // grant 1 again, without lead's lines
    assert.match(setBack(other), /\(release by lead@example\.com, grant #1\): the store was set back past it and written again\.$/);
  });

  it('is not called set back when the newest record still holds the witnessed line, or has trimmed lines that old; a refused line does not count as trimmed', () => {
    const generic = /no longer reach back to the step this reader proved last/;
    assert.match(setBack(ok(protocol.petition(released, { identity: BEN }, at(3))).record), generic, 'the line is still there');
    const newer: AuditLine = { at: at(3), who: BEN, action: 'petition', grant: 1, outcome: 'done' };
    assert.match(setBack(withAudit([newer])), generic, 'trimmed since');
    const refusedOld: AuditLine = { at: at(0), who: BEN, action: 'clear', grant: 1, outcome: 'refused', detail: 'me' };
    assert.match(setBack(withAudit([refusedOld, newer])), generic, 'only a refusal is older');
    assert.match(setBack(withAudit([{ ...newer, at: lastLine.at }])), /written again\.$/, 'a different line at the same time');
    assert.match(setBack(withAudit([{ ...newer, at: at(1) }])), /written again\.$/, 'an older line');
  });

  it('the witnessed line counts as held only when every field is the same', () => {
    for (const change of [
      { at: lastLine.at - 1 },
      { who: BEN },
      { action: 'heartbeat' as const },
      { grant: 2 },
      { outcome: 'refused' as const },
      { detail: 'landed abc1234' },
    ]) {
      assert.match(setBack(withAudit([{ ...lastLine, ...change }])), /written again\.$/, JSON.stringify(change));
    }
  });
});

describe('signed chain: damaged steps and coalesced runs in the proof', () => {
  const invalid = 'its record is not a valid lock record of this container.';
  /** lead's page: created, acquired at 01:00, released at 02:00. */
  const page = () => {
    const created = ok(protocol.createPage(CONTAINER, { identity: LEAD }, at(0))).record;
    const held = acquireAs(created, LEAD, at(1));
    return { created, held, released: ok(protocol.release(held.record, held.proof, at(2))).record };
  };

  it('a step in the middle whose record is no valid record is refused, named', () => {
    const { created, held, released } = page();
    const steps = judged([created, held.record, released]);
    steps[1] = { ...steps[1], record: undefined };
    assert.deepEqual(checkChain(steps, undefined, SETTINGS), { ok: false, step: steps[1].digest, why: invalid });
  });

  it('a newest step that is no valid record is named before any older step is judged', () => {
    const { created, held, released } = page();
    const steps = judged([created, held.record, released]);
    steps[1] = { ...steps[1], signature: { status: 'N', signer: '' } };
    steps[2] = { ...steps[2], record: undefined };
    assert.deepEqual(checkChain(steps, undefined, SETTINGS), { ok: false, step: steps[2].digest, why: invalid });
  });

  it('a witnessed step whose record is no valid record is refused, named; the steps after it are not judged from a checkpoint', () => {
    const { created, held, released } = page();
    const steps = judged([created, held.record, released]);
    steps[0] = { ...steps[0], record: undefined };
    assert.deepEqual(checkChain(steps, witnessOf(created), SETTINGS), { ok: false, step: steps[0].digest, why: invalid });
  });

  it('a window that no longer reaches the witness and begins with a step that is no record: the first step dated after the witness is named', () => {
    const { created, held, released } = page();
    const steps = judged([held.record, released], HEX);
    steps[0] = { ...steps[0], record: undefined };
    const verdict = checkChain(steps, witnessOf(created), SETTINGS);
    assert.equal(!verdict.ok && verdict.step, steps[1].digest);
    assert.match(why(verdict), /no longer reach back to the step this reader proved last/);
  });

  it('a transition its own actor signed is still judged as a transition of the record before it', () => {
    const { created, held } = page();
    const forged = acquireAs(created, ANA, at(2)).record; // ana "acquires" over the page lead holds
    const steps = judged([created, held.record, forged]);
    const verdict = checkChain(steps, undefined, SETTINGS);
    assert.equal(!verdict.ok && verdict.step, steps[2].digest);
  });

  it("a replaced heartbeat is found in the window's second step; not in a run that does not continue the step before, nor over a step that is no record", () => {
    const { created } = page();
    const held = acquireAs(created, LEAD, at(1));
    const b1 = ok(protocol.heartbeat(held.record, SETTINGS, held.proof, at(1, 10))).record;
    const b2 = ok(protocol.heartbeat(b1, SETTINGS, held.proof, at(1, 20))).record;
    const [first] = judged([held.record], HEX);
    const run = (p: string): JudgedStep => {
      const r = encodeRecord(b2);
      return { step: { p, r, s: 'sig', h: [at(1, 10), at(1, 20)] }, digest: digestOf(r), record: b2, signature: good(LEAD) };
    };
    const witness = digestOf(encodeRecord(b1));
    assert.equal(provenThrough([first, run(first.digest)], witness, SETTINGS), 0);
    assert.equal(provenThrough([first, run(HEX)], witness, SETTINGS), -1, 'not continuing the step before');
    assert.equal(provenThrough([{ ...first, record: undefined }, run(first.digest)], witness, SETTINGS), -1, 'no record before');
  });
});
