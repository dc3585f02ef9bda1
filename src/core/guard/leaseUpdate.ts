import { isLeaseState, type LeaseState } from '../stores/leaseState';

/**
 * What a lease ref held before the pushed update: `null` when the ref does not exist yet, else what
 * its current commit's record holds, parsed (`undefined` when that is not a commit, holds no record
 * or no JSON).
 */
export type LeaseBefore = null | { readonly stored: unknown };

const DAMAGED_BEFORE =
  "the lease ref's current record is damaged (not a lease record as Lockstep writes it); a damaged lease is never " +
  "treated as absent, which would restart its fencing counter. The server's administrator restores the ref from its history.";

/**
 * The server's check of one update of a plain lease's ref (git driver, `lockstep run` and the
 * library). A lease ref holds only a digest of its owner's token, so the server cannot tell the
 * owner from anyone else: it keeps what it can check. The fencing counter never goes down and
 * rises by exactly one, only on a claim of a lease that is no longer live; nothing else changes
 * the counter; a lease ref is never deleted. Who may release or extend is the owners' matter
 * (see the README's threat model). Liveness is the server's clock's: no skew lets a claim take a
 * lease that has not ended by it. A ref whose current record is damaged refuses every update: read
 * as absent, it would let a claim restart its fencing counter at 1.
 */
export function checkLeaseUpdate(before: LeaseBefore, after: unknown, now: number): string | undefined {
  let old: LeaseState | null = null;
  if (before !== null) {
    if (!isLeaseState(before.stored)) return DAMAGED_BEFORE;
    old = before.stored;
  }
  if (!isLeaseState(after)) return 'the new lease record is damaged.';
  const counter = old?.counter ?? 0;
  if (after.counter === counter) {
    if (old === null) return 'a new lease ref must start with a claim (counter 1).';
    if (after.owner !== null && after.owner !== old.owner) return 'only a claim (counter + 1) may give the lease to another owner.';
    return undefined;
  }
  if (after.counter !== counter + 1) return `the fencing counter may only rise by one (from ${counter}), never jump or fall.`;
  if (after.owner === null) return 'a claim must name its owner.';
  if (old !== null && old.owner !== null && old.expiresAt > now)
    return "the lease is still live by the server's clock, so it cannot be claimed again.";
  return undefined;
}
