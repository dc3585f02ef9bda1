import type { LeaseState } from './leaseState';

/**
 * Plain leases kept in a fixed number of slots instead of one cell per name, so that a store's
 * size is bounded by its live leases, however many distinct names come and go. Pure.
 *
 * A key always falls into the same slot, and a slot holds one fencing counter for all its keys: a
 * claim of any of them takes the next value. So tokens stay strictly increasing per name across
 * release, expiry and crash, while a released lease leaves nothing behind (its entry is removed;
 * the slot's counter remembers). Entries that expired long ago (a holder that crashed) are dropped
 * by the next write to their slot.
 */

export interface LeaseSlot {
  readonly v: 1;
  /** The last fencing token issued to any key of this slot. */
  readonly counter: number;
  /** The live (or recently expired) leases: key → owner hash and expiry. */
  readonly leases: Readonly<Record<string, { readonly o: string; readonly e: number }>>;
}

/** An expired entry is kept this long (so a late release still answers "expired"), then dropped. */
export const EXPIRED_ENTRY_KEEP_MS = 60_000;

/** The slot of a key (keys are hex digests, so their first byte is uniform). */
export function slotOf(key: string, slots: number): number {
  return Number.parseInt(key.slice(0, 2), 16) % slots;
}

export function isLeaseSlot(value: unknown): value is LeaseSlot {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  if (s.v !== 1 || !Number.isSafeInteger(s.counter) || (s.counter as number) < 0) return false;
  if (typeof s.leases !== 'object' || s.leases === null || Array.isArray(s.leases)) return false;
  return Object.entries(s.leases as Record<string, unknown>).every(
    ([key, entry]) =>
      /^[0-9a-f]{64}$/.test(key) &&
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as { o: unknown }).o === 'string' &&
      /^[0-9a-f]{64}$/.test((entry as { o: string }).o) &&
      typeof (entry as { e: unknown }).e === 'number' &&
      Number.isFinite((entry as { e: number }).e),
  );
}

/** One key's lease as the transitions of leaseState.ts see it (a released key reads as a tombstone). */
export function leaseInSlot(slot: LeaseSlot | null, key: string): LeaseState {
  const counter = slot?.counter ?? 0;
  const entry = slot !== null && Object.hasOwn(slot.leases, key) ? slot.leases[key] : undefined;
  return entry === undefined ? { v: 1, counter, owner: null, expiresAt: 0 } : { v: 1, counter, owner: entry.o, expiresAt: entry.e };
}

/** The slot after one key's transition to `next`, without the entries that expired long ago. */
export function slotWithLease(slot: LeaseSlot | null, key: string, next: LeaseState, now: number): LeaseSlot {
  const leases: Record<string, { o: string; e: number }> = {};
  for (const [other, entry] of Object.entries(slot?.leases ?? {})) {
    if (other !== key && entry.e + EXPIRED_ENTRY_KEEP_MS > now) leases[other] = entry;
  }
  if (next.owner !== null) leases[key] = { o: next.owner, e: next.expiresAt };
  return { v: 1, counter: Math.max(slot?.counter ?? 0, next.counter), leases };
}
