import type { ClaimResult, ReleaseResult } from './store';

/**
 * The stored state of one plain lease, for drivers that build leases on compare-and-swap (memory,
 * file, SQL, git). `counter` is the last fencing token issued; it survives release, so the record
 * stays as a tombstone with `owner: null` after a release.
 */
export interface LeaseState {
  readonly v: 1;
  readonly counter: number;
  readonly owner: string | null;
  readonly expiresAt: number;
}

export function isLeaseState(value: unknown): value is LeaseState {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  return (
    s.v === 1 &&
    Number.isSafeInteger(s.counter) &&
    (s.counter as number) >= 0 &&
    (s.owner === null || (typeof s.owner === 'string' && /^[0-9a-f]{64}$/.test(s.owner))) &&
    typeof s.expiresAt === 'number' &&
    Number.isFinite(s.expiresAt)
  );
}

function isLive(state: LeaseState | null, now: number): state is LeaseState & { owner: string } {
  return state !== null && state.owner !== null && state.expiresAt > now;
}

export interface Transition<R> {
  /** The state to write, or undefined when nothing changes. */
  readonly next: LeaseState | undefined;
  readonly result: R;
}

export function claimTransition(state: LeaseState | null, owner: string, ttlMs: number, now: number): Transition<ClaimResult> {
  if (isLive(state, now)) return { next: undefined, result: { claimed: false } };
  const counter = (state?.counter ?? 0) + 1;
  const expiresAt = now + ttlMs;
  return { next: { v: 1, counter, owner, expiresAt }, result: { claimed: true, fencingToken: counter, expiresAt } };
}

export function extendTransition(state: LeaseState | null, owner: string, ttlMs: number, now: number): Transition<boolean> {
  if (!isLive(state, now) || state.owner !== owner) return { next: undefined, result: false };
  return { next: { ...state, expiresAt: now + ttlMs }, result: true };
}

export function releaseTransition(state: LeaseState | null, owner: string, now: number): Transition<ReleaseResult> {
  if (state === null || state.owner === null) return { next: undefined, result: 'absent' };
  if (state.owner !== owner) {
    return { next: undefined, result: isLive(state, now) ? 'other-owner' : 'absent' };
  }
  const tombstone: LeaseState = { v: 1, counter: state.counter, owner: null, expiresAt: 0 };
  return { next: tombstone, result: state.expiresAt > now ? 'released' : 'expired' };
}
