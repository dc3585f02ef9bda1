import { hasTurn, LockState, type LockStatus, type WatchInterest } from '../core/application';

/**
 * What a window needs to hear of the lock, and how soon, from what it last read (issue 30: fifty
 * open windows on one page). Pure.
 *
 * A window needs every change at once while it holds the lock, heads its queue, or its turn has
 * come: the holder hears petitions, the head its "your turn". Any other window — further back in the
 * queue, or not in it — hears changes later:
 *
 * - a polling watch (git, MariaDB, SQLite) polls it at the slow pace (core/stores/pollPace.ts), fast
 *   only for a minute after its user acted; it turns fast at the read that shows it the head;
 * - a change its watch heard is read after a random pause of at most {@link BYSTANDER_SETTLE_MS}, and
 *   every change heard during the pause rides on that one read: fifty windows do not all read the
 *   page in the instant after each write, and a burst of ten petitions costs such a window one read.
 *
 * What the user does in a window is read at once whatever this says: the model reads after each action
 * and each Refresh itself. The badge's tooltip states both bounds (badge.ts, freshnessLine).
 */
export const BYSTANDER_SETTLE_MS = 1_000;

/** The window holds the lock, heads its queue, or its turn has come: it hears each change at once. */
export function needsNewsAtOnce(status: LockStatus | undefined): boolean {
  if (status === undefined) return true; // nothing shown yet: the first news is read at once
  return status.state === LockState.HeldByMe || status.position === 1 || hasTurn(status);
}

/** The window's interest, for a polling watch's pace: fast while it needs news at once, and after its user acted. */
export function interestFor(status: LockStatus | undefined, askedAt: number | undefined): WatchInterest {
  return {
    holds: status?.state === LockState.HeldByMe,
    waits: status !== undefined && status.state !== LockState.HeldByMe && needsNewsAtOnce(status),
    ...(askedAt !== undefined ? { askedAt } : {}),
  };
}

/** The longest pause before this window reads a change made elsewhere: 0 to read at once. */
export function settleMsFor(status: LockStatus | undefined): number {
  return needsNewsAtOnce(status) ? 0 : BYSTANDER_SETTLE_MS;
}
