import { formatClock } from './format';
import { LockState, type LockStatus } from './lockStatus';

/**
 * `lockstep.whileLockedByOthers: readOnly` — whether this person's editors of the container's files
 * should be read-only: someone else holds the lock (live or silent, as long as this person may not
 * take it over), or it is someone else's handover window. Never while this person holds it or may
 * acquire it (free, your turn, a silent holder past every window), and never without a status (an
 * unreadable lock is not a reason to stop someone typing).
 */
export function lockedByOthers(status: LockStatus | undefined): boolean {
  if (status === undefined || status.state === LockState.HeldByMe || status.canAcquire) return false;
  return status.holder !== null || status.turn !== null;
}

/** The one-line explanation shown beside a read-only editor: who has the lock, and for how long. */
export function readOnlyReason(status: LockStatus, now: number): string {
  const h = status.holder;
  if (h !== null) {
    const left = h.expiresAt - now;
    // A clock time, not a countdown: the words stay true however long the notification stays up.
    const when = left > 0 ? `until ${formatClock(h.expiresAt)} unless it heartbeats` : 'but has gone silent';
    return `Read-only: ${h.identity} holds the lock (grant #${h.grant}) ${when}. Petition to take your turn.`;
  }
  const turn = status.turn;
  return turn !== null
    ? `Read-only: it is ${turn.identity}'s turn to take the lock, until ${formatClock(turn.endsAt)}. Petition to take yours.`
    : 'Read-only: someone else has the lock. Petition to take your turn.';
}
