import * as assert from 'node:assert/strict';
import { coalescedStep, MAX_RENEWALS_PER_STEP } from '../../src/core/chain/heartbeatRenewals';
import { checkChain, digestOf, provenThrough, type ChainStep, type JudgedStep } from '../../src/core/chain/signedChain';
import type { StepSignature } from '../../src/core/chain/signedStep';
import * as protocol from '../../src/core/lockRecord';
import type { LockRecord } from '../../src/core/lockRecord';
import { encodeRecord } from '../../src/core/recordCodec';
import { acquireAs, ANA, at, CONTAINER, LEAD, ok, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * Heartbeats coalesce (heartbeatRenewals.ts): a heartbeat right after the same holder's heartbeat
 * of the same grant replaces that step, listing the times of every heartbeat it stands for; a reader
 * replays them with the server guard's heartbeat rule, and a reader whose witness was a replaced
 * heartbeat finds it in the replay — and nothing else passes for it. Pure: ssh-keygen's verdict given.
 */

const good = (signer: string): StepSignature => ({ status: 'G', signer });

/** Writes `record` on top of `steps` as the driver does: coalesced when it may be. */
function write(steps: readonly ChainStep[], record: LockRecord): ChainStep[] {
  const r = encodeRecord(record);
  const run = coalescedStep(steps, r);
  const p = run?.p ?? (steps.length === 0 ? null : digestOf(steps[steps.length - 1].r));
  const step: ChainStep = { p, r, s: 'sig', ...(run ? { h: run.h } : {}) };
  return run ? [...steps.slice(0, -1), step] : [...steps, step];
}
const judged = (steps: readonly ChainStep[], signer?: string): JudgedStep[] =>
  steps.map(step => {
    const record = JSON.parse(step.r) as LockRecord;
    return { step, digest: digestOf(step.r), record, signature: good(signer ?? record.audit.at(-1)!.who) };
  });
const witnessOf = (record: LockRecord) => ({ digest: digestOf(encodeRecord(record)), text: encodeRecord(record), record });

describe('heartbeats coalesce in a signed chain', () => {
  const created = ok(protocol.createPage(CONTAINER, { identity: LEAD }, at(0))).record;
  const held = acquireAs(created, LEAD, at(1));
  /** lead's heartbeats every 10 minutes from `from`, on top of `record`. */
  const beats = (record: LockRecord, proof: protocol.HolderProof, n: number, from = at(1)): LockRecord[] => {
    const out: LockRecord[] = [];
    for (let i = 1; i <= n; i++) out.push(ok(protocol.heartbeat(out.at(-1) ?? record, SETTINGS, proof, from + i * 600_000)).record);
    return out;
  };
  const hb = beats(held.record, held.proof, 6);
  let chain: ChainStep[] = [];
  for (const record of [created, held.record, ...hb]) chain = write(chain, record);

  it("a hold's heartbeats take one step, listing their times; it proves from the start and from any witness before or in it (control)", () => {
    assert.equal(chain.length, 3);
    assert.deepEqual(
      chain[2].h,
      hb.map(r => r.audit.at(-1)!.at),
    );
    assert.equal(chain[2].p, digestOf(encodeRecord(held.record)), 'it continues the same record before');
    assert.equal(checkChain(judged(chain), undefined, SETTINGS).ok, true);
    for (const witness of [created, held.record, hb[0], hb[3], hb[5]]) {
      const verdict = checkChain(judged(chain), witnessOf(witness), SETTINGS);
      assert.deepEqual(verdict, { ok: true, head: { digest: digestOf(chain[2].r), text: chain[2].r } });
    }
    assert.equal(
      provenThrough(judged(chain), digestOf(encodeRecord(hb[2])), SETTINGS),
      1,
      'a replaced heartbeat: proven up to the record before',
    );
  });

  it('does not coalesce over anything else: an acquire in between, a different grant, a different actor', () => {
    // An acquire (any non-heartbeat) in between: the first heartbeat after it is a step of its own.
    assert.equal(write(write([], created), held.record).length, 2);
    assert.equal(coalescedStep(write(write([], created), held.record), encodeRecord(hb[0])), undefined);
    const relabel = (record: LockRecord, line: Partial<protocol.AuditLine>): string =>
      encodeRecord({ ...record, audit: [...record.audit.slice(0, -1), { ...record.audit.at(-1)!, ...line }] });
    const upTo = [write([], created)[0], ...write(write([], created), held.record).slice(1)];
    const first = write(upTo, hb[0]);
    assert.notEqual(coalescedStep(first, encodeRecord(hb[1])), undefined, 'the safe case coalesces');
    assert.equal(coalescedStep(first, relabel(hb[1], { grant: 7 })), undefined, 'a different grant');
    assert.equal(coalescedStep(first, relabel(hb[1], { who: ANA })), undefined, 'a different actor');
    // The window's first step (a checkpoint) is never replaced: its record before is not in the window.
    assert.equal(coalescedStep(first.slice(-1), encodeRecord(hb[1])), undefined);
    // A run stands for a bounded number of heartbeats.
    const long: ChainStep[] = [
      ...first.slice(0, -1),
      { ...first.at(-1)!, h: Array.from({ length: MAX_RENEWALS_PER_STEP }, (_, i) => i + 1) },
    ];
    assert.equal(coalescedStep(long, encodeRecord(hb[1])), undefined);
  });

  it('a witness that was a heartbeat of another grant, or a chain whose run does not continue the same record before, reads tampered', () => {
    // lead released, took grant 2 and heartbeat: a reader who saw grant 1's heartbeat finds no replay through it.
    const released = ok(protocol.release(hb[5], held.proof, at(3))).record;
    const again = acquireAs(released, LEAD, at(3, 1));
    const other = beats(again.record, again.proof, 3, at(3, 1));
    let later: ChainStep[] = [];
    for (const record of [created, held.record, ...hb.slice(0, 2), released, again.record, ...other]) later = write(later, record);
    // bob drops lead's grant 1 steps after the witness, copying the rest on top: set back past the witness.
    const spliced = [later[0], later[1], ...later.slice(3)];
    assert.equal(checkChain(judged(spliced), witnessOf(hb[1]), SETTINGS).ok, false);
    assert.equal(provenThrough(judged(later.slice(4)), digestOf(encodeRecord(hb[1])), SETTINGS), -1, 'another grant: not in its run');
    // A coalesced step that continues another record before (lead's acquire replaced by a forged one): not proven.
    const forged = acquireAs(created, LEAD, at(1, 1));
    const run = chain[2];
    const moved: ChainStep[] = [
      chain[0],
      { p: digestOf(chain[0].r), r: encodeRecord(forged.record), s: 'sig' },
      { ...run, p: digestOf(encodeRecord(forged.record)) },
    ];
    const verdict = checkChain(judged(moved), witnessOf(hb[2]), SETTINGS);
    assert.equal(verdict.ok, false);
  });

  it('each replayed heartbeat obeys the guard rule: a lapse between two renewals, a listed time changed, another signer — tampered', () => {
    const run = chain[2];
    const judge = (step: ChainStep, signer?: string) =>
      checkChain(judged([chain[0], chain[1], step], signer), witnessOf(held.record), SETTINGS);
    // A gap longer than the lease (2 h) between two heartbeats: the later renews a lease that is not live.
    const late = ok(protocol.heartbeat(held.record, SETTINGS, held.proof, at(1, 10))).record;
    const revived = { ...late, holder: { ...late.holder!, expiresAt: at(5, 10) } };
    const lapse = checkChain(
      judged([
        chain[0],
        chain[1],
        { p: run.p, r: encodeRecord(ok(protocol.heartbeat(revived, SETTINGS, held.proof, at(4))).record), s: 'sig', h: [at(1, 10), at(4)] },
      ]),
      undefined,
      SETTINGS,
    );
    assert.equal(lapse.ok, false);
    assert.match(!lapse.ok ? lapse.why : '', /renews a lease that is not live|is not the record/);
    // The last listed time moved: the replay makes another record. (An earlier one moved makes the same
    // record; the signature covers the list, so ssh-keygen refuses it: test/integration/chainWindow.test.ts.)
    const shifted = judge({ ...run, h: [...run.h!.slice(0, -1), run.h!.at(-1)! + 1] });
    assert.match(!shifted.ok ? shifted.why : '', /is not the record 6 heartbeats/);
    const byAna = judge(run, ANA);
    assert.match(!byAna.ok ? byAna.why : '', /gives ana@example\.com, but its audit line acts as lead@example\.com/);
    assert.equal(judge(run).ok, true, 'control');
  });
});
