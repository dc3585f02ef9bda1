import { hasTurn, LockState, type LockStatus } from '../core/application';

/**
 * How long a window may let a change it heard settle before it reads the page (issue 30, fifty
 * clones): at most {@link BYSTANDER_SETTLE_MS}, drawn at random, for a window that neither holds the
 * lock nor heads its queue, so that fifty windows do not all read the page in the same instant after
 * every write, and the changes heard during the pause ride on its one read (a burst of ten petitions
 * costs such a window one read, not ten). The holder, the queue head (whose "your turn" is the
 * latency that counts) and a window whose turn it is read at once. What the user does in a window is
 * read at once whatever this says: the model reads after each action and each Refresh itself; the
 * pause is only for changes made elsewhere. The badge's tooltip states it (badge.ts, freshnessLine). Pure.
 */
export const BYSTANDER_SETTLE_MS = 1_000;

/** The longest pause before this window reads a change made elsewhere: 0 to read at once. */
export function settleMsFor(status: LockStatus | undefined): number {
  if (status === undefined) return 0; // nothing shown yet: the first news is read at once
  if (status.state === LockState.HeldByMe || status.position === 1 || hasTurn(status)) return 0;
  return BYSTANDER_SETTLE_MS;
}
