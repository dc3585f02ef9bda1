import { type LockError, LockLeaseLostError, LockRefusedError } from '../errors';
import { summarise, withAudit } from './audit';
import type { AuditLine, LockRecord } from './record';
import type { Refusal } from './refusal';
import { lapseText, refusalText } from './refusalText';
import type { Lapse } from './turns';

/**
 * What a transition returns: the new record, its value and the audit line's summary; or the error
 * to report, with the facts it was made from ({@link Refusal} for a refusal, {@link Lapse} for a
 * lease that is no longer live) and, for a refusal that is itself recorded, the record with its
 * audit line. The error's words come from refusalText.ts.
 */
export type Outcome<T> =
  | { readonly ok: true; readonly record: LockRecord; readonly value: T; readonly summary: string }
  /** `record`, when present, is the refusal's audit line to persist before reporting the error. */
  | {
      readonly ok: false;
      readonly error: LockError;
      readonly refusal?: Refusal;
      readonly lapse?: Lapse;
      readonly record?: LockRecord;
      readonly summary?: string;
    };

export function done<T>(record: LockRecord, value: T, line: Omit<AuditLine, 'outcome'>): Outcome<T> {
  return { ok: true, record: withAudit(record, { ...line, outcome: 'done' }), value, summary: summarise(line, 'done') };
}

export function refused(refusal: Refusal): Outcome<never> {
  return { ok: false, error: new LockRefusedError(refusal.reason, refusalText(refusal)), refusal };
}

/** A refusal that is itself recorded (operator clear attempts, docs/protocol.md#holder-silent). */
export function refusedAndAudited(record: LockRecord, refusal: Refusal, line: Omit<AuditLine, 'outcome'>): Outcome<never> {
  return {
    ok: false,
    error: new LockRefusedError(refusal.reason, refusalText(refusal)),
    refusal,
    record: withAudit(record, { ...line, outcome: 'refused' }),
    summary: summarise(line, 'refused'),
  };
}

/** The grant presented is no longer live: a lease-lost error naming it. */
export function lapsed(lapse: Lapse): Outcome<never> {
  return { ok: false, error: new LockLeaseLostError(lapseText(lapse), lapse.grant), lapse };
}
