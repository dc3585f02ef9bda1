import { cleanText } from '../safeText';
import { checkIdentity } from './identities';
import { endRanges, reclaimedText } from './identifierPool';
import { done, type Outcome, refusedAndAudited } from './outcome';
import { type ContainerSettings, type LockRecord, MAX_NOTE_LENGTH } from './record';
import { isLive } from './turns';

/** What follows a clear, in words true for the queue it left: the head's turn, or a free lock. */
export function afterClear(clearedGrant: number, queueHead: string | null): string {
  return (
    `Cleared grant #${clearedGrant}; the audit trail says why. ` +
    (queueHead === null
      ? 'The lock is free: anyone may acquire it now.'
      : `It is ${queueHead}'s turn (first in the queue) to acquire it, within the handover window.`)
  );
}

/** The operator's one intervention (docs/protocol.md#holder-silent): only on HOLDER SILENT, only by an operator, only with a reason. */
export function clear(
  record: LockRecord,
  settings: ContainerSettings,
  request: { identity: string; reason: string },
  now: number,
): Outcome<{ clearedGrant: number; reclaimed: number; queueHead: string | null }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  const reason = cleanText(request.reason, MAX_NOTE_LENGTH);
  const grant = record.holder?.grant ?? record.grant;
  const line = { at: now, who: request.identity, action: 'clear' as const, grant };
  if (!settings.operators.includes(request.identity)) {
    return refusedAndAudited(
      record,
      { reason: 'not-operator', what: 'clear', identity: request.identity },
      { ...line, detail: reason || 'no reason given' },
    );
  }
  if (reason === '') {
    return refusedAndAudited(record, { reason: 'reason-required', what: 'clear' }, line);
  }
  const h = record.holder;
  if (h === null || isLive(h, now)) {
    return refusedAndAudited(
      record,
      { reason: 'not-silent', holder: h === null ? null : { identity: h.identity, until: h.expiresAt } },
      { ...line, detail: reason },
    );
  }
  // The silent grant ends: its never-minted identifiers go back to the pool, as on a release.
  const { reclaimed, ...ended } = endRanges(record);
  const next: LockRecord = {
    ...record,
    holder: null,
    releasedAt: now,
    ...ended,
    caution: { silentGrant: h.grant, since: now, by: request.identity },
  };
  return done(
    next,
    { clearedGrant: h.grant, reclaimed, queueHead: record.queue[0]?.identity ?? null },
    { ...line, detail: `${clearedPrefix(h.identity, reclaimed)}${reason}` },
  );
}

/** How a clear's audit line starts, before the reason: `cleared <holder>: ` (and what came back to the pool). */
export function clearedPrefix(holder: string, reclaimed: number): string {
  return `cleared ${holder}${reclaimed > 0 ? ` (${reclaimedText(reclaimed)})` : ''}: `;
}
