import { cleanText } from '../safeText';
import { type Outcome, refusedAndAudited } from './outcome';
import { type LockRecord, MAX_IDENTITY_LENGTH, MAX_NOTE_LENGTH } from './record';

/**
 * A guard refused a push to a protected branch: the refusal is audited on the page, folded with the
 * same pusher's earlier refused pushes (whatever grant they presented) and bounded with the other
 * refused attempts. Never changes anything but the audit trail.
 */
export function auditRefusedPush(
  record: LockRecord,
  request: { identity: string; grant: number; detail: string },
  now: number,
): Outcome<never> {
  const detail = cleanText(request.detail, MAX_NOTE_LENGTH);
  const identity = cleanText(request.identity, MAX_IDENTITY_LENGTH) || 'unknown';
  const grant = Number.isSafeInteger(request.grant) && request.grant >= 0 ? request.grant : 0;
  return refusedAndAudited(
    record,
    { reason: 'not-holder', what: 'push', detail },
    { at: now, who: identity, action: 'push', grant, detail },
  );
}
