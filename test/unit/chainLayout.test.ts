import * as assert from 'node:assert/strict';
import {
  appendStep,
  CHAIN_LAYOUT,
  MAX_CHAIN_BYTES,
  readChain,
  storeChain,
  type ChainEnvelope,
  type DeltaStep,
} from '../../src/core/chain/chainLayout';
import { checkChain, digestOf, type ChainStep, type JudgedStep } from '../../src/core/chain/signedChain';
import * as protocol from '../../src/core/lockRecord';
import type { LockRecord } from '../../src/core/lockRecord';
import { encodeRecord } from '../../src/core/recordCodec';
import { acquireAs, at, CONTAINER, LEAD, ok, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * How a signed chain is stored (chainLayout.ts): layout 2 keeps the window's first step whole and
 * every later one as a delta over the step before; a reader rebuilds the exact bytes, so a delta
 * changed by a byte no longer proves. Layout 1 still reads; a later layout is refused as such.
 */

/** About the size of an armored ed25519 `ssh-keygen -Y sign` signature. */
const SIGNATURE = `-----BEGIN SSH SIGNATURE-----\n${'A'.repeat(70)}\n${'B'.repeat(70)}\n${'C'.repeat(70)}\n${'D'.repeat(30)}\n-----END SSH SIGNATURE-----\n`;

/** Steps for records in order, each continuing the one before (the first: a checkpoint whose record before is gone). */
function stepsOf(records: readonly LockRecord[]): ChainStep[] {
  const out: ChainStep[] = [];
  for (const record of records) {
    const r = encodeRecord(record);
    out.push({ p: out.length === 0 ? 'e'.repeat(64) : digestOf(out[out.length - 1].r), r, s: SIGNATURE });
  }
  return out;
}
const judge = (steps: readonly ChainStep[]): JudgedStep[] =>
  steps.map(step => {
    const record = JSON.parse(step.r) as LockRecord;
    return { step, digest: digestOf(step.r), record, signature: { status: 'G', signer: record.audit.at(-1)!.who } };
  });
const roundTrip = (envelope: ChainEnvelope) => readChain(JSON.parse(JSON.stringify(envelope)));

/** lead's page with `lines` old transitions of ~520 bytes (470: its audit near its cap), lead holding and heartbeating `beats` times. */
function nearCapHold(beats: number, lines = 20): LockRecord[] {
  const created = ok(protocol.createPage(CONTAINER, { identity: LEAD }, at(0))).record;
  const filler: protocol.AuditLine[] = Array.from({ length: lines }, (_, i) => ({
    at: at(0) + i,
    who: LEAD,
    action: 'release',
    grant: 0,
    outcome: 'done',
    detail: `nothing landed ${'x'.repeat(440)} ${i}`,
  }));
  const full: LockRecord = { ...created, audit: protocol.boundAudit([...filler, ...created.audit]) };
  const held = acquireAs(full, LEAD, at(1));
  const records = [full, held.record];
  for (let i = 1; i <= beats; i++) records.push(ok(protocol.heartbeat(records.at(-1)!, SETTINGS, held.proof, at(1, i))).record);
  return records;
}

describe('signed chain layout (stored value of a signed page)', () => {
  it('stores the first step whole and the later ones as deltas, and reads back the exact bytes of every record', () => {
    const steps = stepsOf(nearCapHold(3));
    const envelope = storeChain(steps);
    assert.equal(envelope.lockstepChain, CHAIN_LAYOUT);
    assert.ok('r' in envelope.steps[0], 'the checkpoint is whole');
    for (const s of envelope.steps.slice(1)) assert.ok('o' in s && !('r' in s), 'a later step is a delta');
    const read = roundTrip(envelope);
    assert.ok(read.ok);
    assert.deepEqual(
      read.steps.map(s => s.r),
      steps.map(s => s.r),
    );
    assert.equal(checkChain(judge(read.steps), undefined, SETTINGS).ok, true);
    // A heartbeat's delta keeps no copy of the audit: far smaller than its record.
    const beat = JSON.stringify(envelope.steps[3]).length;
    assert.ok(beat < 2048, `a heartbeat step stores ${beat} bytes`);
    assert.ok(steps[3].r.length > 8 * 1024, 'its record is larger');
  });

  it('a delta changed by one byte rebuilds other bytes: the step reads tampered (its signature, or the next step, no longer matches)', () => {
    const steps = stepsOf(nearCapHold(3));
    const stored = JSON.parse(JSON.stringify(storeChain(steps))) as { lockstepChain: number; steps: DeltaStep[] };
    const line = stored.steps[2].a[0] as { at: number };
    line.at += 1; // one digit of the appended line
    const read = readChain(stored);
    assert.ok(read.ok);
    assert.notEqual(read.steps[2].r, steps[2].r);
    const verdict = checkChain(judge(read.steps), undefined, SETTINGS);
    assert.equal(verdict.ok, false);
    assert.equal(!verdict.ok && verdict.step, digestOf(read.steps[3].r));
    assert.match(!verdict.ok ? verdict.why : '', /does not continue the step before it/);
    // A delta that cannot apply (a kept run past the lines before) reads as no record.
    const broken = JSON.parse(JSON.stringify(storeChain(steps))) as { lockstepChain: number; steps: DeltaStep[] };
    (broken.steps[1] as unknown as { k: number[][] }).k = [[0, 10_000]];
    const bad = readChain(broken);
    assert.ok(bad.ok);
    assert.equal(checkChain(judge(bad.steps.slice(0, 1)), undefined, SETTINGS).ok, true);
    assert.throws(() => JSON.parse(bad.steps[1].r).audit.at(-1), 'no record');
  });

  it('reads a layout 1 page (every step whole) and writes it again as layout 2 on the next step', () => {
    const steps = stepsOf(nearCapHold(2));
    const v1 = { lockstepChain: 1, steps: steps.slice(0, 3) };
    const read = roundTrip(v1 as ChainEnvelope);
    assert.ok(read.ok);
    assert.equal(read.layout, 1);
    const next = appendStep(read.steps, steps[3]);
    assert.equal(next.envelope.lockstepChain, 2);
    assert.deepEqual(
      (roundTrip(next.envelope) as { steps: ChainStep[] }).steps.map(s => s.r),
      steps.map(s => s.r),
    );
  });

  it('a later layout is refused as newer (never read as free or as no chain); a value with no version is no chain', () => {
    const read = readChain({ lockstepChain: 3, steps: [{ whatever: true }] });
    assert.equal(read.ok, false);
    assert.equal(!read.ok && read.newer, true);
    assert.match(!read.ok ? read.why : '', /layout 3, and this version of Lockstep reads layouts 1 and 2/);
    const plain = readChain(nearCapHold(0)[0]);
    assert.equal(!plain.ok && plain.newer, false);
  });

  it('a page at the audit cap has room for hundreds of heartbeat steps beside its whole checkpoint', () => {
    const records = nearCapHold(1, 470);
    const { envelope } = appendStep(stepsOf(records.slice(0, -1)), stepsOf(records).at(-1)!);
    const checkpoint = JSON.stringify(envelope.steps[0]).length;
    const beat = JSON.stringify(envelope.steps.at(-1)).length;
    const room = Math.floor((MAX_CHAIN_BYTES - checkpoint) / (beat + 1));
    assert.ok(checkpoint > 200 * 1024, `the checkpoint is whole (${checkpoint} bytes)`);
    assert.ok(room >= 400, `room for ${room} heartbeat steps of ${beat} bytes`);
    // The real window, written through the library: test/integration/chainWindow.test.ts.
  });
});
