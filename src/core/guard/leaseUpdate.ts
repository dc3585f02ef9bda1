import { isLeaseState, type LeaseState } from '../stores/leaseState';

/**
 * The server's check of one update of a plain lease's ref (git driver, `lockstep run` and the
 * library). A lease ref holds only a digest of its owner's token, so the server cannot tell the
 * owner from anyone else: it keeps what it can check. The fencing counter never goes down and
 * rises by exactly one, only on a claim of a lease that is no longer live; nothing else changes
 * the counter; a lease ref is never deleted. Who may release or extend is the owners' matter
 * (see the README's threat model). Liveness is the server's clock's: no skew lets a claim take a
 * lease that has not ended by it.
 */
export function checkLeaseUpdate(before: LeaseState | null, after: unknown, now: number): string | undefined {
  if (!isLeaseState(after)) return 'the new lease record is damaged.';
  const counter = before?.counter ?? 0;
  if (after.counter === counter) {
    if (before === null) return 'a new lease ref must start with a claim (counter 1).';
    if (after.owner !== null && after.owner !== before.owner) return 'only a claim (counter + 1) may give the lease to another owner.';
    return undefined;
  }
  if (after.counter !== counter + 1) return `the fencing counter may only rise by one (from ${counter}), never jump or fall.`;
  if (after.owner === null) return 'a claim must name its owner.';
  if (before !== null && before.owner !== null && before.expiresAt > now) return 'the lease is still live by the server\'s clock, so it cannot be claimed again.';
  return undefined;
}
