import type { ContainerSettings, Holder, LockRecord } from './record';

/**
 * Who may act, and when (docs/protocol.md#transitions): the live holder, the handover windows that
 * give the queue its turns, and what a person can do next. Decisions only: the words are
 * refusalText.ts's.
 */

export function isLive(holder: Holder | null, now: number): boolean {
  return holder !== null && holder.expiresAt > now;
}

/** When the current handover window sequence started, or null when anyone may acquire. */
function windowStart(record: LockRecord, now: number): number | null {
  if (record.holder !== null) return record.holder.expiresAt <= now ? record.holder.expiresAt : null;
  return record.releasedAt;
}

export interface Turn {
  /** Identities that may acquire now (empty: anyone may). */
  readonly eligible: readonly string[];
  /** The identity whose own window runs now, and when it ends; undefined when anyone may. */
  readonly current?: { readonly identity: string; readonly endsAt: number };
}

/**
 * After a release (or a holder's expiry, or a clear) the queue head alone may acquire for one
 * window; past it the next waiter may too, and so on; once every waiter's window has passed,
 * anyone may.
 */
export function turnAt(record: LockRecord, settings: ContainerSettings, now: number): Turn {
  const start = windowStart(record, now);
  if (start === null || record.queue.length === 0) return { eligible: [] };
  const passed = Math.max(0, Math.floor((now - start) / settings.windowMs));
  if (passed >= record.queue.length) return { eligible: [] };
  const eligible = record.queue.slice(0, passed + 1).map(p => p.identity);
  return { eligible, current: { identity: record.queue[passed].identity, endsAt: start + (passed + 1) * settings.windowMs } };
}

export function mayAcquire(record: LockRecord, settings: ContainerSettings, identity: string, now: number): boolean {
  if (isLive(record.holder, now)) return false;
  const { eligible } = turnAt(record, settings, now);
  return eligible.length === 0 || eligible.includes(identity);
}

/** Whether the session (token hash and grant) is the live holder of the current grant. */
export function holds(record: LockRecord, tokenHash: string, grant: number, now: number): boolean {
  const h = record.holder;
  return h !== null && h.tokenHash === tokenHash && h.grant === grant && h.grant === record.grant && h.expiresAt > now;
}

/**
 * What `identity` can do next about the lock, as advice that would not itself be refused now:
 * acquire when it may, wait when it is queued, petition otherwise (docs/protocol.md#transitions).

/** Where `identity` stands in the queue: 1 for its head, 0 when not queued. */
export function position(record: LockRecord, identity: string): number {
  return record.queue.findIndex(p => p.identity === identity) + 1;
}

/**
 * What a person can do next about the lock, as advice that would not itself be refused now
 * (refusalText.ts's `nextStepText` words it).
 */
export type NextStep =
  /** They hold the live grant in another clone or session. */
  | { readonly step: 'work-elsewhere'; readonly grant: number }
  /** The container's settings (its handover windows) are unknown here. */
  | { readonly step: 'see-status' }
  | { readonly step: 'acquire' }
  | { readonly step: 'wait'; readonly position: number; readonly of: number }
  | { readonly step: 'petition' };

/**
 * What `identity` can do next about the lock: acquire when it may, wait when it is queued,
 * petition otherwise (docs/protocol.md#transitions).
 */
export function nextMove(record: LockRecord, settings: ContainerSettings | undefined, identity: string, now: number): NextStep {
  const h = record.holder;
  if (h !== null && isLive(h, now) && h.identity === identity) return { step: 'work-elsewhere', grant: h.grant };
  // Without the container's settings the handover windows are unknown: point at the status.
  if (settings === undefined) return { step: 'see-status' };
  if (mayAcquire(record, settings, identity, now)) return { step: 'acquire' };
  const at = position(record, identity);
  if (at > 0) return { step: 'wait', position: at, of: record.queue.length };
  return { step: 'petition' };
}

/** Why a grant a person held is no longer live (a lease-lost error's facts), and what they can do next. */
export type Lapse = { readonly grant: number; readonly next: NextStep } & (
  | {
      /** A later grant was issued since, to `holder` (null: since released); `you`: to the same person elsewhere. */
      readonly why: 'superseded';
      readonly current: number;
      readonly holder: { readonly identity: string; readonly you: boolean } | null;
    }
  | { readonly why: 'expired'; readonly at: number }
  | { readonly why: 'cleared'; readonly by: string; readonly at: number }
  | { readonly why: 'released' }
  | { readonly why: 'not-live' }
);

/** Why `grant`, which `identity` presented, is no longer live: the facts of its lease-lost error. */
export function lapseOf(record: LockRecord, settings: ContainerSettings | undefined, identity: string, grant: number, now: number): Lapse {
  const h = record.holder;
  const next = nextMove(record, settings, identity, now);
  if (record.grant > grant) {
    const holder = h === null ? null : { identity: h.identity, you: h.identity === identity };
    return { why: 'superseded', grant, current: record.grant, holder, next };
  }
  if (h !== null && h.grant === grant && h.expiresAt <= now) return { why: 'expired', grant, at: h.expiresAt, next };
  if (h === null && record.grant === grant) {
    const c = record.caution;
    return c !== null && c.silentGrant === grant
      ? { why: 'cleared', grant, by: c.by, at: c.since, next }
      : { why: 'released', grant, next };
  }
  return { why: 'not-live', grant, next };
}
