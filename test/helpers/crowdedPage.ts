import { createHash } from 'node:crypto';
import { appendStep, type ChainEnvelope } from '../../src/core/chain/chainLayout';
import { type ChainStep, digestOf } from '../../src/core/chain/signedChain';
import { acquire, assign, emptyRecord, leaseIds, type LockRecord, type Outcome, petition, withdraw } from '../../src/core/lockRecord';
import { encodeRecord } from '../../src/core/recordCodec';

/** The container of {@link crowdedPage}. */
export const CROWDED_CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';

let built: LockRecord | undefined;

/**
 * The page issue 30 bounds (≤ 64 KB): one holder, 100 petitioners, 1,000 leased ranges and 100 blocks,
 * made by the pure transition functions (so its audit is at its cap, as a year-old page's is). Built once
 * per process (~100 ms of CPU); each caller gets its own copy.
 */
export function crowdedPage(): LockRecord {
  built ??= buildCrowdedPage();
  return structuredClone(built);
}

function buildCrowdedPage(): LockRecord {
  const hex = (s: string) => createHash('sha256').update(s).digest('hex');
  const settings = { leaseTtlMs: 2 * 3600_000, windowMs: 15 * 60_000, operators: [] as string[] };
  let now = Date.UTC(2026, 0, 1);
  let r = emptyRecord(CROWDED_CONTAINER);
  const lead = 'lead@example.com';
  r = ok(acquire(r, settings, { identity: lead, tokenHash: hex('t'), proofHash: hex('p') }, now));
  const proof = { identity: lead, grant: r.grant, tokenHash: hex('t') };
  for (let i = 0; i < 100; i++)
    r = ok(petition(r, { identity: `petitioner-${i}@example.com`, note: 'after the schema change' }, ++now, settings));
  for (let i = 0; i < 1000; i++)
    r = ok(leaseIds(r, proof, { to: `dev-${i % 50}@example.com`, count: 10, newIdentity: true }, ++now, settings));
  for (let i = 0; i < 100; i++) {
    const block = { to: `dev-${i % 50}@example.com`, text: `block ${i}: the parser's error paths`, newIdentity: true };
    r = ok(assign(r, proof, block, ++now, settings));
  }
  return r;
}

/**
 * A signed page's window (chainLayout.ts) on the crowded page after `transitions` petitions and withdrawals, each a
 * step that repeats the whole record but its audit (signatures: 400 characters of filler, as an SSH signature's size).
 */
export function crowdedSignedWindow(transitions = 6): { steps: ChainStep[]; envelope: ChainEnvelope } {
  const page = crowdedPage();
  const settings = { leaseTtlMs: 2 * 3600_000, windowMs: 15 * 60_000, operators: [] as string[] };
  const start = page.audit[page.audit.length - 1].at;
  let record = page;
  let window: { steps: ChainStep[]; envelope: ChainEnvelope } = { steps: [], envelope: undefined as unknown as ChainEnvelope };
  let p: string | null = null;
  for (let i = 0; i < transitions; i++) {
    const who = `late-${i >> 1}@example.com`;
    record = ok(
      i % 2 === 0 ? petition(record, { identity: who }, start + i + 1, settings) : withdraw(record, { identity: who }, start + i + 1),
    );
    const text = encodeRecord(record);
    window = appendStep(window.steps, { p, r: text, s: `SSHSIG${'A'.repeat(400)}` });
    p = digestOf(text);
  }
  return window;
}

function ok(outcome: Outcome<unknown>): LockRecord {
  if (!outcome.ok) throw new Error(`a transition was refused: ${outcome.error.message}`);
  return outcome.record;
}
