import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { HOUR, MINUTE } from '../../src/core/clock';
import { LockLeaseLostError, LockRefusedError, type RefusalReason } from '../../src/core/errors';
import {
  acquire,
  emptyRecord,
  lapseText,
  refusalText,
  type ContainerSettings,
  type HolderProof,
  type LockRecord,
  type Outcome,
} from '../../src/core/lockRecord';
import { describe, type LockStatus } from '../../src/core/lockStatus';
import { parseRecord } from '../../src/core/recordCodec';

/**
 * Shared fixture for the pure protocol tests: fixed times, people, hashes and assertions.
 * No clock: every test passes `now` explicitly.
 */

export const CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';
/** Hour 0 of every scenario. */
export const T0 = Date.UTC(2026, 0, 1);
export const at = (hours: number, minutes = 0): number => T0 + hours * HOUR + minutes * MINUTE;

export const LEAD = 'lead@example.com';
export const ANA = 'ana@example.com';
export const BEN = 'ben@example.com';
export const CYD = 'cyd@example.com';
export const OP = 'operator@example.com';

export const SETTINGS: ContainerSettings = { leaseTtlMs: 2 * HOUR, windowMs: 15 * MINUTE, operators: [OP] };
export const settings = (overrides: Partial<ContainerSettings> = {}): ContainerSettings => ({ ...SETTINGS, ...overrides });

/** A stand-in for a token hash: 64 hex characters, distinct per label. */
export function hex(label: string): string {
  return createHash('sha256').update(label).digest('hex');
}

export const fresh = (): LockRecord => emptyRecord(CONTAINER);

/** A page `holder` holds (grant #4, acquired a minute before `now`, an hour left) with `queue` waiting. */
export function heldPage(holder: string, now: number, queue: LockRecord['queue'] = []): LockRecord {
  return {
    ...fresh(),
    grant: 4,
    queue,
    holder: {
      identity: holder,
      grant: 4,
      tokenHash: hex(`${holder} token`),
      proofHash: hex(`${holder} proof`),
      grantedAt: now - MINUTE,
      expiresAt: now + HOUR,
      ttlMs: 2 * HOUR,
    },
  };
}

/** What `identity` sees of `record` at `now`; `holding`: from the holder's own clone (its session). */
export function statusOf(record: LockRecord, identity: string, now: number, holding = false): LockStatus {
  const h = record.holder;
  return describe(record, SETTINGS, { identity, ...(holding && h ? { session: { grant: h.grant, tokenHash: h.tokenHash } } : {}) }, now);
}

/** Unwraps a successful outcome and checks that the record it produced passes the codec. */
export function ok<T>(outcome: Outcome<T>): { record: LockRecord; value: T; summary: string } {
  if (!outcome.ok) assert.fail(`expected success, got ${outcome.error.name}: ${outcome.error.message}`);
  assert.doesNotThrow(() => parseRecord(JSON.parse(JSON.stringify(outcome.record)), 'memory', CONTAINER, SETTINGS));
  return { record: outcome.record, value: outcome.value, summary: outcome.summary };
}

/** Asserts a refusal with the given reason and returns its error (and audit record, if any). */
export function refusedWith<T>(outcome: Outcome<T>, reason: RefusalReason): { error: LockRefusedError; record?: LockRecord } {
  if (outcome.ok) assert.fail(`expected refusal '${reason}', got success: ${outcome.summary}`);
  assert.ok(outcome.error instanceof LockRefusedError, `expected LockRefusedError, got ${outcome.error.name}`);
  assert.equal(outcome.error.reason, reason);
  assert.ok(outcome.error.message.length > 0);
  // The refusal comes back as facts too, and its words are refusalText's rendering of them.
  assert.ok(outcome.refusal, 'the outcome carries the refusal as facts');
  assert.equal(outcome.refusal.reason, reason);
  assert.equal(outcome.error.message, refusalText(outcome.refusal));
  return { error: outcome.error, ...(outcome.record ? { record: outcome.record } : {}) };
}

export function leaseLost<T>(outcome: Outcome<T>, grant: number): LockLeaseLostError {
  if (outcome.ok) assert.fail(`expected lease lost, got success: ${outcome.summary}`);
  assert.ok(outcome.error instanceof LockLeaseLostError, `expected LockLeaseLostError, got ${outcome.error.name}`);
  assert.equal(outcome.error.grant, grant);
  assert.equal(outcome.record, undefined, 'a lost lease writes nothing');
  assert.ok(outcome.lapse, 'the outcome carries the lapse as facts');
  assert.equal(outcome.lapse.grant, grant);
  assert.equal(outcome.error.message, lapseText(outcome.lapse));
  return outcome.error;
}

/** The proof a clone presents: identity, its token hash and its grant. */
export function proofOf(identity: string, grant: number): HolderProof {
  return { identity, grant, tokenHash: hex(`token:${identity}:${grant}`) };
}

/** Acquires as `identity` with the token hash {@link proofOf} expects for the grant it gets. */
export function acquireAs(
  record: LockRecord,
  identity: string,
  now: number,
  s: ContainerSettings = SETTINGS,
): { record: LockRecord; proof: HolderProof; expiresAt: number } {
  const grant = record.grant + 1;
  const proof = proofOf(identity, grant);
  const { record: next, value } = ok(
    acquire(record, s, { identity, tokenHash: proof.tokenHash, proofHash: hex(`proof:${identity}:${grant}`) }, now),
  );
  assert.equal(value.grant, grant);
  return { record: next, proof, expiresAt: value.expiresAt };
}

export function tryAcquire(
  record: LockRecord,
  identity: string,
  now: number,
  s: ContainerSettings = SETTINGS,
): Outcome<{ grant: number; expiresAt: number }> {
  const grant = record.grant + 1;
  return acquire(record, s, { identity, tokenHash: proofOf(identity, grant).tokenHash, proofHash: hex(`proof:${identity}:${grant}`) }, now);
}

export const lastAudit = (record: LockRecord) => record.audit[record.audit.length - 1];
