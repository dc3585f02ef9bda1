import { cleanText } from '../safeText';
import { checkIdentity } from './identities';
import { done, type Outcome, refused } from './outcome';
import { type ContainerSettings, type LockRecord, MAX_NOTE_LENGTH } from './record';
import { isLive, nextMove, position } from './turns';

/** The queue (docs/protocol.md#transitions): petitioning to join it, withdrawing from it. */

export function petition(
  record: LockRecord,
  request: { identity: string; note?: string },
  now: number,
  settings?: ContainerSettings,
): Outcome<{ position: number }> {
  const invalid = checkIdentity(request.identity);
  if (invalid) return invalid;
  if (record.holder !== null && isLive(record.holder, now) && record.holder.identity === request.identity) {
    return refused({ reason: 'holder-cannot-petition' });
  }
  if (record.queue.some(p => p.identity === request.identity)) {
    const next = settings === undefined ? undefined : nextMove(record, settings, request.identity, now);
    return refused({ reason: 'already-queued', position: position(record, request.identity), next });
  }
  const note = request.note === undefined ? undefined : cleanText(request.note, MAX_NOTE_LENGTH);
  const next: LockRecord = { ...record, queue: [...record.queue, { identity: request.identity, at: now, ...(note ? { note } : {}) }] };
  return done(
    next,
    { position: next.queue.length },
    { at: now, who: request.identity, action: 'petition', grant: record.grant, ...(note ? { detail: note } : {}) },
  );
}

export function withdraw(record: LockRecord, request: { identity: string }, now: number): Outcome<{ position: number }> {
  const at = position(record, request.identity);
  if (at === 0) return refused({ reason: 'not-queued' });
  const next: LockRecord = { ...record, queue: record.queue.filter(p => p.identity !== request.identity) };
  return done(next, { position: at }, { at: now, who: request.identity, action: 'withdraw', grant: record.grant });
}
